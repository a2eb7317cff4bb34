#include "circle_search.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "circle_batch.h"
#include "circle_checkpoint.h"
#include "circle_cross.h"
#include "circle_elite.h"
#include "progress.h"
#include "stop_flag.h"
#include "timer.h"

/* Candidates this close to the best (relative) are worth a polish. */
#define JL_POLISH_WINDOW 1e-2
#define JL_POLISH_MAX_THREADS 256
/* --adopt-by spread: a candidate counts as near an elite member within this
 * many crowding distances (the walk's near-copies of an arrangement lie
 * 1e-3 to 5e-3 from it, other arrangements mostly 0.05 to 0.28; design.md). */
#define JL_ADOPT_NEAR_FAMILIES 2.0

/* The neighbour lists' skin, relative to the mean radius: a wider one lists
 * more circles, a narrower one is rebuilt more often. In the search's own
 * launches on the CPU twin (n = 200, 500, 1000, radii 1..n and equal) 0.25,
 * 0.5, 1 and 2 gave about the same steps per second; 1 rebuilds every
 * 140-320 steps. */
#define JL_NBR_SKIN 1.0

void jl_circle_search_opts_default(jl_circle_search_opts *o) {
  memset(o, 0, sizeof *o);
  o->mode = JL_MODE_POPULATION;
  o->seed = 1;
  o->adopt = 0.5;
  o->behind_adopt = -1.0;
  o->cross = JL_CROSS_DEFAULT;
  o->walk = JL_WALK_DEFAULT;
  o->aim = JL_WALK_AIM_DEFAULT;
  o->tenure = JL_WALK_TENURE_DEFAULT;
  o->probe = JL_WALK_PROBE_DEFAULT;
  o->crowding = -1.0;  /* by the batch: JL_CROWD_MIN_BATCH */
  o->progress = 1;
}

const char *jl_search_mode_name(jl_search_mode m) {
  switch (m) {
  case JL_MODE_TRIALS: return "trials";
  case JL_MODE_INSTANCES: return "instances";
  default: return "population";
  }
}

int jl_search_mode_parse(const char *s, jl_search_mode *m) {
  if (strcmp(s, "population") == 0) *m = JL_MODE_POPULATION;
  else if (strcmp(s, "trials") == 0) *m = JL_MODE_TRIALS;
  else if (strcmp(s, "instances") == 0) *m = JL_MODE_INSTANCES;
  else return -1;
  return 0;
}

void jl_relax_params_default(jl_relax_params *p, const double *r_sorted, int n, uint64_t seed) {
  memset(p, 0, sizeof *p);
  double rmax = 0.0;
  for (int i = 0; i < n; ++i) rmax = fmax(rmax, r_sorted[i]);
  p->n = n;
  p->relax = JL_RELAX_FIRE;
  /* dt_max 2 went unstable (3x the steps per trial); 0.5 and 1 did alike */
  p->fire_dt0 = 0.1;
  p->fire_dtmax = 1.0;
  p->max_steps = 4096;
  p->compress_iters = 100;
  p->stall_ratio = 0.97;
  p->trials = 1;
  p->area_weighted = 0;
  p->tol = 1e-9 * rmax;
  p->delta0 = 5e-2;
  p->delta_min = 1e-5;
  p->delta_trial = 2e-3;
  p->trial_slack = 3e-4;
  p->accept_rel = 1e-6;
  /* swap-next stays the most frequent move (seed 4.1.2.2); the rest share */
  p->p_swap_next = 0.4;
  p->p_swap = 0.2;
  p->p_jump = 0.2;
  /* Record-to-record travel: keep trials up to a band above the
   * candidate's record, so it walks across the near-equal basins around a
   * record (n = 19, 20: never reached with improvements only). One band did
   * not suit every n on the H200 (3e-4 reached n = 25, 1e-3 did better at
   * n = 30), so the candidates take 3e-4 and 1e-3 in turn. */
  p->accept_worse = 3e-4;
  p->band_levels = 2;
  p->band_ratio = 10.0 / 3.0;
  /* The fixed-container walk (jl_relax_walk_step); off here, the search
   * turns it on. Measured at n = 30 on H200s (docs/benchmarks.md):
   * moving to the best of 8 neighbours always (tabu search) did far better
   * than moving only downhill (3.7e-4 against 1.7e-3 above the record, seed 1);
   * a ladder from 1e-4 instead of 2e-4 below the record did no better. */
  p->walk_every = 0;
  p->walk_k = jl_walk_k_default(n);
  p->walk_shrink = 2e-4;
  p->walk_levels = 3;
  p->walk_ratio = 3.0;
  p->walk_tenure = JL_WALK_TENURE_DEFAULT;
  p->walk_reset = jl_walk_reset_default(n);
  p->walk_aim = JL_WALK_AIM_DEFAULT;
  p->walk_probe = JL_WALK_PROBE_DEFAULT;
  /* Neighbour lists: off here; the search and the benchmark choose by
   * device and n (jl_circle_nbr_auto). The skin is a share of the mean radius. */
  double rsum = 0.0;
  for (int i = 0; i < n; ++i) rsum += r_sorted[i];
  p->nbr = 0;
  p->nbr_skin = n > 0 ? JL_NBR_SKIN * rsum / n : 0.0;
  p->seed = seed;
}


typedef struct jl_radius_idx {
  double r;
  int i;
} jl_radius_idx;

static int jl_cmp_radius(const void *a, const void *b) {
  const jl_radius_idx *u = a, *v = b;
  if (u->r != v->r) return u->r < v->r ? -1 : 1;
  return u->i - v->i;
}

