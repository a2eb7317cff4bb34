/* gpu suite: the CUDA circle kernel against its CPU twin, bit for bit, and
 * cuRAND's Philox against the host generator. Exit 77 without a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"

#include "circle_batch.h"
#include "circle_search.h"
#include "circles.h"
#include "device.h"
#include "timer.h"

#ifdef JL_HAVE_CUDA
static void test_curand_matches_host_philox(void **state) {
  (void)state;
  const uint64_t seeds[3] = {0, 1, 0xfedcba9876543210ULL};
  const uint64_t subs[3] = {0, 5, 123456789ULL};
  const uint64_t offs[3] = {0, 3, 1000001};
  uint32_t dev_out[64];
  for (int k = 0; k < 3; ++k) {
    assert_int_equal(jl_cuda_philox_sample(seeds[k], subs[k], offs[k], 64, dev_out), 0);
    jl_rng s;
    jl_rng_init(&s, seeds[k], subs[k], offs[k]);
    for (int i = 0; i < 64; ++i) assert_int_equal(jl_rng_u32(&s), dev_out[i]);
  }
}

/* Runs the same batch (random starts, then trials, then starts from placed
 * centres for every third candidate) on both paths; aim < 0
 * keeps the default share of aimed walk jumps; nbr: contacts from neighbour
 * lists (in global memory on the device) on both paths; probe: the walk's
 * probe below the record (JL_PROBE_*). */
static void compare_paths_nbr(int n, int count, int trials, int area_weighted, int relax, int walk,
                              double aim, int nbr, int probe) {
  static double r[1000];
  for (int i = 0; i < n; ++i) r[i] = i + 1;
  jl_circle_batch cpu, gpu;
  assert_int_equal(jl_circle_batch_alloc(&cpu, n, count, r, NULL), JL_OK);
  assert_int_equal(jl_circle_batch_alloc(&gpu, n, count, r, NULL), JL_OK);
  memset(cpu.need_start, 1, (size_t)count);
  memset(gpu.need_start, 1, (size_t)count);
  jl_relax_params p;
  jl_relax_params_default(&p, r, n, 2024);
  p.trials = trials;
  if (trials == 0) p.step_budget = 20000;  /* the search's default: trials until a step budget */
  p.area_weighted = area_weighted;
  p.relax = relax;
  p.walk_every = walk;
  if (aim >= 0.0) p.walk_aim = aim;
  p.nbr = nbr;
  p.walk_probe = probe;
  jl_device dev;
  jl_error err;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_circle_engine eng;
  assert_int_equal(jl_circle_engine_init(&eng, &dev, n, count, &err), JL_OK);
  for (int launch = 0; launch < 2; ++launch) {
    assert_int_equal(jl_circle_batch_run_cpu(&p, &cpu, jl_cpu_count(), &err), JL_OK);
    int rc = jl_circle_engine_run(&eng, &p, &gpu, &err);
    if (rc != JL_OK) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, JL_OK);
  }
  /* every third candidate starts again from its packing pressed to 0.9 of
   * its size (overlapping, as a crossover's child is), on both paths */
  for (int c = 0; c < count; c += 3) {
    for (int i = 0; i < n; ++i) {
      size_t k = (size_t)c * n + i;
      cpu.x[k] *= 0.9; cpu.y[k] *= 0.9;
      gpu.x[k] *= 0.9; gpu.y[k] *= 0.9;
    }
    cpu.need_start[c] = gpu.need_start[c] = JL_START_PLACED;
  }
  assert_int_equal(jl_circle_batch_run_cpu(&p, &cpu, jl_cpu_count(), &err), JL_OK);
  assert_int_equal(jl_circle_engine_run(&eng, &p, &gpu, &err), JL_OK);
  for (int c = 0; c < count; c += 3) assert_int_equal(gpu.need_start[c], JL_START_NONE);
  /* and one benchmark launch: a fixed number of steps, no early exit */
  p.bench_steps = 300;
  assert_int_equal(jl_circle_batch_run_cpu(&p, &cpu, jl_cpu_count(), &err), JL_OK);
  assert_int_equal(jl_circle_engine_run(&eng, &p, &gpu, &err), JL_OK);
  size_t nc = (size_t)n * (size_t)count;
  int differ = 0;
  for (size_t k = 0; k < nc; ++k)
    if (memcmp(&cpu.x[k], &gpu.x[k], sizeof(double)) || memcmp(&cpu.y[k], &gpu.y[k], sizeof(double)))
      differ++;
  printf("n=%d count=%d trials=%d area=%d relax=%d nbr=%d probe=%d: %d of %zu centres differ; R[0] cpu %.17g gpu %.17g; "
         "steps[0] cpu %llu gpu %llu\n",
         n, count, trials, area_weighted, relax, nbr, probe, differ, nc, cpu.R[0], gpu.R[0],
         (unsigned long long)cpu.steps[0], (unsigned long long)gpu.steps[0]);
  assert_int_equal(differ, 0);
  for (int c = 0; c < count; ++c)  /* the walkers did walk */
    if (walk > 0 && c % walk == walk - 1) assert_true(cpu.Rt[c] > 0.0 && cpu.Rt[c] < cpu.R_rec[c]);
  assert_memory_equal(cpu.R, gpu.R, sizeof(double) * (size_t)count);
  assert_memory_equal(cpu.R_rec, gpu.R_rec, sizeof(double) * (size_t)count);
  assert_memory_equal(cpu.steps, gpu.steps, sizeof(uint64_t) * (size_t)count);
  assert_memory_equal(cpu.rng_offset, gpu.rng_offset, sizeof(uint64_t) * (size_t)count);
  assert_memory_equal(cpu.stuck, gpu.stuck, sizeof(uint32_t) * (size_t)count);
  assert_memory_equal(cpu.accepted, gpu.accepted, sizeof(uint64_t) * (size_t)count);
  assert_memory_equal(cpu.wx, gpu.wx, sizeof(double) * nc);
  assert_memory_equal(cpu.wy, gpu.wy, sizeof(double) * nc);
  assert_memory_equal(cpu.Rt, gpu.Rt, sizeof(double) * (size_t)count);
  jl_circle_engine_free(&eng);
  jl_circle_batch_free(&cpu);
  jl_circle_batch_free(&gpu);
}

