/* A batch of candidate trunk packings and the engine that runs it: the seam
 * between the annealing driver (trunk_search.c) and the kernels. The engine
 * runs jl_block_candidate for every candidate, on CPU threads (the twin,
 * block_relax.c) or one CUDA thread block per candidate
 * (kernels/trunk/block_relax.cu), with the sample grid in read-only device memory. */
#ifndef JL_BLOCK_BATCH_H
#define JL_BLOCK_BATCH_H

#include "block_relax.h"
#include "device.h"
#include "error.h"
#include "surface_grid.h"
#include "trunk.h"

#ifdef __cplusplus
extern "C" {
#endif

int jl_block_batch_alloc(jl_block_batch *b, int count, int cap, jl_error *err);
void jl_block_batch_free(jl_block_batch *b);
/* Candidate c from/to a packing (blocks beyond cap are refused). */
int jl_block_batch_set(jl_block_batch *b, int c, const jl_block_packing *pk, jl_error *err);
int jl_block_batch_get(const jl_block_batch *b, int c, jl_block_packing *pk, jl_error *err);
/* The best state of candidate c (best_n blocks) into a packing. */
int jl_block_batch_get_best(const jl_block_batch *b, int c, jl_block_packing *pk, jl_error *err);

/* Block geometry, mass and inertia for a block size; the rest of the
 * parameters at their defaults (docs/design.md). */
void jl_block_params_default(jl_block_params *p, const jl_block_size *size, uint64_t seed);
/* The grid's host arrays as a view. */
jl_grid_view jl_grid_view_host(const jl_surface_grid *g);

/* A test and benchmark packing: up to count blocks of an axis-aligned
 * layer-by-layer grid fill of the box [lo, hi] (block edges along x, y, z),
 * each shifted by up to shift mm per axis and turned by up to angle
 * (quaternion increment units) from Philox(seed). */
int jl_block_demo_packing(jl_block_packing *pk, const double lo[3], const double hi[3],
                          const jl_block_size *size, int count, double shift, double angle,
                          uint64_t seed, jl_error *err);

/* The CPU twin: candidates spread over threads. */
int jl_block_batch_run_cpu(const jl_block_params *p, jl_block_batch *b, int threads,
                           jl_error *err);

#ifdef JL_HAVE_CUDA
/* kernels/trunk/block_relax.cu: the grid and the batch buffers on the device. */
typedef struct jl_cuda_blocks jl_cuda_blocks;
int jl_cuda_blocks_create(jl_cuda_blocks **ctx, const jl_surface_grid *g, int count, int cap,
                          char *msg, int msg_len);
int jl_cuda_blocks_run(jl_cuda_blocks *ctx, const jl_block_params *p, jl_block_batch *b,
                       char *msg, int msg_len);
void jl_cuda_blocks_destroy(jl_cuda_blocks *ctx);
#endif

typedef struct jl_block_engine {
  jl_device dev;
  jl_grid_view grid;       /* host view (CPU runs) */
  void *cuda;              /* jl_cuda_blocks when dev.kind is CUDA */
} jl_block_engine;

int jl_block_engine_init(jl_block_engine *e, const jl_device *dev, const jl_surface_grid *g,
                         int count, int cap, jl_error *err);
/* Runs one launch; p->grid is filled in by the engine. */
int jl_block_engine_run(jl_block_engine *e, const jl_block_params *p, jl_block_batch *b,
                        jl_error *err);
void jl_block_engine_free(jl_block_engine *e);

#ifdef __cplusplus
}
#endif

#endif
