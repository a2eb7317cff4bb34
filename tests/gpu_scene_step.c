/* gpu suite: whole Moreau steps on the device (kernels/scene/scene_step.cu and the
 * stages it calls) against the CPU reference stepper with matrix-free JOR
 * and warm starts: after every step the bodies' positions, orientations and
 * velocities equal the CPU twin's (jl_step_twin_step) bit for bit, as do the
 * closed contacts (the narrow phase's filtered list, in order), the
 * warm-start memory, iterations and max penetration, and jl_stepper_step's to 1e-12
 * relative (test_scene_twins: bit for bit once the reference computes with
 * contact_setup.h's compact rows); a second device run from the same start
 * (one launch per kernel instead of CUDA graphs, the state read every
 * iteration, a new pair list every step where the first keeps its list
 * while the boxes stay in a thin skin) gives identical bytes. The same for APGD. Exit 77 without a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"

#include "device.h"
#include "scene.h"
#include "scene_fixtures.h"
#include "scene_gpu.h"
#include "scene_step.h"
#include "step_twin.h"
#include "gpu_twin_checks.h"

#ifdef JL_HAVE_CUDA
static void setup_scene(jl_scene *s, jl_solver_kind kind) {
  jl_error err = {0};
  assert_int_equal(fx_mixed_scene(s, 5, 8, 1, 1), 0);
  assert_int_equal(jl_scene_add_material(s, "bouncy", 500.0, &err), 1);
  jl_scene_set_pair(s, 0, 1, 0.3, 0.5, 0.1);
  jl_scene_set_pair(s, 1, 1, 0.8, 0.9, 0.2);
  for (int k = 0; k < s->bodies.count; ++k)
    if (k % 3 == 1) s->bodies.material[k] = 1;
  s->solver.kind = kind;
  s->solver.matrix_free = 1;
  s->solver.alpha = kind == JL_SOLVER_APGD ? 0.15 : 0.3;
  s->solver.tol_abs = s->solver.tol_rel = 1e-6;
  s->solver.max_iter = 300;
  s->solver.warm_start = 1;
  s->contact_tol = 1e-3;
}

static void steps_match_cpu_stepper(jl_solver_kind kind) {
  jl_scene cpu, twin, gpu, again;
  jl_error err = {0};
  setup_scene(&cpu, kind);
  setup_scene(&twin, kind);
  setup_scene(&gpu, kind);
  setup_scene(&again, kind);
  jl_scene_gpu *g, *h;
  gtc_two_arenas(&gpu, &again, &g, &h);
  /* one launch per kernel, no persistent solve, the streamed kernels: the
   * same bits as the default */
  jl_scene_gpu_set_graphs(h, 0);
  jl_scene_gpu_set_persistent(h, 0);
  jl_scene_gpu_set_streamed(h, 1);
  /* a new pair list every step on h; on g a thin skin, so that boxes leave
   * it within a few steps: kept lists and new ones alternate (a skin of
   * 0.003 on the CPU's bodies: 25 steps kept, 5 lists built) */
  jl_scene_gpu_set_pair_skin(h, 0.0);
  jl_scene_gpu_set_pair_skin(g, 0.003);
  int kept = 0;
  jl_stepper st;
  assert_int_equal(jl_stepper_init(&st, &cpu, 2, &err), JL_OK);
  jl_step_twin tw;
  memset(&tw, 0, sizeof tw);
  size_t n = (size_t)cpu.bodies.count;
  for (int step = 0; step < 30; ++step) {
    jl_step_stats a;
    jl_step_twin_stats t;
    jl_gpu_step_stats b, c;
    assert_int_equal(jl_stepper_step(&st, &a, &err), JL_OK);
    assert_int_equal(jl_step_twin_step(&tw, &twin, &t, &err), JL_OK);
    int rc = jl_scene_gpu_step(g, &gpu, 8, &b, &err);
    if (rc != JL_OK) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, JL_OK);
    assert_int_equal(jl_scene_gpu_step(h, &again, 1, &c, &err), JL_OK);
    gtc_stats_equal(&t, &b);
    gtc_contacts_equal(&tw, g);
    kept += b.pairs_kept;
    assert_true(!b.body_lists_kept || b.pairs_kept);
    assert_int_equal(c.pairs_kept + c.body_lists_kept, 0);
    assert_int_equal(a.contacts, b.contacts);
    assert_true(abs(a.iterations - b.iterations) <= 2);
    assert_int_equal(b.iterations, c.iterations);
    assert_true(b.contacts > 50);
    assert_int_equal(jl_scene_gpu_get_bodies(g, &gpu.bodies, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_get_bodies(h, &again.bodies, &err), JL_OK);
    gtc_bodies_equal(&twin.bodies, &gpu.bodies);
    assert_true(fx_array_diff(cpu.bodies.pos, gpu.bodies.pos, 3 * n) <= 1e-12);
    assert_true(fx_array_diff(cpu.bodies.vel, gpu.bodies.vel, 3 * n) <= 1e-12);
    assert_true(fx_array_diff(cpu.bodies.omega, gpu.bodies.omega, 3 * n) <= 1e-12);
    gtc_bodies_equal(&gpu.bodies, &again.bodies);
  }
  printf("pair lists kept in %d of 30 steps\n", kept);
  assert_true(kept >= 12 && kept <= 28);
  assert_true(jl_scene_gpu_persistent_solves(g) > 0);
  assert_int_equal(jl_scene_gpu_persistent_solves(h), 0);
  jl_stepper_free(&st);
  jl_step_twin_free(&tw);
  jl_scene_gpu_destroy(g);
  jl_scene_gpu_destroy(h);
  jl_scene_free(&cpu);
  jl_scene_free(&twin);
  jl_scene_free(&gpu);
  jl_scene_free(&again);
}

