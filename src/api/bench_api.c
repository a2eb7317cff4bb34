/* The public benchmarks (include/jostle/bench.h): the timed kernels behind
 * `jostle bench`, over the circles' relaxation engine and spread baseline,
 * the trunk's block engine and the scene's device step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jostle/bench.h>

#include "block_batch.h"
#include "body_order.h"
#include "circle_batch.h"
#include "circle_search.h"
#include "circle_spread.h"
#include "device.h"
#include "error.h"
#include "scene.h"
#include "scene_gpu.h"
#include "scene_step.h"
#include "surface_grid.h"
#include "timer.h"

_Static_assert(JL_BENCH_SCENE_STAGES == JL_STEP_STAGES, "one figure per device stage");

/* The defaults the options' comments give. */
#define JL_BENCH_RELAX_N 50
#define JL_BENCH_RELAX_STEPS 2000
#define JL_BENCH_REPEAT 5
#define JL_BENCH_SPREAD_STEPS 1000
#define JL_BENCH_STEPS_MAX 100000000L
#define JL_BENCH_TRUNK_BLOCKS 242
#define JL_BENCH_TRUNK_POINTS 38700   /* the seed's 38693 */
#define JL_BENCH_TRUNK_POINTS_MIN 100
#define JL_BENCH_TRUNK_POINTS_MAX 10000000
#define JL_BENCH_TRUNK_STEPS 50
#define JL_BENCH_BATCH_MAX 1000000
#define JL_BENCH_SCENE_STEPS 10
#define JL_BENCH_SCENE_STEPS_MAX 1000000
#define JL_BENCH_CHECK_EVERY 8
#define JL_BENCH_CHECK_EVERY_MAX 100000
#define JL_BENCH_THREADS_MAX 256
/* The trunk set-up's shifts and turns (the seed's Table 5.1). */
#define JL_BENCH_TRUNK_SHIFT_MM 8.0
#define JL_BENCH_TRUNK_TURN 0.06

static void jl_bench_device_names(const jl_device *dev, char *kind, size_t kind_cap, char *name,
                                  size_t name_cap) {
  snprintf(kind, kind_cap, "%s", jl_device_kind_name(dev->kind));
  snprintf(name, name_cap, "%s", dev->name);
}

static int jl_bench_range(const char *what, const char *field, long v, long lo, long hi,
                          jl_error *err) {
  if (v < lo || v > hi)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: %ld is outside %ld..%ld", what, field, v, lo, hi);
  return JL_OK;
}

/* ---- circles: relaxation throughput ---- */

void jl_bench_relax_options_default(jl_bench_relax_options *o) {
  memset(o, 0, sizeof *o);
  o->n = JL_BENCH_RELAX_N;
  o->steps = JL_BENCH_RELAX_STEPS;
  o->repeat = JL_BENCH_REPEAT;
  o->relax = "fire";
  o->nbr = -1;
  o->seed = 1;
  o->device = "auto";
}

