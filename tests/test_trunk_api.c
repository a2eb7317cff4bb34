/* The public trunk API (include/jostle/trunk.h) alone: a cuboid given as
 * triangles holds exactly its volume in blocks, bad arguments are refused
 * naming the argument, and the stop flag and the progress callback end a
 * run early with a legal packing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jostle/jostle.h>

/* The exact check's tolerance on these meshes is 1e-7 of the diagonal
 * (0.1 um here); what the result reports must be below it. */
#define LEGAL_MM 1e-4

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The box [0, a] x [0, b] x [0, c] in 8 vertices and 12 triangles facing out. */
static void cuboid(double a, double b, double c, double v[24], int t[36]) {
  for (int i = 0; i < 8; ++i) {
    v[3 * i] = (i & 1) ? a : 0.0;
    v[3 * i + 1] = (i & 2) ? b : 0.0;
    v[3 * i + 2] = (i & 4) ? c : 0.0;
  }
  static const int tri[36] = {0, 2, 1, 1, 2, 3,   /* z = 0 */
                              4, 5, 6, 5, 7, 6,   /* z = c */
                              0, 1, 4, 1, 5, 4,   /* y = 0 */
                              2, 6, 3, 3, 6, 7,   /* y = b */
                              0, 4, 2, 2, 4, 6,   /* x = 0 */
                              1, 3, 5, 3, 7, 5};  /* x = a */
  memcpy(t, tri, sizeof tri);
}

static jl_trunk_options quick_options(void) {
  jl_trunk_options o;
  jl_trunk_options_default(&o);
  o.time_s = 20.0;
  o.threads = 1;
  o.device = "cpu";
  return o;
}

/* Every block's corners inside [0, a] x [0, b] x [0, c] (within LEGAL_MM)
 * and every quaternion of unit length. */
static void assert_blocks_in_box(const jl_trunk_result *r, double a, double b, double c) {
  const double h[3] = {100.0, 50.0, 25.0}, box[3] = {a, b, c};
  for (int i = 0; i < r->count; ++i) {
    const double *q = r->quat + 4 * i, *p = r->centre + 3 * i;
    double w = q[0], x = q[1], y = q[2], z = q[3];
    assert_true(fabs(w * w + x * x + y * y + z * z - 1.0) < 1e-9);
    double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    for (int k = 0; k < 3; ++k) {
      double ext = 0.0;
      for (int j = 0; j < 3; ++j) ext += fabs(R[k][j]) * h[j];
      assert_true(p[k] - ext >= -LEGAL_MM);
      assert_true(p[k] + ext <= box[k] + LEGAL_MM);
    }
  }
}

static void test_cuboid_from_triangles(void **state) {
  (void)state;
  double v[24];
  int t[36];
  cuboid(1000, 500, 400, v, t);
  jl_trunk_options o = quick_options();
  jl_trunk_result r;
  jl_error err = {0};
  assert_int_equal(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), JL_OK);
  assert_int_equal(r.count, 200);
  assert_int_equal(r.upper_bound, 200);
  assert_int_equal(r.baseline, 200);
  assert_true(fabs(r.mesh_volume_l - 200.0) < 1e-9);
  assert_true(r.max_penetration_mm < LEGAL_MM && r.max_overlap_mm < LEGAL_MM);
  assert_int_equal(r.stopped_by, JL_STOPPED_BY_TARGET);
  assert_true(r.time_s < o.time_s);
  assert_blocks_in_box(&r, 1000, 500, 400);
  jl_trunk_result_free(&r);
  assert_null(r.centre);
}

/* Inward triangles are turned outward; centimetres are read as such. */
static void test_cuboid_inward_in_cm(void **state) {
  (void)state;
  double v[24];
  int t[36];
  cuboid(100, 50, 40, v, t);
  for (int i = 0; i < 12; ++i) {
    int s = t[3 * i + 1];
    t[3 * i + 1] = t[3 * i + 2];
    t[3 * i + 2] = s;
  }
  jl_trunk_options o = quick_options();
  o.units = "cm";
  jl_trunk_result r;
  jl_error err = {0};
  assert_int_equal(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), JL_OK);
  assert_int_equal(r.count, 200);
  assert_true(fabs(r.mesh_volume_l - 200.0) < 1e-9);
  assert_blocks_in_box(&r, 1000, 500, 400);
  jl_trunk_result_free(&r);
}

/* A refused call: JL_ERR_INPUT, a message holding want, an empty result. */
static void assert_refused(int rc, const jl_error *err, const jl_trunk_result *r, const char *want) {
  assert_int_equal(rc, JL_ERR_INPUT);
  assert_int_equal(err->code, JL_ERR_INPUT);
  if (!strstr(err->msg, want)) fail_msg("message \"%s\" lacks \"%s\"", err->msg, want);
  assert_int_equal(r->count, 0);
  assert_null(r->centre);
  assert_null(r->quat);
}

