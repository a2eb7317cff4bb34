// Circle packing relaxation: one thread block per candidate packing, one
// thread per circle, positions in shared memory, cuRAND Philox per block.
// The algorithm is src/circles/circle_relax.h, shared with the CPU twin in
// src/circles/circle_relax.c.
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>

#include "cuda_check.h"

#include "circle_batch.h"

// Launch configuration: a warp multiple covering the circles, capped so
// large instances loop (JL_FOR strides by blockDim). Two builds of one
// kernel, by launch bounds:
// - up to JL_CIRCLE_SMALL_THREADS threads (n <= 64, the contest sizes): the
//   bound asks for JL_CIRCLE_SMALL_BLOCKS resident blocks per SM, so the
//   compiler keeps fewer registers and an SM holds more of the small blocks
//   (at 128 registers it held 8 blocks of 64 threads: a quarter of its
//   threads);
// - otherwise 256 threads, 2 blocks: 128 registers without spills (at 132,
//   measured after the record-to-record trial went in, an SM held one block
//   fewer at n = 50 and n = 128 and launches took an extra wave);
// - from the size where an SM's shared memory holds only one candidate's
//   workspace (about 750 circles on an H100), 512 threads, 1 block: the
//   same 128 registers a thread, so the SM runs twice the threads of the
//   256-thread block that would be its only one, each with half the circles.
#define JL_CIRCLE_MAX_THREADS 256
#define JL_CIRCLE_MIN_BLOCKS 2
#define JL_CIRCLE_SMALL_THREADS 64
#define JL_CIRCLE_SMALL_BLOCKS 10
#define JL_CIRCLE_WIDE_THREADS 512

template <int MAX_THREADS, int MIN_BLOCKS>
__global__ void __launch_bounds__(MAX_THREADS, MIN_BLOCKS)
jl_circle_relax_kernel(jl_relax_params p, jl_circle_batch b, double *nbr) {
  extern __shared__ double jl_mem[];
  __shared__ jl_relax_ws ws;
  // each block's neighbour lists in global memory (NULL: all pairs)
  double *nbmem = nbr ? nbr + (size_t)blockIdx.x * JL_NBR_DOUBLES(p.n) : NULL;
  jl_relax_candidate(&ws, jl_mem, nbmem, &p, b, (int)blockIdx.x);
}

typedef void (*jl_circle_kernel_fn)(jl_relax_params, jl_circle_batch, double *);

// Whether an SM of this device holds at most one 256-thread block of n
// circles (its shared memory); then the 512-thread build runs. A failed
// query keeps the 256-thread one.
static int jl_circle_wide(int n) {
  jl_circle_kernel_fn k = jl_circle_relax_kernel<JL_CIRCLE_MAX_THREADS, JL_CIRCLE_MIN_BLOCKS>;
  size_t smem = sizeof(double) * JL_RELAX_WS_DOUBLES(n);
  int per_sm = 0;
  if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) !=
          cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, JL_CIRCLE_MAX_THREADS, smem) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return per_sm == 1;
}

static int jl_circle_threads(int n) {
  int t = (n + 31) / 32 * 32;
  if (t <= JL_CIRCLE_MAX_THREADS) return t;
  return jl_circle_wide(n) ? JL_CIRCLE_WIDE_THREADS : JL_CIRCLE_MAX_THREADS;
}

static jl_circle_kernel_fn jl_circle_kernel_for(int n) {
  int t = jl_circle_threads(n);
  if (t <= JL_CIRCLE_SMALL_THREADS)
    return jl_circle_relax_kernel<JL_CIRCLE_SMALL_THREADS, JL_CIRCLE_SMALL_BLOCKS>;
  if (t == JL_CIRCLE_WIDE_THREADS) return jl_circle_relax_kernel<JL_CIRCLE_WIDE_THREADS, 1>;
  return jl_circle_relax_kernel<JL_CIRCLE_MAX_THREADS, JL_CIRCLE_MIN_BLOCKS>;
}

extern "C" int jl_cuda_circles_threads(int n) { return jl_circle_threads(n); }

