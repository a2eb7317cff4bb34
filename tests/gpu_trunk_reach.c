/* gpu suite: the reachable volume's kernels (kernels/trunk/trunk_reach.cu)
 * against the CPU twin, voxel for voxel: every frame (axes, sloped faces,
 * fixed tilts) of a prism with a slot and a slope, of a box turned about a
 * skew axis (faces in general position), and of the sedan at the CUDA
 * default voxel (2.5 mm), whose time is printed. Exit 77 without a device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"
#ifdef JL_HAVE_CUDA
#include "mesh_fixture.h"
#include "prism_fixture.h"
#endif

#include "math3d.h"
#include "mesh.h"
#include "surface_grid.h"
#include "timer.h"
#include "trunk_reach.h"

#ifdef JL_HAVE_CUDA
static const jl_block_size din = {200, 100, 50};

/* Both paths over every frame of m at voxel v; the bits must be equal. */
static void compare(const jl_mesh *m, double v) {
  jl_error err = {0};
  jl_voxel_map map;
  int cut = 0;
  assert_int_equal(jl_voxel_map_build(&map, m, v, 1e9, JL_VOXEL_OUTER, 0, 0.0, NULL, &cut, &err), JL_OK);
  jl_reach_frame f[JL_REACH_MAX_FRAMES];
  int n = 0, faces = 0;
  assert_int_equal(jl_reach_frames(m, 1, 1, 0.0, NULL, f, JL_REACH_MAX_FRAMES, &n, &faces, &err), JL_OK);
  size_t nw = jl_reach_world_words(&map);
  uint64_t *a = malloc(nw * sizeof *a), *b = malloc(nw * sizeof *b);
  assert_non_null(a);
  assert_non_null(b);
  int da = 0, db = 0;
  double t0 = jl_time_now();
  assert_int_equal(jl_reach_open(&map, f, n, din, 0, 0, 0.0, NULL, a, &da, &err), JL_OK);
  double t1 = jl_time_now();
  if (jl_reach_open(&map, f, n, din, 1, 0, 0.0, NULL, b, &db, &err) != JL_OK) fail_msg("%s", err.msg);
  double t2 = jl_time_now();
  size_t set = 0;
  for (size_t q = 0; q < nw; ++q) set += (size_t)__builtin_popcountll(a[q]);
  printf("%d x %d x %d voxels of %g mm, %d frames (%d faces): %zu reached; CPU %.3f s, CUDA %.3f s\n", map.dim[0],
         map.dim[1], map.dim[2], map.v, n, faces, set, t1 - t0, t2 - t1);
  assert_int_equal(da, n);
  assert_int_equal(db, n);
  assert_true(set > 0);
  assert_memory_equal(a, b, nw * sizeof *a);
  free(a);
  free(b);
  jl_voxel_map_free(&map);
}

static void test_prism_kernel_matches_twin(void **state) {
  (void)state;
  static const double poly[] = {0, 0, 700, 0, 700, 40, 560, 40, 400, 420, 0, 420};
  jl_mesh m;
  prism_mesh(&m, poly, 6, 450.0);
  compare(&m, 5.0);
  compare(&m, 3.3);
  jl_mesh_free(&m);
}

static void test_turned_box_kernel_matches_twin(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  double lo[3] = {0, 0, 0}, hi[3] = {900, 520, 430};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  jl_quat q = jl_quat_axis_angle(jl_v3_normalize(jl_v3(1, 2, 3)), 0.4);
  for (int i = 0; i < m.n_vertices; ++i) {
    jl_vec3 v = jl_quat_rotate(q, jl_v3(m.vertices[3 * i], m.vertices[3 * i + 1], m.vertices[3 * i + 2]));
    m.vertices[3 * i] = v.x; m.vertices[3 * i + 1] = v.y; m.vertices[3 * i + 2] = v.z;
  }
  compare(&m, 4.0);
  jl_cuboid_mesh_free(&m);
}

static void test_sedan_kernel_matches_twin(void **state) {
  (void)state;
  jl_mesh m;
  mesh_fixture_load(&m, "sedan.stl");
  compare(&m, 50.0 / JL_REACH_VOXELS_PER_EDGE_CUDA);
  /* the whole measure as the CLI runs it on CUDA */
  jl_reach_config c;
  jl_reach_config_default(&c);
  c.cuda = 1;
  jl_reach_info info;
  jl_error err = {0};
  if (jl_trunk_reach(&m, &c, &info, &err) != JL_OK) fail_msg("%s", err.msg);
  printf("sedan on CUDA: reachable %.3f L (bound %ld) of %.3f L, voxel %g mm, %d frames, %.2f s\n",
         info.volume_mm3 / 1e6, info.bound, jl_mesh_volume(&m) / 1e6, info.voxel, info.frames_done, info.time_s);
  assert_true(info.complete);
  assert_true(info.volume_mm3 >= 385e6);
  jl_mesh_free(&m);
}
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prism_kernel_matches_twin),
      cmocka_unit_test(test_turned_box_kernel_matches_twin),
      cmocka_unit_test(test_sedan_kernel_matches_twin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
