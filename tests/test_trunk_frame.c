/* The floor's frame (trunk_frame.c): an axis-aligned mesh (a cuboid and
 * every repository mesh: curved arches, a floor step, a large sloped seat
 * back) gives the identity exactly; the 1000 x 500 x 400 mm cuboid turned
 * 7 degrees about y, and turned 7 degrees about an oblique horizontal axis
 * and then 10 degrees about z, gives the rotation back (angles to 1e-9
 * rad) and packs to 200 blocks in the floor's frame, turned back and
 * exactly checked against the turned mesh; the repository meshes turned by
 * 7 degrees about x and about y give their turn back. The repository
 * meshes come from JL_MESH_DIR. */
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
#include "trunk_frame.h"

static const jl_block_size din = {200, 100, 50};
#define ANGLE_TOL 1e-9

static double rad(double deg) { return deg * JL_PI / 180.0; }

static void make_box(jl_mesh *m, double x, double y, double z) {
  static const int tri[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                 {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};
  double v[8][3];
  for (int i = 0; i < 8; ++i) {
    v[i][0] = (i == 1 || i == 2 || i == 5 || i == 6) ? x : 0.0;
    v[i][1] = (i % 4 >= 2) ? y : 0.0;
    v[i][2] = i >= 4 ? z : 0.0;
  }
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, &v[0][0], 8, &tri[0][0], 12, &err), JL_OK);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate(m, "box", &rep, &err), JL_OK);
}

/* M (the mesh's attitude: columns the trunk's axes in the mesh) of a turn
 * by deg about a unit axis, after the turn M0 (NULL: none). */
static void turn_of(const double axis[3], double deg, const double (*M0)[3], double M[3][3]) {
  jl_quat q = jl_quat_axis_angle(jl_v3(axis[0], axis[1], axis[2]), rad(deg));
  jl_vec3 col[3];
  jl_quat_to_axes(q, col);
  double T[3][3] = {{col[0].x, col[1].x, col[2].x}, {col[0].y, col[1].y, col[2].y}, {col[0].z, col[1].z, col[2].z}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0.0;
      for (int k = 0; k < 3; ++k) s += T[i][k] * (M0 ? M0[k][j] : (k == j ? 1.0 : 0.0));
      M[i][j] = s;
    }
}

/* Every vertex p of m becomes M (p - c) + c + shift, c the box centre. */
static void turn_mesh(jl_mesh *m, const double M[3][3], const double shift[3]) {
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  for (int v = 0; v < m->n_vertices; ++v) {
    double *x = m->vertices + 3 * v, d[3];
    for (int k = 0; k < 3; ++k) d[k] = x[k] - 0.5 * (lo[k] + hi[k]);
    for (int r = 0; r < 3; ++r) x[r] = 0.5 * (lo[r] + hi[r]) + shift[r] + M[r][0] * d[0] + M[r][1] * d[1] + M[r][2] * d[2];
  }
}

/* The frame found in m is M^T, and its angles are those of M = Rz(yaw) Ry(pitch) Rx(roll). */
static void expect_frame(const jl_trunk_frame *f, const double M[3][3], const char *what) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (fabs(f->R[i][j] - M[j][i]) > ANGLE_TOL)
        fail_msg("%s: R[%d][%d] = %.17g, expected %.17g", what, i, j, f->R[i][j], M[j][i]);
  double pitch = asin(-M[2][0]), roll = atan2(M[2][1], M[2][2]), yaw = atan2(M[1][0], M[0][0]);
  if (fabs(f->pitch - pitch) > ANGLE_TOL || fabs(f->roll - roll) > ANGLE_TOL || fabs(f->yaw - yaw) > ANGLE_TOL)
    fail_msg("%s: yaw %.12g pitch %.12g roll %.12g deg, expected %.12g %.12g %.12g", what, f->yaw * 180 / JL_PI,
             f->pitch * 180 / JL_PI, f->roll * 180 / JL_PI, yaw * 180 / JL_PI, pitch * 180 / JL_PI,
             roll * 180 / JL_PI);
  double tr = M[0][0] + M[1][1] + M[2][2];
  assert_true(fabs(f->angle - acos(0.5 * (tr - 1.0))) < 1e-7);
  assert_true(f->turned);
}