int jl_circle_sorted_init(jl_circle_sorted *s, const jl_circle_problem *prob, jl_error *err) {
  s->n = prob->n;
  s->r = malloc(sizeof(double) * (size_t)prob->n);
  s->orig = malloc(sizeof(int) * (size_t)prob->n);
  jl_radius_idx *tmp = malloc(sizeof(jl_radius_idx) * (size_t)prob->n);
  if (!s->r || !s->orig || !tmp) {
    free(tmp);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < prob->n; ++i) tmp[i] = (jl_radius_idx){prob->radii[i], i};
  qsort(tmp, (size_t)prob->n, sizeof *tmp, jl_cmp_radius);
  for (int k = 0; k < prob->n; ++k) {
    s->r[k] = tmp[k].r;
    s->orig[k] = tmp[k].i;
  }
  free(tmp);
  return JL_OK;
}

void jl_circle_sorted_free(jl_circle_sorted *s) {
  free(s->r);
  free(s->orig);
}

/* Candidate c of the batch into a packing in problem order. */
static void jl_batch_to_packing(const jl_circle_batch *b, int c, const jl_circle_sorted *s,
                                jl_circle_packing *pk) {
  for (int k = 0; k < s->n; ++k) {
    int i = s->orig[k];
    pk->x[i] = b->x[(size_t)c * s->n + k];
    pk->y[i] = b->y[(size_t)c * s->n + k];
    pk->r[i] = s->r[k];
  }
  jl_circle_packing_update_R(pk);
}

/* A packing into candidate c. fresh: a new chain starts there (adoption,
 * resume), with its own record and stuck count; otherwise it is the same
 * chain, polished, whose record can only fall. */
static void jl_packing_to_batch(const jl_circle_packing *pk, const jl_circle_sorted *s,
                                jl_circle_batch *b, int c, int fresh) {
  for (int k = 0; k < s->n; ++k) {
    int i = s->orig[k];
    b->x[(size_t)c * s->n + k] = pk->x[i];
    b->y[(size_t)c * s->n + k] = pk->y[i];
  }
  b->R[c] = pk->R;
  b->need_start[c] = JL_START_NONE;
  if (fresh || !(b->R_rec[c] > 0.0) || pk->R < b->R_rec[c]) b->R_rec[c] = pk->R;
  if (fresh) {
    b->stuck[c] = 0;
    b->Rt[c] = 0.0;
  }
}

/* CPU candidates per thread: 8 gives the population room. On 2 threads at a
 * 30 s cap, 2 per thread reached n = 5..13 and 15; 8 per thread also
 * reached 14, 16 and 18 and ended 17, 19, 20 about half as far from the
 * record (16 per thread did alike). */
#define JL_CPU_CANDIDATES_PER_THREAD 8

static int jl_auto_batch(const jl_device *dev, int n, jl_search_mode mode) {
  return jl_circle_auto_batch(dev, n, mode == JL_MODE_TRIALS ? 4 : JL_CPU_CANDIDATES_PER_THREAD);
}

int jl_circle_search_batch(const jl_device *dev, int n, const jl_circle_search_opts *o) {
  return o->batch > 0 ? o->batch : jl_auto_batch(dev, n, o->mode);
}

/* Rounds of about a second (polish often, answer Ctrl-C quickly): a budget
 * of relaxation steps per candidate, in proportion to 1/n. Shorter GPU
 * rounds (400000 / n) left the GPU idle during polishing and did worse. */
#define JL_STEP_BUDGET_N 2000000
/* A launch under --time never runs longer than this: the host cuts it
 * (each candidate stops at its next poll, legal), so large packings, whose
 * walk steps and starts outlast any step budget, still end their rounds,
 * polish, show progress and meet --time. */
#define JL_LAUNCH_MAX_S 1.0
/* Under --time a launch's step budget is sized from the last launch's step
 * rate to end by itself after about this long, before the cut. */
#define JL_LAUNCH_TARGET_S 0.8
/* Launches shorter than this give no rate worth sizing by (timer noise). */
#define JL_LAUNCH_RATE_MIN_S 0.01
/* ... nor a slowdown of the machine (jl_polish_opts.slow). */
#define JL_SLOW_MIN_LAUNCH_S 0.05
/* The polish after the last launch may run this far past --time, so a
 * record found at the end is not lost unpolished. */
#define JL_POLISH_GRACE_S 0.5
/* Under --time one round's polish takes at most this long (SLSQP at
 * n = 200 takes seconds); what it reached goes back into its candidates
 * and the next round's polish goes on from there. */
#define JL_POLISH_ROUND_MAX_S 1.0

/* Polish jobs run on all host threads at once; each has its own packing. */
typedef struct jl_polish_job {
  jl_circle_packing pk;
  int cand;
  double R_from;           /* the candidate's R when the job was taken */
  int legal;
  int rc;
  jl_error err;
  double iter_s;           /* jl_polish_opts.iter_s: in the run's estimate, out this job's */
} jl_polish_job;

typedef struct jl_polish_pool {
  jl_polish_job *jobs;
  int count;
  atomic_int next;
  double deadline;         /* the round's polish ends (0: none) */
  double end;              /* the run's end, grace included (0: none) */
  double slow;             /* jl_polish_opts.slow */
  volatile sig_atomic_t *stop;
} jl_polish_pool;

