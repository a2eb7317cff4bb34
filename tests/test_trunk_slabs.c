/* The slab fill (trunk_slabs.c): exact counts on cuboids (200 in the
 * 1000 x 500 x 400 trunk; 4 = the volume bound in a 300 x 300 x 50 box
 * where the one-orientation-per-layer baseline holds 3), every packing
 * legal by the exact check, the same packing on 1 and 2 threads, and an
 * empty packing marked incomplete when the deadline or stop flag is hit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mesh.h"
#include "timer.h"
#include "trunk_baseline.h"
#include "trunk_check.h"
#include "trunk_slabs.h"

static const jl_block_size din = {200, 100, 50};

/* A prism: a convex counter-clockwise profile in (x, z), y from 0 to w. */
static void make_prism(jl_mesh *m, const double (*prof)[2], int n, double w) {
  double v[2 * 8 * 3];
  int t[3 * (2 * 8 + 2 * 6)];
  int nt = 0;
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < n; ++i) {
      v[3 * (s * n + i)] = prof[i][0];
      v[3 * (s * n + i) + 1] = s ? w : 0.0;
      v[3 * (s * n + i) + 2] = prof[i][1];
    }
  for (int i = 0; i < n; ++i) {
    int j = (i + 1) % n;
    int a[6] = {i, j, n + j, i, n + j, n + i};
    memcpy(t + 3 * nt, a, sizeof a);
    nt += 2;
  }
  for (int k = 1; k + 1 < n; ++k) {
    int a[6] = {0, k + 1, k, n, n + k, n + k + 1};
    memcpy(t + 3 * nt, a, sizeof a);
    nt += 2;
  }
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 2 * n, t, nt, &err), JL_OK);
  assert_int_equal(jl_mesh_validate(m, "prism", NULL, &err), JL_OK);
}

static void make_box(jl_mesh *m, double x, double y, double z) {
  const double prof[4][2] = {{0, 0}, {x, 0}, {x, z}, {0, z}};
  make_prism(m, prof, 4, y);
}

/* Slab fill of the mesh; asserts the packing passes the exact check and
 * matches the info. Returns the count. */
static int slab_count(const jl_mesh *m, int axis, int zones, int threads, jl_block_packing *out) {
  jl_error err = {0};
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, m, din, &err), JL_OK);
  jl_slab_info info;
  assert_int_equal(jl_trunk_slab_fill(&g, axis, zones, 0.0, threads, 0.0, NULL, out, &info, &err), JL_OK);
  assert_int_equal(info.count, out->count);
  assert_int_equal(info.complete, 1);
  jl_trunk_report rep;
  assert_int_equal(jl_trunk_check_packing(&g, out, &rep, &err), JL_OK);
  assert_true(rep.legal);
  jl_trunk_geom_free(&g);
  return out->count;
}

static void test_slabs_cuboid_200(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 1000, 500, 400);
  jl_block_packing p = {0};
  assert_int_equal(slab_count(&m, 0, 0, 2, &p), 200);
  assert_int_equal(slab_count(&m, 1, 1, 2, &p), 200);
  jl_block_packing_free(&p);
  jl_mesh_free(&m);
}

/* 300 x 300 x 50: every layer of one orientation holds 3 blocks (200 x 100
 * on a 300 x 300 floor: 1 x 3), the baseline 3; a slab 200 deep with three
 * blocks across and one 100 deep with one turned block hold 4, the volume
 * bound (4.5 L). */
static void test_slabs_beat_one_orientation(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 300, 300, 50);
  jl_error err = {0};
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  jl_block_packing base = {0};
  jl_baseline_info bi;
  assert_int_equal(jl_trunk_baseline(&g, 1, 0, &base, &bi, &err), JL_OK);
  assert_int_equal(base.count, 3);
  jl_block_packing p = {0};
  for (int axis = 0; axis < 2; ++axis)
    for (int zones = 0; zones < 2; ++zones) assert_int_equal(slab_count(&m, axis, zones, 1, &p), 4);
  jl_block_packing_free(&p);
  jl_block_packing_free(&base);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* A sloped seat back (the slanted-seat-back mesh at half size): legal, at
 * least one block, the same packing on 1 and 2 threads. */
static void test_slabs_slope_threads_agree(void **state) {
  (void)state;
  const double prof[4][2] = {{0, 0}, {450, 0}, {325, 225}, {0, 225}};
  jl_mesh m;
  make_prism(&m, prof, 4, 500);
  jl_block_packing a = {0}, b = {0};
  int na = slab_count(&m, 1, 1, 1, &a);
  int nb = slab_count(&m, 1, 1, 2, &b);
  print_message("slope: %d blocks\n", na);
  assert_true(na > 0);
  assert_int_equal(na, nb);
  assert_memory_equal(a.centre, b.centre, 3 * sizeof(double) * (size_t)na);
  assert_memory_equal(a.quat, b.quat, 4 * sizeof(double) * (size_t)na);
  jl_block_packing_free(&a);
  jl_block_packing_free(&b);
  jl_mesh_free(&m);
}

/* A passed deadline or a set stop flag: an empty packing, marked incomplete. */
static void test_slabs_limits_and_bad_input(void **state) {
  (void)state;
  jl_mesh m;
  make_box(&m, 1000, 500, 400);
  jl_error err = {0};
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  jl_block_packing p = {0};
  jl_slab_info info;
  assert_int_equal(jl_trunk_slab_fill(&g, 0, 1, 0.0, 2, jl_time_now() - 1.0, NULL, &p, &info, &err), JL_OK);
  assert_int_equal(info.complete, 0);
  assert_int_equal(p.count, 0);
  volatile sig_atomic_t stop = 1;
  assert_int_equal(jl_trunk_slab_fill(&g, 1, 1, 0.0, 2, 0.0, &stop, &p, &info, &err), JL_OK);
  assert_int_equal(info.complete, 0);
  assert_int_equal(p.count, 0);
  assert_int_equal(jl_trunk_slab_fill(&g, 2, 1, 0.0, 2, 0.0, NULL, &p, &info, &err), JL_ERR_INPUT);
  assert_int_equal(jl_trunk_slab_fill(&g, 0, 1, 30.0, 2, 0.0, NULL, &p, &info, &err), JL_ERR_INPUT);
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_slabs_cuboid_200),
    cmocka_unit_test(test_slabs_beat_one_orientation),
    cmocka_unit_test(test_slabs_slope_threads_agree),
    cmocka_unit_test(test_slabs_limits_and_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
