/* The public circles API (include/jostle/circles.h) over the search. */
#include <jostle/circles.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circle_search.h"
#include "circles.h"
#include "device.h"

void jl_circles_options_default(jl_circles_options *o) {
  memset(o, 0, sizeof *o);
  o->time_s = 60.0;
  o->seed = 1;
  o->device = "auto";
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
  if (!(o->time_s >= 0.0) || !(o->target_R >= 0.0) || o->rounds < 0 || o->threads < 0 || o->batch < 0)
    return jl_error_set(err, JL_ERR_INPUT,
                        "options: time_s, target_R, rounds, threads and batch must be >= 0");
  if (o->time_s == 0.0 && o->rounds == 0 && o->target_R == 0.0 && !o->stop && !o->progress)
    return jl_error_set(err, JL_ERR_INPUT,
                        "options: no way to stop (give time_s, rounds, target_R, a stop flag or a "
                        "progress callback)");
  const char *want = o->device ? o->device : "auto";
  if (strcmp(want, "auto") != 0 && strcmp(want, "cpu") != 0 && strcmp(want, "cuda") != 0)
    return jl_error_set(err, JL_ERR_INPUT, "options: device \"%s\" (expected auto, cpu or cuda)",
                        want);
  jl_circle_problem prob = {0};
  jl_circle_packing best = {0};
  int rc = jl_api_problem(radii, n, &prob, err);
  if (rc != JL_OK) return rc;
  jl_device dev;
  if ((rc = jl_device_select(&dev, want, o->threads, NULL, err)) != JL_OK) goto done;

  jl_circle_search_opts so;
  jl_circle_search_opts_default(&so);
  so.progress = 0;
  so.seed = o->seed;
  so.time_s = o->time_s;
  so.target_R = o->target_R;
  so.rounds = o->rounds;
  so.batch = o->batch;
  so.stop = o->stop;
  so.on_progress = o->progress;
  so.on_progress_ctx = o->progress_ctx;
  jl_circle_run_info info;
  memset(&info, 0, sizeof info);
  if ((rc = jl_circle_search(&prob, &dev, &so, &best, &info, err)) != JL_OK) goto done;

  jl_circle_check chk;
  jl_circle_check_packing(&best, JL_LEGAL_REL_TOL, &chk);
  if (!chk.legal) {
    rc = jl_error_set(err, JL_ERR_NOT_LEGAL,
                      "the best packing failed the exact check (overlap %Lg)", chk.max_overlap);
    goto done;
  }
  res->n = n;
  res->x = malloc((size_t)n * sizeof(double));
  res->y = malloc((size_t)n * sizeof(double));
  res->r = malloc((size_t)n * sizeof(double));
  if (!res->x || !res->y || !res->r) {
    jl_circles_result_free(res);
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory");
    goto done;
  }
  memcpy(res->x, best.x, (size_t)n * sizeof(double));
  memcpy(res->y, best.y, (size_t)n * sizeof(double));
  memcpy(res->r, best.r, (size_t)n * sizeof(double));
  res->R = best.R;
  res->best_known_R = prob.best_known_R;
  res->max_overlap = chk.max_overlap > 0 ? (double)chk.max_overlap : 0.0;
  res->time_s = info.time_s;
  res->time_to_best_s = info.time_to_best_s;
  res->seed = o->seed;
  res->trials = info.trials;
  res->relax_steps = info.relax_steps;
  res->restarts = info.restarts;
  res->stopped_by = (jl_stop_reason)info.stopped_by;
  snprintf(res->device, sizeof res->device, "%s", jl_device_kind_name(dev.kind));
  snprintf(res->device_name, sizeof res->device_name, "%s", dev.name);
done:
  jl_circle_packing_free(&best);
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
  info.mode = jl_search_mode_name(JL_MODE_POPULATION);
  info.walk = JL_WALK_DEFAULT;
  info.aim = JL_WALK_AIM_DEFAULT;
  info.time_s = res->time_s;
  info.time_to_best_s = res->time_to_best_s;
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
