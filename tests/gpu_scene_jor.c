/* gpu suite: JOR prox on the device (kernels/scene/scene_prox.cu) against its CPU
 * twin (jl_prox_solve's JOR on one thread: the same schedule and
 * arithmetic, prox_math.h), matrix-free and on G: the same impulses bit for bit (the
 * stated tolerance is zero: the arithmetic is shared and IEEE, no FMA, no
 * atomics), the same iterations, restarts and residual, whatever the host's
 * check interval; the other device paths (the per-iteration kernels as CUDA
 * graphs and one launch per kernel, the streamed kernels, the persistent
 * solve with each plan of what it keeps on chip) give identical bytes. The problem comes
 * from contacts found on the device, so this is the pipeline
 * collide (GPU) -> setup (CPU) -> JOR (GPU). Exit 77 without a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"

#include "collide.h"
#include "device.h"
#include "prox_math.h"
#include "scene.h"
#include "scene_fixtures.h"
#include "scene_gpu.h"

#ifdef JL_HAVE_CUDA
typedef struct jor_case {
  jl_scene s;
  jl_contacts c;
  jl_contact_problem p;
  double *dv;
  jl_scene_gpu *g;
} jor_case;

static void make_case(jor_case *k, int side, int build_g) {
  jl_error err = {0};
  memset(k, 0, sizeof *k);
  assert_int_equal(fx_mixed_scene(&k->s, side, 3, 1, 1), 0);
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_create(&k->g, &dev, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_set_bodies(k->g, &k->s.bodies, &err), JL_OK);
  jl_gpu_collide_stats st;
  assert_int_equal(jl_scene_gpu_collide(k->g, 0.02, &st, &err), JL_OK);
  assert_int_equal(jl_contacts_init(&k->c, 16, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_get_contacts(k->g, &k->c, &err), JL_OK);
  assert_true(k->c.count > 100);
  k->dv = malloc(6 * sizeof(double) * (size_t)k->s.bodies.count);
  assert_non_null(k->dv);
  assert_int_equal(fx_gpu_problem(&k->s, &k->c, &k->p, k->dv, build_g), 0);
}

static void free_case(jor_case *k) {
  jl_scene_gpu_destroy(k->g);
  jl_contact_problem_free(&k->p);
  jl_contacts_free(&k->c);
  free(k->dv);
  jl_scene_free(&k->s);
}

static void compare_kind(jor_case *k, jl_solver_kind kind, double alpha, double tol, int max_iter,
                         int check_every, int expect_converged, int on_g) {
  jl_error err = {0};
  int n = k->p.n;
  double *l_cpu = malloc(3 * sizeof(double) * (size_t)n), *l_gpu = malloc(3 * sizeof(double) * (size_t)n);
  double *l_again = malloc(3 * sizeof(double) * (size_t)n), *l_multi = malloc(3 * sizeof(double) * (size_t)n);
  double *l_stream = malloc(3 * sizeof(double) * (size_t)n);
  double *l_bare = malloc(3 * sizeof(double) * (size_t)n);
  assert_true(l_cpu && l_gpu && l_again && l_multi && l_stream && l_bare);
  for (int i = 0; i < 3 * n; ++i)
    l_cpu[i] = l_gpu[i] = l_again[i] = l_multi[i] = l_stream[i] = l_bare[i] =
        (i % 3 == 0) ? 1e-3 * (i % 5) : 0.0;
  jl_prox_opts o;
  jl_prox_opts_default(&o);
  o.kind = kind;
  o.matrix_free = !on_g;
  o.alpha = alpha;
  o.tol_abs = tol;
  o.tol_rel = tol;
  o.max_iter = max_iter;
  jl_prox_ws ws = {0};
  jl_prox_stats sc, sg, sa, sm, ss, sb;
  assert_int_equal(jl_prox_solve(&k->p, &o, l_cpu, &ws, &sc, &err), JL_OK);
  int rc = jl_scene_gpu_jor(k->g, &k->p, &o, check_every, l_gpu, &sg, &err);
  if (rc != JL_OK) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, JL_OK);
  /* the per-iteration kernels, as graphs and one launch per kernel, and the
   * streamed kernels (matrix-free; the default from 200,000 contacts): the
   * persistent launch (the default for these sizes) must give the same bits */
  long persistent = jl_scene_gpu_persistent_solves(k->g);
  jl_scene_gpu_set_persistent(k->g, 0);
  jl_scene_gpu_set_streamed(k->g, 1);
  assert_int_equal(jl_scene_gpu_jor(k->g, &k->p, &o, check_every, l_stream, &ss, &err), JL_OK);
  jl_scene_gpu_set_streamed(k->g, 0);
  assert_int_equal(jl_scene_gpu_jor(k->g, &k->p, &o, check_every, l_multi, &sm, &err), JL_OK);
  jl_scene_gpu_set_streamed(k->g, -1);
  jl_scene_gpu_set_graphs(k->g, 0);
  assert_int_equal(jl_scene_gpu_jor(k->g, &k->p, &o, check_every, l_again, &sa, &err), JL_OK);
  jl_scene_gpu_set_graphs(k->g, 1);
  jl_scene_gpu_set_persistent(k->g, 1);
  assert_int_equal(jl_scene_gpu_persistent_solves(k->g), persistent);
  assert_true(persistent > 0);
  /* a problem this small keeps everything on chip; every other plan of the
   * persistent solve (those of problems too large for the whole cache, down
   * to none: every constant read from the problem's arrays) gives the same
   * bits */
  assert_string_equal(jl_scene_gpu_persistent_cache(k->g), "contacts+du2");
  static const char *const plans[JL_SCENE_GPU_PERSIST_PLANS] = {
      "contacts+du2", "contacts+du1", "du2", "contacts", "du1", "none"};
  for (int pl = 1; pl < JL_SCENE_GPU_PERSIST_PLANS; ++pl) {
    for (int i = 0; i < 3 * n; ++i) l_bare[i] = (i % 3 == 0) ? 1e-3 * (i % 5) : 0.0;
    jl_scene_gpu_set_persistent_cache(k->g, pl);
    assert_int_equal(jl_scene_gpu_jor(k->g, &k->p, &o, check_every, l_bare, &sb, &err), JL_OK);
    jl_scene_gpu_set_persistent_cache(k->g, -1);
    assert_int_equal(jl_scene_gpu_persistent_solves(k->g), persistent + pl);
    assert_string_equal(jl_scene_gpu_persistent_cache(k->g), plans[pl]);
    assert_memory_equal(l_gpu, l_bare, 3 * sizeof(double) * (size_t)n);
    assert_int_equal(sg.iterations, sb.iterations);
    assert_int_equal(sg.converged, sb.converged);
    assert_int_equal(sg.restarts, sb.restarts);
    assert_true(sg.residual == sb.residual && sg.alpha == sb.alpha);
  }
  assert_int_equal(sc.iterations, sg.iterations);
  assert_int_equal(sc.converged, sg.converged);
  assert_int_equal(sc.restarts, sg.restarts);
  assert_true(sc.residual == sg.residual && sc.alpha == sg.alpha);
  double worst = 0.0;
  for (int i = 0; i < 3 * n; ++i) {
    double d = l_cpu[i] > l_gpu[i] ? l_cpu[i] - l_gpu[i] : l_gpu[i] - l_cpu[i];
    if (d > worst) worst = d;
  }
  if (worst > 0.0)
    fprintf(stderr, "%s: largest impulse difference %g\n", jl_solver_kind_upper(kind), worst);
  assert_memory_equal(l_cpu, l_gpu, 3 * sizeof(double) * (size_t)n);
  assert_memory_equal(l_gpu, l_again, 3 * sizeof(double) * (size_t)n);
  assert_memory_equal(l_gpu, l_multi, 3 * sizeof(double) * (size_t)n);
  assert_memory_equal(l_gpu, l_stream, 3 * sizeof(double) * (size_t)n);
  assert_int_equal(sg.iterations, ss.iterations);
  assert_int_equal(sg.restarts, ss.restarts);
  assert_true(sg.residual == ss.residual && sg.alpha == ss.alpha);
  assert_int_equal(sg.iterations, sa.iterations);
  assert_int_equal(sg.iterations, sm.iterations);
  assert_int_equal(sg.restarts, sm.restarts);
  if (expect_converged) assert_true(sg.converged && sg.iterations > 10 && sg.iterations < max_iter);
  else assert_true(!sg.converged);
  if (alpha > 1.0) assert_true(sg.restarts > 0);  /* the divergence path did run */
  jl_prox_ws_free(&ws);
  free(l_cpu);
  free(l_gpu);
  free(l_again);
  free(l_multi);
  free(l_stream);
  free(l_bare);
}

