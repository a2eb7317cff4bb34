/* The tilted fill (trunk_tilt.c): the sloped face of the slanted seat back
 * found with its exact normal, offset and area; cuts of the slanted seat
 * back with the exact volumes (band 514.78 t mm^2 x 1000 mm) and cuts of
 * the sedan whose two parts add up to the whole; a thin tilted slab that
 * holds exactly 25 blocks flat in it and none axis-aligned, found only by
 * the tilted fill; a legal packing with tilted blocks in the slanted seat
 * back at least as large as the grid baseline; the same packing on 1 and 2
 * threads; with a deadline at half its time, a legal split at the deadline.
 * The repository meshes come from JL_MESH_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "mesh_fixture.h"

#include "math3d.h"
#include "mesh.h"
#include "trunk_baseline.h"
#include "trunk_check.h"
#include "timer.h"
#include "trunk_tilt.h"

static const jl_block_size din = {200, 100, 50};

/* The slanted seat back's face: from (900, 0) to (650, 450) in (x, z), 1000 mm along y. */
static const double slope_len = 514.78150704935;  /* hypot(250, 450) */

static void test_planes_slanted_and_cuboid(void **state) {
  (void)state;
  jl_mesh m = {0};
  mesh_fixture_load(&m, "slanted-seat-back.stl");
  jl_tilt_plane pl[JL_TILT_MAX_PLANES];
  int n = -1;
  jl_error err = {0};
  assert_int_equal(jl_trunk_tilt_planes(&m, JL_TILT_MIN_AREA_FRAC, pl, JL_TILT_MAX_PLANES, &n, &err), JL_OK);
  assert_int_equal(n, 1);
  assert_true(fabs(pl[0].n[0] - 450.0 / slope_len) < 1e-9);
  assert_true(fabs(pl[0].n[1]) < 1e-12);
  assert_true(fabs(pl[0].n[2] - 250.0 / slope_len) < 1e-9);
  assert_true(fabs(pl[0].d - 900.0 * 450.0 / slope_len) < 1e-6);
  assert_true(fabs(pl[0].area - 1000.0 * slope_len) < 1e-6);
  assert_int_equal(pl[0].triangles, 2);
  jl_mesh_free(&m);
  mesh_fixture_load(&m, "cuboid-1000x500x400.stl");
  assert_int_equal(jl_trunk_tilt_planes(&m, JL_TILT_MIN_AREA_FRAC, pl, JL_TILT_MAX_PLANES, &n, &err), JL_OK);
  assert_int_equal(n, 0);
  jl_mesh_free(&m);
}

/* Both sides of the cut at depth t behind the face: closed, validated, and
 * the band is a prism of cross-section slope_len * t. */
static void test_clip_volumes(void **state) {
  (void)state;
  jl_mesh m = {0};
  mesh_fixture_load(&m, "slanted-seat-back.stl");
  double n[3] = {450.0 / slope_len, 0.0, 250.0 / slope_len}, d = 900.0 * 450.0 / slope_len;
  jl_error err = {0};
  for (int t = 50; t <= 250; t += 100) {
    jl_mesh band = {0}, rest = {0};
    assert_int_equal(jl_trunk_tilt_clip(&m, n, d - t, 1, &band, &err), JL_OK);
    assert_int_equal(jl_trunk_tilt_clip(&m, n, d - t, 0, &rest, &err), JL_OK);
    assert_true(fabs(jl_mesh_volume(&band) - 1000.0 * slope_len * t) < 1e-3);
    assert_true(fabs(jl_mesh_volume(&rest) - (348750.0 - slope_len * t) * 1000.0) < 1e-3);
    jl_mesh_free(&band);
    jl_mesh_free(&rest);
  }
  /* beyond the mesh: all on one side */
  jl_mesh all = {0}, none = {0};
  assert_int_equal(jl_trunk_tilt_clip(&m, n, d + 10.0, 0, &all, &err), JL_OK);
  assert_int_equal(jl_trunk_tilt_clip(&m, n, d + 10.0, 1, &none, &err), JL_OK);
  assert_int_equal(all.n_triangles, 12);
  assert_int_equal(none.n_triangles, 0);
  jl_mesh_free(&all);
  jl_mesh_free(&m);
  /* the sedan: rounded edges and arches, a non-convex section */
  mesh_fixture_load(&m, "sedan.stl");
  double whole = jl_mesh_volume(&m);
  jl_tilt_plane pl[JL_TILT_MAX_PLANES];
  int np = 0;
  assert_int_equal(jl_trunk_tilt_planes(&m, JL_TILT_MIN_AREA_FRAC, pl, JL_TILT_MAX_PLANES, &np, &err), JL_OK);
  assert_true(np >= 1);
  for (int t = 50; t <= 450; t += 200) {
    jl_mesh band = {0}, rest = {0};
    int rb = jl_trunk_tilt_clip(&m, pl[0].n, pl[0].d - t, 1, &band, &err);
    int rr = jl_trunk_tilt_clip(&m, pl[0].n, pl[0].d - t, 0, &rest, &err);
    if (rb != JL_OK || rr != JL_OK) fail_msg("sedan cut at %d mm: %s", t, err.msg);
    assert_true(band.n_triangles > 0 && rest.n_triangles > 0);
    assert_true(fabs(jl_mesh_volume(&band) + jl_mesh_volume(&rest) - whole) < 1e-9 * whole);
    jl_mesh_free(&band);
    jl_mesh_free(&rest);
  }
  jl_mesh_free(&m);
}