static void test_steps_match_cpu_stepper(void **state) {
  (void)state;
  steps_match_cpu_stepper(JL_SOLVER_JOR);
}

/* The same with APGD (JOR from Nesterov's extrapolated points). */
static void test_apgd_steps_match_cpu_stepper(void **state) {
  (void)state;
  steps_match_cpu_stepper(JL_SOLVER_APGD);
}

/* A block of 6 x 6 x 3 touching unit spheres resting on a plane, each
 * pushed by up to push m/s and spun by up to push / 0.3 rad/s (0: at rest),
 * stepped by matrix-free JOR with warm starts. */
static void sphere_block(jl_scene *s, double push) {
  jl_error err = {0};
  assert_int_equal(jl_scene_init(s, &err), JL_OK);
  double p0[3] = {0, 0, 0}, nz[3] = {0, 0, 1};
  assert_true(jl_scene_add_plane(s, p0, nz, 0, &err) >= 0);
  jl_body_spec b;
  jl_body_spec_default(&b);
  b.mass = 1.0;
  int counts[3] = {6, 6, 3};
  double origin[3] = {0, 0, 0.5};
  assert_int_equal(jl_scene_gen_sphere_grid(s, &b, 0.5, counts, 1.0, origin, &err), JL_OK);
  for (int i = 0; push != 0.0 && i < s->bodies.count; ++i) {
    if (s->bodies.is_static[i]) continue;
    for (int d = 0; d < 3; ++d) {
      s->bodies.vel[3 * i + d] = push * sin(1.3 * i + 2.1 * d);
      s->bodies.omega[3 * i + d] = push / 0.3 * cos(0.7 * i + d);
    }
  }
  s->solver.kind = JL_SOLVER_JOR;
  s->solver.matrix_free = 1;
  s->solver.alpha = 0.3;
  s->solver.tol_abs = s->solver.tol_rel = 1e-7;
  s->solver.max_iter = 200;
  s->solver.warm_start = 1;
  s->contact_tol = 1e-3;
}

/* Spheres at rest on a plane: every step after the first keeps the pair
 * list, and once the contacts stand, their bodies in order too, so the
 * setup keeps its body lists; the steps still equal the twin's byte for
 * byte, and a device building everything every step (skin 0). */
