/* The CPU / device seam of a scene run (scene_runner.h). */
#include "scene_runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "body_order.h"
#include "broad_math.h"
#include "collide.h"

/* The mean longest box edge of the moving bodies, as the broad phase sizes
 * its cells (broad_math.h; 0 when none moves). */
static double jl_runner_body_size(const jl_bodies *b) {
  double sum = 0.0, box[6];
  long m = 0;
  for (int i = 0; i < b->count; ++i) {
    if (b->is_static[i] || b->shape[i] == JL_SHAPE_PLANE) continue;
    jl_bm_aabb(b->shape, b->size, b->pos, b->quat, i, 0.0, box);
    sum += jl_bm_longest_edge(box);
    m++;
  }
  return m > 0 ? sum / (double)m : 0.0;
}

static int jl_runner_set_anchor(jl_scene_runner *r, jl_error *err) {
  const jl_bodies *b = &r->ordered.bodies;
  if (!r->anchor) {
    r->anchor = malloc(3 * sizeof(double) * (size_t)(b->count > 0 ? b->count : 1));
    if (!r->anchor) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d bodies", b->count);
  }
  memcpy(r->anchor, b->pos, 3 * sizeof(double) * (size_t)b->count);
  return JL_OK;
}

int jl_scene_runner_init(jl_scene_runner *r, jl_scene *s, const jl_device *dev, jl_error *err) {
  memset(r, 0, sizeof *r);
  /* the device step is matrix-free: the scene says so (results, exports) */
  if (dev->kind == JL_DEVICE_CUDA) s->solver.matrix_free = 1;
  r->scene = s;
  r->run = s;
  r->dev = *dev;
  r->fresh = 1;
  r->check_every = JL_RUNNER_CHECK_EVERY;
  r->ordered = *s;
  r->ordered.bodies = (jl_bodies){0};
  int rc = jl_bodies_order_copy(&r->ordered.bodies, &s->bodies, s->body_order, &r->perm, err);
  if (rc != JL_OK) return rc;
  if (r->perm) {
    r->run = &r->ordered;
    r->body_size = jl_runner_body_size(&r->ordered.bodies);
    r->renew_steps = JL_RUNNER_RENEW_STEPS;
    r->renew_travel = JL_RUNNER_RENEW_TRAVEL;
    if ((rc = jl_runner_set_anchor(r, err)) != JL_OK) return rc;
  }
  if (dev->kind != JL_DEVICE_CUDA) return jl_stepper_init(&r->cpu, r->run, dev->threads, err);
  r->on_gpu = 1;
  rc = jl_scene_gpu_create(&r->gpu, dev, err);
  if (rc == JL_OK) rc = jl_scene_gpu_set_bodies(r->gpu, &r->run->bodies, err);
  if (rc != JL_OK) {
    jl_scene_gpu_destroy(r->gpu);
    r->gpu = NULL;
  }
  return rc;
}

/* The ordered copy takes the scene's current settings (a caller may change
 * them between steps, as with the scene itself); its bodies stay. */
static void jl_runner_sync_settings(jl_scene_runner *r) {
  if (!r->perm) return;
  jl_bodies b = r->ordered.bodies;
  r->ordered = *r->scene;
  r->ordered.bodies = b;
}

static int jl_runner_renew(jl_scene_runner *r, jl_error *err);

