/* Prox projection, Delassus assembly and c against hand-computed values;
 * JOR, SOR (sequential, coloured, threaded) and matrix-free variants reach
 * the same impulses; the colouring is proper; the matrix-free solvers'
 * packed rows give the bits of the problem's arrays. Hand-made contacts: no
 * collision detection involved. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "contact_graph.h"
#include "contact_setup.h"
#include "prox_math.h"
#include "prox_rows.h"
#include "prox_solver.h"
#include "scene.h"
#include "timer.h"

static void test_prox_projection(void **state) {
  (void)state;
  double out[3];
  /* pressed in, sliding: normal grows, friction clipped to mu N */
  double xi[3] = {-1.0, 2.0, 0.0}, lam[3] = {0, 0, 0};
  jl_prox_contact(xi, lam, 1.0, 1.0, 0.5, out);
  assert_true(out[0] == 1.0 && out[1] == -0.5 && out[2] == 0.0);
  /* inside the disk: unchanged by the projection */
  double xi2[3] = {-2.0, 0.3, -0.4};
  jl_prox_contact(xi2, lam, 1.0, 1.0, 0.5, out);
  assert_true(out[0] == 2.0 && fabs(out[1] + 0.3) < 1e-15 && fabs(out[2] - 0.4) < 1e-15);
  /* separating: everything zero (disk radius from the NEW normal value) */
  double xi3[3] = {3.0, 1.0, 1.0}, lam3[3] = {1.0, 0.2, 0.2};
  jl_prox_contact(xi3, lam3, 1.0, 1.0, 0.5, out);
  assert_true(out[0] == 0.0 && out[1] == 0.0 && out[2] == 0.0);
  /* r factors scale the step: 3-4-5 tangential clipped onto radius mu N = 1 */
  double xi4[3] = {-0.5, -3.0, -4.0};
  jl_prox_contact(xi4, lam, 4.0, 1.0, 0.5, out);
  assert_true(out[0] == 2.0 && fabs(out[1] - 0.6) < 1e-15 && fabs(out[2] - 0.8) < 1e-15);
}

/* Sphere 0 (m 2, r 1) at the origin touches sphere 1 (m 3, r 1) at (2,0,0)
 * and the ground plane (static) at (0,0,-1). */
static void make_two_spheres(jl_scene *s, jl_contacts *c) {
  jl_error err = {0};
  assert_int_equal(jl_scene_init(s, &err), JL_OK);
  jl_body_spec b;
  jl_body_spec_default(&b);
  b.size[0] = 1.0;
  b.mass = 2.0;
  b.vel[2] = -1.0;
  assert_int_equal(jl_scene_add_body(s, &b, &err), 0);
  b.mass = 3.0;
  b.pos[0] = 2.0;
  b.vel[2] = 0.0;
  assert_int_equal(jl_scene_add_body(s, &b, &err), 1);
  double p0[3] = {0, 0, -1}, nz[3] = {0, 0, 1};
  assert_int_equal(jl_scene_add_plane(s, p0, nz, 0, &err), 2);
  assert_int_equal(jl_contacts_init(c, 4, &err), JL_OK);
  c->count = 2;
  c->body_a[0] = 0; c->body_b[0] = 1;
  double pt0[3] = {1, 0, 0}, n0[3] = {1, 0, 0};
  memcpy(c->point, pt0, sizeof pt0); memcpy(c->normal, n0, sizeof n0);
  c->body_a[1] = 0; c->body_b[1] = 2;
  double pt1[3] = {0, 0, -1}, n1[3] = {0, 0, -1};
  memcpy(c->point + 3, pt1, sizeof pt1); memcpy(c->normal + 3, n1, sizeof n1);
  c->gap[0] = c->gap[1] = 0.0;
  c->key[0] = 1; c->key[1] = 2;
}

static void assert_block(const double *g, const double *want) {
  for (int k = 0; k < 9; ++k) assert_true(fabs(g[k] - want[k]) < 1e-14);
}

