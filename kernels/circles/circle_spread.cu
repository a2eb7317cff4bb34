// The seed's third GPU strategy as a measured baseline (Goetzmann 2007,
// 4.2.3 "Fully Parallelized Contact Simulation"): one relaxation of ONE
// packing spread over the whole GPU, one contact simulation step per launch.
// The move kernel runs n blocks, block i for circle i, its threads each
// testing partners j (looping when n > blockDim), and sums the moves with a
// block reduction; the largest overlap goes to a device slot by atomicMax
// (exact); the apply kernel then stops the run when that overlap is <= tol
// or moves every circle. The enclosing radius is a separate kernel, run once
// at the end. Same per-pair arithmetic as jl_relax_run (src/circles/circle_relax.h,
// pair share 1/2); the CPU twin is src/circles/circle_spread.c. The move sum is a
// tree reduction, so the last bits may differ from the twin's serial sum.
#include <cstdio>
#include <cuda_runtime.h>

#include "cuda_check.h"

#include "circle_relax.h"
#include "circle_spread.h"

// Device-side run state: the largest overlap of step s goes to worst[s & 1]
// (non-negative doubles order like their bits); the apply kernel of step s
// clears worst[(s + 1) & 1] for the next step.
struct jl_spread_state {
  unsigned long long worst[2];
  int done;                // 1 once a step found every overlap <= tol
  int steps;               // steps applied
  double R;                // enclosing radius, from jl_spread_enclosing_kernel
};

__global__ void jl_spread_move_kernel(const double *__restrict__ r, const double *__restrict__ x,
                                      const double *__restrict__ y, double *__restrict__ dx,
                                      double *__restrict__ dy, int n, double Rc, int parity,
                                      jl_spread_state *st) {
  __shared__ double red_x[32], red_y[32], red_o[32];
  if (st->done) return;
  const int i = (int)blockIdx.x;
  const double xi = x[i], yi = y[i], ri = r[i];
  double ax = 0.0, ay = 0.0, ov = 0.0;
  for (int j = (int)threadIdx.x; j < n; j += (int)blockDim.x)
    jl_pair_contact(i, j, xi, yi, ri, x[j], y[j], r[j], 0, &ax, &ay, &ov);
  for (int o = 16; o > 0; o >>= 1) {
    ax += __shfl_down_sync(0xffffffffu, ax, o);
    ay += __shfl_down_sync(0xffffffffu, ay, o);
    ov = fmax(ov, __shfl_down_sync(0xffffffffu, ov, o));
  }
  const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
  if (lane == 0) { red_x[warp] = ax; red_y[warp] = ay; red_o[warp] = ov; }
  __syncthreads();
  if (threadIdx.x != 0) return;
  ax = red_x[0]; ay = red_y[0]; ov = red_o[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
    ax += red_x[w];
    ay += red_y[w];
    ov = fmax(ov, red_o[w]);
  }
  jl_container_contact(xi, yi, ri, Rc, &ax, &ay, &ov);
  dx[i] = ax;
  dy[i] = ay;
  atomicMax(&st->worst[parity], (unsigned long long)__double_as_longlong(ov));
}

__global__ void jl_spread_apply_kernel(double *__restrict__ x, double *__restrict__ y,
                                       const double *__restrict__ dx,
                                       const double *__restrict__ dy, int n, double tol,
                                       int parity, jl_spread_state *st) {
  if (st->done) return;
  const double worst = __longlong_as_double((long long)st->worst[parity]);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    st->worst[parity ^ 1] = 0ull;
    if (worst <= tol) st->done = 1;
    else st->steps++;
  }
  if (worst <= tol) return;
  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    x[i] += dx[i];
    y[i] += dy[i];
  }
}

// One block: max |c_i| + r_i, exact in any order.
__global__ void jl_spread_enclosing_kernel(const double *__restrict__ r,
                                           const double *__restrict__ x,
                                           const double *__restrict__ y, int n,
                                           jl_spread_state *st) {
  __shared__ double red[32];
  double m = 0.0;
  for (int i = (int)threadIdx.x; i < n; i += (int)blockDim.x)
    m = fmax(m, sqrt(x[i] * x[i] + y[i] * y[i]) + r[i]);
  for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) m = fmax(m, red[w]);
  st->R = m;
}

