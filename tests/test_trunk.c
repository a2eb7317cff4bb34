/* Unit tests for the trunk geometry: mesh validation, the exact packing
 * check, the grid baseline and the result files. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "box_mesh.h"
#include "file_util.h"
#include "math3d.h"
#include "mesh.h"
#include "timer.h"
#include "trunk_baseline.h"
#include "trunk_check.h"
#include "trunk_io.h"

static const jl_block_size din = {JL_BLOCK_DIN_X, JL_BLOCK_DIN_Y, JL_BLOCK_DIN_Z};
static const double q_id[4] = {1, 0, 0, 0};

static void make_box(jl_mesh *m, double x, double y, double z) {
  double v[24];
  int t[36];
  box_arrays(0, 0, 0, x, y, z, 0, v, t);
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 8, t, 12, &err), JL_OK);
}

static void packing_of(jl_block_packing *p, int n, const double (*c)[3], const double (*q)[4]);

/* ---- mesh ---- */

static void test_cube_valid_volume_exact(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 1000, 500, 400);
  jl_mesh_report rep;
  jl_error err = {0};
  assert_int_equal(jl_mesh_validate(&m, "cube", &rep, &err), JL_OK);
  assert_int_equal(rep.flipped_triangles, 0);
  assert_int_equal(rep.degenerate_dropped, 0);
  assert_int_equal(rep.components, 1);
  assert_true(rep.volume == 2e8);  /* 1000 * 500 * 400 mm^3, exact in double */
  jl_mesh_free(&m);
}

static void test_open_mesh_rejected(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 100, 100, 100);
  m.n_triangles = 11;  /* drop the last triangle: three edges lose their partner */
  jl_error err = {0};
  assert_int_equal(jl_mesh_validate(&m, "open.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "open.stl"));
  assert_non_null(strstr(err.msg, "open surface"));
  assert_non_null(strstr(err.msg, "3 edge"));
  jl_mesh_free(&m);
}

static void test_flipped_triangles_fixed(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 300, 200, 100);
  for (int f = 0; f < 3; ++f) {  /* turn three triangles inside out */
    int *t = m.triangles + 3 * (2 * f + 1);
    int x = t[1]; t[1] = t[2]; t[2] = x;
  }
  jl_mesh_report rep;
  jl_error err = {0};
  assert_int_equal(jl_mesh_validate(&m, "flip", &rep, &err), JL_OK);
  assert_int_equal(rep.flipped_triangles, 3);
  assert_true(rep.volume == 6e6);
  /* now every edge runs both ways exactly once */
  for (int a = 0; a < 12; ++a)
    for (int k = 0; k < 3; ++k) {
      int u = m.triangles[3 * a + k], w = m.triangles[3 * a + (k + 1) % 3], reverse = 0;
      for (int b = 0; b < 12; ++b)
        for (int j = 0; j < 3; ++j)
          reverse += m.triangles[3 * b + j] == w && m.triangles[3 * b + (j + 1) % 3] == u;
      assert_int_equal(reverse, 1);
    }
  jl_mesh_free(&m);
}

static void test_inverted_mesh_turned_out(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 300, 200, 100);
  for (int f = 0; f < 12; ++f) {
    int *t = m.triangles + 3 * f;
    int x = t[1]; t[1] = t[2]; t[2] = x;
  }
  assert_true(jl_mesh_volume(&m) == -6e6);
  jl_mesh_report rep;
  jl_error err = {0};
  assert_int_equal(jl_mesh_validate(&m, "inv", &rep, &err), JL_OK);
  assert_int_equal(rep.flipped_triangles, 12);
  assert_true(rep.volume == 6e6);
  jl_mesh_free(&m);
}

static void test_degenerate_dropped(void **state) {
  (void)state;
  double v[27];
  int t[42];
  box_arrays(0, 0, 0, 100, 100, 100, 0, v, t);
  v[24] = v[3]; v[25] = v[4]; v[26] = v[5];   /* vertex 8 repeats vertex 1's position */
  int extra[6] = {0, 0, 5, 0, 1, 8};          /* a repeated index; zero area */
  memcpy(t + 36, extra, sizeof extra);
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(&m, v, 9, t, 14, &err), JL_OK);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate(&m, "deg", &rep, &err), JL_OK);
  assert_int_equal(rep.degenerate_dropped, 2);
  assert_int_equal(m.n_triangles, 12);
  assert_true(rep.volume == 1e6);
  jl_mesh_free(&m);
}

static void two_boxes(jl_mesh *m, double shift) {
  double v[48];
  int t[72];
  box_arrays(0, 0, 0, 100, 100, 100, 0, v, t);
  box_arrays(shift, 20, 20, shift + 100, 80, 80, 8, v + 24, t + 36);
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 16, t, 24, &err), JL_OK);
}