static void test_delassus_hand_computed(void **state) {
  (void)state;
  jl_scene s;
  jl_contacts c;
  make_two_spheres(&s, &c);
  double mu[2] = {0.5, 0.5}, en[2] = {0.5, 0.5}, et[2] = {0, 0};
  jl_contact_law law = {mu, en, et};
  double dv[18] = {0};
  dv[2] = -0.01; /* body 0: g dt */
  jl_contact_problem p = {0};
  jl_error err = {0};
  assert_int_equal(jl_contact_setup(&p, &s.bodies, &c, &law, dv, 1, 1, &err), JL_OK);
  assert_int_equal(p.n, 2);
  assert_int_equal(p.nnz, 4); /* both contacts share sphere 0: a full 2x2 block pattern */
  assert_int_equal(p.ka[1], 0);
  assert_int_equal(p.kb[1], -1);
  /* I = 0.4 m r^2: 0.8 and 1.2 */
  double g00[9] = {0.5 + 1.0 / 3, 0, 0, 0, 0.5 + 1.25 + 1.0 / 3 + 1.0 / 1.2, 0,
                   0, 0, 0.5 + 1.25 + 1.0 / 3 + 1.0 / 1.2};
  double g01[9] = {0, 0, -0.5, -0.5, 0, -1.25, 0, 0.5, 0};
  double g10[9] = {0, -0.5, 0, 0, 0, 0.5, -0.5, -1.25, 0};
  double g11[9] = {0.5, 0, 0, 0, 1.75, 0, 0, 0, 1.75};
  assert_int_equal(p.rowptr[0], 0);
  assert_int_equal(p.col[0], 0);
  assert_int_equal(p.col[1], 1);
  assert_block(p.blocks + 0, g00);
  assert_block(p.blocks + 9, g01);
  assert_block(p.blocks + 18, g10);
  assert_block(p.blocks + 27, g11);
  assert_true(fabs(p.diag[0] - g00[0]) < 1e-15 && fabs(p.diag[1] - g00[4]) < 1e-15);
  /* c of the ground contact: W^T dv + (1 + e) W^T u_S, approaching at 1 m/s */
  assert_true(fabs(p.c[3] - (-0.01 - 1.5)) < 1e-15);
  assert_true(fabs(p.c[4]) < 1e-15 && fabs(p.c[5]) < 1e-15);
  /* c of the sphere contact: relative normal velocity 0; tangent t1 = (0,0,1):
   * body b at rest, body a moving down at 1: gamma_T1 = 0 - (-1) = 1, dv term +0.01 */
  assert_true(fabs(p.c[0]) < 1e-15);
  assert_true(fabs(p.c[1] - (0.01 + 1.0)) < 1e-15);
  jl_contact_problem_free(&p);
  jl_contacts_free(&c);
  jl_scene_free(&s);
}

/* cols x cols columns of `h` spheres (r 0.5, m 1) on a plane, each touching
 * its neighbours sideways: a coupled problem with a known normal answer for
 * the vertical contacts at rest (k spheres above: (k + 1) m g dt). */
typedef struct grid_problem {
  jl_scene s;
  jl_contacts c;
  jl_contact_problem p;
  double dv[6 * 4096];
  double mu[8192], en[8192], et[8192];
} grid_problem;

static void make_grid(grid_problem *gp, int cols, int h, int build_g) {
  jl_error err = {0};
  assert_int_equal(jl_scene_init(&gp->s, &err), JL_OK);
  jl_body_spec b;
  jl_body_spec_default(&b);
  b.size[0] = 0.5;
  b.mass = 1.0;
  for (int x = 0; x < cols; ++x)
    for (int y = 0; y < cols; ++y)
      for (int z = 0; z < h; ++z) {
        b.pos[0] = x; b.pos[1] = y; b.pos[2] = 0.5 + z;
        assert_true(jl_scene_add_body(&gp->s, &b, &err) >= 0);
      }
  double p0[3] = {0, 0, 0}, nz[3] = {0, 0, 1};
  int plane = jl_scene_add_plane(&gp->s, p0, nz, 0, &err);
  assert_true(plane >= 0);
  assert_int_equal(jl_contacts_init(&gp->c, 8192, &err), JL_OK);
  int n = 0;
  jl_contacts *c = &gp->c;
#define IDX(x, y, z) (((x) * cols + (y)) * h + (z))
  for (int x = 0; x < cols; ++x)
    for (int y = 0; y < cols; ++y)
      for (int z = 0; z < h; ++z) {
        int k = IDX(x, y, z);
        int other[3] = {z == 0 ? plane : IDX(x, y, z - 1), x > 0 ? IDX(x - 1, y, z) : -1,
                        y > 0 ? IDX(x, y - 1, z) : -1};
        double nrm[3][3] = {{0, 0, -1}, {-1, 0, 0}, {0, -1, 0}};
        for (int e = 0; e < 3; ++e) {
          if (other[e] < 0) continue;
          int a = k, bb = other[e];
          if (bb != plane && bb < a) { int t = a; a = bb; bb = t; }
          double sign = a == k ? 1.0 : -1.0;
          c->body_a[n] = a; c->body_b[n] = bb;
          for (int d = 0; d < 3; ++d) {
            c->normal[3 * n + d] = sign * nrm[e][d];
            c->point[3 * n + d] = gp->s.bodies.pos[3 * k + d] + 0.5 * nrm[e][d];
          }
          c->gap[n] = 0.0;
          c->key[n] = (uint64_t)n;
          gp->mu[n] = 0.3; gp->en[n] = 0.0; gp->et[n] = 0.0;
          ++n;
        }
      }
#undef IDX
  c->count = n;
  memset(gp->dv, 0, sizeof gp->dv);
  for (int k = 0; k < gp->s.bodies.count; ++k)
    if (!gp->s.bodies.is_static[k]) gp->dv[6 * k + 2] = -9.81 * 1e-3;
  jl_contact_law law = {gp->mu, gp->en, gp->et};
  memset(&gp->p, 0, sizeof gp->p);
  assert_int_equal(jl_contact_setup(&gp->p, &gp->s.bodies, c, &law, gp->dv, build_g, 2, &err), JL_OK);
}

