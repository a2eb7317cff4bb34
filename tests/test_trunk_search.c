/* The annealing search on the CPU twin: from a worse start it reaches the
 * known optimum of a small cuboid trunk, checked by a test-local exact
 * check; runs are reproducible from the seed. The gap fill reaches the
 * volume bound of a trunk whose start leaves room only for a turned block
 * after sliding the others to a wall. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "block_batch.h"
#include "surface_grid.h"
#include "timer.h"
#include "trunk_search.h"
#include "trunk_test_check.h"

static int progress_calls;
static void on_progress(void *ctx, const jl_trunk_progress *p) {
  (void)ctx;
  progress_calls++;
  assert_true(p->best_count >= 0 && p->temperature > 0.0);
}

/* 420 x 220 x 60 mm holds exactly 4 blocks of 200 x 100 x 50: they must lie
 * flat (60 mm of height), and a fifth flat block does not fit the floor
 * (5 x 20000 mm^2 > 92400 mm^2). Start: 2 blocks. */
static void run_small(double len_x, int target, int n_start, long rounds, uint64_t seed, int threads,
                      jl_block_packing *best, jl_trunk_run_info *info) {
  double lo[3] = {0, 0, 0}, hi[3] = {len_x, 220, 60};
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  jl_block_packing start;
  assert_int_equal(jl_block_packing_init(&start, 4, &err), JL_OK);
  const double c0[3] = {105, 55, 30}, c1[3] = {315, 160, 30}, q[4] = {1, 0, 0, 0};
  assert_int_equal(jl_block_packing_push(&start, c0, q, &err), JL_OK);
  if (n_start > 1) assert_int_equal(jl_block_packing_push(&start, c1, q, &err), JL_OK);
  cuboid_check cc = {{0, 0, 0}, {len_x, 220, 60}, {100, 50, 25}, 0, 0.0};
  jl_trunk_search_config cfg;
  jl_trunk_search_config_default(&cfg);
  cfg.seed = seed;
  cfg.device = "cpu";
  cfg.threads = threads;
  cfg.batch = 4;
  /* coarser than the default (5 mm, skin 2.5) to keep the test fast: every
   * block of these 60 mm high trunks touches floor and ceiling samples */
  cfg.spacing = 12.5;
  cfg.point_skin = 3.125;
  cfg.rounds = rounds;  /* the temperature falls over this many launches */
  cfg.target_count = target;
  cfg.no_gap_fill = 1;  /* the annealing alone (the gap fill and the pockets have their own tests) */
  cfg.no_pockets = 1;
  assert_int_equal(jl_block_packing_init(best, 4, &err), JL_OK);
  int rc = jl_trunk_search_run(&cfg, &m, &start, cuboid_check_fn, &cc, on_progress, NULL, NULL,
                               best, info, &err);
  assert_int_equal(rc, JL_OK);
  double worst;
  assert_int_equal(cuboid_check_fn(&cc, best, &worst), 1);
  jl_block_packing_free(&start);
  jl_cuboid_mesh_free(&m);
}

static void test_search_reaches_optimum(void **state) {
  (void)state;
  jl_block_packing best;
  jl_trunk_run_info info;
  progress_calls = 0;
  run_small(420, 4, 2, 100, 5, 2, &best, &info);
  print_message("best %d after %ld rounds, %.2f s, %llu moves, %llu steps, checks %d (failed %d)\n",
                info.best_count, info.rounds, info.time_s, (unsigned long long)info.moves,
                (unsigned long long)info.relax_steps, info.checks, info.checks_failed);
  assert_int_equal(info.start_count, 2);
  assert_int_equal(info.start_legal, 1);
  assert_int_equal(best.count, 4);
  assert_int_equal(info.best_count, 4);
  assert_int_equal(info.stopped_by, JL_TRUNK_STOP_TARGET);
  assert_int_equal(progress_calls, (int)info.rounds);
  /* the same seed on another thread count: the same packing, bit for bit */
  jl_block_packing again;
  jl_trunk_run_info info2;
  run_small(420, 4, 2, 100, 5, 1, &again, &info2);
  assert_int_equal(again.count, best.count);
  assert_int_equal(info2.rounds, info.rounds);
  assert_memory_equal(again.centre, best.centre, sizeof(double) * 3 * (size_t)best.count);
  assert_memory_equal(again.quat, best.quat, sizeof(double) * 4 * (size_t)best.count);
  jl_block_packing_free(&again);
  jl_block_packing_free(&best);
}

