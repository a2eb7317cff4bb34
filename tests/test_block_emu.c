/* The CUDA kernel's execution model emulated on CPU threads (one pthread
 * per CUDA thread, barriers for __syncthreads, block-wide max through
 * shared slots), compiled from the same block_relax.h, against the CPU
 * twin, byte for byte. It exercises the parallel paths of the kernel
 * (strided loops, leader-only moves, barriers) on machines without a GPU;
 * the gpu suite runs the real kernel. */
#define JL_BR_EMULATE 1
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "block_batch_compare.h"

#include "block_batch.h"
#include "surface_grid.h"

_Thread_local int jl_emu_tid;
int jl_emu_threads;
pthread_barrier_t jl_emu_barrier;

typedef struct emu_launch {
  jl_br_ws *ws;
  double *mem;
  const jl_block_params *p;
  jl_block_batch b;
  int cand, tid;
} emu_launch;

static void *emu_thread(void *arg) {
  emu_launch *l = arg;
  jl_emu_tid = l->tid;
  jl_block_candidate(l->ws, l->mem, l->p, l->b, l->cand);
  return NULL;
}

/* One "thread block" per candidate, candidates one after the other. */
static void emu_run(const jl_block_params *p, jl_block_batch *b, int threads) {
  assert_true(threads <= JL_BR_REDUCE_SLOTS);
  double *mem = malloc(sizeof(double) * JL_BR_WS_DOUBLES(b->cap));
  assert_non_null(mem);
  jl_emu_threads = threads;
  for (int c = 0; c < b->count; ++c) {
    jl_br_ws ws;
    memset(&ws, 0, sizeof ws);
    assert_int_equal(pthread_barrier_init(&jl_emu_barrier, NULL, (unsigned)threads), 0);
    pthread_t tid[JL_BR_REDUCE_SLOTS];
    emu_launch l[JL_BR_REDUCE_SLOTS];
    for (int t = 0; t < threads; ++t) {
      l[t] = (emu_launch){&ws, mem, p, *b, c, t};
      assert_int_equal(pthread_create(&tid[t], NULL, emu_thread, &l[t]), 0);
    }
    for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&jl_emu_barrier);
  }
  free(mem);
}

static void run_case(int threads, int bench_steps, double p_new) {
  jl_error err = {0};
  jl_mesh m;
  double lo[3] = {0, 0, 0}, hi[3] = {640, 340, 180};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  double *pts;
  int n;
  assert_int_equal(jl_surface_sample(&m, 12.5, &pts, &n, &err), JL_OK);
  jl_surface_grid g;
  assert_int_equal(jl_surface_grid_build(&g, pts, n, 20.0, &err), JL_OK);
  assert_int_equal(jl_surface_grid_mark_inside(&g, &m, &err), JL_OK);
  jl_block_size size = {200, 100, 50};
  jl_block_params p;
  jl_block_params_default(&p, &size, 17);
  p.point_skin = 3.0;
  p.iters = 10;
  p.bench_steps = bench_steps;
  p.p_turn = p.p_settle = p.p_push = p_new;
  p.grid = jl_grid_view_host(&g);
  jl_block_packing pk = {0};
  assert_int_equal(jl_block_demo_packing(&pk, lo, hi, &size, 30, 8.0, 0.06, 5, &err), JL_OK);
  const int count = 6, cap = 40;
  jl_block_batch twin, emu;
  assert_int_equal(jl_block_batch_alloc(&twin, count, cap, &err), JL_OK);
  assert_int_equal(jl_block_batch_alloc(&emu, count, cap, &err), JL_OK);
  for (int c = 0; c < count; ++c) {
    pk.count = 20 + c;  /* the demo fill holds 27 */
    assert_int_equal(jl_block_batch_set(&twin, c, &pk, &err), JL_OK);
    assert_int_equal(jl_block_batch_set(&emu, c, &pk, &err), JL_OK);
    twin.temp[c] = emu.temp[c] = 0.1 + 0.2 * c;
  }
  for (int launch = 0; launch < 2; ++launch) {
    assert_int_equal(jl_block_batch_run_cpu(&p, &twin, 1, &err), JL_OK);
    emu_run(&p, &emu, threads);
    block_batch_compare(&twin, &emu);
  }
  uint64_t acc = 0;
  for (int c = 0; c < count; ++c) acc += twin.accepted[c];
  if (bench_steps == 0) assert_true(acc > 0);
  jl_block_batch_free(&twin);
  jl_block_batch_free(&emu);
  jl_block_packing_free(&pk);
  jl_surface_grid_free(&g);
  free(pts);
  jl_cuboid_mesh_free(&m);
}

/* 8 emulated threads for up to 30 blocks: each thread strides over several */
static void test_emu_search_8(void **state) { (void)state; run_case(8, 0, 0.0); }
/* more threads than some candidates have blocks */
static void test_emu_search_32(void **state) { (void)state; run_case(32, 0, 0.0); }
static void test_emu_relax(void **state) { (void)state; run_case(5, 30, 0.0); }
/* the turn, settle and push moves too (settle and push move many blocks on
 * many threads) */
static void test_emu_moves_8(void **state) { (void)state; run_case(8, 0, 0.15); }

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_emu_search_8),
    cmocka_unit_test(test_emu_search_32),
    cmocka_unit_test(test_emu_relax),
    cmocka_unit_test(test_emu_moves_8),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
