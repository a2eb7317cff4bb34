/* Trunk contact simulation on the CPU twin against exact answers: the
 * surface grid, point/box and box/box contacts, the impulse exchange
 * (seed 004 eq. 5.16-5.26), block inertia, and relaxation to legal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "block_batch.h"
#include "surface_grid.h"
#include "trunk_test_check.h"

static const double H[3] = {100.0, 50.0, 25.0};  /* a 200 x 100 x 50 block */

static void axes_of(jl_quat q, jl_vec3 ax[3]) { jl_quat_to_axes(q, ax); }

static void assert_near(double a, double b, double tol) {
  if (!(fabs(a - b) <= tol)) fail_msg("%.17g != %.17g (tol %g)", a, b, tol);
}

/* Every sample lies in its cell; cells are in index order; the counts sum
 * to the samples; the inside mask of a cuboid is exact for cell centres. */
static void test_grid_cpu(void **state) {
  (void)state;
  jl_mesh m;
  jl_error err = {0};
  double lo[3] = {0, 0, 0}, hi[3] = {410, 230, 170};
  assert_int_equal(jl_cuboid_mesh(&m, lo, hi, &err), JL_OK);
  double *pts;
  int n;
  assert_int_equal(jl_surface_sample(&m, 12.5, &pts, &n, &err), JL_OK);
  /* each face's two triangles: n = ceil(diagonal / 12.5) subdivisions */
  int expect = 0;
  double faces[3][2] = {{410, 230}, {410, 170}, {230, 170}};
  for (int f = 0; f < 3; ++f) {
    int k = (int)ceil(hypot(faces[f][0], faces[f][1]) / 12.5);
    expect += 2 * 2 * (k + 1) * (k + 2) / 2;
  }
  assert_int_equal(n, expect);
  jl_surface_grid g;
  assert_int_equal(jl_surface_grid_build(&g, pts, n, 20.0, &err), JL_OK);
  int total = 0, prev_cell = -1;
  for (int c = 0; c < g.n_cells; ++c) {
    total += g.cell_count[c];
    for (int k = g.cell_start[c]; k < g.cell_start[c] + g.cell_count[c]; ++k) {
      assert_int_equal(jl_surface_grid_cell_of(&g, g.px[k], g.py[k], g.pz[k]), c);
      assert_true(c >= prev_cell);
      prev_cell = c;
      int id = g.point_id[k];
      assert_true(g.px[k] == pts[3 * id] && g.py[k] == pts[3 * id + 1] && g.pz[k] == pts[3 * id + 2]);
    }
  }
  assert_int_equal(total, n);
  assert_int_equal(jl_surface_grid_mark_inside(&g, &m, &err), JL_OK);
  int wrong = 0;
  for (int c = 0; c < g.n_cells; ++c) {
    int ix = c % g.dim[0], iy = (c / g.dim[0]) % g.dim[1], iz = c / (g.dim[0] * g.dim[1]);
    double x = g.origin[0] + (ix + 0.5) * g.cell, y = g.origin[1] + (iy + 0.5) * g.cell,
           z = g.origin[2] + (iz + 0.5) * g.cell;
    double dist = fmin(fmin(fmin(x - lo[0], hi[0] - x), fmin(y - lo[1], hi[1] - y)),
                       fmin(z - lo[2], hi[2] - z));
    if (fabs(dist) < 1e-3) continue;  /* a centre on the surface may go either way */
    if ((dist > 0) != (g.inside[c] != 0)) wrong++;
  }
  assert_int_equal(wrong, 0);
  assert_true(g.n_inside > 0);
  jl_surface_grid_free(&g);
  free(pts);
  jl_cuboid_mesh_free(&m);
}


/* A thin triangle (a 1000 x 2 mm sliver, as CAD fillets have) is sampled in
 * rows, with a fraction of its lattice's points, and every point of it still
 * lies within 0.55 spacing of a sample; a well-shaped one keeps its lattice. */