static void compare(jor_case *k, double alpha, double tol, int max_iter, int check_every,
                    int expect_converged, int on_g) {
  compare_kind(k, JL_SOLVER_JOR, alpha, tol, max_iter, check_every, expect_converged, on_g);
}

static void test_jor_converged_matches_twin(void **state) {
  (void)state;
  jor_case k;
  make_case(&k, 5, 1);
  compare(&k, 0.3, 1e-7, 5000, 1, 1, 0);
  compare(&k, 0.3, 1e-7, 5000, 16, 1, 0);  /* the host looks less often: same stop */
  compare(&k, 0.3, 1e-7, 5000, 16, 1, 1);  /* on G */
  free_case(&k);
}

static void test_jor_fixed_iterations_matches_twin(void **state) {
  (void)state;
  jor_case k;
  make_case(&k, 5, 1);
  compare(&k, 0.4, 0.0, 50, 7, 0, 0);
  compare(&k, 0.4, 0.0, 50, 7, 0, 1);
  free_case(&k);
}

static void test_jor_restarts_match_twin(void **state) {
  (void)state;
  jor_case k;
  make_case(&k, 6, 0);
  compare(&k, 1.9, 1e-9, 1500, 10, 0, 0);  /* diverges: alpha halved on both alike */
  free_case(&k);
}
/* APGD (JOR from Nesterov's extrapolated points, momentum restarted when
 * the residual grows): the same bits as the CPU twin, converged, at a
 * fixed count, on G, and through divergence restarts. */
static void test_apgd_matches_twin(void **state) {
  (void)state;
  jor_case k;
  make_case(&k, 5, 1);
  compare_kind(&k, JL_SOLVER_APGD, 0.15, 1e-7, 5000, 1, 1, 0);
  compare_kind(&k, JL_SOLVER_APGD, 0.15, 1e-7, 5000, 16, 1, 0);
  compare_kind(&k, JL_SOLVER_APGD, 0.15, 1e-7, 5000, 16, 1, 1);
  compare_kind(&k, JL_SOLVER_APGD, 0.2, 0.0, 50, 7, 0, 0);
  free_case(&k);
  make_case(&k, 6, 0);
  compare_kind(&k, JL_SOLVER_APGD, 1.9, 1e-9, 1500, 10, 0, 0);
  free_case(&k);
}
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_jor_converged_matches_twin),
    cmocka_unit_test(test_jor_fixed_iterations_matches_twin),
    cmocka_unit_test(test_jor_restarts_match_twin),
    cmocka_unit_test(test_apgd_matches_twin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
