/* The public circles API (include/jostle/circles.h) over the search. */
#include <jostle/circles.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circle_batch.h"
#include "circle_checkpoint.h"
#include "circle_search.h"
#include "circles.h"
#include "device.h"
#include "timer.h"
#include "islands.h"
#include "log.h"

_Static_assert(JL_CIRCLES_MAX == JL_SEARCH_MAX_CIRCLES, "one limit on circles");

void jl_circles_options_default(jl_circles_options *o) {
  memset(o, 0, sizeof *o);
  o->time_s = 60.0;
  o->seed = 1;
  o->device = "auto";
  jl_circle_search_opts so;
  jl_circle_search_opts_default(&so);
  o->mode = so.mode;
  o->walk = so.walk;
  o->aim = so.aim;
  o->walk_k = so.walk_k;
  o->tenure = so.tenure;
  o->walk_reset = so.walk_reset;
  o->probe = so.probe;
  o->crowding = so.crowding;
  o->adopt = so.adopt;
  o->behind_adopt = so.behind_adopt;
  o->cross = so.cross;
}

/* The search's settings from the public options. */
static void jl_api_search_opts(const jl_circles_options *o, jl_circle_search_opts *so) {
  jl_circle_search_opts_default(so);
  so->progress = 0;
  so->seed = o->seed;
  so->time_s = o->time_s;
  so->target_R = o->target_R;
  so->rounds = o->rounds;
  so->batch = o->batch;
  so->stop = o->stop;
  so->on_progress = o->progress;
  so->on_progress_ctx = o->progress_ctx;
  so->mode = o->mode;
  so->trials_per_round = o->trials;
  so->stuck_limit = o->stuck;
  so->stuck_behind = o->stuck_behind;
  so->band = o->band;
  so->band_levels = o->band_levels;
  so->walk = o->walk;
  so->aim = o->aim;
  so->walk_k = o->walk_k;
  so->tenure = o->tenure;
  so->walk_reset = o->walk_reset;
  so->probe = o->probe;
  so->elite = o->elite;
  so->crowding = o->crowding;
  so->adopt = o->adopt;
  so->behind_adopt = o->behind_adopt;
  so->cross = o->cross;
  so->adopt_spread = o->adopt_spread;
  so->polish_after = o->polish_after;
  so->area_weighted = o->area_weighted;
}

double jl_circles_record(int n) {
  jl_circle_problem p = {0};
  if (n < 5 || n > 50 || jl_circle_problem_zimmermann(&p, n, NULL) != JL_OK) return 0.0;
  double R = p.best_known_R;
  jl_circle_problem_free(&p);
  return R;
}

/* The problem for these radii: the contest's name and record when they are
 * 1..n in order. */
static int jl_api_problem(const double *radii, int n, jl_circle_problem *p, jl_error *err) {
  memset(p, 0, sizeof *p);
  if (!radii || n < 1 || n > JL_SEARCH_MAX_CIRCLES)
    return jl_error_set(err, JL_ERR_INPUT, "radii: %d circles given (expected 1 to %d)", n,
                        JL_SEARCH_MAX_CIRCLES);
  int rc = jl_circle_radii_check(radii, n, "radii", "r[", "]", err);
  if (rc != JL_OK) return rc;
  int contest = 1;
  for (int i = 0; i < n && contest; ++i) contest = radii[i] == (double)(i + 1);
  rc = contest ? jl_circle_problem_zimmermann(p, n, err) : jl_circle_problem_init(p, n, err);
  if (rc != JL_OK) return rc;
  if (!contest) {
    memcpy(p->radii, radii, (size_t)n * sizeof *radii);
    snprintf(p->name, sizeof p->name, "circles-%d", n);
  }
  return JL_OK;
}

static void jl_api_result_clear(jl_circles_result *res) {
  memset(res, 0, sizeof *res);
}