typedef struct jl_search_state {
  jl_circle_packing best;  /* polished, legal, problem order */
  jl_circle_elite elite;   /* the best polished packings, one per family */
  double *polished_R;      /* per candidate: R when last polished (skip repeats) */
  jl_polish_job *jobs;     /* polish_slots jobs */
  int polish_slots, threads;
  double t0, t_best;
  double deadline;         /* t0 + --time (0: none) */
  double polish_iter_s;    /* the most CPU seconds an SLSQP iteration has taken */
  double launch_s, polish_s; /* time in the launches and in the polish */
  double slow;             /* on the CPU: the last launch's threads x wall over CPU seconds */
  int njobs;               /* the polish jobs taken (jl_search_polish_take) */
  jl_polish_pool pool;     /* ... and the threads polishing them */
  pthread_t tid[JL_POLISH_MAX_THREADS];
  int started;
  volatile sig_atomic_t *stop;
  uint64_t restarts, adoptions, crossovers;
  double *cross_tmp;       /* JL_CROSS_TMP_DOUBLES(n): a child's scratch (--cross) */
  jl_circle_packing view;  /* one candidate's packing, problem order (--adopt-by spread) */
  int crowd[JL_ELITE_MAX]; /* candidates near each elite member, this round */
  double *rec_tmp;         /* one double per candidate: the records, sorted (jl_restart_rule) */
} jl_search_state;

static void *jl_polish_worker(void *arg) {
  jl_polish_pool *pool = arg;
  jl_polish_opts po;
  jl_polish_opts_default(&po);
  po.deadline = pool->deadline;
  po.end = pool->end;
  po.slow = pool->slow;
  po.stop = pool->stop;
  for (;;) {
    int k = atomic_fetch_add(&pool->next, 1);
    if (k >= pool->count) break;
    jl_polish_job *job = &pool->jobs[k];
    int imp = 0;
    po.iter_s = &job->iter_s;
    job->rc = jl_circle_polish(&job->pk, &po, &imp, &job->err);
    jl_circle_check chk;
    jl_circle_check_packing(&job->pk, JL_LEGAL_REL_TOL, &chk);
    job->legal = job->rc == JL_OK && chk.legal;
  }
  return NULL;
}

/* The polish, in three parts: take, finish, merge. On a CUDA device the
 * jobs are taken before a launch and polished on the host threads while
 * the launch runs (the host would otherwise wait: at n = 100 the polish was
 * over half of a run's time), then merged after it, so a round polishes
 * the packings of the launch before it. On the CPU the threads are the
 * engine's: the jobs are taken and polished after the launch.
 *
 * Takes the jobs: the best candidates that changed since their last polish
 * (one per host thread), skipping copies of one packing and candidates far
 * behind; their polish ends by deadline (0: none). */
static void jl_search_polish_take(jl_search_state *st, const jl_circle_batch *b,
                                  const jl_circle_sorted *s, double deadline) {
  int njobs = 0;
  for (int k = 0; k < st->polish_slots; ++k) {
    int c_best = -1;
    for (int c = 0; c < b->count; ++c) {
      /* need_start: never run, or restarting */
      if (b->need_start[c] || b->R[c] == st->polished_R[c]) continue;
      if (c_best < 0 || b->R[c] < b->R[c_best]) c_best = c;
    }
    if (c_best < 0) break;
    if (st->best.R > 0.0 && b->R[c_best] > st->best.R * (1.0 + JL_POLISH_WINDOW)) break;
    st->polished_R[c_best] = b->R[c_best];  /* also marks it taken for this round */
    int dup = 0;
    for (int j = 0; j < njobs; ++j)
      if (st->jobs[j].R_from == b->R[c_best]) dup = 1;
    if (dup) { --k; continue; }
    st->jobs[njobs].cand = c_best;
    st->jobs[njobs].R_from = b->R[c_best];
    st->jobs[njobs].iter_s = st->polish_iter_s;
    jl_batch_to_packing(b, c_best, s, &st->jobs[njobs].pk);
    njobs++;
  }
  st->njobs = njobs;
  st->started = 0;
  st->pool.jobs = st->jobs;
  st->pool.count = njobs;
  st->pool.deadline = deadline;
  st->pool.end = st->deadline > 0 ? st->deadline + JL_POLISH_GRACE_S : 0.0;
  st->pool.slow = st->slow;
  st->pool.stop = st->stop;
  atomic_init(&st->pool.next, 0);
}

/* When a polish starting now ends under --time: after round_s (at most
 * JL_POLISH_ROUND_MAX_S; what it reached goes back, the next round goes on
 * from there), and at most grace past the deadline (with --rounds only
 * that). On a device a round's polish takes half of JL_POLISH_GRACE_S, the
 * last launch's polish at the stop the rest, so the two stay within it, and
 * no longer than the launch before it took, so the device does not wait for
 * the host (at n = 100 a round's polish took its full second against a
 * launch of 0.8 s: the device waited a quarter of the run). */
static double jl_polish_deadline(const jl_search_state *st, const jl_circle_search_opts *o,
                                 double grace, double round_s) {
  if (!(st->deadline > 0)) return 0.0;
  if (o->rounds > 0) return st->deadline + grace;
  return fmin(st->deadline + grace, jl_time_now() + fmin(round_s, JL_POLISH_ROUND_MAX_S));
}

/* Starts up to `threads` polish threads for the jobs taken (no more than jobs). */
static void jl_search_polish_spawn(jl_search_state *st, int threads) {
  for (int t = 0; t < threads && t < st->njobs && st->started < JL_POLISH_MAX_THREADS; ++t)
    if (pthread_create(&st->tid[st->started], NULL, jl_polish_worker, &st->pool) == 0) st->started++;
}

/* Ends the polish: the calling thread takes the jobs no thread has taken
 * (with threads - 1 helpers when none was started), then waits for the
 * threads. */
static void jl_search_polish_finish(jl_search_state *st) {
  if (st->njobs == 0) return;
  if (st->started == 0) jl_search_polish_spawn(st, st->threads - 1);
  jl_polish_worker(&st->pool);
  for (int t = 0; t < st->started; ++t) pthread_join(st->tid[t], NULL);
  st->started = 0;
}