static void test_self_intersection_detected(void **state) {
  (void)state;
  jl_mesh m;
  two_boxes(&m, 50);  /* the second box passes through a face of the first */
  jl_error err = {0};
  assert_int_equal(jl_mesh_validate(&m, "cross.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "cross.stl"));
  assert_non_null(strstr(err.msg, "self-intersecting"));
  jl_mesh_free(&m);
  /* A tetrahedron with its fourth corner pressed into the opposite face: the
   * faces across each edge lie folded flat onto each other. */
  double tv[12] = {0, 0, 0, 100, 0, 0, 0, 100, 0, 30, 30, 0};
  int tt[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3};
  assert_int_equal(jl_mesh_from_arrays(&m, tv, 4, tt, 4, &err), JL_OK);
  assert_int_equal(jl_mesh_validate(&m, "flat.stl", NULL, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "self-intersecting"));
  jl_mesh_free(&m);
  two_boxes(&m, 150);  /* apart: two closed components, fine */
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate(&m, "apart", &rep, &err), JL_OK);
  assert_int_equal(rep.components, 2);
  assert_true(rep.volume == 1e6 + 100.0 * 60 * 60);
  jl_mesh_free(&m);
}

/* A closed box inside the trunk is an obstacle: whatever its file
 * orientation, it ends up facing inward, the volume is the difference, and a
 * block inside the obstacle counts as outside the trunk. */
static void test_cavity_faces_inward(void **state) {
  (void)state;
  for (int inner_inverted = 0; inner_inverted < 2; ++inner_inverted) {
    double v[48];
    int t[72];
    box_arrays(0, 0, 0, 1000, 500, 400, 0, v, t);
    box_arrays(400, 100, 100, 800, 400, 300, 8, v + 24, t + 36);
    if (inner_inverted)
      for (int f = 12; f < 24; ++f) { int x = t[3 * f + 1]; t[3 * f + 1] = t[3 * f + 2]; t[3 * f + 2] = x; }
    jl_mesh m;
    jl_error err = {0};
    assert_int_equal(jl_mesh_from_arrays(&m, v, 16, t, 24, &err), JL_OK);
    jl_mesh_report rep;
    assert_int_equal(jl_mesh_validate(&m, "cavity", &rep, &err), JL_OK);
    assert_int_equal(rep.components, 2);
    assert_int_equal(rep.cavities, 1);
    assert_int_equal(rep.flipped_triangles, inner_inverted ? 0 : 12);
    assert_true(rep.volume == 2e8 - 400.0 * 300 * 200);
    jl_trunk_geom g;
    assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
    double c[2][3] = {{600, 250, 200}, {100, 50, 25}};  /* in the obstacle; in the free corner */
    jl_block_packing p;
    packing_of(&p, 2, c, NULL);
    jl_trunk_report r;
    assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
    assert_false(r.legal);
    assert_int_equal(r.worst_kind, JL_VIOLATION_OUTSIDE);
    assert_int_equal(r.outside_blocks, 1);
    assert_int_equal(r.outside_block, 0);
    assert_true(fabs(r.outside_distance - 100.0) < 1e-9);  /* centre z 200 to the faces at 100 and 300 */
    assert_int_equal(jl_trunk_point_inside(&g, c[0]), 0);
    jl_block_packing_free(&p);
    jl_trunk_geom_free(&g);
    jl_mesh_free(&m);
  }
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* An ASCII STL of the box [0,a]^3 with some facets listed inside out. */
static void write_cube_stl(const char *path, double a, const char *bad) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "solid cube\n");
  for (int t = 0; t < 12; ++t) {
    fprintf(f, " facet normal 0 0 0\n  outer loop\n");
    for (int j = 0; j < 3; ++j) {
      int k = cube_tris[t][t < 2 ? 2 - j : j];  /* the first two facets reversed */
      if (bad && t == 5 && j == 1) fprintf(f, "   vertex %s 0 0\n", bad);
      else fprintf(f, "   vertex %g %g %g\n", (k & 1) ? a : 0.0, (k & 2) ? a : 0.0, (k & 4) ? a : 0.0);
    }
    fprintf(f, "  endloop\n endfacet\n");
  }
  fprintf(f, "endsolid cube\n");
  fclose(f);
}

