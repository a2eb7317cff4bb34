/* Moreau midpoint stepping: integrate, collide, set up, solve, integrate.
 * The per-body and per-contact arithmetic is shared with the device step
 * and its twin: integrate.h (steps 1, 2, 7), step_math.h (3, 5, 6, memory). */
#include "scene_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collide.h"
#include "device.h"
#include "grid_pairs.h"
#include "integrate.h"
#include "parallel.h"
#include "step_math.h"
#include "team.h"
#include "timer.h"

int jl_stepper_init(jl_stepper *st, jl_scene *scene, int threads, jl_error *err) {
  memset(st, 0, sizeof *st);
  st->scene = scene;
  st->threads = threads > 0 ? threads : 1;
  int rc = jl_broad_phase_init(&st->bp, err);
  if (rc) return rc;
  /* threads beyond the cores would only wait at the teams' barriers */
  int cores = jl_cpu_count(), members = st->threads < cores ? st->threads : cores;
  if (members > 1 && !(st->pool = jl_team_pool_new(members, err))) return err ? err->code : JL_ERR_NOMEM;
  st->bp.pool = st->pool;
  st->bp.keep_skin = JL_GP_SKIN;  /* the pair list kept while the boxes stay in their skins */
  return jl_contacts_init(&st->contacts, 64, err);
}

void jl_stepper_free(jl_stepper *st) {
  if (!st) return;
  jl_broad_phase_free(&st->bp);
  jl_team_pool_free(st->pool);
  jl_contacts_free(&st->contacts);
  jl_contact_problem_free(&st->prob);
  jl_prox_ws_free(&st->ws);
  free(st->lambda);
  free(st->law);
  free(st->key_order);
  free(st->dv_free);
  free(st->prev_key);
  free(st->prev_imp);
  memset(st, 0, sizeof *st);
}

static int jl_step_reserve(jl_stepper *st, int n, int nb, jl_error *err) {
  if (n > st->contact_cap) {
    int cap = n + n / 2 + 16;
    double *l = realloc(st->lambda, 3 * sizeof(double) * (size_t)cap);
    if (l) st->lambda = l;
    double *w = realloc(st->law, 3 * sizeof(double) * (size_t)cap);
    if (w) st->law = w;
    jl_key_index *o = realloc(st->key_order, sizeof *o * (size_t)cap);
    if (o) st->key_order = o;
    if (!l || !w || !o) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", n);
    st->contact_cap = cap;
  }
  if (nb > st->body_cap) {
    double *d = realloc(st->dv_free, 6 * sizeof(double) * (size_t)nb);
    if (!d) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d bodies", nb);
    st->dv_free = d;
    st->body_cap = nb;
  }
  return JL_OK;
}

static int jl_key_cmp(const void *a, const void *b) {
  uint64_t x = ((const jl_key_index *)a)->key, y = ((const jl_key_index *)b)->key;
  return x < y ? -1 : x > y;
}

/* The narrow phase gives the keys ascending pair by pair (collide.h), so
 * only a pair's few points can be out of order: insertion sort, unless it
 * would move more than this many entries per key. */
#define JL_STEP_SORT_MOVES 8

void jl_step_sort_keys(const uint64_t *key, int n, jl_key_index *out) {
  long moves = 0, budget = (long)JL_STEP_SORT_MOVES * n;
  int e = 0;
  for (; e < n && moves <= budget; ++e) {
    jl_key_index x = {key[e], e};
    int j = e;
    while (j > 0 && out[j - 1].key > x.key) {
      out[j] = out[j - 1];
      --j;
    }
    moves += e - j;
    out[j] = x;
  }
  if (e < n) {
    for (; e < n; ++e) out[e] = (jl_key_index){key[e], e};
    /* keys are unique per step: any sort gives this order */
    qsort(out, (size_t)n, sizeof *out, jl_key_cmp);
  }
}

