/* jostle bench relax: relaxation throughput of the real search kernel
 * (trials with compression), measured the same way on the CPU twin and CUDA. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "circle_batch.h"
#include "circle_search.h"
#include "cli.h"
#include "timer.h"

static const char *const jl_bench_help =
  "usage: jostle bench relax --n N [--batch B] [--trials T] [--device D] [--threads T]\n"
  "                          [--seed S]\n"
  "\n"
  "Builds B random start packings of radii 1..N (one warm-up launch), then times\n"
  "one launch of T improvement trials per candidate and prints one JSON line:\n"
  "relaxation steps counted by the kernel (candidates x steps) per second.\n";

int jl_cli_bench(int argc, char **argv) {
  static const struct option opts[] = {
    {"n", required_argument, NULL, 'n'},      {"batch", required_argument, NULL, 'b'},
    {"trials", required_argument, NULL, 't'}, {"device", required_argument, NULL, 'd'},
    {"threads", required_argument, NULL, 'j'}, {"seed", required_argument, NULL, 's'},
    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  if (argc < 2 || strcmp(argv[1], "relax") != 0) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0)) { fputs(jl_bench_help, stdout); return 0; }
    jl_error_set(&err, JL_ERR_INPUT, "bench: expected 'relax' (see jostle bench --help)");
    return jl_cli_fail(&err);
  }
  long n = 50, batch = 0, trials = 4, threads = 0;
  uint64_t seed = 1;
  const char *device = "auto";
  int c, rc = JL_OK;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc - 1, argv + 1, "", opts, NULL)) != -1 && rc == JL_OK) {
    switch (c) {
    case 'n': rc = jl_cli_int("--n", optarg, 2, 4096, &n, &err); break;
    case 'b': rc = jl_cli_int("--batch", optarg, 1, 1000000, &batch, &err); break;
    case 't': rc = jl_cli_int("--trials", optarg, 1, 100000, &trials, &err); break;
    case 'j': rc = jl_cli_int("--threads", optarg, 1, 256, &threads, &err); break;
    case 'd': device = optarg; break;
    case 's': rc = jl_cli_u64("--seed", optarg, &seed, &err); break;
    case 'h': fputs(jl_bench_help, stdout); return 0;
    default: rc = jl_error_set(&err, JL_ERR_INPUT, "bench: unknown option '%s'", argv[optind]);
    }
  }
  if (rc != JL_OK) return jl_cli_fail(&err);
  jl_device dev;
  if (jl_device_select(&dev, device, (int)threads, NULL, &err) != JL_OK) return jl_cli_fail(&err);
  if (batch <= 0) batch = dev.kind == JL_DEVICE_CUDA ? dev.sm_count * 16 : dev.threads * 2;

  double r[4096];
  for (int i = 0; i < n; ++i) r[i] = i + 1;
  jl_relax_params p;
  jl_relax_params_default(&p, r, (int)n, seed);
  jl_circle_batch b;
  jl_circle_engine eng;
  if (jl_circle_batch_alloc(&b, (int)n, (int)batch, r, &err) != JL_OK) return jl_cli_fail(&err);
  if (jl_circle_engine_init(&eng, &dev, (int)n, (int)batch, &err) != JL_OK) {
    jl_circle_batch_free(&b);
    return jl_cli_fail(&err);
  }
  memset(b.need_start, 1, (size_t)batch);
  p.trials = 1;
  rc = jl_circle_engine_run(&eng, &p, &b, &err);  /* warm-up: random starts */
  uint64_t s0 = 0, s1 = 0;
  for (int k = 0; k < batch; ++k) s0 += b.steps[k];
  p.trials = (int)trials;
  double t0 = jl_time_now();
  if (rc == JL_OK) rc = jl_circle_engine_run(&eng, &p, &b, &err);
  double dt = jl_time_now() - t0;
  for (int k = 0; k < batch; ++k) s1 += b.steps[k];
  jl_circle_engine_free(&eng);
  jl_circle_batch_free(&b);
  if (rc != JL_OK) return jl_cli_fail(&err);
  printf("{\"bench\": \"relax\", \"n\": %ld, \"device\": \"%s\", \"device_name\": \"%s\", "
         "\"batch\": %ld, \"trials\": %ld, \"steps\": %llu, \"seconds\": %.6f, "
         "\"steps_per_s\": %.6g}\n",
         n, jl_device_kind_name(dev.kind), dev.name, batch, trials,
         (unsigned long long)(s1 - s0), dt, (double)(s1 - s0) / dt);
  return 0;
}