/* Takes the jobs and polishes them now, the launch done (merged after). */
static void jl_search_polish_after(jl_search_state *st, const jl_circle_batch *b,
                                   const jl_circle_sorted *s, const jl_circle_search_opts *o) {
  double deadline = jl_polish_deadline(st, o, JL_POLISH_GRACE_S, JL_POLISH_ROUND_MAX_S);
  jl_search_polish_take(st, b, s, deadline);
  double t0 = jl_time_now();
  jl_search_polish_finish(st);
  st->polish_s += jl_time_now() - t0;
}

/* Merges the polished jobs in job order, so the outcome does not depend on
 * thread timing: each is offered to the elite and the best, and goes back
 * into its candidate, which then continues from the exact local optimum,
 * unless the launch has moved the candidate on since the job was taken. */
static int jl_search_polish_merge(jl_search_state *st, jl_circle_batch *b, const jl_circle_sorted *s,
                                  int *improved_best, jl_error *err) {
  *improved_best = 0;
  for (int j = 0; j < st->njobs; ++j) {
    jl_polish_job *job = &st->jobs[j];
    st->polish_iter_s = fmax(st->polish_iter_s, job->iter_s);
    if (job->rc != JL_OK) {
      *err = job->err;
      return job->rc;
    }
    if (!job->legal) continue;
    int c = job->cand;
    if (!b->need_start[c] && b->R[c] == job->R_from) {
      jl_packing_to_batch(&job->pk, s, b, c, 0);
      st->polished_R[c] = b->R[c];
    }
    int rc_e = jl_circle_elite_offer(&st->elite, &job->pk, NULL, err);
    if (rc_e != JL_OK) return rc_e;
    if (st->best.R == 0.0 || job->pk.R < st->best.R) {
      if (st->best.R == 0.0 || job->pk.R < st->best.R * (1.0 - 1e-13)) {
        st->t_best = jl_time_now() - st->t0;
        *improved_best = 1;
      }
      int rc = jl_circle_packing_copy(&st->best, &job->pk, err);
      if (rc != JL_OK) return rc;
    }
  }
  st->njobs = 0;
  return JL_OK;
}

/* The islands' hook after a round: offers the elite when an exchange
 * starts, and when one completes takes the other ranks' packings into the
 * elite (restarts adopt them as their own) and the best. A packing that
 * fails the exact check here is not taken. */
static int jl_search_migrate(jl_search_state *st, const jl_circle_search_opts *o, int due, int want,
                             uint64_t *migrations, int *started, int *stop, jl_error *err) {
  jl_circle_migration m = {.step = {.due = due, .want_stop = want, .blocking = o->rounds > 0},
                           .offer = st->elite.pk, .offer_count = st->elite.count};
  int rc = o->migrate(o->migrate_ctx, &m, err);
  if (rc != JL_OK) return rc;
  *migrations += (uint64_t)m.step.completed;
  *started = m.step.started;
  *stop = m.step.stop;
  for (int k = 0; k < m.incoming_count; ++k) {
    const jl_circle_packing *pk = &m.incoming[k];
    jl_circle_check chk;
    jl_circle_check_packing(pk, JL_LEGAL_REL_TOL, &chk);
    if (!chk.legal) continue;
    if ((rc = jl_circle_elite_offer(&st->elite, pk, NULL, err)) != JL_OK) return rc;
    if (st->best.R == 0.0 || pk->R < st->best.R * (1.0 - 1e-13)) {
      st->t_best = jl_time_now() - st->t0;
      if ((rc = jl_circle_packing_copy(&st->best, pk, err)) != JL_OK) return rc;
    }
  }
  return JL_OK;
}

/* When candidates restart: after `stuck` trials without a record, or after
 * `behind` for one whose record lies above the median of the population's
 * records (behind >= stuck: never sooner). */
typedef struct jl_restart_rule {
  int stuck, behind;
  double median;
} jl_restart_rule;

static int jl_restart_due(const jl_restart_rule *r, const jl_circle_batch *b, int c) {
  int stuck = (int)b->stuck[c];
  return stuck >= r->stuck || (stuck >= r->behind && b->R_rec[c] > r->median);
}

static int jl_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The records of the candidates that hold one (none restarting), ascending,
 * into tmp (one double per candidate); returns how many. */
static int jl_records_sorted(const jl_circle_batch *b, double *tmp) {
  int m = 0;
  for (int c = 0; c < b->count; ++c)
    if (!b->need_start[c] && b->R_rec[c] > 0.0) tmp[m++] = b->R_rec[c];
  qsort(tmp, (size_t)m, sizeof *tmp, jl_cmp_double);
  return m;
}

/* This round's median record, over the candidates that have one (tmp: one
 * double per candidate). */
static void jl_restart_rule_update(jl_restart_rule *r, const jl_circle_batch *b, double *tmp) {
  r->median = INFINITY;
  if (r->behind >= r->stuck) return;
  int m = jl_records_sorted(b, tmp);
  if (m > 0) r->median = tmp[(m - 1) / 2];
}

/* The population at the end into info: the candidates holding a record,
 * how many of those lie within JL_NEAR_BEST of the best R, and the median
 * record's gap (tmp: one double per candidate). On the H200 at n = 34..50
 * a tenth of the candidates sat in the best's basin after 10 minutes and the
 * median 6e-3..8e-3 above: the runs had settled (docs/benchmarks.md). */
static void jl_search_population(const jl_circle_batch *b, double best_R, double *tmp,
                                 jl_circle_run_info *info) {
  int m = jl_records_sorted(b, tmp), near = 0;
  while (near < m && tmp[near] <= best_R * (1.0 + JL_NEAR_BEST)) near++;
  info->population = m;
  info->near_best = near;
  info->median_gap = m > 0 && best_R > 0.0 ? tmp[(m - 1) / 2] / best_R - 1.0 : 0.0;
}