int jl_step_keep_closed(jl_contacts *c, const uint8_t *is_static, double contact_tol,
                        double *max_pen) {
  int n = 0;
  *max_pen = 0.0;
  for (int i = 0; i < c->count; ++i) {
    if (!jl_st_closed(c->gap[i], c->body_a[i], c->body_b[i], is_static, contact_tol)) continue;
    if (-c->gap[i] > *max_pen) *max_pen = -c->gap[i];
    if (n != i) {
      c->body_a[n] = c->body_a[i];
      c->body_b[n] = c->body_b[i];
      memcpy(c->point + 3 * (size_t)n, c->point + 3 * (size_t)i, 3 * sizeof(double));
      memcpy(c->normal + 3 * (size_t)n, c->normal + 3 * (size_t)i, 3 * sizeof(double));
      c->gap[n] = c->gap[i];
      c->key[n] = c->key[i];
    }
    ++n;
  }
  c->count = n;
  return n;
}

/* Room for n remembered contacts. */
static int jl_step_remember_reserve(int n, uint64_t **prev_key, double **prev_imp, int *prev_cap,
                                    jl_error *err) {
  if (n <= *prev_cap) return JL_OK;
  int cap = n + n / 2 + 16;
  uint64_t *k = realloc(*prev_key, sizeof(uint64_t) * (size_t)cap);
  if (k) *prev_key = k;
  double *p = realloc(*prev_imp, 3 * sizeof(double) * (size_t)cap);
  if (p) *prev_imp = p;
  if (!k || !p) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", n);
  *prev_cap = cap;
  return JL_OK;
}

/* Remembered slots [lo, hi) from the sorted keys. */
static void jl_step_remember_slots(const jl_key_index *order, const double *frame,
                                   const double *lambda, int lo, int hi, uint64_t *prev_key,
                                   double *prev_imp) {
  for (int e = lo; e < hi; ++e) {
    int i = order[e].i;
    prev_key[e] = order[e].key;
    jl_st_world_impulse(frame + 9 * (size_t)i, lambda + 3 * (size_t)i, prev_imp + 3 * (size_t)e);
  }
}

int jl_step_remember(const uint64_t *key, const double *frame, const double *lambda, int n,
                     uint64_t **prev_key, double **prev_imp, int *prev_cap, int *prev_n,
                     jl_error *err) {
  int rc = jl_step_remember_reserve(n, prev_key, prev_imp, prev_cap, err);
  if (rc) return rc;
  jl_key_index *tmp = malloc(sizeof *tmp * (size_t)(n > 0 ? n : 1));
  if (!tmp) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", n);
  jl_step_sort_keys(key, n, tmp);
  jl_step_remember_slots(tmp, frame, lambda, 0, n, *prev_key, *prev_imp);
  *prev_n = n;
  free(tmp);
  return JL_OK;
}

/* Items per thread below which a stage of the step runs on fewer threads
 * (a team's start costs about as much as a few hundred contacts). */
#define JL_STEP_MIN_PER_THREAD 512

typedef struct jl_step_job {
  jl_stepper *st;
  int n;
  double half_dt;
  double *mu, *eps_n, *eps_t; /* per contact: the law, in st->law */
} jl_step_job;

/* Steps 4 and 5 per contact: the pair's law, the setup (frames, W, c),
 * and the warm start (it needs the contact's frame). */
