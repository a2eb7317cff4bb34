/* Asserts two block batches equal byte for byte: positions, orientations,
 * the best packings and every per-candidate counter. Shared by the GPU test
 * (kernel against twin) and the block emulation test (twin against a
 * thread-per-lane emulation of the kernel). Include after cmocka.h. */
#ifndef JL_BLOCK_BATCH_COMPARE_H
#define JL_BLOCK_BATCH_COMPARE_H

#include <stdio.h>
#include <string.h>

#include "block_batch.h"

static inline void block_batch_compare(const jl_block_batch *a, const jl_block_batch *b) {
  size_t nc = (size_t)a->count * (size_t)a->cap, k = (size_t)a->count;
  const double *x[14] = {a->cx, a->cy, a->cz, a->qw, a->qx, a->qy, a->qz,
                         a->bx, a->by, a->bz, a->bqw, a->bqx, a->bqy, a->bqz};
  const double *y[14] = {b->cx, b->cy, b->cz, b->qw, b->qx, b->qy, b->qz,
                         b->bx, b->by, b->bz, b->bqw, b->bqx, b->bqy, b->bqz};
  int differ = 0;
  for (int arr = 0; arr < 14; ++arr)
    for (size_t i = 0; i < nc; ++i) differ += memcmp(&x[arr][i], &y[arr][i], sizeof(double)) != 0;
  printf("n[0] %d %d; worst[0] %.17g %.17g; steps[0] %llu %llu; %d doubles differ\n", a->n[0],
         b->n[0], a->worst[0], b->worst[0], (unsigned long long)a->steps[0],
         (unsigned long long)b->steps[0], differ);
  assert_int_equal(differ, 0);
  assert_memory_equal(a->n, b->n, sizeof(int) * k);
  assert_memory_equal(a->best_n, b->best_n, sizeof(int) * k);
  assert_memory_equal(a->worst, b->worst, sizeof(double) * k);
  assert_memory_equal(a->energy, b->energy, sizeof(double) * k);
  assert_memory_equal(a->moves, b->moves, sizeof(uint64_t) * k);
  assert_memory_equal(a->steps, b->steps, sizeof(uint64_t) * k);
  assert_memory_equal(a->accepted, b->accepted, sizeof(uint64_t) * k);
}

#endif