/* The candidates near each elite member (within JL_ADOPT_NEAR_FAMILIES
 * crowding distances) into st->crowd; candidates that are not near any, or
 * restart this round, count for none. */
static void jl_search_count_crowds(jl_search_state *st, const jl_circle_batch *b,
                                   const jl_circle_sorted *s, const jl_restart_rule *rule) {
  double near = JL_ADOPT_NEAR_FAMILIES * st->elite.crowding;
  for (int k = 0; k < st->elite.count; ++k) st->crowd[k] = 0;
  if (!(near > 0.0)) return;
  for (int c = 0; c < b->count; ++c) {
    if (b->need_start[c] || jl_restart_due(rule, b, c)) continue;
    jl_batch_to_packing(b, c, s, &st->view);
    int k = jl_circle_elite_nearest(&st->elite, &st->view, near);
    if (k >= 0) st->crowd[k]++;
  }
}

/* Meta-stable candidates restart: from scratch, or (population mode) from
 * one of the elite packings, where their own moves take them elsewhere.
 * With adopt_spread an adopter takes the member the fewest candidates are
 * near (the best on ties), which then counts one more. */
static void jl_search_restart(jl_search_state *st, jl_circle_batch *b, const jl_circle_sorted *s,
                              const jl_circle_search_opts *o, jl_restart_rule *rule, jl_rng *rng) {
  int counted = 0;
  if (o->mode != JL_MODE_TRIALS) jl_restart_rule_update(rule, b, st->rec_tmp);
  for (int c = 0; c < b->count; ++c) {
    if (o->mode == JL_MODE_TRIALS) {
      jl_packing_to_batch(&st->best, s, b, c, 1);
      continue;
    }
    if (!jl_restart_due(rule, b, c)) continue;
    st->restarts++;
    /* due by the median rule alone: its own share of adopters */
    double adopt = (int)b->stuck[c] < rule->stuck && o->behind_adopt >= 0.0 ? o->behind_adopt
                                                                            : o->adopt;
    double u = jl_u01_from_u32(jl_rng_u32(rng), jl_rng_u32(rng));
    if (o->mode == JL_MODE_POPULATION && st->elite.count > 0 && u < adopt) {
      int k = 0;
      if (o->adopt_spread) {
        if (!counted) jl_search_count_crowds(st, b, s, rule);
        counted = 1;
        for (int j = 1; j < st->elite.count; ++j)
          if (st->crowd[j] < st->crowd[k]) k = j;
        st->crowd[k]++;
      } else {
        k = (int)jl_uint_below(jl_rng_u32(rng), (uint32_t)st->elite.count);
      }
      jl_packing_to_batch(&st->elite.pk[k], s, b, c, 1);
      st->adoptions++;
    } else if (o->mode == JL_MODE_POPULATION && st->elite.count >= 2 && u < adopt + o->cross) {
      /* a child of two members, relaxed as a start */
      int k1 = (int)jl_uint_below(jl_rng_u32(rng), (uint32_t)st->elite.count);
      int k2 = (int)jl_uint_below(jl_rng_u32(rng), (uint32_t)st->elite.count - 1);
      if (k2 >= k1) ++k2;
      jl_circle_cross_child(&st->elite.pk[k1], &st->elite.pk[k2], s, rng, st->cross_tmp,
                            b->x + (size_t)c * s->n, b->y + (size_t)c * s->n);
      b->need_start[c] = JL_START_PLACED;
      b->stuck[c] = 0;
      st->crossovers++;
    } else {
      b->need_start[c] = JL_START_RANDOM;
      b->stuck[c] = 0;
    }
  }
}

/* The loop's own state beside st and the batch, for a checkpoint. */
typedef struct jl_search_loop {
  long round;
  uint64_t migrations;
  jl_rng host_rng;
  uint64_t step_budget;
  int first;
} jl_search_loop;

/* Writes the search's state, as it stands after a round's stop checks
 * (before its restarts, which a run going on from it does first). */
static int jl_search_checkpoint(const jl_search_state *st, const jl_circle_batch *b,
                                const jl_search_loop *l, const jl_circle_search_opts *o,
                                jl_error *err) {
  jl_circle_checkpoint ck;
  memset(&ck, 0, sizeof ck);
  ck.seed = o->seed;
  ck.mode = (int)o->mode;
  ck.round = l->round;
  ck.restarts = st->restarts;
  ck.adoptions = st->adoptions;
  ck.launch_s = st->launch_s;
  ck.polish_s = st->polish_s;
  ck.crossovers = st->crossovers;
  ck.migrations = l->migrations;
  ck.elite_offers = st->elite.offers;
  ck.elite_crowded = st->elite.crowded;
  ck.step_budget = l->step_budget;
  ck.first = l->first;
  ck.elapsed_s = jl_time_now() - st->t0;
  ck.t_best = st->t_best;
  ck.polish_iter_s = st->polish_iter_s;
  ck.host_rng = l->host_rng;
  ck.batch = *b;
  ck.polished_R = st->polished_R;
  ck.best = st->best;
  ck.elite_count = st->elite.count;
  ck.elite = st->elite.pk;
  return jl_circle_checkpoint_save(o->checkpoint, &ck, err);
}

/* A run going on from a checkpoint: the candidates, the best, the elite,
 * the counters and the clock as they were. */