static void test_load_stl_units_and_errors(void **state) {
  (void)state;
  char dir[] = "/tmp/jostle-trunk-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char p[128], empty[128], nan_p[128];
  snprintf(p, sizeof p, "%s/cube.stl", dir);
  snprintf(empty, sizeof empty, "%s/empty.stl", dir);
  snprintf(nan_p, sizeof nan_p, "%s/nan.stl", dir);
  write_cube_stl(p, 10, NULL);
  write_text(empty, "");
  write_cube_stl(nan_p, 10, "nan");
  jl_mesh m;
  jl_mesh_report rep;
  jl_error err = {0};
  assert_int_equal(jl_mesh_load(&m, p, jl_units_scale("cm"), &rep, &err), JL_OK);
  assert_int_equal(m.n_vertices, 8);  /* welded */
  assert_int_equal(rep.flipped_triangles, 2);
  assert_true(fabs(rep.volume - 1e6) < 1e-6);  /* 10 cm cube = 1 L */
  jl_mesh_free(&m);
  assert_int_equal(jl_mesh_load(&m, empty, 1.0, &rep, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "empty.stl"));
  assert_int_equal(jl_mesh_load(&m, nan_p, 1.0, &rep, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "nan.stl"));
  assert_non_null(strstr(err.msg, "non-finite"));
  char missing[160];
  snprintf(missing, sizeof missing, "%s/missing.stl", dir);
  assert_int_equal(jl_mesh_load(&m, missing, 1.0, &rep, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "missing.stl"));
  assert_true(jl_units_scale("in") == 25.4 && jl_units_scale("m") == 1000.0 && jl_units_scale("ft") == 0.0);
  unlink(p); unlink(empty); unlink(nan_p);
  rmdir(dir);
}

/* ---- exact check ---- */

typedef struct cuboid_fixture {
  jl_mesh mesh;
  jl_trunk_geom geom;
} cuboid_fixture;

static int cuboid_setup(void **state) {
  cuboid_fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  make_box(&f->mesh, 1000, 500, 400);
  jl_error err = {0};
  if (jl_mesh_validate(&f->mesh, "cuboid", NULL, &err) ||
      jl_trunk_geom_init(&f->geom, &f->mesh, din, &err))
    return -1;
  *state = f;
  return 0;
}

static int cuboid_teardown(void **state) {
  cuboid_fixture *f = *state;
  jl_trunk_geom_free(&f->geom);
  jl_mesh_free(&f->mesh);
  free(f);
  return 0;
}

static void packing_of(jl_block_packing *p, int n, const double (*c)[3], const double (*q)[4]) {
  jl_error err = {0};
  assert_int_equal(jl_block_packing_init(p, n, &err), JL_OK);
  for (int i = 0; i < n; ++i) assert_int_equal(jl_block_packing_push(p, c[i], q ? q[i] : q_id, &err), JL_OK);
}

static void test_check_legal_touching(void **state) {
  cuboid_fixture *f = *state;
  /* blocks in the corner, touching the walls and each other; one turned 45 degrees in the middle */
  jl_quat r = jl_quat_axis_angle(jl_v3(0, 0, 1), JL_PI / 4);
  double c[4][3] = {{100, 50, 25}, {300, 50, 25}, {100, 150, 25}, {600, 250, 200}};
  double q[4][4] = {{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {r.w, r.x, r.y, r.z}};
  jl_block_packing p;
  packing_of(&p, 4, c, q);
  jl_trunk_report rep;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(&f->geom, &p, &rep, &err), JL_OK);
  assert_true(rep.legal);
  assert_int_equal(rep.worst_kind, JL_VIOLATION_NONE);
  assert_true(rep.max_overlap_depth <= rep.tol);
  assert_true(rep.max_surface_depth <= rep.tol);
  double worst = -1;
  assert_int_equal(jl_trunk_check(&f->geom, &p, &worst), 1);
  assert_true(worst == 0.0);
  jl_block_packing_free(&p);
}

static void test_check_overlap_found(void **state) {
  cuboid_fixture *f = *state;
  double c[3][3] = {{500, 250, 100}, {100, 50, 25}, {690, 250, 100}};  /* 0 and 2 overlap by 10 mm in x */
  jl_block_packing p;
  packing_of(&p, 3, c, NULL);
  jl_trunk_report rep;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(&f->geom, &p, &rep, &err), JL_OK);
  assert_false(rep.legal);
  assert_int_equal(rep.worst_kind, JL_VIOLATION_OVERLAP);
  assert_int_equal(rep.overlap_i, 0);
  assert_int_equal(rep.overlap_j, 2);
  assert_true(fabs(rep.max_overlap_depth - 10.0) < 1e-9);
  double worst = 0;
  assert_int_equal(jl_trunk_check(&f->geom, &p, &worst), 0);
  assert_true(fabs(worst - 10.0) < 1e-9);
  jl_block_packing_free(&p);
}

