/* Unit tests for the grid baseline (jl_trunk_grid_fill): counts worked out
 * by hand on boxes, the orientation and offset that win, the cuboid test
 * mesh's 200, never above the layered fill on the repository meshes, and
 * the same packing on 1 and 2 threads. The meshes come from JL_MESH_DIR. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mesh_fixture.h"

#include "mesh.h"
#include "trunk_baseline.h"
#include "trunk_check.h"

static const jl_block_size din = {JL_BLOCK_DIN_X, JL_BLOCK_DIN_Y, JL_BLOCK_DIN_Z};

static const int cube_tris[12][3] = {
  {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
  {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5},
};

/* Axis-aligned boxes lo[b], hi[b] (disjoint) as one mesh. */
static void make_boxes(jl_mesh *m, int n, const double lo[][3], const double hi[][3]) {
  double v[2 * 24];
  int t[2 * 36];
  assert_true(n >= 1 && n <= 2);
  for (int b = 0; b < n; ++b) {
    for (int k = 0; k < 8; ++k)
      for (int w = 0; w < 3; ++w) v[24 * b + 3 * k + w] = (k >> w) & 1 ? hi[b][w] : lo[b][w];
    for (int f = 0; f < 12; ++f)
      for (int j = 0; j < 3; ++j) t[36 * b + 3 * f + j] = 8 * b + cube_tris[f][j];
  }
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 8 * n, t, 12 * n, &err), JL_OK);
  assert_int_equal(jl_mesh_validate(m, "boxes", NULL, &err), JL_OK);
}

/* The grid fill of geometry g; the packing (in out when given) must pass the exact check. */
static int grid_of(const jl_trunk_geom *g, int threads, int offsets, jl_grid_info *info, jl_block_packing *out) {
  jl_error err = {0};
  jl_block_packing own = {0};
  if (!out) out = &own;
  assert_int_equal(jl_block_packing_init(out, 16, &err), JL_OK);
  assert_int_equal(jl_trunk_grid_fill(g, threads, offsets, 0.0, NULL, out, info, &err), JL_OK);
  assert_int_equal(info->count, out->count);
  assert_true(info->complete);
  jl_trunk_report rep;
  assert_int_equal(jl_trunk_check_packing(g, out, &rep, &err), JL_OK);
  assert_true(rep.legal);
  int n = out->count;
  jl_block_packing_free(&own);
  return n;
}

static int grid_box(double x, double y, double z, jl_grid_info *info) {
  const double lo[1][3] = {{0, 0, 0}}, hi[1][3] = {{x, y, z}};
  jl_mesh m;
  make_boxes(&m, 1, lo, hi);
  jl_trunk_geom g;
  jl_error err = {0};
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  int n = grid_of(&g, 2, 0, info, NULL);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
  return n;
}

static void assert_edges(const jl_grid_info *info, int ex, int ey, int ez) {
  assert_int_equal(info->edges[0], ex);
  assert_int_equal(info->edges[1], ey);
  assert_int_equal(info->edges[2], ez);
}

static void test_grid_box_410x210x110(void **state) {
  (void)state;
  /* along x, y, z: 200,100,50 -> 2*2*2 = 8; 200,50,100 -> 2*4*1 = 8;
   * 100,200,50 -> 4*1*2 = 8; 50,200,100 -> 8*1*1 = 8; 200 upright: 0.
   * The tie goes to the first orientation, at offset 0. */
  jl_grid_info info;
  assert_int_equal(grid_box(410, 210, 110, &info), 8);
  assert_edges(&info, 0, 1, 2);
  for (int w = 0; w < 3; ++w) assert_true(info.offset[w] == 0.0);
}

static void test_grid_box_last_orientation_wins(void **state) {
  (void)state;
  /* 160 x 120 x 420: only 200 upright fits; 100,50,200 -> 1*2*2 = 4,
   * 50,100,200 -> 3*1*2 = 6 (the last of the six orientations). */
  jl_grid_info info;
  assert_int_equal(grid_box(160, 120, 420, &info), 6);
  assert_edges(&info, 2, 1, 0);
}

static void test_grid_box_second_orientation_wins(void **state) {
  (void)state;
  /* 260 x 260 x 110: 200,100,50 -> 1*2*2 = 4; 100,200,50 -> 4;
   * 200,50,100 -> 1*5*1 = 5 (and 50,200,100 -> 5, later in the order). */
  jl_grid_info info;
  assert_int_equal(grid_box(260, 260, 110, &info), 5);
  assert_edges(&info, 0, 2, 1);
}