static void free_grid(grid_problem *gp) {
  jl_contact_problem_free(&gp->p);
  jl_contacts_free(&gp->c);
  jl_scene_free(&gp->s);
}

static void solve(const jl_contact_problem *p, jl_solver_kind kind, double alpha, int mf,
                  jl_sor_order order, int threads, double *lam, jl_prox_stats *st) {
  jl_prox_opts o;
  jl_prox_opts_default(&o);
  o.kind = kind;
  o.alpha = alpha;
  o.matrix_free = mf;
  o.sor_order = order;
  o.threads = threads;
  o.min_per_thread = 1; /* exercise the team even on small colours */
  o.tol_abs = 1e-12;
  o.tol_rel = 1e-10;
  o.max_iter = 20000;
  jl_prox_ws ws = {0};
  jl_error err = {0};
  memset(lam, 0, 3 * sizeof(double) * (size_t)p->n);
  assert_int_equal(jl_prox_solve(p, &o, lam, &ws, st, &err), JL_OK);
  if (!st->converged) print_message("kind %d alpha %g: %d iterations, residual %g, restarts %d\n", kind, st->alpha, st->iterations, st->residual, st->restarts);
  assert_true(st->converged);
  jl_prox_ws_free(&ws);
}

static void test_solvers_agree(void **state) {
  (void)state;
  grid_problem *gp = calloc(1, sizeof *gp);
  make_grid(gp, 12, 3, 1); /* 432 spheres, 1224 contacts */
  const jl_contact_problem *p = &gp->p;
  int n = p->n;
  assert_true(n > 1000);
  double *ref = malloc(3 * sizeof(double) * (size_t)n), *lam = malloc(3 * sizeof(double) * (size_t)n);
  jl_prox_stats st;
  solve(p, JL_SOLVER_SOR, 1.0, 0, JL_SOR_SEQUENTIAL, 1, ref, &st);
  /* the known answer: vertical contacts carry the weight above them */
  double mgdt = 9.81e-3;
  for (int i = 0; i < n; ++i) {
    const double *f = p->frame + 9 * (size_t)i;
    if (fabs(f[2]) > 0.5) {
      int upper = gp->c.normal[3 * i + 2] < 0 ? gp->c.body_a[i] : gp->c.body_b[i];
      int z = upper % 3, above = 3 - z;
      assert_true(fabs(ref[3 * i] - above * mgdt) < 1e-8);
    } else {
      assert_true(fabs(ref[3 * i]) < 1e-8);
    }
  }
  struct { jl_solver_kind k; double alpha; int mf; jl_sor_order o; int threads; } v[] = {
    {JL_SOLVER_SOR, 1.0, 0, JL_SOR_COLOURED, 1}, {JL_SOLVER_SOR, 1.0, 0, JL_SOR_COLOURED, 2},
    {JL_SOLVER_SOR, 1.0, 1, JL_SOR_SEQUENTIAL, 1}, {JL_SOLVER_SOR, 1.0, 1, JL_SOR_COLOURED, 2},
    {JL_SOLVER_JOR, 0.35, 0, JL_SOR_COLOURED, 1}, {JL_SOLVER_JOR, 0.35, 0, JL_SOR_COLOURED, 2},
    {JL_SOLVER_JOR, 0.35, 1, JL_SOR_COLOURED, 2},
    {JL_SOLVER_APGD, 0.15, 0, JL_SOR_COLOURED, 1}, {JL_SOLVER_APGD, 0.15, 0, JL_SOR_COLOURED, 2},
    {JL_SOLVER_APGD, 0.15, 1, JL_SOR_COLOURED, 2},
  };
  double *first_jor = NULL, *first_apgd = NULL;
  for (size_t t = 0; t < sizeof v / sizeof v[0]; ++t) {
    solve(p, v[t].k, v[t].alpha, v[t].mf, v[t].o, v[t].threads, lam, &st);
    double diff = 0.0;
    for (int i = 0; i < 3 * n; ++i) diff = fmax(diff, fabs(lam[i] - ref[i]));
    assert_true(diff < 1e-8);
    if (v[t].k == JL_SOLVER_JOR && !first_jor) {
      first_jor = malloc(3 * sizeof(double) * (size_t)n);
      memcpy(first_jor, lam, 3 * sizeof(double) * (size_t)n);
    } else if (v[t].k == JL_SOLVER_JOR && !v[t].mf) {
      /* JOR does not depend on the thread count, bit for bit */
      assert_memory_equal(first_jor, lam, 3 * sizeof(double) * (size_t)n);
    }
    if (v[t].k == JL_SOLVER_APGD && !first_apgd) {
      first_apgd = malloc(3 * sizeof(double) * (size_t)n);
      memcpy(first_apgd, lam, 3 * sizeof(double) * (size_t)n);
    } else if (v[t].k == JL_SOLVER_APGD && !v[t].mf) {
      assert_memory_equal(first_apgd, lam, 3 * sizeof(double) * (size_t)n);
    }
  }
  free(first_jor);
  free(first_apgd);
  free(ref);
  free(lam);
  free_grid(gp);
  free(gp);
}