static int jl_runner_step_once(jl_scene_runner *r, jl_scene_run_stats *st, jl_error *err) {
  memset(st, 0, sizeof *st);
  jl_runner_sync_settings(r);
  if (!r->on_gpu) {
    jl_step_stats ss;
    int rc = jl_stepper_step(&r->cpu, &ss, err);
    if (rc != JL_OK) return rc;
    r->fresh = r->perm == NULL;
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
  int rc = jl_scene_gpu_step(r->gpu, r->run, r->check_every, &gs, err);
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

int jl_scene_runner_step(jl_scene_runner *r, jl_scene_run_stats *st, jl_error *err) {
  int rc = jl_runner_step_once(r, st, err);
  if (rc == JL_OK && r->perm && r->renew_steps > 0 && r->step % r->renew_steps == 0)
    rc = jl_runner_renew(r, err);
  return rc;
}

int jl_scene_runner_energy(jl_scene_runner *r, double *kinetic, double *potential, jl_error *err) {
  if (!r->have_energy) {
    if (r->fresh) {
      jl_scene_energy(r->scene, &r->ke, &r->pe);
    } else if (!r->on_gpu) {
      jl_scene_energy(r->run, &r->ke, &r->pe);
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
  if (r->fresh) return JL_OK;
  if (r->on_gpu) {
    int rc = jl_scene_gpu_get_bodies(r->gpu, &r->run->bodies, err);
    if (rc != JL_OK) return rc;
  }
  if (r->perm) jl_bodies_scatter(&r->scene->bodies, &r->run->bodies, r->perm);
  r->fresh = 1;
  return JL_OK;
}

typedef struct jl_keyed_impulse {
  uint64_t key;
  double imp[3];
} jl_keyed_impulse;

static int jl_keyed_impulse_cmp(const void *a, const void *b) {
  uint64_t u = ((const jl_keyed_impulse *)a)->key, v = ((const jl_keyed_impulse *)b)->key;
  return (u > v) - (u < v);
}

/* Keys and impulses renumbered: body i becomes map[i] (is_static in the new
 * numbering), sorted by the new keys. Two dynamic bodies whose order flips
 * swap the roles of a and b, so the impulse (normal from a to b, collide.h)
 * changes sign. */
static int jl_renumber_impulses(const int *map, const uint8_t *is_static, uint64_t *keys,
                                double *imp, int n, jl_error *err) {
  if (n <= 0) return JL_OK;
  jl_keyed_impulse *t = malloc(sizeof *t * (size_t)n);
  if (!t) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d impulses", n);
  const uint64_t body_mask = ((uint64_t)1 << JL_KEY_BODY_BITS) - 1;
  const uint64_t feature_mask = ((uint64_t)1 << JL_KEY_FEATURE_BITS) - 1;
  for (int c = 0; c < n; ++c) {
    int lo = (int)(keys[c] >> (JL_KEY_BODY_BITS + JL_KEY_FEATURE_BITS));
    int hi = (int)((keys[c] >> JL_KEY_FEATURE_BITS) & body_mask);
    int a = map[lo], b = map[hi];
    double sign = (a > b && !is_static[a] && !is_static[b]) ? -1.0 : 1.0;
    t[c].key = JL_CONTACT_KEY(a < b ? a : b, a < b ? b : a, keys[c] & feature_mask);
    for (int d = 0; d < 3; ++d) t[c].imp[d] = sign * imp[3 * c + d];
  }
  qsort(t, (size_t)n, sizeof *t, jl_keyed_impulse_cmp);
  for (int c = 0; c < n; ++c) {
    keys[c] = t[c].key;
    memcpy(imp + 3 * c, t[c].imp, sizeof t[c].imp);
  }
  free(t);
  return JL_OK;
}

int jl_scene_runner_impulses(jl_scene_runner *r, uint64_t **keys, double **imp, int *cap, int *n,
                             jl_error *err) {
  *n = 0;
  int rc;
  if (r->on_gpu) {
    rc = jl_scene_gpu_get_impulses(r->gpu, keys, imp, cap, n, err);
  } else {
    int m = r->cpu.prev_n;
    rc = jl_impulses_reserve(keys, imp, cap, m, err);
    if (rc == JL_OK && m > 0) {
      memcpy(*keys, r->cpu.prev_key, (size_t)m * sizeof(uint64_t));
      memcpy(*imp, r->cpu.prev_imp, 3 * (size_t)m * sizeof(double));
    }
    if (rc == JL_OK) *n = m;
  }
  if (rc == JL_OK && r->perm)
    rc = jl_renumber_impulses(r->perm, r->scene->bodies.is_static, *keys, *imp, *n, err);
  return rc;
}

/* jl_scene_runner_permute; downloaded: the ordered bodies hold the device's state already. */
static int jl_runner_apply(jl_scene_runner *r, const int *q, int downloaded, jl_error *err) {
  int n = r->ordered.bodies.count, rc = JL_OK;
  if (!r->perm) return jl_error_set(err, JL_ERR_INPUT, "permute: the run keeps the given order");
  if (r->on_gpu && !downloaded && (rc = jl_scene_gpu_get_bodies(r->gpu, &r->run->bodies, err)))
    return rc;
  int *inv = malloc(sizeof(int) * (size_t)n), *np = malloc(sizeof(int) * (size_t)n);
  double *na = malloc(3 * sizeof(double) * (size_t)n);
  uint64_t *keys = NULL;
  double *imp = NULL;
  int cap = 0, m = 0;
  if (!inv || !np || !na) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory renumbering %d bodies", n);
    goto done;
  }
  for (int k = 0; k < n; ++k) inv[k] = -1;
  for (int k = 0; k < n; ++k) {
    if (q[k] < 0 || q[k] >= n || inv[q[k]] >= 0) {
      rc = jl_error_set(err, JL_ERR_INPUT, "permute: not a permutation of %d bodies", n);
      goto done;
    }
    inv[q[k]] = k;
  }
  if (r->on_gpu) {
    rc = jl_scene_gpu_get_impulses(r->gpu, &keys, &imp, &cap, &m, err);
  } else {
    keys = r->cpu.prev_key;
    imp = r->cpu.prev_imp;
    m = r->cpu.prev_n;
  }
  if (rc == JL_OK) rc = jl_bodies_permute(&r->ordered.bodies, q, err);
  if (rc == JL_OK && !r->on_gpu) jl_broad_phase_drop_kept(&r->cpu.bp);  /* its pairs' numbers */
  if (rc == JL_OK) rc = jl_renumber_impulses(inv, r->ordered.bodies.is_static, keys, imp, m, err);
  if (rc == JL_OK && r->on_gpu) {
    rc = jl_scene_gpu_set_bodies(r->gpu, &r->run->bodies, err);
    if (rc == JL_OK) rc = jl_scene_gpu_set_impulses(r->gpu, keys, imp, m, err);
  }
  if (rc != JL_OK) goto done;
  for (int k = 0; k < n; ++k) {
    np[k] = r->perm[q[k]];
    memcpy(na + 3 * (size_t)k, r->anchor + 3 * (size_t)q[k], 3 * sizeof(double));
  }
  memcpy(r->perm, np, sizeof(int) * (size_t)n);
  memcpy(r->anchor, na, 3 * sizeof(double) * (size_t)n);
done:
  if (r->on_gpu) {
    free(keys);
    free(imp);
  }
  free(inv);
  free(np);
  free(na);
  return rc;
}

int jl_scene_runner_permute(jl_scene_runner *r, const int *q, jl_error *err) {
  return jl_runner_apply(r, q, 0, err);
}

/* The renewal (JL_RUNNER_RENEW_STEPS): the mean travel since the order was
 * set against the mean body size; past it, the spatial order of now. */
static int jl_runner_renew(jl_scene_runner *r, jl_error *err) {
  jl_bodies *b = &r->ordered.bodies;
  int rc;
  if (r->on_gpu && (rc = jl_scene_gpu_get_bodies(r->gpu, b, err)) != JL_OK) return rc;
  double travel = 0.0;
  long m = 0;
  for (int i = 0; i < b->count; ++i) {
    if (b->is_static[i] || b->shape[i] == JL_SHAPE_PLANE) continue;
    const double *p = b->pos + 3 * (size_t)i, *a = r->anchor + 3 * (size_t)i;
    travel += sqrt((p[0] - a[0]) * (p[0] - a[0]) + (p[1] - a[1]) * (p[1] - a[1]) +
                   (p[2] - a[2]) * (p[2] - a[2]));
    m++;
  }
  if (m == 0 || !(travel > r->renew_travel * r->body_size * (double)m)) return JL_OK;
  int *q = malloc(sizeof(int) * (size_t)b->count);
  if (!q) return jl_error_set(err, JL_ERR_NOMEM, "out of memory ordering %d bodies", b->count);
  rc = jl_bodies_spatial_order(b, q, err);
  int identity = 1;
  for (int k = 0; rc == JL_OK && k < b->count && identity; ++k) identity = q[k] == k;
  if (rc == JL_OK && !identity) rc = jl_runner_apply(r, q, 1, err);
  free(q);
  if (rc == JL_OK) rc = jl_runner_set_anchor(r, err);
  if (rc == JL_OK && !identity) r->reorders++;
  return rc;
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
  if (!r->on_gpu && !r->perm) {
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
  if (r->perm) jl_bodies_free(&r->ordered.bodies);
  free(r->perm);
  free(r->anchor);
  if (r->on_gpu) {
    jl_gpu_stats_ws_free(&r->ws);
    jl_scene_gpu_destroy(r->gpu);
  } else {
    jl_stepper_free(&r->cpu);
  }
  memset(r, 0, sizeof *r);
}
