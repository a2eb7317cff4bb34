/* A team of CPU threads that runs one function together, with a barrier
 * between phases: the solvers iterate inside one team call, so threads are
 * started once per solve, not once per iteration. */
#ifndef JL_TEAM_H
#define JL_TEAM_H

#include <stdatomic.h>

#include "error.h"
#include "parallel.h"

/* Sense-reversing barrier that spins briefly before yielding: solver
 * phases last microseconds, far less than a sleep/wake of a futex barrier. */
typedef struct jl_team {
  int size;
  atomic_int arrived;
  /* its own cache line: the waiting threads read it while the arriving
   * ones write arrived */
  _Alignas(64) atomic_int generation;
} jl_team;

typedef void (*jl_team_fn)(void *ctx, int tid, jl_team *team);

/* Runs fn(ctx, tid, team) on `threads` threads (the caller is tid 0). When
 * fewer threads can be started, the team is smaller: fn must take its share
 * from team->size. */
int jl_team_run(int threads, jl_team_fn fn, void *ctx, jl_error *err);
void jl_team_sync(jl_team *team);

/* A team whose threads outlive one run: a stepper's stages run one team
 * after another, and a thread started per team begins its share about
 * 80 us late on a 2-core VM (thread start, and waking an idle core), as
 * long as a stage of the 1000-brick wall takes. The pool's threads wait for
 * the next run spinning (yielding the core after the first 50 us) for up to
 * JL_TEAM_POOL_SPIN_S, then asleep. One caller at a time. */
typedef struct jl_team_pool jl_team_pool;

/* A pool of up to `threads` members (the caller included); NULL with *err
 * set when out of memory. Threads start at the first run that needs them. */
jl_team_pool *jl_team_pool_new(int threads, jl_error *err);
void jl_team_pool_free(jl_team_pool *pool);
/* jl_team_run on the pool's threads (at most its size); pool NULL: jl_team_run. */
int jl_team_pool_run(jl_team_pool *pool, int threads, jl_team_fn fn, void *ctx, jl_error *err);

/* The contiguous share [lo, hi) of n items for thread tid of nt
 * (jl_parallel_chunk's split, in ints). */
static inline void jl_team_share(int n, int tid, int nt, int *lo, int *hi) {
  long a, b;
  jl_parallel_chunk(n, tid, nt, &a, &b);
  *lo = (int)a;
  *hi = (int)b;
}

#endif