static int jl_cmp_double(const void *a, const void *b) {
  double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

static double jl_median_sorted(const double *v, int k) {
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int jl_bench_circles_relax(const jl_bench_relax_options *o, jl_bench_relax_result *res,
                           jl_error *err) {
  static const char *what = "bench relax";
  memset(res, 0, sizeof *res);
  int rc, relax;
  if ((rc = jl_bench_range(what, "n", o->n, 2, JL_BENCH_RELAX_N_MAX, err)) ||
      (rc = jl_bench_range(what, "batch", o->batch, 0, JL_BENCH_BATCH_MAX, err)) ||
      (rc = jl_bench_range(what, "steps", o->steps, 1, JL_BENCH_STEPS_MAX, err)) ||
      (rc = jl_bench_range(what, "repeat", o->repeat, 1, JL_BENCH_REPEAT_MAX, err)) ||
      (rc = jl_bench_range(what, "nbr", o->nbr, -1, 1, err)) ||
      (rc = jl_bench_range(what, "threads", o->threads, 0, JL_BENCH_THREADS_MAX, err)))
    return rc;
  if (!o->relax || strcmp(o->relax, "fire") == 0) relax = JL_RELAX_FIRE;
  else if (strcmp(o->relax, "jacobi") == 0) relax = JL_RELAX_JACOBI;
  else return jl_error_set(err, JL_ERR_INPUT, "%s: relax: '%s' is not fire or jacobi", what, o->relax);
  const int n = o->n, repeat = o->repeat;
  jl_device dev;
  if ((rc = jl_device_select(&dev, o->device ? o->device : "auto", o->threads, NULL, err)))
    return rc;
  const int batch = o->batch > 0 ? o->batch : jl_circle_auto_batch(&dev, n, 2);

  double r[JL_BENCH_RELAX_N_MAX];
  for (int i = 0; i < n; ++i) r[i] = o->equal ? 1.0 : i + 1;
  jl_relax_params p;
  jl_relax_params_default(&p, r, n, o->seed);
  /* the random starts take the search's choice (the same bits either way),
   * so an all-pairs figure at n = 1000 does not wait a minute for them */
  p.nbr = jl_circle_nbr_auto(&dev, n);
  jl_circle_batch b;
  jl_circle_engine eng;
  if ((rc = jl_circle_batch_alloc(&b, n, batch, r, err))) return rc;
  if ((rc = jl_circle_engine_init(&eng, &dev, n, batch, err))) {
    jl_circle_batch_free(&b);
    return rc;
  }
  memset(b.need_start, 1, (size_t)batch);
  p.trials = 1;
  p.relax = relax;
  if (o->search) p.walk_every = JL_WALK_DEFAULT;
  rc = jl_circle_engine_run(&eng, &p, &b, err);  /* warm-up: random starts */
  if (o->nbr >= 0) p.nbr = o->nbr;
  if (o->search) p.step_budget = (uint64_t)o->steps;
  else p.bench_steps = (int)o->steps;
  /* Every launch does the same work (exactly S steps per candidate), so
   * the median launch is the figure: one short launch on a busy host can be
   * a fifth off either way. */
  double dt[JL_BENCH_REPEAT_MAX], rate[JL_BENCH_REPEAT_MAX];
  uint64_t per_launch = 0;
  for (int k = 0; k < repeat && rc == JL_OK; ++k) {
    uint64_t s0 = 0, s1 = 0;
    for (int c = 0; c < batch; ++c) s0 += b.steps[c];
    double t0 = jl_time_now();
    rc = jl_circle_engine_run(&eng, &p, &b, err);
    dt[k] = jl_time_now() - t0;
    for (int c = 0; c < batch; ++c) s1 += b.steps[c];
    per_launch = s1 - s0;
    rate[k] = (double)per_launch / dt[k];
  }
  jl_circle_engine_free(&eng);
  jl_circle_batch_free(&b);
  if (rc != JL_OK) return rc;
  /* the median launch's rate (search launches differ a little in steps) */
  qsort(dt, (size_t)repeat, sizeof dt[0], jl_cmp_double);
  qsort(rate, (size_t)repeat, sizeof rate[0], jl_cmp_double);
  res->nbr = p.nbr ? 1 : 0;
  res->batch = batch;
  res->steps = per_launch;
  res->seconds = jl_median_sorted(dt, repeat);
  res->seconds_min = dt[0];
  res->seconds_max = dt[repeat - 1];
  res->steps_per_s = jl_median_sorted(rate, repeat);
  res->circle_steps_per_s = res->steps_per_s * (double)n;
  jl_bench_device_names(&dev, res->device, sizeof res->device, res->device_name,
                        sizeof res->device_name);
  return JL_OK;
}

/* ---- circles: the spread baseline ---- */

void jl_bench_spread_options_default(jl_bench_spread_options *o) {
  memset(o, 0, sizeof *o);
  o->n = JL_BENCH_RELAX_N;
  o->steps = JL_BENCH_SPREAD_STEPS;
  o->seed = 1;
  o->device = "auto";
}

int jl_bench_circles_spread(const jl_bench_spread_options *o, jl_bench_spread_result *res,
                            jl_error *err) {
  static const char *what = "bench spread";
  memset(res, 0, sizeof *res);
  int rc;
  if ((rc = jl_bench_range(what, "n", o->n, 2, JL_BENCH_SPREAD_N_MAX, err)) ||
      (rc = jl_bench_range(what, "steps", o->steps, 1, JL_BENCH_STEPS_MAX, err)))
    return rc;
  const int n = o->n;
  jl_device dev;
  if ((rc = jl_device_select(&dev, o->device ? o->device : "auto", 1, NULL, err))) return rc;

  /* Radii 1..n, centres uniform in a square too small for them. */
  double *r = malloc(sizeof(double) * (size_t)n * 5);
  if (!r) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d circles", n);
  double *x0 = r + n, *y0 = x0 + n, *x = y0 + n, *y = x + n;
  jl_spread_random_start(n, o->seed, r, x0, y0);

  /* tol < 0: never legal, so every step runs. One warm-up step on a copy,
   * then the timed run from the start packing. */
  const double Rc = INFINITY, tol = -1.0;
  int done = 0;
  double t0 = 0.0, dt = 0.0;
  char msg[256] = "";
  for (int pass = 0; pass < 2; ++pass) {
    int want = pass == 0 ? 1 : (int)o->steps;
    memcpy(x, x0, sizeof(double) * (size_t)n);
    memcpy(y, y0, sizeof(double) * (size_t)n);
    t0 = jl_time_now();
#ifdef JL_HAVE_CUDA
    if (dev.kind == JL_DEVICE_CUDA)
      done = jl_cuda_spread_relax(r, x, y, n, Rc, tol, want, NULL, NULL, msg, sizeof msg);
    else
#endif
      done = jl_spread_relax_cpu(r, x, y, n, Rc, tol, want, NULL, NULL);
    dt = jl_time_now() - t0;
    if (done < 0) break;
  }
  free(r);
  if (done < 0) {
    if (dev.kind == JL_DEVICE_CUDA) return jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d circles", n);
  }
  res->steps = done;
  res->seconds = dt;
  res->steps_per_s = (double)done / dt;
  jl_bench_device_names(&dev, res->device, sizeof res->device, res->device_name,
                        sizeof res->device_name);
  return JL_OK;
}

/* ---- trunks: the block contact simulation step ---- */

void jl_bench_trunk_options_default(jl_bench_trunk_options *o) {
  memset(o, 0, sizeof *o);
  o->blocks = JL_BENCH_TRUNK_BLOCKS;
  o->points = JL_BENCH_TRUNK_POINTS;
  o->steps = JL_BENCH_TRUNK_STEPS;
  o->seed = 1;
  o->device = "auto";
}

/* Spacing whose sample count is nearest the wanted one (bisection on the
 * monotone count). */
static int jl_spacing_for(const jl_mesh *m, int want, double *spacing, jl_error *err) {
  double lo = 1.0, hi = 200.0;
  for (int it = 0; it < 40; ++it) {
    double mid = sqrt(lo * hi);
    double *pts = NULL;
    int n = 0;
    int rc = jl_surface_sample(m, mid, &pts, &n, err);
    free(pts);
    if (rc) return rc;
    if (n > want) lo = mid;
    else hi = mid;
  }
  *spacing = hi;
  return JL_OK;
}

/* One timed launch of S steps for the first count candidates. */
static int jl_time_launch(jl_block_engine *eng, const jl_block_params *p, jl_block_batch *b,
                          const jl_block_packing *start, int count, double *seconds,
                          uint64_t *steps, jl_error *err) {
  int full = b->count;
  b->count = count;
  for (int c = 0; c < count; ++c) {
    int rc = jl_block_batch_set(b, c, start, err);
    if (rc) { b->count = full; return rc; }
    b->steps[c] = 0;
  }
  double t0 = jl_time_now();
  int rc = jl_block_engine_run(eng, p, b, err);
  *seconds = jl_time_now() - t0;
  *steps = 0;
  for (int c = 0; c < count; ++c) *steps += b->steps[c];
  b->count = full;
  return rc;
}

int jl_bench_trunk(const jl_bench_trunk_options *o, jl_bench_trunk_result *res, jl_error *err) {
  static const char *what = "bench trunk";
  memset(res, 0, sizeof *res);
  int rc;
  if ((rc = jl_bench_range(what, "blocks", o->blocks, 1, JL_BENCH_TRUNK_BLOCKS_MAX, err)) ||
      (rc = jl_bench_range(what, "points", o->points, JL_BENCH_TRUNK_POINTS_MIN,
                           JL_BENCH_TRUNK_POINTS_MAX, err)) ||
      (rc = jl_bench_range(what, "batch", o->batch, 0, JL_BENCH_BATCH_MAX, err)) ||
      (rc = jl_bench_range(what, "steps", o->steps, 1, JL_BENCH_STEPS_MAX, err)) ||
      (rc = jl_bench_range(what, "threads", o->threads, 0, JL_BENCH_THREADS_MAX, err)))
    return rc;
  jl_device dev;
  if ((rc = jl_device_select(&dev, o->device ? o->device : "auto", o->threads, NULL, err)))
    return rc;
  const int blocks = o->blocks;
  const int batch = o->batch > 0 ? o->batch
                    : dev.kind == JL_DEVICE_CUDA ? dev.sm_count * 8 : dev.threads * 2;

  const double lo[3] = {0, 0, 0}, hi[3] = {1040, 560, 540};
  const jl_block_size size = {JL_BLOCK_DIN_X, JL_BLOCK_DIN_Y, JL_BLOCK_DIN_Z};
  jl_mesh m = {0};
  jl_surface_grid g = {0};
  jl_block_batch b = {0};
  jl_block_engine eng = {0};
  jl_block_packing start = {0};
  double *pts = NULL;
  int npts = 0;
  double spacing = 0.0, t1 = 0.0, tb = 0.0;
  uint64_t s1 = 0, sb = 0;
  jl_block_params p;
  if ((rc = jl_cuboid_mesh(&m, lo, hi, err))) goto done;
  if ((rc = jl_spacing_for(&m, o->points, &spacing, err))) goto done;
  if ((rc = jl_surface_sample(&m, spacing, &pts, &npts, err))) goto done;
  if (dev.kind == JL_DEVICE_CUDA) rc = jl_surface_grid_build_cuda(&g, pts, npts, JL_GRID_CELL_DEFAULT, err);
  else rc = jl_surface_grid_build(&g, pts, npts, JL_GRID_CELL_DEFAULT, err);
  if (rc) goto done;
  if ((rc = jl_surface_grid_mark_inside(&g, &m, err))) goto done;
  if ((rc = jl_block_packing_init(&start, blocks, err))) goto done;
  if ((rc = jl_block_demo_packing(&start, lo, hi, &size, blocks, JL_BENCH_TRUNK_SHIFT_MM,
                                  JL_BENCH_TRUNK_TURN, o->seed, err)))
    goto done;
  if ((rc = jl_block_batch_alloc(&b, batch, blocks, err))) goto done;
  if ((rc = jl_block_engine_init(&eng, &dev, &g, batch, blocks, err))) goto done;
  jl_block_params_default(&p, &size, o->seed);
  /* half the spacing: the search's skin when the bench tables were first
   * taken (it has none now), kept so the tables stay comparable */
  p.point_skin = 0.5 * spacing;
  /* warm-up (CUDA context, caches), then one candidate alone, then the batch */
  p.bench_steps = 1;
  if ((rc = jl_time_launch(&eng, &p, &b, &start, batch, &t1, &s1, err))) goto done;
  p.bench_steps = (int)o->steps;
  if ((rc = jl_time_launch(&eng, &p, &b, &start, 1, &t1, &s1, err))) goto done;
  if ((rc = jl_time_launch(&eng, &p, &b, &start, batch, &tb, &sb, err))) goto done;
  res->points = npts;
  res->spacing = spacing;
  res->cell = JL_GRID_CELL_DEFAULT;
  res->single_seconds = t1;
  res->single_step_ms = 1e3 * t1 / (double)(s1 > 0 ? s1 : 1);
  res->batch = batch;
  res->batch_seconds = tb;
  res->candidate_steps = sb;
  res->candidate_steps_per_s = (double)sb / tb;
  res->worst_after_mm = b.worst[0];
  jl_bench_device_names(&dev, res->device, sizeof res->device, res->device_name,
                        sizeof res->device_name);
done:
  jl_block_engine_free(&eng);
  jl_block_batch_free(&b);
  jl_block_packing_free(&start);
  jl_surface_grid_free(&g);
  free(pts);
  jl_cuboid_mesh_free(&m);
  return rc;
}

/* ---- scenes: the device step by stage ---- */

void jl_bench_scene_options_default(jl_bench_scene_options *o) {
  memset(o, 0, sizeof *o);
  o->steps = JL_BENCH_SCENE_STEPS;
  o->check_every = JL_BENCH_CHECK_EVERY;
  o->persistent = 1;
  o->persistent_plan = -1;
  o->streamed = -1;
  o->round_narrow = 1;
  o->staged_narrow = 1;
  o->soa_by_setup = 1;
  o->pair_skin = -1.0;
  o->body_order = "auto";
}

/* The device step, timed by stage (a sync at each stage's end) after one
 * untimed step (arena growth, graph instantiation): seconds per stage and
 * in all, res's contacts, iterations and colours summed over the steps. */
static int jl_bench_scene_gpu(jl_scene *s, const jl_bench_scene_options *o, const jl_device *dev,
                              double *stage, double *wall, jl_bench_scene_result *res,
                              jl_error *err) {
  jl_scene_gpu *g = NULL;
  int rc;
  if ((rc = jl_scene_gpu_create(&g, dev, err)) ||
      (rc = jl_scene_gpu_set_bodies(g, &s->bodies, err))) {
    jl_scene_gpu_destroy(g);
    return rc;
  }
  jl_scene_gpu_set_persistent(g, o->persistent);
  jl_scene_gpu_set_persistent_cache(g, o->persistent_plan);
  jl_scene_gpu_set_streamed(g, o->streamed);
  jl_scene_gpu_set_round_narrow(g, o->round_narrow);
  jl_scene_gpu_set_staged_narrow(g, o->staged_narrow);
  jl_scene_gpu_set_soa_by_setup(g, o->soa_by_setup);
  if (o->pair_skin >= 0.0) jl_scene_gpu_set_pair_skin(g, o->pair_skin);
  jl_gpu_step_stats st;
  rc = jl_scene_gpu_step(g, s, o->check_every, &st, err);
  jl_scene_gpu_set_timing(g, 1);
  if (rc == JL_OK && o->marks) rc = jl_scene_gpu_set_marks(g, 1, err);
  double t0 = jl_time_now();
  for (long k = 0; rc == JL_OK && k < o->steps; ++k) {
    rc = jl_scene_gpu_step(g, s, o->check_every, &st, err);
    res->contacts += st.contacts;
    res->iterations += st.iterations;
    res->colours += st.colours;
    res->pair_lists += !st.pairs_kept;
    res->body_lists += !st.body_lists_kept;
  }
  *wall = jl_time_now() - t0;
  jl_scene_gpu_stage_times(g, stage);
  if (o->marks) {
    const char *names[JL_BENCH_SCENE_MARKS];
    double ms[JL_BENCH_SCENE_MARKS];
    res->marks = jl_scene_gpu_marks(g, names, ms, JL_BENCH_SCENE_MARKS);
    for (int k = 0; k < res->marks; ++k) {
      snprintf(res->mark_name[k], sizeof res->mark_name[k], "%s", names[k]);
      res->mark_ms_per_step[k] = ms[k] / (double)o->steps;
    }
  }
  res->persistent_solves = jl_scene_gpu_persistent_solves(g);
  snprintf(res->persistent_cache, sizeof res->persistent_cache, "%s",
           jl_scene_gpu_persistent_cache(g));
  jl_scene_gpu_destroy(g);
  return rc;
}

/* The CPU stepper on dev's threads, timed by stage (scene_step.h) after one
 * untimed step (the workspaces' growth, the thread pool's start); as the
 * device's, and the solve's waits in seconds in res. */
static int jl_bench_scene_cpu(jl_scene *s, const jl_bench_scene_options *o, const jl_device *dev,
                              double *stage, double *wall, jl_bench_scene_result *res,
                              jl_error *err) {
  jl_stepper st;
  int rc = jl_stepper_init(&st, s, dev->threads, err);
  if (rc == JL_OK && o->pair_skin >= 0.0) st.bp.keep_skin = o->pair_skin;
  jl_step_stats ss;
  if (rc == JL_OK) rc = jl_stepper_step(&st, &ss, err);
  st.timing = 1;
  double t0 = jl_time_now();
  for (long k = 0; rc == JL_OK && k < o->steps; ++k) {
    rc = jl_stepper_step(&st, &ss, err);
    res->contacts += ss.contacts;
    res->iterations += ss.iterations;
    res->colours += st.colours;
    res->pair_lists += !ss.pairs_kept;
  }
  *wall = jl_time_now() - t0;
  for (int k = 0; k < JL_STEP_STAGES; ++k) stage[k] = st.stage_s[k];
  res->solve_wait_ms_per_step = st.solve_wait_s;
  jl_stepper_free(&st);
  return rc;
}

int jl_bench_scene(const char *path, const jl_bench_scene_options *o, jl_bench_scene_result *res,
                   jl_error *err) {
  static const char *what = "bench scene";
  memset(res, 0, sizeof *res);
  int rc;
  jl_solver_kind kind = JL_SOLVER_SOR;
  jl_body_order order = JL_BODY_ORDER_AUTO;
  if ((rc = jl_bench_range(what, "steps", o->steps, 1, JL_BENCH_SCENE_STEPS_MAX, err)) ||
      (rc = jl_bench_range(what, "max_iter", o->max_iter, 0, JL_BENCH_STEPS_MAX, err)) ||
      (rc = jl_bench_range(what, "check_every", o->check_every, 1, JL_BENCH_CHECK_EVERY_MAX, err)) ||
      (rc = jl_bench_range(what, "streamed", o->streamed, -1, 1, err)) ||
      (rc = jl_bench_range(what, "round_narrow", o->round_narrow, 0, 1, err)) ||
      (rc = jl_bench_range(what, "staged_narrow", o->staged_narrow, 0, 1, err)) ||
      (rc = jl_bench_range(what, "soa_by_setup", o->soa_by_setup, 0, 1, err)) ||
      (rc = jl_bench_range(what, "persistent_plan", o->persistent_plan, -1,
                           JL_SCENE_GPU_PERSIST_PLANS - 1, err)))
    return rc;
  if (!(o->pair_skin == -1.0 || (o->pair_skin >= 0.0 && o->pair_skin <= 10.0)))
    return jl_error_set(err, JL_ERR_INPUT, "%s: pair_skin: %g is not -1 or within 0..10", what,
                        o->pair_skin);
  if (o->solver && jl_solver_kind_parse(o->solver, &kind))
    return jl_error_set(err, JL_ERR_INPUT, "%s: solver: expected jor, sor or apgd, got '%s'", what,
                        o->solver);
  if (o->body_order && jl_body_order_parse(o->body_order, &order))
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: body_order: expected auto, spatial or given, got '%s'", what,
                        o->body_order);
  if (o->device && strcmp(o->device, "cuda") != 0 && strcmp(o->device, "cpu") != 0 &&
      strcmp(o->device, "auto") != 0)
    return jl_error_set(err, JL_ERR_INPUT, "%s: device: expected cuda, cpu or auto, got '%s'",
                        what, o->device);
  if ((rc = jl_bench_range(what, "threads", o->threads, 0, JL_BENCH_THREADS_MAX, err))) return rc;
  if (!path) return jl_error_set(err, JL_ERR_INPUT, "%s: no scene file", what);
  const long steps = o->steps;

  jl_scene s;
  if ((rc = jl_scene_load(&s, path, err))) {
    jl_scene_free(&s);
    return rc;
  }
  if (o->solver) jl_prox_opts_set_kind(&s.solver, kind);
  if (o->max_iter) s.solver.max_iter = o->max_iter;
  /* the order a run steps the bodies in (scene_runner.h) */
  jl_bodies ordered;
  int *perm = NULL;
  if ((rc = jl_bodies_order_copy(&ordered, &s.bodies, order, &perm, err))) {
    jl_scene_free(&s);
    return rc;
  }
  jl_body_order stepped = perm ? JL_BODY_ORDER_SPATIAL : JL_BODY_ORDER_GIVEN;
  if (perm) {
    jl_bodies_free(&s.bodies);
    s.bodies = ordered;
    free(perm);
  }
  jl_device dev;
  if ((rc = jl_device_select(&dev, o->device ? o->device : "cuda", o->threads, NULL, err))) {
    jl_scene_free(&s);
    return rc;
  }
  double stage[JL_STEP_STAGES] = {0}, wall = 0;
  if (o->marks && dev.kind != JL_DEVICE_CUDA) {
    jl_scene_free(&s);
    return jl_error_set(err, JL_ERR_INPUT, "%s: marks: time the device step's launches; "
                        "the CPU path has none (use --device cuda)", what);
  }
  rc = dev.kind == JL_DEVICE_CUDA ? jl_bench_scene_gpu(&s, o, &dev, stage, &wall, res, err)
                                  : jl_bench_scene_cpu(&s, o, &dev, stage, &wall, res, err);
  if (rc == JL_OK) {
    snprintf(res->name, sizeof res->name, "%s", s.name);
    snprintf(res->device_name, sizeof res->device_name, "%s", dev.name);
    res->bodies = s.bodies.count;
    snprintf(res->body_order, sizeof res->body_order, "%s", jl_body_order_name(stepped));
    snprintf(res->solver, sizeof res->solver, "%s", jl_solver_kind_name(s.solver.kind));
    res->max_iterations = s.solver.max_iter;
    res->ms_per_step = 1e3 * wall / (double)steps;
    for (int k = 0; k < JL_STEP_STAGES; ++k) {
      snprintf(res->stage_name[k], sizeof res->stage_name[k], "%s", jl_step_stage_name(k));
      res->stage_ms_per_step[k] = 1e3 * stage[k] / (double)steps;
    }
    res->solve_wait_ms_per_step *= 1e3 / (double)steps;
    res->contacts /= (double)steps;
    res->iterations /= (double)steps;
    res->colours /= (double)steps;
  }
  jl_scene_free(&s);
  return rc;
}
