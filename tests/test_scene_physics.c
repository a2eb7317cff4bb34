/* The scene pipeline (collision, contact setup, prox solve, Moreau step)
 * against known physical answers on the CPU path, through the runner
 * (scene_runner.h). The checks live in scene_checks.h, shared with the
 * device's run of them (tests/gpu_scene_physics.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scene_checks.h"
#include "collide.h"
#include "scene_step.h"

/* The stated tolerance of the device comparison (tests/gpu_scene_physics.c)
 * holds between two solvers on the CPU: SOR and JOR. */
static void test_sor_and_jor_agree(void **state) {
  const jl_device *dev = *state;
  double pos, imp;
  sc_compare_runs(dev, JL_SOLVER_SOR, dev, JL_SOLVER_JOR, &pos, &imp);
  assert_true(pos <= SC_CMP_POS);
  assert_true(imp <= SC_CMP_IMP);
}

/* The stepper on 1, 2 and 3 threads (3 where there are 3 cores: the
 * stepper's pool stops at the cores) gives the same bits: every stage on
 * the thread team (collision, setup, warm start, the coloured SOR, end
 * velocities and positions, the warm-start memory) splits its items by
 * index and joins in a fixed order. A 0.5 m sphere at 15 m/s into the
 * 20-row pyramid's fourth row, 25 steps: over 1,400 contacts a step, enough for every
 * stage to take 2 threads (512 contacts or bodies a thread at least). */
static void test_threads_same_bits(void **state) {
  (void)state;
  enum { RUNS = 3, STEPS = 25 };
  int threads[RUNS] = {1, 2, 3};
  jl_scene s[RUNS];
  jl_stepper st[RUNS];
  jl_error err = {0};
  for (int r = 0; r < RUNS; ++r) {
    sc_new_scene(&s[r], 0.01, 0.6, 0.2);
    s[r].solver.max_iter = 50;
    sc_pyramid20(&s[r]);
    int k = sc_add(&s[r], JL_SHAPE_SPHERE, 0.5, 0, 0, -10.2, 0.0, 7.0, 50.0);
    s[r].bodies.vel[3 * k] = 15.0;
    assert_int_equal(jl_stepper_init(&st[r], &s[r], threads[r], &err), JL_OK);
  }
  size_t nb = (size_t)s[0].bodies.count;
  double *x0 = malloc(3 * sizeof(double) * nb);
  assert_non_null(x0);
  memcpy(x0, s[0].bodies.pos, 3 * sizeof(double) * nb);
  int min_contacts = 1 << 30;
  for (int i = 0; i < STEPS; ++i) {
    jl_step_stats ref;
    for (int r = 0; r < RUNS; ++r) {
      jl_step_stats ss;
      assert_int_equal(jl_stepper_step(&st[r], &ss, &err), JL_OK);
      if (r == 0) {
        ref = ss;
        if (ss.contacts < min_contacts) min_contacts = ss.contacts;
        continue;
      }
      assert_int_equal(ss.contacts, ref.contacts);
      assert_int_equal(ss.iterations, ref.iterations);
      assert_memory_equal(&ss.residual, &ref.residual, sizeof(double));
      assert_memory_equal(&ss.max_penetration, &ref.max_penetration, sizeof(double));
    }
  }
  const jl_bodies *b0 = &s[0].bodies;
  for (int r = 1; r < RUNS; ++r) {
    const jl_bodies *b = &s[r].bodies;
    assert_memory_equal(b->pos, b0->pos, 3 * sizeof(double) * nb);
    assert_memory_equal(b->quat, b0->quat, 4 * sizeof(double) * nb);
    assert_memory_equal(b->vel, b0->vel, 3 * sizeof(double) * nb);
    assert_memory_equal(b->omega, b0->omega, 3 * sizeof(double) * nb);
    assert_int_equal(st[r].prev_n, st[0].prev_n);
    assert_memory_equal(st[r].prev_key, st[0].prev_key, sizeof(uint64_t) * (size_t)st[0].prev_n);
    assert_memory_equal(st[r].prev_imp, st[0].prev_imp, 3 * sizeof(double) * (size_t)st[0].prev_n);
  }
  double moved = sc_max_drift(&s[0], x0);
  print_message("sphere into the 20-row pyramid, %d steps: at least %d contacts a step, "
                "a body moved %.3g m, the same bits on 1, 2 and 3 threads\n", STEPS, min_contacts,
                moved);
  assert_true(min_contacts > 1024);
  assert_true(moved > 0.5);  /* the sphere went in */
  free(x0);
  for (int r = 0; r < RUNS; ++r) {
    jl_stepper_free(&st[r]);
    jl_scene_free(&s[r]);
  }
}

/* The warm-start memory's key sort: the order qsort gives, on keys sorted
 * but for each pair's few points (the narrow phase's order), and on keys in
 * reverse (past the insertion sort's budget). */
static void test_sort_keys(void **state) {
  (void)state;
  enum { N = 4000 };
  uint64_t *key = malloc(sizeof(uint64_t) * N);
  jl_key_index *out = malloc(sizeof(jl_key_index) * N);
  assert_non_null(key);
  assert_non_null(out);
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < N; ++i) {
      int pair = i / 4, feature = 3 - i % 4;  /* each pair's points backwards */
      key[i] = pass == 0 ? JL_CONTACT_KEY(pair, pair + 1, feature) : (uint64_t)(N - i) * 7919u;
    }
    jl_step_sort_keys(key, N, out);
    for (int e = 0; e < N; ++e) {
      assert_int_equal(out[e].key, key[out[e].i]);
      if (e > 0) assert_true(out[e - 1].key < out[e].key);
    }
  }
  free(key);
  free(out);
}

/* argv[1]: run only the tests matching this pattern. */
int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  jl_error err = {0};
  jl_device one, two; /* the results do not depend on the thread count */
  if (jl_device_select(&one, "cpu", 1, NULL, &err) != JL_OK ||
      jl_device_select(&two, "cpu", 2, NULL, &err) != JL_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_prestate(sc_sphere_rests, &one),
    cmocka_unit_test_prestate(sc_block_slides, &one),
    cmocka_unit_test_prestate(sc_incline, &one),
    cmocka_unit_test_prestate(sc_ball_rebounds, &one),
    cmocka_unit_test_prestate(sc_newtons_cradle, &one),
    cmocka_unit_test_prestate(sc_box_stack_stands, &two),
    cmocka_unit_test_prestate(sc_pyramid_stands, &two),
    cmocka_unit_test_prestate(sc_pyramid_stands_apgd, &two),
    cmocka_unit_test_prestate(sc_pile_energy_decreases, &two),
    cmocka_unit_test_prestate(sc_warm_start_helps, &one),
    cmocka_unit_test_prestate(test_sor_and_jor_agree, &one),
    cmocka_unit_test_prestate(sc_spatial_order_is_given_order, &two),
    cmocka_unit_test_prestate(sc_permuted_run_stays_warm, &two),
    cmocka_unit_test(test_threads_same_bits),
    cmocka_unit_test(test_sort_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