/* cols stacks of h unit cubes (m 1) on a plane, 2 m apart; 4 corner
 * contacts per face, or with vary 1 + (x + z) % 4 of them (units of every
 * length for the coloured SOR). */
static void make_box_stacks(grid_problem *gp, int cols, int h, int vary) {
  jl_error err = {0};
  assert_int_equal(jl_scene_init(&gp->s, &err), JL_OK);
  jl_body_spec b;
  jl_body_spec_default(&b);
  b.shape = JL_SHAPE_BOX;
  b.size[0] = b.size[1] = b.size[2] = 0.5;
  b.mass = 1.0;
  for (int x = 0; x < cols; ++x)
    for (int z = 0; z < h; ++z) {
      b.pos[0] = 2.0 * x;
      b.pos[2] = 0.5 + z;
      assert_true(jl_scene_add_body(&gp->s, &b, &err) >= 0);
    }
  double p0[3] = {0, 0, 0}, nz[3] = {0, 0, 1};
  int plane = jl_scene_add_plane(&gp->s, p0, nz, 0, &err);
  assert_int_equal(jl_contacts_init(&gp->c, 4 * cols * h, &err), JL_OK);
  jl_contacts *c = &gp->c;
  int n = 0;
  for (int x = 0; x < cols; ++x)
    for (int z = 0; z < h; ++z)
      for (int q = 0; q < (vary ? 1 + (x + z) % 4 : 4); ++q) {
        double px = 2.0 * x + ((q & 1) ? 0.5 : -0.5), py = (q & 2) ? 0.5 : -0.5;
        /* lower body first (the plane is always b) */
        int k = x * h + z;
        int a = z == 0 ? k : k - 1, bb = z == 0 ? plane : k;
        double sz = z == 0 ? -1.0 : 1.0;
        c->body_a[n] = a; c->body_b[n] = bb;
        c->point[3 * n] = px; c->point[3 * n + 1] = py; c->point[3 * n + 2] = z;
        c->normal[3 * n] = 0; c->normal[3 * n + 1] = 0; c->normal[3 * n + 2] = sz;
        c->gap[n] = 0.0;
        c->key[n] = (uint64_t)n;
        gp->mu[n] = 0.5; gp->en[n] = 0.0; gp->et[n] = 0.0;
        ++n;
      }
  c->count = n;
  memset(gp->dv, 0, sizeof gp->dv);
  for (int k = 0; k < cols * h; ++k) gp->dv[6 * k + 2] = -9.81e-3;
  jl_contact_law law = {gp->mu, gp->en, gp->et};
  memset(&gp->p, 0, sizeof gp->p);
  assert_int_equal(jl_contact_setup(&gp->p, &gp->s.bodies, c, &law, gp->dv, 1, 1, &err), JL_OK);
}

/* A stack of h unit cubes (m 1) on a plane, 4 corner contacts per face. */
static void make_box_stack(grid_problem *gp, int h) {
  make_box_stacks(gp, 1, h, 0);
}

/* JOR with alpha 1 diverges on a box stack (four corner contacts per face
 * each take the whole load); the solver must notice and halve alpha. Each
 * face then carries the weight above it, split evenly by symmetry. */
static void test_divergence_under_relaxes(void **state) {
  (void)state;
  grid_problem *gp = calloc(1, sizeof *gp);
  int h = 10;
  make_box_stack(gp, h);
  double lam[3 * 64];
  jl_prox_stats st;
  solve(&gp->p, JL_SOLVER_JOR, 1.0, 0, JL_SOR_COLOURED, 1, lam, &st);
  assert_true(st.restarts >= 1);
  assert_true(st.alpha < 1.0);
  for (int z = 0; z < h; ++z)
    for (int q = 0; q < 4; ++q) {
      assert_true(fabs(lam[3 * (4 * z + q)] - (h - z) * 9.81e-3 / 4) < 1e-8);
      assert_true(fabs(lam[3 * (4 * z + q) + 1]) < 1e-8);
    }
  free_grid(gp);
  free(gp);
}

