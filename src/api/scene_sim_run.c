/* A run of a public scene handle (scene_sim.h): the steps with their
 * totals, what is recorded for the outputs (CSV rows, glTF frames, one
 * step's contact problem), the summary and the writers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fclib_export.h"
#include "scene_sim.h"
#include "stop_flag.h"
#include "timer.h"

/* glTF frames per simulated second when the caller gives no spacing. */
#define JL_SCENE_GLB_FPS 30.0

void jl_scene_record_default(jl_scene_record *r) { memset(r, 0, sizeof *r); }

int jl_scene_fclib_available(void) { return jl_fclib_available(); }

double jl_scene_body_extent(const jl_scene *s) {
  double extent = 0.0;
  for (int k = 0; k < s->bodies.count; ++k) {
    if (s->bodies.is_static[k]) continue;
    const double *z = s->bodies.size + 3 * (size_t)k;
    double e = s->bodies.shape[k] == JL_SHAPE_SPHERE ? 2.0 * z[0]
                                                     : 2.0 * sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
    if (e > extent) extent = e;
  }
  return extent;
}

static void jl_csv_row(jl_buf *csv, long step, double time, double ke, double pe, int contacts,
                       int iterations, double residual, double pen) {
  jl_buf_printf(csv, "%ld,%.9g,%.12g,%.12g,%d,%d,%.6g,%.6g\n", step, time, ke, pe, contacts,
                iterations, residual, pen);
}

int jl_scene_sim_begin(jl_scene_sim *sim, const jl_scene_record *r, jl_error *err) {
  if (r) sim->rec = *r;
  else jl_scene_record_default(&sim->rec);
  const jl_scene_record *rec = &sim->rec;
  if (rec->glb_every < 0)
    return jl_error_set(err, JL_ERR_INPUT, "record.glb_every: must be >= 0, got %ld", rec->glb_every);
  if (rec->fclib && (rec->fclib_step < 0 || rec->fclib_step > sim->steps))
    return jl_error_set(err, JL_ERR_INPUT, "record.fclib_step: must be in [0, %ld], got %ld",
                        sim->steps, rec->fclib_step);
  if (rec->fclib && !jl_fclib_available())
    return jl_error_set(err, JL_ERR_INPUT,
                        "record.fclib: this jostle was built without FCLib (libfclib-dev)");
  sim->fclib_step = rec->fclib_step ? rec->fclib_step : sim->steps;
  sim->have_run = 1; /* jl_scene_runner_free also undoes a failed init */
  jl_scene *s = &sim->scene;
  int rc = jl_scene_runner_init(&sim->run, s, &sim->dev, err);
  if (rc != JL_OK) return rc;
  if (rec->glb) {
    sim->glb_every = rec->glb_every;
    if (!sim->glb_every) {
      sim->glb_every = (long)floor(1.0 / (JL_SCENE_GLB_FPS * s->dt) + 0.5);
      if (sim->glb_every < 1) sim->glb_every = 1;
    }
    if ((rc = jl_trajectory_init(&sim->traj, &s->bodies, err)) != JL_OK) return rc;
    sim->have_traj = 1;
    if ((rc = jl_trajectory_add_frame(&sim->traj, &s->bodies, 0.0, err)) != JL_OK) return rc;
  }
  jl_scene_energy(s, &sim->e0[0], &sim->e0[1]);
  sim->pos0 = malloc(3 * sizeof(double) * (size_t)(s->bodies.count > 0 ? s->bodies.count : 1));
  if (!sim->pos0) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d bodies", s->bodies.count);
  memcpy(sim->pos0, s->bodies.pos, 3 * sizeof(double) * (size_t)s->bodies.count);
  if (rec->csv) {
    jl_buf_printf(&sim->csv, "step,time,kinetic,potential,contacts,iterations,residual,max_penetration\n");
    jl_csv_row(&sim->csv, 0, 0.0, sim->e0[0], sim->e0[1], 0, 0, 0.0, 0.0);
  }
  /* a penetration deeper than the largest moving body is no contact any more */
  sim->body_extent = jl_scene_body_extent(s);
  sim->sum.fclib_step = rec->fclib ? sim->fclib_step : 0;
  sim->t0 = jl_time_now();
  return JL_OK;
}

