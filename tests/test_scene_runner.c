/* The runner seam (scene_runner.h) on the CPU and the energy reduction's
 * CPU twin (scene_gpu_stats.h):
 *   - the runner on the CPU is jl_stepper, bit for bit (bodies, per-step
 *     summaries, energies, impulses by key);
 *   - a step that exports its contact problem (G assembled) changes nothing
 *     in the run;
 *   - an ordered run renews its order once its bodies have travelled, and
 *     still ends in the given order's bits (spheres flying apart);
 *   - the twin of the device energy reduction equals jl_scene_energy up to
 *     the order of additions (one block, a partial block, several blocks). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scene_fixtures.h"
#include "scene_gpu_stats.h"
#include "scene_runner.h"
#include "scene_step.h"

static void mixed(jl_scene *s) {
  assert_int_equal(fx_mixed_scene(s, 4, 5, 1, 1), 0);
  s->solver.max_iter = 100;
  s->contact_tol = 1e-3;
}

static void test_runner_is_the_stepper(void **state) {
  (void)state;
  jl_scene a, b;
  mixed(&a);
  mixed(&b);
  jl_error err = {0};
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cpu", 2, NULL, &err), JL_OK);
  jl_scene_runner r;
  assert_int_equal(jl_scene_runner_init(&r, &a, &dev, &err), JL_OK);
  assert_int_equal(r.on_gpu, 0);
  jl_stepper st;
  assert_int_equal(jl_stepper_init(&st, &b, 2, &err), JL_OK);
  uint64_t *keys = NULL;
  double *imp = NULL;
  int cap = 0, n = 0, most = 0;
  size_t nb = (size_t)a.bodies.count;
  for (int i = 0; i < 30; ++i) {
    jl_scene_run_stats x;
    jl_step_stats y;
    assert_int_equal(jl_scene_runner_step(&r, &x, &err), JL_OK);
    assert_int_equal(jl_stepper_step(&st, &y, &err), JL_OK);
    assert_int_equal(x.step, y.step);
    assert_true(x.time == y.time);
    assert_int_equal(x.contacts, y.contacts);
    assert_int_equal(x.iterations, y.iterations);
    assert_int_equal(x.converged, y.converged);
    assert_int_equal(x.restarts, y.restarts);
    assert_true(x.residual == y.residual);
    assert_true(x.max_penetration == y.max_penetration);
    double ke, pe;
    assert_int_equal(jl_scene_runner_energy(&r, &ke, &pe, &err), JL_OK);
    assert_true(ke == y.kinetic && pe == y.potential);
    assert_int_equal(jl_scene_runner_fetch(&r, &err), JL_OK);
    assert_memory_equal(a.bodies.pos, b.bodies.pos, 3 * nb * sizeof(double));
    assert_memory_equal(a.bodies.quat, b.bodies.quat, 4 * nb * sizeof(double));
    assert_memory_equal(a.bodies.vel, b.bodies.vel, 3 * nb * sizeof(double));
    assert_memory_equal(a.bodies.omega, b.bodies.omega, 3 * nb * sizeof(double));
    assert_int_equal(jl_scene_runner_impulses(&r, &keys, &imp, &cap, &n, &err), JL_OK);
    assert_int_equal(n, st.prev_n);
    assert_int_equal(n, y.contacts);
    if (n) {
      assert_memory_equal(keys, st.prev_key, (size_t)n * sizeof(uint64_t));
      assert_memory_equal(imp, st.prev_imp, 3 * (size_t)n * sizeof(double));
    }
    if (n > most) most = n;
  }
  assert_true(most > 20);
  free(keys);
  free(imp);
  jl_scene_runner_free(&r);
  jl_stepper_free(&st);
  jl_scene_free(&a);
  jl_scene_free(&b);
}

/* Runners of a and b on the CPU with the given threads. */
static void start_two(jl_scene_runner *ra, jl_scene *a, jl_scene_runner *rb, jl_scene *b,
                      int threads) {
  jl_error err = {0};
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cpu", threads, NULL, &err), JL_OK);
  assert_int_equal(jl_scene_runner_init(ra, a, &dev, &err), JL_OK);
  assert_int_equal(jl_scene_runner_init(rb, b, &dev, &err), JL_OK);
}

static void test_export_step_changes_nothing(void **state) {
  (void)state;
  jl_scene a, b;
  mixed(&a);
  mixed(&b);
  jl_error err = {0};
  jl_scene_runner ra, rb;
  start_two(&ra, &a, &rb, &b, 1);
  for (int i = 0; i < 20; ++i) {
    jl_scene_run_stats x, y;
    const jl_contact_problem *p = NULL;
    if (i == 10) {
      assert_int_equal(jl_scene_runner_step_problem(&ra, &x, &p, &err), JL_OK);
      assert_non_null(p);
      assert_int_equal(p->n, x.contacts);
      assert_true(x.contacts > 0);
      assert_true(p->has_g);
      assert_int_equal(p->rowptr[p->n], p->nnz);
      assert_true(p->nnz >= p->n); /* every row holds its diagonal block */
    } else {
      assert_int_equal(jl_scene_runner_step(&ra, &x, &err), JL_OK);
    }
    assert_int_equal(jl_scene_runner_step(&rb, &y, &err), JL_OK);
    assert_int_equal(x.iterations, y.iterations);
  }
  assert_int_equal(ra.cpu.keep_g, 0);
  size_t nb = (size_t)a.bodies.count;
  assert_memory_equal(a.bodies.pos, b.bodies.pos, 3 * nb * sizeof(double));
  assert_memory_equal(a.bodies.vel, b.bodies.vel, 3 * nb * sizeof(double));
  jl_scene_runner_free(&ra);
  jl_scene_runner_free(&rb);
  jl_scene_free(&a);
  jl_scene_free(&b);
}