static void test_check_protrusion_found(void **state) {
  cuboid_fixture *f = *state;
  /* block 1 reaches 5 mm through the top (z = 400); block 2, turned 30 degrees
   * about z in the corner, pokes through the x = 0 and y = 0 walls */
  jl_quat r = jl_quat_axis_angle(jl_v3(0, 0, 1), JL_PI / 6);
  double c[3][3] = {{500, 250, 100}, {300, 250, 380}, {100, 60, 25}};
  double q[3][4] = {{1, 0, 0, 0}, {1, 0, 0, 0}, {r.w, r.x, r.y, r.z}};
  jl_block_packing p;
  packing_of(&p, 2, c, q);
  jl_trunk_report rep;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(&f->geom, &p, &rep, &err), JL_OK);
  assert_false(rep.legal);
  assert_int_equal(rep.worst_kind, JL_VIOLATION_SURFACE);
  assert_int_equal(rep.surface_block, 1);
  assert_true(fabs(rep.max_surface_depth - 5.0) < 1e-9);
  jl_block_packing_free(&p);
  packing_of(&p, 1, c + 2, q + 2);
  assert_int_equal(jl_trunk_check_packing(&f->geom, &p, &rep, &err), JL_OK);
  assert_false(rep.legal);
  assert_int_equal(rep.worst_kind, JL_VIOLATION_SURFACE);
  /* Its half extents along x and y are 100 cos 30 + 50 sin 30 = 111.6 and
   * 100 sin 30 + 50 cos 30 = 93.3: it reaches 11.6 mm through x = 0 and
   * 33.3 mm through y = 0, the deeper one (the wall's normal separates best). */
  double reach_y = 100 * sin(JL_PI / 6) + 50 * cos(JL_PI / 6) - 60;
  assert_true(fabs(rep.max_surface_depth - reach_y) < 1e-9);
  jl_block_packing_free(&p);
}

static void test_check_outside_found(void **state) {
  cuboid_fixture *f = *state;
  double c[2][3] = {{500, 250, 100}, {1500, 250, 100}};  /* block 1 lies wholly outside, 400 mm from the wall */
  jl_block_packing p;
  packing_of(&p, 2, c, NULL);
  jl_trunk_report rep;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(&f->geom, &p, &rep, &err), JL_OK);
  assert_false(rep.legal);
  assert_int_equal(rep.worst_kind, JL_VIOLATION_OUTSIDE);
  assert_int_equal(rep.outside_blocks, 1);
  assert_int_equal(rep.outside_block, 1);
  assert_true(fabs(rep.outside_distance - 500.0) < 1e-9);  /* centre x 1500 to the wall at 1000 */
  jl_block_packing_free(&p);
}

/* Blocks clear of the surface take their side from the previous such block
 * when the segment between their centres meets no triangle: through the
 * obstacle of a trunk with a cavity, the sides must still come out right. */
static void test_check_sides_across_cavity(void **state) {
  (void)state;
  double v[48];
  int t[72];
  box_arrays(0, 0, 0, 1000, 500, 400, 0, v, t);
  box_arrays(400, 100, 100, 800, 400, 300, 8, v + 24, t + 36);
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(&m, v, 16, t, 24, &err), JL_OK);
  assert_int_equal(jl_mesh_validate(&m, "cavity", NULL, &err), JL_OK);
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  /* free corner; free, the segment from the first through the obstacle;
   * in the obstacle; in the obstacle again, the segment staying inside it */
  double c[4][3] = {{100, 50, 25}, {890, 450, 370}, {550, 250, 200}, {650, 300, 130}};
  jl_block_packing p;
  packing_of(&p, 4, c, NULL);
  jl_trunk_report r;
  assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
  assert_false(r.legal);
  assert_true(r.complete);
  assert_int_equal(r.outside_blocks, 2);
  assert_int_equal(r.outside_block, 2);
  assert_true(fabs(r.outside_distance - 100.0) < 1e-9);
  for (int i = 0; i < 4; ++i)
    assert_int_equal(jl_mesh_winding_number(&m, c[i]) > 0.5, i < 2);
  /* the two free blocks alone are legal */
  p.count = 2;
  assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
  assert_true(r.legal);
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* The box [0, x] x [0, y] x [0, z] with each face cut into k x k squares
 * (12 k^2 triangles, outward). */
static void make_fine_box(jl_mesh *m, double x, double y, double z, int k) {
  int nt = 12 * k * k;
  double *v = malloc((size_t)nt * 9 * sizeof *v);
  int *t = malloc((size_t)nt * 3 * sizeof *t);
  assert_non_null(v);
  assert_non_null(t);
  double ext[3] = {x, y, z};
  int nv = 0, ti = 0;
  for (int ax = 0; ax < 3; ++ax)
    for (int side = 0; side < 2; ++side) {
      int u = (ax + 1) % 3, w = (ax + 2) % 3;  /* (u, w, ax) right-handed */
      for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) {
          double q[4][3];
          for (int c = 0; c < 4; ++c) {
            int di = c == 1 || c == 2, dj = c >= 2;
            q[c][ax] = side ? ext[ax] : 0.0;
            q[c][u] = ext[u] * (i + di) / k;
            q[c][w] = ext[w] * (j + dj) / k;
          }
          /* corners 0, 1, 2, 3 run counter-clockwise seen from +ax */
          static const int up[2][3] = {{0, 1, 2}, {0, 2, 3}}, down[2][3] = {{0, 2, 1}, {0, 3, 2}};
          for (int h = 0; h < 2; ++h) {
            for (int c = 0; c < 3; ++c) {
              int src = side ? up[h][c] : down[h][c];
              memcpy(v + 3 * nv, q[src], sizeof q[0]);
              t[ti++] = nv++;
            }
          }
        }
    }
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, nv, t, nt, &err), JL_OK);
  free(v);
  free(t);
}

