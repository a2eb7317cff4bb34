/* Oriented insertion into free pockets (trunk_pockets.c through
 * jl_trunk_pocket_insert): a prism trunk whose top corner is cut by a
 * 45-degree wall, packed with axis-aligned blocks that leave a wedge free
 * (a right isosceles triangle of 146 mm legs against the slope, 210 mm
 * long). No axis-aligned block fits there (the gap fill, which tries all
 * six orientations at every voxel, adds none; by hand: a rectangle of 50 x
 * 100 needs legs of 150), but a block turned flat against the slope does
 * (a 50 mm band along the slope is 106.5 mm long). The pocket insertion
 * adds it and the packing passes the exact check. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "block_batch.h"
#include "block_relax.h"
#include "math3d.h"
#include "mesh.h"
#include "surface_grid.h"
#include "trunk_check.h"
#include "timer.h"
#include "trunk_search.h"

static const jl_block_size din = {200, 100, 50};

/* The polygon (x, z) extruded along y over [0, len]; validation orients it. */
static void prism_mesh(jl_mesh *m, const double (*poly)[2], int n, double len) {
  double v[2 * 16 * 3];
  int t[3 * (4 * 16)];
  int nt = 0;
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < 2; ++s) {
      double *p = v + 3 * (2 * i + s);
      p[0] = poly[i][0];
      p[1] = s ? len : 0.0;
      p[2] = poly[i][1];
    }
  for (int i = 0; i < n; ++i) {
    int a = 2 * i, b = 2 * ((i + 1) % n);
    int q[6] = {a, b, b + 1, a, b + 1, a + 1};
    memcpy(t + 3 * nt, q, sizeof q);
    nt += 2;
  }
  for (int i = 1; i + 1 < n; ++i) {  /* caps: fans (the polygon is convex) */
    int c0[3] = {0, 2 * (i + 1), 2 * i}, c1[3] = {1, 2 * i + 1, 2 * (i + 1) + 1};
    memcpy(t + 3 * nt++, c0, sizeof c0);
    memcpy(t + 3 * nt++, c1, sizeof c1);
  }
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 2 * n, t, nt, &err), JL_OK);
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_validate(m, "prism", &rep, &err), JL_OK);
}

static void test_wedge_takes_turned_block(void **state) {
  (void)state;
  /* 346 x 246 mm cross-section, the corner above (200, 246)-(346, 100) cut off */
  const double poly[5][2] = {{0, 0}, {346, 0}, {346, 100}, {200, 246}, {0, 246}};
  jl_mesh m = {0};
  prism_mesh(&m, poly, 5, 210.0);
  jl_trunk_geom g;
  jl_error err = {0};
  assert_int_equal(jl_trunk_geom_init(&g, &m, din, &err), JL_OK);
  /* flat blocks, the 200 mm edge along y: x [0, 200] four layers high,
   * x [200, 300] two layers; the wedge above the second stays free */
  jl_block_packing p;
  assert_int_equal(jl_block_packing_init(&p, 16, &err), JL_OK);
  const double q[4] = {JL_SQRT_HALF, 0, 0, JL_SQRT_HALF};
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i) {
      const double c[3] = {50.0 + 100.0 * i, 100.0, 25.0 + 50.0 * k};
      assert_int_equal(jl_block_packing_push(&p, c, q, &err), JL_OK);
    }
  for (int k = 0; k < 2; ++k) {
    const double c[3] = {250.0, 100.0, 25.0 + 50.0 * k};
    assert_int_equal(jl_block_packing_push(&p, c, q, &err), JL_OK);
  }
  jl_trunk_report r;
  assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
  assert_true(r.legal);
  int added = -1;
  assert_int_equal(jl_trunk_gap_fill(&m, din, 0.0, &p, 8, 0.0, NULL, jl_trunk_check, &g, &added, &err),
                   JL_OK);
  assert_int_equal(added, 0);
  assert_int_equal(p.count, 10);
  jl_pocket_info info;
  assert_int_equal(jl_trunk_pocket_insert(&g, 0.0, &p, 8, 0.0, NULL, jl_trunk_check, &g, &info, &err),
                   JL_OK);
  print_message("pockets %d, tried %d, added %d in %.3f s\n", info.pockets, info.tried, info.added,
                info.time_s);
  assert_int_equal(info.added, 1);
  assert_int_equal(p.count, 11);
  assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
  assert_true(r.legal);
  /* the new block is turned: its 50 mm edge (z axis) about 45 degrees off
   * the vertical, in the xz plane, along the slope's normal */
  jl_quat qn = {p.quat[40], p.quat[41], p.quat[42], p.quat[43]};
  jl_vec3 ax[3];
  jl_quat_to_axes(qn, ax);
  print_message("new block at (%.1f, %.1f, %.1f), short edge along (%.3f, %.3f, %.3f)\n", p.centre[30],
                p.centre[31], p.centre[32], ax[2].x, ax[2].y, ax[2].z);
  assert_true(fabs(fabs(ax[2].x) - JL_SQRT_HALF) < 0.05 && fabs(fabs(ax[2].z) - JL_SQRT_HALF) < 0.05);
  assert_true(fabs(ax[0].y) > 0.999);  /* the long edge along the prism */
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* The pocket insertion keeps to its time: a large empty trunk for small
 * blocks makes a map of about 8 million voxels, whose distance transform
 * and pocket search ran for 5 and 12 s in a ThreadSanitizer build past a
 * budget of 10 (polled now every row of lines and every 65,536 voxels). */
static void test_pockets_keep_time(void **state) {
  (void)state;
  double lo[3] = {0, 0, 0}, hi[3] = {1000, 500, 400};
  jl_mesh m;
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  const jl_block_size size = {20, 10, 10};
  jl_trunk_geom g;
  assert_int_equal(jl_trunk_geom_init(&g, &m, size, &err), JL_OK);
  jl_block_packing p = {0};
  assert_int_equal(jl_block_demo_packing(&p, lo, hi, &size, 200, 0.0, 0.0, 1, &err), JL_OK);
  const double budget = 0.2;
  jl_pocket_info info;
  double t0 = jl_time_now();
  assert_int_equal(jl_trunk_pocket_insert(&g, 0.0, &p, 8, budget, NULL, jl_trunk_check, &g, &info,
                                          &err),
                   JL_OK);
  double took = jl_time_now() - t0;
  print_message("pocket insertion with %.1f s: %.3f s, %d pockets\n", budget, took, info.pockets);
  /* what is left unpolled: a few passes over the map, each O(voxels) */
#if defined(__SANITIZE_ADDRESS__)
  const double slack = 1.0;  /* the passes run about 5 times slower */
#else
  const double slack = 0.3;
#endif
  assert_true(took < budget + slack);
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_cuboid_mesh_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_wedge_takes_turned_block),
    cmocka_unit_test(test_pockets_keep_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
