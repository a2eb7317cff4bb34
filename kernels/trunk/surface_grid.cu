// The uniform grid of surface samples on the GPU (seed 5.3.2, built in
// parallel here): one thread per point computes its cell key, CUB's stable
// radix sort orders (key, point id) pairs, and one thread per sorted point
// marks where each cell's run starts and ends. The CPU build in
// src/trunk/surface_grid.c gives the same arrays.
#include <cstdio>
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include "cuda_check.h"

#include "surface_grid.h"

static __device__ int jl_dev_axis_cell(double v, double o, double cell, int dim) {
  double f = floor((v - o) / cell);
  if (!(f >= 0.0)) return 0;  /* also NaN */
  if (f > (double)(dim - 1)) return dim - 1;
  return (int)f;
}

__global__ void jl_grid_keys_kernel(const double *pts, int n, double ox, double oy, double oz,
                                    double cell, int dx, int dy, int dz, unsigned *key, int *id) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  int ix = jl_dev_axis_cell(pts[3 * i], ox, cell, dx);
  int iy = jl_dev_axis_cell(pts[3 * i + 1], oy, cell, dy);
  int iz = jl_dev_axis_cell(pts[3 * i + 2], oz, cell, dz);
  key[i] = (unsigned)(ix + dx * (iy + dy * iz));
  id[i] = i;
}

// Sorted keys (unsigned: the radix sort needs no sign handling): a run of
// equal keys is one cell; its first entry sets the
// start, its last the count.
__global__ void jl_grid_runs_kernel(const unsigned *key, int n, int *start, int *count) {
  int k = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= n) return;
  unsigned c = key[k];
  if (k == 0 || key[k - 1] != c) start[c] = k;
  if (k == n - 1 || key[k + 1] != c) {
    int first = k;
    while (first > 0 && key[first - 1] == c) --first;
    count[c] = k - first + 1;
  }
}

// Empty cells take the start of the next non-empty one (as a prefix sum of
// counts would), so both builds agree everywhere.
__global__ void jl_grid_fill_empty_kernel(int *start, const int *count, int n_cells, int n) {
  int c = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= n_cells || count[c] > 0) return;
  int d = c + 1;
  while (d < n_cells && count[d] == 0) ++d;
  start[c] = d < n_cells ? start[d] : n;
}

// Launch configuration: 256 threads per block for every pass.
static const int jl_grid_threads = 256;

extern "C" int jl_cuda_grid_sort(const double *pts, int n, const double origin[3], double cell,
                                 const int dim[3], int *point_id, int *cell_start,
                                 int *cell_count, char *msg, int msg_len) {
  int n_cells = dim[0] * dim[1] * dim[2];
  double *d_pts = NULL;
  unsigned *d_key = NULL, *d_key2 = NULL;
  int *d_id = NULL, *d_id2 = NULL, *d_start = NULL, *d_count = NULL;
  void *d_tmp = NULL;
  size_t tmp_bytes = 0;
  int rc = -1;
  int end_bit = 1;
  while (end_bit < 31 && (1 << end_bit) < n_cells) ++end_bit;
#define JL_TRY(call)                                                              \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      snprintf(msg, (size_t)msg_len, "%s: %s", #call, cudaGetErrorString(e_));    \
      goto done;                                                                  \
    }                                                                             \
  } while (0)
  JL_TRY(cudaMalloc(&d_pts, sizeof(double) * 3 * (size_t)n));
  JL_TRY(cudaMalloc(&d_key, sizeof(unsigned) * (size_t)n));
  JL_TRY(cudaMalloc(&d_id, sizeof(int) * (size_t)n));
  JL_TRY(cudaMalloc(&d_key2, sizeof(unsigned) * (size_t)n));
  JL_TRY(cudaMalloc(&d_id2, sizeof(int) * (size_t)n));
  JL_TRY(cudaMalloc(&d_start, sizeof(int) * (size_t)n_cells));
  JL_TRY(cudaMalloc(&d_count, sizeof(int) * (size_t)n_cells));
  JL_TRY(cudaMemcpy(d_pts, pts, sizeof(double) * 3 * (size_t)n, cudaMemcpyHostToDevice));
  JL_TRY(cudaMemset(d_count, 0, sizeof(int) * (size_t)n_cells));
  JL_TRY(cudaMemset(d_start, 0, sizeof(int) * (size_t)n_cells));
  {
    int blocks = (n + jl_grid_threads - 1) / jl_grid_threads;
    jl_grid_keys_kernel<<<blocks, jl_grid_threads>>>(d_pts, n, origin[0], origin[1], origin[2],
                                                     cell, dim[0], dim[1], dim[2], d_key, d_id);
    JL_TRY(cudaGetLastError());
    JL_TRY(cub::DeviceRadixSort::SortPairs(d_tmp, tmp_bytes, d_key, d_key2, d_id, d_id2, n, 0,
                                           end_bit));
    JL_TRY(cudaMalloc(&d_tmp, tmp_bytes));
    JL_TRY(cub::DeviceRadixSort::SortPairs(d_tmp, tmp_bytes, d_key, d_key2, d_id, d_id2, n, 0,
                                           end_bit));
    jl_grid_runs_kernel<<<blocks, jl_grid_threads>>>(d_key2, n, d_start, d_count);
    JL_TRY(cudaGetLastError());
    int cblocks = (n_cells + jl_grid_threads - 1) / jl_grid_threads;
    jl_grid_fill_empty_kernel<<<cblocks, jl_grid_threads>>>(d_start, d_count, n_cells, n);
    JL_TRY(cudaGetLastError());
  }
  JL_TRY(cudaMemcpy(point_id, d_id2, sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost));
  JL_TRY(cudaMemcpy(cell_start, d_start, sizeof(int) * (size_t)n_cells, cudaMemcpyDeviceToHost));
  JL_TRY(cudaMemcpy(cell_count, d_count, sizeof(int) * (size_t)n_cells, cudaMemcpyDeviceToHost));
  rc = 0;
done:
#undef JL_TRY
  cudaFree(d_pts); cudaFree(d_key); cudaFree(d_id); cudaFree(d_key2); cudaFree(d_id2);
  cudaFree(d_start); cudaFree(d_count); cudaFree(d_tmp);
  return rc;
}