static void test_sample_thin_triangle(void **state) {
  (void)state;
  double v[9] = {0, 0, 0, 1000, 0, 0, 400, 2, 0};
  int tri[3] = {0, 1, 2};
  jl_mesh m = {3, 1, v, tri};
  jl_error err = {0};
  double *pts;
  int n;
  const double s = 5.0;
  assert_int_equal(jl_surface_sample(&m, s, &pts, &n, &err), JL_OK);
  int k = (int)ceil(1000.0 / s), lattice = (k + 1) * (k + 2) / 2;
  printf("sliver: %d samples, the lattice %d\n", n, lattice);
  assert_true(n > 0 && n < lattice / 20);
  double worst = 0.0;
  for (int a = 0; a <= 400; ++a)
    for (int b = 0; a + b <= 400; b += 7) {
      double u = a / 400.0, w = b / 400.0, p[3];
      for (int d = 0; d < 3; ++d) p[d] = (1.0 - u - w) * v[d] + u * v[3 + d] + w * v[6 + d];
      double near = INFINITY;
      for (int i = 0; i < n; ++i) {
        double dx = p[0] - pts[3 * i], dy = p[1] - pts[3 * i + 1], dz = p[2] - pts[3 * i + 2];
        near = fmin(near, dx * dx + dy * dy + dz * dz);
      }
      worst = fmax(worst, sqrt(near));
    }
  printf("farthest point from a sample: %.3f mm (spacing %g)\n", worst, s);
  assert_true(worst <= 0.55 * s);
  free(pts);
  double w3[9] = {0, 0, 0, 300, 0, 0, 150, 260, 0};
  jl_mesh e = {3, 1, w3, tri};
  assert_int_equal(jl_surface_sample(&e, s, &pts, &n, &err), JL_OK);
  k = (int)ceil(hypot(150.0, 260.0) / s);  /* the longest edge */
  assert_int_equal(n, (k + 1) * (k + 2) / 2);
  free(pts);
}

/* Seed eq. 5.23 with half edges: depth and the face normal towards P. */
static void test_point_in_box(void **state) {
  (void)state;
  jl_vec3 ax[3], n;
  axes_of(jl_quat_identity(), ax);
  jl_vec3 c = jl_v3(10, 20, 30);
  double d = jl_box_point_depth(c, ax, H, jl_v3(10 + 90, 20 + 10, 30 - 5), &n);
  assert_near(d, 10.0, 0);  /* 10 from the +x face, 40 from y, 20 from z */
  assert_true(n.x == 1.0 && n.y == 0.0 && n.z == 0.0);
  d = jl_box_point_depth(c, ax, H, jl_v3(10 - 3, 20 + 2, 30 - 21), &n);
  assert_near(d, 4.0, 1e-12);  /* nearest face: -z, 4 away */
  assert_true(n.z == -1.0);
  d = jl_box_point_depth(c, ax, H, jl_v3(10, 20, 30 + 26), &n);
  assert_true(d < 0.0);  /* outside: a separating face */
  /* rotated 90 degrees about z: the long edge along y */
  jl_quat q = jl_quat_axis_angle(jl_v3(0, 0, 1), JL_PI / 2);
  axes_of(q, ax);
  d = jl_box_point_depth(jl_v3(0, 0, 0), ax, H, jl_v3(45, 0, 0), &n);
  assert_near(d, 5.0, 1e-12);
  assert_near(n.x, 1.0, 1e-15);
}

/* Two aligned blocks, B 45 mm above A: 5 mm overlap on A's z face; the
 * contact centre is halfway into the overlap, in the middle of the common
 * rectangle. */