void jl_scene_sim_end(jl_scene_sim *sim) {
  free(sim->pos0);
  sim->pos0 = NULL;
  jl_buf_free(&sim->csv);
  if (sim->have_traj) jl_trajectory_free(&sim->traj);
  sim->have_traj = 0;
  if (sim->have_run) jl_scene_runner_free(&sim->run);
  sim->have_run = 0;
}

int jl_scene_sim_out_of_time(jl_scene_sim *sim) {
  if (!sim || !(sim->deadline > 0.0) || jl_time_now() < sim->deadline) return 0;
  sim->by_time = 1;
  return 1;
}

/* Whether every dynamic body's position, orientation and velocities are finite. */
static int jl_bodies_finite(const jl_bodies *b) {
  for (int k = 0; k < b->count; ++k) {
    if (b->is_static[k]) continue;
    for (int d = 0; d < 3; ++d)
      if (!isfinite(b->pos[3 * (size_t)k + d]) || !isfinite(b->vel[3 * (size_t)k + d]) ||
          !isfinite(b->omega[3 * (size_t)k + d]))
        return 0;
    for (int d = 0; d < 4; ++d)
      if (!isfinite(b->quat[4 * (size_t)k + d])) return 0;
  }
  return 1;
}

int jl_scene_sim_advance(jl_scene_sim *sim, jl_scene_step_stats *st, jl_error *err) {
  if (!sim || !st) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_advance: no scene or no stats");
  if (!sim->have_run) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_advance: not started");
  if (sim->finished) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_advance: the run is finished");
  if (sim->not_finite)
    return jl_error_set(err, JL_ERR_INPUT,
                        "jl_scene_sim_advance: the run ended at step %ld: a body's state is not finite",
                        sim->run.step);
  memset(st, 0, sizeof *st);
  jl_scene_runner *run = &sim->run;
  const jl_contact_problem *prob = NULL;
  sim->prob = NULL;
  /* the runner fills the step's figures (jl_scene_run_stats is this struct) */
  int rc = sim->rec.fclib && run->step + 1 == sim->fclib_step
             ? jl_scene_runner_step_problem(run, st, &prob, err)
             : jl_scene_runner_step(run, st, err);
  if (rc != JL_OK && !jl_bodies_finite(&run->run->bodies)) {
    /* the state stopped being finite inside the step (a diverged solve: the
     * broad phase refuses it): the run ends with the steps done before */
    memset(st, 0, sizeof *st);
    st->step = run->step + 1;
    st->time = st->step * sim->scene.dt;
    st->not_finite = 1;
    sim->not_finite = 1;
    return JL_OK;
  }
  /* energies: on the device only for what shows them (a reduction, two numbers back) */
  double ke = NAN, pe = NAN;
  if (rc == JL_OK && (sim->rec.csv || !run->on_gpu)) rc = jl_scene_runner_energy(run, &ke, &pe, err);
  if (rc != JL_OK) return rc;
  st->kinetic = ke;
  st->potential = pe;
  jl_scene_summary *t = &sim->sum;
  /* said once, the run goes on (the steps were asked) */
  if (!sim->diverged_said && sim->body_extent > 0.0 &&
      (!isfinite(st->max_penetration) || st->max_penetration > sim->body_extent)) {
    st->diverged = 1;
    sim->diverged_said = 1;
    t->diverged_step = st->step;
  }
  /* from the diverged step on, a state that stopped being finite ends the
   * run (on the CPU a step that makes it so also fails, above; the device
   * steps on with it, so its bodies come back for the check) */
  if (sim->diverged_said) {
    if (run->on_gpu && (rc = jl_scene_runner_fetch(run, err)) != JL_OK) return rc;
    if (!jl_bodies_finite(run->on_gpu ? &sim->scene.bodies : &run->run->bodies)) {
      st->not_finite = 1;
      sim->not_finite = 1;
    }
  }
  t->steps++;
  sim->contacts_sum += st->contacts;
  sim->iterations_sum += st->iterations;
  if (st->contacts > t->contacts_max) t->contacts_max = st->contacts;
  if (st->iterations > t->iterations_max) t->iterations_max = st->iterations;
  t->not_converged += !st->converged && st->contacts > 0;
  t->restarts += st->restarts;
  if (isnan(st->residual) || isnan(t->residual_max)) t->residual_max = NAN;
  else if (st->residual > t->residual_max) t->residual_max = st->residual;
  if (st->max_penetration > t->penetration_max) t->penetration_max = st->max_penetration;
  if (sim->rec.csv)
    jl_csv_row(&sim->csv, st->step, st->time, ke, pe, st->contacts, st->iterations, st->residual,
               st->max_penetration);
  if (sim->have_traj && !sim->not_finite && (st->step % sim->glb_every == 0 || st->step == sim->steps) &&
      ((rc = jl_scene_runner_fetch(run, err)) != JL_OK ||
       (rc = jl_trajectory_add_frame(&sim->traj, &sim->scene.bodies, st->time, err)) != JL_OK))
    return rc;
  if (prob) {
    sim->prob = prob;
    sim->prob_step = st->step;
    st->fclib_ready = 1;
    t->fclib_kept = 1;
  }
  if (t->steps == 1) {
    /* the first step's one-off costs, apart: the device's queue drained */
    if ((rc = jl_scene_runner_sync(run, err)) != JL_OK) return rc;
    t->first_s = jl_time_now() - sim->t0;
  }
  st->wall_s = t->wall_s = jl_time_now() - sim->t0;
  return JL_OK;
}

