/* Legalization (trunk_legalize.c): a packing with known small overlaps
 * (block/wall 1 mm, block/block 1 mm) becomes legal with all its blocks,
 * each moved by its overlap to within the check's tolerance; a block standing deep through floor and
 * ceiling is the one dropped, the others kept to the bit; a block whose
 * centre is outside is dropped at once; nothing is kept at or below the
 * count to beat; a block a chain turned a little is turned straight. Legality is decided by the exact check and by the
 * test-local cuboid check. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "block_relax.h"
#include "surface_grid.h"
#include "trunk_check.h"
#include "trunk_legalize.h"
#include "trunk_test_check.h"

static const jl_block_size din = {200, 100, 50};

typedef struct fixture {
  jl_mesh m;
  jl_trunk_geom g;
  jl_block_packing p;
  cuboid_check cc;
} fixture;

static void fixture_init(fixture *f, double x, double y, double z) {
  double lo[3] = {0, 0, 0}, hi[3] = {x, y, z};
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&f->m, lo, hi, &err), JL_OK);
  assert_int_equal(jl_trunk_geom_init(&f->g, &f->m, din, &err), JL_OK);
  assert_int_equal(jl_block_packing_init(&f->p, 8, &err), JL_OK);
  /* legal up to the exact check's tolerance: the pushes leave contacts a
   * quarter of it deep rather than a gap at every block of a row */
  f->cc = (cuboid_check){{0, 0, 0}, {x, y, z}, {100, 50, 25}, 0, f->g.tol};
}

static void fixture_free(fixture *f) {
  jl_block_packing_free(&f->p);
  jl_trunk_geom_free(&f->g);
  jl_cuboid_mesh_free(&f->m);
}

static void push_block(fixture *f, double x, double y, double z, jl_quat q) {
  jl_error err = {0};
  const double c[3] = {x, y, z}, qq[4] = {q.w, q.x, q.y, q.z};
  assert_int_equal(jl_block_packing_push(&f->p, c, qq, &err), JL_OK);
}

static void assert_legal(fixture *f) {
  jl_trunk_report r;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(&f->g, &f->p, &r, &err), JL_OK);
  assert_true(r.legal);
  double worst = 0.0;
  assert_int_equal(cuboid_check_fn(&f->cc, &f->p, &worst), 1);
}

/* 700 x 220 x 60: A crosses the wall x = 0 by 1 mm, B overlaps A by 1 mm
 * along x, C lies clear. All three fit; A ends on the wall (x = 100 +
 * margin), B just past A, C untouched. */
static void test_small_overlaps_become_legal(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 700, 220, 60);
  jl_quat q = jl_axis_orientation(0);
  push_block(&f, 99, 55, 30, q);
  push_block(&f, 298, 55, 30, q);
  push_block(&f, 500, 160, 30, q);
  jl_trunk_report r0;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(&f.g, &f.p, &r0, &err), JL_OK);
  assert_false(r0.legal);
  jl_legalize_info info;
  assert_int_equal(jl_trunk_legalize(&f.g, &f.p, 2, 0, NULL, &info, &err), JL_OK);
  print_message("sweeps %d, moved %d, checks %d, dropped %d + %d\n", info.sweeps, info.moved,
                info.checks, info.dropped_outside, info.dropped_stuck);
  assert_true(info.legal);
  assert_int_equal(f.p.count, 3);
  assert_int_equal(info.dropped_outside + info.dropped_stuck, 0);
  assert_legal(&f);
  /* A on the wall, B against A: each moved by its overlap, to within the
   * tolerance */
  assert_true(fabs(f.p.centre[0] - 100.0) <= f.g.tol);
  assert_true(fabs(f.p.centre[3] - 300.0) <= 2.0 * f.g.tol);
  for (int i = 0; i < 2; ++i) {
    assert_true(fabs(f.p.centre[3 * i + 1] - 55.0) < 1e-9);
    assert_true(fabs(f.p.centre[3 * i + 2] - 30.0) < 1e-9);
  }
  assert_true(f.p.centre[6] == 500.0 && f.p.centre[7] == 160.0 && f.p.centre[8] == 30.0);
  assert_int_equal(info.moved, 2);
  fixture_free(&f);
}

