/* Collision detection against exact geometry, and the broad phase against
 * brute force all-pairs on random scenes, for 1 and many threads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "broad_math.h"
#include "broad_phase.h"
#include "collide.h"
#include "narrow_phase.h"
#include "rng.h"

#define TOL 1e-12

static void assert_near(double a, double b, double tol) {
  if (!(fabs(a - b) <= tol)) fail_msg("%.17g != %.17g (tol %g)", a, b, tol);
}

static void assert_vec(jl_vec3 a, jl_vec3 b, double tol) {
  assert_near(a.x, b.x, tol);
  assert_near(a.y, b.y, tol);
  assert_near(a.z, b.z, tol);
}

static jl_shape_pose sphere(jl_vec3 c, double r) {
  jl_shape_pose p = {JL_SHAPE_SPHERE, c, jl_quat_identity(), jl_v3(r, r, r)};
  return p;
}
static jl_shape_pose box(jl_vec3 c, jl_quat q, jl_vec3 h) {
  jl_shape_pose p = {JL_SHAPE_BOX, c, q, h};
  return p;
}
static jl_shape_pose plane(jl_vec3 p, jl_vec3 n) {
  jl_shape_pose s = {JL_SHAPE_PLANE, p, jl_quat_identity(), n};
  return s;
}

/* The manifold point matching (x, y, z) within tol; fails if none. */
static int find_point(const jl_manifold *m, jl_vec3 p, double tol) {
  for (int k = 0; k < m->count; ++k)
    if (jl_v3_len(jl_v3_sub(m->point[k], p)) <= tol) return k;
  fail_msg("no contact point at (%g, %g, %g)", p.x, p.y, p.z);
  return -1;
}

static void test_sphere_plane(void **state) {
  (void)state;
  jl_manifold m;
  jl_shape_pose s = sphere(jl_v3(0.3, -0.2, 0.6), 0.5), p = plane(jl_v3(5, 7, 0), jl_v3(0, 0, 1));
  assert_int_equal(jl_narrow_collide(&s, &p, 0.2, &m), 1);
  assert_near(m.gap[0], 0.1, TOL);
  assert_vec(m.normal, jl_v3(0, 0, -1), TOL);
  assert_vec(m.point[0], jl_v3(0.3, -0.2, 0.05), TOL);
  assert_int_equal(jl_narrow_collide(&s, &p, 0.05, &m), 0);
  /* Reversed order: the normal flips, the rest stays. */
  assert_int_equal(jl_narrow_collide(&p, &s, 0.2, &m), 1);
  assert_vec(m.normal, jl_v3(0, 0, 1), TOL);
  assert_near(m.gap[0], 0.1, TOL);
  /* Tilted plane through the origin, sphere sunk 0.1 into it. */
  jl_vec3 n = jl_v3_normalize(jl_v3(1, 2, 2));
  s = sphere(jl_v3_scale(n, 0.4), 0.5);
  p = plane(jl_v3(0, 0, 0), n);
  assert_int_equal(jl_narrow_collide(&s, &p, 0.0, &m), 1);
  assert_near(m.gap[0], -0.1, TOL);
  assert_vec(m.point[0], jl_v3_scale(n, -0.05), TOL);
}

static void test_sphere_sphere(void **state) {
  (void)state;
  jl_manifold m;
  jl_shape_pose a = sphere(jl_v3(1, 1, 1), 1.0), b = sphere(jl_v3(1, 4, 1), 1.5);
  assert_int_equal(jl_narrow_collide(&a, &b, 0.6, &m), 1);
  assert_near(m.gap[0], 0.5, TOL);
  assert_vec(m.normal, jl_v3(0, 1, 0), TOL);
  assert_vec(m.point[0], jl_v3(1, 2.25, 1), TOL);
  assert_int_equal(jl_narrow_collide(&a, &b, 0.5, &m), 0);
  /* Overlapping along a diagonal: distance 2 with radii 1 and 1.5. */
  jl_vec3 dir = jl_v3_normalize(jl_v3(1, -2, 2));
  b = sphere(jl_v3_add(a.pos, jl_v3_scale(dir, 2.0)), 1.5);
  assert_int_equal(jl_narrow_collide(&a, &b, 0.0, &m), 1);
  assert_near(m.gap[0], -0.5, TOL);
  assert_vec(m.normal, dir, TOL);
  assert_vec(m.point[0], jl_v3_add(a.pos, jl_v3_scale(dir, 0.75)), TOL);
}

