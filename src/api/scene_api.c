/* The public scenes API (include/jostle/scene.h) over a scene and its
 * runner (scene_runner.h), on the CPU or a CUDA device: making the handle,
 * the overrides, reading the state. A run's steps and files:
 * scene_sim_run.c. */
#include <jostle/scene.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "scene.h"
#include "scene_runner.h"
#include "scene_sim.h"
#include "stop_flag.h"
#include "timer.h"

_Static_assert(JL_SCENE_MAX_STEPS == JL_SCENE_STEPS_MAX, "one bound for a run's steps");

void jl_scene_options_default(jl_scene_options *o) {
  memset(o, 0, sizeof *o);
  o->device = "auto";
}

void jl_scene_settings_default(jl_scene_settings *s) {
  memset(s, 0, sizeof *s);
  s->gravity[2] = JL_SCENE_GRAVITY_Z;
  s->dt = JL_SCENE_DT_DEFAULT;
  s->friction = JL_SCENE_MU_DEFAULT;
  s->solver = "sor";
}

/* A number named key in [lo, hi]. */
static int jl_api_num(const char *key, double v, double lo, double hi, jl_error *err) {
  if (!isfinite(v)) return jl_error_set(err, JL_ERR_INPUT, "%s: must be finite, got %g", key, v);
  if (lo > 0.0 && !(v > 0.0))
    return jl_error_set(err, JL_ERR_INPUT, "%s: must be > 0, got %g", key, v);
  if (v < lo || v > hi)
    return jl_error_set(err, JL_ERR_INPUT, "%s: must be in [%g, %g], got %g", key, lo, hi, v);
  return JL_OK;
}

/* n numbers named where.field[i], each in [lo, hi]. */
static int jl_api_vec(const char *where, const char *field, const double *v, int n, double lo,
                      double hi, jl_error *err) {
  char key[96];
  for (int i = 0; i < n; ++i) {
    snprintf(key, sizeof key, "%s%s[%d]", where, field, i);
    int rc = jl_api_num(key, v[i], lo, hi, err);
    if (rc != JL_OK) return rc;
  }
  return JL_OK;
}

static double jl_api_norm2(const double *v, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += v[i] * v[i];
  return s;
}

static int jl_api_settings_check(const jl_scene_settings *s, jl_solver_kind *kind, jl_error *err) {
  int rc = jl_api_vec("settings.", "gravity", s->gravity, 3, -JL_SCENE_GRAVITY_MAX,
                      JL_SCENE_GRAVITY_MAX, err);
  if (rc == JL_OK) rc = jl_api_num("settings.dt", s->dt, JL_SCENE_DT_MIN, JL_SCENE_DT_MAX, err);
  if (rc == JL_OK) rc = jl_api_num("settings.friction", s->friction, 0.0, JL_SCENE_MU_MAX, err);
  if (rc == JL_OK) rc = jl_api_num("settings.restitution", s->restitution, 0.0, 1.0, err);
  if (rc != JL_OK) return rc;
  const char *name = s->solver ? s->solver : "sor";
  if (jl_solver_kind_parse(name, kind))
    return jl_error_set(err, JL_ERR_INPUT,
                        "settings.solver: expected \"sor\", \"jor\" or \"apgd\", got \"%.32s\"", name);
  if (s->iterations < 0 || s->iterations > JL_SCENE_ITERATIONS_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "settings.iterations: must be in [0, %ld], got %d",
                        JL_SCENE_ITERATIONS_MAX, s->iterations);
  return JL_OK;
}