static void test_box_box_face(void **state) {
  (void)state;
  jl_vec3 A[3], B[3];
  axes_of(jl_quat_identity(), A);
  axes_of(jl_quat_identity(), B);
  jl_box_contact ct;
  assert_int_equal(jl_box_box_contact(jl_v3(0, 0, 0), A, H, jl_v3(150, 20, 45), B, H, &ct), 1);
  assert_int_equal(ct.kind, JL_CONTACT_FACE_A);
  assert_near(ct.depth, 5.0, 1e-12);
  assert_true(ct.n.x == 0.0 && ct.n.y == 0.0 && ct.n.z == 1.0);
  /* common rectangle x in [50, 100], y in [-30, 50] */
  assert_near(ct.z.x, 75.0, 1e-12);
  assert_near(ct.z.y, 10.0, 1e-12);
  assert_near(ct.z.z, 22.5, 1e-12);
  /* swapped: B's face, normal from A (now above) to B (below) */
  assert_int_equal(jl_box_box_contact(jl_v3(150, 20, 45), B, H, jl_v3(0, 0, 0), A, H, &ct), 1);
  assert_near(ct.depth, 5.0, 1e-12);
  assert_true(ct.n.z == -1.0);
  assert_near(ct.z.z, 22.5, 1e-12);
  /* apart by 0.01 mm: separated */
  assert_int_equal(jl_box_box_contact(jl_v3(0, 0, 0), A, H, jl_v3(0, 0, 50.01), B, H, &ct), 0);
  /* a vertex of a turned B in A's top face: the vertex contact of the seed */
  jl_quat q = jl_quat_mul(jl_quat_axis_angle(jl_v3(1, 0, 0), 0.3), jl_quat_axis_angle(jl_v3(0, 1, 0), 0.2));
  axes_of(q, B);
  jl_vec3 v = jl_v3(0, 0, 0);  /* B's lowest vertex, relative to its centre */
  double hz = 0.0;
  for (int j = 0; j < 3; ++j) {
    double s = B[j].z > 0 ? -1.0 : 1.0;
    v = jl_v3_add(v, jl_v3_scale(B[j], s * H[j]));
    hz += H[j] * fabs(B[j].z);
  }
  jl_vec3 cb = jl_v3(-v.x, -v.y, 25.0 + hz - 2.0);  /* lowest vertex at (0, 0, 23) */
  assert_int_equal(jl_box_box_contact(jl_v3(0, 0, 0), A, H, cb, B, H, &ct), 1);
  assert_int_equal(ct.kind, JL_CONTACT_FACE_A);
  assert_near(ct.depth, 2.0, 1e-9);
  assert_near(ct.z.x, 0.0, 1e-9);
  assert_near(ct.z.y, 0.0, 1e-9);
  assert_near(ct.z.z, 24.0, 1e-9);
}

/* Crossed edges: cube A turned 45 degrees about x (top edge along x at
 * height sqrt 2), cube B turned 45 degrees about y above it, its bottom
 * edge along y, 0.1 lower than touching: the edge/edge axis z wins, and the
 * contact centre is the middle of the common perpendicular. */
static void test_box_box_edge(void **state) {
  (void)state;
  const double h1[3] = {1, 1, 1};
  jl_vec3 A[3], B[3];
  axes_of(jl_quat_axis_angle(jl_v3(1, 0, 0), JL_PI / 4), A);
  axes_of(jl_quat_axis_angle(jl_v3(0, 1, 0), JL_PI / 4), B);
  double s2 = sqrt(2.0);
  jl_box_contact ct;
  assert_int_equal(jl_box_box_contact(jl_v3(0, 0, 0), A, h1, jl_v3(0, 0, 2 * s2 - 0.1), B, h1, &ct), 1);
  assert_int_equal(ct.kind, JL_CONTACT_EDGE);
  assert_near(ct.depth, 0.1, 1e-12);
  assert_near(ct.n.x, 0.0, 1e-15);
  assert_near(ct.n.y, 0.0, 1e-15);
  assert_near(ct.n.z, 1.0, 1e-15);
  assert_near(ct.z.x, 0.0, 1e-12);
  assert_near(ct.z.y, 0.0, 1e-12);
  assert_near(ct.z.z, s2 - 0.05, 1e-12);
}

/* Seed eq. 5.5 for a 200 x 100 x 50 block of mass 1 (half edges 100, 50,
 * 25): I = m/12 (b^2 + c^2, ...) with full edges. */
static void test_block_inertia(void **state) {
  (void)state;
  double I[3];
  jl_block_inertia(H, 1.0, I);
  assert_near(I[0], (100.0 * 100.0 + 50.0 * 50.0) / 12.0, 1e-12);
  assert_near(I[1], (200.0 * 200.0 + 50.0 * 50.0) / 12.0, 1e-12);
  assert_near(I[2], (200.0 * 200.0 + 100.0 * 100.0) / 12.0, 1e-12);
  jl_block_inertia(H, 3.0, I);
  assert_near(I[2], 3.0 * 50000.0 / 12.0, 1e-12);
}

/* Impulse exchange: the known mu, separation of the contact points by d
 * to first order, and conservation of linear and angular momentum. */
