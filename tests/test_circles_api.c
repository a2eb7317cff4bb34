/* The public circles API as the CLI uses it (include/jostle alone): problems,
 * a full run with its log lines, the ready hook, writing, verifying and
 * resuming the result. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <jostle/jostle.h>

typedef struct lines {
  int info, progress;
  char first[512];
} lines;

static void on_line(void *ctx, int level, const char *line) {
  lines *l = ctx;
  if (level == JL_LOG_INFO && l->info++ == 0) snprintf(l->first, sizeof l->first, "%s", line);
  if (level == JL_LOG_PROGRESS) l->progress++;
}

static void quick(jl_circles_options *o, lines *l) {
  jl_circles_options_default(o);
  o->rounds = 2;
  o->time_s = 0;
  o->threads = 1;
  o->device = "cpu";
  o->log = on_line;
  o->log_ctx = l;
  o->progress_lines = 1;
  o->progress_period_s = 1e-6;
}

static void test_problems(void **state) {
  (void)state;
  jl_error err = {0};
  jl_circles_problem p;
  assert_int_equal(jl_circles_problem_contest(&p, 10, &err), JL_OK);
  assert_string_equal(p.name, "zimmermann-10");
  assert_int_equal(p.n, 10);
  assert_true(p.radii[9] == 10.0);
  assert_true(fabs(p.best_known_R - 22.0001930127) < 1e-9);
  jl_circles_problem_free(&p);
  const double contest[] = {1, 2, 3, 4, 5}, other[] = {1, 1, 2};
  assert_int_equal(jl_circles_problem_radii(&p, contest, 5, &err), JL_OK);
  assert_string_equal(p.name, "zimmermann-05");
  jl_circles_problem_free(&p);
  assert_int_equal(jl_circles_problem_radii(&p, other, 3, &err), JL_OK);
  assert_string_equal(p.name, "circles-3");
  assert_true(p.best_known_R == 0.0);
  jl_circles_problem_free(&p);
  const double bad[] = {1, -1};
  assert_int_equal(jl_circles_problem_radii(&p, bad, 2, &err), JL_ERR_INPUT);
  jl_circles_mode m;
  assert_int_equal(jl_circles_mode_parse("trials", &m, &err), JL_OK);
  assert_int_equal(m, JL_CIRCLES_TRIALS);
  assert_int_equal(jl_circles_mode_parse("bogus", &m, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "bogus"));
}

static int refuse(void *ctx, int rank, jl_error *err) {
  (void)ctx;
  err->code = JL_ERR_IO;
  snprintf(err->msg, sizeof err->msg, "rank %d: refused", rank);
  return JL_ERR_IO;
}

static void test_ready_refuses(void **state) {
  (void)state;
  jl_error err = {0};
  jl_circles_problem p;
  assert_int_equal(jl_circles_problem_equal(&p, 5, &err), JL_OK);
  lines l = {0};
  jl_circles_options o;
  quick(&o, &l);
  o.ready = refuse;
  jl_circles_run run;
  assert_int_equal(jl_circles_run_search(&p, &o, &run, &err), JL_ERR_IO);
  assert_string_equal(err.msg, "rank 0: refused");
  assert_int_equal(l.info, 0);  /* no work began */
  assert_int_equal(run.writes, 0);
  jl_circles_run_free(&run);
  jl_circles_problem_free(&p);
}

/* The walk's probe: names and values both ways, keep by default, and a run
 * with a value that is none of them refused before any work. */
static void test_probe_option(void **state) {
  (void)state;
  jl_error err = {0};
  const char *names[] = {"off", "restart", "keep"};
  for (int k = 0; k < 3; ++k) {
    int v = -1;
    assert_int_equal(jl_circles_probe_parse(names[k], &v, &err), JL_OK);
    assert_int_equal(v, k);
    assert_string_equal(jl_circles_probe_name(v), names[k]);
  }
  int v = 5;
  assert_int_equal(jl_circles_probe_parse("on", &v, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "'on'"));
  assert_int_equal(v, 5);
  jl_circles_problem p;
  assert_int_equal(jl_circles_problem_equal(&p, 5, &err), JL_OK);
  lines l = {0};
  jl_circles_options o;
  quick(&o, &l);
  assert_int_equal(o.probe, JL_CIRCLES_PROBE_KEEP);
  o.probe = 3;
  jl_circles_run run;
  assert_int_equal(jl_circles_run_search(&p, &o, &run, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "probe"));
  assert_int_equal(l.info, 0);
  jl_circles_run_free(&run);
  jl_circles_problem_free(&p);
}