/* The exact check of 1,600 blocks in a trunk of 120,000 triangles: a
 * winding number over every triangle for every block took seconds. */
static void test_check_many_triangles_fast(void **state) {
  (void)state;
  jl_mesh m;
  make_fine_box(&m, 1000, 500, 400, 100);
  assert_true(fabs(jl_mesh_volume(&m) / 2e8 - 1) < 1e-9);
  jl_block_size small = {100, 50, 25};
  jl_trunk_geom g;
  jl_error err = {0};
  assert_int_equal(jl_trunk_geom_init(&g, &m, small, &err), JL_OK);
  jl_block_packing p;
  assert_int_equal(jl_block_packing_init(&p, 1600, &err), JL_OK);
  for (int i = 0; i < 1600; ++i) {
    double c[3] = {50 + 100 * (i % 10), 25 + 50 * (i / 10 % 10), 12.5 + 25 * (i / 100)};
    assert_int_equal(jl_block_packing_push(&p, c, q_id, &err), JL_OK);
  }
  double t0 = jl_time_now();
  jl_trunk_report r;
  assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
  double took = jl_time_now() - t0;
  print_message("1,600 blocks, 120,000 triangles: checked in %.3f s\n", took);
  assert_true(r.legal);
  assert_true(took < 2.0);
  /* one block moved out through the floor still counts as outside */
  p.centre[3 * 800 + 2] = -100;
  assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
  assert_false(r.legal);
  assert_int_equal(r.outside_blocks, 1);
  assert_int_equal(r.outside_block, 800);
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* Limits: a set stop flag ends the check at once (not legal, not complete)
 * unless its grace has not passed; a fill's check that is cut says so and
 * keeps the packing; the search's check reports a cut one as NaN. */
static void test_check_limits(void **state) {
  cuboid_fixture *f = *state;
  double c[2][3] = {{100, 50, 25}, {300, 50, 25}};
  jl_block_packing p;
  packing_of(&p, 2, c, NULL);
  volatile sig_atomic_t stop = 1;
  jl_trunk_limits now = {0.0, &stop, 0.0}, grace = {0.0, &stop, 60.0};
  jl_trunk_report r;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing_until(&f->geom, &p, &now, &r, &err), JL_OK);
  assert_false(r.complete);
  assert_false(r.legal);
  char why[256];
  jl_trunk_report_describe(&r, why, sizeof why);
  assert_non_null(strstr(why, "not checked"));
  assert_int_equal(jl_trunk_check_packing_until(&f->geom, &p, &grace, &r, &err), JL_OK);
  assert_true(r.complete);
  assert_true(r.legal);
  jl_trunk_limits past = {jl_time_now() - 1.0, NULL, 0.0};
  assert_int_equal(jl_trunk_check_packing_until(&f->geom, &p, &past, &r, &err), JL_OK);
  assert_false(r.complete);
  int cut = 0;
  assert_int_equal(jl_trunk_require_legal(&f->geom, &p, "a test", &now, &cut, &err), JL_OK);
  assert_int_equal(cut, 1);
  assert_int_equal(p.count, 2);
  f->geom.lim = now;
  double worst = 0.0;
  assert_int_equal(jl_trunk_check(&f->geom, &p, &worst), 0);
  assert_true(isnan(worst));
  f->geom.lim = grace;
  assert_int_equal(jl_trunk_check(&f->geom, &p, &worst), 1);
  assert_true(worst == 0.0);
  jl_block_packing_free(&p);
}

static void test_inside_tests_agree(void **state) {
  cuboid_fixture *f = *state;
  double pts[5][3] = {{500, 250, 200}, {1, 1, 1}, {999, 499, 399}, {-1, 250, 200}, {500, 250, 401}};
  int want[5] = {1, 1, 1, 0, 0};
  for (int i = 0; i < 5; ++i) {
    double w = jl_mesh_winding_number(&f->mesh, pts[i]);
    assert_true(fabs(w - want[i]) < 1e-9);
    assert_int_equal(jl_trunk_point_inside(&f->geom, pts[i]), want[i]);
  }
  /* a ray from here along the first direction meets the surface near an edge: the retry must still answer */
  double centre[3] = {500, 250, 200};
  assert_int_equal(jl_trunk_point_inside(&f->geom, centre), 1);
}

/* ---- baseline ---- */

