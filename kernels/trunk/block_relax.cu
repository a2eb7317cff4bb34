// Trunk packing: one thread block per candidate packing, one thread per
// block of the packing, the candidate's state in shared memory and the
// surface samples and grid in read-only global memory (__ldg). The algorithm
// is src/trunk/block_relax.h, shared with the CPU twin in src/trunk/block_relax.c.
#include <cstdio>
#include <cuda_runtime.h>

#include "cuda_check.h"

#include "block_batch.h"

__global__ void jl_block_relax_kernel(jl_block_params p, jl_block_batch b) {
  extern __shared__ double jl_bmem[];
  __shared__ jl_br_ws ws;
  jl_block_candidate(&ws, jl_bmem, &p, b, (int)blockIdx.x);
}

// Launch configuration: a warp multiple covering the slots, capped at 256
// (JL_BFOR strides by blockDim, so larger packings loop).
static int jl_block_threads(int cap) {
  int t = (cap + 31) / 32 * 32;
  return t > 256 ? 256 : t;
}

struct jl_cuda_blocks {
  int count, cap;
  jl_block_batch d;        // device pointers
  jl_grid_view grid;       // device pointers
  double *px, *py, *pz;
  int *cell_start, *cell_count, *inside_cells;
  double *cell_lo, *cell_hi;
  uint8_t *inside;
};

extern "C" void jl_cuda_blocks_destroy(jl_cuda_blocks *c) {
  if (!c) return;
  double *arr[14] = {c->d.cx, c->d.cy, c->d.cz, c->d.qw, c->d.qx, c->d.qy, c->d.qz,
                     c->d.bx, c->d.by, c->d.bz, c->d.bqw, c->d.bqx, c->d.bqy, c->d.bqz};
  for (int a = 0; a < 14; ++a) cudaFree(arr[a]);
  cudaFree(c->d.n); cudaFree(c->d.best_n); cudaFree(c->d.temp); cudaFree(c->d.energy);
  cudaFree(c->d.worst); cudaFree(c->d.moves); cudaFree(c->d.steps); cudaFree(c->d.accepted);
  cudaFree(c->d.kind_moves); cudaFree(c->d.kind_accepted);
  cudaFree(c->px); cudaFree(c->py); cudaFree(c->pz);
  cudaFree(c->cell_start); cudaFree(c->cell_count); cudaFree(c->inside_cells); cudaFree(c->inside);
  cudaFree(c->cell_lo); cudaFree(c->cell_hi);
  delete c;
}

template <typename T> static cudaError_t jl_upload(T **d, const T *h, size_t n) {
  cudaError_t e = cudaMalloc(d, sizeof(T) * (n > 0 ? n : 1));
  if (e != cudaSuccess || n == 0) return e;
  return cudaMemcpy(*d, h, sizeof(T) * n, cudaMemcpyHostToDevice);
}