/* 343 spheres flying apart on rays from the centre, faster the farther out
 * (no gravity, no contact): the stretch changes their spatial order, so the
 * renewal (checked every 5 steps here) renumbers them; every body's motion
 * is its own, so the run ends in the bits of the run in the given order. */
static void flying(jl_scene *s, jl_body_order order) {
  jl_error err = {0};
  assert_int_equal(jl_scene_init(s, &err), JL_OK);
  s->gravity[0] = s->gravity[1] = s->gravity[2] = 0.0;
  s->dt = 0.01;
  s->body_order = order;
  jl_body_spec b;
  for (int x = 0; x < 7; ++x)
    for (int y = 0; y < 7; ++y)
      for (int z = 0; z < 7; ++z) {
        jl_body_spec_default(&b);
        b.size[0] = 0.5;
        double p[3] = {3.0 * (x - 3) + 0.1 * y, 3.0 * (y - 3) + 0.1 * z, 3.0 * (z - 3) + 0.1 * x};
        double d = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        for (int k = 0; k < 3; ++k) {
          b.pos[k] = p[k];
          b.vel[k] = 0.2 * d * p[k];
        }
        assert_true(jl_scene_add_body(s, &b, &err) >= 0);
      }
}

static void test_order_renewed_as_bodies_travel(void **state) {
  (void)state;
  jl_scene a, b;
  flying(&a, JL_BODY_ORDER_GIVEN);
  flying(&b, JL_BODY_ORDER_SPATIAL);
  jl_error err = {0};
  jl_scene_runner ra, rb;
  start_two(&ra, &a, &rb, &b, 2);
  assert_null(ra.perm);
  assert_non_null(rb.perm);
  assert_true(fabs(rb.body_size - 1.0) < 1e-12);  /* the boxes of spheres of radius 0.5 */
  rb.renew_steps = 5;
  size_t nb = (size_t)a.bodies.count;
  int *first = malloc(sizeof(int) * nb);
  assert_non_null(first);
  memcpy(first, rb.perm, sizeof(int) * nb);
  for (int i = 1; i <= 200; ++i) {
    jl_scene_run_stats x, y;
    assert_int_equal(jl_scene_runner_step(&ra, &x, &err), JL_OK);
    assert_int_equal(jl_scene_runner_step(&rb, &y, &err), JL_OK);
    assert_int_equal(y.contacts, 0);
  }
  /* the mean speed is about 20 m/s: 2 sizes in some 10 steps */
  assert_true(rb.reorders >= 2);
  int renumbered = 0;
  for (size_t k = 0; k < nb; ++k) renumbered += rb.perm[k] != first[k];
  assert_true(renumbered > 0);
  free(first);
  assert_int_equal(jl_scene_runner_fetch(&ra, &err), JL_OK);
  assert_int_equal(jl_scene_runner_fetch(&rb, &err), JL_OK);
  assert_memory_equal(a.bodies.pos, b.bodies.pos, 3 * nb * sizeof(double));
  assert_memory_equal(a.bodies.vel, b.bodies.vel, 3 * nb * sizeof(double));
  assert_memory_equal(a.bodies.quat, b.bodies.quat, 4 * nb * sizeof(double));
  jl_scene_runner_free(&ra);
  jl_scene_runner_free(&rb);
  jl_scene_free(&a);
  jl_scene_free(&b);
}

static void test_energy_twin(void **state) {
  (void)state;
  /* 27 + 6 statics; 2197 + 6 (two blocks, the second partial); 32768 + 6 (17 blocks) */
  int sides[3] = {3, 13, 32};
  for (int t = 0; t < 3; ++t) {
    jl_scene s;
    assert_int_equal(fx_mixed_scene(&s, sides[t], 3 + (uint64_t)t, 1, 1), 0);
    s.gravity[1] = -0.4;
    jl_error err = {0};
    double tk, tp, rk, rp, sk = 0.0, sp = 0.0;
    assert_int_equal(jl_scene_energy_twin(&s.bodies, s.gravity, &tk, &tp, &err), JL_OK);
    jl_scene_energy(&s, &rk, &rp);
    for (int k = 0; k < s.bodies.count; ++k) {
      double a, b;
      jl_en_body(s.bodies.is_static, s.bodies.pos, s.bodies.quat, s.bodies.vel, s.bodies.omega,
                 s.bodies.inv_mass, s.bodies.inv_inertia, s.gravity, k, &a, &b);
      if (s.bodies.is_static[k]) assert_true(a == 0.0 && b == 0.0);
      sk += fabs(a);
      sp += fabs(b);
    }
    double bound = 2.3e-16 * s.bodies.count;
    fprintf(stderr, "%d bodies: kinetic twin - reference %.3g, potential %.3g\n", s.bodies.count,
            tk - rk, tp - rp);
    assert_true(rk > 0.0);
    assert_true(fabs(tk - rk) <= bound * sk);
    assert_true(fabs(tp - rp) <= bound * sp);
    jl_scene_free(&s);
  }
  jl_bodies none;
  jl_error err = {0};
  assert_int_equal(jl_bodies_init(&none, 1, &err), JL_OK);
  none.count = 0;
  double g[3] = {0, 0, -9.81}, k = 1, p = 1;
  assert_int_equal(jl_scene_energy_twin(&none, g, &k, &p, &err), JL_OK);
  assert_true(k == 0.0 && p == 0.0);
  jl_bodies_free(&none);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_runner_is_the_stepper),
    cmocka_unit_test(test_export_step_changes_nothing),
    cmocka_unit_test(test_order_renewed_as_bodies_travel),
    cmocka_unit_test(test_energy_twin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