/* 1200 x 100 x 50 holds a row of six blocks end to end with no room to
 * spare. Each moved along the row by up to 0.5 mm (overlaps of up to 1 mm,
 * two blocks into the end walls), the row is legal again with all six:
 * pushes leave no gaps that would add up along it. */
static void test_tight_row(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 1200, 100, 50);
  jl_quat q = jl_axis_orientation(0);
  const double shift[6] = {-0.5, 0.3, -0.2, 0.5, -0.4, 0.45};
  for (int i = 0; i < 6; ++i) push_block(&f, 100.0 + 200.0 * i + shift[i], 50, 25, q);
  jl_legalize_info info;
  jl_error err = {0};
  assert_int_equal(jl_trunk_legalize(&f.g, &f.p, 5, 0, NULL, &info, &err), JL_OK);
  print_message("sweeps %d, moved %d, checks %d\n", info.sweeps, info.moved, info.checks);
  assert_true(info.legal);
  assert_int_equal(f.p.count, 6);
  for (int i = 0; i < 6; ++i) assert_true(fabs(f.p.centre[3 * i] - (100.0 + 200.0 * i)) < 1e-3);
  assert_legal(&f);
  fixture_free(&f);
}

/* 620 x 220 x 60 holds 4 flat blocks (2 x 2) beside a 220 x 220 free
 * square. A block standing there on its 50 x 100 end is 200 mm tall and
 * crosses floor and ceiling by 70 mm: pushed down out of the ceiling its
 * centre leaves through the floor, and it is dropped as outside. One on
 * its 200 x 50 side is 100 mm tall: pushed between floor and ceiling it
 * never fits and is dropped as the deepest violator after the sweeps. Only
 * that block goes; the others never moved. */
static void test_deep_block_dropped(void **state) {
  (void)state;
  for (int kind = 0; kind < 2; ++kind) {
    fixture f;
    fixture_init(&f, 620, 220, 60);
    jl_quat q = jl_axis_orientation(0), up = jl_axis_orientation(kind ? 1 : 3);
    push_block(&f, 100, 55, 30, q);
    push_block(&f, 300, 55, 30, q);
    push_block(&f, kind ? 510 : 520, 110, 30, up);
    push_block(&f, 100, 165, 30, q);
    push_block(&f, 300, 165, 30, q);
    jl_block_packing keep, again;
    jl_error err = {0};
    assert_int_equal(jl_block_packing_init(&keep, 4, &err), JL_OK);
    assert_int_equal(jl_block_packing_init(&again, 4, &err), JL_OK);
    assert_int_equal(jl_block_packing_copy(&again, &f.p, &err), JL_OK);
    for (int i = 0; i < 5; ++i)
      if (i != 2) assert_int_equal(jl_block_packing_push(&keep, f.p.centre + 3 * i, f.p.quat + 4 * i, &err), JL_OK);
    jl_legalize_info info;
    assert_int_equal(jl_trunk_legalize(&f.g, &f.p, 3, 0, NULL, &info, &err), JL_OK);
    print_message("sweeps %d, moved %d, checks %d, dropped %d + %d\n", info.sweeps, info.moved,
                  info.checks, info.dropped_outside, info.dropped_stuck);
    assert_true(info.legal);
    assert_int_equal(info.dropped_outside, kind ? 0 : 1);
    assert_int_equal(info.dropped_stuck, kind ? 1 : 0);
    assert_int_equal(f.p.count, 4);
    assert_int_equal(info.moved, 0);
    assert_memory_equal(f.p.centre, keep.centre, sizeof(double) * 12);
    assert_memory_equal(f.p.quat, keep.quat, sizeof(double) * 16);
    assert_legal(&f);
    /* with 4 to beat nothing is kept, and the caller learns so */
    assert_int_equal(jl_trunk_legalize(&f.g, &again, 4, 0, NULL, &info, &err), JL_OK);
    assert_false(info.legal);
    assert_int_equal(info.dropped_stuck, 0);
    jl_block_packing_free(&again);
    jl_block_packing_free(&keep);
    fixture_free(&f);
  }
}