// Threads per circle block: a warp multiple covering the partners, capped so
// that large instances loop.
static int jl_spread_threads(int n) {
  int t = (n + 31) / 32 * 32;
  return t > 1024 ? 1024 : t;
}


struct jl_spread_dev {
  double *buf = nullptr;          // r x y dx dy, n each
  jl_spread_state *st = nullptr;
};

static int jl_spread_body(jl_spread_dev *dv, const double *r, double *x, double *y, int n,
                          double Rc, double tol, int steps, int *legal_out, double *R_out,
                          char *msg, int msg_len) {
  const size_t nb = sizeof(double) * (size_t)n;
  JL_CUDA_TRY(cudaMalloc(&dv->buf, 5 * nb));
  JL_CUDA_TRY(cudaMalloc(&dv->st, sizeof(jl_spread_state)));
  double *d_r = dv->buf, *d_x = d_r + n, *d_y = d_x + n, *d_dx = d_y + n, *d_dy = d_dx + n;
  jl_spread_state *st = dv->st;
  JL_CUDA_TRY(cudaMemset(st, 0, sizeof(jl_spread_state)));
  JL_CUDA_TRY(cudaMemcpy(d_r, r, nb, cudaMemcpyHostToDevice));
  JL_CUDA_TRY(cudaMemcpy(d_x, x, nb, cudaMemcpyHostToDevice));
  JL_CUDA_TRY(cudaMemcpy(d_y, y, nb, cudaMemcpyHostToDevice));
  const int move_threads = jl_spread_threads(n);
  const int apply_threads = 256, apply_blocks = (n + apply_threads - 1) / apply_threads;
  const int poll_every = 16;  // with tol >= 0, look at st->done this often
  for (int s = 0; s < steps; ++s) {
    jl_spread_move_kernel<<<n, move_threads>>>(d_r, d_x, d_y, d_dx, d_dy, n, Rc, s & 1, st);
    jl_spread_apply_kernel<<<apply_blocks, apply_threads>>>(d_x, d_y, d_dx, d_dy, n, tol, s & 1,
                                                            st);
    if (tol >= 0.0 && (s % poll_every) == poll_every - 1) {
      int done = 0;
      JL_CUDA_TRY(cudaGetLastError());
      JL_CUDA_TRY(cudaMemcpy(&done, &st->done, sizeof done, cudaMemcpyDeviceToHost));
      if (done) break;
    }
  }
  JL_CUDA_TRY(cudaGetLastError());
  if (R_out) {
    jl_spread_enclosing_kernel<<<1, 1024>>>(d_r, d_x, d_y, n, st);
    JL_CUDA_TRY(cudaGetLastError());
  }
  jl_spread_state h;
  JL_CUDA_TRY(cudaMemcpy(&h, st, sizeof h, cudaMemcpyDeviceToHost));
  JL_CUDA_TRY(cudaMemcpy(x, d_x, nb, cudaMemcpyDeviceToHost));
  JL_CUDA_TRY(cudaMemcpy(y, d_y, nb, cudaMemcpyDeviceToHost));
  if (legal_out) *legal_out = h.done;
  if (R_out) *R_out = h.R;
  return h.steps;
}

extern "C" int jl_cuda_spread_relax(const double *r, double *x, double *y, int n, double Rc,
                                    double tol, int steps, int *legal_out, double *R_out,
                                    char *msg, int msg_len) {
  if (legal_out) *legal_out = 0;
  if (n < 1) {
    snprintf(msg, (size_t)msg_len, "spread relaxation needs n >= 1 circles, got %d", n);
    return -1;
  }
  jl_spread_dev dv;
  int rc = jl_spread_body(&dv, r, x, y, n, Rc, tol, steps < 0 ? 0 : steps, legal_out, R_out,
                          msg, msg_len);
  cudaFree(dv.buf);
  cudaFree(dv.st);
  return rc;
}