extern "C" int jl_cuda_blocks_create(jl_cuda_blocks **out, const jl_surface_grid *g, int count,
                                     int cap, char *msg, int msg_len) {
  jl_cuda_blocks *c = new jl_cuda_blocks();
  *out = c;
  c->count = count;
  c->cap = cap;
  size_t nc = (size_t)count * (size_t)cap, k = (size_t)count;
  c->d.count = count;
  c->d.cap = cap;
  double **arr[14] = {&c->d.cx, &c->d.cy, &c->d.cz, &c->d.qw, &c->d.qx, &c->d.qy, &c->d.qz,
                      &c->d.bx, &c->d.by, &c->d.bz, &c->d.bqw, &c->d.bqx, &c->d.bqy, &c->d.bqz};
  for (int a = 0; a < 14; ++a) JL_CUDA_TRY(cudaMalloc(arr[a], sizeof(double) * nc));
  JL_CUDA_TRY(cudaMalloc(&c->d.n, sizeof(int) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.best_n, sizeof(int) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.temp, sizeof(double) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.energy, sizeof(double) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.worst, sizeof(double) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.moves, sizeof(uint64_t) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.steps, sizeof(uint64_t) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.accepted, sizeof(uint64_t) * k));
  JL_CUDA_TRY(cudaMalloc(&c->d.kind_moves, sizeof(uint64_t) * k * JL_BMOVE_COUNT));
  JL_CUDA_TRY(cudaMalloc(&c->d.kind_accepted, sizeof(uint64_t) * k * JL_BMOVE_COUNT));
  size_t np = (size_t)g->n_points, ncell = (size_t)g->n_cells;
  JL_CUDA_TRY(jl_upload(&c->px, g->px, np));
  JL_CUDA_TRY(jl_upload(&c->py, g->py, np));
  JL_CUDA_TRY(jl_upload(&c->pz, g->pz, np));
  JL_CUDA_TRY(jl_upload(&c->cell_start, g->cell_start, ncell));
  JL_CUDA_TRY(jl_upload(&c->cell_count, g->cell_count, ncell));
  JL_CUDA_TRY(jl_upload(&c->inside, g->inside, ncell));
  JL_CUDA_TRY(jl_upload(&c->cell_lo, g->cell_lo, 3 * ncell));
  JL_CUDA_TRY(jl_upload(&c->cell_hi, g->cell_hi, 3 * ncell));
  JL_CUDA_TRY(jl_upload(&c->inside_cells, g->inside_cells, (size_t)g->n_inside));
  c->grid = jl_grid_view_host(g);
  c->grid.px = c->px; c->grid.py = c->py; c->grid.pz = c->pz;
  c->grid.cell_start = c->cell_start;
  c->grid.cell_count = c->cell_count;
  c->grid.cell_lo = c->cell_lo;
  c->grid.cell_hi = c->cell_hi;
  c->grid.inside = c->inside;
  c->grid.inside_cells = c->inside_cells;
  size_t smem = sizeof(double) * JL_BR_WS_DOUBLES(cap);
  JL_CUDA_TRY(cudaFuncSetAttribute(jl_block_relax_kernel,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  return 0;
}

extern "C" int jl_cuda_blocks_run(jl_cuda_blocks *c, const jl_block_params *p, jl_block_batch *b,
                                  char *msg, int msg_len) {
  if (b->cap != c->cap || b->count > c->count) {
    snprintf(msg, (size_t)msg_len, "batch of %d x %d does not fit buffers of %d x %d", b->count,
             b->cap, c->count, c->cap);
    return -1;
  }
  size_t nc = (size_t)b->count * (size_t)b->cap, k = (size_t)b->count;
  jl_block_batch d = c->d;
  d.count = b->count;
  cudaMemcpyKind h2d = cudaMemcpyHostToDevice, d2h = cudaMemcpyDeviceToHost;
  double *hs[14] = {b->cx, b->cy, b->cz, b->qw, b->qx, b->qy, b->qz,
                    b->bx, b->by, b->bz, b->bqw, b->bqx, b->bqy, b->bqz};
  double *ds[14] = {d.cx, d.cy, d.cz, d.qw, d.qx, d.qy, d.qz,
                    d.bx, d.by, d.bz, d.bqw, d.bqx, d.bqy, d.bqz};
  for (int a = 0; a < 14; ++a) JL_CUDA_TRY(cudaMemcpy(ds[a], hs[a], sizeof(double) * nc, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.n, b->n, sizeof(int) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.best_n, b->best_n, sizeof(int) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.temp, b->temp, sizeof(double) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.energy, b->energy, sizeof(double) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.worst, b->worst, sizeof(double) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.moves, b->moves, sizeof(uint64_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.steps, b->steps, sizeof(uint64_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.accepted, b->accepted, sizeof(uint64_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.kind_moves, b->kind_moves, sizeof(uint64_t) * k * JL_BMOVE_COUNT, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.kind_accepted, b->kind_accepted, sizeof(uint64_t) * k * JL_BMOVE_COUNT, h2d));
  jl_block_params q = *p;
  q.grid = c->grid;
  size_t smem = sizeof(double) * JL_BR_WS_DOUBLES(b->cap);
  jl_block_relax_kernel<<<b->count, jl_block_threads(b->cap), smem>>>(q, d);
  JL_CUDA_TRY(cudaGetLastError());
  for (int a = 0; a < 14; ++a) JL_CUDA_TRY(cudaMemcpy(hs[a], ds[a], sizeof(double) * nc, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->n, d.n, sizeof(int) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->best_n, d.best_n, sizeof(int) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->energy, d.energy, sizeof(double) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->worst, d.worst, sizeof(double) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->moves, d.moves, sizeof(uint64_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->steps, d.steps, sizeof(uint64_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->accepted, d.accepted, sizeof(uint64_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->kind_moves, d.kind_moves, sizeof(uint64_t) * k * JL_BMOVE_COUNT, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->kind_accepted, d.kind_accepted, sizeof(uint64_t) * k * JL_BMOVE_COUNT, d2h));
  return 0;
}
