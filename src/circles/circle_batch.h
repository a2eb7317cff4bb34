/* A batch of candidate packings and the engine that relaxes it: the seam
 * between the packing driver (circle_search.c) and the kernels. The engine
 * runs jl_relax_candidate for every candidate, on CPU threads (the twin) or
 * one CUDA thread block per candidate. */
#ifndef JL_CIRCLE_BATCH_H
#define JL_CIRCLE_BATCH_H

#include <signal.h>

#include "circle_relax.h"
#include "device.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

int jl_circle_batch_alloc(jl_circle_batch *b, int n, int count, const double *r_sorted,
                          jl_error *err);
void jl_circle_batch_free(jl_circle_batch *b);
/* Every candidate's state (packings, records, walks, stream offsets,
 * counters) from src into dst, of the same n and count; the radii stay. */
void jl_circle_batch_copy(jl_circle_batch *dst, const jl_circle_batch *src);

/* The CPU twin: candidates spread over threads. */
int jl_circle_batch_run_cpu(const jl_relax_params *p, jl_circle_batch *b, int threads,
                            jl_error *err);
/* The same, with candidates taken in the order first, first + 1, ...
 * (cyclically); once b->cut is raised, each thread takes no further
 * candidate after its first, and the candidates not run keep their state. */
int jl_circle_batch_run_cpu_cut(const jl_relax_params *p, jl_circle_batch *b, int threads,
                                int first, jl_error *err);

#ifdef JL_HAVE_CUDA
/* kernels/circles/circle_relax.cu: device buffers that live as long as the engine. */
typedef struct jl_cuda_circles jl_cuda_circles;
int jl_cuda_circles_create(jl_cuda_circles **ctx, int n, int count, char *msg, int msg_len);
/* Runs one launch; cut (may be NULL) says when the host raises the flag
 * that ends it early, watched while the kernel runs. */
int jl_cuda_circles_run(jl_cuda_circles *ctx, const jl_relax_params *p, jl_circle_batch *b,
                        const jl_circle_cut *cut, char *msg, int msg_len);
void jl_cuda_circles_destroy(jl_cuda_circles *ctx);
/* Blocks of the kernel for n circles that one multiprocessor holds at once. */
int jl_cuda_circles_resident(int n, int *blocks_per_sm, char *msg, int msg_len);
/* Threads of the block that relaxes one candidate of n circles. */
int jl_cuda_circles_threads(int n);
#endif

/* Candidates per launch when --batch is not given: on CUDA, whole waves of
 * resident blocks, about this many per multiprocessor. */
#define JL_CIRCLE_BATCH_PER_SM 16
/* The default batch for n circles: CUDA as above, CPU per_thread per thread. */
int jl_circle_auto_batch(const jl_device *dev, int n, int per_thread);

/* Neighbour lists pay from this many circles (same bits, only the speed
 * differs). On the CPU twin, measured in the search's own launches: about
 * even at n = 5 and 8, 25% faster from 12 on, 6x at 200. On CUDA the lists
 * are left to the 256-thread kernel, n > 64 (the small kernel's all-pairs
 * pass is one broadcast read of shared memory per pair). */
#define JL_NBR_MIN_N_CPU 10
#define JL_NBR_MIN_N_CUDA 65
/* 1 when n circles on this device take their contacts from neighbour lists. */
int jl_circle_nbr_auto(const jl_device *dev, int n);

/* How count candidates of n circles run on dev, for the first progress
 * line: "2112 candidates, one block of 32 threads each, contacts from all
 * pairs". */
void jl_circle_layout_describe(const jl_device *dev, int n, int count, char *out, size_t cap);

/* A launch ends early (its candidates stop at their next poll, legal) at
 * cut_at or once *stop is set, on both paths. */
typedef struct jl_circle_engine {
  jl_device dev;
  void *cuda;              /* jl_cuda_circles when dev.kind is CUDA */
  volatile sig_atomic_t *stop; /* SIGINT: end the launch (NULL: never) */
  double cut_at;           /* jl_time_now() at which the launch ends (0: never) */
  int first;               /* CPU: the candidate the next launch takes first */
} jl_circle_engine;

int jl_circle_engine_init(jl_circle_engine *e, const jl_device *dev, int n, int count,
                          jl_error *err);
int jl_circle_engine_run(jl_circle_engine *e, const jl_relax_params *p, jl_circle_batch *b,
                         jl_error *err);
void jl_circle_engine_free(jl_circle_engine *e);

#ifdef __cplusplus
}
#endif

#endif
