/* Unit tests for the mesh repairs of the validation (src/trunk/mesh_repair.c,
 * jl_mesh_validate_repair): what rounding leaves in a CAD export is repaired
 * within the tolerance and reported; a defect deeper than it is refused,
 * naming where. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "box_mesh.h"
#include "mesh.h"
#include "mesh_repair.h"

/* The box 1000 x 500 x 400 mm: diagonal 1187.4 mm, repair tolerance 11.9 um. */
#define BX 1000.0
#define BY 500.0
#define BZ 400.0

static double box_tol(void) { return JL_MESH_REPAIR_TOL * sqrt(BX * BX + BY * BY + BZ * BZ); }

/* Its top face (z = BZ, triangles 2 and 3: 4-5-7 and 4-7-6) with a vertex C
 * (index 8) on the diagonal 4-7 moved by off mm across it towards corner 6
 * (off > 0: the sliver 4-C-7 is turned over onto 4-7-6). Triangle 2 becomes
 * 4-5-C and C-5-7; the sliver 4-C-7 is triangle 12 and 13 is C-5-7. */
static void box_with_sliver(jl_mesh *m, double off) {
  double v[27];
  int t[42];
  box_arrays(0, 0, 0, BX, BY, BZ, 0, v, t);
  double d = sqrt(BX * BX + BY * BY), ux = -BY / d, uy = BX / d;  /* in-plane normal of 4-7, towards 6 */
  v[24] = 0.5 * BX + off * ux;
  v[25] = 0.5 * BY + off * uy;
  v[26] = BZ;
  int a[3] = {4, 5, 8}, s[3] = {4, 8, 7}, b[3] = {8, 5, 7};
  memcpy(t + 6, a, sizeof a);
  memcpy(t + 36, s, sizeof s);
  memcpy(t + 39, b, sizeof b);
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 9, t, 14, &err), JL_OK);
}

/* Every triangle with all corners at z = BZ faces up. */
static void assert_top_faces_up(const jl_mesh *m) {
  int top = 0;
  for (int f = 0; f < m->n_triangles; ++f) {
    const int *tr = m->triangles + 3 * f;
    const double *p = m->vertices + 3 * tr[0], *q = m->vertices + 3 * tr[1], *r = m->vertices + 3 * tr[2];
    if (p[2] != BZ || q[2] != BZ || r[2] != BZ) continue;
    double nz = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
    assert_true(nz > 0);
    ++top;
  }
  assert_int_equal(top, 4);
}

/* A sliver 2 um high (0.56 mm^2) turned over onto its neighbour, as 6-digit
 * coordinates leave one: refused without repairs, removed by a flip with. */
static void test_folded_sliver_removed(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  box_with_sliver(&m, 0.002);
  assert_int_equal(jl_mesh_validate(&m, "fold.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "self-intersecting"));
  jl_mesh_free(&m);

  box_with_sliver(&m, 0.002);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate_repair(&m, "fold.stl", JL_MESH_REPAIR_TOL, &rep, &err), JL_OK);
  assert_int_equal(rep.slivers_removed, 1);
  assert_int_equal(rep.welded_vertices, 0);
  assert_int_equal(rep.overlaps_accepted, 0);
  assert_int_equal(rep.triangles, 14);
  assert_true(fabs(rep.repair_tol - box_tol()) < 1e-12);
  for (int t = 0; t < m.n_triangles; ++t) assert_true(jl_mesh_triangle_height(&m, t, NULL) > rep.repair_tol);
  assert_top_faces_up(&m);
  assert_true(fabs(rep.volume - BX * BY * BZ) < 1e-3);
  jl_mesh_free(&m);
}

/* A vertex exactly on its neighbour's edge (a zero-area triangle that holds
 * the surface closed): dropped, it would open the surface; with repairs it
 * is kept and flipped away. */
static void test_zero_area_on_edge_flipped(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  box_with_sliver(&m, 0.0);
  assert_int_equal(jl_mesh_validate(&m, "flat.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "open surface"));
  jl_mesh_free(&m);

  box_with_sliver(&m, 0.0);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate_repair(&m, "flat.stl", JL_MESH_REPAIR_TOL, &rep, &err), JL_OK);
  assert_int_equal(rep.degenerate_dropped, 0);
  assert_int_equal(rep.slivers_removed, 1);
  assert_top_faces_up(&m);
  assert_true(rep.volume == BX * BY * BZ);  /* every corner exact, the top face flat */
  jl_mesh_free(&m);
}

/* Corner 7 written twice, 1.3 um apart, the face y = BY using the copy:
 * open without repairs, welded with. */
static void test_near_vertices_welded(void **state) {
  (void)state;
  double v[27];
  int t[36];
  box_arrays(0, 0, 0, BX, BY, BZ, 0, v, t);
  v[24] = BX + 0.001;
  v[25] = BY - 0.0005;
  v[26] = BZ + 0.0007;
  for (int i = 3 * 6; i < 3 * 8; ++i)
    if (t[i] == 7) t[i] = 8;
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(&m, v, 9, t, 12, &err), JL_OK);
  assert_int_equal(jl_mesh_validate(&m, "weld.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "open surface"));
  jl_mesh_free(&m);

  assert_int_equal(jl_mesh_from_arrays(&m, v, 9, t, 12, &err), JL_OK);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate_repair(&m, "weld.stl", JL_MESH_REPAIR_TOL, &rep, &err), JL_OK);
  assert_int_equal(rep.welded_vertices, 1);
  assert_int_equal(rep.slivers_removed, 0);
  assert_int_equal(m.n_vertices, 8);
  assert_true(rep.volume == BX * BY * BZ);  /* the copy went onto the first, exact corner */
  jl_mesh_free(&m);

  /* 2 x the tolerance apart, the copy stays a vertex of its own: open. */
  v[24] = BX + 2 * box_tol();
  v[25] = BY;
  v[26] = BZ;
  assert_int_equal(jl_mesh_from_arrays(&m, v, 9, t, 12, &err), JL_OK);
  assert_int_equal(jl_mesh_validate_repair(&m, "apart.stl", JL_MESH_REPAIR_TOL, &rep, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "apart.stl: open surface"));
  jl_mesh_free(&m);
}

/* Triangle 0 written twice more, once each way: edges of four triangles
 * without repairs; the pair is removed with. */
static void test_doubled_pair_removed(void **state) {
  (void)state;
  double v[24];
  int t[42];
  box_arrays(0, 0, 0, BX, BY, BZ, 0, v, t);
  int extra[6] = {0, 2, 3, 0, 3, 2};
  memcpy(t + 36, extra, sizeof extra);
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(&m, v, 8, t, 14, &err), JL_OK);
  assert_int_equal(jl_mesh_validate(&m, "double.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "not a 2-manifold"));
  jl_mesh_free(&m);
  assert_int_equal(jl_mesh_from_arrays(&m, v, 8, t, 14, &err), JL_OK);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate_repair(&m, "double.stl", JL_MESH_REPAIR_TOL, &rep, &err), JL_OK);
  assert_int_equal(rep.doubled_removed, 2);
  assert_int_equal(rep.triangles, 12);
  assert_true(rep.volume == BX * BY * BZ);
  jl_mesh_free(&m);
}

/* The box and a second one [-500, depth] x [100, 400] x [100, 300] poking
 * depth mm into it through its face x = 0. */
static void crossing_boxes(jl_mesh *m, double depth) {
  double v[48];
  int t[72];
  box_arrays(0, 0, 0, BX, BY, BZ, 0, v, t);
  box_arrays(-500, 100, 100, depth, 400, 300, 8, v + 24, t + 36);
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 16, t, 24, &err), JL_OK);
}