int jl_circles_pack(const double *radii, int n, const jl_circles_options *o,
                    jl_circles_result *res, jl_error *err) {
  jl_circles_options def;
  if (!o) {
    jl_circles_options_default(&def);
    o = &def;
  }
  if (!res) return jl_error_set(err, JL_ERR_INPUT, "jl_circles_pack: no result given");
  jl_api_result_clear(res);
  jl_circle_problem prob = {0};
  jl_circles_run run;
  memset(&run, 0, sizeof run);
  int rc = jl_api_problem(radii, n, &prob, err);
  if (rc != JL_OK) return rc;
  /* the whole job, in this process alone (a caller that wants MPI calls
   * jl_circles_run_search with islands set) */
  jl_circles_options one = *o;
  one.islands = 0;
  if ((rc = jl_circles_run_search(&prob, &one, &run, err)) != JL_OK) goto done;
  res->n = n;
  res->x = malloc((size_t)n * sizeof(double));
  res->y = malloc((size_t)n * sizeof(double));
  res->r = malloc((size_t)n * sizeof(double));
  if (!res->x || !res->y || !res->r) {
    jl_circles_result_free(res);
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory");
    goto done;
  }
  memcpy(res->x, run.best.x, (size_t)n * sizeof(double));
  memcpy(res->y, run.best.y, (size_t)n * sizeof(double));
  memcpy(res->r, run.best.r, (size_t)n * sizeof(double));
  res->R = run.best.R;
  res->best_known_R = prob.best_known_R;
  res->max_overlap = run.check.max_overlap > 0 ? (double)run.check.max_overlap : 0.0;
  res->time_s = run.info.time_s;
  res->time_to_best_s = run.info.time_to_best_s;
  res->launch_s = run.info.launch_s;
  res->polish_s = run.info.polish_s;
  res->polish_beside = run.info.polish_beside;
  res->seed = run.info.seed;  /* a continued run's is its checkpoint's */
  res->trials = run.info.trials;
  res->relax_steps = run.info.relax_steps;
  res->restarts = run.info.restarts;
  res->stopped_by = (jl_stop_reason)run.info.stopped_by;
  snprintf(res->device, sizeof res->device, "%s", run.device);
  snprintf(res->device_name, sizeof res->device_name, "%s", run.device_name);
  snprintf(res->mode, sizeof res->mode, "%s", run.info.mode ? run.info.mode : "");
  res->walk = run.info.walk;
  res->aim = run.info.aim;
  res->walk_k = run.info.walk_k;
  res->tenure = run.info.tenure;
  res->walk_reset = run.info.walk_reset;
  res->stuck = run.info.stuck;
  res->stuck_behind = run.info.stuck_behind;
  res->probe = run.info.probe;
  res->elite = run.info.elite;
  res->crowding = run.info.crowding;
  res->adopt_spread = run.info.adopt_spread;
  res->adoptions = run.info.adoptions;
  res->cross = run.info.cross;
  res->crossovers = run.info.crossovers;
done:
  jl_circles_run_free(&run);
  jl_circle_problem_free(&prob);
  return rc;
}

