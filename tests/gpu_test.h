/* Shared by the gpu suite's tests: each compares a CUDA kernel with its CPU
 * twin and is skipped (exit status 77, which meson counts as a skip) when
 * the build has no CUDA or no device is present. */
#ifndef JL_GPU_TEST_H
#define JL_GPU_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "device.h"

#define JL_TEST_SKIP 77

#ifdef JL_HAVE_CUDA
/* The start of a gpu test's main: 1 when a CUDA device is present, otherwise
 * says why the test is skipped. JL_TEST_FILTER (a cmocka name pattern, e.g.
 * "*walk*") runs only the cases it matches, so a slow sanitizer
 * (compute-sanitizer racecheck) can take a few. */
static inline int jl_gpu_test_begin(void) {
  const char *filter = getenv("JL_TEST_FILTER");
  if (filter && *filter) cmocka_set_test_filter(filter);
  if (jl_cuda_device_count() >= 1) return 1;
  printf("no CUDA device: skipped\n");
  return 0;
}
#else
static inline int jl_gpu_test_no_cuda(void) {
  printf("built without CUDA: skipped\n");
  return JL_TEST_SKIP;
}
#endif

#endif
