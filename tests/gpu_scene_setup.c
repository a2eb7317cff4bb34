/* gpu suite: the device pipeline collide -> free velocity -> contact setup
 * -> JOR without the host in between (kernels/scene/scene_setup.cu): the problem
 * (frames, lever rows, c, mu, diag, body CSR, Delassus blocks) equals the
 * CPU twin's byte for byte and jl_contact_setup's to 1e-12 relative (same
 * structure), and JOR on it equals the twin's impulses byte for byte; two
 * runs identical. Exit 77 without a
 * device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"

#include "device.h"
#include "prox_math.h"
#include "scene.h"
#include "scene_fixtures.h"
#include "scene_gpu.h"
#include "setup_math.h"

#ifdef JL_HAVE_CUDA
/* Two problems of the device pipeline's layout, every array byte for byte. */
static void assert_gpu_problems_equal(const jl_contact_problem *x, const jl_contact_problem *y, int g) {
  int n = x->n, nb = x->nbodies;
  size_t sn = (size_t)n;
  assert_int_equal(n, y->n);
  assert_int_equal(nb, y->nbodies);
  assert_memory_equal(x->ka, y->ka, sn * sizeof(int));
  assert_memory_equal(x->kb, y->kb, sn * sizeof(int));
  assert_memory_equal(x->frame, y->frame, 9 * sn * sizeof(double));
  assert_memory_equal(x->rx, y->rx, 18 * sn * sizeof(double));
  assert_memory_equal(x->irx, y->irx, 18 * sn * sizeof(double));
  assert_memory_equal(x->im, y->im, 2 * sn * sizeof(double));
  assert_memory_equal(x->lever, y->lever, 6 * sn * sizeof(double));
  assert_memory_equal(x->iso, y->iso, 2 * sn * sizeof(double));
  assert_memory_equal(x->arm, y->arm, 2 * sn * sizeof(double));
  assert_memory_equal(x->c, y->c, 3 * sn * sizeof(double));
  assert_memory_equal(x->mu, y->mu, sn * sizeof(double));
  assert_memory_equal(x->diag, y->diag, 2 * sn * sizeof(double));
  assert_memory_equal(x->body_ptr, y->body_ptr, ((size_t)nb + 1) * sizeof(int));
  assert_memory_equal(x->body_contact, y->body_contact, (size_t)x->body_ptr[nb] * sizeof(int));
  if (!g) return;
  assert_true(x->has_g && y->has_g);
  assert_int_equal(x->nnz, y->nnz);
  assert_memory_equal(x->rowptr, y->rowptr, (sn + 1) * sizeof(int));
  assert_memory_equal(x->col, y->col, (size_t)x->nnz * sizeof(int));
  assert_memory_equal(x->blocks, y->blocks, 9 * (size_t)x->nnz * sizeof(double));
}