static void test_identity_when_aligned(void **state) {
  (void)state;
  jl_mesh m = {0};
  jl_error err = {0};
  jl_trunk_frame f;
  make_box(&m, 1000, 500, 400);
  assert_int_equal(jl_trunk_frame_detect(&m, &din, &f, &err), JL_OK);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) assert_true(f.R[i][j] == (i == j ? 1.0 : 0.0));
  assert_true(f.angle == 0.0 && f.shift == 0.0 && !f.turned);
  assert_true(f.floor_area == 500000.0);    /* the bottom */
  assert_true(f.wall_area == 2 * 400000.0 + 2 * 200000.0);  /* all four sides */
  jl_mesh_free(&m);
  static const char *const files[] = {"cuboid-1000x500x400.stl", "slanted-seat-back.stl", "sedan.stl",
                                      "hatchback.obj"};
  for (int i = 0; i < 4; ++i) {
    mesh_fixture_load(&m, files[i]);
    assert_int_equal(jl_trunk_frame_detect(&m, &din, &f, &err), JL_OK);
    if (f.turned || f.angle != 0.0)
      fail_msg("%s: turned by %.3g rad (shift %.3g mm)", files[i], f.angle, f.shift);
    assert_true(f.floor_area > 0.0 && f.wall_area > 0.0);
    jl_mesh_free(&m);
  }
}

/* The turned cuboid: its frame found, the layered fill there holds 200,
 * which turned back pass the exact check against the turned mesh. */
static void pack_turned_cuboid(const double M[3][3], const char *what) {
  jl_mesh m = {0}, t = {0};
  jl_error err = {0};
  make_box(&m, 1000, 500, 400);
  double shift[3] = {120.0, -35.0, 48.0};
  turn_mesh(&m, M, shift);
  jl_trunk_frame f;
  assert_int_equal(jl_trunk_frame_detect(&m, &din, &f, &err), JL_OK);
  expect_frame(&f, M, what);
  assert_true(fabs(f.floor_area - 500000.0) < 1e-6);
  /* in the mesh's own frame no block touches the floor's low end flush: fewer */
  jl_trunk_geom g, tg;
  jl_block_packing own = {0}, inframe = {0}, back = {0};
  jl_baseline_info bi;
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  assert_int_equal(jl_block_packing_init(&own, 256, &err), JL_OK);
  assert_int_equal(jl_trunk_baseline(&g, 2, 0, &own, &bi, &err), JL_OK);
  assert_true(own.count < 200);
  assert_int_equal(jl_trunk_frame_turn_mesh(&m, &f, &t, &err), JL_OK);
  assert_int_equal(jl_trunk_geom_init(&tg, &t, din, &err), JL_OK);
  assert_int_equal(jl_block_packing_init(&inframe, 256, &err), JL_OK);
  assert_int_equal(jl_trunk_baseline(&tg, 2, 0, &inframe, &bi, &err), JL_OK);
  assert_int_equal(inframe.count, 200);
  assert_int_equal(jl_block_packing_init(&back, 256, &err), JL_OK);
  assert_int_equal(jl_trunk_frame_packing_back(&f, &inframe, &back, &err), JL_OK);
  assert_int_equal(back.count, 200);
  jl_trunk_report rep;
  assert_int_equal(jl_trunk_check_packing(&g, &back, &rep, &err), JL_OK);
  if (!rep.legal) {
    char why[256];
    jl_trunk_report_describe(&rep, why, sizeof why);
    fail_msg("%s: the packing turned back is not legal: %s", what, why);
  }
  /* each block's axes are the trunk frame's axes turned by M */
  for (int i = 0; i < back.count; ++i) {
    const double *q = back.quat + 4 * i;
    jl_vec3 ax[3];
    jl_quat_to_axes((jl_quat){q[0], q[1], q[2], q[3]}, ax);
    for (int k = 0; k < 3; ++k) {
      double v[3] = {ax[k].x, ax[k].y, ax[k].z}, best = 0.0;
      for (int c = 0; c < 3; ++c) best = fmax(best, fabs(M[0][c] * v[0] + M[1][c] * v[1] + M[2][c] * v[2]));
      assert_true(fabs(best - 1.0) < 1e-12);
    }
  }
  jl_trunk_geom_free(&g);
  jl_trunk_geom_free(&tg);
  jl_block_packing_free(&own);
  jl_block_packing_free(&inframe);
  jl_block_packing_free(&back);
  jl_mesh_free(&t);
  jl_mesh_free(&m);
}

