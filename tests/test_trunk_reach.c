/* The reachable volume (trunk_reach.c) on the CPU twin, with known
 * answers: the 1000 x 500 x 400 cuboid is reached whole (exactly 200 L,
 * also by turned frames, which may add nothing outside it); a box off the
 * voxel grid is reached whole and its voxel cover is not below its volume;
 * an L-shaped prism exactly (108 L); a 30 mm slot no block enters is left
 * out (exactly by the axis-aligned frame, within half a liter by all); a
 * strip 60 mm thick turned 30 degrees holds no axis-aligned block (0 L) but
 * is reached by the fixed tilts, and one turned 37 degrees by its face's
 * frame; turned blocks reach further into a wedge than axis-aligned ones; the same voxels on 1 and 2 threads; the stop flag and a spent
 * deadline measure nothing; the sedan's reachable volume lies between its
 * best count (385) and its volume. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mesh_fixture.h"
#include "prism_fixture.h"

#include "mesh.h"
#include "math3d.h"
#include "surface_grid.h"
#include "timer.h"
#include "trunk_reach.h"

#define L_MM3 1e6

static jl_reach_info reach_of(const jl_mesh *m, double voxel, int tilts, int faces, int threads) {
  jl_reach_config c;
  jl_reach_config_default(&c);
  c.voxel = voxel;
  c.no_tilts = !tilts;
  c.no_faces = !faces;
  c.threads = threads;
  jl_reach_info info;
  jl_error err = {0};
  if (jl_trunk_reach(m, &c, &info, &err) != JL_OK) fail_msg("jl_trunk_reach: %s", err.msg);
  printf("reach %.6f L of %.6f L (cover %.6f L), bound %ld, %d/%d frames (%d faces), voxel %g mm, %.2f s\n",
         info.volume_mm3 / L_MM3, jl_mesh_volume(m) / L_MM3, info.cover_mm3 / L_MM3, info.bound, info.frames_done,
         info.frames, info.faces, info.voxel, info.time_s);
  return info;
}

static void test_box_exact(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  double lo[3] = {0, 0, 0}, hi[3] = {1000, 500, 400};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  jl_reach_info axes = reach_of(&m, 5.0, 0, 0, 2);
  assert_true(axes.measured && axes.complete);
  assert_int_equal(axes.frames, 1);
  assert_true(axes.volume_mm3 == 200.0 * L_MM3);
  assert_true(axes.cover_mm3 == 200.0 * L_MM3);
  assert_int_equal(axes.bound, 200);
  /* turned frames reach nothing outside the box: still exactly 200 L */
  jl_reach_info all = reach_of(&m, 5.0, 1, 1, 2);
  assert_true(all.measured && all.complete);
  assert_int_equal(all.frames, 1 + 3 * JL_REACH_N_TILT_ANGLES);
  assert_int_equal(all.faces, 0);
  assert_true(all.volume_mm3 == 200.0 * L_MM3);
  assert_int_equal(all.bound, 200);
  jl_cuboid_mesh_free(&m);
  /* off the voxel grid at its far faces: reached whole, the cover not short */
  double hi2[3] = {1001, 503, 397};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi2, &err), JL_OK);
  double vol = 1001.0 * 503.0 * 397.0;
  jl_reach_info off = reach_of(&m, 5.0, 0, 0, 2);
  assert_true(off.cover_mm3 >= vol);
  assert_true(off.volume_mm3 == jl_mesh_volume(&m));  /* never above the volume */
  assert_int_equal(off.bound, 199);
  jl_cuboid_mesh_free(&m);
}

static void test_l_shape_exact(void **state) {
  (void)state;
  /* (x, z): a floor 600 x 300 with a leg 300 x 300 on its left, 400 mm along y */
  static const double l[] = {0, 0, 600, 0, 600, 300, 300, 300, 300, 600, 0, 600};
  jl_mesh m;
  prism_mesh(&m, l, 6, 400.0);
  assert_true(fabs(jl_mesh_volume(&m) - 108.0 * L_MM3) < 1e-6);
  jl_reach_info axes = reach_of(&m, 5.0, 0, 0, 2);
  assert_true(axes.volume_mm3 == 108.0 * L_MM3);
  jl_reach_info all = reach_of(&m, 5.0, 1, 1, 2);
  assert_true(all.volume_mm3 == 108.0 * L_MM3);
  assert_int_equal(all.bound, 108);
  jl_mesh_free(&m);
}