/* 620 x 220 x 60 mm holds exactly 6 flat blocks (3 x 2; a seventh needs
 * 140000 mm^2 of floor, there are 136400), from a start of one. */
static void test_search_six_from_one(void **state) {
  (void)state;
  jl_block_packing best;
  jl_trunk_run_info info;
  run_small(620, 6, 1, 300, 11, 2, &best, &info);
  print_message("best %d after %ld rounds, %.2f s, %llu moves, %llu steps, checks %d (failed %d)\n",
                info.best_count, info.rounds, info.time_s, (unsigned long long)info.moves,
                (unsigned long long)info.relax_steps, info.checks, info.checks_failed);
  assert_int_equal(info.start_count, 1);
  assert_int_equal(best.count, 6);
  jl_block_packing_free(&best);
}

/* A set stop flag (SIGINT) ends the run before any launch, keeping the
 * best legal packing: here the start. */
static void test_search_stop_flag(void **state) {
  (void)state;
  double lo[3] = {0, 0, 0}, hi[3] = {620, 220, 60};
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  jl_block_packing start;
  assert_int_equal(jl_block_packing_init(&start, 2, &err), JL_OK);
  const double c0[3] = {105, 55, 30}, q[4] = {1, 0, 0, 0};
  assert_int_equal(jl_block_packing_push(&start, c0, q, &err), JL_OK);
  cuboid_check cc = {{0, 0, 0}, {620, 220, 60}, {100, 50, 25}, 0, 0.0};
  jl_trunk_search_config cfg;
  jl_trunk_search_config_default(&cfg);
  cfg.device = "cpu";
  cfg.batch = 2;
  cfg.moves_per_round = 2;
  cfg.no_gap_fill = 1;
  volatile sig_atomic_t stop = 1;
  jl_block_packing best = {0};
  jl_trunk_run_info info;
  assert_int_equal(jl_trunk_search_run(&cfg, &m, &start, cuboid_check_fn, &cc, NULL, NULL, &stop,
                                       &best, &info, &err), JL_OK);
  assert_int_equal(info.stopped_by, JL_TRUNK_STOP_SIGNAL);
  assert_int_equal(info.rounds, 0);
  assert_int_equal(best.count, 1);
  assert_memory_equal(best.centre, start.centre, 3 * sizeof(double));
  double worst;
  assert_int_equal(cuboid_check_fn(&cc, &best, &worst), 1);
  jl_block_packing_free(&best);
  jl_block_packing_free(&start);
  jl_cuboid_mesh_free(&m);
}

/* Legal when it holds at most the lattice start's blocks (the start is a
 * lattice of touching blocks): enough for a test of time, not of packing. */
static int at_most_start(void *ctx, const jl_block_packing *p, double *worst) {
  *worst = 0.0;
  return p->count <= *(const int *)ctx;
}

/* --time holds with 20,000 blocks: a relaxation step is 4e8 pair tests
 * (seconds), 24 of them after the first move, and the CPU twin ends the
 * launch within a step at the deadline (before, the first launch ran for
 * minutes). Under ThreadSanitizer no launch of 20,000 blocks ended in
 * 20 s, so it runs 2,000 for 20 s: the same threads and cut. */