static void run_pipeline(int side, int build_g) {
  jl_scene s;
  jl_error err = {0};
  assert_int_equal(fx_mixed_scene(&s, side, 17, 1, 1), 0);
  assert_int_equal(jl_scene_add_material(&s, "bouncy", 500.0, &err), 1);
  jl_scene_set_pair(&s, 0, 1, 0.3, 0.5, 0.1);
  jl_scene_set_pair(&s, 1, 1, 0.8, 0.9, 0.2);
  for (int k = 0; k < s.bodies.count; ++k)
    if (k % 3 == 1) s.bodies.material[k] = 1;
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_scene_gpu *g = NULL;
  assert_int_equal(jl_scene_gpu_create(&g, &dev, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_set_bodies(g, &s.bodies, &err), JL_OK);
  jl_gpu_collide_stats cs;
  assert_int_equal(jl_scene_gpu_free_velocity(g, s.gravity, s.dt, NULL, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_collide(g, 0.02, &cs, &err), JL_OK);
  int rc = jl_scene_gpu_setup(g, s.mu, s.eps_n, s.eps_t, build_g, &err);
  if (rc != JL_OK) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, JL_OK);
  jl_contact_problem dp, twin;
  jl_contact_problem ref;
  memset(&dp, 0, sizeof dp);
  memset(&twin, 0, sizeof twin);
  memset(&ref, 0, sizeof ref);
  assert_int_equal(jl_scene_gpu_get_problem(g, &dp, &err), JL_OK);
  /* the twin on the host, from the same contacts (gpu_scene_collide: == jl_collide) */
  jl_contacts c;
  assert_int_equal(jl_contacts_init(&c, 16, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_get_contacts(g, &c, &err), JL_OK);
  assert_int_equal(c.count, cs.contacts);
  assert_true(c.count > 200);
  int n = c.count;
  double *dv = malloc(6 * sizeof(double) * (size_t)s.bodies.count);
  double *law = malloc(3 * sizeof(double) * (size_t)n);
  assert_true(dv && law);
  jl_integrate_free_velocity(&s.bodies, s.gravity, s.dt, dv);
  assert_int_equal(jl_setup_twin(&twin, &s.bodies, &c, s.mu, s.eps_n, s.eps_t, JL_MATERIALS_MAX, dv,
                                 build_g, &err), JL_OK);
  assert_gpu_problems_equal(&twin, &dp, build_g);
  /* and the reference setup: the same structure, values to rounding
   * (test_scene_twins: bit for bit once both compute with the compact rows) */
  for (int i = 0; i < n; ++i) {
    int m = s.bodies.material[c.body_a[i]] * JL_MATERIALS_MAX + s.bodies.material[c.body_b[i]];
    law[i] = s.mu[m];
    law[n + i] = s.eps_n[m];
    law[2 * n + i] = s.eps_t[m];
  }
  jl_contact_law cl = {law, law + n, law + 2 * n};
  assert_int_equal(jl_contact_setup(&ref, &s.bodies, &c, &cl, dv, build_g, 2, &err), JL_OK);
  double d = fx_problem_diff(&ref, &dp, build_g);
  assert_true(d >= 0.0 && d <= 1e-12);

  /* JOR on the device's problem, no upload */
  jl_prox_opts o;
  jl_prox_opts_default(&o);
  o.kind = JL_SOLVER_JOR;
  o.matrix_free = 1;
  o.alpha = 0.3;
  o.tol_abs = o.tol_rel = 1e-7;
  o.max_iter = 4000;
  double *l_cpu = calloc(3 * (size_t)n, sizeof(double)), *l_gpu = calloc(3 * (size_t)n, sizeof(double));
  double *l_again = calloc(3 * (size_t)n, sizeof(double));
  assert_true(l_cpu && l_gpu && l_again);
  jl_prox_ws ws = {0};
  jl_prox_stats sc, sg, sa;
  assert_int_equal(jl_prox_solve(&twin, &o, l_cpu, &ws, &sc, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_jor(g, NULL, &o, 8, l_gpu, &sg, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_jor(g, NULL, &o, 3, l_again, &sa, &err), JL_OK);
  assert_int_equal(sc.iterations, sg.iterations);
  assert_int_equal(sc.converged, sg.converged);
  assert_int_equal(sc.restarts, sg.restarts);
  assert_memory_equal(l_cpu, l_gpu, 3 * sizeof(double) * (size_t)n);
  assert_memory_equal(l_gpu, l_again, 3 * sizeof(double) * (size_t)n);
  int pressed = 0;
  for (int i = 0; i < n; ++i) pressed += l_gpu[3 * i] > 0.0;
  assert_true(pressed > n / 4);  /* impulses were found, not only zeros */

  jl_prox_ws_free(&ws);
  free(l_cpu);
  free(l_gpu);
  free(l_again);
  free(dv);
  free(law);
  jl_contacts_free(&c);
  jl_contact_problem_free(&dp);
  jl_contact_problem_free(&twin);
  jl_contact_problem_free(&ref);
  jl_scene_gpu_destroy(g);
  jl_scene_free(&s);
}

static void test_setup_without_g(void **state) {
  (void)state;
  run_pipeline(6, 0);
}

static void test_setup_with_g(void **state) {
  (void)state;
  run_pipeline(5, 1);
}
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_setup_without_g),
    cmocka_unit_test(test_setup_with_g),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