static void test_impulse_exchange(void **state) {
  (void)state;
  jl_vec3 A[3], B[3];
  axes_of(jl_quat_identity(), A);
  axes_of(jl_quat_identity(), B);
  double I[3], inv[3];
  jl_block_inertia(H, 1.0, I);
  for (int k = 0; k < 3; ++k) inv[k] = 1.0 / I[k];
  jl_vec3 n = jl_v3(0, 0, 1), dca, dpa, dcb, dpb;
  /* head on: the contact on the line of centres, mu = 1/m_A + 1/m_B */
  double mu = jl_impulse_exchange(2.0, n, jl_v3(0, 0, 25), jl_v3(0, 0, 0), A, 1.0, inv,
                                  jl_v3(0, 0, 48), B, 1.0, inv, &dca, &dpa, &dcb, &dpb);
  assert_near(mu, 2.0, 0);
  assert_near(dca.z, -1.0, 0);
  assert_near(dcb.z, 1.0, 0);
  assert_true(jl_v3_len(dpa) == 0.0 && jl_v3_len(dpb) == 0.0);
  /* off centre: levers (100, 0, 25) and (100, 0, -23); (r x n) = (0, -100, 0)
   * for both, so mu = 2 + 2 * 100^2 / I_y */
  jl_vec3 z = jl_v3(100, 0, 25), ca = jl_v3(0, 0, 0), cb = jl_v3(0, 0, 48);
  mu = jl_impulse_exchange(2.0, n, z, ca, A, 1.0, inv, cb, B, 0.5, inv, &dca, &dpa, &dcb, &dpb);
  assert_near(mu, 1.5 + 2.0 * 10000.0 / I[1], 1e-12);
  /* linear momentum m_A dc_A + m_B dc_B = 0 (m_B = 2) */
  assert_near(dca.z + 2.0 * dcb.z, 0.0, 1e-15);
  /* angular momentum about the origin: m c x dc + I dphi, summed (B has
   * mass 2 and the inertia passed in) */
  jl_vec3 la = jl_v3_add(jl_v3_cross(ca, dca), jl_v3(I[0] * dpa.x, I[1] * dpa.y, I[2] * dpa.z));
  jl_vec3 lb = jl_v3_add(jl_v3_scale(jl_v3_cross(cb, dcb), 2.0),
                         jl_v3(I[0] * dpb.x, I[1] * dpb.y, I[2] * dpb.z));
  assert_near(la.x + lb.x, 0.0, 1e-12);
  assert_near(la.y + lb.y, 0.0, 1e-12);
  assert_near(la.z + lb.z, 0.0, 1e-12);
  /* the contact points separate by d along n to first order (eq. 5.14) */
  jl_vec3 va = jl_v3_add(dca, jl_v3_cross(dpa, jl_v3_sub(z, ca)));
  jl_vec3 vb = jl_v3_add(dcb, jl_v3_cross(dpb, jl_v3_sub(z, cb)));
  assert_near(jl_v3_dot(n, jl_v3_sub(vb, va)), 2.0, 1e-12);
  /* a point of infinite mass (eq. 5.24-5.26): mu = 1/m + (r x n)^T I^-1 (r x n) */
  const double zero[3] = {0, 0, 0};
  mu = jl_impulse_exchange(2.0, n, z, ca, A, 1.0, inv, z, A, 0.0, zero, &dca, &dpa, &dcb, &dpb);
  assert_near(mu, 1.0 + 10000.0 / I[1], 1e-12);
  assert_true(jl_v3_len(dcb) == 0.0 && jl_v3_len(dpb) == 0.0);
  assert_near(dca.z, -2.0 / mu, 1e-15);
}

/* A small overlapping packing in a cuboid trunk relaxes to legal, and a
 * test-local exact check agrees. */
typedef struct trunk_fixture {
  jl_mesh m;
  jl_surface_grid g;
  double *pts;
  int npts;
} trunk_fixture;

static void fixture_init(trunk_fixture *f, const double lo[3], const double hi[3], double spacing) {
  jl_error err = {0};
  assert_int_equal(jl_cuboid_mesh(&f->m, lo, hi, &err), JL_OK);
  assert_int_equal(jl_surface_sample(&f->m, spacing, &f->pts, &f->npts, &err), JL_OK);
  assert_int_equal(jl_surface_grid_build(&f->g, f->pts, f->npts, 20.0, &err), JL_OK);
  assert_int_equal(jl_surface_grid_mark_inside(&f->g, &f->m, &err), JL_OK);
}

static void fixture_free(trunk_fixture *f) {
  jl_surface_grid_free(&f->g);
  free(f->pts);
  jl_cuboid_mesh_free(&f->m);
}

/* The DIN block's annealing parameters over the fixture's samples. */
static jl_block_params din_params(const trunk_fixture *f, uint64_t seed) {
  jl_block_size size = {200, 100, 50};
  jl_block_params p;
  jl_block_params_default(&p, &size, seed);
  p.grid = jl_grid_view_host(&f->g);
  return p;
}