static void test_search_time_many_blocks(void **state) {
  (void)state;
  double lo[3] = {0, 0, 0}, hi[3] = {1000, 500, 400};
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  jl_block_size size = {20, 10, 10};
  jl_block_packing start = {0}, best = {0};
#if defined(__SANITIZE_THREAD__)
  int n = 2000;
#else
  int n = 20000;
#endif
  assert_int_equal(jl_block_demo_packing(&start, lo, hi, &size, n, 0.0, 0.0, 1, &err), JL_OK);
  assert_int_equal(start.count, n);
  jl_trunk_search_config cfg;
  jl_trunk_search_config_default(&cfg);
  cfg.device = "cpu";
  cfg.threads = 2;
  cfg.batch = 2;
  cfg.block = size;
  cfg.spacing = 10.0;
  cfg.no_gap_fill = 1;
  cfg.time_s = 2.0;
#if defined(__SANITIZE_ADDRESS__)
  cfg.time_s = 10.0;  /* a sanitized debug build runs about 5 times slower */
#elif defined(__SANITIZE_THREAD__)
  cfg.time_s = 20.0;  /* 2 s ended before a launch of the 2,000 */
#endif
  jl_trunk_run_info info;
  double t0 = jl_time_now();
  assert_int_equal(jl_trunk_search_run(&cfg, &m, &start, at_most_start, &n, NULL, NULL, NULL, &best, &info,
                                       &err), JL_OK);
  double took = jl_time_now() - t0;
  print_message("%d blocks, --time %g: %.2f s, %ld launches\n", start.count, cfg.time_s, took,
                info.rounds);
  assert_true(info.rounds >= 1);
  assert_int_equal(info.stopped_by, JL_TRUNK_STOP_TIME);
  assert_int_equal(best.count, n);
  assert_true(took < cfg.time_s + 1.5);
  jl_block_packing_free(&best);
  jl_block_packing_free(&start);
  jl_cuboid_mesh_free(&m);
}

/* Bad input is an error, not a crash. */
static void test_search_bad_input(void **state) {
  (void)state;
  double lo[3] = {0, 0, 0}, hi[3] = {150, 150, 150};
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  cuboid_check cc = {{0, 0, 0}, {150, 150, 150}, {100, 50, 25}, 0, 0.0};
  jl_trunk_search_config cfg;
  jl_trunk_search_config_default(&cfg);
  cfg.device = "cpu";
  cfg.rounds = 1;
  jl_block_packing best = {0};
  jl_trunk_run_info info;
  /* 3.375 l: room for 3 blocks by volume, but no check given */
  assert_int_equal(jl_trunk_search_run(&cfg, &m, NULL, NULL, NULL, NULL, NULL, NULL, &best, &info, &err),
                   JL_ERR_INPUT);
  cfg.block.x = -1;
  assert_int_equal(jl_trunk_search_run(&cfg, &m, NULL, cuboid_check_fn, &cc, NULL, NULL, NULL, &best,
                                       &info, &err), JL_ERR_INPUT);
  cfg.block = (jl_block_size){200, 200, 200};  /* 8 l > 3.375 l */
  assert_int_equal(jl_trunk_search_run(&cfg, &m, NULL, cuboid_check_fn, &cc, NULL, NULL, NULL, &best,
                                       &info, &err), JL_ERR_INPUT);
  jl_block_packing_free(&best);
  jl_cuboid_mesh_free(&m);
}

/* 300 x 200 x H mm holds exactly 3 H / 50 blocks of 200 x 100 x 50 (the
 * volume bound): per 50 mm layer two blocks along x side by side and one
 * turned (100 along x, 200 along y) beside them. Start: the two of each
 * layer centred in x, 50 mm from either end wall, which leaves no room for
 * any block as it is: only sliding them to a wall opens the 100 mm a turned
 * block needs. */
static void gap_start(int layers, jl_block_packing *start) {
  jl_error err = {0};
  assert_int_equal(jl_block_packing_init(start, 4, &err), JL_OK);
  const double q[4] = {1, 0, 0, 0};
  for (int l = 0; l < layers; ++l)
    for (int r = 0; r < 2; ++r) {
      const double c[3] = {150, 50 + 100 * r, 25 + 50 * l};
      assert_int_equal(jl_block_packing_push(start, c, q, &err), JL_OK);
    }
}