/* A rotated box: sphere against a face, an edge, a corner, and centre inside. */
static void test_sphere_box(void **state) {
  (void)state;
  jl_quat q = jl_quat_normalize((jl_quat){0.9, 0.2, -0.3, 0.25});
  jl_vec3 pb = jl_v3(2, -1, 0.5), h = jl_v3(1, 2, 3);
  jl_shape_pose b = box(pb, q, h);
  jl_vec3 ax[3];
  jl_quat_to_axes(q, ax);
#define W(x, y, z) \
  jl_v3_add(pb, jl_v3_add(jl_v3_add(jl_v3_scale(ax[0], x), jl_v3_scale(ax[1], y)), jl_v3_scale(ax[2], z)))
  jl_manifold m;
  double r = 0.5;
  /* face +x: centre 0.3 beyond the surface plus r */
  jl_shape_pose s = sphere(W(1 + 0.3 + r, 0.5, -1), r);
  assert_int_equal(jl_narrow_collide(&s, &b, 0.4, &m), 1);
  assert_near(m.gap[0], 0.3, 1e-12);
  assert_vec(m.normal, jl_v3_scale(ax[0], -1), 1e-12);
  assert_vec(m.point[0], W(1.15, 0.5, -1), 1e-12);
  assert_int_equal(jl_narrow_collide(&s, &b, 0.3, &m), 0);
  /* edge (+x, +y): offsets 0.3, 0.4 -> distance 0.5 from the edge, gap 0 */
  s = sphere(W(1.3, 2.4, 0.7), r);
  assert_int_equal(jl_narrow_collide(&s, &b, 0.01, &m), 1);
  assert_near(m.gap[0], 0.0, 1e-12);
  jl_vec3 ne = jl_v3_add(jl_v3_scale(ax[0], 0.6), jl_v3_scale(ax[1], 0.8));
  assert_vec(m.normal, jl_v3_scale(ne, -1), 1e-12);
  assert_vec(m.point[0], W(1, 2, 0.7), 1e-12);
  /* corner (+x, -y, +z): offsets (0.2, -0.2, 0.1) -> distance 0.3, gap -0.2 */
  s = sphere(W(1.2, -2.2, 3.1), r);
  assert_int_equal(jl_narrow_collide(&s, &b, 0.0, &m), 1);
  assert_near(m.gap[0], -0.2, 1e-12);
  jl_vec3 nc = jl_v3_scale(jl_v3_add(jl_v3_add(jl_v3_scale(ax[0], 0.2), jl_v3_scale(ax[1], -0.2)),
                                     jl_v3_scale(ax[2], 0.1)), 1.0 / 0.3);
  assert_vec(m.normal, jl_v3_scale(nc, -1), 1e-12);
  /* midpoint of the corner and the sphere's deepest point */
  jl_vec3 corner = W(1, -2, 3);
  jl_vec3 deep = jl_v3_sub(s.pos, jl_v3_scale(nc, r));
  assert_vec(m.point[0], jl_v3_scale(jl_v3_add(corner, deep), 0.5), 1e-12);
  /* centre inside, 0.1 below face -z: out through that face */
  s = sphere(W(0.2, 0.3, -2.9), r);
  assert_int_equal(jl_narrow_collide(&s, &b, 0.0, &m), 1);
  assert_near(m.gap[0], -0.6, 1e-12);
  assert_vec(m.normal, ax[2], 1e-12);
  /* box first: normal flips */
  assert_int_equal(jl_narrow_collide(&b, &s, 0.0, &m), 1);
  assert_vec(m.normal, jl_v3_scale(ax[2], -1), 1e-12);
#undef W
}

/* A box resting flat on a plane, turned about the normal: its 4 bottom
 * corners with the right gap; a tilted one touches with its lowest corners. */