/* The bounding box diagonal of crossing_boxes. */
static double crossing_tol(void) {
  return JL_MESH_REPAIR_TOL * sqrt((BX + 500) * (BX + 500) + BY * BY + BZ * BZ);
}

/* Two boxes crossing by 1 mm: refused with repairs, the message naming two
 * triangles of the file (one of the face x = 0, one of the other box), a
 * point on the face inside the crossing, and the depth. */
static void test_real_crossing_refused(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  crossing_boxes(&m, 1.0);
  assert_int_equal(jl_mesh_validate_repair(&m, "cross.stl", JL_MESH_REPAIR_TOL, NULL, &err), JL_ERR_INPUT);
  int a = -1, b = -1;
  double x, y, z, depth;
  const char *s = strstr(err.msg, "cross.stl: self-intersecting surface: triangles ");
  assert_non_null(s);
  assert_int_equal(sscanf(s, "cross.stl: self-intersecting surface: triangles %d and %d (from 0, in input order) "
                             "cross at (%lf, %lf, %lf), %lf mm deep", &a, &b, &x, &y, &z, &depth), 6);
  assert_true((a == 8 || a == 9) && b >= 12 && b < 24);
  assert_true(fabs(x) < 1e-9 && y >= 100 && y <= 400 && z >= 100 && z <= 300);
  assert_true(fabs(depth - 1.0) < 1e-9);
  assert_non_null(strstr(err.msg, "more than the repair tolerance"));
  jl_mesh_free(&m);
}

/* Crossing by 1.5 x the tolerance is refused; by 0.5 x it is accepted and
 * counted, as deep as it is. */
static void test_crossing_around_tolerance(void **state) {
  (void)state;
  double tol = crossing_tol();
  jl_mesh m;
  jl_error err = {0};
  crossing_boxes(&m, 1.5 * tol);
  assert_int_equal(jl_mesh_validate_repair(&m, "over.stl", JL_MESH_REPAIR_TOL, NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "over.stl: self-intersecting surface"));
  assert_non_null(strstr(err.msg, "more than the repair tolerance"));
  jl_mesh_free(&m);

  crossing_boxes(&m, 0.5 * tol);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate_repair(&m, "under.stl", JL_MESH_REPAIR_TOL, &rep, &err), JL_OK);
  assert_int_equal(rep.components, 2);
  assert_int_equal(rep.cavities, 0);
  assert_true(rep.overlaps_accepted >= 1);
  assert_true(fabs(rep.max_overlap - 0.5 * tol) < 1e-9);
  jl_mesh_free(&m);
  /* Without repairs the shallow crossing is refused as before. */
  crossing_boxes(&m, 0.5 * tol);
  assert_int_equal(jl_mesh_validate(&m, "under.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "self-intersecting"));
  jl_mesh_free(&m);
}

/* A tetrahedron with its fourth corner pressed into the opposite face: folds
 * 21 mm wide, far above the tolerance, refused with repairs too. */
static void test_flat_fold_refused(void **state) {
  (void)state;
  double tv[12] = {0, 0, 0, 100, 0, 0, 0, 100, 0, 30, 30, 0};
  int tt[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3};
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(&m, tv, 4, tt, 4, &err), JL_OK);
  assert_int_equal(jl_mesh_validate_repair(&m, "flat.stl", JL_MESH_REPAIR_TOL, NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "self-intersecting"));
  jl_mesh_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_folded_sliver_removed),
    cmocka_unit_test(test_zero_area_on_edge_flipped),
    cmocka_unit_test(test_near_vertices_welded),
    cmocka_unit_test(test_doubled_pair_removed),
    cmocka_unit_test(test_real_crossing_refused),
    cmocka_unit_test(test_crossing_around_tolerance),
    cmocka_unit_test(test_flat_fold_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
