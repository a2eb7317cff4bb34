/* gpu suite: the scene pipeline on the device through the runner
 * (scene_runner.h).
 *   - every physics check of the CPU path (scene_checks.h: resting sphere,
 *     sliding block, incline, rebound, Newton's cradle, box stack, pyramid,
 *     dissipative pile, warm starts) with the same analytic tolerances;
 *   - the device against the CPU path on a small scene, same solver and
 *     the same fixed iteration count (SOR and JOR): contact counts equal,
 *     positions within SC_CMP_POS, impulses within SC_CMP_IMP;
 *   - determinism: two device runs give identical bytes (bodies, impulses,
 *     per-step summaries, energies);
 *   - the energy reduction (kernels/scene/scene_energy.cu) against its CPU twin,
 *     bit for bit, and the twin against jl_scene_energy to round-off;
 *   - the FCLib problem of a device step against the CPU path's;
 *   - a device run in the spatial body order against the CPU's in the given
 *     order (scene_checks.h).
 * Exit 77 without a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"

#ifdef JL_HAVE_CUDA
#include "scene_checks.h"
#include "scene_fixtures.h"
#include "scene_gpu_stats.h"

static jl_device cuda_dev, cpu_dev;

static void test_device_matches_cpu(void **state) {
  (void)state;
  double pos, imp;
  sc_compare_runs(&cuda_dev, JL_SOLVER_SOR, &cpu_dev, JL_SOLVER_SOR, &pos, &imp);
  assert_true(pos <= SC_CMP_POS);
  assert_true(imp <= SC_CMP_IMP);
  sc_compare_runs(&cuda_dev, JL_SOLVER_JOR, &cpu_dev, JL_SOLVER_JOR, &pos, &imp);
  assert_true(pos <= SC_CMP_POS);
  assert_true(imp <= SC_CMP_IMP);
}

/* The dissipative pile of scene_checks.h with boxes among the spheres. */
static void pile_scene(jl_scene *s) {
  jl_error err = {0};
  sc_new_scene(s, 1e-3, 0.5, 0.0);
  double p[5][3] = {{0, 0, 0}, {-1.5, 0, 0}, {1.5, 0, 0}, {0, -1.5, 0}, {0, 1.5, 0}};
  double n[5][3] = {{0, 0, 1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}};
  for (int w = 0; w < 5; ++w) assert_true(jl_scene_add_plane(s, p[w], n[w], 0, &err) >= 0);
  jl_body_spec proto;
  jl_body_spec_default(&proto);
  double blo[3] = {-1.5, -1.5, 0.5}, bhi[3] = {1.5, 1.5, 3.0};
  assert_int_equal(jl_scene_gen_sphere_pile(s, &proto, 60, 0.15, 0.25, blo, bhi, 7, &err), JL_OK);
  for (int k = 0; k < 6; ++k)
    sc_add(s, JL_SHAPE_BOX, 0.2, 0.15, 0.1, -1.0 + 0.4 * k, 0.3, 3.5, 1.0);
}