static void test_box_plane(void **state) {
  (void)state;
  jl_manifold m;
  jl_quat q = jl_quat_axis_angle(jl_v3(0, 0, 1), 0.3);
  jl_shape_pose b = box(jl_v3(1, 2, 0.25 - 0.01), q, jl_v3(1, 0.5, 0.25));
  jl_shape_pose p = plane(jl_v3(0, 0, 0), jl_v3(0, 0, 1));
  assert_int_equal(jl_narrow_collide(&b, &p, 0.005, &m), 4);
  assert_vec(m.normal, jl_v3(0, 0, -1), TOL);
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2) {
      jl_vec3 c = jl_v3_add(jl_v3(1, 2, 0), jl_quat_rotate(q, jl_v3(sx * 1.0, sy * 0.5, 0)));
      c.z = -0.005;
      int k = find_point(&m, c, 1e-12);
      assert_near(m.gap[k], -0.01, 1e-12);
      /* feature = corner index, bottom corners have bit 2 clear */
      assert_int_equal(m.feature[k], (sx > 0 ? 1 : 0) + (sy > 0 ? 2 : 0));
    }
  /* Tilted 30 degrees about x, lowest edge 0.02 above: 2 corners within 0.05. */
  double t = JL_PI / 6;
  jl_quat qt = jl_quat_axis_angle(jl_v3(1, 0, 0), t);
  double low = 0.5 * sin(t) + 0.25 * cos(t);
  b = box(jl_v3(0, 0, low + 0.02), qt, jl_v3(1, 0.5, 0.25));
  assert_int_equal(jl_narrow_collide(&b, &p, 0.05, &m), 2);
  for (int k = 0; k < 2; ++k) {
    assert_near(m.gap[k], 0.02, 1e-12);
    assert_near(m.point[k].z, 0.01, 1e-12);
  }
  assert_int_equal(jl_narrow_collide(&b, &p, 0.02, &m), 0);
}

/* A box on a box, offset: 4 points at the corners of the overlap rectangle. */
static void test_box_box_offset(void **state) {
  (void)state;
  jl_manifold m;
  jl_shape_pose a = box(jl_v3(0, 0, 0), jl_quat_identity(), jl_v3(1, 1, 0.5));
  jl_shape_pose b = box(jl_v3(0.5, 0.3, 1 - 0.02), jl_quat_identity(), jl_v3(1, 1, 0.5));
  assert_int_equal(jl_narrow_collide(&a, &b, 0.0, &m), 4);
  assert_vec(m.normal, jl_v3(0, 0, 1), TOL);
  double xs[2] = {-0.5, 1}, ys[2] = {-0.7, 1};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      int k = find_point(&m, jl_v3(xs[i], ys[j], 0.49), 1e-12);
      assert_near(m.gap[k], -0.02, 1e-12);
    }
  /* The same from b's side: normal flips, points stay. */
  assert_int_equal(jl_narrow_collide(&b, &a, 0.0, &m), 4);
  assert_vec(m.normal, jl_v3(0, 0, -1), TOL);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) find_point(&m, jl_v3(xs[i], ys[j], 0.49), 1e-12);
  /* A small box turned about z, resting 0.01 apart inside the top face. */
  jl_quat q = jl_quat_axis_angle(jl_v3(0, 0, 1), 0.7);
  b = box(jl_v3(0.1, -0.2, 0.5 + 0.3 + 0.01), q, jl_v3(0.3, 0.2, 0.3));
  assert_int_equal(jl_narrow_collide(&a, &b, 0.02, &m), 4);
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2) {
      jl_vec3 c = jl_v3_add(jl_v3(0.1, -0.2, 0.505), jl_quat_rotate(q, jl_v3(sx * 0.3, sy * 0.2, 0)));
      int k = find_point(&m, c, 1e-12);
      assert_near(m.gap[k], 0.01, 1e-12);
    }
  assert_int_equal(jl_narrow_collide(&a, &b, 0.01, &m), 0);
  /* A square turned 45 degrees on a same-size square clips to an octagon:
   * 4 of its 8 corners are kept, all on the octagon, gap exact. */
  b = box(jl_v3(0, 0, 1 - 0.01), jl_quat_axis_angle(jl_v3(0, 0, 1), JL_PI / 4), jl_v3(1, 1, 0.5));
  assert_int_equal(jl_narrow_collide(&a, &b, 0.0, &m), 4);
  double s2 = sqrt(2.0);
  for (int k = 0; k < 4; ++k) {
    assert_near(m.gap[k], -0.01, 1e-12);
    double x = fabs(m.point[k].x), y = fabs(m.point[k].y);
    /* octagon corners: one coordinate +-1, the other +-(sqrt2 - 1) */
    assert_near(fmax(x, y), 1.0, 1e-12);
    assert_near(fmin(x, y), s2 - 1, 1e-12);
    assert_near(m.point[k].z, 0.495, 1e-12);
  }
  /* the four chosen span both sides of the octagon: their centroid is near 0 */
  double cx = 0, cy = 0;
  for (int k = 0; k < 4; ++k) {
    cx += m.point[k].x;
    cy += m.point[k].y;
  }
  assert_true(fabs(cx) < 1.0 && fabs(cy) < 1.0);
}

