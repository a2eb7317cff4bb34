/* Fork-join over pthreads for the CPU path: the work is split into nt
 * chunks by index, so results never depend on how many threads ran them. */
#ifndef JL_PARALLEL_H
#define JL_PARALLEL_H

#define JL_MAX_THREADS 256

/* Calls fn(ctx, t, nt) for t = 0..nt-1, on up to nt threads (the caller runs
 * chunk 0, and any chunk whose thread could not be started). */
void jl_parallel_run(int nt, void (*fn)(void *ctx, int t, int nt), void *ctx);

/* Threads to use: threads <= 0 means all cores; at most one thread per
 * min_per_thread items of work, at least 1, at most JL_MAX_THREADS. */
int jl_parallel_threads(int threads, long work, long min_per_thread);

/* Chunk t of nt over [0, n): [*lo, *hi). */
static inline void jl_parallel_chunk(long n, int t, int nt, long *lo, long *hi) {
  *lo = n * t / nt;
  *hi = n * (t + 1) / nt;
}

#endif