static void test_two_device_runs_identical(void **state) {
  (void)state;
  jl_scene a, b;
  pile_scene(&a);
  pile_scene(&b);
  jl_scene_runner ra, rb;
  void *st = &cuda_dev;
  sc_start(&ra, &a, &st);
  sc_start(&rb, &b, &st);
  uint64_t *k1 = NULL, *k2 = NULL;
  double *i1 = NULL, *i2 = NULL;
  int c1 = 0, c2 = 0, n1 = 0, n2 = 0, most = 0;
  jl_error err = {0};
  size_t nb = (size_t)a.bodies.count;
  for (int i = 1; i <= 600; ++i) {
    jl_scene_run_stats x, y;
    sc_step(&ra, &x);
    sc_step(&rb, &y);
    assert_int_equal(x.contacts, y.contacts);
    assert_int_equal(x.iterations, y.iterations);
    assert_int_equal(x.converged, y.converged);
    assert_int_equal(x.restarts, y.restarts);
    assert_memory_equal(&x.max_penetration, &y.max_penetration, sizeof(double));
    if (x.contacts > most) most = x.contacts;
    if (i % 50) continue;
    double e1[2], e2[2];
    sc_energy(&ra, &e1[0], &e1[1]);
    sc_energy(&rb, &e2[0], &e2[1]);
    assert_memory_equal(e1, e2, sizeof e1);
    assert_int_equal(jl_scene_runner_impulses(&ra, &k1, &i1, &c1, &n1, &err), JL_OK);
    assert_int_equal(jl_scene_runner_impulses(&rb, &k2, &i2, &c2, &n2, &err), JL_OK);
    assert_int_equal(n1, n2);
    assert_memory_equal(k1, k2, (size_t)n1 * sizeof(uint64_t));
    assert_memory_equal(i1, i2, 3 * (size_t)n1 * sizeof(double));
    sc_fetch(&ra);
    sc_fetch(&rb);
    assert_memory_equal(a.bodies.pos, b.bodies.pos, 3 * nb * sizeof(double));
    assert_memory_equal(a.bodies.quat, b.bodies.quat, 4 * nb * sizeof(double));
    assert_memory_equal(a.bodies.vel, b.bodies.vel, 3 * nb * sizeof(double));
    assert_memory_equal(a.bodies.omega, b.bodies.omega, 3 * nb * sizeof(double));
  }
  assert_true(most > 60);
  sc_pair_free(k1, k2, i1, i2, &ra, &rb, &a, &b);
}

/* Energies of the bodies in the arena equal the twin's bits; the twin is
 * jl_scene_energy up to the order of additions. Sizes: one block, a partial
 * block, and enough bodies for a second reduction pass. */
