/* The physics checks of the scene pipeline against known answers, run
 * through the runner (scene_runner.h) so the same checks hold the CPU path
 * (tests/test_scene_physics.c) and the device (tests/gpu_scene_physics.c)
 * to the same analytic tolerances. Each check is a cmocka test whose state
 * is the jl_device to run on (cmocka_unit_test_prestate). */
#ifndef JL_SCENE_CHECKS_H
#define JL_SCENE_CHECKS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "scene.h"
#include "scene_fixtures.h"
#include "scene_gpu_stats.h"
#include "scene_runner.h"

#define SC_G 9.81

static void sc_new_scene(jl_scene *s, double dt, double mu, double e) {
  jl_error err = {0};
  assert_int_equal(jl_scene_init(s, &err), JL_OK);
  s->dt = dt;
  jl_scene_set_pair(s, 0, 0, mu, e, 0.0);
}

static void sc_add_ground(jl_scene *s) {
  jl_error err = {0};
  double p[3] = {0, 0, 0}, n[3] = {0, 0, 1};
  assert_true(jl_scene_add_plane(s, p, n, 0, &err) >= 0);
}

static int sc_add(jl_scene *s, jl_shape shape, double a, double b, double c, double x, double y,
                  double z, double mass) {
  jl_error err = {0};
  jl_body_spec spec;
  jl_body_spec_default(&spec);
  spec.shape = shape;
  spec.size[0] = a; spec.size[1] = b; spec.size[2] = c;
  spec.pos[0] = x; spec.pos[1] = y; spec.pos[2] = z;
  spec.mass = mass;
  int k = jl_scene_add_body(s, &spec, &err);
  assert_true(k >= 0);
  return k;
}

