/* The public benchmarks (include/jostle/bench.h) against what their work
 * must be, whatever the speed:
 *   - bench relax: every timed launch does exactly steps steps for each of
 *     batch candidates; the median, fastest and slowest launch are ordered
 *     and the median rate is the work over the median time; nbr says which
 *     contacts ran;
 *   - bench spread: no early stop, so every step asked for runs;
 *   - bench trunk: steps per candidate, no early exit, for 1 and batch;
 *   - bench scene: on CUDA (JL_ERR_DEVICE without it) a scene's bodies and
 *     the six stages; on the CPU the steps of a run of the same scene (the
 *     contacts and iterations of its steps 2..N+1), stages that add up to
 *     the wall time and no barrier waits on one thread;
 *   - bad options give JL_ERR_INPUT with a message naming the field.
 * Device "cpu" and one thread, so the figures are the CPU twin's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jostle/jostle.h>

static void test_relax_work(void **state) {
  (void)state;
  for (int nbr = 0; nbr <= 1; ++nbr) {
    jl_bench_relax_options o;
    jl_bench_relax_options_default(&o);
    o.n = 8;
    o.batch = 4;
    o.steps = 50;
    o.repeat = 3;
    o.nbr = nbr;
    o.device = "cpu";
    o.threads = 1;
    jl_bench_relax_result r;
    jl_error err = {0};
    assert_int_equal(jl_bench_circles_relax(&o, &r, &err), JL_OK);
    assert_int_equal(r.batch, 4);
    assert_int_equal(r.nbr, nbr);
    assert_true(r.steps == 4 * 50);
    assert_string_equal(r.device, "cpu");
    assert_true(0 < r.seconds_min && r.seconds_min <= r.seconds && r.seconds <= r.seconds_max);
    /* odd repeat, equal work: the median rate is the work over the median time */
    assert_true(fabs(r.steps_per_s * r.seconds - 200.0) <= 1e-9 * 200.0);
    assert_true(r.circle_steps_per_s == r.steps_per_s * 8);
  }
}

static void test_spread_work(void **state) {
  (void)state;
  jl_bench_spread_options o;
  jl_bench_spread_options_default(&o);
  o.n = 20;
  o.steps = 30;
  o.device = "cpu";
  jl_bench_spread_result r;
  jl_error err = {0};
  assert_int_equal(jl_bench_circles_spread(&o, &r, &err), JL_OK);
  assert_int_equal(r.steps, 30);
  assert_true(r.seconds > 0 && r.steps_per_s == 30 / r.seconds);
  assert_string_equal(r.device, "cpu");
}

static void test_trunk_work(void **state) {
  (void)state;
  jl_bench_trunk_options o;
  jl_bench_trunk_options_default(&o);
  o.blocks = 4;
  o.points = 1000;
  o.batch = 2;
  o.steps = 3;
  o.device = "cpu";
  o.threads = 1;
  jl_bench_trunk_result r;
  jl_error err = {0};
  assert_int_equal(jl_bench_trunk(&o, &r, &err), JL_OK);
  assert_int_equal(r.batch, 2);
  assert_true(r.candidate_steps == 2 * 3);
  assert_true(r.points > 0 && r.spacing > 0);
  assert_true(r.single_seconds > 0 && r.batch_seconds > 0);
  assert_true(fabs(r.single_step_ms - 1e3 * r.single_seconds / 3) <= 1e-12 * r.single_step_ms);
}

static void scene_path(char *path, size_t len, const char *name) {
  const char *dir = getenv("JL_SCENE_DIR");
  snprintf(path, len, "%s/%s", dir ? dir : "problems/scenes", name);
}

static void test_scene_device(void **state) {
  (void)state;
  char path[4096];
  scene_path(path, sizeof path, "demo-drop.json");
  jl_bench_scene_options o;
  jl_bench_scene_options_default(&o);
  o.steps = 2;
  jl_bench_scene_result r;
  jl_error err = {0};
  int rc = jl_bench_scene(path, &o, &r, &err);
  if (jl_device_cuda_count() == 0) {
    assert_int_equal(rc, JL_ERR_DEVICE);
    return;
  }
  assert_int_equal(rc, JL_OK);
  jl_scene_sim *sim = NULL;
  assert_int_equal(jl_scene_sim_load(path, NULL, &sim, &err), JL_OK);
  assert_int_equal(r.bodies, jl_scene_sim_body_count(sim));
  jl_scene_sim_free(sim);
  static const char *const stages[JL_BENCH_SCENE_STAGES] = {"integrate", "collide", "setup",
                                                            "colour", "solve", "finish"};
  for (int k = 0; k < JL_BENCH_SCENE_STAGES; ++k) assert_string_equal(r.stage_name[k], stages[k]);
}