/* Equal boxes stacked: the incident corners sit on the reference edges, and
 * shifts of 1e-7 either way clip them or not. The point at each corner keeps
 * its feature id (warm starts rely on it), and the 4 ids differ. */
static void test_box_box_stable_ids(void **state) {
  (void)state;
  jl_shape_pose a = box(jl_v3(0, 0, 0.5), jl_quat_identity(), jl_v3(0.5, 0.5, 0.5));
  jl_manifold ref, m;
  jl_shape_pose b = box(jl_v3(0, 0, 1.5), jl_quat_identity(), jl_v3(0.5, 0.5, 0.5));
  assert_int_equal(jl_narrow_collide(&a, &b, 1e-6, &ref), 4);
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < p; ++q) assert_true(ref.feature[p] != ref.feature[q]);
  double shifts[4][2] = {{1e-7, 0}, {-1e-7, 2e-7}, {3e-7, -1e-7}, {-2e-7, -2e-7}};
  for (int s = 0; s < 4; ++s) {
    b.pos = jl_v3(shifts[s][0], shifts[s][1], 1.5 - 1e-8);
    b.quat = jl_quat_axis_angle(jl_v3(0, 0, 1), 1e-7 * (s - 1.5));
    assert_int_equal(jl_narrow_collide(&a, &b, 1e-6, &m), 4);
    for (int p = 0; p < 4; ++p) {
      int k = find_point(&m, ref.point[p], 1e-6);
      assert_int_equal(m.feature[k], ref.feature[p]);
      assert_near(m.gap[k], -1e-8, 1e-12);
    }
  }
}

/* Two cubes turned so that an edge of each crosses the other's: one point. */
static void test_box_box_edge_edge(void **state) {
  (void)state;
  jl_manifold m;
  double s2 = sqrt(2.0);
  jl_shape_pose a = box(jl_v3(0, 0, 0), jl_quat_axis_angle(jl_v3(1, 0, 0), JL_PI / 4), jl_v3(1, 1, 1));
  jl_shape_pose b = box(jl_v3(0.1, -0.2, 2 * s2 - 0.01), jl_quat_axis_angle(jl_v3(0, 1, 0), JL_PI / 4),
                        jl_v3(1, 1, 1));
  assert_int_equal(jl_narrow_collide(&a, &b, 0.0, &m), 1);
  assert_near(m.gap[0], -0.01, 1e-12);
  assert_vec(m.normal, jl_v3(0, 0, 1), 1e-12);
  /* a's top edge runs along x at (y, z) = (0, sqrt2); b's bottom edge along y
   * at (x, z) = (0.1, 2 sqrt2 - 0.01 - sqrt2) */
  assert_vec(m.point[0], jl_v3(0.1, 0, s2 - 0.005), 1e-12);
  assert_true(m.feature[0] >= JL_FEATURE_EDGE_EDGE);
  /* Separated by 0.05: reported within a margin of 0.1, not within 0.05. */
  b.pos.z = 2 * s2 + 0.05;
  assert_int_equal(jl_narrow_collide(&a, &b, 0.1, &m), 1);
  assert_near(m.gap[0], 0.05, 1e-12);
  assert_int_equal(jl_narrow_collide(&a, &b, 0.05, &m), 0);
}

