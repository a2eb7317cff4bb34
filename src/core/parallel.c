/* Fork-join over pthreads. */
#include "parallel.h"

#include <pthread.h>

#include "device.h"

typedef struct jl_par_task {
  void (*fn)(void *ctx, int t, int nt);
  void *ctx;
  int t, nt;
} jl_par_task;

static void *jl_par_worker(void *arg) {
  jl_par_task *task = arg;
  task->fn(task->ctx, task->t, task->nt);
  return NULL;
}

void jl_parallel_run(int nt, void (*fn)(void *ctx, int t, int nt), void *ctx) {
  if (nt < 1) nt = 1;
  if (nt > JL_MAX_THREADS) nt = JL_MAX_THREADS;
  pthread_t tid[JL_MAX_THREADS];
  jl_par_task task[JL_MAX_THREADS];
  int started[JL_MAX_THREADS];
  for (int t = 1; t < nt; ++t) {
    task[t] = (jl_par_task){fn, ctx, t, nt};
    started[t] = pthread_create(&tid[t], NULL, jl_par_worker, &task[t]) == 0;
  }
  fn(ctx, 0, nt);
  for (int t = 1; t < nt; ++t) {
    if (started[t])
      pthread_join(tid[t], NULL);
    else
      fn(ctx, t, nt);
  }
}

int jl_parallel_threads(int threads, long work, long min_per_thread) {
  int nt = threads > 0 ? threads : jl_cpu_count();
  if (min_per_thread < 1) min_per_thread = 1;
  long cap = work / min_per_thread;
  if (cap < 1) cap = 1;
  if (nt > cap) nt = (int)cap;
  if (nt > JL_MAX_THREADS) nt = JL_MAX_THREADS;
  return nt < 1 ? 1 : nt;
}