static void test_relax_to_legal(void **state) {
  (void)state;
  trunk_fixture f;
  double lo[3] = {0, 0, 0}, hi[3] = {520, 240, 160};
  fixture_init(&f, lo, hi, 12.5);
  jl_block_params p = din_params(&f, 7);
  /* without a skin a turned block cuts 2.4 mm through a wall between
   * samples here; a quarter of the spacing keeps it inside */
  p.point_skin = 12.5 / 4;
  jl_block_batch b;
  jl_error err = {0};
  assert_int_equal(jl_block_batch_alloc(&b, 1, 8, &err), JL_OK);
  /* 5 blocks: overlapping each other, one poking through the floor, one
   * through the +x wall, two turned */
  const double c[5][3] = {{110, 60, 30}, {290, 70, 40}, {430, 60, 26}, {150, 170, 90}, {320, 160, 100}};
  jl_quat q[5] = {jl_quat_identity(), jl_quat_axis_angle(jl_v3(0, 0, 1), 0.2), jl_quat_identity(),
                  jl_quat_axis_angle(jl_v3(1, 0, 0), 0.15), jl_quat_identity()};
  q[4] = jl_quat_axis_angle(jl_v3(0, 1, 0), -0.1);
  jl_block_packing pk;
  assert_int_equal(jl_block_packing_init(&pk, 8, &err), JL_OK);
  for (int i = 0; i < 5; ++i) {
    double qq[4] = {q[i].w, q[i].x, q[i].y, q[i].z};
    assert_int_equal(jl_block_packing_push(&pk, c[i], qq, &err), JL_OK);
  }
  cuboid_check cc = {{0, 0, 0}, {520, 240, 160}, {100, 50, 25}, 0, 0.0};
  double worst0;
  assert_int_equal(cuboid_check_fn(&cc, &pk, &worst0), 0);
  assert_true(worst0 > 10.0);
  assert_int_equal(jl_block_batch_set(&b, 0, &pk, &err), JL_OK);
  double mem[JL_BR_WS_DOUBLES(8)];
  jl_br_ws w;
  jl_br_ws_bind(&w, mem, 8);
  w.n = 5;
  for (int i = 0; i < 5; ++i) {
    w.x[i] = b.cx[i]; w.y[i] = b.cy[i]; w.z[i] = b.cz[i];
    w.qw[i] = b.qw[i]; w.qx[i] = b.qx[i]; w.qy[i] = b.qy[i]; w.qz[i] = b.qz[i];
  }
  w.steps = 0;
  int legal = jl_br_relax(&w, &p, 500, 0);
  print_message("relaxed in %llu steps, worst %.3g\n", (unsigned long long)w.steps, w.worst);
  assert_int_equal(legal, 1);
  assert_true(w.worst <= p.tol);
  for (int i = 0; i < 5; ++i) {
    pk.centre[3 * i] = w.x[i]; pk.centre[3 * i + 1] = w.y[i]; pk.centre[3 * i + 2] = w.z[i];
    pk.quat[4 * i] = w.qw[i]; pk.quat[4 * i + 1] = w.qx[i]; pk.quat[4 * i + 2] = w.qy[i];
    pk.quat[4 * i + 3] = w.qz[i];
  }
  double worst;
  int ok = cuboid_check_fn(&cc, &pk, &worst);
  print_message("exact check: %d, worst %.3g mm\n", ok, worst);
  assert_int_equal(ok, 1);
  jl_block_packing_free(&pk);
  jl_block_batch_free(&b);
  fixture_free(&f);
}

/* The twin is deterministic whatever the thread count. */
static void test_batch_threads_agree(void **state) {
  (void)state;
  trunk_fixture f;
  double lo[3] = {0, 0, 0}, hi[3] = {620, 330, 160};
  fixture_init(&f, lo, hi, 12.5);
  jl_block_params p = din_params(&f, 3);
  jl_block_batch b1, b2;
  jl_error err = {0};
  assert_int_equal(jl_block_batch_alloc(&b1, 6, 12, &err), JL_OK);
  assert_int_equal(jl_block_batch_alloc(&b2, 6, 12, &err), JL_OK);
  for (int c = 0; c < 6; ++c) { b1.temp[c] = b2.temp[c] = 0.3; }
  p.iters = 20;
  assert_int_equal(jl_block_batch_run_cpu(&p, &b1, 1, &err), JL_OK);
  assert_int_equal(jl_block_batch_run_cpu(&p, &b2, 3, &err), JL_OK);
  size_t nc = 6 * 12;
  assert_memory_equal(b1.n, b2.n, 6 * sizeof(int));
  assert_memory_equal(b1.cx, b2.cx, nc * sizeof(double));
  assert_memory_equal(b1.qz, b2.qz, nc * sizeof(double));
  assert_memory_equal(b1.steps, b2.steps, 6 * sizeof(uint64_t));
  int blocks = 0;
  for (int c = 0; c < 6; ++c) blocks += b1.n[c];
  assert_true(blocks > 0);  /* insertions happened */
  jl_block_batch_free(&b1);
  jl_block_batch_free(&b2);
  fixture_free(&f);
}