/* Body i checked field by field, and turned into the scene's spec. */
static int jl_api_body(const jl_scene_body *b, int i, jl_body_spec *spec, jl_error *err) {
  char where[48], key[96];
  snprintf(where, sizeof where, "bodies[%d].", i);
  jl_body_spec_default(spec);
  int rc = JL_OK;
  switch (b->shape) {
  case JL_SCENE_SPHERE:
    spec->shape = JL_SHAPE_SPHERE;
    rc = jl_api_vec(where, "size", b->size, 1, JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, err);
    spec->size[1] = spec->size[2] = b->size[0]; /* size[1], size[2] unused */
    break;
  case JL_SCENE_BOX:
    spec->shape = JL_SHAPE_BOX;
    rc = jl_api_vec(where, "size", b->size, 3, JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, err);
    break;
  case JL_SCENE_PLANE:
    spec->shape = JL_SHAPE_PLANE;
    rc = jl_api_vec(where, "size", b->size, 3, -JL_SCENE_BIG, JL_SCENE_BIG, err);
    if (rc == JL_OK && jl_api_norm2(b->size, 3) < JL_SCENE_ZERO_NORM2)
      rc = jl_error_set(err, JL_ERR_INPUT, "%ssize: a plane's normal must not be zero", where);
    if (rc == JL_OK && b->density != 0.0)
      rc = jl_error_set(err, JL_ERR_INPUT, "%sdensity: a plane is static, give 0 (got %g)", where,
                        b->density);
    break;
  default:
    return jl_error_set(err, JL_ERR_INPUT,
                        "%sshape: expected JL_SCENE_SPHERE, JL_SCENE_BOX or JL_SCENE_PLANE, got %d",
                        where, (int)b->shape);
  }
  if (rc == JL_OK) rc = jl_api_vec(where, "position", b->position, 3, -JL_SCENE_BIG, JL_SCENE_BIG, err);
  if (rc == JL_OK)
    rc = jl_api_vec(where, "orientation", b->orientation, 4, -JL_SCENE_BIG, JL_SCENE_BIG, err);
  if (rc == JL_OK) rc = jl_api_vec(where, "velocity", b->velocity, 3, -JL_SCENE_BIG, JL_SCENE_BIG, err);
  if (rc == JL_OK)
    rc = jl_api_vec(where, "angular_velocity", b->angular_velocity, 3, -JL_SCENE_BIG,
                    JL_SCENE_BIG, err);
  if (rc != JL_OK) return rc;
  if (b->density < 0.0)
    return jl_error_set(err, JL_ERR_INPUT, "%sdensity: must be 0 (static) or > 0, got %g", where,
                        b->density);
  if (b->density != 0.0) {
    snprintf(key, sizeof key, "%sdensity", where);
    if ((rc = jl_api_num(key, b->density, JL_SCENE_DENSITY_MIN, JL_SCENE_BIG, err)) != JL_OK)
      return rc;
  }
  double q2 = jl_api_norm2(b->orientation, 4);
  if (q2 != 0.0 && q2 < JL_SCENE_ZERO_NORM2)
    return jl_error_set(err, JL_ERR_INPUT,
                        "%sorientation: too close to the zero quaternion (all zeros: identity)",
                        where);
  if (b->shape != JL_SCENE_SPHERE) memcpy(spec->size, b->size, sizeof spec->size);
  else spec->size[0] = b->size[0];
  if (q2 != 0.0) memcpy(spec->quat, b->orientation, sizeof spec->quat);
  memcpy(spec->pos, b->position, sizeof spec->pos);
  memcpy(spec->vel, b->velocity, sizeof spec->vel);
  memcpy(spec->omega, b->angular_velocity, sizeof spec->omega);
  spec->is_static = b->shape == JL_SCENE_PLANE || b->density == 0.0;
  spec->density = b->density;
  return JL_OK;
}

static jl_scene_sim *jl_api_sim_new(jl_error *err) {
  jl_scene_sim *sim = calloc(1, sizeof *sim);
  if (!sim) jl_error_set(err, JL_ERR_NOMEM, "out of memory for a scene");
  return sim;
}

