/* jostle bench relax: relaxation throughput of the search kernel's
 * relaxation step, exactly S steps per candidate, measured the same way on the CPU twin and CUDA.
 * jostle bench spread: the seed's 4.2.3 baseline, one packing's relaxation
 * spread over the whole GPU, against the serial CPU twin. The measuring is
 * the library's (jostle/bench.h); this file parses and prints. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
    jl_cli_error_set(&err, JL_ERR_INPUT,
                     "bench: expected 'relax', 'spread', 'trunk' or 'scene' (see jostle bench --help)");
    return jl_cli_fail(&err);
  }
  jl_bench_relax_options bo;
  jl_bench_relax_options_default(&bo);
  long n = bo.n, batch = 0, steps = bo.steps, threads = 0, repeat = bo.repeat;
  int equal = 0, nbr = -1, search = 0;  /* nbr -1: as the search chooses */
  const char *relax = "fire";
  uint64_t seed = 1;
  const char *device = "auto";
  int c, rc = JL_OK;
  optind = 1;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc - 1, argv + 1, &err)) > 0) {
    switch (c) {
    case 'n': rc = jl_cli_int("--n", optarg, 2, JL_BENCH_RELAX_N_MAX, &n, &err); break;
    case 'b': rc = jl_cli_int("--batch", optarg, 1, 1000000, &batch, &err); break;
    case 't': rc = jl_cli_int("--steps", optarg, 1, 100000000, &steps, &err); break;
    case 'j': rc = jl_cli_int("--threads", optarg, 1, 256, &threads, &err); break;
    case 'k': rc = jl_cli_int("--repeat", optarg, 1, JL_BENCH_REPEAT_MAX, &repeat, &err); break;
    case 'd': device = optarg; break;
    case 's': rc = jl_cli_u64("--seed", optarg, &seed, &err); break;
    case 'r':
      if (strcmp(optarg, "fire") == 0 || strcmp(optarg, "jacobi") == 0) relax = optarg;
      else rc = jl_cli_error_set(&err, JL_ERR_INPUT, "--relax: '%s' is not fire or jacobi", optarg);
      break;
    case 'e': equal = 1; break;
    case 'S': search = 1; break;
    case 'l':
      if (strcmp(optarg, "auto") == 0) nbr = -1;
      else if (strcmp(optarg, "on") == 0) nbr = 1;
      else if (strcmp(optarg, "off") == 0) nbr = 0;
      else rc = jl_cli_error_set(&err, JL_ERR_INPUT, "--nbr: '%s' is not auto, on or off", optarg);
      break;
    case 'h': fputs(jl_bench_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc != JL_OK) return jl_cli_fail(&err);
  bo.n = (int)n;
  bo.equal = equal;
  bo.batch = (int)batch;
  bo.steps = steps;
  bo.repeat = (int)repeat;
  bo.relax = relax;
  bo.nbr = nbr;
  bo.search = search;
  bo.seed = seed;
  bo.device = device;
  bo.threads = (int)threads;
  jl_bench_relax_result r;
  if (jl_bench_circles_relax(&bo, &r, &err) != JL_OK) return jl_cli_fail(&err);
  printf("{\"bench\": \"%s\", \"relax\": \"%s\", \"n\": %ld, \"radii\": \"%s\", \"nbr\": %s, "
         "\"device\": \"%s\", \"device_name\": \"%s\", "
         "\"batch\": %ld, \"steps_per_candidate\": %ld, \"steps\": %llu, \"repeats\": %ld, "
         "\"seconds\": %.6g, \"seconds_min\": %.6g, \"seconds_max\": %.6g, \"steps_per_s\": %.6g, "
         "\"circle_steps_per_s\": %.6g}\n",
         search ? "relax-search" : "relax", relax, n, equal ? "equal" : "1..n",
         r.nbr ? "true" : "false", r.device, r.device_name, (long)r.batch, steps,
         (unsigned long long)r.steps, repeat, r.seconds, r.seconds_min, r.seconds_max,
         r.steps_per_s, r.circle_steps_per_s);
  return 0;
}

static int jl_bench_spread(int argc, char **argv) {
  static const struct option opts[] = {
    {"n", required_argument, NULL, 'n'},      {"steps", required_argument, NULL, 'S'},
    {"device", required_argument, NULL, 'd'}, {"seed", required_argument, NULL, 's'},
    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  jl_bench_spread_options so;
  jl_bench_spread_options_default(&so);
  long n = so.n, steps = so.steps;
  uint64_t seed = 1;
  const char *device = "auto";
  int c, rc = JL_OK;
  optind = 1;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc - 1, argv + 1, &err)) > 0) {
    switch (c) {
    case 'n': rc = jl_cli_int("--n", optarg, 2, JL_BENCH_SPREAD_N_MAX, &n, &err); break;
    case 'S': rc = jl_cli_int("--steps", optarg, 1, 100000000, &steps, &err); break;
    case 'd': device = optarg; break;
    case 's': rc = jl_cli_u64("--seed", optarg, &seed, &err); break;
    case 'h': fputs(jl_bench_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc != JL_OK) return jl_cli_fail(&err);
  so.n = (int)n;
  so.steps = steps;
  so.seed = seed;
  so.device = device;
  jl_bench_spread_result r;
  if (jl_bench_circles_spread(&so, &r, &err) != JL_OK) return jl_cli_fail(&err);
  printf("{\"bench\": \"spread\", \"n\": %ld, \"device\": \"%s\", \"device_name\": \"%s\", "
         "\"steps\": %d, \"seconds\": %.6f, \"steps_per_s\": %.6g}\n",
         n, r.device, r.device_name, r.steps, r.seconds, r.steps_per_s);
  return 0;
}