/* A box of 1000 x 500 x 55 mm turned 30 degrees about y, then 20 about z:
 * 25 blocks lie flat in it (50 mm across the slab, 5 x 5 in its plane),
 * and no axis-aligned block fits (a 50 mm tall block reaching 50 mm along
 * the slope needs 50 + 50 tan 30 = 79 mm of its 64 mm vertical thickness).
 * Its two large faces are the only ones above 5% of the surface. */
static void make_tilted_slab(jl_mesh *m) {
  static const int tri[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                 {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};
  double a = 30.0 * JL_PI / 180.0, b = 20.0 * JL_PI / 180.0, v[8][3];
  for (int i = 0; i < 8; ++i) {
    double p[3] = {(i == 1 || i == 2 || i == 5 || i == 6) ? 1000.0 : 0.0, (i % 4 >= 2) ? 500.0 : 0.0,
                   i >= 4 ? 55.0 : 0.0};
    double q[3] = {cos(a) * p[0] + sin(a) * p[2], p[1], -sin(a) * p[0] + cos(a) * p[2]};
    v[i][0] = cos(b) * q[0] - sin(b) * q[1] + 100.0;
    v[i][1] = sin(b) * q[0] + cos(b) * q[1] + 200.0;
    v[i][2] = q[2] + 600.0;
  }
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, &v[0][0], 8, &tri[0][0], 12, &err), JL_OK);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate(m, "slab", &rep, &err), JL_OK);
  assert_true(fabs(rep.volume - 1000.0 * 500.0 * 55.0) < 1e-3);
}

static int tilt_of(const jl_trunk_geom *g, int rem_axes, int threads, jl_block_packing *p, jl_tilt_info *info) {
  jl_error err = {0};
  assert_int_equal(jl_block_packing_init(p, 64, &err), JL_OK);
  if (jl_trunk_tilt_fill(g, rem_axes, 0, threads, 0.0, NULL, p, info, &err) != JL_OK) fail_msg("%s", err.msg);
  assert_int_equal(info->count, p->count);
  assert_true(info->complete);
  jl_trunk_report rep;
  assert_int_equal(jl_trunk_check_packing(g, p, &rep, &err), JL_OK);
  assert_true(rep.legal);
  return p->count;
}

/* Blocks whose edges are not all along the world axes. */
static int count_tilted(const jl_block_packing *p) {
  int n = 0;
  for (int i = 0; i < p->count; ++i) {
    jl_obb o;
    double c[3] = {0, 0, 0};
    jl_obb_from_block(&din, c, p->quat + 4 * i, &o);
    int aligned = 1;
    for (int k = 0; k < 3; ++k)
      aligned &= fmax(fabs(o.ax[k][0]), fmax(fabs(o.ax[k][1]), fabs(o.ax[k][2]))) > 1.0 - 1e-9;
    n += !aligned;
  }
  return n;
}