static void test_cuboid_pitched_about_y(void **state) {
  (void)state;
  double M[3][3], y[3] = {0, 1, 0};
  turn_of(y, 7.0, NULL, M);
  pack_turned_cuboid(M, "cuboid, 7 deg about y");
}

static void test_cuboid_oblique_and_yaw(void **state) {
  (void)state;
  double M0[3][3], M[3][3], a[3] = {cos(rad(35.0)), sin(rad(35.0)), 0.0}, z[3] = {0, 0, 1};
  turn_of(a, 7.0, NULL, M0);
  turn_of(z, 10.0, M0, M);
  pack_turned_cuboid(M, "cuboid, 7 deg about (cos 35, sin 35, 0), then 10 about z");
}

/* The repository meshes (a large sloped seat back, curved arches, a floor
 * step) turned by 7 degrees about x and about y: the turn is found. */
static void test_repository_meshes_turned(void **state) {
  (void)state;
  static const char *const files[] = {"slanted-seat-back.stl", "sedan.stl", "hatchback.obj"};
  double axes[2][3] = {{1, 0, 0}, {0, 1, 0}}, none[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i)
    for (int a = 0; a < 2; ++a) {
      jl_mesh m = {0};
      mesh_fixture_load(&m, files[i]);
      double M[3][3];
      turn_of(axes[a], 7.0, NULL, M);
      turn_mesh(&m, M, none);
      jl_trunk_frame f;
      jl_error err = {0};
      assert_int_equal(jl_trunk_frame_detect(&m, &din, &f, &err), JL_OK);
      char what[128];
      snprintf(what, sizeof what, "%s, 7 deg about %c", files[i], "xy"[a]);
      expect_frame(&f, M, what);
      jl_mesh_free(&m);
    }
}

/* The CAD-style meshes as stored (32-bit float vertices in vehicle
 * coordinates, fillets beside the floor): suv-pitched is pitched by exactly
 * 5 degrees, the others not at all. The floor's normal must come out to
 * about 1e-6 degrees: a tilt of 1e-4 degrees lifts the far end of a 1 m
 * floor by 0.002 mm, past the 1.7e-4 mm tolerance, and costs the fills a
 * layer of blocks there (443 against 471 for the same trunk upright). */
static void test_cad_meshes_exact(void **state) {
  (void)state;
  static const char *const files[] = {"suv-pitched.stl", "estate.stl", "compact-m.ply"};
  static const double scale[] = {1.0, 1.0, 1000.0};
  static const double pitch[] = {5.0, 0.0, 0.0};
  for (int i = 0; i < 3; ++i) {
    jl_mesh m = {0};
    mesh_fixture_load_scaled(&m, files[i], scale[i]);
    jl_trunk_frame f;
    jl_error err = {0};
    assert_int_equal(jl_trunk_frame_detect(&m, &din, &f, &err), JL_OK);
    double deg = 180.0 / 3.14159265358979323846;
    if (fabs(f.pitch * deg - pitch[i]) > 1e-5 || fabs(f.roll * deg) > 1e-5 || fabs(f.yaw * deg) > 1e-5)
      fail_msg("%s: yaw %.3g, pitch %.9g, roll %.3g deg; expected pitch %g exactly", files[i], f.yaw * deg,
               f.pitch * deg, f.roll * deg, pitch[i]);
    jl_mesh_free(&m);
  }
}

/* The angles' rotation is the one detect reports. */
static void test_from_angles(void **state) {
  (void)state;
  double M0[3][3], M[3][3], a[3] = {cos(rad(-20.0)), sin(rad(-20.0)), 0.0}, z[3] = {0, 0, 1};
  turn_of(a, 5.0, NULL, M0);
  turn_of(z, -8.0, M0, M);
  double pitch = asin(-M[2][0]), roll = atan2(M[2][1], M[2][2]), yaw = atan2(M[1][0], M[0][0]), R[3][3];
  jl_trunk_frame_from_angles(yaw, pitch, roll, R);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) assert_true(fabs(R[i][j] - M[j][i]) < 1e-15);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identity_when_aligned),
      cmocka_unit_test(test_cuboid_pitched_about_y),
      cmocka_unit_test(test_cuboid_oblique_and_yaw),
      cmocka_unit_test(test_repository_meshes_turned),
      cmocka_unit_test(test_from_angles),
      cmocka_unit_test(test_cad_meshes_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