int jl_circles_result_write(const jl_circles_result *res, const char *json_path,
                            const char *svg_path, const char *txt_path, jl_error *err) {
  if (!res || res->n < 1 || !res->x || !res->y || !res->r)
    return jl_error_set(err, JL_ERR_INPUT, "jl_circles_result_write: no packing in the result");
  jl_circle_problem prob = {0};
  int rc = jl_api_problem(res->r, res->n, &prob, err);
  if (rc != JL_OK) return rc;
  /* the packing as the writers take it (they do not modify it) */
  jl_circle_packing pk = {res->n, res->x, res->y, res->r, res->R};
  jl_circle_check chk;
  jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &chk);
  if (!chk.legal) {
    jl_circle_problem_free(&prob);
    return jl_error_set(err, JL_ERR_NOT_LEGAL,
                        "jl_circles_result_write: the packing fails the exact check (overlap %Lg); "
                        "nothing written", chk.max_overlap);
  }
  jl_circle_run_info info;
  memset(&info, 0, sizeof info);
  info.seed = res->seed;
  info.device = res->device;
  info.device_name = res->device_name;
  if (res->elite > 0) {  /* a result of jl_circles_pack: the run's own settings */
    info.mode = res->mode;
    info.walk = res->walk;
    info.aim = res->aim;
    info.walk_k = res->walk_k;
    info.tenure = res->tenure;
    info.walk_reset = res->walk_reset;
    info.stuck = res->stuck;
    info.stuck_behind = res->stuck_behind;
    info.probe = res->probe;
    info.elite = res->elite;
    info.crowding = res->crowding;
    info.adopt_spread = res->adopt_spread;
    info.adoptions = res->adoptions;
    info.cross = res->cross;
    info.crossovers = res->crossovers;
  } else {  /* made by hand: the defaults */
    info.mode = jl_search_mode_name(JL_MODE_POPULATION);
    info.walk = JL_WALK_DEFAULT;
    info.aim = JL_WALK_AIM_DEFAULT;
    info.walk_k = jl_walk_k_default(res->n);
    info.tenure = JL_WALK_TENURE_DEFAULT;
    info.walk_reset = jl_walk_reset_default(res->n);
    info.stuck = jl_stuck_default(res->n);
    info.stuck_behind = info.stuck;
    info.probe = JL_WALK_PROBE_DEFAULT;
    info.elite = JL_ELITE_DEFAULT;
    info.crowding = JL_CROWDING_DEFAULT;
  }
  info.time_s = res->time_s;
  info.time_to_best_s = res->time_to_best_s;
  info.launch_s = res->launch_s;
  info.polish_s = res->polish_s;
  info.polish_beside = res->polish_beside;
  info.trials = res->trials;
  info.relax_steps = res->relax_steps;
  info.restarts = res->restarts;
  info.stopped_by = (int)res->stopped_by;
  info.ranks = 1;
  if (json_path) rc = jl_circle_result_write_json(json_path, &prob, &pk, &info, &chk, err);
  if (rc == JL_OK && svg_path) rc = jl_circle_write_svg(svg_path, &prob, &pk, err);
  if (rc == JL_OK && txt_path) rc = jl_circle_write_packomania(txt_path, &pk, err);
  jl_circle_problem_free(&prob);
  return rc;
}

void jl_circles_result_free(jl_circles_result *res) {
  if (!res) return;
  free(res->x);
  free(res->y);
  free(res->r);
  res->x = res->y = res->r = NULL;
  res->n = 0;
}

/* ---- problems, packings, checks ---- */

int jl_circles_problem_contest(jl_circles_problem *p, int n, jl_error *err) {
  memset(p, 0, sizeof *p);
  return jl_circle_problem_zimmermann(p, n, err);
}

int jl_circles_problem_equal(jl_circles_problem *p, int n, jl_error *err) {
  memset(p, 0, sizeof *p);
  return jl_circle_problem_equal(p, n, err);
}

int jl_circles_problem_load(jl_circles_problem *p, const char *path, jl_error *err) {
  memset(p, 0, sizeof *p);
  return jl_circle_problem_load(p, path, err);
}

int jl_circles_problem_radii(jl_circles_problem *p, const double *radii, int n, jl_error *err) {
  return jl_api_problem(radii, n, p, err);
}

void jl_circles_problem_free(jl_circles_problem *p) {
  if (p) jl_circle_problem_free(p);
}

void jl_circles_packing_free(jl_circles_packing *pk) {
  if (pk) jl_circle_packing_free(pk);
}

void jl_circles_packing_check(const jl_circles_packing *pk, double rel_tol, jl_circles_check *out) {
  jl_circle_check_packing(pk, rel_tol, out);
}

static int jl_api_is_txt(const char *path) {
  size_t len = strlen(path);
  return len >= 4 && strcmp(path + len - 4, ".txt") == 0;
}

int jl_circles_resume_load(const char *path, jl_circles_problem *prob, jl_circles_packing *pk,
                           jl_error *err) {
  memset(pk, 0, sizeof *pk);
  if (!path || !prob) return jl_error_set(err, JL_ERR_INPUT, "jl_circles_resume_load: no file or problem");
  int rc;
  if (jl_api_is_txt(path)) {
    if (prob->n == 0)
      return jl_error_set(err, JL_ERR_INPUT, "%s: Packomania text has no radii: give the problem",
                          path);
    rc = jl_circle_read_packomania(path, prob, pk, err);
  } else {
    jl_circle_problem stored = {0};
    rc = jl_circle_result_read_json(path, pk, prob->n == 0 ? &stored : NULL, err);
    if (rc == JL_OK && prob->n == 0) *prob = stored;
    else jl_circle_problem_free(&stored);
  }
  if (rc == JL_OK) rc = jl_circle_check_instance(pk, prob, path, JL_ERR_INPUT, err);
  if (rc != JL_OK) {
    jl_circle_packing_free(pk);
    return rc;
  }
  jl_circle_packing_separate(pk);
  return JL_OK;
}