static void test_thin_tilted_slab_25(void **state) {
  (void)state;
  jl_mesh m = {0};
  make_tilted_slab(&m);
  jl_error err = {0};
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  jl_block_packing grid = {0}, lay = {0}, p = {0};
  jl_grid_info gi;
  jl_baseline_info bi;
  assert_int_equal(jl_block_packing_init(&grid, 16, &err), JL_OK);
  assert_int_equal(jl_block_packing_init(&lay, 16, &err), JL_OK);
  assert_int_equal(jl_trunk_grid_fill(&g, 2, 0, 0.0, NULL, &grid, &gi, &err), JL_OK);
  assert_int_equal(jl_trunk_baseline(&g, 2, 0, &lay, &bi, &err), JL_OK);
  assert_int_equal(grid.count, 0);
  assert_int_equal(lay.count, 0);
  jl_tilt_info info;
  assert_int_equal(tilt_of(&g, 3, 2, &p, &info), 25);
  printf("tilted slab: %d blocks, %d faces, %d splits in %.2f s\n", info.count, info.planes, info.splits, info.time_s);
  assert_int_equal(info.tilted, 25);
  assert_int_equal(count_tilted(&p), 25);
  assert_int_equal(info.planes, 2);
  jl_block_packing_free(&grid);
  jl_block_packing_free(&lay);
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* The slanted seat back: a legal packing with blocks flat against the seat
 * back, not below the grid baseline, and the same on 1 and 2 threads. */
static void test_slanted_legal_threads(void **state) {
  (void)state;
  jl_mesh m = {0};
  mesh_fixture_load(&m, "slanted-seat-back.stl");
  jl_error err = {0};
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  jl_block_packing grid = {0}, p1 = {0}, p2 = {0};
  jl_grid_info gi;
  assert_int_equal(jl_block_packing_init(&grid, 256, &err), JL_OK);
  assert_int_equal(jl_trunk_grid_fill(&g, 2, 0, 0.0, NULL, &grid, &gi, &err), JL_OK);
  jl_tilt_info i1, i2;
  int c2 = tilt_of(&g, 0, 2, &p2, &i2);
  int c1 = tilt_of(&g, 0, 1, &p1, &i1);
  printf("slanted-seat-back: grid %d, tilted fill %d (%d tilted, band %g mm, %d splits) in %.2f s (2 threads), %.2f s (1)\n",
         grid.count, c2, i2.tilted, i2.thickness, i2.splits, i2.time_s, i1.time_s);
  assert_true(c2 >= grid.count);
  assert_true(c2 <= 348);
  assert_true(i2.tilted > 0);
  assert_int_equal(count_tilted(&p2), i2.tilted);
  assert_int_equal(c1, c2);
  assert_memory_equal(p1.centre, p2.centre, (size_t)c1 * 3 * sizeof(double));
  assert_memory_equal(p1.quat, p2.quat, (size_t)c1 * 4 * sizeof(double));
  /* with a deadline at a quarter of its time the fill stops there (plus the
   * finishing allowance of a fill cut short and of the split's exact
   * check), keeping a legal split of at most the complete fill's count;
   * should the machine run it faster now than when it was timed, it ends
   * complete with the same count */
  double t0 = jl_time_now(), deadline = t0 + 0.25 * i2.time_s;
  jl_tilt_info ic;
  p1.count = 0;
  assert_int_equal(jl_trunk_tilt_fill(&g, 0, 0, 2, deadline, NULL, &p1, &ic, &err), JL_OK);
  double over = jl_time_now() - deadline;
  printf("slanted-seat-back: tilted fill with a deadline of %.2f s: %d blocks, %d splits, %.2f s past it\n",
         deadline - t0, ic.count, ic.splits, over);
  assert_true(over < 4 * JL_TRUNK_FINISH_S);
  if (ic.complete) assert_int_equal(ic.count, c2);
  assert_int_equal(ic.count, p1.count);
  assert_true(ic.count <= c2 && ic.splits <= i2.splits);
  jl_trunk_report rep;
  assert_int_equal(jl_trunk_check_packing(&g, &p1, &rep, &err), JL_OK);
  assert_true(rep.legal);
  jl_block_packing_free(&grid);
  jl_block_packing_free(&p1);
  jl_block_packing_free(&p2);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_planes_slanted_and_cuboid),
      cmocka_unit_test(test_clip_volumes),
      cmocka_unit_test(test_thin_tilted_slab_25),
      cmocka_unit_test(test_slanted_legal_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