/* A block whose centre lies below the floor is dropped before any push;
 * one overlapping its neighbour by 1 mm is moved instead. */
static void test_outside_dropped(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 620, 220, 60);
  jl_quat q = jl_axis_orientation(0);
  push_block(&f, 100, 55, 30, q);
  push_block(&f, 300, 55, -40, q);
  push_block(&f, 299, 55, 30, q);
  jl_legalize_info info;
  jl_error err = {0};
  assert_int_equal(jl_trunk_legalize(&f.g, &f.p, 1, 0, NULL, &info, &err), JL_OK);
  assert_true(info.legal);
  assert_int_equal(info.dropped_outside, 1);
  assert_int_equal(info.dropped_stuck, 0);
  assert_int_equal(f.p.count, 2);
  assert_true(f.p.centre[3 + 2] == 30.0);
  assert_legal(&f);
  fixture_free(&f);
}

/* Only blocks from `from` on are looked at first: a new block overlapping
 * the end of a legal row by 1 mm gets room, the row's blocks pushed as
 * needed; all three kept. */
static void test_from_new_block(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 700, 220, 60);
  jl_quat q = jl_axis_orientation(0);
  push_block(&f, 100, 55, 30, q);
  push_block(&f, 300, 55, 30, q);
  push_block(&f, 499, 55, 30, q);
  jl_legalize_info info;
  jl_error err = {0};
  assert_int_equal(jl_trunk_legalize(&f.g, &f.p, 2, 2, NULL, &info, &err), JL_OK);
  assert_true(info.legal);
  assert_int_equal(f.p.count, 3);
  assert_true(f.p.centre[6] >= 499.0 && f.p.centre[6] <= 500.0 + f.g.tol);
  assert_legal(&f);
  fixture_free(&f);
}

/* 400 x 100 x 50 holds two blocks end to end, exactly. The second turned
 * by 3 degrees about z needs 204.9 x 110.3 mm: no push fits it, and the
 * legalization keeps no more than one. Straightened it fits; an aligned
 * block keeps its quaternion to the bit, and one turned by 20 degrees is
 * left alone. */
static void test_turned_block_straightened(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 400, 100, 50);
  jl_quat q = jl_axis_orientation(0);
  jl_quat t3 = jl_quat_axis_angle(jl_v3(0, 0, 1), 3.0 * JL_PI / 180.0);
  push_block(&f, 100, 50, 25, q);
  push_block(&f, 300, 50, 25, t3);
  jl_block_packing turned;
  jl_error err = {0};
  assert_int_equal(jl_block_packing_init(&turned, 2, &err), JL_OK);
  assert_int_equal(jl_block_packing_copy(&turned, &f.p, &err), JL_OK);
  jl_legalize_info info;
  assert_int_equal(jl_trunk_legalize(&f.g, &turned, 1, 0, NULL, &info, &err), JL_OK);
  assert_false(info.legal);
  assert_int_equal(jl_trunk_straighten(&din, &f.p, 0, 10.0), 1);
  assert_memory_equal(f.p.quat, &q, sizeof q);
  assert_int_equal(jl_trunk_legalize(&f.g, &f.p, 1, 0, NULL, &info, &err), JL_OK);
  assert_true(info.legal);
  assert_int_equal(f.p.count, 2);
  assert_legal(&f);
  jl_quat t20 = jl_quat_axis_angle(jl_v3(0, 0, 1), 20.0 * JL_PI / 180.0);
  double q20[4] = {t20.w, t20.x, t20.y, t20.z};
  memcpy(f.p.quat + 4, q20, sizeof q20);
  assert_int_equal(jl_trunk_straighten(&din, &f.p, 0, 10.0), 0);
  assert_memory_equal(f.p.quat + 4, q20, sizeof q20);
  jl_block_packing_free(&turned);
  fixture_free(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_small_overlaps_become_legal),
    cmocka_unit_test(test_tight_row),
    cmocka_unit_test(test_deep_block_dropped),
    cmocka_unit_test(test_outside_dropped),
    cmocka_unit_test(test_from_new_block),
    cmocka_unit_test(test_turned_block_straightened),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