/* Nesterov's sequence: t_1 = 1, t_2 = (1 + sqrt 5) / 2, t_3 = (1 + sqrt(1 + 4 t_2^2)) / 2;
 * beta = (t_k - 1) / t_{k+1}: 0 at an attempt's first iteration. */
static void test_apgd_momentum_sequence(void **state) {
  (void)state;
  jl_pm_state s;
  jl_pm_state_init(&s, 0.15);
  assert_true(jl_pm_beta(&s) == 0.0);
  jl_pm_decide(&s, 1.0, 0, 100);
  assert_int_equal(s.state, JL_PM_RUN);
  double t2 = 0.5 * (1.0 + sqrt(5.0)), t3 = 0.5 * (1.0 + sqrt(1.0 + 4.0 * t2 * t2));
  assert_true(fabs(s.theta - t2) < 1e-15);
  assert_true(fabs(jl_pm_beta(&s) - (t2 - 1.0) / t3) < 1e-15);
  for (int k = 0; k < 200; ++k) jl_pm_decide(&s, 1.0 - 1e-3 * k, 0, 1000);
  /* beta_k = 1 - 3 / k + O(1 / k^2) */
  assert_true(jl_pm_beta(&s) > 0.98 && jl_pm_beta(&s) < 1.0);
  /* a residual that grows restarts the momentum, not the solve */
  jl_pm_decide(&s, 0.9, 0, 1000);
  assert_int_equal(s.state, JL_PM_RUN);
  assert_true(jl_pm_beta(&s) == 0.0);
  jl_pm_decide(&s, 0.8, 0, 1000);
  assert_true(fabs(s.theta - t2) < 1e-15);
  jl_pm_decide(&s, INFINITY, 0, 1000); /* a divergence restart starts it over too */
  assert_int_equal(s.state, JL_PM_RESTART);
  assert_true(jl_pm_beta(&s) == 0.0);
}

/* One APGD iteration is one JOR iteration (no momentum yet), bit for bit;
 * on a tall stack APGD reaches the known answer in far fewer iterations
 * than JOR at its own stable alpha. */
static void test_apgd_tall_stack(void **state) {
  (void)state;
  grid_problem *gp = calloc(1, sizeof *gp);
  int h = 20;
  make_box_stack(gp, h);
  double *a = malloc(3 * sizeof(double) * 4 * (size_t)h), *b = malloc(3 * sizeof(double) * 4 * (size_t)h);
  jl_prox_opts o;
  jl_prox_opts_default(&o);
  o.matrix_free = 1;
  o.max_iter = 1;
  o.alpha = 0.15;
  jl_prox_ws ws = {0};
  jl_error err = {0};
  jl_prox_stats st;
  memset(a, 0, 3 * sizeof(double) * 4 * (size_t)h);
  memset(b, 0, 3 * sizeof(double) * 4 * (size_t)h);
  o.kind = JL_SOLVER_JOR;
  assert_int_equal(jl_prox_solve(&gp->p, &o, a, &ws, &st, &err), JL_OK);
  o.kind = JL_SOLVER_APGD;
  assert_int_equal(jl_prox_solve(&gp->p, &o, b, &ws, &st, &err), JL_OK);
  assert_memory_equal(a, b, 3 * sizeof(double) * 4 * (size_t)h);
  assert_true(a[0] > 0.0);
  jl_prox_ws_free(&ws);
  jl_prox_stats sj, sa;
  solve(&gp->p, JL_SOLVER_JOR, 0.35, 1, JL_SOR_COLOURED, 1, a, &sj);
  solve(&gp->p, JL_SOLVER_APGD, 0.15, 1, JL_SOR_COLOURED, 2, b, &sa);
  for (int z = 0; z < h; ++z)
    for (int q = 0; q < 4; ++q) {
      assert_true(fabs(a[3 * (4 * z + q)] - (h - z) * 9.81e-3 / 4) < 1e-8);
      assert_true(fabs(b[3 * (4 * z + q)] - (h - z) * 9.81e-3 / 4) < 1e-8);
    }
  print_message("tall stack (%d boxes): JOR %d iterations, APGD %d\n", h, sj.iterations, sa.iterations);
  assert_int_equal(sa.restarts, 0);
  assert_true(5 * sa.iterations < sj.iterations);
  free(a);
  free(b);
  free_grid(gp);
  free(gp);
}

/* A set stop flag ends every method's solve after one iteration, not
 * converged; a deadline in the past does the same; without them the solve
 * runs on (tolerance 0: many iterations). */