extern "C" int jl_cuda_circles_resident(int n, int *blocks_per_sm, char *msg, int msg_len) {
  jl_circle_kernel_fn k = jl_circle_kernel_for(n);
  size_t smem = sizeof(double) * JL_RELAX_WS_DOUBLES(n);
  JL_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  JL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, jl_circle_threads(n),
                                                            smem));
  return 0;
}

struct jl_cuda_circles {
  int n, count;
  jl_circle_batch d;  // device pointers
  jl_circle_cut *cut; // host-mapped: the host raises flag, the kernel polls it
  double *nbr;        // neighbour lists, JL_NBR_DOUBLES(n) per candidate (allocated
                      // at the first launch that uses them; never copied)
};

// The host's wait for a launch it may cut: short sleeps between polls, so
// the waiting thread costs little and the cut comes within a millisecond.
#define JL_CUT_WATCH_NS 200000L


extern "C" void jl_cuda_circles_destroy(jl_cuda_circles *c) {
  if (!c) return;
  cudaFree(c->d.r); cudaFree(c->d.x); cudaFree(c->d.y); cudaFree(c->d.R); cudaFree(c->d.R_rec);
  cudaFree(c->d.need_start); cudaFree(c->d.stuck); cudaFree(c->d.rng_offset);
  cudaFree(c->d.steps); cudaFree(c->d.trials_done); cudaFree(c->d.accepted);
  cudaFree(c->d.wx); cudaFree(c->d.wy); cudaFree(c->d.Rt);
  cudaFree(c->nbr);
  if (c->cut) cudaFreeHost(c->cut);
  delete c;
}