static void test_slot_excluded(void **state) {
  (void)state;
  /* a 600 x 400 room with a 30 mm high, 200 mm deep slot at the floor, 500 mm along y */
  static const double slot[] = {0, 0, 800, 0, 800, 30, 600, 30, 600, 400, 0, 400};
  jl_mesh m;
  prism_mesh(&m, slot, 6, 500.0);
  assert_true(fabs(jl_mesh_volume(&m) - 123.0 * L_MM3) < 1e-6);
  jl_reach_info axes = reach_of(&m, 5.0, 0, 0, 2);
  assert_true(axes.volume_mm3 == 120.0 * L_MM3);
  assert_int_equal(axes.bound, 120);
  /* a turned block's corner may dip into the slot's mouth, no more */
  jl_reach_info all = reach_of(&m, 5.0, 1, 1, 2);
  assert_true(all.volume_mm3 >= 120.0 * L_MM3);
  assert_true(all.volume_mm3 <= 120.5 * L_MM3);
  assert_int_equal(all.bound, 120);
  jl_mesh_free(&m);
}

/* A strip 800 mm along a slope of deg degrees (about y), 60 mm thick, 500 mm along y. */
static void strip_mesh(jl_mesh *m, double deg) {
  double a = deg * (JL_PI / 180.0), c = cos(a), s = sin(a);
  double x0 = 60.0 * s;
  double p[] = {x0, 0, x0 + 800 * c, 800 * s, x0 + 800 * c - 60 * s, 800 * s + 60 * c, 0, 60 * c};
  prism_mesh(m, p, 4, 500.0);
  assert_true(fabs(jl_mesh_volume(m) - 24.0 * L_MM3) < 1e-3);
}

static void test_strip_needs_turned_blocks(void **state) {
  (void)state;
  jl_mesh m;
  strip_mesh(&m, 30.0);
  jl_reach_info axes = reach_of(&m, 5.0, 0, 0, 2);
  assert_true(axes.measured);
  assert_true(axes.volume_mm3 == 0.0);  /* no axis-aligned block fits */
  jl_reach_info tilts = reach_of(&m, 5.0, 1, 0, 2);
  assert_true(tilts.volume_mm3 > 0.99 * 24.0 * L_MM3);
  assert_true(tilts.volume_mm3 > axes.volume_mm3);
  jl_mesh_free(&m);
  /* 37 degrees: a frame of the mesh's own sloped faces */
  strip_mesh(&m, 37.0);
  axes = reach_of(&m, 5.0, 0, 0, 2);
  assert_true(axes.volume_mm3 == 0.0);
  jl_reach_info faces = reach_of(&m, 5.0, 0, 1, 2);
  assert_true(faces.faces >= 1);
  assert_true(faces.volume_mm3 > 0.99 * 24.0 * L_MM3);
  jl_mesh_free(&m);
}

/* A wedge 800 mm long rising to 160 mm (11.3 degrees), 500 mm along y:
 * axis-aligned blocks reach no point where it is lower than 50 mm (x < 250,
 * 3.125 L), blocks turned onto its sloped face reach a little further toward
 * the edge (to about x = 245 on the face) and into the corner at x = 800. */
static void test_wedge_turned_reach_further(void **state) {
  (void)state;
  static const double w[] = {0, 0, 800, 0, 800, 160};
  jl_mesh m;
  prism_mesh(&m, w, 3, 500.0);
  jl_reach_info axes = reach_of(&m, 5.0, 0, 0, 2);
  jl_reach_info faces = reach_of(&m, 5.0, 0, 1, 2);
  jl_reach_info all = reach_of(&m, 5.0, 1, 1, 2);
  assert_int_equal(faces.faces, 1);
  /* axis-aligned blocks cover 32 - 3.125 L less a sliver in the corner at
   * x = 800 (about 0.1 L); the bound may add about a voxel along the slope,
   * not the 2 L of the edge */
  assert_true(axes.volume_mm3 >= 28.75 * L_MM3);
  assert_true(axes.volume_mm3 < 30.0 * L_MM3);
  assert_true(faces.volume_mm3 > axes.volume_mm3 + 0.2 * L_MM3);
  assert_true(all.volume_mm3 > faces.volume_mm3);
  jl_mesh_free(&m);
}