int jl_circles_verify_file(const char *path, const jl_circles_problem *inst, double rel_tol,
                           jl_circles_verify_report *rep, jl_error *err) {
  memset(rep, 0, sizeof *rep);
  jl_circle_problem stored = {0}, builtin = {0};
  jl_circle_packing pk = {0};
  int rc;
  if (jl_api_is_txt(path)) {
    if (!inst || inst->n == 0)
      return jl_error_set(err, JL_ERR_INPUT, "%s: Packomania text has no radii: give the problem",
                          path);
    rc = jl_circle_read_packomania(path, inst, &pk, err);
  } else {
    rc = jl_circle_result_read_json(path, &pk, &stored, err);
    if (rc == JL_OK && !inst) {
      rc = jl_circle_problem_builtin(&builtin, stored.name, err);
      if (rc == JL_OK && builtin.n > 0) inst = &builtin;
    }
  }
  if (rc != JL_OK) goto done;
  rep->n = pk.n;
  rep->same_radii = 1;
  rep->record = inst ? inst->best_known_R : stored.best_known_R;
  /* a packing of other circles is no packing of the instance, however legal */
  jl_error why = {0};
  if (inst && jl_circle_check_instance(&pk, inst, path, JL_ERR_NOT_LEGAL, &why) != JL_OK) {
    rep->same_radii = 0;
    size_t len = strlen(path);
    size_t skip = strncmp(why.msg, path, len) == 0 && strncmp(why.msg + len, ": ", 2) == 0 ? len + 2 : 0;
    snprintf(rep->why, sizeof rep->why, "%s", why.msg + skip);
    goto done;
  }
  jl_circle_check_packing(&pk, rel_tol, &rep->check);
done:
  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&stored);
  jl_circle_problem_free(&builtin);
  return rc;
}

/* ---- a full run ---- */

const char *jl_circles_mode_name(jl_circles_mode m) { return jl_search_mode_name(m); }

int jl_circles_mode_parse(const char *s, jl_circles_mode *m, jl_error *err) {
  if (s && jl_search_mode_parse(s, m) == 0) return JL_OK;
  return jl_error_set(err, JL_ERR_INPUT, "mode: expected population, trials or instances, got '%s'",
                      s ? s : "");
}

static const char *const jl_probe_names[] = {"off", "restart", "keep"};
_Static_assert((int)JL_CIRCLES_PROBE_OFF == (int)JL_PROBE_OFF &&
                   (int)JL_CIRCLES_PROBE_RESTART == (int)JL_PROBE_RESTART &&
                   (int)JL_CIRCLES_PROBE_KEEP == (int)JL_PROBE_KEEP,
               "the public probe values are circle_relax.h's");

const char *jl_circles_probe_name(int probe) {
  return probe >= 0 && probe <= JL_CIRCLES_PROBE_KEEP ? jl_probe_names[probe] : "off";
}

int jl_circles_probe_parse(const char *s, int *probe, jl_error *err) {
  for (int k = 0; s && k <= JL_CIRCLES_PROBE_KEEP; ++k)
    if (strcmp(s, jl_probe_names[k]) == 0) {
      *probe = k;
      return JL_OK;
    }
  return jl_error_set(err, JL_ERR_INPUT, "probe: expected off, restart or keep, got '%s'", s ? s : "");
}