int jl_scene_sim_finish(jl_scene_sim *sim, jl_scene_summary *out, jl_error *err) {
  if (!sim) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_finish: no scene");
  if (!sim->have_run) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_finish: not started");
  jl_scene_summary *t = &sim->sum;
  if (!sim->finished) {
    /* the time of the steps (the device's queue drained), then the final state */
    int rc = jl_scene_runner_sync(&sim->run, err);
    if (rc != JL_OK) return rc;
    t->wall_s = jl_time_now() - sim->t0;
    if ((rc = jl_scene_runner_fetch(&sim->run, err)) != JL_OK) return rc;
    const jl_bodies *b = &sim->scene.bodies;
    for (int k = 0; k < b->count; ++k) {
      if (b->is_static[k]) continue;
      double d2 = 0.0;
      for (int d = 0; d < 3; ++d) {
        double dx = b->pos[3 * k + d] - sim->pos0[3 * k + d];
        d2 += dx * dx;
      }
      if (sqrt(d2) > t->displacement_max) t->displacement_max = sqrt(d2);
    }
    double ns = t->steps > 0 ? (double)t->steps : 1.0;
    t->contacts_mean = sim->contacts_sum / ns;
    t->iterations_mean = sim->iterations_sum / ns;
    t->time = t->steps * sim->scene.dt;
    memcpy(t->energy_initial, sim->e0, sizeof t->energy_initial);
    jl_scene_energy(&sim->scene, &t->energy_final[0], &t->energy_final[1]);
    const volatile sig_atomic_t *stop = sim->scene.solver.stop;
    t->stopped_by = sim->not_finite         ? "diverged"
                    : jl_stop_requested(stop) ? "signal"
                    : sim->by_time            ? "time"
                                              : "steps";
    sim->finished = 1;
  }
  if (out) *out = *t;
  return JL_OK;
}

/* %.6g, or null when not finite (JSON has no inf or nan: a scene that blew up). */
static const char *jl_fmt_or_null(char *out, size_t cap, double v) {
  if (isfinite(v)) snprintf(out, cap, "%.6g", v);
  else snprintf(out, cap, "null");
  return out;
}