static void test_solve_stops(void **state) {
  (void)state;
  grid_problem *gp = calloc(1, sizeof *gp);
  make_box_stack(gp, 20);
  double *lam = calloc(3 * 4 * 20, sizeof *lam);
  const jl_solver_kind kinds[3] = {JL_SOLVER_JOR, JL_SOLVER_SOR, JL_SOLVER_APGD};
  for (int k = 0; k < 3; ++k)
    for (int how = 0; how < 3; ++how) {
      jl_prox_opts o;
      jl_prox_opts_default(&o);
      jl_prox_opts_set_kind(&o, kinds[k]);
      o.matrix_free = 1;
      o.tol_abs = o.tol_rel = 0.0;
      o.max_iter = 50000;
      volatile sig_atomic_t stop = how == 1;
      o.stop = &stop;
      if (how == 2) o.deadline = jl_time_now() - 1.0;
      jl_prox_ws ws = {0};
      jl_error err = {0};
      jl_prox_stats st;
      memset(lam, 0, 3 * 4 * 20 * sizeof *lam);
      assert_int_equal(jl_prox_solve(&gp->p, &o, lam, &ws, &st, &err), JL_OK);
      if (how) {
        assert_false(st.converged);
        assert_int_equal(st.iterations, 1);
      } else {
        assert_true(st.iterations > 10);
      }
      jl_prox_ws_free(&ws);
    }
  free(lam);
  free_grid(gp);
  free(gp);
}

static void test_colouring_proper(void **state) {
  (void)state;
  grid_problem *gp = calloc(1, sizeof *gp);
  make_grid(gp, 12, 3, 0);
  jl_colouring col = {0};
  jl_error err = {0};
  assert_int_equal(jl_contact_colour(&gp->p, 1, &col, &err), JL_OK);
  const jl_contact_problem *p = &gp->p;
  /* no two contacts of one colour share a dynamic body; ground contacts do not count */
  for (int k = 0; k < p->nbodies; ++k)
    for (int e = p->body_ptr[k]; e < p->body_ptr[k + 1]; ++e)
      for (int f = e + 1; f < p->body_ptr[k + 1]; ++f)
        assert_int_not_equal(col.colour[p->body_contact[e]], col.colour[p->body_contact[f]]);
  /* each sphere has at most 6 contacts: greedy needs at most 2 * 6 - 1 colours */
  assert_true(col.colours <= 11);
  assert_int_equal(col.group_ptr[col.groups], p->n);
  /* with a large minimum size everything lands in the one merged group */
  assert_int_equal(jl_contact_colour(&gp->p, 1 << 30, &col, &err), JL_OK);
  assert_int_equal(col.groups, 1);
  assert_true(col.merged);
  jl_colouring_free(&col);
  free_grid(gp);
  free(gp);
}

/* On box stacks (units of 1 to 4 contacts of one body pair): contacts of
 * one colour that share a dynamic body are of one unit, a unit lies in one
 * segment in contact order, and a segment holds at most JL_COLOUR_WEAVE
 * units. */
static void test_colouring_units(void **state) {
  (void)state;
  grid_problem *gp = calloc(1, sizeof *gp);
  make_box_stacks(gp, 30, 5, 1);
  const jl_contact_problem *p = &gp->p;
  jl_colouring col = {0};
  jl_error err = {0};
  assert_int_equal(jl_contact_colour(p, JL_COLOUR_MIN_SIZE, &col, &err), JL_OK);
  /* a chain of units per stack: two colours */
  assert_int_equal(col.colours, 2);
  for (int k = 0; k < p->nbodies; ++k)
    for (int e = p->body_ptr[k]; e < p->body_ptr[k + 1]; ++e)
      for (int f = e + 1; f < p->body_ptr[k + 1]; ++f) {
        int i = p->body_contact[e], j = p->body_contact[f];
        if (col.colour[i] == col.colour[j])
          assert_true(p->ka[i] == p->ka[j] && p->kb[i] == p->kb[j]);
      }
  int *seen = calloc((size_t)p->n, sizeof(int));
  for (int g = 0; g < col.groups; ++g)
    for (int sg = col.group_seg[g]; sg < col.group_seg[g + 1]; ++sg) {
      int a = col.seg_ptr[sg], b = col.seg_ptr[sg + 1], pairs = 0, last[JL_COLOUR_WEAVE];
      assert_true(a >= col.group_ptr[g] && b <= col.group_ptr[g + 1] && a < b);
      for (int e = a; e < b; ++e) {
        int i = col.order[e];
        seen[i]++;
        /* the unit's contacts in order: i follows the last one of its pair */
        int u = -1;
        for (int q = 0; q < pairs; ++q)
          if (p->ka[last[q]] == p->ka[i] && p->kb[last[q]] == p->kb[i]) u = q;
        if (u < 0) {
          assert_true(pairs < JL_COLOUR_WEAVE);
          u = pairs++;
        } else {
          assert_int_equal(i, last[u] + 1);
        }
        last[u] = i;
      }
    }
  for (int i = 0; i < p->n; ++i) assert_int_equal(seen[i], 1);
  free(seen);
  jl_colouring_free(&col);
  free_grid(gp);
  free(gp);
}