static int baseline_count(double x, double y, double z, int threads, jl_block_packing *out) {
  jl_mesh m;
  make_box(&m, x, y, z);
  jl_error err = {0};
  jl_trunk_geom g;
  assert_int_equal(jl_mesh_validate(&m, "box", NULL, &err), JL_OK);
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  jl_block_packing own = {0};
  if (!out) out = &own;
  assert_int_equal(jl_block_packing_init(out, 16, &err), JL_OK);
  jl_baseline_info info;
  assert_int_equal(jl_trunk_baseline(&g, threads, 0, out, &info, &err), JL_OK);
  assert_int_equal(info.count, out->count);
  jl_trunk_report rep;
  assert_int_equal(jl_trunk_check_packing(&g, out, &rep, &err), JL_OK);
  assert_true(rep.legal);
  int n = out->count;
  jl_block_packing_free(&own);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
  return n;
}

/* --time within a lattice or a layer: in a 10 x 5 x 4 m box one lattice has
 * 200,000 cells (seconds on 2 loaded threads; before, the deadline was read
 * only between lattices and layer slots, and the 200,000-block packing was
 * then placed and checked in full). The grid fill and the layered fill
 * return within their finishing allowance of a deadline 0.3 s away (or of a
 * set stop flag), cut short, with a legal packing. */
static void test_fills_stop_within_lattice(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 10000, 5000, 4000);
  jl_error err = {0};
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  for (int how = 0; how < 4; ++how) {
    jl_block_packing out;
    assert_int_equal(jl_block_packing_init(&out, 16, &err), JL_OK);
    volatile sig_atomic_t stop = how >= 2;
    double t0 = jl_time_now(), deadline = how >= 2 ? 0.0 : t0 + 0.3;
    int complete;
    if (how % 2 == 0) {
      jl_grid_info gi;
      assert_int_equal(jl_trunk_grid_fill(&g, 2, 0, deadline, &stop, &out, &gi, &err), JL_OK);
      complete = gi.complete;
    } else {
      jl_baseline_info bi;
      assert_int_equal(jl_trunk_baseline_until(&g, 2, 0, deadline, &stop, &out, &bi, &err), JL_OK);
      complete = bi.complete;
    }
    double took = jl_time_now() - t0;
    print_message("%s fill, %s: %d blocks in %.2f s\n", how % 2 ? "layered" : "grid",
                  how >= 2 ? "stop flag" : "deadline 0.3 s", out.count, took);
    assert_false(complete);
    assert_true(took < 0.3 + 2 * JL_TRUNK_FINISH_S + 1.0);
    jl_trunk_report rep;
    assert_int_equal(jl_trunk_check_packing(&g, &out, &rep, &err), JL_OK);
    assert_true(rep.legal);
    jl_block_packing_free(&out);
  }
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

static void test_baseline_cuboid_200(void **state) {
  (void)state;
  assert_int_equal(baseline_count(1000, 500, 400, 2, NULL), 200);
}

static void test_baseline_cuboid_399_fewer(void **state) {
  (void)state;
  /* 399 mm high: a layer 50 mm thick holds 25 blocks, 100 mm 50, 200 mm 100:
   * 0.5 blocks per mm in every case, and whole layers fill at most 350 mm,
   * so 175 (e.g. 7 layers of 25). */
  assert_int_equal(baseline_count(1000, 500, 399, 2, NULL), 175);
}

static void test_baseline_threads_agree(void **state) {
  (void)state;
  jl_block_packing a = {0}, b = {0};
  baseline_count(930, 470, 330, 1, &a);
  baseline_count(930, 470, 330, 3, &b);
  assert_int_equal(a.count, b.count);
  assert_memory_equal(a.centre, b.centre, (size_t)a.count * 3 * sizeof(double));
  assert_memory_equal(a.quat, b.quat, (size_t)a.count * 4 * sizeof(double));
  jl_block_packing_free(&a);
  jl_block_packing_free(&b);
}

static void test_quat_from_axes(void **state) {
  (void)state;
  jl_quat q = jl_quat_normalize((jl_quat){0.3, -0.5, 0.7, 0.2});
  jl_vec3 ax[3];
  jl_quat_to_axes(q, ax);
  double col[3][3] = {{ax[0].x, ax[0].y, ax[0].z}, {ax[1].x, ax[1].y, ax[1].z}, {ax[2].x, ax[2].y, ax[2].z}};
  double r[4];
  jl_quat_from_axes(col, r);
  assert_true(fabs(r[0] - q.w) < 1e-12 && fabs(r[1] - q.x) < 1e-12 && fabs(r[2] - q.y) < 1e-12 &&
              fabs(r[3] - q.z) < 1e-12);
}

/* ---- files ---- */