/* Signed distance from p to a shape's surface (< 0 inside). */
static double sdf(const jl_shape_pose *s, jl_vec3 p) {
  if (s->shape == JL_SHAPE_SPHERE) return jl_v3_len(jl_v3_sub(p, s->pos)) - s->size.x;
  if (s->shape == JL_SHAPE_PLANE) return jl_v3_dot(s->size, jl_v3_sub(p, s->pos));
  jl_vec3 l = jl_quat_rotate(jl_quat_conj(s->quat), jl_v3_sub(p, s->pos));
  double q[3] = {fabs(l.x) - s->size.x, fabs(l.y) - s->size.y, fabs(l.z) - s->size.z};
  double out = 0, in = fmax(q[0], fmax(q[1], q[2]));
  for (int k = 0; k < 3; ++k) out += fmax(q[k], 0) * fmax(q[k], 0);
  return sqrt(out) + fmin(in, 0);
}

static double uni(jl_rng *r);

/* Random pairs of every shape combination near contact: for every point,
 * point -/+ gap/2 normal lie on the surfaces of a and b (the two closest
 * surface points the point is the middle of), the normal is a unit vector
 * and points from a to b, and gap < margin. */
static void test_random_pairs_on_surfaces(void **state) {
  (void)state;
  jl_rng r;
  jl_rng_init(&r, 2024, 0, 0);
  int shapes[5][2] = {{JL_SHAPE_SPHERE, JL_SHAPE_SPHERE}, {JL_SHAPE_SPHERE, JL_SHAPE_BOX},
                      {JL_SHAPE_BOX, JL_SHAPE_BOX}, {JL_SHAPE_SPHERE, JL_SHAPE_PLANE},
                      {JL_SHAPE_BOX, JL_SHAPE_PLANE}};
  int points = 0, edge = 0, multi = 0, missed = 0, overlapping = 0;
  for (int c = 0; c < 5; ++c)
    for (int trial = 0; trial < 3000; ++trial) {
      jl_shape_pose s[2];
      for (int k = 0; k < 2; ++k) {
        s[k].shape = shapes[c][k];
        s[k].pos = k ? jl_v3(1.6 * (uni(&r) - 0.5), 1.6 * (uni(&r) - 0.5), 1.6 * (uni(&r) - 0.5))
                     : jl_v3(0, 0, 0);
        s[k].quat = jl_quat_normalize((jl_quat){uni(&r) - 0.5, uni(&r) - 0.5, uni(&r) - 0.5, uni(&r) - 0.5});
        /* a few aligned boxes, for face-face contacts */
        if (uni(&r) < 0.3) s[k].quat = jl_quat_identity();
        s[k].size = jl_v3(0.2 + 0.4 * uni(&r), 0.2 + 0.4 * uni(&r), 0.2 + 0.4 * uni(&r));
        if (s[k].shape == JL_SHAPE_SPHERE) s[k].size.y = s[k].size.z = s[k].size.x;
        if (s[k].shape == JL_SHAPE_PLANE) {
          s[k].size = jl_v3_normalize(jl_v3(uni(&r) - 0.5, uni(&r) - 0.5, uni(&r) - 0.5));
          s[k].pos = jl_v3_scale(s[k].size, -0.6 * uni(&r));
          s[k].quat = jl_quat_identity();
        }
      }
      double margin = 0.05 * uni(&r);
      jl_manifold m;
      int n = jl_narrow_collide(&s[0], &s[1], margin, &m);
      assert_true(n >= 0 && n <= JL_MAX_MANIFOLD);
      /* shapes that overlap (a sampled point inside both) always touch */
      for (int q = 0; q < 40; ++q) {
        jl_vec3 x = jl_v3(1.2 * (uni(&r) - 0.5), 1.2 * (uni(&r) - 0.5), 1.2 * (uni(&r) - 0.5));
        x = jl_v3_add(x, jl_v3_scale(s[1].shape == JL_SHAPE_PLANE ? jl_v3(0, 0, 0) : s[1].pos, 0.5));
        if (sdf(&s[0], x) < 0 && sdf(&s[1], x) < 0) {
          overlapping++;
          if (n == 0) missed++;
          break;
        }
      }
      if (n == 0) continue;
      assert_near(jl_v3_len(m.normal), 1.0, 1e-12);
      for (int p = 0; p < n; ++p) {
        assert_true(m.gap[p] < margin);
        jl_vec3 on_a = jl_v3_sub(m.point[p], jl_v3_scale(m.normal, 0.5 * m.gap[p]));
        jl_vec3 on_b = jl_v3_add(m.point[p], jl_v3_scale(m.normal, 0.5 * m.gap[p]));
        assert_near(sdf(&s[0], on_a), 0.0, 1e-10);
        assert_near(sdf(&s[1], on_b), 0.0, 1e-10);
        /* from a to b: stepping along the normal leaves a (unless deep inside b) */
        if (m.gap[p] > 0) assert_true(sdf(&s[0], jl_v3_add(on_a, jl_v3_scale(m.normal, 1e-6))) > 0);
        if (m.feature[p] >= JL_FEATURE_EDGE_EDGE) edge++;
        points++;
      }
      if (n == 4) multi++;
    }
  /* the trials reached every kind of contact, and none that overlap was missed */
  assert_true(points > 3000 && edge > 10 && multi > 100);
  assert_true(overlapping > 3000);
  assert_int_equal(missed, 0);
}

