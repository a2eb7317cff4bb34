/* The public trunk API (include/jostle/trunk.h) over the trunk run
 * (trunk_run.h), silent: nothing is printed and no file is written. */
#include <jostle/trunk.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "mesh.h"
#include "mesh_scan.h"
#include "parallel.h"
#include "timer.h"
#include "trunk_run.h"

/* The longest run the options may ask for (the CLI's --time limit). */
#define JL_TRUNK_API_TIME_MAX 1e9
/* How often the caller's stop flag is looked at, seconds. */
#define JL_TRUNK_API_STOP_POLL_S 0.01
/* The fewest vertices and triangles of a closed surface (a tetrahedron). */
#define JL_TRUNK_API_MIN_ELEMENTS 4

void jl_trunk_options_default(jl_trunk_options *o) {
  memset(o, 0, sizeof *o);
  o->time_s = 60.0;
  o->seed = 1;
  o->device = "auto";
  o->units = "mm";
}

/* The run polls one flag; the caller's stop flag reaches it through a
 * thread that copies it over (the progress callback sets it directly), so
 * it ends every phase, the fills and the reachable volume included. */
typedef struct jl_api_stop {
  volatile sig_atomic_t flag;
  volatile sig_atomic_t *user;
  atomic_int done;
  pthread_t thread;
  int started;
} jl_api_stop;