static int jl_search_restore(jl_search_state *st, jl_circle_batch *b, jl_search_loop *l,
                             const jl_circle_checkpoint *ck, const jl_circle_search_opts *o,
                             jl_error *err) {
  const jl_circle_batch *cb = &ck->batch;
  const char *path = ck->path ? ck->path : "checkpoint";
  if (cb->n != b->n || cb->count != b->count || ck->seed != o->seed || ck->mode != (int)o->mode)
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: %d candidates of %d circles, seed %llu, %s mode; the run has "
                        "%d of %d, seed %llu, %s mode", path,
                        cb->count, cb->n, (unsigned long long)ck->seed,
                        jl_search_mode_name((jl_search_mode)ck->mode), b->count, b->n,
                        (unsigned long long)o->seed, jl_search_mode_name(o->mode));
  jl_circle_batch_copy(b, cb);
  memcpy(st->polished_R, ck->polished_R, sizeof(double) * (size_t)b->count);
  int rc;
  if (ck->best.R > 0.0 && (rc = jl_circle_packing_copy(&st->best, &ck->best, err)) != JL_OK) return rc;
  /* members R ascending, no two of one family: offered in order, each joins */
  for (int e = 0; e < ck->elite_count; ++e)
    if ((rc = jl_circle_elite_offer(&st->elite, &ck->elite[e], NULL, err)) != JL_OK) return rc;
  st->elite.offers = ck->elite_offers;
  st->elite.crowded = ck->elite_crowded;
  st->restarts = ck->restarts;
  st->adoptions = ck->adoptions;
  st->launch_s = ck->launch_s;
  st->polish_s = ck->polish_s;
  st->crossovers = ck->crossovers;
  st->t_best = ck->t_best;
  st->polish_iter_s = ck->polish_iter_s;
  st->t0 -= ck->elapsed_s;
  l->round = ck->round;
  l->migrations = ck->migrations;
  l->host_rng = ck->host_rng;
  if (ck->step_budget > 0) l->step_budget = ck->step_budget;
  l->first = ck->first;
  return JL_OK;
}

