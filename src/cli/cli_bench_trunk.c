/* jostle bench trunk: the trunk contact simulation step at the seed's
 * instance size (Goetzmann 2007, Table 5.1: 242 blocks, 38693 surface
 * points), on the CPU twin or CUDA. The measuring is the library's
 * (jl_bench_trunk); this file parses and prints. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

int jl_cli_bench_trunk(int argc, char **argv);

static const char *const jl_bench_trunk_help =
  "usage: jostle bench trunk [--blocks N] [--points P] [--batch B] [--steps S]\n"
  "                          [--device D] [--threads T] [--seed S]\n"
  "\n"
  "A 1040 x 560 x 540 mm box trunk sampled with about P surface points\n"
  "(default 38700, the seed's 38693), N blocks of 200 x 100 x 50 (default 242)\n"
  "from its 250-block grid fill, each shifted by up to 8 mm and turned by up to\n"
  "0.06 so they collide with each other and the walls (the seed's Table 5.1\n"
  "set-up). Times S relaxation steps (default 50; no early exit) of one\n"
  "candidate alone, then of B candidates in one launch (default 8 per GPU\n"
  "multiprocessor, 2 per CPU thread), and prints one JSON line: the\n"
  "single-candidate step time and the aggregate candidate-steps per second.\n";

int jl_cli_bench_trunk(int argc, char **argv) {
  static const struct option opts[] = {
    {"blocks", required_argument, NULL, 'n'}, {"points", required_argument, NULL, 'p'},
    {"batch", required_argument, NULL, 'b'},  {"steps", required_argument, NULL, 't'},
    {"device", required_argument, NULL, 'd'}, {"threads", required_argument, NULL, 'j'},
    {"seed", required_argument, NULL, 's'},   {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  jl_bench_trunk_options to;
  jl_bench_trunk_options_default(&to);
  long blocks = to.blocks, points = to.points, batch = 0, steps = to.steps, threads = 0;
  uint64_t seed = 1;
  const char *device = "auto";
  int c, rc = JL_OK;
  optind = 1;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench trunk"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc - 1, argv + 1, &err)) > 0) {
    switch (c) {
    case 'n': rc = jl_cli_int("--blocks", optarg, 1, JL_BENCH_TRUNK_BLOCKS_MAX, &blocks, &err); break;
    case 'p': rc = jl_cli_int("--points", optarg, 100, 10000000, &points, &err); break;
    case 'b': rc = jl_cli_int("--batch", optarg, 1, 1000000, &batch, &err); break;
    case 't': rc = jl_cli_int("--steps", optarg, 1, 100000000, &steps, &err); break;
    case 'j': rc = jl_cli_int("--threads", optarg, 1, 256, &threads, &err); break;
    case 'd': device = optarg; break;
    case 's': rc = jl_cli_u64("--seed", optarg, &seed, &err); break;
    case 'h': fputs(jl_bench_trunk_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc != JL_OK) return jl_cli_fail(&err);
  to.blocks = (int)blocks;
  to.points = (int)points;
  to.batch = (int)batch;
  to.steps = steps;
  to.threads = (int)threads;
  to.seed = seed;
  to.device = device;
  jl_bench_trunk_result r;
  if (jl_bench_trunk(&to, &r, &err) != JL_OK) return jl_cli_fail(&err);
  printf("{\"bench\": \"trunk\", \"device\": \"%s\", \"device_name\": \"%s\", \"blocks\": %ld, "
         "\"points\": %d, \"spacing\": %.4f, \"cell\": %.1f, \"steps_per_candidate\": %ld, "
         "\"single_seconds\": %.6f, \"single_step_ms\": %.4f, \"batch\": %ld, "
         "\"batch_seconds\": %.6f, \"candidate_steps\": %llu, \"candidate_steps_per_s\": %.6g, "
         "\"worst_after_mm\": %.4g}\n",
         r.device, r.device_name, blocks, r.points, r.spacing, r.cell, steps, r.single_seconds,
         r.single_step_ms, (long)r.batch, r.batch_seconds, (unsigned long long)r.candidate_steps,
         r.candidate_steps_per_s, r.worst_after_mm);
  return 0;
}