static void test_grid_offset_wins(void **state) {
  (void)state;
  /* A 400 x 100 x 50 room from x = 25, and a small box at the origin that
   * moves the bounding box corner: the lattice at offset 0 holds one block
   * (x 200..400), at offset 25 = 1/8 of 200 two (25..225, 225..425). */
  const double lo[2][3] = {{25, 0, 0}, {0, 200, 0}}, hi[2][3] = {{425, 100, 50}, {10, 210, 10}};
  jl_mesh m;
  make_boxes(&m, 2, lo, hi);
  jl_trunk_geom g;
  jl_error err = {0};
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  jl_grid_info info;
  assert_int_equal(grid_of(&g, 2, 0, &info, NULL), 2);
  assert_edges(&info, 0, 1, 2);
  assert_true(info.offset[0] == 25.0 && info.offset[1] == 0.0 && info.offset[2] == 0.0);
  assert_int_equal(grid_of(&g, 2, 1, &info, NULL), 1);  /* offset 0 only */
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

static void test_grid_stop_before_start(void **state) {
  (void)state;
  const double lo[1][3] = {{0, 0, 0}}, hi[1][3] = {{410, 210, 110}};
  jl_mesh m;
  make_boxes(&m, 1, lo, hi);
  jl_trunk_geom g;
  jl_error err = {0};
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  volatile sig_atomic_t stop = 1;
  jl_block_packing p = {0};
  jl_grid_info info;
  assert_int_equal(jl_block_packing_init(&p, 4, &err), JL_OK);
  assert_int_equal(jl_trunk_grid_fill(&g, 2, 0, 0.0, &stop, &p, &info, &err), JL_OK);
  assert_int_equal(info.count, 0);
  assert_int_equal(p.count, 0);
  assert_false(info.complete);
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* ---- the repository meshes ---- */

typedef struct mesh_geom {
  jl_mesh mesh;
  jl_trunk_geom geom;
} mesh_geom;

static void load_mesh(mesh_geom *f, const char *file) {
  jl_error err = {0};
  memset(f, 0, sizeof *f);
  mesh_fixture_load(&f->mesh, file);
  assert_int_equal(jl_trunk_geom_init(&f->geom, &f->mesh, din, &err), JL_OK);
}

static void free_mesh(mesh_geom *f) {
  jl_trunk_geom_free(&f->geom);
  jl_mesh_free(&f->mesh);
}

static void test_grid_cuboid_mesh_200(void **state) {
  (void)state;
  mesh_geom f;
  load_mesh(&f, "cuboid-1000x500x400.stl");
  jl_grid_info info;
  assert_int_equal(grid_of(&f.geom, 2, 0, &info, NULL), 200);
  free_mesh(&f);
}

static void test_grid_not_above_layered(void **state) {
  (void)state;
  /* The layered fill can stack the grid's layers (same heights, offsets and
   * orientation), so when complete it never holds fewer blocks. */
  static const char *const files[] = {"cuboid-1000x500x400.stl", "slanted-seat-back.stl", "sedan.stl",
                                      "hatchback.obj"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    mesh_geom f;
    load_mesh(&f, files[i]);
    jl_grid_info gi;
    int grid = grid_of(&f.geom, 2, 0, &gi, NULL);
    jl_error err = {0};
    jl_block_packing p = {0};
    jl_baseline_info bi;
    assert_int_equal(jl_block_packing_init(&p, 256, &err), JL_OK);
    assert_int_equal(jl_trunk_baseline(&f.geom, 2, 0, &p, &bi, &err), JL_OK);
    assert_true(bi.complete);
    printf("%s: grid %d, layered %d\n", files[i], grid, bi.count);
    assert_true(grid > 0);
    assert_true(grid <= bi.count);
    jl_block_packing_free(&p);
    free_mesh(&f);
  }
}

static void test_grid_threads_agree(void **state) {
  (void)state;
  mesh_geom f;
  load_mesh(&f, "slanted-seat-back.stl");
  jl_grid_info ia, ib;
  jl_block_packing a = {0}, b = {0};
  grid_of(&f.geom, 1, 0, &ia, &a);
  grid_of(&f.geom, 2, 0, &ib, &b);
  assert_int_equal(a.count, b.count);
  assert_true(a.count > 0);
  assert_memory_equal(ia.edges, ib.edges, sizeof ia.edges);
  assert_memory_equal(ia.offset, ib.offset, sizeof ia.offset);
  assert_memory_equal(a.centre, b.centre, (size_t)a.count * 3 * sizeof(double));
  assert_memory_equal(a.quat, b.quat, (size_t)a.count * 4 * sizeof(double));
  assert_true(ia.boxes_tested == ib.boxes_tested);
  jl_block_packing_free(&a);
  jl_block_packing_free(&b);
  free_mesh(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grid_box_410x210x110),
    cmocka_unit_test(test_grid_box_last_orientation_wins),
    cmocka_unit_test(test_grid_box_second_orientation_wins),
    cmocka_unit_test(test_grid_offset_wins),
    cmocka_unit_test(test_grid_stop_before_start),
    cmocka_unit_test(test_grid_cuboid_mesh_200),
    cmocka_unit_test(test_grid_not_above_layered),
    cmocka_unit_test(test_grid_threads_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