/* ---- the turn, settle and push moves on constructed states ---- */

/* Blocks at centres c (axis-aligned unless q) into a bound workspace, with
 * the backup taken as the annealing takes it before a move. */
static void ws_load(jl_br_ws *w, double *mem, int cap, const double (*c)[3], const jl_quat *q, int n) {
  jl_br_ws_bind(w, mem, cap);
  w->n = n;
  w->steps = 0;
  for (int i = 0; i < n; ++i) {
    jl_quat qi = q ? q[i] : jl_quat_identity();
    w->x[i] = c[i][0]; w->y[i] = c[i][1]; w->z[i] = c[i][2];
    w->qw[i] = qi.w; w->qx[i] = qi.x; w->qy[i] = qi.y; w->qz[i] = qi.z;
  }
  jl_br_copy(w, n, 1);
}

/* A cuboid trunk turned by 30 degrees about y: its floor is a 30-degree
 * slope. An axis-aligned block 55 mm above it, turned by the move, lies
 * with its 50 mm edge along the slope's normal (the smallest turn: its
 * long edge along the slope), touching the slope, moved only along the
 * normal, and legal without a relaxation step. */
static void test_move_turn_flush(void **state) {
  (void)state;
  const double ang = 30.0 * 3.14159265358979323846 / 180.0;
  jl_quat R = jl_quat_axis_angle(jl_v3(0, 1, 0), ang);
  trunk_fixture f;
  jl_error err = {0};
  double lo[3] = {0, 0, 0}, hi[3] = {520, 240, 300};
  assert_int_equal(jl_cuboid_mesh(&f.m, lo, hi, &err), JL_OK);
  for (int v = 0; v < f.m.n_vertices; ++v) {
    double *x = f.m.vertices + 3 * v;
    jl_vec3 r = jl_quat_rotate(R, jl_v3(x[0], x[1], x[2]));
    x[0] = r.x; x[1] = r.y; x[2] = r.z;
  }
  assert_int_equal(jl_surface_sample(&f.m, 5.0, &f.pts, &f.npts, &err), JL_OK);
  assert_int_equal(jl_surface_grid_build(&f.g, f.pts, f.npts, 20.0, &err), JL_OK);
  assert_int_equal(jl_surface_grid_mark_inside(&f.g, &f.m, &err), JL_OK);
  jl_block_params p = din_params(&f, 5);
  p.point_skin = 1.0;
  jl_vec3 c0 = jl_quat_rotate(R, jl_v3(260, 120, 80));
  const double c[1][3] = {{c0.x, c0.y, c0.z}};
  double mem[JL_BR_WS_DOUBLES(4)];
  jl_br_ws w;
  ws_load(&w, mem, 4, c, NULL, 1);
  w.kind = JL_BMOVE_TURN;
  w.pick = 0;
  jl_br_apply_move(&w, &p, 4, p.seed);
  jl_vec3 n = jl_quat_rotate(R, jl_v3(0, 0, 1)), ex = jl_quat_rotate(R, jl_v3(1, 0, 0));
  jl_vec3 ax[3];
  axes_of(jl_br_quat(&w, 0), ax);
  assert_near(jl_v3_dot(ax[2], n), 1.0, 1e-12);
  assert_near(jl_v3_dot(ax[0], ex), 1.0, 1e-12);
  jl_vec3 c1 = jl_v3(w.x[0], w.y[0], w.z[0]);
  jl_vec3 foot = jl_quat_rotate(R, jl_v3(260, 120, 0));
  assert_near(jl_v3_dot(jl_v3_sub(c1, foot), n), p.h[2] + p.point_skin, 1e-9);
  assert_near(jl_v3_len(jl_v3_cross(jl_v3_sub(c1, c0), n)), 0.0, 1e-9);
  assert_int_equal(jl_br_relax(&w, &p, 10, 0), 1);
  assert_true(w.steps == 0);
  /* a block farther from every face than face_reach stays as it was */
  p.face_reach = 50.0;
  ws_load(&w, mem, 4, c, NULL, 1);
  w.kind = JL_BMOVE_TURN;
  jl_br_apply_move(&w, &p, 4, p.seed);
  assert_true(w.x[0] == c[0][0] && w.z[0] == c[0][2] && w.qw[0] == 1.0);
  fixture_free(&f);
}