static void *jl_api_stop_watch(void *arg) {
  jl_api_stop *s = arg;
  struct timespec ts = {0, (long)(JL_TRUNK_API_STOP_POLL_S * 1e9)};
  while (!atomic_load(&s->done)) {
    if (*s->user) s->flag = 1;
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void jl_api_stop_begin(jl_api_stop *s, volatile sig_atomic_t *user) {
  s->flag = user && *user;
  s->user = user;
  atomic_init(&s->done, 0);
  s->started = user && pthread_create(&s->thread, NULL, jl_api_stop_watch, s) == 0;
}

static void jl_api_stop_end(jl_api_stop *s) {
  atomic_store(&s->done, 1);
  if (s->started) pthread_join(s->thread, NULL);
  s->started = 0;
}

static int jl_api_options_check(const jl_trunk_options *o, double *scale, jl_error *err) {
  if (!(o->time_s > 0.0 && o->time_s <= JL_TRUNK_API_TIME_MAX))
    return jl_error_set(err, JL_ERR_INPUT, "options.time_s: %g (expected > 0 and at most %g seconds)", o->time_s,
                        JL_TRUNK_API_TIME_MAX);
  if (o->threads < 0 || o->threads > JL_MAX_THREADS)
    return jl_error_set(err, JL_ERR_INPUT, "options.threads: %d (expected 0 for all, or 1 to %d)", o->threads,
                        JL_MAX_THREADS);
  const char *want = o->device ? o->device : "auto";
  if (strcmp(want, "auto") != 0 && strcmp(want, "cpu") != 0 && strcmp(want, "cuda") != 0)
    return jl_error_set(err, JL_ERR_INPUT, "options.device: \"%s\" (expected auto, cpu or cuda)", want);
  const char *units = o->units ? o->units : "mm";
  if (!(*scale = jl_units_scale(units)))
    return jl_error_set(err, JL_ERR_INPUT, "options.units: \"%s\" (expected mm, cm, m or in)", units);
  return JL_OK;
}

static jl_stop_reason jl_api_stop_reason(const char *s) {
  if (strcmp(s, "target") == 0) return JL_STOPPED_BY_TARGET;
  if (strcmp(s, "signal") == 0) return JL_STOPPED_BY_SIGNAL;
  if (strcmp(s, "rounds") == 0) return JL_STOPPED_BY_ROUNDS;
  return JL_STOPPED_BY_TIME;
}

/* The public result from the run's. */
static int jl_api_result_fill(const jl_trunk_run_result *r, const jl_trunk_problem *prob, const jl_device *dev,
                              jl_trunk_result *res, jl_error *err) {
  int n = r->best.count;
  if (n > 0) {
    res->centre = malloc((size_t)n * 3 * sizeof *res->centre);
    res->quat = malloc((size_t)n * 4 * sizeof *res->quat);
    if (!res->centre || !res->quat) {
      jl_trunk_result_free(res);
      return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d blocks", n);
    }
    memcpy(res->centre, r->best.centre, (size_t)n * 3 * sizeof *res->centre);
    memcpy(res->quat, r->best.quat, (size_t)n * 4 * sizeof *res->quat);
  }
  res->count = n;
  double bvol = prob->block.x * prob->block.y * prob->block.z;
  res->mesh_volume_l = r->mesh_report.volume / 1e6;
  res->reachable_l = r->reach.measured ? r->reach.volume_mm3 / 1e6 : 0.0;
  long bound = (long)floor(r->mesh_report.volume / bvol);
  if (r->reach.measured && r->reach.bound < bound) bound = r->reach.bound;
  res->upper_bound = (int)bound;
  res->baseline = r->grid.count;
  res->max_penetration_mm = r->check.max_surface_depth > 0 ? r->check.max_surface_depth : 0.0;
  res->max_overlap_mm = r->check.max_overlap_depth > 0 ? r->check.max_overlap_depth : 0.0;
  res->time_s = r->time_s;
  res->stopped_by = jl_api_stop_reason(r->stopped_by);
  snprintf(res->device_name, sizeof res->device_name, "%s",
           r->search.device_name[0] ? r->search.device_name : dev->name);
  return JL_OK;
}

/* One run of the problem (mesh: arrays given, or NULL to read prob->mesh). */
static int jl_api_volume(jl_trunk_problem *prob, const jl_mesh *mesh, const jl_trunk_options *o,
                         jl_trunk_result *res, jl_error *err) {
  jl_device dev;
  int rc = jl_device_select(&dev, o->device ? o->device : "auto", o->threads, NULL, err);
  if (rc != JL_OK) return rc;
  jl_log quiet = {NULL, JL_LOG_ERROR};
  jl_api_stop stop;
  jl_api_stop_begin(&stop, o->stop);
  jl_trunk_run_config cfg;
  jl_trunk_run_config_default(&cfg);
  cfg.problem = prob;
  cfg.mesh = mesh;
  cfg.dev = &dev;
  cfg.device = o->device ? o->device : "auto";
  cfg.threads = o->threads;
  cfg.t0 = jl_time_now();
  cfg.time_s = o->time_s;
  cfg.seed = o->seed;
  cfg.log = &quiet;
  cfg.units_name = "options.units";
  cfg.max_blocks_name = "the library's limit";
  cfg.progress = o->progress;
  cfg.progress_ctx = o->progress_ctx;
  cfg.stop = &stop.flag;
  jl_trunk_run_result r;
  rc = jl_trunk_run(&cfg, &r, err);
  jl_api_stop_end(&stop);
  if (rc == JL_OK) rc = jl_api_result_fill(&r, prob, &dev, res, err);
  jl_trunk_run_result_free(&r);
  return rc;
}

int jl_trunk_volume(const char *mesh_path, const jl_trunk_options *o, jl_trunk_result *res, jl_error *err) {
  jl_trunk_options def;
  if (!o) {
    jl_trunk_options_default(&def);
    o = &def;
  }
  if (!res) return jl_error_set(err, JL_ERR_INPUT, "jl_trunk_volume: no result given");
  memset(res, 0, sizeof *res);
  double scale = 0.0;
  int rc = jl_api_options_check(o, &scale, err);
  if (rc != JL_OK) return rc;
  if (!mesh_path || !*mesh_path) return jl_error_set(err, JL_ERR_INPUT, "mesh_path: no path given");
  if (strlen(mesh_path) >= JL_TRUNK_PATH_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "mesh_path: longer than %d characters", JL_TRUNK_PATH_MAX - 1);
  jl_trunk_problem prob;
  jl_trunk_problem_from_mesh(&prob, mesh_path);
  snprintf(prob.units, sizeof prob.units, "%s", o->units ? o->units : "mm");
  prob.scale = scale;
  jl_error local = {0};
  rc = jl_api_volume(&prob, NULL, o, res, &local);
  if (rc != JL_OK && err) *err = local;
  return rc;
}

/* Counts, indices and coordinates, each message naming its argument. */
static int jl_api_arrays_check(const double *vertices, int n_vertices, const int *triangles, int n_triangles,
                               jl_error *err) {
  if (!vertices) return jl_error_set(err, JL_ERR_INPUT, "vertices: NULL");
  if (!triangles) return jl_error_set(err, JL_ERR_INPUT, "triangles: NULL");
  if (n_vertices < JL_TRUNK_API_MIN_ELEMENTS || n_vertices > JL_MESH_VERTICES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "n_vertices: %d (a closed surface needs %d to %ld)", n_vertices,
                        JL_TRUNK_API_MIN_ELEMENTS, JL_MESH_VERTICES_MAX);
  if (n_triangles < JL_TRUNK_API_MIN_ELEMENTS || n_triangles > JL_MESH_TRIANGLES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "n_triangles: %d (a closed surface needs %d to %ld)", n_triangles,
                        JL_TRUNK_API_MIN_ELEMENTS, JL_MESH_TRIANGLES_MAX);
  for (long i = 0; i < 3L * n_triangles; ++i)
    if (triangles[i] < 0 || triangles[i] >= n_vertices)
      return jl_error_set(err, JL_ERR_INPUT, "triangles[%ld]: vertex index %d out of range (0 to %d) in triangle %ld",
                          i, triangles[i], n_vertices - 1, i / 3);
  for (long i = 0; i < 3L * n_vertices; ++i)
    if (!isfinite(vertices[i]))
      return jl_error_set(err, JL_ERR_INPUT, "vertices[%ld]: not a finite number (%g) in vertex %ld", i, vertices[i],
                          i / 3);
  return JL_OK;
}

int jl_trunk_volume_triangles(const double *vertices, int n_vertices, const int *triangles, int n_triangles,
                              const jl_trunk_options *o, jl_trunk_result *res, jl_error *err) {
  jl_trunk_options def;
  if (!o) {
    jl_trunk_options_default(&def);
    o = &def;
  }
  if (!res) return jl_error_set(err, JL_ERR_INPUT, "jl_trunk_volume_triangles: no result given");
  memset(res, 0, sizeof *res);
  double scale = 0.0;
  int rc = jl_api_options_check(o, &scale, err);
  if (rc == JL_OK) rc = jl_api_arrays_check(vertices, n_vertices, triangles, n_triangles, err);
  if (rc != JL_OK) return rc;
  jl_trunk_problem prob;
  jl_trunk_problem_from_mesh(&prob, "triangles");
  snprintf(prob.units, sizeof prob.units, "%s", o->units ? o->units : "mm");
  prob.scale = scale;
  /* the run only reads the arrays (jl_mesh_load_arrays copies them) */
  jl_mesh in = {n_vertices, n_triangles, (double *)(uintptr_t)vertices, (int *)(uintptr_t)triangles};
  jl_error local = {0};
  rc = jl_api_volume(&prob, &in, o, res, &local);
  if (rc != JL_OK && err) *err = local;
  return rc;
}

void jl_trunk_result_free(jl_trunk_result *res) {
  if (!res) return;
  free(res->centre);
  free(res->quat);
  res->centre = res->quat = NULL;
  res->count = 0;
}
