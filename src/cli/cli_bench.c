/* jostle bench relax: relaxation throughput of the search kernel's
 * relaxation step, exactly S steps per candidate, measured the same way on the CPU twin and CUDA.
 * jostle bench spread: the seed's 4.2.3 baseline, one packing's relaxation
 * spread over the whole GPU, against the serial CPU twin. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circle_batch.h"
#include "circle_search.h"
#include "circle_spread.h"
#include "cli.h"
#include "rng.h"
#include "timer.h"

/* Timed launches of bench relax: the median is reported. */
#define JL_BENCH_REPEAT 5
#define JL_BENCH_REPEAT_MAX 101

static int jl_cmp_double(const void *a, const void *b) {
  double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

static const char *const jl_bench_help =
  "usage: jostle bench relax --n N [--batch B] [--steps S] [--device D] [--threads T]\n"
  "                          [--seed S] [--relax fire|jacobi] [--repeat K] [--equal]\n"
  "                          [--nbr auto|on|off] [--search]\n"
  "\n"
  "Builds B random start packings of radii 1..N (--equal: N unit circles; one\n"
  "warm-up launch), then times\n"
  "K launches (default 5) in each of which every candidate does exactly S\n"
  "relaxation steps (default 2000) in a container 2% tighter than its packing,\n"
  "and prints one JSON line: candidates x steps per second of the median launch\n"
  "(and the fastest and slowest). --relax picks the step: fire (the search's\n"
  "default, damped dynamics with one fixed-order block sum per step) or jacobi\n"
  "(the seed's step, the one its 486 steps/s measured). --nbr: contacts from\n"
  "neighbour lists (on), from all pairs (off) or as the search chooses by N\n"
  "(auto, the default); the results are the same bits, only the speed differs.\n"
  "circle_steps_per_s is steps_per_s times N. --search: each timed launch runs\n"
  "the search's own work instead (every candidate walks, as jostle circles does:\n"
  "moves, relaxations until legal or stalled, energies) until it has spent S\n"
  "steps, so list rebuilds after moves are counted too.\n"
  "\n"
  "usage: jostle bench spread --n N [--steps S] [--device D] [--seed S]\n"
  "\n"
  "The seed's slow baseline (Goetzmann 2007, 4.2.3): ONE random overlapping\n"
  "packing of radii 1..N relaxed with one contact step per kernel launch, n\n"
  "blocks of partner threads, no container and no early stop; the CPU runs the\n"
  "serial twin on one thread. Times S steps (default 1000) after a one-step\n"
  "warm-up and prints one JSON line with steps per second.\n"
  "\n"
  "usage: jostle bench trunk [...]   (jostle bench trunk --help)\n"
  "usage: jostle bench scene SCENE.json [...]   (jostle bench scene --help)\n";

static int jl_bench_spread(int argc, char **argv);
int jl_cli_bench_trunk(int argc, char **argv);  /* cli_bench_trunk.c */
int jl_cli_bench_scene(int argc, char **argv);  /* cli_bench_scene.c */

int jl_cli_bench(int argc, char **argv) {
  static const struct option opts[] = {
    {"n", required_argument, NULL, 'n'},      {"batch", required_argument, NULL, 'b'},
    {"steps", required_argument, NULL, 't'}, {"device", required_argument, NULL, 'd'},
    {"threads", required_argument, NULL, 'j'}, {"seed", required_argument, NULL, 's'},
    {"relax", required_argument, NULL, 'r'},  {"repeat", required_argument, NULL, 'k'},
    {"equal", no_argument, NULL, 'e'},        {"nbr", required_argument, NULL, 'l'},
    {"search", no_argument, NULL, 'S'},
    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  if (argc >= 2 && strcmp(argv[1], "spread") == 0) return jl_bench_spread(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "trunk") == 0) return jl_cli_bench_trunk(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "scene") == 0) return jl_cli_bench_scene(argc, argv);
  if (argc < 2 || strcmp(argv[1], "relax") != 0) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0)) { fputs(jl_bench_help, stdout); return 0; }
    jl_error_set(&err, JL_ERR_INPUT,
                 "bench: expected 'relax', 'spread', 'trunk' or 'scene' (see jostle bench --help)");
    return jl_cli_fail(&err);
  }
  long n = 50, batch = 0, steps = 2000, threads = 0, repeat = JL_BENCH_REPEAT;
  int relax = JL_RELAX_FIRE, equal = 0, nbr = -1, search = 0;  /* nbr -1: as the search chooses */
  uint64_t seed = 1;
  const char *device = "auto";
  int c, rc = JL_OK;
  optind = 1;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc - 1, argv + 1, &err)) > 0) {
    switch (c) {
    case 'n': rc = jl_cli_int("--n", optarg, 2, 4096, &n, &err); break;
    case 'b': rc = jl_cli_int("--batch", optarg, 1, 1000000, &batch, &err); break;
    case 't': rc = jl_cli_int("--steps", optarg, 1, 100000000, &steps, &err); break;
    case 'j': rc = jl_cli_int("--threads", optarg, 1, 256, &threads, &err); break;
    case 'k': rc = jl_cli_int("--repeat", optarg, 1, JL_BENCH_REPEAT_MAX, &repeat, &err); break;
    case 'd': device = optarg; break;
    case 's': rc = jl_cli_u64("--seed", optarg, &seed, &err); break;
    case 'r':
      if (strcmp(optarg, "fire") == 0) relax = JL_RELAX_FIRE;
      else if (strcmp(optarg, "jacobi") == 0) relax = JL_RELAX_JACOBI;
      else rc = jl_error_set(&err, JL_ERR_INPUT, "--relax: '%s' is not fire or jacobi", optarg);
      break;
    case 'e': equal = 1; break;
    case 'S': search = 1; break;
    case 'l':
      if (strcmp(optarg, "auto") == 0) nbr = -1;
      else if (strcmp(optarg, "on") == 0) nbr = 1;
      else if (strcmp(optarg, "off") == 0) nbr = 0;
      else rc = jl_error_set(&err, JL_ERR_INPUT, "--nbr: '%s' is not auto, on or off", optarg);
      break;
    case 'h': fputs(jl_bench_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc != JL_OK) return jl_cli_fail(&err);
  jl_device dev;
  if (jl_device_select(&dev, device, (int)threads, NULL, &err) != JL_OK) return jl_cli_fail(&err);
  if (batch <= 0) batch = jl_circle_auto_batch(&dev, (int)n, 2);

  double r[4096];
  for (int i = 0; i < n; ++i) r[i] = equal ? 1.0 : i + 1;
  jl_relax_params p;
  jl_relax_params_default(&p, r, (int)n, seed);
  p.nbr = nbr >= 0 ? nbr : jl_circle_nbr_auto(&dev, (int)n);
  jl_circle_batch b;
  jl_circle_engine eng;
  if (jl_circle_batch_alloc(&b, (int)n, (int)batch, r, &err) != JL_OK) return jl_cli_fail(&err);
  if (jl_circle_engine_init(&eng, &dev, (int)n, (int)batch, &err) != JL_OK) {
    jl_circle_batch_free(&b);
    return jl_cli_fail(&err);
  }
  memset(b.need_start, 1, (size_t)batch);
  p.trials = 1;
  p.relax = relax;
  if (search) p.walk_every = JL_WALK_DEFAULT;
  rc = jl_circle_engine_run(&eng, &p, &b, &err);  /* warm-up: random starts */
  if (search) p.step_budget = (uint64_t)steps;
  else p.bench_steps = (int)steps;
  /* Every launch does the same work (exactly S steps per candidate), so
   * the median launch is the figure: one short launch on a busy host can be
   * a fifth off either way. */
  double dt[JL_BENCH_REPEAT_MAX], rate[JL_BENCH_REPEAT_MAX];
  uint64_t per_launch = 0;
  for (int k = 0; k < repeat && rc == JL_OK; ++k) {
    uint64_t s0 = 0, s1 = 0;
    for (int c = 0; c < batch; ++c) s0 += b.steps[c];
    double t0 = jl_time_now();
    rc = jl_circle_engine_run(&eng, &p, &b, &err);
    dt[k] = jl_time_now() - t0;
    for (int c = 0; c < batch; ++c) s1 += b.steps[c];
    per_launch = s1 - s0;
    rate[k] = (double)per_launch / dt[k];
  }
  jl_circle_engine_free(&eng);
  jl_circle_batch_free(&b);
  if (rc != JL_OK) return jl_cli_fail(&err);
  /* the median launch's rate (--search launches differ a little in steps) */
  qsort(dt, (size_t)repeat, sizeof dt[0], jl_cmp_double);
  qsort(rate, (size_t)repeat, sizeof rate[0], jl_cmp_double);
  double med = repeat % 2 ? dt[repeat / 2] : 0.5 * (dt[repeat / 2 - 1] + dt[repeat / 2]);
  double med_rate = repeat % 2 ? rate[repeat / 2] : 0.5 * (rate[repeat / 2 - 1] + rate[repeat / 2]);
  printf("{\"bench\": \"%s\", \"relax\": \"%s\", \"n\": %ld, \"radii\": \"%s\", \"nbr\": %s, "
         "\"device\": \"%s\", \"device_name\": \"%s\", "
         "\"batch\": %ld, \"steps_per_candidate\": %ld, \"steps\": %llu, \"repeats\": %ld, "
         "\"seconds\": %.6g, \"seconds_min\": %.6g, \"seconds_max\": %.6g, \"steps_per_s\": %.6g, "
         "\"circle_steps_per_s\": %.6g}\n",
         search ? "relax-search" : "relax", relax == JL_RELAX_FIRE ? "fire" : "jacobi", n,
         equal ? "equal" : "1..n", p.nbr ? "true" : "false", jl_device_kind_name(dev.kind),
         dev.name, batch, steps, (unsigned long long)per_launch, repeat, med, dt[0],
         dt[repeat - 1], med_rate, med_rate * (double)n);
  return 0;
}

static int jl_bench_spread(int argc, char **argv) {
  static const struct option opts[] = {
    {"n", required_argument, NULL, 'n'},      {"steps", required_argument, NULL, 'S'},
    {"device", required_argument, NULL, 'd'}, {"seed", required_argument, NULL, 's'},
    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  long n = 50, steps = 1000;
  uint64_t seed = 1;
  const char *device = "auto";
  int c, rc = JL_OK;
  optind = 1;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc - 1, argv + 1, &err)) > 0) {
    switch (c) {
    case 'n': rc = jl_cli_int("--n", optarg, 2, 100000, &n, &err); break;
    case 'S': rc = jl_cli_int("--steps", optarg, 1, 100000000, &steps, &err); break;
    case 'd': device = optarg; break;
    case 's': rc = jl_cli_u64("--seed", optarg, &seed, &err); break;
    case 'h': fputs(jl_bench_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc != JL_OK) return jl_cli_fail(&err);
  jl_device dev;
  if (jl_device_select(&dev, device, 1, NULL, &err) != JL_OK) return jl_cli_fail(&err);

  /* Radii 1..n, centres uniform in a square too small for them. */
  double *r = malloc(sizeof(double) * (size_t)n * 5);
  if (!r) {
    jl_error_set(&err, JL_ERR_NOMEM, "out of memory for %ld circles", n);
    return jl_cli_fail(&err);
  }
  double *x0 = r + n, *y0 = x0 + n, *x = y0 + n, *y = x + n;
  jl_spread_random_start((int)n, seed, r, x0, y0);

  /* tol < 0: never legal, so every step runs. One warm-up step on a copy,
   * then the timed run from the start packing. */
  const double Rc = INFINITY, tol = -1.0;
  int done = 0;
  double t0 = 0.0, dt = 0.0;
  char msg[256] = "";
  for (int pass = 0; pass < 2; ++pass) {
    int want = pass == 0 ? 1 : (int)steps;
    memcpy(x, x0, sizeof(double) * (size_t)n);
    memcpy(y, y0, sizeof(double) * (size_t)n);
    t0 = jl_time_now();
#ifdef JL_HAVE_CUDA
    if (dev.kind == JL_DEVICE_CUDA)
      done = jl_cuda_spread_relax(r, x, y, (int)n, Rc, tol, want, NULL, NULL, msg, sizeof msg);
    else
#endif
      done = jl_spread_relax_cpu(r, x, y, (int)n, Rc, tol, want, NULL, NULL);
    dt = jl_time_now() - t0;
    if (done < 0) break;
  }
  free(r);
  if (done < 0) {
    if (dev.kind == JL_DEVICE_CUDA) jl_error_set(&err, JL_ERR_DEVICE, "CUDA: %s", msg);
    else jl_error_set(&err, JL_ERR_NOMEM, "out of memory for %ld circles", n);
    return jl_cli_fail(&err);
  }
  printf("{\"bench\": \"spread\", \"n\": %ld, \"device\": \"%s\", \"device_name\": \"%s\", "
         "\"steps\": %d, \"seconds\": %.6f, \"steps_per_s\": %.6g}\n",
         n, jl_device_kind_name(dev.kind), dev.name, done, dt, (double)done / dt);
  return 0;
}
