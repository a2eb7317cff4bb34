/* The CPU / device seam of a scene run (scene_runner.h). */
#include "scene_runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int jl_scene_runner_init(jl_scene_runner *r, jl_scene *s, const jl_device *dev, jl_error *err) {
  memset(r, 0, sizeof *r);
  r->scene = s;
  r->dev = *dev;
  r->fresh = 1;
  r->check_every = JL_RUNNER_CHECK_EVERY;
  if (dev->kind != JL_DEVICE_CUDA) return jl_stepper_init(&r->cpu, s, dev->threads, err);
  r->on_gpu = 1;
  int rc = jl_scene_gpu_create(&r->gpu, dev, err);
  if (rc == JL_OK) rc = jl_scene_gpu_set_bodies(r->gpu, &s->bodies, err);
  if (rc != JL_OK) {
    jl_scene_gpu_destroy(r->gpu);
    r->gpu = NULL;
  }
  return rc;
}

int jl_scene_runner_step(jl_scene_runner *r, jl_scene_run_stats *st, jl_error *err) {
  memset(st, 0, sizeof *st);
  if (!r->on_gpu) {
    jl_step_stats ss;
    int rc = jl_stepper_step(&r->cpu, &ss, err);
    if (rc != JL_OK) return rc;
    r->step = ss.step;
    r->time = ss.time;
    r->ke = ss.kinetic; /* the stepper computes them anyway */
    r->pe = ss.potential;
    r->have_energy = 1;
    st->step = ss.step;
    st->time = ss.time;
    st->contacts = ss.contacts;
    st->iterations = ss.iterations;
    st->converged = ss.converged;
    st->restarts = ss.restarts;
    st->residual = ss.residual;
    st->max_penetration = ss.max_penetration;
    return JL_OK;
  }
  jl_gpu_step_stats gs;
  int rc = jl_scene_gpu_step(r->gpu, r->scene, r->check_every, &gs, err);
  if (rc != JL_OK) return rc;
  r->fresh = 0;
  r->have_energy = 0;
  r->step++;
  r->time = r->step * r->scene->dt; /* as jl_stepper_step */
  st->step = r->step;
  st->time = r->time;
  st->contacts = gs.contacts;
  st->iterations = gs.iterations;
  st->converged = gs.converged;
  st->restarts = gs.restarts;
  st->residual = gs.residual;
  st->max_penetration = gs.max_penetration;
  return JL_OK;
}

int jl_scene_runner_energy(jl_scene_runner *r, double *kinetic, double *potential, jl_error *err) {
  if (!r->have_energy) {
    if (!r->on_gpu || r->fresh) {
      jl_scene_energy(r->scene, &r->ke, &r->pe);
    } else {
      int rc = jl_scene_gpu_energy(r->gpu, r->scene->gravity, &r->ws, &r->ke, &r->pe, err);
      if (rc != JL_OK) return rc;
    }
    r->have_energy = 1;
  }
  *kinetic = r->ke;
  *potential = r->pe;
  return JL_OK;
}

int jl_scene_runner_fetch(jl_scene_runner *r, jl_error *err) {
  if (!r->on_gpu || r->fresh) return JL_OK;
  int rc = jl_scene_gpu_get_bodies(r->gpu, &r->scene->bodies, err);
  if (rc == JL_OK) r->fresh = 1;
  return rc;
}

int jl_scene_runner_impulses(jl_scene_runner *r, uint64_t **keys, double **imp, int *cap, int *n,
                             jl_error *err) {
  *n = 0;
  if (r->on_gpu) return jl_scene_gpu_get_impulses(r->gpu, keys, imp, cap, n, err);
  int m = r->cpu.prev_n;
  int rc = jl_impulses_reserve(keys, imp, cap, m, err);
  if (rc != JL_OK) return rc;
  if (m > 0) {
    memcpy(*keys, r->cpu.prev_key, (size_t)m * sizeof(uint64_t));
    memcpy(*imp, r->cpu.prev_imp, 3 * (size_t)m * sizeof(double));
  }
  *n = m;
  return JL_OK;
}

int jl_scene_runner_sync(jl_scene_runner *r, jl_error *err) {
  return r->on_gpu ? jl_scene_gpu_sync(r->gpu, err) : JL_OK;
}

/* dst = src with its own copy of the bodies. */
static int jl_scene_clone(jl_scene *dst, const jl_scene *src, jl_error *err) {
  *dst = *src;
  return jl_bodies_copy(&dst->bodies, &src->bodies, err);
}

static void jl_scene_runner_free_aux(jl_scene_runner *r) {
  if (!r->have_aux) return;
  jl_stepper_free(&r->aux);
  jl_bodies_free(&r->aux_scene.bodies);
  r->have_aux = 0;
}

int jl_scene_runner_step_problem(jl_scene_runner *r, jl_scene_run_stats *st,
                                 const jl_contact_problem **prob, jl_error *err) {
  *prob = NULL;
  if (!r->on_gpu) {
    int keep = r->cpu.keep_g;
    r->cpu.keep_g = 1;
    int rc = jl_scene_runner_step(r, st, err);
    r->cpu.keep_g = keep;
    if (rc == JL_OK) *prob = &r->cpu.prob;
    return rc;
  }
  jl_scene_runner_free_aux(r);
  int rc = jl_scene_runner_fetch(r, err);
  if (rc != JL_OK) return rc;
  rc = jl_scene_clone(&r->aux_scene, r->scene, err);
  if (rc != JL_OK) {
    jl_bodies_free(&r->aux_scene.bodies);
    return rc;
  }
  r->have_aux = 1;
  r->aux_scene.solver.max_iter = 1; /* the problem is set up before the solve */
  if ((rc = jl_stepper_init(&r->aux, &r->aux_scene, r->dev.threads, err)) != JL_OK) return rc;
  r->aux.keep_g = 1;
  if ((rc = jl_stepper_step(&r->aux, NULL, err)) != JL_OK) return rc;
  if ((rc = jl_scene_runner_step(r, st, err)) != JL_OK) return rc;
  *prob = &r->aux.prob;
  return JL_OK;
}

void jl_scene_runner_free(jl_scene_runner *r) {
  jl_scene_runner_free_aux(r);
  if (r->on_gpu) {
    jl_gpu_stats_ws_free(&r->ws);
    jl_scene_gpu_destroy(r->gpu);
  } else {
    jl_stepper_free(&r->cpu);
  }
  memset(r, 0, sizeof *r);
}