static void jl_step_contacts_team(void *ctx, int tid, jl_team *team) {
  jl_step_job *j = ctx;
  jl_stepper *st = j->st;
  const jl_scene *s = st->scene;
  const jl_bodies *b = &s->bodies;
  const jl_contacts *c = &st->contacts;
  int lo, hi;
  jl_team_share(j->n, tid, team->size, &lo, &hi);
  for (int i = lo; i < hi; ++i) {
    int m = b->material[c->body_a[i]] * JL_MATERIALS_MAX + b->material[c->body_b[i]];
    j->mu[i] = s->mu[m];
    j->eps_n[i] = s->eps_n[m];
    j->eps_t[i] = s->eps_t[m];
  }
  jl_contact_law law = {j->mu, j->eps_n, j->eps_t};
  jl_contact_setup_contacts(&st->prob, b, c, &law, st->dv_free, lo, hi);
  if (!s->solver.warm_start) {
    memset(st->lambda + 3 * (size_t)lo, 0, 3 * sizeof(double) * (size_t)(hi - lo));
    return;
  }
  for (int i = lo; i < hi; ++i)
    jl_st_warm(c->key[i], st->prob.frame + 9 * (size_t)i, st->prev_key, st->prev_imp, st->prev_n,
               st->lambda + 3 * (size_t)i);
}

/* Steps 6 and 7 per body (a body's end position needs only its own end
 * velocity), and the warm-start memory per sorted slot. */
static void jl_step_end_team(void *ctx, int tid, jl_team *team) {
  jl_step_job *j = ctx;
  jl_stepper *st = j->st;
  jl_bodies *b = &st->scene->bodies;
  const jl_contact_problem *p = &st->prob;
  int lo, hi;
  jl_team_share(b->count, tid, team->size, &lo, &hi);
  for (int k = lo; k < hi; ++k) {
    jl_st_end_velocity_body(k, b->is_static, st->dv_free, p->body_ptr, p->body_contact, p->ka,
                            p->frame, p->irx, p->im, st->lambda, b->vel, b->omega);
    jl_int_half_step_body(b->is_static, b->pos, b->quat, b->vel, b->omega, k, j->half_dt);
  }
  jl_team_share(j->n, tid, team->size, &lo, &hi);
  jl_step_remember_slots(st->key_order, p->frame, st->lambda, lo, hi, st->prev_key, st->prev_imp);
}

/* Steps 1 and 2 per body: the mid-point position, then h there (a body's
 * free velocity needs only its own mid-point state). */
static void jl_step_begin_team(void *ctx, int tid, jl_team *team) {
  jl_step_job *j = ctx;
  const jl_scene *s = j->st->scene;
  jl_bodies *b = &j->st->scene->bodies;
  int lo, hi;
  jl_team_share(b->count, tid, team->size, &lo, &hi);
  for (int k = lo; k < hi; ++k) {
    jl_int_half_step_body(b->is_static, b->pos, b->quat, b->vel, b->omega, k, j->half_dt);
    jl_int_free_velocity_body(b->is_static, b->quat, b->omega, b->inv_inertia, s->gravity, s->dt, k,
                              j->st->dv_free + 6 * (size_t)k);
  }
}

/* With timing on: the seconds since *t0 added to stage k; *t0 moves on. */
static void jl_step_lap(jl_stepper *st, int k, double *t0) {
  if (!st->timing) return;
  double t = jl_time_now();
  st->stage_s[k] += t - *t0;
  *t0 = t;
}