static void compare_paths(int n, int count, int trials, int area_weighted, int relax, int walk, double aim) {
  compare_paths_nbr(n, count, trials, area_weighted, relax, walk, aim, 0, JL_PROBE_OFF);
}

static void test_kernel_matches_twin_n12(void **state) { (void)state; compare_paths(12, 64, 4, 0, JL_RELAX_FIRE, 0, -1.0); }
static void test_kernel_matches_twin_n50(void **state) { (void)state; compare_paths(50, 32, 2, 0, JL_RELAX_FIRE, 0, -1.0); }
static void test_kernel_matches_twin_area(void **state) { (void)state; compare_paths(30, 16, 0, 1, JL_RELAX_FIRE, 0, -1.0); }
static void test_kernel_matches_twin_budget(void **state) { (void)state; compare_paths(20, 128, 0, 0, JL_RELAX_FIRE, 0, -1.0); }
/* The seed's Jacobi relaxation, kept as an option and for the benchmark. */
static void test_kernel_matches_twin_jacobi(void **state) { (void)state; compare_paths(20, 64, 0, 0, JL_RELAX_JACOBI, 0, -1.0); }
/* The fixed-container walk: every candidate, and every other one beside
 * the seed's trials, over two launches (the walk resumes from wx, wy, Rt). */
static void test_kernel_matches_twin_walk(void **state) { (void)state; compare_paths(30, 32, 0, 0, JL_RELAX_FIRE, 1, -1.0); }
static void test_kernel_matches_twin_walk_mixed(void **state) { (void)state; compare_paths(12, 64, 6, 0, JL_RELAX_FIRE, 2, -1.0); }
/* Every jump drawn alike (--aim 0): the walk then skips the per-circle
 * energies, a branch the default never takes. */
static void test_kernel_matches_twin_walk_unaimed(void **state) { (void)state; compare_paths(30, 32, 0, 0, JL_RELAX_FIRE, 1, 0.0); }
/* The walk's probe below the record, restarting the walk or keeping it,
 * with all pairs and with neighbour lists. */
