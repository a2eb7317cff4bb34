/* The public trunk API (include/jostle/trunk.h) alone: a cuboid given as
 * triangles holds exactly its volume in blocks, bad arguments are refused
 * naming the argument, and the stop flag and the progress callback end a
 * run early with a legal packing; jl_trunk_measure runs the whole job
 * (callbacks, facts, files, verify) and refuses naming the setting. */
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
#include <unistd.h>

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

/* What a jl_trunk_measure run passed to its callbacks. */
typedef struct measure_log {
  int lines[4];            /* per level */
  int prefixed;            /* lines that start with "jostle: " or end in a newline */
  int mesh_line;           /* the step line naming the mesh and its bound */
  int ready_calls, ready_rank, ready_size;
  char ready_name[128];
  int ready_status;        /* what ready returns */
} measure_log;

static void on_measure_log(void *ctx, int level, const char *line) {
  measure_log *l = ctx;
  assert_true(level >= JL_LOG_ERROR && level <= JL_LOG_PROGRESS);
  l->lines[level]++;
  size_t n = strlen(line);
  if (strncmp(line, "jostle: ", 8) == 0 || (n && line[n - 1] == '\n')) l->prefixed++;
  if (level == JL_LOG_INFO && strstr(line, "upper bound 200 blocks")) l->mesh_line++;
}

static int on_measure_ready(void *ctx, const jl_trunk_start *st, jl_error *err) {
  measure_log *l = ctx;
  l->ready_calls++;
  l->ready_rank = st->rank;
  l->ready_size = st->size;
  snprintf(l->ready_name, sizeof l->ready_name, "%s", st->name);
  if (l->ready_status) {
    snprintf(err->msg, sizeof err->msg, "refused by ready");
    err->code = l->ready_status;
  }
  return l->ready_status;
}

static jl_trunk_config measure_config(const char *mesh, char *path, size_t cap, measure_log *log) {
  const char *dir = getenv("JL_MESH_DIR");
  snprintf(path, cap, "%s/%s", dir ? dir : "meshes", mesh);
  jl_trunk_config c;
  jl_trunk_config_default(&c);
  c.input = path;
  c.time_s = 20.0;
  c.threads = 1;
  c.device = "cpu";
  c.log = on_measure_log;
  c.log_ctx = log;
  c.ready = on_measure_ready;
  c.ready_ctx = log;
  return c;
}

/* The whole job on the cuboid mesh: 200 blocks, the volume bound, lines
 * through the callback without the CLI's prefix, the three files written,
 * and the result file verified legal with the same count. */
