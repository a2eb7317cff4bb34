// The reachable volume on the GPU: the CPU twin's frame pipeline
// (src/trunk/trunk_reach.c: move the outer map into the frame's grid, open it by
// the block in each of its edge assignments by run-doubling passes, OR the
// openings, move the union back) with one thread per 64-voxel word in every
// pass. The per-word arithmetic is src/trunk/reach_math.h, shared with the twin,
// so both give the same voxels.
#include <cstdio>
#include <cuda_runtime.h>

#include "cuda_check.h"

#include "trunk_reach.h"

struct jl_cuda_reach {
  int dim[3], words;
  size_t n_words, cap;
  uint64_t *world, *reach;
  uint64_t *buf[4];        // the frame's map, two pass buffers, the union
};

static const int jl_reach_threads = 256;

static unsigned jl_reach_blocks(size_t n) {
  size_t b = (n + jl_reach_threads - 1) / jl_reach_threads;
  return (unsigned)(b > 0 ? (b < 0x7fffffffu ? b : 0x7fffffffu) : 1);
}

// Word q of a grid of `words` words a row and ny rows a layer: (w, j, k).
static __device__ void jl_reach_word_coords(size_t q, int words, int ny, int *w, int *j, int *k) {
  *w = (int)(q % (size_t)words);
  size_t r = q / (size_t)words;
  *j = (int)(r % (size_t)ny);
  *k = (int)(r / (size_t)ny);
}

#define JL_REACH_FOR_WORDS(n) \
  for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < (n); q += (size_t)gridDim.x * blockDim.x)

__global__ void jl_reach_cover_kernel(jl_reach_xform x, const uint64_t *src, uint64_t *out, int nx, int words,
                                      int ny, size_t n) {
  JL_REACH_FOR_WORDS(n) {
    int w, j, k;
    jl_reach_word_coords(q, words, ny, &w, &j, &k);
    out[q] = jl_reach_cover_word(&x, src, nx, w, j, k);
  }
}

__global__ void jl_reach_back_kernel(jl_reach_xform x, const uint64_t *src, const uint64_t *mask, uint64_t *out,
                                     int words, int ny, size_t n) {
  JL_REACH_FOR_WORDS(n) {
    if (!(mask[q] & ~out[q])) continue;
    int w, j, k;
    jl_reach_word_coords(q, words, ny, &w, &j, &k);
    out[q] = jl_reach_back_word(&x, src, mask[q], out[q], w, j, k);
  }
}

__global__ void jl_reach_step_kernel(const uint64_t *in, uint64_t *out, int nx, int ny, int nz, int words,
                                     jl_reach_pass ps, size_t n) {
  int dim[3] = {nx, ny, nz};
  JL_REACH_FOR_WORDS(n) {
    int w, j, k;
    jl_reach_word_coords(q, words, ny, &w, &j, &k);
    out[q] = jl_reach_step_word(in, dim, words, w, j, k, ps);
  }
}

__global__ void jl_reach_union_kernel(const uint64_t *in, uint64_t *out, size_t n) {
  JL_REACH_FOR_WORDS(n) out[q] |= in[q];
}

extern "C" void jl_cuda_reach_destroy(jl_cuda_reach *c) {
  if (!c) return;
  cudaFree(c->world);
  cudaFree(c->reach);
  for (int b = 0; b < 4; ++b) cudaFree(c->buf[b]);
  delete c;
}

extern "C" int jl_cuda_reach_create(jl_cuda_reach **out, const uint64_t *world, const int dim[3], size_t frame_cap,
                                    char *msg, int msg_len) {
  jl_cuda_reach *c = new jl_cuda_reach();
  *out = c;
  for (int d = 0; d < 3; ++d) c->dim[d] = dim[d];
  c->words = jl_reach_row_words(dim[0]);
  c->n_words = (size_t)c->words * (size_t)dim[1] * (size_t)dim[2];
  c->cap = frame_cap > c->n_words ? frame_cap : c->n_words;
  JL_CUDA_TRY(cudaMalloc(&c->world, c->n_words * sizeof(uint64_t)));
  JL_CUDA_TRY(cudaMalloc(&c->reach, c->n_words * sizeof(uint64_t)));
  for (int b = 0; b < 4; ++b) JL_CUDA_TRY(cudaMalloc(&c->buf[b], c->cap * sizeof(uint64_t)));
  JL_CUDA_TRY(cudaMemcpy(c->world, world, c->n_words * sizeof(uint64_t), cudaMemcpyHostToDevice));
  JL_CUDA_TRY(cudaMemset(c->reach, 0, c->n_words * sizeof(uint64_t)));
  return 0;
}

extern "C" int jl_cuda_reach_frame(jl_cuda_reach *c, const int fdim[3], int identity,
                                   const jl_reach_xform *to_frame, const jl_reach_xform *to_world,
                                   const jl_reach_pass *passes, const int *npasses, int n_perms, char *msg,
                                   int msg_len) {
  int fwords = jl_reach_row_words(fdim[0]);
  size_t fn = (size_t)fwords * (size_t)fdim[1] * (size_t)fdim[2];
  if (fn > c->cap) {
    snprintf(msg, (size_t)msg_len, "frame of %zu words over the %zu allocated", fn, c->cap);
    return -1;
  }
  const uint64_t *free_map = c->world;
  if (!identity) {
    jl_reach_cover_kernel<<<jl_reach_blocks(fn), jl_reach_threads>>>(*to_frame, c->world, c->buf[0], fdim[0],
                                                                     fwords, fdim[1], fn);
    JL_CUDA_TRY(cudaGetLastError());
    free_map = c->buf[0];
  }
  uint64_t *uni = c->buf[3];
  JL_CUDA_TRY(cudaMemset(uni, 0, fn * sizeof(uint64_t)));
  for (int p = 0; p < n_perms; ++p) {
    const uint64_t *in = free_map;
    uint64_t *pp[2] = {c->buf[1], c->buf[2]};
    int cur = 0;
    for (int q = 0; q < npasses[p]; ++q) {
      jl_reach_step_kernel<<<jl_reach_blocks(fn), jl_reach_threads>>>(
          in, pp[cur], fdim[0], fdim[1], fdim[2], fwords, passes[p * JL_REACH_MAX_PASSES + q], fn);
      JL_CUDA_TRY(cudaGetLastError());
      in = pp[cur];
      cur ^= 1;
    }
    jl_reach_union_kernel<<<jl_reach_blocks(fn), jl_reach_threads>>>(in, uni, fn);
    JL_CUDA_TRY(cudaGetLastError());
  }
  if (identity)
    jl_reach_union_kernel<<<jl_reach_blocks(c->n_words), jl_reach_threads>>>(uni, c->reach, c->n_words);
  else
    jl_reach_back_kernel<<<jl_reach_blocks(c->n_words), jl_reach_threads>>>(*to_world, uni, c->world, c->reach,
                                                                            c->words, c->dim[1], c->n_words);
  JL_CUDA_TRY(cudaGetLastError());
  JL_CUDA_TRY(cudaDeviceSynchronize());
  return 0;
}

extern "C" int jl_cuda_reach_fetch(jl_cuda_reach *c, uint64_t *reach, char *msg, int msg_len) {
  JL_CUDA_TRY(cudaMemcpy(reach, c->reach, c->n_words * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  return 0;
}