static void test_separated(void **state) {
  (void)state;
  jl_manifold m;
  jl_quat q = jl_quat_normalize((jl_quat){0.7, 0.1, 0.5, -0.2});
  jl_shape_pose s1 = sphere(jl_v3(0, 0, 0), 1), s2 = sphere(jl_v3(0, 0, 3.2), 1);
  jl_shape_pose b1 = box(jl_v3(0, 0, 0), q, jl_v3(1, 1, 1)), b2 = box(jl_v3(5, 0, 0), q, jl_v3(1, 1, 1));
  jl_shape_pose p = plane(jl_v3(0, 0, -3), jl_v3(0, 0, 1));
  assert_int_equal(jl_narrow_collide(&s1, &s2, 1.0, &m), 0);
  assert_int_equal(jl_narrow_collide(&s2, &b1, 0.1, &m), 0);
  assert_int_equal(jl_narrow_collide(&b1, &b2, 0.5, &m), 0);
  assert_int_equal(jl_narrow_collide(&s1, &p, 1.0, &m), 0);
  assert_int_equal(jl_narrow_collide(&b1, &p, 0.2, &m), 0);
  assert_int_equal(jl_narrow_collide(&p, &p, 1.0, &m), 0);
}

/* ---- random scenes ---- */

static double uni(jl_rng *r) {
  uint32_t a = jl_rng_u32(r), b = jl_rng_u32(r);
  return jl_u01_from_u32(a, b);
}

static void add_body(jl_bodies *b, int shape, int is_static, jl_vec3 p, jl_quat q, jl_vec3 s) {
  jl_error err;
  assert_int_equal(jl_bodies_reserve(b, b->count + 1, &err), JL_OK);
  int i = b->count++;
  b->shape[i] = (uint8_t)shape;
  b->is_static[i] = (uint8_t)is_static;
  b->material[i] = 0;
  b->size[3 * i] = s.x;
  b->size[3 * i + 1] = s.y;
  b->size[3 * i + 2] = s.z;
  b->pos[3 * i] = p.x;
  b->pos[3 * i + 1] = p.y;
  b->pos[3 * i + 2] = p.z;
  b->quat[4 * i] = q.w;
  b->quat[4 * i + 1] = q.x;
  b->quat[4 * i + 2] = q.y;
  b->quat[4 * i + 3] = q.z;
  for (int k = 0; k < 3; ++k) b->vel[3 * i + k] = b->omega[3 * i + k] = b->inv_inertia[3 * i + k] = 0;
  b->inv_mass[i] = is_static ? 0 : 1;
}

/* n spheres and boxes of mixed sizes in a cube of edge L, some static, a
 * large static floor slab, a ground plane and a tilted wall plane. */