static void test_result_round_trip(void **state) {
  cuboid_fixture *f = *state;
  char dir[] = "/tmp/jostle-trunk-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char json[128], glb[128], svg[128];
  snprintf(json, sizeof json, "%s/r.json", dir);
  snprintf(glb, sizeof glb, "%s/r.glb", dir);
  snprintf(svg, sizeof svg, "%s/r.svg", dir);
  jl_quat r = jl_quat_axis_angle(jl_v3_normalize(jl_v3(1, 2, 3)), 0.7);
  double c[2][3] = {{100, 50, 25}, {500.1234567890123, 250, 200}};
  double q[2][4] = {{1, 0, 0, 0}, {r.w, r.x, r.y, r.z}};
  jl_block_packing p, back;
  packing_of(&p, 2, c, q);
  jl_trunk_problem prob;
  jl_trunk_problem_from_mesh(&prob, "/nonexistent/cuboid.stl");
  jl_mesh_report mrep = {.input_triangles = 12, .components = 1, .volume = 2e8,
                         .hi = {1000, 500, 400}};
  jl_trunk_report chk;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(&f->geom, &p, &chk, &err), JL_OK);
  jl_trunk_summary res = {&prob, &p, &mrep, &chk, 1, 200, 7, "cpu", "CPU, 1 threads", "layered",
                         1.0, 0.5, 0.5, "baseline", NULL, 1, NULL, {0, 0}, 2, 0.25, 1, 0, NULL, 0, NULL, 1, 0, NULL};
  assert_int_equal(jl_trunk_summary_write_json(json, &res, &err), JL_OK);
  char kind[16];
  jl_result_kind(json, kind, sizeof kind);
  assert_string_equal(kind, "trunk");
  jl_trunk_problem rp;
  assert_int_equal(jl_trunk_result_read_json(json, &rp, &back, &err), JL_OK);
  assert_int_equal(back.count, 2);
  assert_memory_equal(back.centre, p.centre, 6 * sizeof(double));
  assert_memory_equal(back.quat, p.quat, 8 * sizeof(double));
  assert_string_equal(rp.mesh, "/nonexistent/cuboid.stl");
  assert_true(rp.block.x == 200 && rp.block.y == 100 && rp.block.z == 50);
  assert_int_equal(jl_trunk_write_glb(glb, &f->mesh, &din, &p, &err), JL_OK);
  char *data = NULL;
  size_t len = 0;
  assert_int_equal(jl_file_read_all(glb, &data, &len, &err), JL_OK);
  assert_true(len > 20 && memcmp(data, "glTF", 4) == 0);
  free(data);
  assert_int_equal(jl_trunk_write_svg(svg, &f->mesh, &din, &p, "t", &err), JL_OK);
  assert_int_equal(jl_file_read_all(svg, &data, &len, &err), JL_OK);
  int polygons = 0;
  for (const char *s = data; (s = strstr(s, "<polygon")); ++s) ++polygons;
  assert_int_equal(polygons, 6);  /* two blocks in three views */
  free(data);
  jl_block_packing_free(&p);
  jl_block_packing_free(&back);
  unlink(json); unlink(glb); unlink(svg);
  rmdir(dir);
}

/* The .glb holds the trunk in metres with y up under a root transform: read
 * back with units m (assimp applies the node transforms) it has the same
 * volume and the extents turned z -> y, y -> z. */
static void test_glb_reads_back(void **state) {
  cuboid_fixture *f = *state;
  char dir[] = "/tmp/jostle-trunk-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char glb[128];
  snprintf(glb, sizeof glb, "%s/t.glb", dir);
  jl_block_packing none;
  jl_error err = {0};
  assert_int_equal(jl_block_packing_init(&none, 1, &err), JL_OK);
  assert_int_equal(jl_trunk_write_glb(glb, &f->mesh, &din, &none, &err), JL_OK);
  jl_mesh m;
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_load(&m, glb, jl_units_scale("m"), &rep, &err), JL_OK);
  assert_int_equal(m.n_triangles, 12);
  assert_true(fabs(rep.volume / 2e8 - 1) < 1e-6);  /* through 32-bit floats */
  assert_true(fabs(rep.hi[0] - rep.lo[0] - 1000) < 1e-3);
  assert_true(fabs(rep.hi[1] - rep.lo[1] - 400) < 1e-3);
  assert_true(fabs(rep.hi[2] - rep.lo[2] - 500) < 1e-3);
  jl_mesh_free(&m);
  /* A block's node places a shared box by its transform: one turned 90
   * degrees about z beside the trunk reads back 100 mm wide along x. */
  jl_quat r = jl_quat_axis_angle(jl_v3(0, 0, 1), JL_PI / 2);
  double c[1][3] = {{1200, 100, 25}}, q[1][4] = {{r.w, r.x, r.y, r.z}};
  jl_block_packing one;
  packing_of(&one, 1, c, q);
  assert_int_equal(jl_trunk_write_glb(glb, &f->mesh, &din, &one, &err), JL_OK);
  assert_int_equal(jl_mesh_load(&m, glb, jl_units_scale("m"), &rep, &err), JL_OK);
  assert_int_equal(m.n_triangles, 24);
  assert_true(fabs(rep.volume / (2e8 + 1e6) - 1) < 1e-6);
  assert_true(fabs(rep.hi[0] - rep.lo[0] - 1250) < 1e-3);
  assert_true(fabs(rep.hi[1] - rep.lo[1] - 400) < 1e-3);
  assert_true(fabs(rep.hi[2] - rep.lo[2] - 500) < 1e-3);
  jl_mesh_free(&m);
  jl_block_packing_free(&one);
  /* many blocks export in linear time: 20,000 in well under a second
   * (a mesh per block took minutes) */
  jl_block_packing many;
  assert_int_equal(jl_block_packing_init(&many, 20000, &err), JL_OK);
  for (int i = 0; i < 20000; ++i) {
    double ci[3] = {100 + 200 * (i % 5), 50 + 100 * ((i / 5) % 5), 25 + 50 * (i / 25 % 8)};
    assert_int_equal(jl_block_packing_push(&many, ci, q_id, &err), JL_OK);
  }
  double t0 = jl_time_now();
  assert_int_equal(jl_trunk_write_glb(glb, &f->mesh, &din, &many, &err), JL_OK);
  double took = jl_time_now() - t0;
  print_message("20,000 blocks: .glb in %.2f s\n", took);
  assert_true(took < 10.0);
  jl_block_packing_free(&many);
  jl_block_packing_free(&none);
  unlink(glb);
  rmdir(dir);
}

