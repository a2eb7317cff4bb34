/* The public trunk API (include/jostle/trunk.h) over the trunk run
 * (trunk_run.h), silent: nothing is printed and no file is written. The
 * run goes on a thread of its own so that the calling thread can call the
 * progress callback about once a second whatever phase the run is in. */
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
#include "stop_flag.h"
#include "timer.h"
#include "trunk_check.h"
#include "trunk_io.h"
#include "trunk_run.h"

/* The longest run the options may ask for (the CLI's --time limit). */
#define JL_TRUNK_API_TIME_MAX 1e9
/* How often the caller's stop flag is looked at, and its progress
 * callback called, seconds. */
#define JL_TRUNK_API_POLL_S 0.01
#define JL_TRUNK_API_PROGRESS_S 1.0
/* The fewest vertices and triangles of a closed surface (a tetrahedron). */
#define JL_TRUNK_API_MIN_ELEMENTS 4

void jl_trunk_options_default(jl_trunk_options *o) {
  memset(o, 0, sizeof *o);
  o->time_s = 60.0;
  o->seed = 1;
  o->device = "auto";
  o->units = "mm";
}

/* The run goes on a thread of its own while the calling thread watches
 * it: the caller's stop flag every JL_TRUNK_API_POLL_S, its progress
 * callback every JL_TRUNK_API_PROGRESS_S, whatever the run is doing (a
 * fill may take many seconds). Both reach the run through its one flag. */
typedef struct jl_api_run {
  jl_trunk_run_config cfg;
  const jl_trunk_options *o;
  jl_device dev;
  jl_trunk_run_result r;
  jl_error err;
  int rc;
  volatile sig_atomic_t stop;  /* the run's flag */
  atomic_int done;
  pthread_mutex_t mu;          /* guards best and moves */
  double best;
  uint64_t moves;
  int inline_run;              /* no thread could start: the run's own calls do the watching */
  double next_progress;
} jl_api_run;

/* The caller's flag and callback (on the calling thread): either sets the run's flag. */
static void jl_api_watch(jl_api_run *a, double now) {
  const jl_trunk_options *o = a->o;
  if (jl_stop_requested(o->stop)) jl_stop_request(&a->stop);
  if (!o->progress || now < a->next_progress) return;
  a->next_progress = now + JL_TRUNK_API_PROGRESS_S;
  pthread_mutex_lock(&a->mu);
  jl_progress_info info = {now - a->cfg.t0, a->best, a->moves};
  pthread_mutex_unlock(&a->mu);
  if (o->progress(o->progress_ctx, &info)) jl_stop_request(&a->stop);
}

/* The run's progress (each fill's end, each launch): kept for the watcher. */
static int jl_api_on_progress(void *ctx, const jl_progress_info *p) {
  jl_api_run *a = ctx;
  pthread_mutex_lock(&a->mu);
  a->best = p->best;
  a->moves = p->work;
  pthread_mutex_unlock(&a->mu);
  if (a->inline_run) jl_api_watch(a, jl_time_now());
  return 0;
}

static void *jl_api_run_main(void *arg) {
  jl_api_run *a = arg;
  const jl_trunk_options *o = a->o;
  a->rc = jl_device_select(&a->dev, o->device ? o->device : "auto", o->threads, NULL, &a->err);
  if (a->rc == JL_OK) {
    a->cfg.dev = &a->dev;
    a->rc = jl_trunk_run(&a->cfg, &a->r, &a->err);
  }
  atomic_store(&a->done, 1);
  return NULL;
}

/* Runs a->cfg; the caller's stop flag and progress callback watched from here. */
static void jl_api_run_watched(jl_api_run *a) {
  a->stop = jl_stop_requested(a->o->stop);
  a->next_progress = a->cfg.t0 + JL_TRUNK_API_PROGRESS_S;
  atomic_init(&a->done, 0);
  pthread_mutex_init(&a->mu, NULL);
  pthread_t th;
  if (pthread_create(&th, NULL, jl_api_run_main, a) != 0) {
    a->inline_run = 1;
    jl_api_run_main(a);
  } else {
    struct timespec poll = {0, (long)(JL_TRUNK_API_POLL_S * 1e9)};
    while (!atomic_load(&a->done)) {
      nanosleep(&poll, NULL);
      if (!atomic_load(&a->done)) jl_api_watch(a, jl_time_now());
    }
    pthread_join(th, NULL);
  }
  pthread_mutex_destroy(&a->mu);
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
  res->fills_complete = r->fills_complete;
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
  jl_api_run *a = calloc(1, sizeof *a);
  if (!a) return jl_error_set(err, JL_ERR_NOMEM, "out of memory");
  a->o = o;
  jl_trunk_run_config *cfg = &a->cfg;
  jl_trunk_run_config_default(cfg);
  cfg->problem = prob;
  cfg->mesh = mesh;
  cfg->device = o->device ? o->device : "auto";
  cfg->threads = o->threads;
  cfg->t0 = jl_time_now();
  cfg->time_s = o->time_s;
  cfg->seed = o->seed;
  cfg->units_name = "options.units";
  cfg->max_blocks_name = "the library's limit";
  cfg->time_name = "options.time_s";
  cfg->device_name = "options.device";
  cfg->progress = jl_api_on_progress;
  cfg->progress_ctx = a;
  cfg->stop = &a->stop;
  jl_api_run_watched(a);
  int rc = a->rc;
  if (rc == JL_OK) rc = jl_api_result_fill(&a->r, prob, &a->dev, res, err);
  else if (err) *err = a->err;
  jl_trunk_run_result_free(&a->r);
  free(a);
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
  return jl_api_volume(&prob, NULL, o, res, err);
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
  return jl_api_volume(&prob, &in, o, res, err);
}

void jl_trunk_result_free(jl_trunk_result *res) {
  if (!res) return;
  free(res->centre);
  free(res->quat);
  res->centre = res->quat = NULL;
  res->count = 0;
}