static void test_resting_spheres_keep_lists(void **state) {
  (void)state;
  jl_scene twin, gpu, again;
  jl_scene *all[3] = {&twin, &gpu, &again};
  jl_error err = {0};
  for (int k = 0; k < 3; ++k) sphere_block(all[k], 0.0);
  jl_scene_gpu *g, *h;
  gtc_two_arenas(&gpu, &again, &g, &h);
  jl_scene_gpu_set_pair_skin(h, 0.0);
  jl_step_twin tw;
  memset(&tw, 0, sizeof tw);
  int pairs_kept = 0, lists_kept = 0;
  const int steps = 20;
  for (int step = 0; step < steps; ++step) {
    jl_step_twin_stats t;
    jl_gpu_step_stats b, c;
    assert_int_equal(jl_step_twin_step(&tw, &twin, &t, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_step(g, &gpu, 8, &b, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_step(h, &again, 8, &c, &err), JL_OK);
    gtc_stats_equal(&t, &b);
    gtc_contacts_equal(&tw, g);
    assert_true(b.contacts >= 36 * 5);
    pairs_kept += b.pairs_kept;
    lists_kept += b.body_lists_kept;
    assert_true(!b.body_lists_kept || b.pairs_kept);
    assert_int_equal(c.pairs_kept + c.body_lists_kept, 0);
    assert_int_equal(jl_scene_gpu_get_bodies(g, &gpu.bodies, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_get_bodies(h, &again.bodies, &err), JL_OK);
    gtc_bodies_equal(&twin.bodies, &gpu.bodies);
    gtc_bodies_equal(&gpu.bodies, &again.bodies);
  }
  printf("resting spheres: pair list kept in %d of %d steps, body lists in %d\n", pairs_kept,
         steps, lists_kept);
  assert_int_equal(pairs_kept, steps - 1);
  assert_true(lists_kept >= steps / 2);
  jl_step_twin_free(&tw);
  jl_scene_gpu_destroy(g);
  jl_scene_gpu_destroy(h);
  for (int k = 0; k < 3; ++k) jl_scene_free(all[k]);
}

/* The block of spheres pushed and spun, every body isotropic: a streamed
 * solve's setup writes only the constants by field, ka, kb, im and iso (the
 * lean setup), and its steps, warm starts taken with frames from the
 * contacts' normals, equal the twin's and the default device run's byte
 * for byte. The problem of a lean step cannot be read back (a clear error);
 * after a full setup it can. */
static void test_streamed_spheres_lean_setup(void **state) {
  (void)state;
  jl_scene twin, gpu, lean;
  jl_scene *all[3] = {&twin, &gpu, &lean};
  jl_error err = {0};
  for (int k = 0; k < 3; ++k) sphere_block(all[k], 0.3);
  jl_scene_gpu *g, *h;
  gtc_two_arenas(&gpu, &lean, &g, &h);
  jl_scene_gpu_set_graphs(h, 0);
  jl_scene_gpu_set_persistent(h, 0);
  jl_scene_gpu_set_streamed(h, 1);
  jl_step_twin tw;
  memset(&tw, 0, sizeof tw);
  int contacts = 0;
  for (int step = 0; step < 25; ++step) {
    jl_step_twin_stats t;
    jl_gpu_step_stats b, c;
    assert_int_equal(jl_step_twin_step(&tw, &twin, &t, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_step(g, &gpu, 8, &b, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_step(h, &lean, 8, &c, &err), JL_OK);
    gtc_stats_equal(&t, &b);
    gtc_contacts_equal(&tw, h);
    assert_int_equal(b.iterations, c.iterations);
    contacts += c.contacts;
    assert_int_equal(jl_scene_gpu_get_bodies(g, &gpu.bodies, &err), JL_OK);
    assert_int_equal(jl_scene_gpu_get_bodies(h, &lean.bodies, &err), JL_OK);
    gtc_bodies_equal(&twin.bodies, &gpu.bodies);
    gtc_bodies_equal(&gpu.bodies, &lean.bodies);
  }
  printf("pushed spheres: %d contacts over 25 steps\n", contacts);
  assert_true(contacts > 25 * 100);
  jl_contact_problem dp;
  memset(&dp, 0, sizeof dp);
  assert_int_equal(jl_scene_gpu_get_problem(h, &dp, &err), JL_ERR_DEVICE);
  assert_non_null(strstr(err.msg, "streamed solve"));
  assert_int_equal(jl_scene_gpu_get_problem(g, &dp, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_setup(h, lean.mu, lean.eps_n, lean.eps_t, 0, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_get_problem(h, &dp, &err), JL_OK);
  assert_true(dp.n > 100);
  jl_contact_problem_free(&dp);
  jl_step_twin_free(&tw);
  jl_scene_gpu_destroy(g);
  jl_scene_gpu_destroy(h);
  for (int k = 0; k < 3; ++k) jl_scene_free(all[k]);
}

/* A relaxation alpha <= 0: a clear error, nothing stepped (SOR steps are
 * tested in gpu_scene_sor). */
static void test_step_refuses_bad_alpha(void **state) {
  (void)state;
  jl_scene s;
  jl_error err = {0};
  setup_scene(&s, JL_SOLVER_JOR);
  s.solver.alpha = 0.0;
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_scene_gpu *g = NULL;
  assert_int_equal(jl_scene_gpu_create(&g, &dev, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_set_bodies(g, &s.bodies, &err), JL_OK);
  jl_gpu_step_stats b;
  assert_int_equal(jl_scene_gpu_step(g, &s, 8, &b, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "alpha"));
  jl_bodies back;
  assert_int_equal(jl_bodies_init(&back, s.bodies.count, &err), JL_OK);
  back.count = s.bodies.count;
  assert_int_equal(jl_scene_gpu_get_bodies(g, &back, &err), JL_OK);
  assert_memory_equal(back.pos, s.bodies.pos, 3 * sizeof(double) * (size_t)s.bodies.count);
  jl_bodies_free(&back);
  jl_scene_gpu_destroy(g);
  jl_scene_free(&s);
}
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_steps_match_cpu_stepper),
    cmocka_unit_test(test_apgd_steps_match_cpu_stepper),
    cmocka_unit_test(test_resting_spheres_keep_lists),
    cmocka_unit_test(test_streamed_spheres_lean_setup),
    cmocka_unit_test(test_step_refuses_bad_alpha),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
