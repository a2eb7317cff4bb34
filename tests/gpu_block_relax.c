/* gpu suite: the trunk kernels against their CPU twins, bit for bit: the
 * surface grid (CUB radix sort), the block relaxation on a batch, and
 * annealing launches of the search. Exit 77 without a device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "block_batch_compare.h"

#include "gpu_test.h"

#include "block_batch.h"
#include "device.h"
#include "surface_grid.h"

#ifdef JL_HAVE_CUDA
static void grid_compare(const jl_mesh *m, double spacing, double cell) {
  jl_error err = {0};
  double *pts;
  int n;
  assert_int_equal(jl_surface_sample(m, spacing, &pts, &n, &err), JL_OK);
  jl_surface_grid a, b;
  assert_int_equal(jl_surface_grid_build(&a, pts, n, cell, &err), JL_OK);
  assert_int_equal(jl_surface_grid_build_cuda(&b, pts, n, cell, &err), JL_OK);
  printf("grid: %d points, %d cells\n", n, a.n_cells);
  assert_int_equal(a.n_cells, b.n_cells);
  assert_memory_equal(a.dim, b.dim, sizeof a.dim);
  assert_memory_equal(a.point_id, b.point_id, sizeof(int) * (size_t)n);
  assert_memory_equal(a.cell_start, b.cell_start, sizeof(int) * (size_t)a.n_cells);
  assert_memory_equal(a.cell_count, b.cell_count, sizeof(int) * (size_t)a.n_cells);
  assert_memory_equal(a.px, b.px, sizeof(double) * (size_t)n);
  assert_memory_equal(a.py, b.py, sizeof(double) * (size_t)n);
  assert_memory_equal(a.pz, b.pz, sizeof(double) * (size_t)n);
  assert_memory_equal(a.cell_lo, b.cell_lo, sizeof(double) * 3 * (size_t)a.n_cells);
  assert_memory_equal(a.cell_hi, b.cell_hi, sizeof(double) * 3 * (size_t)a.n_cells);
  jl_surface_grid_free(&a);
  jl_surface_grid_free(&b);
  free(pts);
}

static void test_grid_gpu_equals_cpu(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  double lo[3] = {-13.7, 4.2, 0.5}, hi[3] = {1040, 560, 540};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  grid_compare(&m, 8.0, 20.0);
  grid_compare(&m, 25.0, 7.5);
  /* a tilted mesh: the box's vertices turned, so samples spread over cells */
  jl_quat q = jl_quat_axis_angle(jl_v3_normalize(jl_v3(1, 2, 3)), 0.7);
  for (int i = 0; i < m.n_vertices; ++i) {
    jl_vec3 v = jl_quat_rotate(q, jl_v3(m.vertices[3 * i], m.vertices[3 * i + 1], m.vertices[3 * i + 2]));
    m.vertices[3 * i] = v.x; m.vertices[3 * i + 1] = v.y; m.vertices[3 * i + 2] = v.z;
  }
  grid_compare(&m, 10.0, 20.0);
  jl_cuboid_mesh_free(&m);
}

typedef struct sim_setup {
  jl_mesh m;
  jl_surface_grid g;
  double *pts;
  jl_block_params p;
  jl_block_packing pk;
} sim_setup;

static void sim_init(sim_setup *s, int blocks) {
  jl_error err = {0};
  double lo[3] = {0, 0, 0}, hi[3] = {1040, 560, 540};
  assert_int_equal(jl_cuboid_mesh(&s->m, lo, hi, &err), JL_OK);
  int n;
  assert_int_equal(jl_surface_sample(&s->m, 12.5, &s->pts, &n, &err), JL_OK);
  assert_int_equal(jl_surface_grid_build(&s->g, s->pts, n, 20.0, &err), JL_OK);
  assert_int_equal(jl_surface_grid_mark_inside(&s->g, &s->m, &err), JL_OK);
  jl_block_size size = {200, 100, 50};
  jl_block_params_default(&s->p, &size, 42);
  s->p.point_skin = 3.0;
  assert_int_equal(jl_block_packing_init(&s->pk, blocks, &err), JL_OK);
  assert_int_equal(jl_block_demo_packing(&s->pk, lo, hi, &size, blocks, 6.0, 0.05, 9, &err), JL_OK);
}