static void test_block_size_parse(void **state) {
  (void)state;
  jl_block_size b;
  jl_error err = {0};
  assert_int_equal(jl_block_size_parse("--block", "200x100x50", &b, &err), JL_OK);
  assert_true(b.x == 200 && b.y == 100 && b.z == 50);
  assert_int_equal(jl_block_size_parse("--block", "1.5X2x3", &b, &err), JL_OK);
  assert_true(b.x == 1.5 && b.z == 3);
  const char *bad[] = {"200x100", "200x100x0", "200x-1x50", "axbxc", "200x100x50x", "nanx1x1", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_int_equal(jl_block_size_parse("--block", bad[i], &b, &err), JL_ERR_INPUT);
    assert_non_null(strstr(err.msg, "--block"));
  }
  /* the edges' range and ratio (JL_BLOCK_EDGE_MIN/MAX, JL_BLOCK_ASPECT_MAX) */
  assert_int_equal(jl_block_size_parse("--block", "0.01x0.01x10", &b, &err), JL_OK);
  assert_int_equal(jl_block_size_parse("--block", "1e7x1e7x1e7", &b, &err), JL_OK);
  assert_int_equal(jl_block_size_parse("--block", "1e-300x1x1", &b, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "edge 1 is 1e-300 mm, not within [0.01, 1e+07] mm"));
  assert_int_equal(jl_block_size_parse("--block", "1x1x2e7", &b, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "edge 3 is 2e+07 mm"));
  assert_int_equal(jl_block_size_parse("--block", "1x1x1001", &b, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "the longest edge (1001 mm) is more than 1000 times the shortest (1 mm)"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_cube_valid_volume_exact),
    cmocka_unit_test(test_open_mesh_rejected),
    cmocka_unit_test(test_flipped_triangles_fixed),
    cmocka_unit_test(test_inverted_mesh_turned_out),
    cmocka_unit_test(test_degenerate_dropped),
    cmocka_unit_test(test_self_intersection_detected),
    cmocka_unit_test(test_cavity_faces_inward),
    cmocka_unit_test(test_load_stl_units_and_errors),
    cmocka_unit_test_setup_teardown(test_check_legal_touching, cuboid_setup, cuboid_teardown),
    cmocka_unit_test_setup_teardown(test_check_overlap_found, cuboid_setup, cuboid_teardown),
    cmocka_unit_test_setup_teardown(test_check_protrusion_found, cuboid_setup, cuboid_teardown),
    cmocka_unit_test_setup_teardown(test_check_outside_found, cuboid_setup, cuboid_teardown),
    cmocka_unit_test_setup_teardown(test_inside_tests_agree, cuboid_setup, cuboid_teardown),
    cmocka_unit_test(test_check_sides_across_cavity),
    cmocka_unit_test(test_check_many_triangles_fast),
    cmocka_unit_test_setup_teardown(test_check_limits, cuboid_setup, cuboid_teardown),
    cmocka_unit_test(test_fills_stop_within_lattice),
    cmocka_unit_test(test_baseline_cuboid_200),
    cmocka_unit_test(test_baseline_cuboid_399_fewer),
    cmocka_unit_test(test_baseline_threads_agree),
    cmocka_unit_test(test_quat_from_axes),
    cmocka_unit_test_setup_teardown(test_result_round_trip, cuboid_setup, cuboid_teardown),
    cmocka_unit_test_setup_teardown(test_glb_reads_back, cuboid_setup, cuboid_teardown),
    cmocka_unit_test(test_block_size_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
