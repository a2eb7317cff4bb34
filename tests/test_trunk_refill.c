/* Region refill (trunk_refill.c): trunks whose axis-aligned fill wastes
 * space that the fill in a small turn of the frame does not. A box pitched
 * by JL_REFILL_TURN_DEG about y holds exactly as many blocks as its volume
 * in its own frame (every edge a multiple of the block's), which no
 * axis-aligned packing reaches: its floor and lid slope by 5 degrees, so a
 * layer of 50 mm blocks loses a wedge at each end. Emptied and refilled in
 * the frame pitched back, it is packed to its volume bound; the result
 * passes the exact check and is the same on 1 and 2 threads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "box_mesh.h"
#include "mesh.h"
#include "trunk_baseline.h"
#include "trunk_check.h"
#include "trunk_frame.h"
#include "trunk_refill.h"

static const jl_block_size din = {200, 100, 50};

/* The box [0, lx] x [0, ly] x [0, lz] turned by R^T, R the frame pitched
 * by deg (p' = R p): the refill's frame pitched by deg turns it back. */
static void pitched_box(jl_mesh *m, double lx, double ly, double lz, double deg) {
  double v[24], R[3][3], w[24];
  int t[36];
  box_arrays(0, 0, 0, lx, ly, lz, 0, v, t);
  jl_trunk_frame_from_angles(0.0, deg * (3.14159265358979323846 / 180.0), 0.0, R);
  for (int k = 0; k < 8; ++k)
    for (int e = 0; e < 3; ++e) w[3 * k + e] = R[0][e] * v[3 * k] + R[1][e] * v[3 * k + 1] + R[2][e] * v[3 * k + 2];
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, w, 8, t, 12, &err), JL_OK);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate(m, "pitched box", &rep, &err), JL_OK);
}

/* Layered fill in the mesh's frame, then the refill on `threads` threads. */
static void refill_run(const jl_trunk_geom *g, int threads, jl_block_packing *p, int *start, jl_refill_info *info) {
  jl_error err = {0};
  jl_baseline_info bi;
  assert_int_equal(jl_block_packing_init(p, 64, &err), JL_OK);
  assert_int_equal(jl_trunk_baseline(g, 2, 0, p, &bi, &err), JL_OK);
  *start = p->count;
  assert_int_equal(jl_trunk_refill(g, NULL, p, threads, 0.0, NULL, NULL, NULL, info, &err), JL_OK);
  jl_trunk_report r;
  assert_int_equal(jl_trunk_check_packing(g, p, &r, &err), JL_OK);
  assert_true(r.legal);
}

static void check_case(double lx, double ly, double lz, int expect) {
  jl_mesh m = {0};
  pitched_box(&m, lx, ly, lz, JL_REFILL_TURN_DEG);
  jl_trunk_geom g;
  jl_error err = {0};
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  jl_block_packing a = {0}, b = {0};
  jl_refill_info ia, ib;
  int sa = 0, sb = 0;
  refill_run(&g, 1, &a, &sa, &ia);
  refill_run(&g, 2, &b, &sb, &ib);
  assert_true(sa < expect);  /* the axis-aligned fill leaves the wedges */
  assert_int_equal(a.count, expect);
  assert_int_equal(ia.gained, expect - sa);
  assert_true(ia.kept >= 1);
  assert_true(ia.complete);
  /* the same blocks on 1 and 2 threads */
  assert_int_equal(sb, sa);
  assert_int_equal(b.count, a.count);
  assert_memory_equal(a.centre, b.centre, 3 * sizeof(double) * (size_t)a.count);
  assert_memory_equal(a.quat, b.quat, 4 * sizeof(double) * (size_t)a.count);
  jl_block_packing_free(&a);
  jl_block_packing_free(&b);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* 300 x 200 x 150 mm: 3 x 1 x 3 blocks of 100 x 200 x 50 (9 L); pitched, its
 * footprint (312 x 200 mm) lies within the smallest region, which then
 * holds the whole trunk. */
static void test_pitched_box_whole(void **state) {
  (void)state;
  check_case(300.0, 200.0, 150.0, 9);
}

/* 300 x 1200 x 150 mm: 3 x 6 x 3 blocks (54 L). Regions are column boxes
 * across y, cut where the fill's rows end; each refilled part is a pitched
 * box again, packed whole in the pitched frame when its length along y is a
 * multiple of 200 mm. */
static void test_pitched_box_regions(void **state) {
  (void)state;
  check_case(300.0, 1200.0, 150.0, 54);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pitched_box_whole),
    cmocka_unit_test(test_pitched_box_regions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