/* The smallest turn onto a plane takes the axis nearest the normal, either
 * sign, and leaves a block already flush as it is. */
static void test_turn_onto(void **state) {
  (void)state;
  int k = -1;
  jl_quat q = jl_br_turn_onto(jl_quat_identity(), jl_v3(0, -1, 0), &k);
  jl_vec3 ax[3];
  axes_of(q, ax);
  assert_int_equal(k, 1);
  assert_near(ax[1].y, 1.0, 1e-15);
  assert_near(q.w, 1.0, 1e-15);
  jl_vec3 n = jl_v3_normalize(jl_v3(0.3, 0.2, -1.0));
  q = jl_br_turn_onto(jl_quat_axis_angle(jl_v3(1, 0, 0), 0.1), n, &k);
  axes_of(q, ax);
  assert_int_equal(k, 2);
  assert_near(jl_v3_dot(ax[2], n), -1.0, 1e-12);
}

/* A settle moves the blocks within shake_radius of the picked one down by
 * the same step, and toward the wall nearest at their height when one is
 * within face_reach; a block farther away stays. */
static void test_move_settle(void **state) {
  (void)state;
  trunk_fixture f;
  double lo[3] = {0, 0, 0}, hi[3] = {620, 330, 300};
  fixture_init(&f, lo, hi, 5.0);
  jl_block_params p = din_params(&f, 5);
  const double c[3][3] = {{110, 165, 150}, {330, 165, 150}, {500, 165, 250}};
  double mem[JL_BR_WS_DOUBLES(4)];
  jl_br_ws w;
  ws_load(&w, mem, 4, c, NULL, 3);
  w.kind = JL_BMOVE_SETTLE;
  w.pick = 0;
  w.mv[6] = 0.5;
  w.mv[7] = 0.5;
  jl_br_apply_move(&w, &p, 4, p.seed);
  double step = 0.5 * p.settle_step;
  assert_true(step > 1.0);
  /* block 0: 110 mm from the x = 0 wall (within reach), 165 from the y walls */
  assert_near(w.z[0], 150 - step, 1e-12);
  assert_near(hypot(w.x[0] - 110, w.y[0] - 165), step, 1e-12);
  assert_true(w.x[0] - 110 < -0.95 * step);
  /* block 1: no wall within reach at its height, so only down */
  assert_near(w.z[1], 150 - step, 1e-12);
  assert_true(w.x[1] == 330 && w.y[1] == 165);
  /* block 2: farther than shake_radius from block 0 */
  assert_true(w.x[2] == 500 && w.y[2] == 165 && w.z[2] == 250);
  for (int i = 0; i < 3; ++i) assert_true(w.qw[i] == 1.0);
  fixture_free(&f);
}

/* A push moves the picked block's column (centres within half the smallest
 * edge of its vertical line) by one shared step toward its nearer wall,
 * and nothing else; a row push does the same along x. */
static void test_move_push(void **state) {
  (void)state;
  trunk_fixture f;
  double lo[3] = {0, 0, 0}, hi[3] = {620, 330, 400};
  fixture_init(&f, lo, hi, 12.5);
  jl_block_params p = din_params(&f, 5);
  /* a column of three (one 20 mm off the line), one 30 mm off it, one in
   * another column */
  const double c[5][3] = {{300, 165, 100}, {300, 165, 160}, {320, 150, 220}, {330, 165, 290},
                          {100, 165, 100}};
  double mem[JL_BR_WS_DOUBLES(8)];
  jl_br_ws w;
  ws_load(&w, mem, 8, c, NULL, 5);
  w.kind = JL_BMOVE_PUSH;
  w.pick = 1;
  w.mv[6] = 0.5;
  w.mv[7] = 0.1;  /* the column */
  jl_br_apply_move(&w, &p, 8, p.seed);
  double step = 0.5 * p.push_step;
  assert_true(step > 1.0);
  for (int i = 0; i < 3; ++i) {  /* the floor (160 mm below block 1) is nearer than the roof */
    assert_true(w.x[i] == c[i][0] && w.y[i] == c[i][1]);
    assert_true(w.z[i] == c[i][2] - step);
  }
  for (int i = 3; i < 5; ++i) assert_true(w.x[i] == c[i][0] && w.z[i] == c[i][2]);
  /* the row along x through block 4 (y, z within the tolerance): blocks 0
   * and 4; the x = 0 wall is nearer to block 4 */
  ws_load(&w, mem, 8, c, NULL, 5);
  w.kind = JL_BMOVE_PUSH;
  w.pick = 4;
  w.mv[6] = 1.0;
  w.mv[7] = 0.5;
  jl_br_apply_move(&w, &p, 8, p.seed);
  assert_true(w.x[0] == 300 - p.push_step && w.x[4] == 100 - p.push_step);
  assert_true(w.y[0] == 165 && w.z[0] == 100 && w.z[4] == 100);
  for (int i = 1; i < 4; ++i) assert_true(w.x[i] == c[i][0] && w.z[i] == c[i][2]);
  fixture_free(&f);
}

