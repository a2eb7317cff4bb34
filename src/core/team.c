/* Thread team: start gate, then fn on every member, barrier between phases. */
#include "team.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "timer.h"

/* Spins before each sched_yield while waiting at a barrier. */
#define JL_TEAM_SPINS 2000

typedef struct jl_team_start {
  jl_team *team;
  jl_team_fn fn;
  void *ctx;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int go;                  /* 1: run, -1: leave without running */
} jl_team_start;

typedef struct jl_team_member {
  jl_team_start *start;
  int tid;
} jl_team_member;

static void *jl_team_main(void *arg) {
  jl_team_member *m = arg;
  jl_team_start *s = m->start;
  pthread_mutex_lock(&s->lock);
  while (s->go == 0) pthread_cond_wait(&s->cond, &s->lock);
  int go = s->go;
  pthread_mutex_unlock(&s->lock);
  if (go > 0) s->fn(s->ctx, m->tid, s->team);
  return NULL;
}

int jl_team_run(int threads, jl_team_fn fn, void *ctx, jl_error *err) {
  jl_team team;
  if (threads < 1) threads = 1;
  if (threads == 1) {
    team.size = 1;
    atomic_init(&team.arrived, 0);
    atomic_init(&team.generation, 0);
    fn(ctx, 0, &team);
    return JL_OK;
  }
  pthread_t *tid = malloc(sizeof *tid * (size_t)threads);
  jl_team_member *mem = malloc(sizeof *mem * (size_t)threads);
  if (!tid || !mem) {
    free(tid);
    free(mem);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d threads", threads);
  }
  jl_team_start s = {&team, fn, ctx, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  int started = 0;
  for (int t = 1; t < threads; ++t) {
    mem[t].start = &s;
    mem[t].tid = t;
    if (pthread_create(&tid[t], NULL, jl_team_main, &mem[t]) != 0) break;
    started = t;
  }
  team.size = started + 1;
  atomic_init(&team.arrived, 0);
  atomic_init(&team.generation, 0);
  pthread_mutex_lock(&s.lock);
  s.go = 1;
  pthread_cond_broadcast(&s.cond);
  pthread_mutex_unlock(&s.lock);
  fn(ctx, 0, &team);
  for (int t = 1; t <= started; ++t) pthread_join(tid[t], NULL);
  free(tid);
  free(mem);
  return JL_OK;
}

void jl_team_sync(jl_team *team) {
  if (team->size <= 1) return;
  int gen = atomic_load_explicit(&team->generation, memory_order_acquire);
  if (atomic_fetch_add_explicit(&team->arrived, 1, memory_order_acq_rel) == team->size - 1) {
    atomic_store_explicit(&team->arrived, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&team->generation, 1, memory_order_acq_rel);
    return;
  }
  for (;;) {
    for (int i = 0; i < JL_TEAM_SPINS; ++i)
      if (atomic_load_explicit(&team->generation, memory_order_acquire) != gen) return;
    sched_yield();
  }
}

/* ---- the pool ---- */

/* Seconds a pool thread waits for the next run before it sleeps: covers
 * the serial parts between a step's teams and the steps' own gaps. For the
 * first JL_TEAM_POOL_BUSY_S it only spins (a sched_yield costs about 10 us
 * of wake-up on the 2-core VM); then it yields the core between rounds, so
 * that on a loaded machine it does not keep the core from a working thread. */
#define JL_TEAM_POOL_SPIN_S 2e-3
#define JL_TEAM_POOL_BUSY_S 50e-6

struct jl_team_pool {
  int cap;                 /* members at most, the caller included */
  int started;             /* threads running (members 1..started) */
  pthread_t *thread;
  jl_team team;            /* the current run's barrier */
  jl_team_fn fn;
  void *ctx;
  atomic_int run;          /* run counter: a new value starts a run */
  atomic_int done;         /* members 1.. that finished the current run */
  atomic_int quit;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int sleeping;            /* threads waiting on wake (under lock) */
};

typedef struct jl_pool_member {
  jl_team_pool *pool;
  int tid;
  int seen;                /* the run counter when the thread was started */
} jl_pool_member;

static void *jl_pool_main(void *arg) {
  jl_pool_member m = *(jl_pool_member *)arg;
  free(arg);
  jl_team_pool *p = m.pool;
  int seen = m.seen, spin = 1;
  for (;;) {
    int run = atomic_load_explicit(&p->run, memory_order_acquire);
    if (run == seen) {
      /* spin, then spin yielding, then sleep until the next run; a thread
       * the last run did not need sleeps at once (the solve's team may be
       * smaller than the pool, and spinning it would take a loaded core) */
      double start = jl_time_now(), until = start + (spin ? JL_TEAM_POOL_SPIN_S : 0.0);
      while ((run = atomic_load_explicit(&p->run, memory_order_acquire)) == seen &&
             !atomic_load_explicit(&p->quit, memory_order_acquire)) {
        for (int i = 0; i < JL_TEAM_SPINS && atomic_load_explicit(&p->run, memory_order_relaxed) == seen; ++i) {
        }
        double t = jl_time_now();
        if (t < until) {
          if (t >= start + JL_TEAM_POOL_BUSY_S) sched_yield();
          continue;
        }
        pthread_mutex_lock(&p->lock);
        p->sleeping++;
        while (atomic_load_explicit(&p->run, memory_order_acquire) == seen &&
               !atomic_load_explicit(&p->quit, memory_order_acquire))
          pthread_cond_wait(&p->wake, &p->lock);
        p->sleeping--;
        pthread_mutex_unlock(&p->lock);
        start = jl_time_now();
        until = start + JL_TEAM_POOL_SPIN_S;
      }
      if (run == seen) return NULL;  /* quit */
    }
    seen = run;
    spin = m.tid < p->team.size;
    if (spin) p->fn(p->ctx, m.tid, &p->team);
    atomic_fetch_add_explicit(&p->done, 1, memory_order_acq_rel);
  }
}

jl_team_pool *jl_team_pool_new(int threads, jl_error *err) {
  jl_team_pool *p = calloc(1, sizeof *p);
  if (threads < 1) threads = 1;
  if (p) p->thread = malloc(sizeof *p->thread * (size_t)threads);
  if (!p || !p->thread) {
    free(p);
    jl_error_set(err, JL_ERR_NOMEM, "out of memory for a pool of %d threads", threads);
    return NULL;
  }
  p->cap = threads;
  atomic_init(&p->run, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->quit, 0);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  return p;
}

void jl_team_pool_free(jl_team_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  atomic_store_explicit(&p->quit, 1, memory_order_release);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  for (int t = 1; t <= p->started; ++t) pthread_join(p->thread[t], NULL);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->wake);
  free(p->thread);
  free(p);
}