static void sim_free(sim_setup *s) {
  jl_block_packing_free(&s->pk);
  free(s->pts);
  jl_surface_grid_free(&s->g);
  jl_cuboid_mesh_free(&s->m);
}

/* Relaxation only (bench launches: exactly S steps), 242 blocks, a batch
 * of differently perturbed starts. */
static void test_relax_kernel_matches_twin(void **state) {
  (void)state;
  sim_setup s;
  sim_init(&s, 242);
  jl_error err = {0};
  const int count = 24, cap = 250;
  jl_block_batch cpu, gpu;
  assert_int_equal(jl_block_batch_alloc(&cpu, count, cap, &err), JL_OK);
  assert_int_equal(jl_block_batch_alloc(&gpu, count, cap, &err), JL_OK);
  jl_block_size size = {200, 100, 50};
  double lo[3] = {0, 0, 0}, hi[3] = {1040, 560, 540};
  for (int c = 0; c < count; ++c) {
    assert_int_equal(jl_block_demo_packing(&s.pk, lo, hi, &size, 242 - c % 3, 8.0, 0.06, 100 + c, &err), JL_OK);
    assert_int_equal(jl_block_batch_set(&cpu, c, &s.pk, &err), JL_OK);
    assert_int_equal(jl_block_batch_set(&gpu, c, &s.pk, &err), JL_OK);
  }
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_block_engine eng;
  assert_int_equal(jl_block_engine_init(&eng, &dev, &s.g, count, cap, &err), JL_OK);
  s.p.bench_steps = 40;
  s.p.grid = jl_grid_view_host(&s.g);
  assert_int_equal(jl_block_batch_run_cpu(&s.p, &cpu, jl_cpu_count(), &err), JL_OK);
  assert_int_equal(jl_block_engine_run(&eng, &s.p, &gpu, &err), JL_OK);
  block_batch_compare(&cpu, &gpu);
  assert_true(cpu.worst[0] < 8.0);  /* it did relax */
  jl_block_engine_free(&eng);
  jl_block_batch_free(&cpu);
  jl_block_batch_free(&gpu);
  sim_free(&s);
}

/* Annealing launches (moves, relaxation, Metropolis, best states) from a
 * start, three launches in a row, chains at several temperatures; p_new:
 * the share of each of the turn, settle and push moves. */
static void search_case(double p_new) {
  sim_setup s;
  sim_init(&s, 60);
  jl_error err = {0};
  const int count = 32, cap = 275;
  jl_block_batch cpu, gpu;
  assert_int_equal(jl_block_batch_alloc(&cpu, count, cap, &err), JL_OK);
  assert_int_equal(jl_block_batch_alloc(&gpu, count, cap, &err), JL_OK);
  for (int c = 0; c < count; ++c) {
    assert_int_equal(jl_block_batch_set(&cpu, c, &s.pk, &err), JL_OK);
    assert_int_equal(jl_block_batch_set(&gpu, c, &s.pk, &err), JL_OK);
    cpu.temp[c] = gpu.temp[c] = 0.05 + 0.1 * (c % 5);
  }
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_block_engine eng;
  assert_int_equal(jl_block_engine_init(&eng, &dev, &s.g, count, cap, &err), JL_OK);
  s.p.iters = 12;
  s.p.p_turn = s.p.p_settle = s.p.p_push = p_new;
  s.p.grid = jl_grid_view_host(&s.g);
  for (int launch = 0; launch < 3; ++launch) {
    assert_int_equal(jl_block_batch_run_cpu(&s.p, &cpu, jl_cpu_count(), &err), JL_OK);
    assert_int_equal(jl_block_engine_run(&eng, &s.p, &gpu, &err), JL_OK);
    block_batch_compare(&cpu, &gpu);
  }
  uint64_t acc = 0;
  for (int c = 0; c < count; ++c) acc += cpu.accepted[c];
  assert_true(acc > 0);
  jl_block_engine_free(&eng);
  jl_block_batch_free(&cpu);
  jl_block_batch_free(&gpu);
  sim_free(&s);
}

static void test_search_kernel_matches_twin(void **state) { (void)state; search_case(0.0); }
static void test_moves_kernel_matches_twin(void **state) { (void)state; search_case(0.15); }
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grid_gpu_equals_cpu),
    cmocka_unit_test(test_relax_kernel_matches_twin),
    cmocka_unit_test(test_search_kernel_matches_twin),
    cmocka_unit_test(test_moves_kernel_matches_twin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