/* The twin with the new moves on is deterministic whatever the thread
 * count, and the new moves change the chains (with them at 0 nothing
 * changes: test_batch_threads_agree's run is the old one). */
static void test_batch_moves_agree(void **state) {
  (void)state;
  trunk_fixture f;
  double lo[3] = {0, 0, 0}, hi[3] = {620, 330, 160};
  fixture_init(&f, lo, hi, 12.5);
  jl_block_params p = din_params(&f, 3);
  p.iters = 30;
  jl_block_batch b[3];
  jl_error err = {0};
  for (int k = 0; k < 3; ++k) {
    assert_int_equal(jl_block_batch_alloc(&b[k], 6, 12, &err), JL_OK);
    for (int c = 0; c < 6; ++c) b[k].temp[c] = 0.3;
  }
  assert_int_equal(jl_block_batch_run_cpu(&p, &b[2], 1, &err), JL_OK);
  p.p_turn = p.p_settle = p.p_push = 0.15;
  assert_int_equal(jl_block_batch_run_cpu(&p, &b[0], 1, &err), JL_OK);
  assert_int_equal(jl_block_batch_run_cpu(&p, &b[1], 3, &err), JL_OK);
  size_t nc = 6 * 12;
  assert_memory_equal(b[0].n, b[1].n, 6 * sizeof(int));
  assert_memory_equal(b[0].cx, b[1].cx, nc * sizeof(double));
  assert_memory_equal(b[0].qz, b[1].qz, nc * sizeof(double));
  assert_memory_equal(b[0].steps, b[1].steps, 6 * sizeof(uint64_t));
  assert_true(memcmp(b[0].cx, b[2].cx, nc * sizeof(double)) != 0);
  /* the counts by kind add up, and every new kind was made */
  uint64_t made[JL_BMOVE_COUNT] = {0}, old_made[JL_BMOVE_COUNT] = {0};
  for (int c = 0; c < 6; ++c) {
    uint64_t sum = 0, acc = 0;
    for (int k = 0; k < JL_BMOVE_COUNT; ++k) {
      size_t kk = (size_t)c * JL_BMOVE_COUNT + k;
      sum += b[0].kind_moves[kk];
      acc += b[0].kind_accepted[kk];
      assert_true(b[0].kind_accepted[kk] <= b[0].kind_moves[kk]);
      made[k] += b[0].kind_moves[kk];
      old_made[k] += b[2].kind_moves[kk];
    }
    assert_true(sum == b[0].moves[c] && acc == b[0].accepted[c]);
  }
  for (int k = JL_BMOVE_TURN; k <= JL_BMOVE_PUSH; ++k) {
    assert_true(made[k] > 0);
    assert_true(old_made[k] == 0);
  }
  for (int k = 0; k < 3; ++k) jl_block_batch_free(&b[k]);
  fixture_free(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grid_cpu),
    cmocka_unit_test(test_sample_thin_triangle),
    cmocka_unit_test(test_point_in_box),
    cmocka_unit_test(test_box_box_face),
    cmocka_unit_test(test_box_box_edge),
    cmocka_unit_test(test_block_inertia),
    cmocka_unit_test(test_impulse_exchange),
    cmocka_unit_test(test_relax_to_legal),
    cmocka_unit_test(test_batch_threads_agree),
    cmocka_unit_test(test_turn_onto),
    cmocka_unit_test(test_move_turn_flush),
    cmocka_unit_test(test_move_settle),
    cmocka_unit_test(test_move_push),
    cmocka_unit_test(test_batch_moves_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