/* The options checked, before anything is allocated. */
static int jl_api_options_check(const jl_scene_options *o, jl_error *err) {
  const char *want = o->device ? o->device : "auto";
  if (strcmp(want, "auto") != 0 && strcmp(want, "cpu") != 0 && strcmp(want, "cuda") != 0)
    return jl_error_set(err, JL_ERR_INPUT, "options.device: expected \"auto\", \"cpu\" or \"cuda\", "
                        "got \"%.32s\"", want);
  if (o->threads < 0)
    return jl_error_set(err, JL_ERR_INPUT, "options.threads: must be >= 0, got %d", o->threads);
  if (o->steps < 0 || o->steps > JL_SCENE_STEPS_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "options.steps: must be in [0, %ld], got %ld",
                        JL_SCENE_STEPS_MAX, o->steps);
  jl_solver_kind kind;
  if (o->solver && jl_solver_kind_parse(o->solver, &kind))
    return jl_error_set(err, JL_ERR_INPUT,
                        "options.solver: expected \"sor\", \"jor\" or \"apgd\", got \"%.32s\"",
                        o->solver);
  if (o->iterations < 0 || o->iterations > JL_SCENE_ITERATIONS_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "options.iterations: must be in [0, %ld], got %d",
                        JL_SCENE_ITERATIONS_MAX, o->iterations);
  if (o->matrix_free < -1 || o->matrix_free > 1)
    return jl_error_set(err, JL_ERR_INPUT, "options.matrix_free: expected -1, 0 or 1, got %d",
                        o->matrix_free);
  jl_body_order order;
  if (o->body_order && jl_body_order_parse(o->body_order, &order))
    return jl_error_set(err, JL_ERR_INPUT,
                        "options.body_order: expected \"auto\", \"spatial\" or \"given\", got \"%.32s\"",
                        o->body_order);
  if (!isfinite(o->time_limit) || o->time_limit < 0.0)
    return jl_error_set(err, JL_ERR_INPUT, "options.time_limit: must be >= 0 and finite, got %g",
                        o->time_limit);
  return JL_OK;
}

/* The device, chosen before a large scene is read (a missing CUDA device
 * fails first). */
static int jl_api_device(jl_scene_sim *sim, const jl_scene_options *o, jl_error *err) {
  int rc = jl_api_options_check(o, err);
  if (rc != JL_OK) return rc;
  return jl_device_select(&sim->dev, o->device ? o->device : "auto", o->threads,
                          &sim->cpu_fallback, err);
}

/* The options' overrides of the scene's settings (checked by jl_api_options_check);
 * t_start: when the open began, for the time limit. */
static void jl_api_overrides(jl_scene_sim *sim, const jl_scene_options *o, double t_start) {
  jl_scene *s = &sim->scene;
  jl_solver_kind kind;
  if (o->solver && !jl_solver_kind_parse(o->solver, &kind)) jl_prox_opts_set_kind(&s->solver, kind);
  if (o->iterations > 0) s->solver.max_iter = o->iterations;
  if (o->matrix_free) s->solver.matrix_free = o->matrix_free > 0;
  jl_body_order order = JL_BODY_ORDER_AUTO;
  if (o->body_order) jl_body_order_parse(o->body_order, &order);
  s->body_order = order;
  /* a signal or the time limit ends the solve under way (CPU; on CUDA after its step) */
  sim->deadline = o->time_limit > 0.0 ? t_start + o->time_limit : 0.0;
  s->solver.stop = o->stop;
  s->solver.deadline = sim->deadline;
  sim->steps = o->steps ? o->steps : s->steps;
}

static int jl_api_fail(jl_scene_sim *sim, jl_scene_sim **out, int rc) {
  jl_scene_sim_free(sim);
  *out = NULL;
  return rc;
}

int jl_scene_sim_open(const char *path, const jl_scene_options *o, jl_scene_sim **out,
                      jl_error *err) {
  double t_start = jl_time_now();
  if (!out) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_open: no handle to fill");
  *out = NULL;
  if (!path) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_open: no path given");
  jl_scene_options def;
  if (!o) {
    jl_scene_options_default(&def);
    o = &def;
  }
  jl_scene_sim *sim = jl_api_sim_new(err);
  if (!sim) return JL_ERR_NOMEM;
  int rc = jl_api_device(sim, o, err);
  if (rc != JL_OK) return jl_api_fail(sim, out, rc);
  rc = jl_scene_load(&sim->scene, path, err);
  if (rc != JL_OK) return jl_api_fail(sim, out, rc);
  jl_api_overrides(sim, o, t_start);
  *out = sim;
  return JL_OK;
}