int jl_scene_sim_write_result(jl_scene_sim *sim, const char *path, const char *scene_file,
                              jl_error *err) {
  if (!path) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_write_result: no path given");
  int rc = jl_scene_sim_finish(sim, NULL, err);
  if (rc != JL_OK) return rc;
  const jl_scene *s = &sim->scene;
  const jl_device *dev = &sim->dev;
  const jl_scene_summary *t = &sim->sum;
  jl_buf b = {0};
  const jl_prox_opts *o = &s->solver;
  const jl_bodies *bo = &s->bodies;
  int dynamic = 0;
  for (int k = 0; k < bo->count; ++k) dynamic += !bo->is_static[k];
  jl_buf_printf(&b, "{\n  \"format\": \"jostle-result\",\n  \"kind\": \"scene\",\n  \"version\": 1,\n");
  char g0[32], g1[32], g2[32], g3[32], g4[32], g5[32], g6[32];
  /* names and paths are data: escaped, never copied raw into the JSON */
  jl_buf_printf(&b, "  \"scene\": {\"name\": ");
  jl_buf_json_string(&b, s->name);
  jl_buf_printf(&b, ", \"file\": ");
  jl_buf_json_string(&b, scene_file ? scene_file : "");
  jl_buf_printf(&b, ", \"bodies\": %d, \"dynamic_bodies\": %d, \"dt\": %s, \"steps_requested\": %ld, "
                "\"gravity\": ",
                bo->count, dynamic, jl_fmt_json_double(g1, sizeof g1, s->dt), sim->steps);
  jl_buf_json_vec(&b, s->gravity, 3);
  jl_buf_printf(&b, "},\n");
  jl_buf_printf(&b, "  \"solver\": {\"method\": \"%s\", \"alpha\": %s, \"tol_abs\": %s, "
                "\"tol_rel\": %s, \"max_iterations\": %d, \"warm_start\": %s, "
                "\"matrix_free\": %s, \"order\": \"%s\"},\n",
                jl_solver_kind_name(o->kind), jl_fmt_json_double(g1, sizeof g1, o->alpha),
                jl_fmt_json_double(g2, sizeof g2, o->tol_abs),
                jl_fmt_json_double(g3, sizeof g3, o->tol_rel),
                o->max_iter, o->warm_start ? "true" : "false",
                o->matrix_free < 0 ? "\"auto\"" : o->matrix_free ? "true" : "false",
                o->sor_order == JL_SOR_SEQUENTIAL ? "sequential" : "coloured");
  jl_buf_printf(&b, "  \"run\": {\"device\": ");
  jl_buf_json_string(&b, dev->name);
  jl_buf_printf(&b, ", \"device_kind\": \"%s\", \"threads\": %d, "
                "\"steps\": %ld, \"time\": %s, \"wall_s\": %.6g, \"ms_per_step\": %.6g, "
                "\"ms_first_step\": %s, \"ms_per_step_after_first\": %s, "
                "\"body_order\": \"%s\", \"reorders\": %ld, \"stopped_by\": \"%s\"},\n",
                jl_device_kind_name(dev->kind), dev->threads, t->steps,
                jl_fmt_json_double(g4, sizeof g4, t->steps * s->dt), t->wall_s,
                t->steps ? 1e3 * t->wall_s / t->steps : 0.0,
                t->steps > 0 ? jl_fmt_or_null(g5, sizeof g5, 1e3 * t->first_s) : "null",
                t->steps > 1 ? jl_fmt_or_null(g6, sizeof g6, 1e3 * (t->wall_s - t->first_s) / (double)(t->steps - 1))
                             : "null",
                jl_body_order_name(sim->run.perm ? JL_BODY_ORDER_SPATIAL : JL_BODY_ORDER_GIVEN),
                sim->run.reorders, t->stopped_by);
  char dstep[32] = "null";
  if (t->diverged_step > 0) snprintf(dstep, sizeof dstep, "%ld", t->diverged_step);
  jl_buf_printf(&b, "  \"summary\": {\"contacts_mean\": %.6g, \"contacts_max\": %d, "
                "\"iterations_mean\": %.6g, \"iterations_max\": %d, \"steps_not_converged\": %ld, "
                "\"restarts\": %ld, \"residual_max\": %s, \"max_penetration\": %s, "
                "\"max_displacement\": %s, \"diverged_step\": %s, "
                "\"energy_initial\": {\"kinetic\": %s, \"potential\": %s}, "
                "\"energy_final\": {\"kinetic\": %s, \"potential\": %s}},\n",
                t->contacts_mean, t->contacts_max, t->iterations_mean, t->iterations_max,
                t->not_converged, t->restarts, jl_fmt_or_null(g0, sizeof g0, t->residual_max),
                jl_fmt_or_null(g5, sizeof g5, t->penetration_max),
                jl_fmt_or_null(g6, sizeof g6, t->displacement_max), dstep,
                jl_fmt_json_double(g1, sizeof g1, t->energy_initial[0]),
                jl_fmt_json_double(g2, sizeof g2, t->energy_initial[1]),
                jl_fmt_json_double(g3, sizeof g3, t->energy_final[0]),
                jl_fmt_json_double(g4, sizeof g4, t->energy_final[1]));
  jl_buf_printf(&b, "  \"bodies\": [\n");
  static const char *const shapes[] = {"sphere", "box", "plane"};
  for (int k = 0; k < bo->count; ++k) {
    /* what another engine needs to build the same body: material, size, mass */
    jl_buf_printf(&b, "    {\"shape\": \"%s\", \"static\": %s, \"material\": ", shapes[bo->shape[k]],
                  bo->is_static[k] ? "true" : "false");
    jl_buf_json_string(&b, s->materials[bo->material[k]].name);
    jl_buf_printf(&b, ", \"size\": ");
    jl_buf_json_vec(&b, bo->size + 3 * (size_t)k, 3);
    jl_buf_printf(&b, ", \"mass\": %s, \"position\": ",
                  jl_fmt_json_double(g0, sizeof g0, bo->inv_mass[k] > 0 ? 1.0 / bo->inv_mass[k] : 0.0));
    jl_buf_json_vec(&b, bo->pos + 3 * (size_t)k, 3);
    jl_buf_printf(&b, ", \"orientation\": ");
    jl_buf_json_vec(&b, bo->quat + 4 * (size_t)k, 4);
    jl_buf_printf(&b, ", \"velocity\": ");
    jl_buf_json_vec(&b, bo->vel + 3 * (size_t)k, 3);
    jl_buf_printf(&b, ", \"angular_velocity\": ");
    jl_buf_json_vec(&b, bo->omega + 3 * (size_t)k, 3);
    jl_buf_printf(&b, "}%s\n", k + 1 < bo->count ? "," : "");
  }
  jl_buf_printf(&b, "  ]\n}\n");
  rc = b.failed ? jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory building the file", path)
                : jl_file_write_atomic(path, b.data, b.len, err);
  jl_buf_free(&b);
  return rc;
}