static void sc_start(jl_scene_runner *r, jl_scene *s, void **state) {
  jl_error err = {0};
  int rc = jl_scene_runner_init(r, s, (const jl_device *)*state, &err);
  if (rc) fprintf(stderr, "runner: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
}

static void sc_step(jl_scene_runner *r, jl_scene_run_stats *ss) {
  jl_error err = {0};
  int rc = jl_scene_runner_step(r, ss, &err);
  if (rc) fprintf(stderr, "step: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
}

/* the current state into the scene's bodies */
static void sc_fetch(jl_scene_runner *r) {
  jl_error err = {0};
  int rc = jl_scene_runner_fetch(r, &err);
  if (rc) fprintf(stderr, "fetch: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
}

/* the end of a two-run comparison: both runs' impulse copies, runners and
 * scenes */
static void sc_pair_free(uint64_t *k1, uint64_t *k2, double *i1, double *i2, jl_scene_runner *ra,
                         jl_scene_runner *rb, jl_scene *a, jl_scene *b) {
  free(k1);
  free(k2);
  free(i1);
  free(i2);
  jl_scene_runner_free(ra);
  jl_scene_runner_free(rb);
  jl_scene_free(a);
  jl_scene_free(b);
}

static void sc_energy(jl_scene_runner *r, double *ke, double *pe) {
  jl_error err = {0};
  int rc = jl_scene_runner_energy(r, ke, pe, &err);
  if (rc) fprintf(stderr, "energy: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
}

/* Resting sphere: one contact, normal impulse m g dt every step (in world
 * coordinates: |impulse| = m g dt, no tangential part), no drift. */
static void sc_sphere_rests(void **state) {
  jl_scene s;
  sc_new_scene(&s, 1e-3, 0.5, 0.0);
  sc_add_ground(&s);
  int k = sc_add(&s, JL_SHAPE_SPHERE, 0.5, 0, 0, 0.3, -0.2, 0.5, 2.0);
  jl_scene_runner r;
  sc_start(&r, &s, state);
  jl_scene_run_stats ss;
  uint64_t *keys = NULL;
  double *imp = NULL;
  int cap = 0, n = 0;
  jl_error err = {0};
  for (int i = 0; i < 1000; ++i) {
    sc_step(&r, &ss);
    assert_int_equal(ss.contacts, 1);
    assert_int_equal(jl_scene_runner_impulses(&r, &keys, &imp, &cap, &n, &err), JL_OK);
    assert_int_equal(n, 1);
    assert_true(fabs(fabs(imp[2]) - 2.0 * SC_G * 1e-3) < 1e-12);
    assert_true(fabs(imp[0]) < 1e-15 && fabs(imp[1]) < 1e-15);
  }
  sc_fetch(&r);
  const double *x = s.bodies.pos + 3 * k;
  assert_true(fabs(x[0] - 0.3) < 1e-12 && fabs(x[1] + 0.2) < 1e-12 && fabs(x[2] - 0.5) < 1e-12);
  free(keys);
  free(imp);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
}

/* A box sliding at v0 on a plane decelerates at mu g. */
static void sc_block_slides(void **state) {
  jl_scene s;
  double mu = 0.3;
  sc_new_scene(&s, 1e-3, mu, 0.0);
  sc_add_ground(&s);
  int k = sc_add(&s, JL_SHAPE_BOX, 0.5, 0.5, 0.25, 0, 0, 0.25, 1.0);
  s.bodies.vel[3 * k] = 5.0;
  jl_scene_runner r;
  sc_start(&r, &s, state);
  jl_scene_run_stats ss;
  double v1 = 0, v2 = 0;
  for (int i = 1; i <= 1200; ++i) {
    sc_step(&r, &ss);
    assert_true(ss.contacts == 4);
    if (i == 200 || i == 1200) sc_fetch(&r);
    if (i == 200) v1 = s.bodies.vel[3 * k];
    if (i == 1200) v2 = s.bodies.vel[3 * k];
  }
  double a = (v1 - v2) / 1.0;
  assert_true(fabs(a - mu * SC_G) < 0.01 * mu * SC_G);
  assert_true(fabs(s.bodies.pos[3 * k + 2] - 0.25) < 1e-4);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
}

/* On an incline (gravity tilted by theta) a box sticks when tan(theta) < mu
 * and slides at g (sin - mu cos) otherwise. */
static double sc_incline_run(void **state, double theta_deg, double mu, double *vx) {
  jl_scene s;
  sc_new_scene(&s, 1e-3, mu, 0.0);
  double th = theta_deg * 3.14159265358979323846 / 180.0;
  s.gravity[0] = SC_G * sin(th);
  s.gravity[2] = -SC_G * cos(th);
  sc_add_ground(&s);
  int k = sc_add(&s, JL_SHAPE_BOX, 0.5, 0.5, 0.25, 0, 0, 0.25, 1.0);
  jl_scene_runner r;
  sc_start(&r, &s, state);
  jl_scene_run_stats ss;
  for (int i = 0; i < 1000; ++i) sc_step(&r, &ss);
  sc_fetch(&r);
  double dx = s.bodies.pos[3 * k];
  *vx = s.bodies.vel[3 * k];
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
  return dx;
}

static void sc_incline(void **state) {
  double v;
  double dx = sc_incline_run(state, 20.0, 0.5, &v); /* tan 20 deg = 0.364 < 0.5 */
  assert_true(fabs(dx) < 1e-6 && fabs(v) < 1e-6);
  dx = sc_incline_run(state, 35.0, 0.5, &v); /* tan 35 deg = 0.700 > 0.5 */
  double th = 35.0 * 3.14159265358979323846 / 180.0;
  double a = SC_G * (sin(th) - 0.5 * cos(th));
  assert_true(fabs(v - a * 1.0) < 0.01 * a);
  assert_true(fabs(dx - 0.5 * a) < 0.01 * 0.5 * a);
}

/* A ball dropped from h with restitution e rebounds to e^2 h. */
static void sc_ball_rebounds(void **state) {
  jl_scene s;
  double e = 0.8, h = 1.0, r0 = 0.1;
  sc_new_scene(&s, 1e-4, 0.3, e);
  sc_add_ground(&s);
  int k = sc_add(&s, JL_SHAPE_SPHERE, r0, 0, 0, 0, 0, r0 + h, 1.0);
  jl_scene_runner r;
  sc_start(&r, &s, state);
  jl_scene_run_stats ss;
  int bounced = 0;
  double apex = 0.0;
  for (int i = 0; i < 10000; ++i) {
    sc_step(&r, &ss);
    sc_fetch(&r);
    double z = s.bodies.pos[3 * k + 2] - r0, vz = s.bodies.vel[3 * k + 2];
    if (ss.contacts > 0) bounced = 1;
    if (bounced && vz > 0 && z > apex) apex = z;
    if (bounced && vz < 0 && apex > 0) break;
  }
  assert_true(bounced);
  assert_true(fabs(apex - e * e * h) < 0.01 * e * e * h);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
}

/* Newton's cradle, e = 1, no gravity: five balls 1 mm apart, the first
 * moving at 1 m/s; the velocity passes through to the last ball. */
static void sc_newtons_cradle(void **state) {
  jl_scene s;
  sc_new_scene(&s, 1e-4, 0.0, 1.0);
  s.gravity[2] = 0.0;
  int first = 0;
  for (int i = 0; i < 5; ++i) {
    int k = sc_add(&s, JL_SHAPE_SPHERE, 0.5, 0, 0, i * 1.001, 0, 0, 1.0);
    if (i == 0) first = k;
  }
  s.bodies.vel[3 * first] = 1.0;
  jl_scene_runner r;
  sc_start(&r, &s, state);
  jl_scene_run_stats ss;
  for (int i = 0; i < 1000; ++i) sc_step(&r, &ss); /* 0.1 s: 4 mm of gaps crossed */
  double ke, pe;
  sc_energy(&r, &ke, &pe);
  assert_true(fabs(ke - 0.5) < 1e-9);
  sc_fetch(&r);
  for (int i = 0; i < 4; ++i) assert_true(fabs(s.bodies.vel[3 * i]) < 1e-9);
  assert_true(fabs(s.bodies.vel[3 * 4] - 1.0) < 1e-9);
  jl_scene_energy(&s, &ke, &pe);
  assert_true(fabs(ke - 0.5) < 1e-9);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
}

/* max distance of any dynamic body from where it started */
static double sc_max_drift(const jl_scene *s, const double *x0) {
  double d = 0.0;
  for (int k = 0; k < s->bodies.count; ++k) {
    if (s->bodies.is_static[k]) continue;
    double dx = s->bodies.pos[3 * k] - x0[3 * k], dy = s->bodies.pos[3 * k + 1] - x0[3 * k + 1],
           dz = s->bodies.pos[3 * k + 2] - x0[3 * k + 2];
    d = fmax(d, sqrt(dx * dx + dy * dy + dz * dz));
  }
  return d;
}

/* Runs s for steps steps on the test's path and returns sc_max_drift of the
 * final state from the start; *last: the last step's stats. Frees the runner. */
static double sc_run_drift(jl_scene *s, void **state, int steps, jl_scene_run_stats *last) {
  double *x0 = malloc(3 * sizeof(double) * (size_t)s->bodies.count);
  assert_non_null(x0);
  memcpy(x0, s->bodies.pos, 3 * sizeof(double) * (size_t)s->bodies.count);
  jl_scene_runner r;
  sc_start(&r, s, state);
  for (int i = 0; i < steps; ++i) sc_step(&r, last);
  sc_fetch(&r);
  double d = sc_max_drift(s, x0);
  free(x0);
  jl_scene_runner_free(&r);
  return d;
}

/* A stack of 10 boxes stands for 10 s with less than 1 mm drift. */
static void sc_box_stack_stands(void **state) {
  jl_scene s;
  sc_new_scene(&s, 0.005, 0.6, 0.0);
  sc_add_ground(&s);
  jl_body_spec proto;
  jl_body_spec_default(&proto);
  jl_error err = {0};
  double he[3] = {0.5, 0.5, 0.5}, origin[3] = {0, 0, 0};
  assert_int_equal(jl_scene_gen_box_stack(&s, &proto, 10, he, 0.0, origin, &err), JL_OK);
  jl_scene_run_stats ss;
  assert_true(sc_run_drift(&s, state, 2000, &ss) < 1e-3);
  assert_int_equal(ss.contacts, 40);
  jl_scene_free(&s);
}

/* The 20-row box pyramid (210 boxes, 1 cm apart in a row) stands
 * for 1 s: no box moves by more than 0.5% of its size. (The 100-row pyramid
 * runs in scripts/bench-scenes.) */
static void sc_pyramid20(jl_scene *s) {
  sc_add_ground(s);
  jl_body_spec proto;
  jl_body_spec_default(&proto);
  jl_error err = {0};
  double he[3] = {0.5, 0.5, 0.5}, origin[3] = {0, 0, 0};
  assert_int_equal(jl_scene_gen_box_pyramid(s, &proto, 20, he, 0.01, origin, &err), JL_OK);
  assert_int_equal(s->bodies.count, 211);
}

static void sc_pyramid_stands(void **state) {
  jl_scene s;
  sc_new_scene(&s, 0.01, 0.6, 0.0);
  s.solver.max_iter = 500;
  sc_pyramid20(&s);
  jl_scene_run_stats ss;
  assert_true(sc_run_drift(&s, state, 100, &ss) < 5e-3);
  jl_scene_free(&s);
}

/* The same pyramid with APGD: the first solve from rest converges within
 * the cap, and from there each step's warm start leaves it a few
 * iterations (measured on the CPU: 6 on average; SOR above runs its 500).
 * It stands by the same measure, and converged in the last step. */
static void sc_pyramid_stands_apgd(void **state) {
  jl_scene s;
  sc_new_scene(&s, 0.01, 0.6, 0.0);
  jl_prox_opts_set_kind(&s.solver, JL_SOLVER_APGD);
  s.solver.max_iter = 300;
  sc_pyramid20(&s);
  jl_scene_run_stats ss;
  double d = sc_run_drift(&s, state, 100, &ss);
  print_message("20-row pyramid, APGD, 1 s: max displacement %.3g m, last step %d iterations\n",
                d, ss.iterations);
  assert_true(d < 5e-3);
  assert_true(ss.converged && ss.iterations < 50);
  jl_scene_free(&s);
}

/* A dissipative pile (e = 0, friction) dropped into a container: kinetic
 * plus potential energy never increases by more than the solver tolerance
 * allows (1e-6 of the initial energy in one step; measured 5e-8 on the CPU). */
static void sc_pile_energy_decreases(void **state) {
  jl_scene s;
  sc_new_scene(&s, 1e-3, 0.5, 0.0);
  jl_error err = {0};
  double p[5][3] = {{0, 0, 0}, {-1.5, 0, 0}, {1.5, 0, 0}, {0, -1.5, 0}, {0, 1.5, 0}};
  double n[5][3] = {{0, 0, 1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}};
  for (int w = 0; w < 5; ++w) assert_true(jl_scene_add_plane(&s, p[w], n[w], 0, &err) >= 0);
  jl_body_spec proto;
  jl_body_spec_default(&proto);
  double blo[3] = {-1.5, -1.5, 0.5}, bhi[3] = {1.5, 1.5, 3.0};
  assert_int_equal(jl_scene_gen_sphere_pile(&s, &proto, 60, 0.15, 0.25, blo, bhi, 7, &err), JL_OK);
  jl_scene_runner r;
  sc_start(&r, &s, state);
  jl_scene_run_stats ss;
  double ke, pe;
  sc_energy(&r, &ke, &pe);
  double prev = ke + pe, first = prev, worst = 0.0;
  int contacts = 0;
  for (int i = 0; i < 1500; ++i) {
    sc_step(&r, &ss);
    sc_energy(&r, &ke, &pe);
    double e = ke + pe;
    worst = fmax(worst, e - prev);
    prev = e;
    contacts = ss.contacts > contacts ? ss.contacts : contacts;
  }
  fprintf(stderr, "pile: E %g -> %g, worst increase %g, max contacts %d\n", first, prev, worst, contacts);
  assert_true(contacts > 60);
  assert_true(worst <= 1e-6 * fabs(first));
  assert_true(prev < first);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
}

/* Warm starts (impulses carried by contact key) cut the iterations of a
 * resting stack to a fraction and give the same state to the tolerance. */
static long sc_stack_iterations(void **state, int warm, double *top_z) {
  jl_scene s;
  sc_new_scene(&s, 0.005, 0.6, 0.0);
  s.solver.warm_start = warm;
  sc_add_ground(&s);
  jl_body_spec proto;
  jl_body_spec_default(&proto);
  jl_error err = {0};
  double he[3] = {0.5, 0.5, 0.5}, origin[3] = {0, 0, 0};
  assert_int_equal(jl_scene_gen_box_stack(&s, &proto, 5, he, 0.0, origin, &err), JL_OK);
  jl_scene_runner r;
  sc_start(&r, &s, state);
  jl_scene_run_stats ss;
  long total = 0;
  for (int i = 0; i < 200; ++i) {
    sc_step(&r, &ss);
    total += ss.iterations;
  }
  sc_fetch(&r);
  *top_z = s.bodies.pos[3 * 5 + 2];
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
  return total;
}

static void sc_warm_start_helps(void **state) {
  double zw, zc;
  long warm = sc_stack_iterations(state, 1, &zw), cold = sc_stack_iterations(state, 0, &zc);
  fprintf(stderr, "stack of 5, 200 steps: %ld iterations warm, %ld cold; top z %.9f / %.9f\n",
          warm, cold, zw, zc);
  assert_true(warm * 4 < cold);
  assert_true(fabs(zw - 4.5) < 1e-4 && fabs(zc - 4.5) < 1e-4);
}

/* Agreement of two runs of one scene (two devices, or two solvers): a
 * 3x3x3 grid of touching spheres (r 0.5) dropped 1 mm onto a plane, its top
 * layer sliding at 0.3 m/s over the one below (mu 0.3), 100 steps of 5 ms,
 * a fixed 500 iterations per step (tolerances 0). At that budget the prox
 * iteration has converged: the same run with SOR and with JOR
 * on the CPU agrees to 4e-13 m in positions and 3e-9 of the largest impulse
 * (measured). The stated tolerances: */
#define SC_CMP_POS 1e-9 /* m, every coordinate of every body, every step */
#define SC_CMP_IMP 1e-6 /* of the step's largest impulse, every component by contact key */
#define SC_CMP_STEPS 100

static void sc_compare_scene(jl_scene *s, jl_solver_kind kind) {
  jl_error err = {0};
  sc_new_scene(s, 0.005, 0.3, 0.0);
  sc_add_ground(s);
  jl_body_spec proto;
  jl_body_spec_default(&proto);
  int counts[3] = {3, 3, 3};
  double o[3] = {0, 0, 0.501};
  assert_int_equal(jl_scene_gen_sphere_grid(s, &proto, 0.5, counts, 1.0, o, &err), JL_OK);
  for (int k = 0; k < s->bodies.count; ++k)
    if (!s->bodies.is_static[k] && s->bodies.pos[3 * k + 2] > 2.0) s->bodies.vel[3 * k] = 0.3;
  s->solver.kind = kind;
  s->solver.alpha = kind == JL_SOLVER_JOR ? 0.3 : 1.0;
  s->solver.max_iter = 500;
  s->solver.tol_abs = s->solver.tol_rel = 0.0;
}

/* Runs the comparison scene with solver ka on device a and kb on b; the
 * contact counts must match every step; *pos, *imp: the largest differences
 * (m; fraction of the step's largest impulse). */
static void sc_compare_runs(const jl_device *a, jl_solver_kind ka, const jl_device *b,
                            jl_solver_kind kb, double *pos, double *imp) {
  jl_scene sa, sb;
  sc_compare_scene(&sa, ka);
  sc_compare_scene(&sb, kb);
  double *x0 = malloc(sizeof(double) * (size_t)sa.bodies.count);
  assert_non_null(x0);
  for (int k = 0; k < sa.bodies.count; ++k) x0[k] = sa.bodies.pos[3 * k];
  jl_scene_runner ra, rb;
  void *st = (void *)a;
  sc_start(&ra, &sa, &st);
  st = (void *)b;
  sc_start(&rb, &sb, &st);
  uint64_t *k1 = NULL, *k2 = NULL;
  double *i1 = NULL, *i2 = NULL;
  int c1 = 0, c2 = 0, n1 = 0, n2 = 0;
  jl_error err = {0};
  *pos = *imp = 0.0;
  int moved = 0, loaded = 0;
  for (int i = 0; i < SC_CMP_STEPS; ++i) {
    jl_scene_run_stats x, y;
    sc_step(&ra, &x);
    sc_step(&rb, &y);
    assert_int_equal(x.contacts, y.contacts);
    assert_true(x.contacts >= 27);
    assert_int_equal(jl_scene_runner_impulses(&ra, &k1, &i1, &c1, &n1, &err), JL_OK);
    assert_int_equal(jl_scene_runner_impulses(&rb, &k2, &i2, &c2, &n2, &err), JL_OK);
    assert_int_equal(n1, n2);
    assert_memory_equal(k1, k2, (size_t)n1 * sizeof(uint64_t));
    double big = 0.0;
    for (int e = 0; e < 3 * n1; ++e) big = fmax(big, fabs(i1[e]));
    if (big > 0.0) ++loaded; /* in free fall (the first steps) all impulses are 0 */
    for (int e = 0; e < 3 * n1; ++e) *imp = fmax(*imp, fabs(i1[e] - i2[e]) / (big > 0.0 ? big : 1.0));
    sc_fetch(&ra);
    sc_fetch(&rb);
    for (int e = 0; e < 3 * sa.bodies.count; ++e)
      *pos = fmax(*pos, fabs(sa.bodies.pos[e] - sb.bodies.pos[e]));
  }
  /* the top layer slid: the run compares friction, not a scene at rest */
  for (int k = 0; k < sa.bodies.count; ++k)
    if (sa.bodies.pos[3 * k + 2] > 2.0 && sa.bodies.pos[3 * k] - x0[k] > 0.05) moved = 1;
  assert_true(moved);
  assert_true(loaded > SC_CMP_STEPS / 2);
  free(x0);
  fprintf(stderr, "comparison scene, %d steps: positions differ by %.3g m, impulses by %.3g of the largest\n",
          SC_CMP_STEPS, *pos, *imp);
  sc_pair_free(k1, k2, i1, i2, &ra, &rb, &sa, &sb);
}

/* Two runs of one scene agree now: positions within SC_CMP_POS, the same
 * contact keys, impulses within SC_CMP_IMP (both fetched; the impulse
 * copies grow as needed). Returns the number of contacts. */
static int sc_runs_agree(jl_scene_runner *ra, jl_scene_runner *rb, jl_scene *a, jl_scene *b,
                         uint64_t **k1, double **i1, int *c1, uint64_t **k2, double **i2,
                         int *c2) {
  jl_error err = {0};
  int n1 = 0, n2 = 0;
  size_t nb = (size_t)a->bodies.count;
  sc_fetch(ra);
  sc_fetch(rb);
  for (size_t e = 0; e < 3 * nb; ++e) assert_true(fabs(a->bodies.pos[e] - b->bodies.pos[e]) <= SC_CMP_POS);
  assert_int_equal(jl_scene_runner_impulses(ra, k1, i1, c1, &n1, &err), JL_OK);
  assert_int_equal(jl_scene_runner_impulses(rb, k2, i2, c2, &n2, &err), JL_OK);
  assert_int_equal(n1, n2);
  assert_memory_equal(*k1, *k2, (size_t)n1 * sizeof(uint64_t));
  assert_true(fx_array_diff(*i1, *i2, 3 * (size_t)n1) <= SC_CMP_IMP);
  return n1;
}

/* A run in the spatial body order (on the device in *state) is the CPU's
 * run in the given order, seen in the scene's numbering: only the order of
 * additions differs. Contact counts, keys and the exported problem's
 * structure are equal; bodies and impulses (whose sign flips with the
 * order of a pair) agree within SC_CMP_POS and SC_CMP_IMP, energies and
 * the problem's c to 1e-9. */
static void sc_spatial_order_is_given_order(void **state) {
  jl_scene a, b;
  assert_int_equal(fx_small_pile(&a, JL_BODY_ORDER_GIVEN), 0);
  assert_int_equal(fx_small_pile(&b, JL_BODY_ORDER_SPATIAL), 0);
  jl_error err = {0};
  jl_device cpu;
  assert_int_equal(jl_device_select(&cpu, "cpu", 2, NULL, &err), JL_OK);
  jl_scene_runner ra, rb;
  void *st = &cpu;
  sc_start(&ra, &a, &st);
  sc_start(&rb, &b, state);
  assert_null(ra.perm);
  assert_non_null(rb.perm);
  uint64_t *k1 = NULL, *k2 = NULL;
  double *i1 = NULL, *i2 = NULL;
  int c1 = 0, c2 = 0, renumbered = 0;
  for (int step = 0; step < 12; ++step) {
    jl_scene_run_stats x, y;
    if (step == 6) {
      const jl_contact_problem *pa = NULL, *pb = NULL;
      assert_int_equal(jl_scene_runner_step_problem(&ra, &x, &pa, &err), JL_OK);
      assert_int_equal(jl_scene_runner_step_problem(&rb, &y, &pb, &err), JL_OK);
      assert_int_equal(pa->n, pb->n);
      assert_int_equal(pa->nnz, pb->nnz);
      assert_memory_equal(pa->ka, pb->ka, (size_t)pa->n * sizeof(int));
      assert_memory_equal(pa->kb, pb->kb, (size_t)pa->n * sizeof(int));
      assert_true(fx_array_diff(pa->c, pb->c, 3 * (size_t)pa->n) < 1e-9);
      assert_true(fx_array_diff(pa->mu, pb->mu, (size_t)pa->n) == 0.0);
    } else {
      assert_int_equal(jl_scene_runner_step(&ra, &x, &err), JL_OK);
      assert_int_equal(jl_scene_runner_step(&rb, &y, &err), JL_OK);
    }
    assert_int_equal(x.contacts, y.contacts);
    assert_int_equal(x.contacts, FX_SMALL_PILE_CONTACTS);
    assert_true(fabs(x.max_penetration - y.max_penetration) < SC_CMP_POS);
    double ke1, pe1, ke2, pe2;
    sc_energy(&ra, &ke1, &pe1);
    sc_energy(&rb, &ke2, &pe2);
    assert_true(fabs(ke1 - ke2) <= 1e-9 * (ke1 + 1e-3) && fabs(pe1 - pe2) <= 1e-9 * fabs(pe1));
    sc_runs_agree(&ra, &rb, &a, &b, &k1, &i1, &c1, &k2, &i2, &c2);
  }
  /* the ordered run did renumber most of the 513 bodies */
  for (int k = 0; k < b.bodies.count; ++k) renumbered += rb.perm[k] != k;
  assert_true(renumbered > 400);
  sc_pair_free(k1, k2, i1, i2, &ra, &rb, &a, &b);
}

/* An ordered run renumbered mid-run (what the order's renewal does; here
 * the reverse order) goes on as the run left alone: the warm-start memory
 * follows the bodies, so contacts, positions (within SC_CMP_POS) and
 * impulses by key (within SC_CMP_IMP) stay those of the other run (JOR at a
 * fixed 50 iterations: only the order of additions differs). The same
 * renumbering with the memory dropped starts cold, and its impulses miss by
 * far more, so the check can fail. */
static void sc_permuted_run_stays_warm(void **state) {
  jl_scene a, b, c;
  assert_int_equal(fx_small_pile(&a, JL_BODY_ORDER_SPATIAL), 0);
  assert_int_equal(fx_small_pile(&b, JL_BODY_ORDER_SPATIAL), 0);
  assert_int_equal(fx_small_pile(&c, JL_BODY_ORDER_SPATIAL), 0);
  jl_error err = {0};
  jl_scene_runner ra, rb, rcold;
  sc_start(&ra, &a, state);
  sc_start(&rb, &b, state);
  sc_start(&rcold, &c, state);
  int n = b.bodies.count;
  int *q = malloc(sizeof(int) * (size_t)n);
  assert_non_null(q);
  for (int k = 0; k < n; ++k) q[k] = n - 1 - k;
  uint64_t *k1 = NULL, *k2 = NULL, *k3 = NULL;
  double *i1 = NULL, *i2 = NULL, *i3 = NULL;
  int c1 = 0, c2 = 0, c3 = 0, n3 = 0;
  for (int step = 0; step < 10; ++step) {
    jl_scene_run_stats x, y, z;
    sc_step(&ra, &x);
    sc_step(&rb, &y);
    sc_step(&rcold, &z);
    if (step == 4) {
      assert_int_equal(jl_scene_runner_permute(&rb, q, &err), JL_OK);
      assert_int_equal(jl_scene_runner_permute(&rcold, q, &err), JL_OK);
      for (int k = 0; k < n; ++k) assert_int_equal(rb.perm[k], ra.perm[n - 1 - k]);
      if (rcold.on_gpu)
        assert_int_equal(jl_scene_gpu_set_impulses(rcold.gpu, NULL, NULL, 0, &err), JL_OK);
      else
        rcold.cpu.prev_n = 0;
    }
    assert_int_equal(x.contacts, y.contacts);
    int n1 = sc_runs_agree(&ra, &rb, &a, &b, &k1, &i1, &c1, &k2, &i2, &c2);
    if (step == 5) {  /* the step after: the cold start misses */
      assert_int_equal(jl_scene_runner_impulses(&rcold, &k3, &i3, &c3, &n3, &err), JL_OK);
      assert_int_equal(n3, n1);
      assert_memory_equal(k1, k3, (size_t)n1 * sizeof(uint64_t));
      assert_true(fx_array_diff(i1, i3, 3 * (size_t)n1) > 100 * SC_CMP_IMP);
    }
  }
  free(q);
  free(k3);
  free(i3);
  jl_scene_runner_free(&rcold);
  jl_scene_free(&c);
  sc_pair_free(k1, k2, i1, i2, &ra, &rb, &a, &b);
}

#endif