extern "C" int jl_cuda_circles_create(jl_cuda_circles **out, int n, int count, char *msg,
                                      int msg_len) {
  // One candidate's workspace lives in one block's shared memory: say so
  // plainly before any allocation when the packing is too large for it.
  size_t need = sizeof(double) * JL_RELAX_WS_DOUBLES(n) + sizeof(jl_relax_ws);
  int dev = 0, optin = 0;
  JL_CUDA_TRY(cudaGetDevice(&dev));
  JL_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (need > (size_t)optin) {
    size_t fit = (((size_t)optin - sizeof(jl_relax_ws)) / sizeof(double) - JL_RELAX_WS_DOUBLES(0)) /
                 (JL_RELAX_WS_DOUBLES(1) - JL_RELAX_WS_DOUBLES(0));
    snprintf(msg, (size_t)msg_len,
             "%d circles need %zu KiB of shared memory per candidate, this GPU gives a block "
             "at most %d KiB (%zu circles): use --device cpu", n, need / 1024, optin / 1024, fit);
    *out = NULL;
    return -1;
  }
  jl_cuda_circles *c = new jl_cuda_circles();
  *out = c;
  c->n = n;
  c->count = count;
  size_t nc = (size_t)n * (size_t)count;
  c->d.n = n;
  c->d.count = count;
  JL_CUDA_TRY(cudaMalloc(&c->d.r, sizeof(double) * (size_t)n));
  JL_CUDA_TRY(cudaMalloc(&c->d.x, sizeof(double) * nc));
  JL_CUDA_TRY(cudaMalloc(&c->d.y, sizeof(double) * nc));
  JL_CUDA_TRY(cudaMalloc(&c->d.R, sizeof(double) * (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.R_rec, sizeof(double) * (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.need_start, (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.stuck, sizeof(uint32_t) * (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.rng_offset, sizeof(uint64_t) * (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.steps, sizeof(uint64_t) * (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.trials_done, sizeof(uint64_t) * (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.accepted, sizeof(uint64_t) * (size_t)count));
  JL_CUDA_TRY(cudaMalloc(&c->d.wx, sizeof(double) * nc));
  JL_CUDA_TRY(cudaMalloc(&c->d.wy, sizeof(double) * nc));
  JL_CUDA_TRY(cudaMalloc(&c->d.Rt, sizeof(double) * (size_t)count));
  JL_CUDA_TRY(cudaHostAlloc(&c->cut, sizeof(jl_circle_cut), cudaHostAllocMapped));
  c->cut->flag = 0;
  size_t smem = sizeof(double) * JL_RELAX_WS_DOUBLES(n);
  JL_CUDA_TRY(cudaFuncSetAttribute(jl_circle_kernel_for(n),
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  return 0;
}

extern "C" int jl_cuda_circles_run(jl_cuda_circles *c, const jl_relax_params *p,
                                   jl_circle_batch *b, const jl_circle_cut *cut, char *msg,
                                   int msg_len) {
  if (b->n != c->n || b->count > c->count) {
    snprintf(msg, (size_t)msg_len, "batch of %d x %d does not fit buffers of %d x %d", b->count,
             b->n, c->count, c->n);
    return -1;
  }
  size_t nc = (size_t)b->n * (size_t)b->count, k = (size_t)b->count;
  jl_circle_batch d = c->d;
  d.count = b->count;
  cudaMemcpyKind h2d = cudaMemcpyHostToDevice, d2h = cudaMemcpyDeviceToHost;
  JL_CUDA_TRY(cudaMemcpy(d.r, b->r, sizeof(double) * (size_t)b->n, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.x, b->x, sizeof(double) * nc, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.y, b->y, sizeof(double) * nc, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.R, b->R, sizeof(double) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.R_rec, b->R_rec, sizeof(double) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.need_start, b->need_start, k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.stuck, b->stuck, sizeof(uint32_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.rng_offset, b->rng_offset, sizeof(uint64_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.steps, b->steps, sizeof(uint64_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.trials_done, b->trials_done, sizeof(uint64_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.accepted, b->accepted, sizeof(uint64_t) * k, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.wx, b->wx, sizeof(double) * nc, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.wy, b->wy, sizeof(double) * nc, h2d));
  JL_CUDA_TRY(cudaMemcpy(d.Rt, b->Rt, sizeof(double) * k, h2d));
  size_t smem = sizeof(double) * JL_RELAX_WS_DOUBLES(b->n);
  d.cut = NULL;
  if (cut) {
    c->cut->at = cut->at;
    c->cut->stop = cut->stop;
    __atomic_store_n(&c->cut->flag, 0, __ATOMIC_RELAXED);
    JL_CUDA_TRY(cudaHostGetDevicePointer((void **)&d.cut, c->cut, 0));
    jl_circle_cut_check(c->cut);  // already due: every block ends at its first poll
  }
  if (p->nbr && !c->nbr)
    JL_CUDA_TRY(cudaMalloc(&c->nbr, sizeof(double) * JL_NBR_DOUBLES(c->n) * (size_t)c->count));
  jl_circle_kernel_for(b->n)<<<b->count, jl_circle_threads(b->n), smem>>>(*p, d,
                                                                         p->nbr ? c->nbr : NULL);
  JL_CUDA_TRY(cudaGetLastError());
  if (cut) {
    while (cudaStreamQuery(0) == cudaErrorNotReady) {
      jl_circle_cut_check(c->cut);
      struct timespec ts = {0, JL_CUT_WATCH_NS};
      nanosleep(&ts, NULL);
    }
    JL_CUDA_TRY(cudaStreamSynchronize(0));
  }
  JL_CUDA_TRY(cudaMemcpy(b->x, d.x, sizeof(double) * nc, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->y, d.y, sizeof(double) * nc, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->R, d.R, sizeof(double) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->R_rec, d.R_rec, sizeof(double) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->need_start, d.need_start, k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->stuck, d.stuck, sizeof(uint32_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->rng_offset, d.rng_offset, sizeof(uint64_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->steps, d.steps, sizeof(uint64_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->trials_done, d.trials_done, sizeof(uint64_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->accepted, d.accepted, sizeof(uint64_t) * k, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->wx, d.wx, sizeof(double) * nc, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->wy, d.wy, sizeof(double) * nc, d2h));
  JL_CUDA_TRY(cudaMemcpy(b->Rt, d.Rt, sizeof(double) * k, d2h));
  return 0;
}