int jl_stepper_step(jl_stepper *st, jl_step_stats *stats, jl_error *err) {
  jl_scene *s = st->scene;
  jl_bodies *b = &s->bodies;
  double dt = s->dt;
  int nb = b->count, rc;
  double lap = st->timing ? jl_time_now() : 0.0;
  if ((rc = jl_step_reserve(st, 0, nb, err))) return rc;
  /* 1. mid-point positions; 2. h at the mid-point, with u_S */
  jl_step_job begin = {st, 0, 0.5 * dt, NULL, NULL, NULL};
  if ((rc = jl_team_pool_run(st->pool, jl_parallel_threads(st->threads, nb, JL_STEP_MIN_PER_THREAD),
                             jl_step_begin_team, &begin, err)))
    return rc;
  jl_step_lap(st, JL_STEP_STAGE_INTEGRATE, &lap);
  /* 3. contacts at the mid-point; keep the closed ones */
  double margin = s->contact_tol > 0 ? 2.0 * s->contact_tol : 1e-12;
  st->bp.keep_ahead_s = JL_GP_AHEAD_STEPS * dt;
  if ((rc = jl_collide(b, margin, st->threads, &st->bp, &st->contacts, err))) return rc;
  jl_contacts *c = &st->contacts;
  double max_pen;
  int n = jl_step_keep_closed(c, b->is_static, s->contact_tol, &max_pen);
  jl_step_lap(st, JL_STEP_STAGE_COLLIDE, &lap);
  if ((rc = jl_step_reserve(st, n, nb, err))) return rc;
  /* 4. setup with per-pair laws; 5. the warm start */
  jl_step_job job = {st, n, 0.5 * dt, st->law, st->law + st->contact_cap,
                     st->law + 2 * (size_t)st->contact_cap};
  if ((rc = jl_contact_setup_begin(&st->prob, n, nb, err))) return rc;
  if ((rc = jl_team_pool_run(st->pool, jl_parallel_threads(st->threads, n, JL_STEP_MIN_PER_THREAD),
                        jl_step_contacts_team, &job, err)))
    return rc;
  if ((rc = jl_contact_setup_bodies(&st->prob, err))) return rc;
  int mf = s->solver.matrix_free;
  if (mf == JL_MATRIX_FREE_AUTO)
    mf = jl_contact_g_estimate(&st->prob) > (long long)JL_MATRIX_FREE_BLOCKS * n;
  if ((!mf || st->keep_g) && (rc = jl_contact_build_g(&st->prob, st->threads, err))) return rc;
  st->matrix_free_used = mf;
  jl_step_lap(st, JL_STEP_STAGE_SETUP, &lap);
  /* 5. the solve */
  jl_prox_opts o = s->solver;
  o.threads = st->threads;
  o.pool = st->pool;
  o.matrix_free = mf;
  o.timing = st->timing;
  jl_prox_stats ps;
  if ((rc = jl_prox_solve(&st->prob, &o, st->lambda, &st->ws, &ps, err))) return rc;
  st->colours = ps.colours;
  if (st->timing) {
    st->stage_s[JL_STEP_STAGE_COLOUR] += ps.colour_s;
    st->stage_s[JL_STEP_STAGE_SOLVE] -= ps.colour_s;
    st->solve_wait_s += ps.wait_s;
  }
  jl_step_lap(st, JL_STEP_STAGE_SOLVE, &lap);
  /* 6. end velocities: u_S + dv_free + sum over the body's contacts of M^-1 W Lambda;
   * 7. end positions; the warm-start memory (jl_step_remember's) */
  if ((rc = jl_step_remember_reserve(n, &st->prev_key, &st->prev_imp, &st->prev_cap, err))) return rc;
  jl_step_sort_keys(c->key, n, st->key_order);
  int items = nb > n ? nb : n;
  if ((rc = jl_team_pool_run(st->pool, jl_parallel_threads(st->threads, items, JL_STEP_MIN_PER_THREAD),
                        jl_step_end_team, &job, err)))
    return rc;
  st->prev_n = n;
  st->step++;
  st->time = st->step * dt;
  if (stats) {
    memset(stats, 0, sizeof *stats);
    stats->step = st->step;
    stats->time = st->time;
    stats->contacts = n;
    stats->iterations = ps.iterations;
    stats->residual = ps.residual;
    stats->converged = ps.converged;
    stats->restarts = ps.restarts;
    stats->max_penetration = max_pen;
    stats->pairs_kept = st->bp.kept;
    jl_scene_energy(s, &stats->kinetic, &stats->potential);
  }
  jl_step_lap(st, JL_STEP_STAGE_FINISH, &lap);
  return JL_OK;
}

const char *jl_step_stage_name(int stage) {
  static const char *const names[JL_STEP_STAGES] = {"integrate", "collide", "setup",
                                                   "colour", "solve", "finish"};
  return stage >= 0 && stage < JL_STEP_STAGES ? names[stage] : "?";
}