/* A line through the options' log, when there is one. */
static void jl_api_log(const jl_circles_options *o, int level, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
static void jl_api_log(const jl_circles_options *o, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  jl_log_vline(o->log, o->log_ctx, level, fmt, ap);
  va_end(ap);
}

void jl_circles_run_free(jl_circles_run *run) {
  if (!run) return;
  jl_circle_packing_free(&run->best);
  free(run->ranks);
  run->ranks = NULL;
  run->info.rank_info = NULL;
}

int jl_circles_run_search(const jl_circles_problem *prob, const jl_circles_options *o,
                          jl_circles_run *run, jl_error *err) {
  const double t_start = jl_time_now();
  if (!run) return jl_error_set(err, JL_ERR_INPUT, "jl_circles_run_search: no run given");
  memset(run, 0, sizeof *run);
  if (!prob || !o || prob->n < 1 || prob->n > JL_CIRCLES_MAX || !prob->radii)
    return jl_error_set(err, JL_ERR_INPUT, "jl_circles_run_search: no problem (1 to %d circles)",
                        JL_CIRCLES_MAX);
  if (!(o->time_s >= 0.0) || !(o->target_R >= 0.0) || o->rounds < 0 || o->threads < 0 || o->batch < 0)
    return jl_error_set(err, JL_ERR_INPUT,
                        "options: time_s, target_R, rounds, threads and batch must be >= 0");
  if (o->walk_k < 0 || o->walk_k > JL_CIRCLES_WALK_K_MAX || o->tenure < 0 || o->walk_reset < 0)
    return jl_error_set(err, JL_ERR_INPUT,
                        "options: walk_k must lie in 0..%d and tenure and walk_reset be >= 0",
                        JL_CIRCLES_WALK_K_MAX);
  if (o->probe < JL_CIRCLES_PROBE_OFF || o->probe > JL_CIRCLES_PROBE_KEEP)
    return jl_error_set(err, JL_ERR_INPUT, "options: probe must be a jl_circles_probe (0..%d), got %d",
                        (int)JL_CIRCLES_PROBE_KEEP, o->probe);
  if (!(o->adopt >= 0.0 && o->cross >= 0.0 && o->adopt + o->cross <= 1.0))
    return jl_error_set(err, JL_ERR_INPUT,
                        "options: adopt and cross are shares of the restarts: each >= 0, together "
                        "at most 1 (got %g and %g)", o->adopt, o->cross);
  if (o->behind_adopt >= 0.0 && !(o->behind_adopt + o->cross <= 1.0))
    return jl_error_set(err, JL_ERR_INPUT,
                        "options: behind_adopt and cross are shares of the restarts: together at "
                        "most 1 (got %g and %g)", o->behind_adopt, o->cross);
  if (o->time_s == 0.0 && o->rounds == 0 && o->target_R == 0.0 && !o->stop && !o->progress)
    return jl_error_set(err, JL_ERR_INPUT,
                        "options: no way to stop (give time_s, rounds, target_R, a stop flag or a "
                        "progress callback)");
  if (o->resume && jl_circle_check_instance(o->resume, prob, "resume", JL_ERR_INPUT, err) != JL_OK)
    return JL_ERR_INPUT;
  if (o->resume && o->continue_from)
    return jl_error_set(err, JL_ERR_INPUT, "options: resume and continue_from exclude each other");
  const char *want = o->device ? o->device : "auto";
  if (strcmp(want, "auto") != 0 && strcmp(want, "cpu") != 0 && strcmp(want, "cuda") != 0)
    return jl_error_set(err, JL_ERR_INPUT, "options: device \"%s\" (expected auto, cpu or cuda)",
                        want);
  jl_islands isl;
  memset(&isl, 0, sizeof isl);
  isl.size = 1;
  if (o->islands && jl_islands_init(&isl, err) != JL_OK) return err ? err->code : JL_ERR_DEVICE;
  const int root = isl.rank == 0;
  run->rank = isl.rank;
  int ok = 1, rc = JL_OK;
  jl_circle_checkpoint ck;
  memset(&ck, 0, sizeof ck);
  if ((o->continue_from || o->checkpoint) && isl.size > 1)
    ok = jl_error_set(err, JL_ERR_INPUT,
                      "checkpoints: not under several MPI ranks (each rank's state is its own)") == JL_OK;
  if (ok && o->continue_from && jl_circle_checkpoint_load(o->continue_from, prob, &ck, err) != JL_OK)
    ok = 0;
  /* Setup errors (the caller's check, the device) are agreed on by all
   * ranks, so a rank never waits in a migration for one that has left. */
  if (o->ready && o->ready(o->ready_ctx, isl.rank, err) != JL_OK) ok = 0;
  jl_device dev;
  int notice = 0, pinned = 0;
  if (ok) {
    /* the ranks on a node share its cores unless threads says otherwise */
    int threads = o->threads;
    if (threads <= 0 && o->islands) threads = jl_islands_threads(&isl, &pinned);
    if (jl_device_select_slot(&dev, want, threads, isl.local_rank, &notice, err) != JL_OK) ok = 0;
  }
  if (ok && isl.size > 1 && jl_islands_circles_begin(&isl, prob, err) != JL_OK) ok = 0;
  if (ok && isl.size > 1 && root && !(run->ranks = calloc((size_t)isl.size, sizeof *run->ranks)))
    ok = jl_error_set(err, JL_ERR_NOMEM, "out of memory") == JL_OK;
  if (!jl_islands_all_ok(&isl, ok)) {
    if (ok)
      jl_error_set(err, JL_ERR_INPUT, "another MPI rank failed to set up (its message above)");
    rc = err ? err->code : JL_ERR_INPUT;
    goto done;
  }
  if (root && pinned)
    jl_api_log(o, JL_LOG_NOTICE, JL_ISLANDS_BOUND_NOTE, dev.threads, jl_cpu_count_online());
  if (root && notice)
    jl_api_log(o, JL_LOG_NOTICE, "no CUDA device found, running on the CPU (%d thread%s)",
               dev.threads, dev.threads == 1 ? "" : "s");
  jl_circle_search_opts so;
  jl_api_search_opts(o, &so);
  so.t_start = t_start;
  so.progress = root && o->progress_lines;
  so.log = o->log;
  so.log_ctx = o->log_ctx;
  so.progress_period_s = o->progress_period_s;
  so.resume = o->resume;
  so.checkpoint = o->checkpoint;
  if (o->continue_from) {
    /* the run goes on as the checkpoint's: its seed, mode and batch */
    so.resume_state = &ck;
    so.batch = ck.batch.count;
    so.mode = (jl_search_mode)ck.mode;
  }
  snprintf(run->device, sizeof run->device, "%s", jl_device_kind_name(dev.kind));
  snprintf(run->device_name, sizeof run->device_name, "%s", dev.name);
  jl_circle_layout_describe(&dev, prob->n, jl_circle_search_batch(&dev, prob->n, &so), run->layout,
                            sizeof run->layout);
  so.seed = o->continue_from ? ck.seed : jl_islands_seed(o->seed, isl.rank);
  if (o->continue_from)
    jl_api_log(o, JL_LOG_NOTICE, "going on from %s: %ld rounds, %.1f s, best R %.10f", o->continue_from,
               ck.round, ck.elapsed_s, ck.best.R);
  if (isl.size > 1) {
    so.migrate = jl_islands_circle_migrate;
    so.migrate_ctx = &isl;
    so.migrate_s = o->migrate_s > 0 ? o->migrate_s : jl_islands_migrate_default(prob->n);
    so.migrate_rounds = o->migrate_s > 0 ? (long)o->migrate_s : JL_ISLANDS_MIGRATE_ROUNDS;
    if (so.migrate_rounds < 1) so.migrate_rounds = 1;
    if (root)
      jl_api_log(o, JL_LOG_INFO,
                 "%s, %d circles, %d MPI ranks (rank 0: %s, %s), %s mode, seed %llu, migrations every %g %s",
                 prob->name, prob->n, isl.size, dev.name, run->layout, jl_search_mode_name(so.mode),
                 (unsigned long long)o->seed, so.rounds > 0 ? (double)so.migrate_rounds : so.migrate_s,
                 so.rounds > 0 ? "rounds" : "s");
  } else {
    jl_api_log(o, JL_LOG_INFO, "%s, %d circles, %s, %s, %s mode, seed %llu", prob->name, prob->n,
               dev.name, run->layout, jl_search_mode_name(so.mode), (unsigned long long)so.seed);
  }
  jl_circle_run_info *info = &run->info;
  /* JL_ISLANDS_FAIL_RANK=r: rank r fails as a device error would (tests the
   * other ranks going on) */
  const char *fail_rank = getenv("JL_ISLANDS_FAIL_RANK");
  jl_error serr = {0};
  int searched;
  if (isl.size > 1 && fail_rank && atoi(fail_rank) == isl.rank)
    searched = jl_error_set(&serr, JL_ERR_DEVICE, "failure injected by JL_ISLANDS_FAIL_RANK") == JL_OK;
  else
    searched = jl_circle_search(prob, &dev, &so, &run->best, info, &serr) == JL_OK;
  if (!searched) {
    if (isl.size <= 1) {
      if (err) *err = serr;
      rc = serr.code;
      goto done;
    }
    /* a failed rank says so and stays in the migrations until the others stop */
    run->failed = 1;
    run->failure = serr;
    jl_api_log(o, JL_LOG_ERROR, "rank %d (%s): %s; the other ranks go on", isl.rank, dev.name,
               serr.msg);
    jl_error idle_err = {0};
    if (jl_circle_packing_init(&run->best, prob->n, &idle_err) != JL_OK ||
        jl_islands_circles_idle(&isl, serr.msg, &idle_err) != JL_OK) {
      if (err) *err = idle_err;
      rc = idle_err.code;
      goto done;
    }
    run->best.R = 0.0;
    info->mode = jl_search_mode_name(so.mode);
    info->stopped_by = JL_STOP_SIGNAL;
  }
  info->device = run->device;
  info->device_name = run->device_name;
  info->seed = o->continue_from ? so.seed : o->seed;
  info->ranks = isl.size;
  if (isl.size > 1) {
    jl_rank_info mine;
    memset(&mine, 0, sizeof mine);
    mine.cuda_device = dev.kind == JL_DEVICE_CUDA ? dev.cuda_ordinal : -1;
    mine.failed = !searched;
    mine.seed = so.seed;
    mine.host_threads = dev.threads;
    mine.bound_cpus = jl_cpu_count();
    mine.trials = info->trials;
    mine.relax_steps = info->relax_steps;
    mine.best = run->best.R;
    snprintf(mine.device_name, sizeof mine.device_name, "%s", dev.name);
    if (!searched) snprintf(mine.msg, sizeof mine.msg, "%.*s", (int)sizeof mine.msg - 1, serr.msg);
    /* every rank's final best to rank 0 (a rank's last offer may predate
     * its best), then every rank's facts */
    if ((rc = jl_islands_circles_collect(&isl, &run->best, err)) != JL_OK ||
        (rc = jl_islands_gather(&isl, &mine, run->ranks, err)) != JL_OK)
      goto done;
    if (root) {
      info->rank_info = run->ranks;
      info->trials = info->relax_steps = 0;
      for (int r = 0; r < isl.size; ++r) {
        info->trials += run->ranks[r].trials;
        info->relax_steps += run->ranks[r].relax_steps;
      }
    }
  }
  if (!root) goto done;
  if (run->best.R <= 0.0) {
    rc = jl_error_set(err, JL_ERR_DEVICE, "no rank found a packing; nothing written");
    goto done;
  }
  jl_circle_check_packing(&run->best, JL_LEGAL_REL_TOL, &run->check);
  if (!run->check.legal) {
    rc = jl_error_set(err, JL_ERR_INTERNAL,
                      "internal error: the best packing failed the exact check (overlap %Lg); "
                      "nothing written", run->check.max_overlap);
    goto done;
  }
  run->writes = 1;
done:
  jl_circle_checkpoint_free(&ck);
  if (o->islands) jl_islands_finalize(&isl);
  return rc;
}

int jl_circles_run_write(const jl_circles_problem *prob, const jl_circles_run *run,
                         const char *json_path, const char *svg_path, const char *txt_path,
                         jl_error *err) {
  if (!prob || !run || !run->writes || run->best.n != prob->n)
    return jl_error_set(err, JL_ERR_INPUT, "jl_circles_run_write: no result to write");
  int rc = JL_OK;
  if (json_path)
    rc = jl_circle_result_write_json(json_path, prob, &run->best, &run->info, &run->check, err);
  if (rc == JL_OK && svg_path) rc = jl_circle_write_svg(svg_path, prob, &run->best, err);
  if (rc == JL_OK && txt_path) rc = jl_circle_write_packomania(txt_path, &run->best, err);
  return rc;
}