static void random_scene(jl_bodies *b, int n, double L, uint64_t seed) {
  jl_error err;
  assert_int_equal(jl_bodies_init(b, n + 4, &err), JL_OK);
  jl_rng r;
  jl_rng_init(&r, seed, 0, 0);
  add_body(b, JL_SHAPE_PLANE, 1, jl_v3(0, 0, 0.2), jl_quat_identity(), jl_v3(0, 0, 1));
  for (int i = 0; i < n; ++i) {
    jl_vec3 p = jl_v3(L * uni(&r), L * uni(&r), L * uni(&r));
    int st = uni(&r) < 0.05;
    double big = uni(&r) < 0.02 ? 4.0 : 1.0;  /* a few bodies four times larger */
    if (uni(&r) < 0.5) {
      double rad = big * (0.1 + 0.3 * uni(&r));
      add_body(b, JL_SHAPE_SPHERE, st, p, jl_quat_identity(), jl_v3(rad, rad, rad));
    } else {
      jl_quat q = jl_quat_normalize((jl_quat){uni(&r) - 0.5, uni(&r) - 0.5, uni(&r) - 0.5, uni(&r) - 0.5});
      jl_vec3 h = jl_v3(big * (0.1 + 0.3 * uni(&r)), big * (0.1 + 0.3 * uni(&r)), big * (0.05 + 0.2 * uni(&r)));
      add_body(b, JL_SHAPE_BOX, st, p, q, h);
    }
    if (i == n / 2) {
      add_body(b, JL_SHAPE_BOX, 1, jl_v3(L / 2, L / 2, 1), jl_quat_identity(), jl_v3(L / 2, L / 2, 0.5));
      add_body(b, JL_SHAPE_PLANE, 1, jl_v3(L - 1, 0, 0), jl_quat_identity(),
               jl_v3_normalize(jl_v3(-1, 0.3, 0.2)));
    }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Broad phase pairs equal all-pairs box tests; contacts equal the narrow
 * phase over all pairs, in (a, b) order. */
static void test_broad_phase_brute_force(void **state) {
  (void)state;
  jl_bodies b;
  random_scene(&b, 3000, 14.0, 11);
  double margin = 0.05;
  jl_error err;
  jl_broad_phase bp;
  assert_int_equal(jl_broad_phase_init(&bp, &err), JL_OK);
  assert_int_equal(jl_broad_phase_run(&b, margin, 4, &bp, &err), JL_OK);
  assert_true(bp.large_count >= 1);   /* the floor slab */
  assert_int_equal(bp.plane_count, 2);
  int n = b.count;
  double *box6 = malloc(sizeof(double) * 6 * n);
  for (int i = 0; i < n; ++i)
    if (b.shape[i] != JL_SHAPE_PLANE) jl_bm_aabb(b.shape, b.size, b.pos, b.quat, i, margin, box6 + 6 * i);
  size_t cap = 1 << 16, count = 0;
  uint64_t *pairs = malloc(cap * sizeof *pairs);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (b.is_static[i] && b.is_static[j]) continue;
      int pi = b.shape[i] == JL_SHAPE_PLANE, pj = b.shape[j] == JL_SHAPE_PLANE;
      int hit;
      if (pi && pj)
        hit = 0;
      else if (pi)
        hit = jl_bm_near_plane(b.pos, b.size, i, box6 + 6 * j, margin);
      else if (pj)
        hit = jl_bm_near_plane(b.pos, b.size, j, box6 + 6 * i, margin);
      else
        hit = jl_bm_overlap(box6 + 6 * i, box6 + 6 * j);
      if (!hit) continue;
      if (count == cap) pairs = realloc(pairs, (cap *= 2) * sizeof *pairs);
      pairs[count++] = ((uint64_t)i << 32) | (uint32_t)j;
    }
  assert_int_equal(bp.pair_count, (int)count);
  assert_true(count > 3000);
  for (size_t p = 0; p < count; ++p) {
    assert_int_equal(bp.pair_a[p], (int)(pairs[p] >> 32));
    assert_int_equal(bp.pair_b[p], (int)(uint32_t)pairs[p]);
  }

  /* Narrow phase over every pair (not only the candidates) finds the same
   * contacts: the inflated boxes lose nothing within the margin. */
  jl_contacts c;
  assert_int_equal(jl_contacts_init(&c, 16, &err), JL_OK);
  assert_int_equal(jl_collide(&b, margin, 4, &bp, &c, &err), JL_OK);
  int k = 0, statics = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (b.is_static[i] && b.is_static[j]) continue;
      int u = i, v = j;
      if (b.is_static[i]) {
        u = j;
        v = i;
      }
      jl_shape_pose pu = jl_body_pose(&b, u), pv = jl_body_pose(&b, v);
      jl_manifold m;
      jl_narrow_collide(&pu, &pv, margin, &m);
      for (int q = 0; q < m.count; ++q, ++k) {
        assert_true(k < c.count);
        assert_int_equal(c.body_a[k], u);
        assert_int_equal(c.body_b[k], v);
        assert_true(c.gap[k] == m.gap[q] && c.gap[k] < margin);
        assert_true(c.point[3 * k] == m.point[q].x && c.point[3 * k + 2] == m.point[q].z);
        assert_true(c.normal[3 * k + 1] == m.normal.y);
        assert_near(jl_v3_len(m.normal), 1.0, 1e-12);
        assert_true(c.key[k] == JL_CONTACT_KEY(i, j, m.feature[q]));
        if (b.is_static[v]) statics++;
      }
    }
  assert_int_equal(c.count, k);
  assert_true(statics > 0 && statics < k);
  /* Keys are unique. */
  uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)c.count);
  memcpy(keys, c.key, sizeof(uint64_t) * (size_t)c.count);
  qsort(keys, (size_t)c.count, sizeof *keys, cmp_u64);
  for (int q = 1; q < c.count; ++q) assert_true(keys[q] != keys[q - 1]);
  free(keys);
  free(pairs);
  free(box6);
  jl_contacts_free(&c);
  jl_broad_phase_free(&bp);
  jl_bodies_free(&b);
}