/* The matrix-free solvers on the problem's arrays with prox_math.h's
 * per-contact functions, one thread, in the solver's order (SOR: colour
 * groups, their order reversed on odd iterations and the merged group
 * reversed inside;
 * JOR, APGD: du rebuilt per body from the new iterate), restarts included:
 * what the solver's packed rows (prox_rows.h) and per-contact terms must
 * reproduce bit for bit. */
static void reference_mf(const jl_contact_problem *p, const jl_prox_opts *o,
                         const jl_colouring *col, double *lam, jl_pm_state *pm) {
  int n = p->n, nb = p->nbodies, apgd = o->kind == JL_SOLVER_APGD;
  size_t bytes = 3 * sizeof(double) * (size_t)n;
  double *init = malloc(bytes), *y = malloc(bytes), *nx = malloc(bytes), *ny = malloc(bytes);
  double *du = calloc(6 * (size_t)nb, sizeof *du);
  memcpy(init, lam, bytes);
  memcpy(y, lam, bytes);
  jl_pm_state_init(pm, o->alpha);
  for (;;) {
    for (int k = 0; k < nb; ++k)
      jl_pm_du_body(k, p->body_ptr, p->body_contact, p->ka, p->frame, p->irx, p->im,
                    apgd ? y : lam, du + 6 * (size_t)k);
    for (;;) {
      double res = 0.0, r;
      int ok = 1;
      if (o->kind == JL_SOLVER_SOR) {
        int back = pm->iterations & 1;
        for (int gg = 0; gg < col->groups; ++gg) {
          int g = back ? col->groups - 1 - gg : gg;
          int a = col->group_ptr[g], b = col->group_ptr[g + 1];
          int rev = back && col->merged && g == col->groups - 1;
          for (int e = a; e < b; ++e) {
            int i = col->order[rev ? a + b - 1 - e : e];
            r = jl_pm_sor_contact(i, p->c, p->ka, p->kb, p->frame, p->rx, p->irx, p->im, p->diag,
                                  p->mu, pm->alpha, o->tol_rel, o->tol_abs, lam, du, &ok);
            if (!(r <= res)) res = r;
          }
        }
      } else {
        double beta = apgd ? jl_pm_beta(pm) : 0.0, xi[3];
        const double *src = apgd ? y : lam;
        for (int i = 0; i < n; ++i) {
          jl_pm_xi_mf(i, p->c, p->ka, p->kb, p->frame, p->rx, du, xi);
          r = jl_pm_update(xi, src + 3 * (size_t)i, pm->alpha, p->diag + 2 * (size_t)i, p->mu[i],
                           o->tol_rel, o->tol_abs, nx + 3 * (size_t)i, &ok);
          if (!(r <= res)) res = r;
          if (apgd) jl_pm_extrapolate(nx + 3 * (size_t)i, lam + 3 * (size_t)i, beta, ny + 3 * (size_t)i);
        }
        memcpy(lam, nx, bytes);
        if (apgd) memcpy(y, ny, bytes);
        for (int k = 0; k < nb; ++k)
          jl_pm_du_body(k, p->body_ptr, p->body_contact, p->ka, p->frame, p->irx, p->im,
                        apgd ? y : lam, du + 6 * (size_t)k);
      }
      jl_pm_decide(pm, res, ok, o->max_iter);
      if (pm->state != JL_PM_RUN) break;
    }
    if (pm->state == JL_PM_STOP) break;
    memcpy(lam, init, bytes);
    memcpy(y, init, bytes);
  }
  free(init);
  free(y);
  free(nx);
  free(ny);
  free(du);
}

/* jl_prox_rows_pack copies each field of the contact it is given. */
static void test_rows_pack(void **state) {
  (void)state;
  grid_problem *gp = calloc(1, sizeof *gp);
  make_grid(gp, 6, 2, 0);
  const jl_contact_problem *p = &gp->p;
  int n = p->n;
  int *order = malloc(sizeof(int) * (size_t)n);
  for (int e = 0; e < n; ++e) order[e] = (7 * e + 3) % n; /* a permutation: n is not a multiple of 7 */
  assert_int_not_equal(n % 7, 0);
  jl_prox_row *rows = malloc(sizeof(jl_prox_row) * (size_t)n);
  jl_prox_rows_pack(p, order, 0.75, 0, n, rows);
  for (int e = 0; e < n; ++e) {
    size_t i = (size_t)order[e];
    const jl_prox_row *r = rows + e;
    assert_int_equal(r->ka, p->ka[i]);
    assert_int_equal(r->kb, p->kb[i]);
    assert_memory_equal(r->c, p->c + 3 * i, sizeof r->c);
    assert_memory_equal(r->frame, p->frame + 9 * i, sizeof r->frame);
    assert_memory_equal(r->rx, p->rx + 18 * i, sizeof r->rx);
    assert_memory_equal(r->irx, p->irx + 18 * i, sizeof r->irx);
    assert_memory_equal(r->im, p->im + 2 * i, sizeof r->im);
    assert_true(r->mu == p->mu[i]);
    assert_true(r->r[0] == 0.75 / p->diag[2 * i] && r->r[1] == 0.75 / p->diag[2 * i + 1]);
  }
  jl_prox_rows_set_alpha(p, order, 0.5, 0, n, rows);
  for (int e = 0; e < n; ++e)
    assert_true(rows[e].r[0] == 0.5 / p->diag[2 * (size_t)order[e]]);
  free(rows);
  free(order);
  free_grid(gp);
  free(gp);
}

