/* jostle bench trunk: the trunk contact simulation step at the seed's
 * instance size (Goetzmann 2007, Table 5.1: 242 blocks, 38693 surface
 * points), on the CPU twin or CUDA. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_batch.h"
#include "cli.h"
#include "surface_grid.h"
#include "timer.h"

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

/* Spacing whose sample count is nearest the wanted one (bisection on the
 * monotone count). */
static int jl_spacing_for(const jl_mesh *m, int want, double *spacing, jl_error *err) {
  double lo = 1.0, hi = 200.0;
  for (int it = 0; it < 40; ++it) {
    double mid = sqrt(lo * hi);
    double *pts = NULL;
    int n = 0;
    int rc = jl_surface_sample(m, mid, &pts, &n, err);
    free(pts);
    if (rc) return rc;
    if (n > want) lo = mid;
    else hi = mid;
  }
  *spacing = hi;
  return JL_OK;
}

/* One timed launch of S steps for the first count candidates. */
static int jl_time_launch(jl_block_engine *eng, const jl_block_params *p, jl_block_batch *b,
                          const jl_block_packing *start, int count, double *seconds,
                          uint64_t *steps, jl_error *err) {
  int full = b->count;
  b->count = count;
  for (int c = 0; c < count; ++c) {
    int rc = jl_block_batch_set(b, c, start, err);
    if (rc) { b->count = full; return rc; }
    b->steps[c] = 0;
  }
  double t0 = jl_time_now();
  int rc = jl_block_engine_run(eng, p, b, err);
  *seconds = jl_time_now() - t0;
  *steps = 0;
  for (int c = 0; c < count; ++c) *steps += b->steps[c];
  b->count = full;
  return rc;
}

int jl_cli_bench_trunk(int argc, char **argv) {
  static const struct option opts[] = {
    {"blocks", required_argument, NULL, 'n'}, {"points", required_argument, NULL, 'p'},
    {"batch", required_argument, NULL, 'b'},  {"steps", required_argument, NULL, 't'},
    {"device", required_argument, NULL, 'd'}, {"threads", required_argument, NULL, 'j'},
    {"seed", required_argument, NULL, 's'},   {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  long blocks = 242, points = 38700, batch = 0, steps = 50, threads = 0;
  uint64_t seed = 1;
  const char *device = "auto";
  int c, rc = JL_OK;
  optind = 1;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench trunk"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc - 1, argv + 1, &err)) > 0) {
    switch (c) {
    case 'n': rc = jl_cli_int("--blocks", optarg, 1, 250, &blocks, &err); break;
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
  jl_device dev;
  if (jl_device_select(&dev, device, (int)threads, NULL, &err) != JL_OK) return jl_cli_fail(&err);
  if (batch <= 0) batch = dev.kind == JL_DEVICE_CUDA ? dev.sm_count * 8 : dev.threads * 2;

  const double lo[3] = {0, 0, 0}, hi[3] = {1040, 560, 540};
  const jl_block_size size = {JL_BLOCK_DIN_X, JL_BLOCK_DIN_Y, JL_BLOCK_DIN_Z};
  jl_mesh m = {0};
  jl_surface_grid g = {0};
  jl_block_batch b = {0};
  jl_block_engine eng = {0};
  jl_block_packing start = {0};
  double *pts = NULL;
  int npts = 0;
  double spacing = 0.0, t1 = 0.0, tb = 0.0;
  uint64_t s1 = 0, sb = 0;
  jl_block_params p;
  if ((rc = jl_cuboid_mesh(&m, lo, hi, &err))) goto done;
  if ((rc = jl_spacing_for(&m, (int)points, &spacing, &err))) goto done;
  if ((rc = jl_surface_sample(&m, spacing, &pts, &npts, &err))) goto done;
  if (dev.kind == JL_DEVICE_CUDA) rc = jl_surface_grid_build_cuda(&g, pts, npts, JL_GRID_CELL_DEFAULT, &err);
  else rc = jl_surface_grid_build(&g, pts, npts, JL_GRID_CELL_DEFAULT, &err);
  if (rc) goto done;
  if ((rc = jl_surface_grid_mark_inside(&g, &m, &err))) goto done;
  if ((rc = jl_block_packing_init(&start, (int)blocks, &err))) goto done;
  if ((rc = jl_block_demo_packing(&start, lo, hi, &size, (int)blocks, 8.0, 0.06, seed, &err))) goto done;
  if ((rc = jl_block_batch_alloc(&b, (int)batch, (int)blocks, &err))) goto done;
  if ((rc = jl_block_engine_init(&eng, &dev, &g, (int)batch, (int)blocks, &err))) goto done;
  jl_block_params_default(&p, &size, seed);
  /* half the spacing: the search's skin when the bench tables were first
   * taken (it has none now), kept so the tables stay comparable */
  p.point_skin = 0.5 * spacing;
  /* warm-up (CUDA context, caches), then one candidate alone, then the batch */
  p.bench_steps = 1;
  if ((rc = jl_time_launch(&eng, &p, &b, &start, (int)batch, &t1, &s1, &err))) goto done;
  p.bench_steps = (int)steps;
  if ((rc = jl_time_launch(&eng, &p, &b, &start, 1, &t1, &s1, &err))) goto done;
  if ((rc = jl_time_launch(&eng, &p, &b, &start, (int)batch, &tb, &sb, &err))) goto done;
  printf("{\"bench\": \"trunk\", \"device\": \"%s\", \"device_name\": \"%s\", \"blocks\": %ld, "
         "\"points\": %d, \"spacing\": %.4f, \"cell\": %.1f, \"steps_per_candidate\": %ld, "
         "\"single_seconds\": %.6f, \"single_step_ms\": %.4f, \"batch\": %ld, "
         "\"batch_seconds\": %.6f, \"candidate_steps\": %llu, \"candidate_steps_per_s\": %.6g, "
         "\"worst_after_mm\": %.4g}\n",
         jl_device_kind_name(dev.kind), dev.name, blocks, npts, spacing, JL_GRID_CELL_DEFAULT,
         steps, t1, 1e3 * t1 / (double)(s1 > 0 ? s1 : 1), batch, tb, (unsigned long long)sb,
         (double)sb / tb, b.worst[0]);
done:
  jl_block_engine_free(&eng);
  jl_block_batch_free(&b);
  jl_block_packing_free(&start);
  jl_surface_grid_free(&g);
  free(pts);
  jl_cuboid_mesh_free(&m);
  return rc == JL_OK ? 0 : jl_cli_fail(&err);
}