int jl_circle_search(const jl_circle_problem *prob, const jl_device *dev,
                     const jl_circle_search_opts *o, jl_circle_packing *best,
                     jl_circle_run_info *info, jl_error *err) {
  if (prob->n > JL_SEARCH_MAX_CIRCLES)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %d circles, the search takes at most %d",
                        prob->name, prob->n, JL_SEARCH_MAX_CIRCLES);
  if (prob->n < 2) {
    /* one circle: the container is the circle itself */
    int rc = jl_circle_packing_init(best, prob->n, err);
    if (rc != JL_OK) return rc;
    for (int i = 0; i < prob->n; ++i) best->r[i] = prob->radii[i];
    jl_circle_packing_update_R(best);
    memset(info, 0, sizeof *info);
    info->seed = o->seed;
    info->stopped_by = JL_STOP_ROUNDS;
    return JL_OK;
  }
  int rc;
  jl_circle_sorted s = {0};
  jl_circle_batch b = {0};
  jl_circle_engine eng = {0};
  jl_search_state st = {0};
  if ((rc = jl_circle_sorted_init(&s, prob, err)) != JL_OK) goto done;
  int count = o->resume_state ? o->resume_state->batch.count : jl_circle_search_batch(dev, prob->n, o);
  if ((rc = jl_circle_batch_alloc(&b, prob->n, count, s.r, err)) != JL_OK) goto done;
  if ((rc = jl_circle_engine_init(&eng, dev, prob->n, count, err)) != JL_OK) goto done;
  eng.stop = o->stop;
  if ((rc = jl_circle_packing_init(&st.best, prob->n, err)) != JL_OK) goto done;
  if ((rc = jl_circle_packing_init(&st.view, prob->n, err)) != JL_OK) goto done;
  st.polished_R = calloc((size_t)count, sizeof(double));
  st.cross_tmp = malloc(sizeof(double) * JL_CROSS_TMP_DOUBLES(prob->n));
  st.rec_tmp = malloc(sizeof(double) * (size_t)count);
  if (!st.polished_R || !st.cross_tmp || !st.rec_tmp) { rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory"); goto done; }
  st.best.R = 0.0;
  /* the defaults by the population's size (circle_search.h) */
  int large = count >= JL_CROWD_MIN_BATCH;
  int elite_cap = o->elite > 0 ? (o->elite < JL_ELITE_MAX ? o->elite : JL_ELITE_MAX)
                               : large ? JL_ELITE_DEFAULT : JL_ELITE_SMALL_DEFAULT;
  double crowding = o->crowding >= 0.0 ? o->crowding : large ? JL_CROWDING_DEFAULT : 0.0;
  if ((rc = jl_circle_elite_init(&st.elite, prob->n, elite_cap, crowding, err)) != JL_OK) goto done;
  st.threads = dev->threads;
  st.polish_slots = dev->threads < 3 ? 3 : dev->threads;
  st.jobs = calloc((size_t)st.polish_slots, sizeof *st.jobs);
  if (!st.jobs) { rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory"); goto done; }
  for (int k = 0; k < st.polish_slots; ++k)
    if ((rc = jl_circle_packing_init(&st.jobs[k].pk, prob->n, err)) != JL_OK) goto done;

  jl_relax_params p;
  jl_relax_params_default(&p, s.r, prob->n, o->seed);
  p.area_weighted = o->area_weighted;
  if (o->band > 0.0) p.accept_worse = o->band;
  if (o->band_levels > 0) p.band_levels = o->band_levels;
  /* trials mode hands every candidate the best packing each round, which
   * would end every walk after one launch */
  p.walk_every = o->mode == JL_MODE_TRIALS ? 0 : o->walk;
  p.walk_aim = o->aim;
  if (o->walk_k > 0) p.walk_k = o->walk_k;
  if (o->tenure > 0) p.walk_tenure = o->tenure;
  if (o->walk_reset > 0) p.walk_reset = o->walk_reset;
  p.walk_probe = o->probe;
  p.nbr = jl_circle_nbr_auto(dev, prob->n);
  p.trials = o->trials_per_round > 0 ? o->trials_per_round : 1;
  if (o->trials_per_round <= 0 && o->mode != JL_MODE_TRIALS)
    p.step_budget = (uint64_t)(JL_STEP_BUDGET_N / prob->n);
  const uint64_t budget_max = p.step_budget;
  /* --rounds keeps the fixed budget: a seed gives the same bits */
  const int sized = p.step_budget > 0 && o->time_s > 0 && o->rounds <= 0;
  jl_restart_rule rule;
  rule.stuck = o->stuck_limit > 0 ? o->stuck_limit : jl_stuck_default(prob->n);
  rule.behind = o->stuck_behind > 0 ? o->stuck_behind : rule.stuck;
  rule.median = INFINITY;
  /* The host's own choices (restarts) draw from a stream no candidate uses. */
  jl_search_loop l = {.step_budget = p.step_budget};
  jl_rng_init(&l.host_rng, o->seed, (uint64_t)1 << 62, 0);

  if (o->resume) {
    for (int c = 0; c < count; ++c) jl_packing_to_batch(o->resume, &s, &b, c, 1);
    if ((rc = jl_circle_packing_copy(&st.best, o->resume, err)) != JL_OK) goto done;
  } else {
    for (int c = 0; c < count; ++c) b.need_start[c] = JL_START_RANDOM;
  }

  jl_progress pr;
  if (o->log) jl_progress_init_sink(&pr, o->log, o->log_ctx, o->progress_period_s, o->progress);
  else jl_progress_init(&pr, stderr, o->progress);
  /* from the run's start, so device set-up (a CUDA context takes up to a
   * second) counts against --time */
  st.t0 = o->t_start > 0.0 ? o->t_start : jl_time_now();
  st.stop = o->stop;
  if (o->resume_state) {
    /* the clock too: t0 moves back by the time the checkpoint's run had had */
    if ((rc = jl_search_restore(&st, &b, &l, o->resume_state, o, err)) != JL_OK) goto done;
    p.step_budget = l.step_budget;
    eng.first = l.first;
    /* the checkpoint was taken before the round's restarts */
    jl_search_restart(&st, &b, &s, o, &rule, &l.host_rng);
  }
  st.deadline = o->time_s > 0 ? st.t0 + o->time_s : 0.0;
  /* CUDA: the polish runs beside the launch (jl_search_polish_take's comment) */
  const int beside = dev->kind == JL_DEVICE_CUDA && !o->polish_after;
  const double ck_period = o->checkpoint_period_s > 0 ? o->checkpoint_period_s : JL_CHECKPOINT_PERIOD_S;
  double ck_last = jl_time_now();
  int stopped_by = JL_STOP_ROUNDS;
  double next_migration = o->migrate_s;
  double last_launch_s = 0.0;  /* the launch before: how long a polish beside the next may take */
  for (;;) {
    /* With --rounds launches run to their budgets, so a seed gives the
     * same bits; --time (the deadline) and SIGINT still cut them. */
    eng.cut_at = st.deadline;
    if (st.deadline > 0 && o->rounds <= 0 && jl_time_now() + JL_LAUNCH_MAX_S < st.deadline)
      eng.cut_at = jl_time_now() + JL_LAUNCH_MAX_S;
    uint64_t steps0 = 0;
    for (int c = 0; c < count; ++c) steps0 += b.steps[c];
    if (beside) {
      double round_s = last_launch_s > 0.0 ? last_launch_s : JL_POLISH_ROUND_MAX_S;
      jl_search_polish_take(&st, &b, &s,
                            jl_polish_deadline(&st, o, 0.5 * JL_POLISH_GRACE_S, round_s));
      jl_search_polish_spawn(&st, st.threads);  /* all the host's threads: the device works */
    }
    double t_launch = jl_time_now(), c_launch = jl_cpu_now(1);
    rc = jl_circle_engine_run(&eng, &p, &b, err);
    t_launch = jl_time_now() - t_launch;
    c_launch = jl_cpu_now(1) - c_launch;
    /* On the CPU the launch keeps its threads busy: a share of their time
     * without CPU is other jobs', and the polish after it will run as slowly
     * (jl_polish_opts.slow). On a device the host mostly waits. */
    if (dev->kind != JL_DEVICE_CUDA && t_launch > JL_SLOW_MIN_LAUNCH_S)
      st.slow = fmax(1.0, st.threads * t_launch / fmax(c_launch, 1e-6));
    st.launch_s += t_launch;
    last_launch_s = t_launch;
    if (beside) {  /* what of the polish outlasted the launch */
      double t_polish = jl_time_now();
      jl_search_polish_finish(&st);
      st.polish_s += jl_time_now() - t_polish;
    }
    if (rc != JL_OK) goto done;
    uint64_t steps1 = 0;
    for (int c = 0; c < count; ++c) steps1 += b.steps[c];
    /* Under --time the next launch's budget follows this one's step rate, so
     * a launch ends by itself in about JL_LAUNCH_TARGET_S instead of at the
     * cut (which discards the walk steps it interrupts); never above the
     * default, so small packings keep their rounds. */
    if (sized && t_launch > JL_LAUNCH_RATE_MIN_S && steps1 > steps0) {
      double fit = JL_LAUNCH_TARGET_S * (double)(steps1 - steps0) / t_launch / count;
      p.step_budget = fit < (double)budget_max ? (fit > 1.0 ? (uint64_t)fit : 1) : budget_max;
    }
    l.round++;
    if (!beside)  /* the CPU: this launch's packings, after it (the threads are the engine's) */
      jl_search_polish_after(&st, &b, &s, o);
    int improved = 0;
    if ((rc = jl_search_polish_merge(&st, &b, &s, &improved, err)) != JL_OK) goto done;
    double now = jl_time_now() - st.t0;
    uint64_t steps = 0, trials = 0;
    for (int c = 0; c < count; ++c) { steps += b.steps[c]; trials += b.trials_done[c]; }
    char gap[32] = "";  /* against the record, where the instance names one */
    if (prob->best_known_R > 0)
      snprintf(gap, sizeof gap, "  gap %+.6f%%", 100.0 * (st.best.R / prob->best_known_R - 1.0));
    if (st.best.R > 0)
      jl_progress_update(&pr, now + st.t0, improved,
                         "%s: %.1f s  best R %.10f%s  trials %llu  %.3g steps/s  restarts %llu  elite %d",
                         prob->name, now, st.best.R, gap, (unsigned long long)trials,
                         now > 0 ? (double)steps / now : 0.0, (unsigned long long)st.restarts,
                         st.elite.count);
    else  /* the first launch's packings are still being polished beside it */
      jl_progress_update(&pr, now + st.t0, improved,
                         "%s: %.1f s  no polished packing yet  trials %llu  %.3g steps/s",
                         prob->name, now, (unsigned long long)trials,
                         now > 0 ? (double)steps / now : 0.0);
    int want = 0;  /* JL_STOP_* + 1 */
    if (o->target_R > 0 && st.best.R > 0 && st.best.R <= o->target_R) want = JL_STOP_TARGET + 1;
    else if (jl_stop_requested(o->stop)) want = JL_STOP_SIGNAL + 1;
    else if (o->on_progress &&
             o->on_progress(o->on_progress_ctx,
                            &(jl_progress_info){now, st.best.R, trials}) != 0)
      want = JL_STOP_SIGNAL + 1;
    else if (o->rounds > 0 && l.round >= o->rounds) want = JL_STOP_ROUNDS + 1;
    else if (o->time_s > 0 && now >= o->time_s) want = JL_STOP_TIME + 1;
    if (o->migrate) {
      int due = o->rounds > 0 ? o->migrate_rounds > 0 && l.round % o->migrate_rounds == 0
                              : now >= next_migration;
      int started = 0;
      if ((rc = jl_search_migrate(&st, o, due, want, &l.migrations, &started, &want, err)) != JL_OK)
        goto done;
      if (started) next_migration = now + o->migrate_s;
    }
    if (o->checkpoint && (want || jl_time_now() - ck_last >= ck_period)) {
      l.step_budget = p.step_budget;
      l.first = eng.first;
      if ((rc = jl_search_checkpoint(&st, &b, &l, o, err)) != JL_OK) goto done;
      ck_last = jl_time_now();
    }
    if (want) { stopped_by = want - 1; break; }
    jl_search_restart(&st, &b, &s, o, &rule, &l.host_rng);
  }
  if (beside) {
    /* the last launch's packings, polished for the result only: after the
     * checkpoint, which a run going on from it polishes in its first round */
    jl_search_polish_after(&st, &b, &s, o);
    int improved = 0;
    if ((rc = jl_search_polish_merge(&st, &b, &s, &improved, err)) != JL_OK) goto done;
  }
  jl_progress_end(&pr);

  if (st.best.R == 0.0) {
    /* nothing polished yet (a stop in the first round): take the best raw candidate */
    int c_best = -1;
    for (int c = 0; c < count; ++c)
      if (!b.need_start[c] && (c_best < 0 || b.R[c] < b.R[c_best])) c_best = c;
    if (c_best < 0) c_best = 0;  /* cannot happen: every thread runs a candidate */
    jl_batch_to_packing(&b, c_best, &s, &st.best);
    jl_circle_packing_separate(&st.best);
  }
  if ((rc = jl_circle_packing_copy(best, &st.best, err)) != JL_OK) goto done;
  memset(info, 0, sizeof *info);
  info->seed = o->seed;
  info->device = jl_device_kind_name(dev->kind);
  info->device_name = dev->name;
  info->mode = jl_search_mode_name(o->mode);
  info->walk = p.walk_every;
  info->aim = p.walk_aim;
  info->walk_k = p.walk_k;
  info->tenure = p.walk_tenure;
  info->walk_reset = p.walk_reset;
  info->stuck = rule.stuck;
  info->stuck_behind = rule.behind < rule.stuck ? rule.behind : rule.stuck;
  info->probe = p.walk_probe;
  info->time_s = jl_time_now() - st.t0;
  info->time_to_best_s = st.t_best;
  info->launch_s = st.launch_s;
  info->polish_s = st.polish_s;
  info->polish_beside = beside;
  for (int c = 0; c < count; ++c) {
    info->trials += b.trials_done[c];
    info->relax_steps += b.steps[c];
  }
  info->restarts = st.restarts;
  info->adoptions = st.adoptions;
  info->crossovers = st.crossovers;
  info->cross = o->cross;
  info->elite = st.elite.cap;
  info->crowding = st.elite.crowding;
  info->elite_crowded = st.elite.crowded;
  info->adopt_spread = o->adopt_spread;
  info->elite_count = st.elite.count;
  for (int k = 0; k < st.elite.count; ++k) {
    info->elite_R[k] = st.elite.pk[k].R;
    info->elite_spread[k] = jl_circle_elite_spread(&st.elite, k);
  }
  info->migrations = l.migrations;
  info->stopped_by = stopped_by;
  jl_search_population(&b, st.best.R, st.rec_tmp, info);
  rc = JL_OK;
done:
  if (st.jobs)
    for (int k = 0; k < st.polish_slots; ++k) jl_circle_packing_free(&st.jobs[k].pk);
  jl_circle_elite_free(&st.elite);
  free(st.jobs);
  free(st.polished_R);
  free(st.cross_tmp);
  free(st.rec_tmp);
  jl_circle_packing_free(&st.best);
  jl_circle_packing_free(&st.view);
  jl_circle_engine_free(&eng);
  jl_circle_batch_free(&b);
  jl_circle_sorted_free(&s);
  return rc;
}