static void test_gap_fill_turned_block(void **state) {
  (void)state;
  for (int layers = 1; layers <= 2; ++layers) {
    double lo[3] = {0, 0, 0}, hi[3] = {300, 200, 50.0 * layers};
    jl_mesh m;
    jl_error err = {0};
    assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
    cuboid_check cc = {{0, 0, 0}, {300, 200, 50.0 * layers}, {100, 50, 25}, 0, 1e-9};
    jl_block_packing p;
    gap_start(layers, &p);
    double worst;
    assert_int_equal(cuboid_check_fn(&cc, &p, &worst), 1);
    int added = -1;
    jl_block_size size = {200, 100, 50};
    assert_int_equal(jl_trunk_gap_fill(&m, size, 0.0, &p, 10, 0.0, NULL, cuboid_check_fn, &cc, &added, &err),
                     JL_OK);
    assert_int_equal(added, layers);
    assert_int_equal(p.count, 3 * layers);
    assert_int_equal(cuboid_check_fn(&cc, &p, &worst), 1);
    /* the added block is the turned one: its 200 mm edge along y */
    int turned = 0;
    for (int b = 0; b < p.count; ++b) {
      const double *q = p.quat + 4 * b;
      double ay = 2 * (q[1] * q[2] + q[0] * q[3]);  /* y of the block's x axis */
      if (fabs(fabs(ay) - 1.0) < 1e-9) turned++;
    }
    assert_int_equal(turned, layers);
    /* a full trunk takes nothing more */
    assert_int_equal(jl_trunk_gap_fill(&m, size, 0.0, &p, 10, 0.0, NULL, cuboid_check_fn, &cc, &added, &err),
                     JL_OK);
    assert_int_equal(added, 0);
    assert_int_equal(p.count, 3 * layers);
    jl_block_packing_free(&p);
    jl_cuboid_mesh_free(&m);
  }
}

/* The search uses the gap fill on its start: one launch of one move
 * reaches the bound that the annealing from this start does not find. */
static void test_search_gap_fill(void **state) {
  (void)state;
  double lo[3] = {0, 0, 0}, hi[3] = {300, 200, 100};
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  cuboid_check cc = {{0, 0, 0}, {300, 200, 100}, {100, 50, 25}, 0, 1e-9};
  jl_block_packing start, best;
  gap_start(2, &start);
  assert_int_equal(jl_block_packing_init(&best, 4, &err), JL_OK);
  jl_trunk_search_config cfg;
  jl_trunk_search_config_default(&cfg);
  cfg.device = "cpu";
  cfg.threads = 1;
  cfg.batch = 1;
  cfg.spacing = 12.5;
  cfg.point_skin = 3.125;
  cfg.rounds = 1;
  cfg.moves_per_round = 1;
  jl_trunk_run_info info;
  assert_int_equal(jl_trunk_search_run(&cfg, &m, &start, cuboid_check_fn, &cc, NULL, NULL, NULL, &best,
                                       &info, &err), JL_OK);
  assert_int_equal(info.start_count, 4);
  assert_int_equal(info.gap_added, 2);
  assert_int_equal(best.count, 6);
  double worst;
  assert_int_equal(cuboid_check_fn(&cc, &best, &worst), 1);
  jl_block_packing_free(&best);
  jl_block_packing_free(&start);
  jl_cuboid_mesh_free(&m);
}

/* The CUDA kernel's slot limit decides whether a trunk can be searched
 * there (the CLI then gives the fills all of --time); the CPU takes any. */
static void test_search_fits(void **state) {
  (void)state;
  jl_device cpu = {.kind = JL_DEVICE_CPU, .threads = 2}, cuda = {.kind = JL_DEVICE_CUDA, .threads = 2};
  assert_int_equal(jl_trunk_search_fits(&cpu, 1000000), 1);
  assert_int_equal(jl_trunk_search_fits(&cuda, JL_CUDA_MAX_SLOTS), 1);
  assert_int_equal(jl_trunk_search_fits(&cuda, JL_CUDA_MAX_SLOTS + 1), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_search_reaches_optimum),
    cmocka_unit_test(test_search_six_from_one),
    cmocka_unit_test(test_search_stop_flag),
    cmocka_unit_test(test_search_time_many_blocks),
    cmocka_unit_test(test_search_bad_input),
    cmocka_unit_test(test_gap_fill_turned_block),
    cmocka_unit_test(test_search_gap_fill),
    cmocka_unit_test(test_search_fits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