static void test_kernel_matches_twin_walk_probe(void **state) {
  (void)state;
  compare_paths_nbr(30, 32, 0, 0, JL_RELAX_FIRE, 1, -1.0, 0, JL_PROBE_RESTART);
  compare_paths_nbr(30, 32, 0, 0, JL_RELAX_FIRE, 1, -1.0, 0, JL_PROBE_KEEP);
  compare_paths_nbr(50, 32, 0, 0, JL_RELAX_FIRE, 1, -1.0, 1, JL_PROBE_KEEP);
}
/* More circles than threads per block: each thread loops over several. */
static void test_kernel_matches_twin_n300(void **state) { (void)state; compare_paths(300, 4, 1, 0, JL_RELAX_FIRE, 0, -1.0); }

/* Neighbour lists (global memory per block on the device, a thread's
 * scratch on the CPU): in the small kernel with every candidate walking, in
 * the large one with trials and walks mixed over two launches, and at
 * n = 1000 (4 circles per thread, a start and one trial each). */
static void test_kernel_matches_twin_lists_walk(void **state) { (void)state; compare_paths_nbr(50, 32, 0, 0, JL_RELAX_FIRE, 1, -1.0, 1, JL_PROBE_OFF); }
static void test_kernel_matches_twin_lists_n300(void **state) { (void)state; compare_paths_nbr(300, 8, 0, 0, JL_RELAX_FIRE, 2, -1.0, 1, JL_PROBE_OFF); }
static void test_kernel_matches_twin_lists_n1000(void **state) { (void)state; compare_paths_nbr(1000, 4, 1, 0, JL_RELAX_FIRE, 0, -1.0, 1, JL_PROBE_OFF); }

/* Two fresh batches of radii 1..n, the default parameters and a CUDA
 * engine for them. */
static void batch_pair(jl_circle_batch *cpu, jl_circle_batch *gpu, double *r, int n, int count,
                       jl_relax_params *p, jl_circle_engine *eng) {
  for (int i = 0; i < n; ++i) r[i] = i + 1;
  assert_int_equal(jl_circle_batch_alloc(cpu, n, count, r, NULL), JL_OK);
  assert_int_equal(jl_circle_batch_alloc(gpu, n, count, r, NULL), JL_OK);
  memset(cpu->need_start, 1, (size_t)count);
  memset(gpu->need_start, 1, (size_t)count);
  jl_relax_params_default(p, r, n, 77);
  jl_device dev;
  jl_error err;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  assert_int_equal(jl_circle_engine_init(eng, &dev, n, count, &err), JL_OK);
}

/* A launch cut before it starts (a signal during the last round): every
 * candidate ends at its first poll, trials and walk steps alike, with the
 * same bits on both paths. The twin runs one thread per candidate, so each
 * takes exactly one. */
static void test_kernel_matches_twin_cut(void **state) {
  (void)state;
  enum { N = 20, C = 16 };
  double r[N];
  jl_circle_batch cpu, gpu;
  jl_relax_params p;
  jl_circle_engine eng;
  batch_pair(&cpu, &gpu, r, N, C, &p, &eng);
  p.walk_every = 2;
  p.trials = 3;
  jl_error err;
  assert_int_equal(jl_circle_batch_run_cpu(&p, &cpu, 2, &err), JL_OK);
  assert_int_equal(jl_circle_engine_run(&eng, &p, &gpu, &err), JL_OK);
  jl_circle_cut cut = {1, 0.0, NULL};
  cpu.cut = &cut;
  assert_int_equal(jl_circle_batch_run_cpu_cut(&p, &cpu, C, 0, &err), JL_OK);
  cpu.cut = NULL;
  eng.cut_at = 1e-9;  /* long past */
  assert_int_equal(jl_circle_engine_run(&eng, &p, &gpu, &err), JL_OK);
  size_t nc = (size_t)N * C;
  assert_memory_equal(cpu.x, gpu.x, sizeof(double) * nc);
  assert_memory_equal(cpu.y, gpu.y, sizeof(double) * nc);
  assert_memory_equal(cpu.wx, gpu.wx, sizeof(double) * nc);
  assert_memory_equal(cpu.R, gpu.R, sizeof(double) * C);
  assert_memory_equal(cpu.R_rec, gpu.R_rec, sizeof(double) * C);
  assert_memory_equal(cpu.steps, gpu.steps, sizeof(uint64_t) * C);
  assert_memory_equal(cpu.trials_done, gpu.trials_done, sizeof(uint64_t) * C);
  assert_memory_equal(cpu.rng_offset, gpu.rng_offset, sizeof(uint64_t) * C);
  jl_circle_engine_free(&eng);
  jl_circle_batch_free(&cpu);
  jl_circle_batch_free(&gpu);
}