int jl_team_pool_run(jl_team_pool *p, int threads, jl_team_fn fn, void *ctx, jl_error *err) {
  if (!p) return jl_team_run(threads, fn, ctx, err);
  if (threads > p->cap) threads = p->cap;
  if (threads <= 1) return jl_team_run(1, fn, ctx, err);
  int seen = atomic_load_explicit(&p->run, memory_order_relaxed);
  /* the threads a run needs start once: each first waits for a run after `seen` */
  while (p->started < threads - 1) {
    jl_pool_member *m = malloc(sizeof *m);
    if (!m) break;
    m->pool = p;
    m->tid = p->started + 1;
    m->seen = seen;
    if (pthread_create(&p->thread[m->tid], NULL, jl_pool_main, m) != 0) {
      free(m);
      break;
    }
    p->started++;
  }
  p->team.size = threads < p->started + 1 ? threads : p->started + 1;
  atomic_store_explicit(&p->team.arrived, 0, memory_order_relaxed);
  atomic_store_explicit(&p->team.generation, 0, memory_order_relaxed);
  p->fn = fn;
  p->ctx = ctx;
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  pthread_mutex_lock(&p->lock);
  atomic_fetch_add_explicit(&p->run, 1, memory_order_acq_rel);
  if (p->sleeping) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  fn(ctx, 0, &p->team);
  /* every started thread takes part in each run (those past the team's
   * size only count themselves done), so the next run finds them all waiting */
  for (;;) {
    for (int i = 0; i < JL_TEAM_SPINS; ++i)
      if (atomic_load_explicit(&p->done, memory_order_acquire) == p->started) return JL_OK;
    sched_yield();
  }
}