int jl_scene_sim_write_csv(const jl_scene_sim *sim, const char *path, jl_error *err) {
  if (!sim || !path) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_write_csv: no scene or no path");
  if (!sim->rec.csv)
    return jl_error_set(err, JL_ERR_INPUT, "%s: the run recorded no CSV (record.csv)", path);
  if (sim->csv.failed) return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", path);
  return jl_file_write_atomic(path, sim->csv.data, sim->csv.len, err);
}

int jl_scene_sim_write_glb(const jl_scene_sim *sim, const char *path, jl_error *err) {
  if (!sim || !path) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_write_glb: no scene or no path");
  if (!sim->have_traj)
    return jl_error_set(err, JL_ERR_INPUT, "%s: the run recorded no frames (record.glb)", path);
  return jl_trajectory_write_glb(&sim->traj, path, err);
}

int jl_scene_sim_write_fclib(jl_scene_sim *sim, const char *path, jl_error *err) {
  if (!sim || !path) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_write_fclib: no scene or no path");
  const jl_contact_problem *prob = sim->prob;
  if (!prob || sim->prob_step != sim->run.step)
    return jl_error_set(err, JL_ERR_INPUT, "%s: no contact problem kept for step %ld (record.fclib_step)",
                        path, sim->run.step);
  jl_fc_problem fp = {prob->n, prob->rowptr, prob->col, prob->blocks, prob->c, prob->mu};
  char title[256], desc[256];
  snprintf(title, sizeof title, "jostle %s step %ld", sim->scene.name, sim->prob_step);
  snprintf(desc, sizeof desc, "%d contacts, Delassus G and free term c of Moreau's midpoint step, dt %g",
           prob->n, sim->scene.dt);
  return jl_fclib_write_local(&fp, path, title, desc, err);
}