/* The host cuts a running launch of far more work than its time (a million
 * trials or walk steps per candidate): it returns soon after, every
 * candidate legal. */
static void test_kernel_cut_while_running(void **state) {
  (void)state;
  enum { N = 50, C = 256 };
  double r[N];
  jl_circle_batch cpu, gpu;
  jl_relax_params p;
  jl_circle_engine eng;
  batch_pair(&cpu, &gpu, r, N, C, &p, &eng);
  p.walk_every = 2;
  p.trials = 1000000;
  jl_error err;
  double t0 = jl_time_now();
  eng.cut_at = t0 + 0.5;
  assert_int_equal(jl_circle_engine_run(&eng, &p, &gpu, &err), JL_OK);
  double took = jl_time_now() - t0;
  printf("cut at 0.5 s: the launch returned after %.3f s\n", took);
  assert_true(took < 2.0);
  jl_circle_packing pk;
  assert_int_equal(jl_circle_packing_init(&pk, N, NULL), JL_OK);
  for (int c = 0; c < C; ++c) {
    assert_int_equal(gpu.need_start[c], 0);
    assert_true(gpu.trials_done[c] < 1000000);
    for (int i = 0; i < N; ++i) {
      pk.x[i] = gpu.x[(size_t)c * N + i];
      pk.y[i] = gpu.y[(size_t)c * N + i];
      pk.r[i] = r[i];
    }
    jl_circle_packing_update_R(&pk);
    jl_circle_check chk;
    jl_circle_check_packing(&pk, 1e-8, &chk);
    assert_true(chk.legal);
  }
  jl_circle_packing_free(&pk);
  jl_circle_engine_free(&eng);
  jl_circle_batch_free(&cpu);
  jl_circle_batch_free(&gpu);
}

/* A packing whose workspace does not fit a block's shared memory is refused
 * with a message that says so and names the way out. */
static void test_too_many_circles_for_a_block(void **state) {
  (void)state;
  jl_device dev;
  jl_error err;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_circle_engine eng;
  assert_int_equal(jl_circle_engine_init(&eng, &dev, 5000, 4, &err), JL_ERR_DEVICE);
  printf("%s\n", err.msg);
  assert_non_null(strstr(err.msg, "shared memory"));
  assert_non_null(strstr(err.msg, "--device cpu"));
  jl_circle_engine_free(&eng);
}
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_curand_matches_host_philox),
    cmocka_unit_test(test_kernel_matches_twin_n12),
    cmocka_unit_test(test_kernel_matches_twin_n50),
    cmocka_unit_test(test_kernel_matches_twin_area),
    cmocka_unit_test(test_kernel_matches_twin_budget),
    cmocka_unit_test(test_kernel_matches_twin_jacobi),
    cmocka_unit_test(test_kernel_matches_twin_walk),
    cmocka_unit_test(test_kernel_matches_twin_walk_mixed),
    cmocka_unit_test(test_kernel_matches_twin_walk_unaimed),
    cmocka_unit_test(test_kernel_matches_twin_walk_probe),
    cmocka_unit_test(test_kernel_matches_twin_n300),
    cmocka_unit_test(test_kernel_matches_twin_lists_walk),
    cmocka_unit_test(test_kernel_matches_twin_lists_n300),
    cmocka_unit_test(test_kernel_matches_twin_lists_n1000),
    cmocka_unit_test(test_kernel_matches_twin_cut),
    cmocka_unit_test(test_kernel_cut_while_running),
    cmocka_unit_test(test_too_many_circles_for_a_block),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
