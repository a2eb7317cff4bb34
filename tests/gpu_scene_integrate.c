/* gpu suite: the integration kernels of the scene step (kernels/
 * scene_integrate.cu) against their CPU twin (integrate.h), bit for bit, over
 * repeated half steps, plus the arena's body round trip. Exit 77 without a
 * device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"

#include "device.h"
#include "integrate.h"
#include "scene.h"
#include "scene_fixtures.h"
#include "scene_gpu.h"

#ifdef JL_HAVE_CUDA
static void test_integration_matches_twin(void **state) {
  (void)state;
  jl_scene s;
  jl_error err = {0};
  assert_int_equal(fx_mixed_scene(&s, 9, 5, 1, 1), 0);
  jl_bodies *b = &s.bodies;
  size_t n = (size_t)b->count;
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_scene_gpu *g = NULL;
  assert_int_equal(jl_scene_gpu_create(&g, &dev, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_set_bodies(g, b, &err), JL_OK);
  assert_true(jl_scene_gpu_bytes(g) > 0);
  double *dv_cpu = malloc(6 * n * sizeof(double)), *dv_gpu = malloc(6 * n * sizeof(double));
  double *pos = malloc(3 * n * sizeof(double)), *quat = malloc(4 * n * sizeof(double));
  double *pos0 = malloc(3 * n * sizeof(double));
  assert_true(dv_cpu && dv_gpu && pos && quat && pos0);
  memcpy(pos0, b->pos, 3 * n * sizeof(double));
  for (int step = 0; step < 20; ++step) {
    jl_integrate_half_step(b, 0.5 * s.dt);
    jl_integrate_free_velocity(b, s.gravity, s.dt, dv_cpu);
    assert_int_equal(jl_scene_gpu_half_step(g, 0.5 * s.dt, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_free_velocity(g, s.gravity, s.dt, dv_gpu, &err), JL_OK);
    assert_memory_equal(dv_cpu, dv_gpu, 6 * n * sizeof(double));
    jl_integrate_half_step(b, 0.5 * s.dt);
    assert_int_equal(jl_scene_gpu_half_step(g, 0.5 * s.dt, &err), JL_OK);
  }
  /* the device's poses, fetched into copies of the host arrays */
  memcpy(pos, b->pos, 3 * n * sizeof(double));
  memcpy(quat, b->quat, 4 * n * sizeof(double));
  assert_int_equal(jl_scene_gpu_get_bodies(g, b, &err), JL_OK);
  assert_memory_equal(pos, b->pos, 3 * n * sizeof(double));
  assert_memory_equal(quat, b->quat, 4 * n * sizeof(double));
  /* dynamic bodies did move (the comparison is not between unchanged arrays) */
  int moved = 0;
  for (size_t k = 0; k < n; ++k) moved += !b->is_static[k] && b->pos[3 * k + 2] != pos0[3 * k + 2];
  assert_true(moved == 9 * 9 * 9);
  /* a body count that does not match is an error, not a partial copy */
  b->count--;
  assert_int_equal(jl_scene_gpu_get_bodies(g, b, &err), JL_ERR_DEVICE);
  b->count++;
  jl_scene_gpu_destroy(g);
  free(dv_cpu);
  free(dv_gpu);
  free(pos);
  free(quat);
  free(pos0);
  jl_scene_free(&s);
}
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_integration_matches_twin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
