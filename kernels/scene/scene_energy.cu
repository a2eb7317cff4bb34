// Scene statistics on the device (src/scene/scene_gpu_stats.h): the bodies'
// kinetic and potential energy by a deterministic multi-block reduction
// (CPU twin: jl_scene_energy_twin in src/scene/scene_energy.c, same order of
// additions), and the last step's impulses read back from the arena.
#include "scene_arena.cuh"

#include "scene_gpu_stats.h"

struct jl_en_gravity {
  double g[3];
};

// Adds the block's JL_EN_THREADS partial sums by the fixed tree; thread 0
// writes the block's (ke, pe) to out[2 * blockIdx.x].
__device__ static void jl_en_block_sum(double ke, double pe, double *out) {
  __shared__ double s_ke[JL_EN_THREADS], s_pe[JL_EN_THREADS];
  int t = threadIdx.x;
  s_ke[t] = ke;
  s_pe[t] = pe;
  __syncthreads();
  for (int s = JL_EN_THREADS / 2; s > 0; s >>= 1) {
    if (t < s) {
      s_ke[t] = s_ke[t] + s_ke[t + s];
      s_pe[t] = s_pe[t] + s_pe[t + s];
    }
    __syncthreads();
  }
  if (t == 0) {
    out[2 * (size_t)blockIdx.x] = s_ke[0];
    out[2 * (size_t)blockIdx.x + 1] = s_pe[0];
  }
}

// Pass 1: per-body energies, summed per thread then per block.
__global__ void jl_en_bodies_kernel(long n, const uint8_t *is_static, const double *pos,
                                    const double *quat, const double *vel, const double *omega,
                                    const double *inv_mass, const double *inv_inertia,
                                    jl_en_gravity gr, double *out) {
  long base = (long)blockIdx.x * JL_EN_CHUNK + threadIdx.x;
  double ke = 0.0, pe = 0.0;
  for (int j = 0; j < JL_EN_PER_THREAD; ++j) {
    long k = base + (long)j * JL_EN_THREADS;
    if (k < n) {
      double a, b;
      jl_en_body(is_static, pos, quat, vel, omega, inv_mass, inv_inertia, gr.g, k, &a, &b);
      ke = ke + a;
      pe = pe + b;
    }
  }
  jl_en_block_sum(ke, pe, out);
}

// Later passes: n (ke, pe) pairs from the previous pass, the same schedule.
__global__ void jl_en_pairs_kernel(long n, const double *in, double *out) {
  long base = (long)blockIdx.x * JL_EN_CHUNK + threadIdx.x;
  double ke = 0.0, pe = 0.0;
  for (int j = 0; j < JL_EN_PER_THREAD; ++j) {
    long k = base + (long)j * JL_EN_THREADS;
    if (k < n) {
      ke = ke + in[2 * k];
      pe = pe + in[2 * k + 1];
    }
  }
  jl_en_block_sum(ke, pe, out);
}

// The scratch holds two ping-pong halves of 2 * jl_en_blocks(nb) doubles each.
static int jl_en_reserve(jl_gpu_stats_ws *ws, size_t need, char *msg, int msg_len) {
  if (need <= ws->cap) return 0;
  if (ws->buf) cudaFree(ws->buf);
  ws->buf = nullptr;
  ws->cap = 0;
  cudaError_t e = cudaMalloc(&ws->buf, need);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    ws->buf = nullptr;
    snprintf(msg, (size_t)msg_len, "device out of memory for the energy reduction: needs %zu bytes",
             need);
    return -1;
  }
  ws->cap = need;
  return 0;
}

extern "C" int jl_cuda_scene_energy(jl_scene_gpu *g, const double gravity[3], jl_gpu_stats_ws *ws,
                                    double *kinetic, double *potential, char *msg, int msg_len) {
  *kinetic = *potential = 0.0;
  long n = g->nb;
  if (n <= 0) return 0;
  long blocks = jl_en_blocks(n);
  size_t half = 2 * (size_t)blocks;
  if (jl_en_reserve(ws, 2 * half * sizeof(double), msg, msg_len)) return -1;
  double *a = (double *)ws->buf, *b = a + half;
  jl_en_gravity gr = {{gravity[0], gravity[1], gravity[2]}};
  jl_en_bodies_kernel<<<(unsigned)blocks, JL_EN_THREADS>>>(
      n, jl_dp<uint8_t>(g->is_static), jl_dp<double>(g->pos), jl_dp<double>(g->quat),
      jl_dp<double>(g->vel), jl_dp<double>(g->omega), jl_dp<double>(g->inv_mass),
      jl_dp<double>(g->inv_inertia), gr, a);
  JL_CUDA_TRY(cudaGetLastError());
  long m = blocks;
  while (m > 1) {
    long mb = jl_en_blocks(m);
    jl_en_pairs_kernel<<<(unsigned)mb, JL_EN_THREADS>>>(m, a, b);
    JL_CUDA_TRY(cudaGetLastError());
    double *t = a;
    a = b;
    b = t;
    m = mb;
  }
  double host[2];
  JL_CUDA_TRY(cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost));
  *kinetic = host[0];
  *potential = host[1];
  return 0;
}

extern "C" void jl_cuda_stats_ws_free(jl_gpu_stats_ws *ws) {
  if (ws->buf) cudaFree(ws->buf);
  ws->buf = nullptr;
  ws->cap = 0;
}

extern "C" int jl_cuda_scene_impulse_count(const jl_scene_gpu *g) { return g->prev_n; }

// The warm-start memory the device step leaves (kernels/scene/scene_step.cu):
// prev_key sorted, prev_imp the world impulses in that order.
extern "C" int jl_cuda_scene_get_impulses(jl_scene_gpu *g, uint64_t *keys, double *imp, char *msg,
                                          int msg_len) {
  size_t n = (size_t)g->prev_n;
  if (n == 0) return 0;
  JL_CUDA_TRY(cudaMemcpy(keys, g->prev_key.p, n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  JL_CUDA_TRY(cudaMemcpy(imp, g->prev_imp.p, 3 * n * sizeof(double), cudaMemcpyDeviceToHost));
  return 0;
}

// Replaces the warm-start memory (keys sorted, the next step looks them up).
extern "C" int jl_cuda_scene_set_impulses(jl_scene_gpu *g, const uint64_t *keys, const double *imp,
                                          int n, char *msg, int msg_len) {
  g->prev_n = 0;
  if (n <= 0) return 0;
  size_t sn = (size_t)n;
  JL_RESERVE(prev_key, sn * sizeof(uint64_t), "warm-start keys");
  JL_RESERVE(prev_imp, 3 * sn * sizeof(double), "warm-start impulses");
  JL_CUDA_TRY(cudaMemcpy(g->prev_key.p, keys, sn * sizeof(uint64_t), cudaMemcpyHostToDevice));
  JL_CUDA_TRY(cudaMemcpy(g->prev_imp.p, imp, 3 * sn * sizeof(double), cudaMemcpyHostToDevice));
  g->prev_n = n;
  return 0;
}

extern "C" int jl_cuda_scene_sync(jl_scene_gpu *g, char *msg, int msg_len) {
  JL_CUDA_TRY(cudaSetDevice(g->ordinal));
  JL_CUDA_TRY(cudaDeviceSynchronize());
  return 0;
}

// A kernel of this file: jl_cuda_kernels_load loads all of them (scene_arena.cu).
extern "C" const void *jl_cuda_scene_energy_code(void) {
  return (const void *)jl_en_pairs_kernel;
}
