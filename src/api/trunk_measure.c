/* The whole trunk job of the public API (include/jostle/trunk.h:
 * jl_trunk_measure), as `jostle trunk` runs it: the problem read, the MPI
 * job joined, the device chosen, the run (trunk_run.h), its facts, its
 * files and the check of a result file. Lines go to the caller's log
 * callback; nothing is printed and only the writers write. */
#include <jostle/trunk.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "islands.h"
#include "log.h"
#include "mesh.h"
#include "parallel.h"
#include "timer.h"
#include "trunk_check.h"
#include "trunk_io.h"
#include "trunk_run.h"

/* The longest run a config may ask for, seconds. */
#define JL_TRUNK_MEASURE_TIME_MAX 1e9

/* What the writers read: the run's problem, device and result. */
struct jl_trunk_job {
  jl_trunk_problem prob;
  jl_device dev;
  jl_trunk_run_result res;
  jl_trunk_rank *ranks;
  int n_ranks;
  uint64_t seed;           /* the seed given */
};

void jl_trunk_config_default(jl_trunk_config *c) {
  memset(c, 0, sizeof *c);
  c->time_s = 60.0;
  c->seed = 1;
  c->device = "auto";
  c->cell = 20.0;
  c->moves[0] = c->moves[1] = c->moves[2] = -1.0;
  c->max_blocks = JL_TRUNK_MAX_BLOCKS;
  c->names = (jl_trunk_names){"config.units", "config.max_blocks", "config.time_s", "config.device"};
}

double jl_trunk_units_scale(const char *units) {
  return units ? jl_units_scale(units) : 0.0;
}

int jl_trunk_block_parse(const char *opt, const char *s, double block[3], jl_error *err) {
  jl_block_size b;
  if (!s) return jl_error_set(err, JL_ERR_INPUT, "%s: no value given", opt ? opt : "block");
  int rc = jl_block_size_parse(opt ? opt : "block", s, &b, err);
  if (rc != JL_OK) return rc;
  block[0] = b.x;
  block[1] = b.y;
  block[2] = b.z;
  return JL_OK;
}

/* A name for messages: the config's, else the field's. */
static const char *jl_name(const char *given, const char *field) {
  return given && *given ? given : field;
}

/* The config's values, each message naming its setting. */
static int jl_measure_check(const jl_trunk_config *c, const jl_trunk_names *nm, jl_error *err) {
  if (!c->input || !*c->input) return jl_error_set(err, JL_ERR_INPUT, "config.input: no mesh or problem file given");
  if (strlen(c->input) >= JL_TRUNK_PATH_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "config.input: longer than %d characters", JL_TRUNK_PATH_MAX - 1);
  if (c->units && jl_units_scale(c->units) == 0.0)
    return jl_error_set(err, JL_ERR_INPUT, "%s: expected mm, cm, m or in, got '%s'", nm->units, c->units);
  int given = c->block[0] != 0.0 || c->block[1] != 0.0 || c->block[2] != 0.0;
  for (int k = 0; given && k < 3; ++k)
    if (!(isfinite(c->block[k]) && c->block[k] > 0.0))
      return jl_error_set(err, JL_ERR_INPUT, "config.block[%d]: %g (expected a finite edge > 0 mm)", k, c->block[k]);
  if (!(c->time_s > 0.0 && c->time_s <= JL_TRUNK_MEASURE_TIME_MAX))
    return jl_error_set(err, JL_ERR_INPUT, "%s: %g (expected > 0 and at most %g seconds)", nm->time, c->time_s,
                        JL_TRUNK_MEASURE_TIME_MAX);
  if (c->threads < 0 || c->threads > JL_MAX_THREADS)
    return jl_error_set(err, JL_ERR_INPUT, "config.threads: %d (expected 0 for all, or 1 to %d)", c->threads,
                        JL_MAX_THREADS);
  if (!(c->spacing >= 0.0 && isfinite(c->spacing)))
    return jl_error_set(err, JL_ERR_INPUT, "config.spacing: %g (expected 0 or a spacing > 0 mm)", c->spacing);
  if (!(c->cell > 0.0 && isfinite(c->cell)))
    return jl_error_set(err, JL_ERR_INPUT, "config.cell: %g (expected > 0 mm)", c->cell);
  if (c->max_blocks < 1 || c->max_blocks > JL_TRUNK_MAX_BLOCKS_CEIL)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %ld (expected 1 to %ld)", nm->max_blocks, c->max_blocks,
                        JL_TRUNK_MAX_BLOCKS_CEIL);
  double sum = 0.0;
  for (int k = 0; k < 3; ++k) {
    if (c->moves[k] < 0.0) continue;
    if (!(c->moves[k] <= JL_TRUNK_MOVES_MAX))
      return jl_error_set(err, JL_ERR_INPUT, "config.moves[%d]: %g (expected at most %g)", k, c->moves[k],
                          JL_TRUNK_MOVES_MAX);
    sum += c->moves[k];
  }
  if (sum > JL_TRUNK_MOVES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "config.moves: the shares sum to %g, more than %g", sum, JL_TRUNK_MOVES_MAX);
  if (!(c->migrate_s >= 0.0 && isfinite(c->migrate_s)))
    return jl_error_set(err, JL_ERR_INPUT, "config.migrate_s: %g (expected 0 or > 0 seconds)", c->migrate_s);
  return JL_OK;
}