static void test_measure_cuboid(void **state) {
  (void)state;
  measure_log log = {{0}, 0, 0, 0, -1, 0, "", 0};
  char path[4096];
  jl_trunk_config c = measure_config("cuboid-1000x500x400.stl", path, sizeof path, &log);
  jl_trunk_outcome r;
  jl_error err = {0};
  int rc = jl_trunk_measure(&c, &r, &err);
  if (rc != JL_OK) fail_msg("%s", err.msg);
  assert_int_equal(log.ready_calls, 1);
  assert_int_equal(log.ready_rank, 0);
  assert_int_equal(log.ready_size, 1);
  assert_string_equal(log.ready_name, "cuboid-1000x500x400");
  assert_int_equal(log.mesh_line, 1);
  assert_true(log.lines[JL_LOG_PROGRESS] >= 1);
  assert_int_equal(log.lines[JL_LOG_ERROR], 0);
  assert_int_equal(log.prefixed, 0);
  assert_int_equal(r.root, 1);
  assert_int_equal(r.ranks, 1);
  assert_null(r.rank_info);
  assert_int_equal(r.count, 200);
  assert_int_equal(r.bound, 200);
  assert_int_equal(r.baseline, 200);
  assert_string_equal(r.stopped_by, "target");
  assert_string_equal(r.name, "cuboid-1000x500x400");
  assert_true(fabs(r.mesh_volume_mm3 - 2e8) < 1e-3);
  assert_true(r.block[0] == 200.0 && r.block[1] == 100.0 && r.block[2] == 50.0);
  assert_true(r.time_to_best_s <= r.time_s && r.time_s < c.time_s);
  assert_true(strlen(r.check) > 0);
  char dir[] = "/tmp/test_trunk_api_XXXXXX", json[64], glb[64], svg[64];
  assert_non_null(mkdtemp(dir));
  snprintf(json, sizeof json, "%s/r.json", dir);
  snprintf(glb, sizeof glb, "%s/r.glb", dir);
  snprintf(svg, sizeof svg, "%s/r.svg", dir);
  assert_int_equal(jl_trunk_outcome_write_json(&r, json, &err), JL_OK);
  assert_int_equal(jl_trunk_outcome_write_glb(&r, glb, &err), JL_OK);
  assert_int_equal(jl_trunk_outcome_write_svg(&r, svg, "a title", &err), JL_OK);
  jl_trunk_outcome_free(&r);
  assert_null(r.job);
  jl_trunk_verdict v;
  rc = jl_trunk_verify(json, &v, &err);
  if (rc != JL_OK) fail_msg("%s", err.msg);
  assert_int_equal(v.legal, 1);
  assert_int_equal(v.count, 200);
  assert_true(fabs(v.mesh_volume_mm3 - 2e8) < 1e-3);
  assert_string_equal(v.mesh, path);
  const char *files[3] = {json, glb, svg};
  for (int k = 0; k < 3; ++k) {
    FILE *f = fopen(files[k], "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    assert_true(ftell(f) > 100);
    fclose(f);
    remove(files[k]);
  }
  rmdir(dir);
}

/* Refusals name the setting as the config's names say; ready's status
 * ends the run before any work; an empty outcome writes nothing. */
static void test_measure_refusals(void **state) {
  (void)state;
  measure_log log = {{0}, 0, 0, 0, -1, 0, "", 0};
  char path[4096];
  jl_trunk_config c = measure_config("cuboid-1000x500x400.stl", path, sizeof path, &log);
  jl_trunk_outcome r;
  jl_error err = {0};
  c.time_s = 0.0;
  assert_int_equal(jl_trunk_measure(&c, &r, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "config.time_s"));
  c.names.time = "--time";
  assert_int_equal(jl_trunk_measure(&c, &r, &err), JL_ERR_INPUT);
  assert_true(strncmp(err.msg, "--time: ", 8) == 0);
  c.time_s = 20.0;
  c.units = "furlong";
  assert_int_equal(jl_trunk_measure(&c, &r, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "config.units"));
  c.units = NULL;
  c.device = "tpu";
  assert_int_equal(jl_trunk_measure(&c, &r, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "config.device"));
  c.device = "cpu";
  c.input = "no-such-mesh.stl";
  assert_int_equal(jl_trunk_measure(&c, &r, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "no-such-mesh.stl"));
  c.input = path;
  log.ready_status = JL_ERR_IO;
  assert_int_equal(jl_trunk_measure(&c, &r, &err), JL_ERR_IO);
  assert_string_equal(err.msg, "refused by ready");
  assert_int_equal(log.lines[JL_LOG_INFO] + log.lines[JL_LOG_PROGRESS], 0);
  assert_int_equal(r.count, 0);
  assert_null(r.job);
  assert_int_equal(jl_trunk_outcome_write_json(&r, "/tmp/never.json", &err), JL_ERR_INPUT);
  jl_trunk_verdict v;
  assert_int_equal(jl_trunk_verify("no-such-result.json", &v, &err), JL_ERR_INPUT);
  double b[3];
  assert_int_equal(jl_trunk_block_parse("--block", "200x100", b, &err), JL_ERR_INPUT);
  assert_true(strncmp(err.msg, "--block", 7) == 0);
  assert_int_equal(jl_trunk_block_parse("--block", "400x200x100", b, &err), JL_OK);
  assert_true(b[0] == 400.0 && b[1] == 200.0 && b[2] == 100.0);
  assert_true(jl_trunk_units_scale("in") == 25.4 && jl_trunk_units_scale("yd") == 0.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_cuboid_from_triangles),
    cmocka_unit_test(test_cuboid_inward_in_cm),
    cmocka_unit_test(test_bad_input),
    cmocka_unit_test(test_stop_before),
    cmocka_unit_test(test_progress_stops),
    cmocka_unit_test(test_measure_cuboid),
    cmocka_unit_test(test_measure_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