/* The same contacts, bit for bit and in the same order, for any thread
 * count, and from reused buffers. */
static void test_threads_agree(void **state) {
  (void)state;
  jl_bodies b;
  random_scene(&b, 40000, 40.0, 5);
  jl_error err;
  jl_broad_phase bp1, bpn;
  jl_contacts c1, cn;
  assert_int_equal(jl_broad_phase_init(&bp1, &err), JL_OK);
  assert_int_equal(jl_broad_phase_init(&bpn, &err), JL_OK);
  assert_int_equal(jl_contacts_init(&c1, 16, &err), JL_OK);
  assert_int_equal(jl_contacts_init(&cn, 16, &err), JL_OK);
  assert_int_equal(jl_collide(&b, 0.02, 1, &bp1, &c1, &err), JL_OK);
  assert_true(c1.count > 10000);
  int threads[3] = {3, 8, 2};
  for (int t = 0; t < 3; ++t) {
    assert_int_equal(jl_collide(&b, 0.02, threads[t], &bpn, &cn, &err), JL_OK);
    assert_int_equal(cn.count, c1.count);
    size_t n = (size_t)c1.count;
    assert_memory_equal(cn.body_a, c1.body_a, n * sizeof(int));
    assert_memory_equal(cn.body_b, c1.body_b, n * sizeof(int));
    assert_memory_equal(cn.point, c1.point, 3 * n * sizeof(double));
    assert_memory_equal(cn.normal, c1.normal, 3 * n * sizeof(double));
    assert_memory_equal(cn.gap, c1.gap, n * sizeof(double));
    assert_memory_equal(cn.key, c1.key, n * sizeof(uint64_t));
  }
  jl_contacts_free(&c1);
  jl_contacts_free(&cn);
  jl_broad_phase_free(&bp1);
  jl_broad_phase_free(&bpn);
  jl_bodies_free(&b);
}

static void test_bad_margin(void **state) {
  (void)state;
  jl_bodies b;
  random_scene(&b, 10, 2.0, 1);
  jl_error err;
  jl_broad_phase bp;
  jl_contacts c;
  jl_broad_phase_init(&bp, &err);
  jl_contacts_init(&c, 4, &err);
  assert_int_equal(jl_collide(&b, -1.0, 1, &bp, &c, &err), JL_ERR_INPUT);
  assert_int_equal(jl_collide(&b, NAN, 1, &bp, &c, &err), JL_ERR_INPUT);
  b.pos[3] = NAN;
  assert_int_equal(jl_collide(&b, 0.0, 1, &bp, &c, &err), JL_ERR_INPUT);
  jl_contacts_free(&c);
  jl_broad_phase_free(&bp);
  jl_bodies_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sphere_plane),
    cmocka_unit_test(test_sphere_sphere),
    cmocka_unit_test(test_sphere_box),
    cmocka_unit_test(test_box_plane),
    cmocka_unit_test(test_box_box_offset),
    cmocka_unit_test(test_box_box_stable_ids),
    cmocka_unit_test(test_box_box_edge_edge),
    cmocka_unit_test(test_random_pairs_on_surfaces),
    cmocka_unit_test(test_separated),
    cmocka_unit_test(test_broad_phase_brute_force),
    cmocka_unit_test(test_threads_agree),
    cmocka_unit_test(test_bad_margin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