static void check_energy(jl_scene *s) {
  jl_error err = {0};
  jl_scene_gpu *g = NULL;
  assert_int_equal(jl_scene_gpu_create(&g, &cuda_dev, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_set_bodies(g, &s->bodies, &err), JL_OK);
  jl_gpu_stats_ws ws = {0};
  double dk, dp, tk, tp, rk, rp;
  int rc = jl_scene_gpu_energy(g, s->gravity, &ws, &dk, &dp, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, JL_OK);
  assert_int_equal(jl_scene_energy_twin(&s->bodies, s->gravity, &tk, &tp, &err), JL_OK);
  jl_scene_energy(s, &rk, &rp);
  fprintf(stderr, "%d bodies: kinetic %.17g (twin %.17g, reference %.17g), potential %.17g (%.17g, %.17g)\n",
          s->bodies.count, dk, tk, rk, dp, tp, rp);
  assert_memory_equal(&dk, &tk, sizeof dk);
  assert_memory_equal(&dp, &tp, sizeof dp);
  /* bound of the reordered sums: n eps times the sum of magnitudes */
  double sk = 0.0, sp = 0.0;
  for (int k = 0; k < s->bodies.count; ++k) {
    double a, b;
    jl_en_body(s->bodies.is_static, s->bodies.pos, s->bodies.quat, s->bodies.vel, s->bodies.omega,
               s->bodies.inv_mass, s->bodies.inv_inertia, s->gravity, k, &a, &b);
    sk += fabs(a);
    sp += fabs(b);
  }
  double bound = 2.3e-16 * s->bodies.count;
  assert_true(fabs(tk - rk) <= bound * sk);
  assert_true(fabs(tp - rp) <= bound * sp);
  assert_true(rk > 0.0);
  jl_gpu_stats_ws_free(&ws);
  jl_scene_gpu_destroy(g);
}

static void test_energy_matches_twin(void **state) {
  (void)state;
  int sides[3] = {4, 12, 40}; /* 64 + statics, 1728 + statics (one block), 64000 (32 blocks) */
  for (int t = 0; t < 3; ++t) {
    jl_scene s;
    assert_int_equal(fx_mixed_scene(&s, sides[t], 11 + (uint64_t)t, 1, 1), 0);
    s.gravity[0] = 0.7; /* every component of g counts */
    check_energy(&s);
    jl_scene_free(&s);
  }
}

/* After device steps the reduction reads the arena's current state. */
static void test_energy_after_steps(void **state) {
  (void)state;
  jl_scene s;
  pile_scene(&s);
  jl_scene_runner r;
  void *st = &cuda_dev;
  sc_start(&r, &s, &st);
  jl_scene_run_stats ss;
  for (int i = 0; i < 200; ++i) sc_step(&r, &ss);
  double dk, dp, tk, tp;
  sc_energy(&r, &dk, &dp);
  sc_fetch(&r);
  jl_error err = {0};
  assert_int_equal(jl_scene_energy_twin(&s.bodies, s.gravity, &tk, &tp, &err), JL_OK);
  assert_memory_equal(&dk, &tk, sizeof dk);
  assert_memory_equal(&dp, &tp, sizeof dp);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
}

/* The FCLib problem of a device step (G assembled on the host from the
 * device's state) against the CPU path's at the same step, with JOR (the
 * device step equals the CPU's to round-off, scene_gpu.h). */
static void test_problem_of_a_device_step(void **state) {
  (void)state;
  jl_scene a, b;
  sc_compare_scene(&a, JL_SOLVER_JOR);
  sc_compare_scene(&b, JL_SOLVER_JOR);
  jl_scene_runner ra, rb;
  void *st = &cuda_dev;
  sc_start(&ra, &a, &st);
  st = &cpu_dev;
  sc_start(&rb, &b, &st);
  jl_scene_run_stats x, y;
  for (int i = 0; i < 40; ++i) {
    sc_step(&ra, &x);
    sc_step(&rb, &y);
  }
  const jl_contact_problem *pa = NULL, *pb = NULL;
  jl_error err = {0};
  assert_int_equal(jl_scene_runner_step_problem(&ra, &x, &pa, &err), JL_OK);
  assert_int_equal(jl_scene_runner_step_problem(&rb, &y, &pb, &err), JL_OK);
  assert_non_null(pa);
  assert_non_null(pb);
  assert_int_equal(x.contacts, pa->n);
  assert_int_equal(pa->n, pb->n);
  assert_true(pa->has_g && pb->has_g);
  double d = fx_problem_diff(pa, pb, 1);
  fprintf(stderr, "step 41: %d contacts, problem differs by %.3g\n", pa->n, d);
  assert_true(d >= 0.0 && d <= 1e-9);
  jl_scene_runner_free(&ra);
  jl_scene_runner_free(&rb);
  jl_scene_free(&a);
  jl_scene_free(&b);
}
#endif

int main(int argc, char **argv) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  jl_error err = {0};
  if (jl_device_select(&cuda_dev, "cuda", 0, NULL, &err) != JL_OK ||
      jl_device_select(&cpu_dev, "cpu", 2, NULL, &err) != JL_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_prestate(sc_sphere_rests, &cuda_dev),
    cmocka_unit_test_prestate(sc_block_slides, &cuda_dev),
    cmocka_unit_test_prestate(sc_incline, &cuda_dev),
    cmocka_unit_test_prestate(sc_ball_rebounds, &cuda_dev),
    cmocka_unit_test_prestate(sc_newtons_cradle, &cuda_dev),
    cmocka_unit_test_prestate(sc_box_stack_stands, &cuda_dev),
    cmocka_unit_test_prestate(sc_pyramid_stands, &cuda_dev),
    cmocka_unit_test_prestate(sc_pyramid_stands_apgd, &cuda_dev),
    cmocka_unit_test_prestate(sc_pile_energy_decreases, &cuda_dev),
    cmocka_unit_test_prestate(sc_warm_start_helps, &cuda_dev),
    cmocka_unit_test(test_device_matches_cpu),
    cmocka_unit_test(test_two_device_runs_identical),
    cmocka_unit_test(test_energy_matches_twin),
    cmocka_unit_test(test_energy_after_steps),
    cmocka_unit_test(test_problem_of_a_device_step),
    cmocka_unit_test_prestate(sc_spatial_order_is_given_order, &cuda_dev),
    cmocka_unit_test_prestate(sc_permuted_run_stays_warm, &cuda_dev),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  (void)argc, (void)argv;
  return jl_gpu_test_no_cuda();
#endif
}