/* Matrix-free SOR (coloured), JOR and APGD on the packed rows give the
 * impulses, iteration count and restarts of the arrays' reference, bit for
 * bit, on 1, 2, 3, 5 and 8 threads (SOR's threads wait on their neighbours
 * between colours, each with its own set of them): on a sphere grid with ground contacts (a static
 * side) from a warm start, to the iteration cap; and on a box stack where
 * JOR with alpha 1.6 diverges and restarts with the rows' prox steps redone. */
static void test_rows_match_arrays(void **state) {
  (void)state;
  for (int scene = 0; scene < 3; ++scene) {
    grid_problem *gp = calloc(1, sizeof *gp);
    if (scene == 0)
      make_grid(gp, 10, 3, 0);
    else if (scene == 1)
      make_box_stack(gp, 10);
    else
      make_box_stacks(gp, 24, 6, 1);
    const jl_contact_problem *p = &gp->p;
    int n = p->n;
    size_t bytes = 3 * sizeof(double) * (size_t)n;
    double *start = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
    for (int i = 0; i < 3 * n; ++i) start[i] = scene != 1 ? 1e-3 * (double)((i * 37) % 11) : 0.0;
    const jl_solver_kind kinds[3] = {JL_SOLVER_SOR, JL_SOLVER_JOR, JL_SOLVER_APGD};
    for (int k = 0; k < 3; ++k) {
      if (scene == 1 && kinds[k] != JL_SOLVER_JOR) continue;
      jl_prox_opts o;
      jl_prox_opts_default(&o);
      jl_prox_opts_set_kind(&o, kinds[k]);
      o.matrix_free = 1;
      o.min_per_thread = 1;
      if (scene != 1) {
        o.tol_abs = o.tol_rel = 0.0; /* never converged: all max_iter sweeps, both directions */
        o.max_iter = 41;
      } else {
        o.alpha = 1.6; /* diverges, converges at 0.8 */
        o.tol_abs = 1e-12;
        o.tol_rel = 1e-10;
        o.max_iter = 20000;
      }
      jl_error err = {0};
      jl_colouring col = {0};
      assert_int_equal(jl_contact_colour(p, JL_COLOUR_MIN_SIZE, &col, &err), JL_OK);
      if (scene == 2) {
        /* the stacks: colour groups of woven units of 1 to 4 contacts */
        assert_true(col.groups >= 2 && !col.merged);
        assert_int_equal(col.group_seg[col.groups], 2 * ((24 * 6 / 2 + JL_COLOUR_WEAVE - 1) / JL_COLOUR_WEAVE));
      }
      jl_pm_state pm;
      memcpy(want, start, bytes);
      reference_mf(p, &o, &col, want, &pm);
      if (scene != 1) assert_int_equal(pm.iterations, 41);
      else
        assert_true(pm.restarts >= 1 && pm.converged);
      const int team[] = {1, 2, 3, 5, 8};
      for (int t = 0; t < 5; ++t) {
        o.threads = team[t];
        jl_prox_ws ws = {0};
        jl_prox_stats st;
        memcpy(got, start, bytes);
        assert_int_equal(jl_prox_solve(p, &o, got, &ws, &st, &err), JL_OK);
        assert_int_equal(st.iterations, pm.iterations);
        assert_int_equal(st.restarts, pm.restarts);
        assert_memory_equal(got, want, bytes);
        jl_prox_ws_free(&ws);
      }
      jl_colouring_free(&col);
    }
    free(start);
    free(want);
    free(got);
    free_grid(gp);
    free(gp);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_prox_projection),
    cmocka_unit_test(test_delassus_hand_computed),
    cmocka_unit_test(test_solvers_agree),
    cmocka_unit_test(test_divergence_under_relaxes),
    cmocka_unit_test(test_apgd_momentum_sequence),
    cmocka_unit_test(test_apgd_tall_stack),
    cmocka_unit_test(test_colouring_proper),
    cmocka_unit_test(test_colouring_units),
    cmocka_unit_test(test_solve_stops),
    cmocka_unit_test(test_rows_pack),
    cmocka_unit_test(test_rows_match_arrays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
