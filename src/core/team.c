/* Thread team: start gate, then fn on every member, barrier between phases. */
#include "team.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

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