/* 7 unit circles: the optimum is R = 3 (a hexagon around one). */
static void test_run_write_verify_resume(void **state) {
  (void)state;
  jl_error err = {0};
  jl_circles_problem p;
  assert_int_equal(jl_circles_problem_equal(&p, 7, &err), JL_OK);
  lines l = {0};
  jl_circles_options o;
  quick(&o, &l);
  jl_circles_run run;
  assert_int_equal(jl_circles_run_search(&p, &o, &run, &err), JL_OK);
  assert_int_equal(strncmp(l.first, "equal-7, 7 circles, CPU, 1 thread, ", 35), 0);
  assert_non_null(strstr(l.first, "population mode, seed 1"));
  assert_true(l.progress >= 1);
  assert_true(run.writes);
  assert_int_equal(run.info.ranks, 1);
  assert_int_equal(run.info.stopped_by, JL_STOPPED_BY_ROUNDS);
  assert_string_equal(run.device, "cpu");
  assert_true(run.layout[0] != '\0');
  assert_true(run.check.legal);
  assert_true(fabs(run.best.R - 3.0) < 1e-6);

  char dir[] = "/tmp/jl_circles_api.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char json[128], svg[128], txt[128];
  snprintf(json, sizeof json, "%s/r.json", dir);
  snprintf(svg, sizeof svg, "%s/r.svg", dir);
  snprintf(txt, sizeof txt, "%s/r.txt", dir);
  assert_int_equal(jl_circles_run_write(&p, &run, json, svg, txt, &err), JL_OK);
  char kind[16];
  jl_result_kind(json, kind, sizeof kind);
  assert_string_equal(kind, "circles");

  /* the stored built-in name (equal-7) is the instance */
  jl_circles_verify_report rep;
  assert_int_equal(jl_circles_verify_file(json, NULL, JL_CIRCLES_LEGAL_TOL, &rep, &err), JL_OK);
  assert_true(rep.same_radii);
  assert_int_equal(rep.n, 7);
  assert_true(rep.check.legal);
  assert_true(fabsl(rep.check.R - (long double)run.best.R) < 1e-12L);
  /* radii 1..7 are another instance: not legal for it, whatever the geometry */
  jl_circles_problem z;
  assert_int_equal(jl_circles_problem_contest(&z, 7, &err), JL_OK);
  assert_int_equal(jl_circles_verify_file(json, &z, JL_CIRCLES_LEGAL_TOL, &rep, &err), JL_OK);
  assert_false(rep.same_radii);
  assert_non_null(strstr(rep.why, "zimmermann-07"));
  /* Packomania text needs the instance */
  assert_int_equal(jl_circles_verify_file(txt, NULL, JL_CIRCLES_LEGAL_TOL, &rep, &err), JL_ERR_INPUT);
  assert_int_equal(jl_circles_verify_file(txt, &p, JL_CIRCLES_LEGAL_TOL, &rep, &err), JL_OK);
  assert_true(rep.same_radii && rep.check.legal);

  /* resuming: the stored problem fills an empty one */
  jl_circles_problem stored = {0};
  jl_circles_packing pk;
  assert_int_equal(jl_circles_resume_load(json, &stored, &pk, &err), JL_OK);
  assert_string_equal(stored.name, "equal-7");
  assert_int_equal(pk.n, 7);
  assert_true(fabs(pk.R - run.best.R) < 1e-9);
  jl_circles_packing_free(&pk);
  /* another instance's radii are refused */
  assert_int_equal(jl_circles_resume_load(json, &z, &pk, &err), JL_ERR_INPUT);

  unlink(json);
  unlink(svg);
  unlink(txt);
  rmdir(dir);
  jl_circles_problem_free(&stored);
  jl_circles_problem_free(&z);
  jl_circles_run_free(&run);
  jl_circles_problem_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_problems),
    cmocka_unit_test(test_probe_option),
    cmocka_unit_test(test_ready_refuses),
    cmocka_unit_test(test_run_write_verify_resume),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