static void test_bad_input(void **state) {
  (void)state;
  double v[24];
  int t[36];
  cuboid(1000, 500, 400, v, t);
  jl_trunk_options o = quick_options();
  jl_trunk_result r;
  jl_error err = {0};

  t[20] = 8;  /* one past the last vertex */
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), &err, &r, "triangles[20]");
  t[20] = -1;
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), &err, &r, "triangles[20]");
  cuboid(1000, 500, 400, v, t);
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 3, &o, &r, &err), &err, &r, "n_triangles");
  assert_refused(jl_trunk_volume_triangles(v, 8, t, -12, &o, &r, &err), &err, &r, "n_triangles");
  assert_refused(jl_trunk_volume_triangles(v, 3, t, 12, &o, &r, &err), &err, &r, "n_vertices");
  assert_refused(jl_trunk_volume_triangles(NULL, 8, t, 12, &o, &r, &err), &err, &r, "vertices");
  assert_refused(jl_trunk_volume_triangles(v, 8, NULL, 12, &o, &r, &err), &err, &r, "triangles");
  v[13] = NAN;
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), &err, &r, "vertices[13]");
  cuboid(1000, 500, 400, v, t);
  /* an open surface: one triangle left out */
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 11, &o, &r, &err), &err, &r, "triangles:");

  /* the cuboid read in metres is a 1 km trunk: refused before any work, naming the unit */
  o.units = "m";
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), &err, &r, "options.units");
  o.units = "furlong";
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), &err, &r, "options.units");
  assert_refused(jl_trunk_volume("../meshes/cuboid-1000x500x400.stl", &o, &r, &err), &err, &r, "options.units");
  o = quick_options();
  o.time_s = 0.0;
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), &err, &r, "options.time_s");
  o = quick_options();
  o.device = "tpu";
  assert_refused(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), &err, &r, "options.device");
  o = quick_options();
  assert_refused(jl_trunk_volume("/nonexistent/trunk.stl", &o, &r, &err), &err, &r, "/nonexistent/trunk.stl");
  assert_refused(jl_trunk_volume(NULL, &o, &r, &err), &err, &r, "mesh_path");
  /* no jl_error: the status alone */
  assert_int_equal(jl_trunk_volume("/nonexistent/trunk.stl", &o, &r, NULL), JL_ERR_INPUT);
}

/* Set before the call, the stop flag ends every phase at once: JL_OK with
 * a legal packing, possibly empty, stopped by JL_STOPPED_BY_SIGNAL. */
static void test_stop_before(void **state) {
  (void)state;
  double v[24];
  int t[36];
  cuboid(1000, 500, 400, v, t);
  volatile sig_atomic_t stop = 1;
  jl_trunk_options o = quick_options();
  o.time_s = 60.0;
  o.stop = &stop;
  jl_trunk_result r;
  jl_error err = {0};
  double t0 = now_s();
  assert_int_equal(jl_trunk_volume_triangles(v, 8, t, 12, &o, &r, &err), JL_OK);
  assert_true(now_s() - t0 < 10.0);
  assert_int_equal(r.stopped_by, JL_STOPPED_BY_SIGNAL);
  assert_true(r.count >= 0 && r.count <= 200);
  assert_true(r.max_penetration_mm < LEGAL_MM && r.max_overlap_mm < LEGAL_MM);
  assert_blocks_in_box(&r, 1000, 500, 400);
  jl_trunk_result_free(&r);
}

typedef struct progress_log {
  int calls;
  double last_time;
  double stop_after;
  pthread_t caller;
  int other_thread;        /* calls from another thread than the caller's */
  double min_gap;          /* the shortest time between two calls */
  double asked_at;         /* wall time of the first call that asked to stop (0: none) */
} progress_log;

static int on_progress(void *ctx, const jl_progress_info *p) {
  progress_log *l = ctx;
  if (l->calls > 0 && p->time_s - l->last_time < l->min_gap) l->min_gap = p->time_s - l->last_time;
  ++l->calls;
  l->other_thread += !pthread_equal(pthread_self(), l->caller);
  assert_true(p->best >= 0.0);
  l->last_time = p->time_s;
  /* stop once a fill has given blocks (a slow machine, or a sanitizer, may
   * take longer than stop_after for the first) */
  int stop = p->time_s >= l->stop_after && p->best > 0.0;
  if (stop && l->asked_at == 0.0) l->asked_at = now_s();
  return stop;
}

/* A progress callback that asks to stop after 3 s, once a fill has given
 * blocks, ends a 60 s run on the slanted seat back within seconds (the
 * fills alone may take 24 s), with a legal packing at least its grid
 * baseline; it is called on the calling thread about once a second. */
static void test_progress_stops(void **state) {
  (void)state;
  const char *dir = getenv("JL_MESH_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/slanted-seat-back.stl", dir ? dir : "meshes");
  progress_log log = {0, 0.0, 3.0, pthread_self(), 0, 1e9, 0.0};
  jl_trunk_options o = quick_options();
  o.time_s = 60.0;
  o.progress = on_progress;
  o.progress_ctx = &log;
  jl_trunk_result r;
  jl_error err = {0};
  int rc = jl_trunk_volume(path, &o, &r, &err);
  if (rc != JL_OK) fail_msg("%s", err.msg);
  assert_true(log.asked_at > 0.0 && now_s() - log.asked_at < 5.0);
  assert_true(log.calls >= 3);
  assert_int_equal(log.other_thread, 0);
  assert_true(log.min_gap > 0.5);
  assert_int_equal(r.stopped_by, JL_STOPPED_BY_SIGNAL);
  assert_true(r.count >= r.baseline && r.baseline > 0);
  assert_true(r.count <= r.upper_bound);
  assert_true(r.max_penetration_mm < LEGAL_MM && r.max_overlap_mm < LEGAL_MM);
  jl_trunk_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_cuboid_from_triangles),
    cmocka_unit_test(test_cuboid_inward_in_cm),
    cmocka_unit_test(test_bad_input),
    cmocka_unit_test(test_stop_before),
    cmocka_unit_test(test_progress_stops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