static void test_frames_orthonormal(void **state) {
  (void)state;
  jl_mesh m;
  strip_mesh(&m, 37.0);
  jl_reach_frame f[JL_REACH_MAX_FRAMES];
  int n = 0, faces = 0;
  jl_error err = {0};
  assert_int_equal(jl_reach_frames(&m, 1, 1, 0.0, NULL, f, JL_REACH_MAX_FRAMES, &n, &faces, &err), JL_OK);
  assert_int_equal(n, 1 + faces + 3 * JL_REACH_N_TILT_ANGLES);
  assert_int_equal(f[0].kind, JL_REACH_FRAME_AXES);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        double d = f[i].rows[r][0] * f[i].rows[c][0] + f[i].rows[r][1] * f[i].rows[c][1] +
                   f[i].rows[r][2] * f[i].rows[c][2];
        assert_true(fabs(d - (r == c ? 1.0 : 0.0)) < 1e-12);
      }
  jl_mesh_free(&m);
}

/* jl_reach_open's voxels on 1 and 2 threads, every frame of a mesh with a slot and a slope. */
static void test_threads_agree(void **state) {
  (void)state;
  static const double poly[] = {0, 0, 700, 0, 700, 40, 560, 40, 400, 420, 0, 420};
  jl_mesh m;
  prism_mesh(&m, poly, 6, 450.0);
  jl_error err = {0};
  jl_voxel_map map;
  int cut = 0;
  assert_int_equal(jl_voxel_map_build(&map, &m, 5.0, 1e8, JL_VOXEL_OUTER, 2, 0.0, NULL, &cut, &err), JL_OK);
  assert_false(cut);
  jl_reach_frame f[JL_REACH_MAX_FRAMES];
  int n = 0, faces = 0;
  assert_int_equal(jl_reach_frames(&m, 1, 1, 0.0, NULL, f, JL_REACH_MAX_FRAMES, &n, &faces, &err), JL_OK);
  size_t nw = jl_reach_world_words(&map);
  uint64_t *a = malloc(nw * sizeof *a), *b = malloc(nw * sizeof *b);
  assert_non_null(a);
  assert_non_null(b);
  jl_block_size din = {200, 100, 50};
  int da = 0, db = 0;
  assert_int_equal(jl_reach_open(&map, f, n, din, 0, 1, 0.0, NULL, a, &da, &err), JL_OK);
  assert_int_equal(jl_reach_open(&map, f, n, din, 0, 2, 0.0, NULL, b, &db, &err), JL_OK);
  assert_int_equal(da, n);
  assert_int_equal(db, n);
  assert_memory_equal(a, b, nw * sizeof *a);
  /* every reached voxel is a voxel of the interior */
  uint64_t *fb = malloc(nw * sizeof *fb);
  assert_non_null(fb);
  jl_reach_pack(&map, fb);
  for (size_t q = 0; q < nw; ++q) assert_true((a[q] & ~fb[q]) == 0);
  free(fb);
  free(a);
  free(b);
  jl_voxel_map_free(&map);
  jl_mesh_free(&m);
}

static void test_stop_and_deadline(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  double lo[3] = {0, 0, 0}, hi[3] = {1000, 500, 400};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  jl_reach_config c;
  jl_reach_config_default(&c);
  c.voxel = 5.0;
  volatile sig_atomic_t stop = 1;
  c.stop = &stop;
  jl_reach_info info;
  assert_int_equal(jl_trunk_reach(&m, &c, &info, &err), JL_OK);
  assert_false(info.measured);
  assert_int_equal(info.frames_done, 0);
  c.stop = NULL;
  c.deadline = jl_time_now() - 1.0;
  assert_int_equal(jl_trunk_reach(&m, &c, &info, &err), JL_OK);
  assert_false(info.measured);
  assert_true(info.volume_mm3 == 0.0);
  jl_cuboid_mesh_free(&m);
}

static void test_sedan_between_count_and_volume(void **state) {
  (void)state;
  jl_mesh m;
  mesh_fixture_load(&m, "sedan.stl");
  jl_reach_info info = reach_of(&m, 0.0, 1, 1, 2);
  assert_true(info.measured && info.complete);
  assert_true(info.volume_mm3 >= 385.0 * L_MM3);  /* the best legal packing's count */
  assert_true(info.volume_mm3 <= jl_mesh_volume(&m));
  assert_true(info.bound >= 385 && info.bound <= 439);
  jl_mesh_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_exact),
      cmocka_unit_test(test_l_shape_exact),
      cmocka_unit_test(test_slot_excluded),
      cmocka_unit_test(test_strip_needs_turned_blocks),
      cmocka_unit_test(test_wedge_turned_reach_further),
      cmocka_unit_test(test_frames_orthonormal),
      cmocka_unit_test(test_threads_agree),
      cmocka_unit_test(test_stop_and_deadline),
      cmocka_unit_test(test_sedan_between_count_and_volume),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