static void jl_measure_log(const jl_trunk_config *c, int level, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
static void jl_measure_log(const jl_trunk_config *c, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  jl_log_vline(c->log, c->log_ctx, level, fmt, ap);
  va_end(ap);
}

static int jl_ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The public facts from the run's (rank 0). */
static int jl_measure_facts(struct jl_trunk_job *job, int ranks, jl_trunk_outcome *out, jl_error *err) {
  const jl_trunk_run_result *r = &job->res;
  const jl_trunk_problem *prob = &job->prob;
  const jl_trunk_run_info *si = &r->search;
  out->name = prob->name;
  out->mesh = prob->mesh;
  out->block[0] = prob->block.x;
  out->block[1] = prob->block.y;
  out->block[2] = prob->block.z;
  out->count = r->best.count;
  out->centre = r->best.centre;
  out->quat = r->best.quat;
  out->mesh_volume_mm3 = r->mesh_report.volume;
  out->bound = r->bound;
  out->baseline = r->grid.count;
  out->layered = r->layered.count;
  out->fills_complete = r->fills_complete;
  out->floor_frame = r->fills.fills[1].ran;
  out->fill_mesh_frame = r->fills.fills[0].count;
  out->fill_floor_frame = r->fills.fills[1].count;
  out->floor_angle_deg = jl_trunk_angle_deg(r->fills.frame.angle);
  out->reach_measured = r->reach.measured;
  out->reach_mm3 = r->reach.volume_mm3;
  out->reach_bound = r->reach.bound;
  out->stopped_by = r->stopped_by;
  out->source = r->source;
  out->time_s = r->time_s;
  out->time_to_best_s = r->time_to_best_s;
  out->seed = job->seed;
  out->gap_added = si->gap_added;
  out->pocket_added = si->pocket_added;
  out->legalize_legal = si->legalize_legal;
  out->legalize_tried = si->legalize_tried;
  out->moves = si->moves;
  out->relax_steps = si->relax_steps;
  out->checks = si->checks;
  out->checks_failed = si->checks_failed;
  snprintf(out->device_name, sizeof out->device_name, "%s", si->device_name[0] ? si->device_name : job->dev.name);
  jl_trunk_report_describe(&r->check, out->check, sizeof out->check);
  out->ranks = ranks;
  out->migrations = si->migrations;
  job->n_ranks = ranks;
  if (ranks > 1 && r->ranks) {
    if (!(job->ranks = calloc((size_t)ranks, sizeof *job->ranks)))
      return jl_error_set(err, JL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < ranks; ++k) {
      snprintf(job->ranks[k].device_name, sizeof job->ranks[k].device_name, "%s", r->ranks[k].device_name);
      job->ranks[k].cuda_device = r->ranks[k].cuda_device;
      job->ranks[k].best = r->ranks[k].best;
      job->ranks[k].failed = r->ranks[k].failed;
    }
    out->rank_info = job->ranks;
  }
  return JL_OK;
}

static void jl_job_free(struct jl_trunk_job *job) {
  if (!job) return;
  jl_trunk_run_result_free(&job->res);
  free(job->ranks);
  free(job);
}

int jl_trunk_measure(const jl_trunk_config *c, jl_trunk_outcome *out, jl_error *err) {
  jl_error local = {0};
  if (!err) err = &local;
  if (!out) return jl_error_set(err, JL_ERR_INPUT, "jl_trunk_measure: no outcome given");
  memset(out, 0, sizeof *out);
  if (!c) return jl_error_set(err, JL_ERR_INPUT, "jl_trunk_measure: no config given");
  jl_trunk_names nm = {jl_name(c->names.units, "config.units"), jl_name(c->names.max_blocks, "config.max_blocks"),
                       jl_name(c->names.time, "config.time_s"), jl_name(c->names.device, "config.device")};
  int rc = jl_measure_check(c, &nm, err);
  if (rc != JL_OK) return rc;
  double t0 = jl_time_now();
  struct jl_trunk_job *job = calloc(1, sizeof *job);
  if (!job) return jl_error_set(err, JL_ERR_NOMEM, "out of memory");
  job->seed = c->seed;
  jl_islands isl;
  memset(&isl, 0, sizeof isl);
  isl.size = isl.local_size = 1;
  if (c->mpi && jl_islands_init(&isl, err) != JL_OK) {
    free(job);
    return err->code;
  }
  int ran = 0;  /* jl_trunk_run settles the ranks' agreement itself */
  jl_trunk_problem *prob = &job->prob;
  const char *device = c->device ? c->device : "auto";
  if (jl_ends_with(c->input, ".json")) {
    if (jl_trunk_problem_load(prob, c->input, err) != JL_OK) goto fail;
  } else {
    jl_trunk_problem_from_mesh(prob, c->input);
  }
  if (c->units) {
    snprintf(prob->units, sizeof prob->units, "%s", c->units);
    prob->scale = jl_units_scale(c->units);
  }
  if (c->block[0] > 0.0) prob->block = (jl_block_size){c->block[0], c->block[1], c->block[2]};
  jl_trunk_start start = {prob->name, prob->mesh, isl.rank, isl.size};
  if (c->ready && (rc = c->ready(c->ready_ctx, &start, err)) != JL_OK) {
    if (!err->code) err->code = rc;
    goto fail;
  }
  /* the ranks on a node share its cores unless threads says otherwise */
  int pinned = 0, notice = 0, threads = c->threads;
  if (threads <= 0 && c->mpi) threads = jl_islands_threads(&isl, &pinned);
  if (strcmp(device, "auto") != 0 && strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0) {
    jl_error_set(err, JL_ERR_INPUT, "%s: expected cpu, cuda or auto, got '%s'", nm.device, device);
    goto fail;
  }
  jl_device *dev = &job->dev;
  if (jl_device_select_slot(dev, device, threads, isl.local_rank, &notice, err) != JL_OK) goto fail;
  if (pinned) jl_measure_log(c, JL_LOG_NOTICE, JL_ISLANDS_BOUND_NOTE, dev->threads, jl_cpu_count_online());
  if (isl.size > 1)
    jl_measure_log(c, JL_LOG_INFO, "%s: %d MPI ranks (rank 0: %s), each its own seed, migrations every %g s",
                   prob->name, isl.size, dev->name, c->migrate_s > 0 ? c->migrate_s : JL_ISLANDS_TRUNK_MIGRATE_S);
  if (notice)
    jl_measure_log(c, JL_LOG_NOTICE, "no CUDA device found, running on the CPU (%d thread%s)", dev->threads,
                   dev->threads == 1 ? "" : "s");

  volatile sig_atomic_t own_stop = 0;
  jl_trunk_islands seams;
  jl_islands_trunk_seams(&isl, c->migrate_s, &seams);
  jl_trunk_run_config rcfg;
  jl_trunk_run_config_default(&rcfg);
  rcfg.problem = prob;
  rcfg.dev = dev;
  rcfg.device = device;
  rcfg.threads = threads;
  rcfg.t0 = t0;
  rcfg.time_s = c->time_s;
  rcfg.seed = jl_islands_seed(c->seed, isl.rank);
  rcfg.spacing = c->spacing;
  rcfg.cell = c->cell;
  memcpy(rcfg.moves, c->moves, sizeof rcfg.moves);
  rcfg.max_blocks = c->max_blocks;
  rcfg.units_name = nm.units;
  rcfg.max_blocks_name = nm.max_blocks;
  rcfg.time_name = nm.time;
  rcfg.device_name = nm.device;
  rcfg.no_reach = c->no_reach;
  rcfg.resume = c->resume;
  rcfg.log = c->log;
  rcfg.log_ctx = c->log_ctx;
  rcfg.progress_live = c->progress_live;
  rcfg.progress = c->progress;
  rcfg.progress_ctx = c->progress_ctx;
  rcfg.stop = c->stop ? c->stop : &own_stop;
  rcfg.islands = isl.size > 1 ? &seams : NULL;
  ran = 1;
  if (jl_trunk_run(&rcfg, &job->res, err) != JL_OK) goto fail;
  out->root = job->res.root;
  out->rank_failed = job->res.rank_failed;
  out->rank_code = job->res.rank_code;
  out->ranks = isl.size;
  if (job->res.root && jl_measure_facts(job, isl.size, out, err) != JL_OK) goto fail;
  out->job = job;
  jl_islands_finalize(&isl);
  return JL_OK;
fail:
  /* the other ranks wait for this one's word before the search */
  if (!ran) jl_islands_all_ok(&isl, 0);
  jl_islands_finalize(&isl);
  jl_job_free(job);
  memset(out, 0, sizeof *out);
  return err->code ? err->code : JL_ERR_INTERNAL;
}

void jl_trunk_outcome_free(jl_trunk_outcome *out) {
  if (!out) return;
  jl_job_free(out->job);
  memset(out, 0, sizeof *out);
}

/* The writers need rank 0's outcome. */
static int jl_outcome_usable(const jl_trunk_outcome *out, const char *path, jl_error *err) {
  if (!out || !out->job || !out->root)
    return jl_error_set(err, JL_ERR_INPUT, "%s: no outcome to write (only rank 0's holds the result)",
                        path ? path : "(no path)");
  if (!path || !*path) return jl_error_set(err, JL_ERR_INPUT, "no path given to write to");
  return JL_OK;
}

int jl_trunk_outcome_write_json(const jl_trunk_outcome *out, const char *path, jl_error *err) {
  int rc = jl_outcome_usable(out, path, err);
  if (rc != JL_OK) return rc;
  const struct jl_trunk_job *job = out->job;
  const jl_trunk_run_result *res = &job->res;
  const jl_trunk_fill_report *fills = &res->fills;
  jl_trunk_summary sum = {&job->prob, &res->best, &res->mesh_report, &res->check, res->grid.count, res->bound,
                          job->seed, jl_device_kind_name(job->dev.kind), job->dev.name, res->source, res->time_s,
                          res->time_to_best_s, res->grid.time_s, res->stopped_by,
                          res->ran_search ? &res->search : NULL, res->grid.complete, res->start,
                          {fills->fills[0].slab[0], fills->fills[0].slab[1]}, res->layered.count,
                          res->layered.time_s, res->layered.complete, fills->fills[0].tilt, fills,
                          res->fills_complete, res->reach.measured ? &res->reach : NULL, job->n_ranks, res->search.migrations,
                          res->ranks};
  return jl_trunk_summary_write_json(path, &sum, err);
}

int jl_trunk_outcome_write_glb(const jl_trunk_outcome *out, const char *path, jl_error *err) {
  int rc = jl_outcome_usable(out, path, err);
  if (rc != JL_OK) return rc;
  const struct jl_trunk_job *job = out->job;
  return jl_trunk_write_glb(path, &job->res.mesh, &job->prob.block, &job->res.best, err);
}

int jl_trunk_outcome_write_svg(const jl_trunk_outcome *out, const char *path, const char *title, jl_error *err) {
  int rc = jl_outcome_usable(out, path, err);
  if (rc != JL_OK) return rc;
  const struct jl_trunk_job *job = out->job;
  return jl_trunk_write_svg(path, &job->res.mesh, &job->prob.block, &job->res.best, title ? title : job->prob.name,
                            err);
}

int jl_trunk_verify(const char *path, jl_trunk_verdict *v, jl_error *err) {
  jl_error local = {0};
  if (!err) err = &local;
  if (!v) return jl_error_set(err, JL_ERR_INPUT, "jl_trunk_verify: no verdict given");
  memset(v, 0, sizeof *v);
  if (!path || !*path) return jl_error_set(err, JL_ERR_INPUT, "jl_trunk_verify: no result file given");
  jl_trunk_problem prob;
  jl_block_packing pk = {0};
  jl_mesh mesh = {0};
  jl_trunk_geom geom;
  memset(&geom, 0, sizeof geom);
  jl_mesh_report rep;
  jl_trunk_report chk;
  int rc = JL_OK;
  if ((rc = jl_trunk_result_read_json(path, &prob, &pk, err)) == JL_OK &&
      (rc = jl_mesh_load(&mesh, prob.mesh, prob.scale, &rep, err)) == JL_OK &&
      (rc = jl_trunk_geom_init(&geom, &mesh, prob.block, err)) == JL_OK &&
      (rc = jl_trunk_check_packing(&geom, &pk, &chk, err)) == JL_OK) {
    v->legal = chk.legal;
    v->count = pk.count;
    v->block[0] = prob.block.x;
    v->block[1] = prob.block.y;
    v->block[2] = prob.block.z;
    v->mesh_volume_mm3 = rep.volume;
    snprintf(v->mesh, sizeof v->mesh, "%s", prob.mesh);
    jl_trunk_report_describe(&chk, v->why, sizeof v->why);
  }
  jl_trunk_geom_free(&geom);
  jl_mesh_free(&mesh);
  jl_block_packing_free(&pk);
  return rc;
}