int jl_scene_sim_start(jl_scene_sim *sim, const jl_scene_record *r, jl_error *err) {
  if (!sim) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_start: no scene");
  if (sim->have_run) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_start: started already");
  return jl_scene_sim_begin(sim, r, err);
}

void jl_scene_sim_info(const jl_scene_sim *sim, jl_scene_info *out) {
  memset(out, 0, sizeof *out);
  if (!sim) return;
  const jl_scene *s = &sim->scene;
  out->name = s->name;
  out->bodies = s->bodies.count;
  for (int k = 0; k < s->bodies.count; ++k) out->dynamic_bodies += !s->bodies.is_static[k];
  out->dt = s->dt;
  out->steps = sim->steps;
  out->solver = jl_solver_kind_name(s->solver.kind);
  out->alpha = s->solver.alpha;
  out->matrix_free = s->solver.matrix_free < 0 ? -1 : s->solver.matrix_free ? 1 : 0;
  out->device = sim->dev.name;
  out->on_cuda = sim->dev.kind == JL_DEVICE_CUDA;
  out->threads = sim->dev.threads;
  out->cpu_fallback = sim->cpu_fallback;
  out->ordered = sim->have_run && sim->run.perm != NULL;
  out->body_extent = jl_scene_body_extent(s);
}

int jl_scene_sim_load(const char *path, const jl_scene_options *o, jl_scene_sim **out,
                      jl_error *err) {
  if (!out) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_load: no handle to fill");
  *out = NULL;
  if (!path) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_load: no path given");
  jl_scene_sim *sim = NULL;
  int rc = jl_scene_sim_open(path, o, &sim, err);
  if (rc != JL_OK) return rc;
  if ((rc = jl_scene_sim_begin(sim, NULL, err)) != JL_OK) return jl_api_fail(sim, out, rc);
  *out = sim;
  return JL_OK;
}

int jl_scene_sim_create(const jl_scene_settings *s, const jl_scene_body *bodies, int n,
                        const jl_scene_options *o, jl_scene_sim **out, jl_error *err) {
  double t_start = jl_time_now();
  if (!out) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_create: no handle to fill");
  *out = NULL;
  jl_scene_settings sdef;
  jl_scene_options odef;
  if (!s) {
    jl_scene_settings_default(&sdef);
    s = &sdef;
  }
  if (!o) {
    jl_scene_options_default(&odef);
    o = &odef;
  }
  if (n < 1 || n > JL_SCENE_BODIES_MAX || !bodies)
    return jl_error_set(err, JL_ERR_INPUT, "bodies: %d given%s (expected 1 to %d)", n,
                        bodies ? "" : " as NULL", JL_SCENE_BODIES_MAX);
  jl_solver_kind kind;
  int rc = jl_api_settings_check(s, &kind, err);
  if (rc == JL_OK) rc = jl_api_options_check(o, err);
  if (rc != JL_OK) return rc;
  /* every body checked before anything is allocated */
  int dynamic = 0;
  jl_body_spec spec;
  for (int i = 0; i < n; ++i) {
    if ((rc = jl_api_body(&bodies[i], i, &spec, err)) != JL_OK) return rc;
    dynamic += !spec.is_static;
  }
  if (!dynamic) return jl_error_set(err, JL_ERR_INPUT, "bodies: no dynamic body (density > 0)");
  jl_scene_sim *sim = jl_api_sim_new(err);
  if (!sim) return JL_ERR_NOMEM;
  if ((rc = jl_api_device(sim, o, err)) != JL_OK) return jl_api_fail(sim, out, rc);
  if ((rc = jl_scene_init(&sim->scene, err)) != JL_OK) return jl_api_fail(sim, out, rc);
  jl_scene *sc = &sim->scene;
  memcpy(sc->gravity, s->gravity, sizeof sc->gravity);
  sc->dt = s->dt;
  jl_prox_opts_set_kind(&sc->solver, kind);
  if (s->iterations > 0) sc->solver.max_iter = s->iterations;
  jl_scene_set_pair(sc, 0, 0, s->friction, s->restitution, 0.0);
  if ((rc = jl_bodies_reserve(&sc->bodies, n, err)) != JL_OK) return jl_api_fail(sim, out, rc);
  for (int i = 0; i < n; ++i) {
    jl_api_body(&bodies[i], i, &spec, err);
    jl_error e2 = {0};
    int k = jl_scene_add_body(sc, &spec, &e2);
    if (k < 0)
      return jl_api_fail(sim, out, jl_error_set(err, -k, "bodies[%d]: %s", i, e2.msg));
  }
  jl_api_overrides(sim, o, t_start);
  if ((rc = jl_scene_sim_begin(sim, NULL, err)) != JL_OK) return jl_api_fail(sim, out, rc);
  *out = sim;
  return JL_OK;
}