static void test_scene_cpu(void **state) {
  (void)state;
  char path[4096];
  scene_path(path, sizeof path, "poulsen-grid-8.json");
  const long steps = 3;
  for (int threads = 1; threads <= 2; ++threads) {
    jl_bench_scene_options o;
    jl_bench_scene_options_default(&o);
    o.steps = steps;
    o.device = "cpu";
    o.threads = threads;
    jl_bench_scene_result r;
    jl_error err = {0};
    assert_int_equal(jl_bench_scene(path, &o, &r, &err), JL_OK);
    assert_string_equal(r.stage_name[4], "solve");
    /* the same steps run as a scene: untimed step 1, then steps 2..4 */
    jl_scene_options so;
    jl_scene_options_default(&so);
    so.device = "cpu";
    so.threads = threads;
    jl_scene_sim *sim = NULL;
    assert_int_equal(jl_scene_sim_open(path, &so, &sim, &err), JL_OK);
    assert_int_equal(jl_scene_sim_start(sim, NULL, &err), JL_OK);
    double contacts = 0, iterations = 0;
    for (long k = 0; k <= steps; ++k) {
      jl_scene_step_stats st;
      assert_int_equal(jl_scene_sim_advance(sim, &st, &err), JL_OK);
      if (k == 0) continue;
      contacts += st.contacts;
      iterations += st.iterations;
    }
    jl_scene_sim_free(sim);
    assert_true(contacts > 0);
    assert_true(r.contacts == contacts / steps);
    assert_true(r.iterations == iterations / steps);
    assert_true(r.colours > 0); /* the scene's SOR colours its contacts */
    /* the stages cover the step: their sum is the wall time less the loop's own */
    double sum = 0;
    for (int k = 0; k < JL_BENCH_SCENE_STAGES; ++k) {
      assert_true(r.stage_ms_per_step[k] >= 0);
      sum += r.stage_ms_per_step[k];
    }
    assert_true(sum <= r.ms_per_step * (1 + 1e-9));
    assert_true(sum >= 0.9 * r.ms_per_step);
    assert_true(r.stage_ms_per_step[4] > 0);
    if (threads == 1) assert_true(r.solve_wait_ms_per_step == 0);
    assert_true(r.solve_wait_ms_per_step <= r.stage_ms_per_step[4]);
  }
}

static void expect_input(int rc, const jl_error *err, const char *field) {
  assert_int_equal(rc, JL_ERR_INPUT);
  assert_non_null(strstr(err->msg, field));
}

static void test_bad_options(void **state) {
  (void)state;
  jl_error err = {0};
  jl_bench_relax_options ro;
  jl_bench_relax_result rr;
  jl_bench_relax_options_default(&ro);
  ro.n = 1;
  expect_input(jl_bench_circles_relax(&ro, &rr, &err), &err, "bench relax: n: 1 is outside");
  jl_bench_relax_options_default(&ro);
  ro.repeat = JL_BENCH_REPEAT_MAX + 1;
  expect_input(jl_bench_circles_relax(&ro, &rr, &err), &err, "repeat");
  jl_bench_relax_options_default(&ro);
  ro.relax = "euler";
  expect_input(jl_bench_circles_relax(&ro, &rr, &err), &err, "relax: 'euler'");
  jl_bench_relax_options_default(&ro);
  ro.device = "gpu";
  expect_input(jl_bench_circles_relax(&ro, &rr, &err), &err, "'gpu'");

  jl_bench_spread_options so;
  jl_bench_spread_result sr;
  jl_bench_spread_options_default(&so);
  so.steps = 0;
  expect_input(jl_bench_circles_spread(&so, &sr, &err), &err, "bench spread: steps");

  jl_bench_trunk_options to;
  jl_bench_trunk_result tr;
  jl_bench_trunk_options_default(&to);
  to.blocks = JL_BENCH_TRUNK_BLOCKS_MAX + 1;
  expect_input(jl_bench_trunk(&to, &tr, &err), &err, "bench trunk: blocks");

  jl_bench_scene_options co;
  jl_bench_scene_result cr;
  jl_bench_scene_options_default(&co);
  co.solver = "gauss";
  expect_input(jl_bench_scene("x.json", &co, &cr, &err), &err, "solver: expected jor, sor or apgd");
  jl_bench_scene_options_default(&co);
  co.body_order = "random";
  expect_input(jl_bench_scene("x.json", &co, &cr, &err), &err, "body_order");
  jl_bench_scene_options_default(&co);
  co.check_every = 0;
  expect_input(jl_bench_scene("x.json", &co, &cr, &err), &err, "check_every");
  jl_bench_scene_options_default(&co);
  co.device = "gpu";
  expect_input(jl_bench_scene("x.json", &co, &cr, &err), &err, "'gpu'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_relax_work),   cmocka_unit_test(test_spread_work),
    cmocka_unit_test(test_trunk_work),   cmocka_unit_test(test_scene_device),
    cmocka_unit_test(test_scene_cpu),    cmocka_unit_test(test_bad_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