int jl_scene_sim_step(jl_scene_sim *sim, long steps, jl_error *err) {
  if (!sim) return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_step: no scene");
  if (steps < 0) return jl_error_set(err, JL_ERR_INPUT, "steps: must be >= 0, got %ld", steps);
  const volatile sig_atomic_t *stop = sim->scene.solver.stop;
  for (long i = 0; i < steps && !jl_stop_requested(stop) && !jl_scene_sim_out_of_time(sim); ++i) {
    jl_scene_step_stats st;
    int rc = jl_scene_sim_advance(sim, &st, err);
    if (rc != JL_OK) return rc;
    if (st.not_finite) break;
  }
  return JL_OK;
}

int jl_scene_sim_body_count(const jl_scene_sim *sim) { return sim ? sim->scene.bodies.count : 0; }
double jl_scene_sim_dt(const jl_scene_sim *sim) { return sim ? sim->scene.dt : 0.0; }
double jl_scene_sim_time(const jl_scene_sim *sim) { return sim ? sim->run.time : 0.0; }
long jl_scene_sim_steps_done(const jl_scene_sim *sim) { return sim ? sim->run.step : 0; }
const char *jl_scene_sim_device_name(const jl_scene_sim *sim) { return sim ? sim->dev.name : ""; }

/* The scene's bodies made current (a download on the device, once per step at most). */
static int jl_api_fetch(jl_scene_sim *sim, const double *out, const char *what, jl_error *err) {
  if (!sim || !out)
    return jl_error_set(err, JL_ERR_INPUT, "jl_scene_sim_%s: no scene or no output", what);
  return jl_scene_runner_fetch(&sim->run, err);
}

/* width doubles per body of src into out. */
static void jl_api_copy(double *out, const double *src, int width, const jl_scene_sim *sim) {
  memcpy(out, src, (size_t)width * (size_t)sim->scene.bodies.count * sizeof(double));
}

int jl_scene_sim_positions(jl_scene_sim *sim, double *out, jl_error *err) {
  int rc = jl_api_fetch(sim, out, "positions", err);
  if (rc == JL_OK) jl_api_copy(out, sim->scene.bodies.pos, 3, sim);
  return rc;
}

int jl_scene_sim_orientations(jl_scene_sim *sim, double *out, jl_error *err) {
  int rc = jl_api_fetch(sim, out, "orientations", err);
  if (rc == JL_OK) jl_api_copy(out, sim->scene.bodies.quat, 4, sim);
  return rc;
}

int jl_scene_sim_velocities(jl_scene_sim *sim, double *out, jl_error *err) {
  int rc = jl_api_fetch(sim, out, "velocities", err);
  if (rc == JL_OK) jl_api_copy(out, sim->scene.bodies.vel, 3, sim);
  return rc;
}

int jl_scene_sim_angular_velocities(jl_scene_sim *sim, double *out, jl_error *err) {
  int rc = jl_api_fetch(sim, out, "angular_velocities", err);
  if (rc == JL_OK) jl_api_copy(out, sim->scene.bodies.omega, 3, sim);
  return rc;
}

void jl_scene_sim_free(jl_scene_sim *sim) {
  if (!sim) return;
  jl_scene_sim_end(sim);
  jl_scene_free(&sim->scene);
  free(sim);
}
