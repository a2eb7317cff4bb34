// One Moreau midpoint step on the device (src/scene/scene_gpu.h), matrix-free
// JOR or coloured SOR: half step, free velocity, collide, closed-contact
// filter (flag + scan + scatter, order kept), setup, warm start by key, JOR
// (or colouring + SOR, kernels/scene/scene_colour.cu), end velocities,
// half step, warm-start memory (keys sorted with their contact by a radix
// sort). The per-element arithmetic is src/scene/step_math.h and the other shared
// headers; src/scene/step_twin.c is the CPU twin. Host traffic: the counts of the
// stages, the colours' offsets, the solver state every check_every
// iterations, and the max penetration at the end.
#include <algorithm>
#include <climits>
#include <ctime>

#include <cub/cub.cuh>

#include "scene_arena.cuh"

#include "scene_gpu.h"
#include "step_math.h"

extern "C" int jl_cuda_scene_half_step(jl_scene_gpu *g, double half_dt, char *msg, int msg_len);
extern "C" int jl_cuda_scene_free_velocity(jl_scene_gpu *g, const double gravity[3], double dt,
                                           double *dv, char *msg, int msg_len);
extern "C" int jl_cuda_scene_collide(jl_scene_gpu *g, double margin, jl_gpu_collide_stats *st,
                                     char *msg, int msg_len);
extern "C" int jl_cuda_scene_setup(jl_scene_gpu *g, const double *mu_table,
                                   const double *eps_n_table, const double *eps_t_table,
                                   int build_g, char *msg, int msg_len);

__global__ void jl_step_flag_kernel(int n, const double *gap, const int *a, const int *b,
                                    const uint8_t *is_static, double tol, int *flag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  flag[i] = i < n ? jl_st_closed(gap[i], a[i], b[i], is_static, tol) : 0;
}

struct jl_contact_arrays {
  int *a, *b;
  double *point, *normal, *gap;
  uint64_t *key;
};

__global__ void jl_step_scatter_kernel(int n, const int *flag, const int *scan,
                                       jl_contact_arrays in, jl_contact_arrays out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !flag[i]) return;
  int o = scan[i];
  out.a[o] = in.a[i];
  out.b[o] = in.b[i];
  for (int d = 0; d < 3; ++d) {
    out.point[3 * o + d] = in.point[3 * (size_t)i + d];
    out.normal[3 * o + d] = in.normal[3 * (size_t)i + d];
  }
  out.gap[o] = in.gap[i];
  out.key[o] = in.key[i];
}

// max(0, max -gap) in two passes (partials, then one block): a max is exact
// in any order.
__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_step_pen_partial_kernel(int n,
                                                                             const double *gap,
                                                                             double *part) {
  __shared__ double s_m[JL_SCENE_BLOCK];
  int t = threadIdx.x;
  double m = 0.0;
  for (long long i = (long long)blockIdx.x * blockDim.x + t; i < n;
       i += (long long)gridDim.x * blockDim.x)
    if (-gap[i] > m) m = -gap[i];
  s_m[t] = m;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (t < h && s_m[t + h] > s_m[t]) s_m[t] = s_m[t + h];
    __syncthreads();
  }
  if (t == 0) part[blockIdx.x] = s_m[0];
}

__global__ void __launch_bounds__(JL_SCENE_REDUCE_THREADS) jl_step_max_pen_kernel(
    int parts, const double *part, double *out) {
  __shared__ double s_m[JL_SCENE_REDUCE_THREADS];
  int t = threadIdx.x;
  double m = 0.0;
  for (int i = t; i < parts; i += blockDim.x)
    if (part[i] > m) m = part[i];
  s_m[t] = m;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (t < h && s_m[t + h] > s_m[t]) s_m[t] = s_m[t + h];
    __syncthreads();
  }
  if (t == 0) *out = s_m[0];
}

__global__ void jl_step_warm_kernel(int n, int warm, const uint64_t *key, const double *frame,
                                    const uint64_t *prev_key, const double *prev_imp, int prev_n,
                                    double *lam, double *lam_init) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double l[3] = {0.0, 0.0, 0.0};
  if (warm) jl_st_warm(key[i], frame + 9 * (size_t)i, prev_key, prev_imp, prev_n, l);
  for (int d = 0; d < 3; ++d) lam[3 * (size_t)i + d] = lam_init[3 * (size_t)i + d] = l[d];
}

__global__ void jl_step_end_velocity_kernel(int nb, const uint8_t *is_static, const double *dv,
                                            const int *body_ptr, const int *body_contact,
                                            const int *ka, const double *frame,
                                            const double *irx, const double *im,
                                            const double *lam, double *vel, double *omega) {
  // one thread per (body, component): once per step, so its chain of loads
  // costs little (the solver's du, every iteration, spreads them: jl_jor_du_kernel)
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= 6LL * nb) return;
  int k = (int)(t / 6), c = (int)(t % 6);
  if (is_static[k]) return;
  // dv_free first, then the contacts: jl_st_end_velocity_body's order
  double acc = jl_pm_du_body_comp(k, c, body_ptr, body_contact, ka, frame, irx, im, lam, dv[t]);
  if (c < 3) vel[3 * (size_t)k + c] += acc;
  else omega[3 * (size_t)k + c - 3] += acc;
}

__global__ void jl_step_world_kernel(int n, const double *frame, const double *lam,
                                     double *world, int *idx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  jl_st_world_impulse(frame + 9 * (size_t)i, lam + 3 * (size_t)i, world + 3 * (size_t)i);
  idx[i] = i;
}

__global__ void jl_step_gather_kernel(int n, const int *idx, const double *world, double *prev_imp) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  int i = idx[e];
  for (int d = 0; d < 3; ++d) prev_imp[3 * (size_t)e + d] = world[3 * (size_t)i + d];
}

// Stage timing: with g->timing on, the device is synchronised at the end
// of each stage and the wall time since the previous mark is added to that
// stage (the syncs cost a little; off by default).
static double jl_wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int jl_stage_mark(jl_scene_gpu *g, int stage, char *msg, int msg_len) {
  if (!g->timing) return 0;
  JL_CUDA_TRY(cudaDeviceSynchronize());
  double t = jl_wall_s();
  if (stage >= 0) g->stage_s[stage] += t - g->stage_t0;
  g->stage_t0 = t;
  return 0;
}
#define JL_STAGE(stage) \
  do { if (jl_stage_mark(g, (stage), msg, msg_len)) return -1; } while (0)

extern "C" int jl_cuda_scene_step(jl_scene_gpu *g, double dt, const double gravity[3],
                                  double contact_tol, const double *mu_table,
                                  const double *eps_n_table, const double *eps_t_table,
                                  int kind, double alpha, double tol_abs, double tol_rel,
                                  int max_iter, int warm_start, int check_every, int *contacts,
                                  int *iterations, int *converged, int *restarts,
                                  int *colours, int *groups, double *max_pen, double *residual, char *msg,
                                  int msg_len) {
  *contacts = *iterations = *restarts = *colours = *groups = 0;
  g->colours = g->groups = 0;
  *converged = 1;
  *max_pen = 0.0;
  *residual = 0.0;
  int nb = g->nb;
  JL_STAGE(-1);
  if (jl_cuda_scene_half_step(g, 0.5 * dt, msg, msg_len)) return -1;
  if (jl_cuda_scene_free_velocity(g, gravity, dt, nullptr, msg, msg_len)) return -1;
  JL_STAGE(JL_STEP_STAGE_INTEGRATE);
  double margin = contact_tol > 0 ? 2.0 * contact_tol : 1e-12;
  jl_gpu_collide_stats cs;
  if (jl_cuda_scene_collide(g, margin, &cs, msg, msg_len)) return -1;
  JL_STAGE(JL_STEP_STAGE_COLLIDE);
  // closed contacts, in order
  int m = g->contacts, n = 0;
  if (m > 0) {
    size_t sm = (size_t)m;
    JL_RESERVE(c_flag, (sm + 1) * sizeof(int), "contact flags");
    JL_RESERVE(c_scan, (sm + 1) * sizeof(int), "contact flags");
    JL_RESERVE(cf_a, sm * sizeof(int), "contacts");
    JL_RESERVE(cf_b, sm * sizeof(int), "contacts");
    JL_RESERVE(cf_point, 3 * sm * sizeof(double), "contacts");
    JL_RESERVE(cf_normal, 3 * sm * sizeof(double), "contacts");
    JL_RESERVE(cf_gap, sm * sizeof(double), "contacts");
    JL_RESERVE(cf_key, sm * sizeof(uint64_t), "contacts");
    int *flag = jl_dp<int>(g->c_flag), *scan = jl_dp<int>(g->c_scan);
    jl_step_flag_kernel<<<jl_scene_blocks((long long)m + 1), JL_SCENE_BLOCK>>>(
        m, jl_dp<double>(g->c_gap), jl_dp<int>(g->c_a), jl_dp<int>(g->c_b),
        jl_dp<uint8_t>(g->is_static), contact_tol, flag);
    JL_CUDA_TRY(cudaGetLastError());
    int items = m + 1;
    JL_CUB(cub::DeviceScan::ExclusiveSum(d_temp, tb, flag, scan, items));
    JL_CUDA_TRY(cudaMemcpy(&n, scan + m, sizeof(int), cudaMemcpyDeviceToHost));
    jl_contact_arrays in = {jl_dp<int>(g->c_a), jl_dp<int>(g->c_b), jl_dp<double>(g->c_point),
                            jl_dp<double>(g->c_normal), jl_dp<double>(g->c_gap),
                            jl_dp<uint64_t>(g->c_key)};
    jl_contact_arrays out = {jl_dp<int>(g->cf_a), jl_dp<int>(g->cf_b), jl_dp<double>(g->cf_point),
                             jl_dp<double>(g->cf_normal), jl_dp<double>(g->cf_gap),
                             jl_dp<uint64_t>(g->cf_key)};
    jl_step_scatter_kernel<<<jl_scene_blocks(m), JL_SCENE_BLOCK>>>(m, flag, scan, in, out);
    JL_CUDA_TRY(cudaGetLastError());
    // the closed contacts become the arena's contacts (buffers swapped, not copied)
    std::swap(g->c_a, g->cf_a);
    std::swap(g->c_b, g->cf_b);
    std::swap(g->c_point, g->cf_point);
    std::swap(g->c_normal, g->cf_normal);
    std::swap(g->c_gap, g->cf_gap);
    std::swap(g->c_key, g->cf_key);
    g->contacts = n;
  }
  *contacts = n;
  if (n > 0) {
    // read at the end of the step: no sync of its own
    JL_RESERVE(summary, 64, "step summary");
    JL_RESERVE(partial, JL_SCENE_REDUCE_PARTIALS * (sizeof(double) + sizeof(int)),
               "reduction partials");
    int rb = jl_scene_reduce_blocks(n);
    jl_step_pen_partial_kernel<<<rb, JL_SCENE_BLOCK>>>(n, jl_dp<double>(g->c_gap),
                                                       jl_dp<double>(g->partial));
    jl_step_max_pen_kernel<<<1, JL_SCENE_REDUCE_THREADS>>>(rb, jl_dp<double>(g->partial),
                                                           jl_dp<double>(g->summary));
    JL_CUDA_TRY(cudaGetLastError());
  }
  if (jl_cuda_scene_setup(g, mu_table, eps_n_table, eps_t_table, 0, msg, msg_len)) return -1;
  JL_STAGE(JL_STEP_STAGE_SETUP);
  const double *lam = nullptr;
  if (n > 0) {
    if (jl_scene_jor_reserve(g, kind == JL_SOLVER_APGD, msg, msg_len)) return -1;
    jl_step_warm_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(
        n, warm_start, jl_dp<uint64_t>(g->c_key), jl_dp<double>(g->p_frame),
        jl_dp<uint64_t>(g->prev_key), jl_dp<double>(g->prev_imp), g->prev_n,
        jl_dp<double>(g->lam0), jl_dp<double>(g->lam_init));
    JL_CUDA_TRY(cudaGetLastError());
    jl_pm_state fin;
    if (kind == JL_SOLVER_SOR) {
      if (jl_scene_colour(g, msg, msg_len)) return -1;
      JL_STAGE(JL_STEP_STAGE_COLOUR);
      if (jl_scene_sor_core(g, alpha, tol_abs, tol_rel, max_iter, check_every, &fin, msg,
                            msg_len))
        return -1;
      lam = jl_dp<double>(g->lam0);
      *colours = g->colours;
      *groups = g->groups;
    } else if (jl_scene_jor_core(g, 0, kind == JL_SOLVER_APGD, alpha, tol_abs, tol_rel, max_iter,
                                 check_every, &lam, &fin, msg, msg_len)) {
      return -1;
    }
    *iterations = fin.iterations;
    *converged = fin.converged;
    *restarts = fin.restarts;
    *residual = fin.residual;
    JL_STAGE(JL_STEP_STAGE_SOLVE);
  }
  if (nb > 0) {
    jl_step_end_velocity_kernel<<<jl_scene_blocks(6LL * nb), JL_SCENE_BLOCK>>>(
        nb, jl_dp<uint8_t>(g->is_static), jl_dp<double>(g->dv), jl_dp<int>(g->p_body_ptr),
        jl_dp<int>(g->p_body_contact), jl_dp<int>(g->p_ka), jl_dp<double>(g->p_frame),
        jl_dp<double>(g->p_irx), jl_dp<double>(g->p_im), lam ? lam : jl_dp<double>(g->lam0),
        jl_dp<double>(g->vel),
        jl_dp<double>(g->omega));
    JL_CUDA_TRY(cudaGetLastError());
  }
  if (jl_cuda_scene_half_step(g, 0.5 * dt, msg, msg_len)) return -1;
  // warm-start memory: this step's keys sorted, with their world impulses
  g->prev_n = 0;
  if (n > 0) {
    size_t sn = (size_t)n;
    JL_RESERVE(w_imp, 3 * sn * sizeof(double), "world impulses");
    JL_RESERVE(idx, sn * sizeof(int), "contact order");
    JL_RESERVE(idx_alt, sn * sizeof(int), "contact order");
    JL_RESERVE(prev_key, sn * sizeof(uint64_t), "warm-start keys");
    JL_RESERVE(prev_imp, 3 * sn * sizeof(double), "warm-start impulses");
    JL_RESERVE(p_keys_alt, sn * sizeof(uint64_t), "warm-start keys");
    jl_step_world_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(
        n, jl_dp<double>(g->p_frame), lam, jl_dp<double>(g->w_imp), jl_dp<int>(g->idx));
    JL_CUDA_TRY(cudaGetLastError());
    JL_CUDA_TRY(cudaMemcpy(g->prev_key.p, g->c_key.p, sn * sizeof(uint64_t), cudaMemcpyDeviceToDevice));
    cub::DoubleBuffer<uint64_t> dk(jl_dp<uint64_t>(g->prev_key), jl_dp<uint64_t>(g->p_keys_alt));
    cub::DoubleBuffer<int> dv(jl_dp<int>(g->idx), jl_dp<int>(g->idx_alt));
    JL_CUB(cub::DeviceRadixSort::SortPairs(d_temp, tb, dk, dv, n, 0, 64));
    if (dk.Current() != jl_dp<uint64_t>(g->prev_key))
      JL_CUDA_TRY(cudaMemcpy(g->prev_key.p, dk.Current(), sn * sizeof(uint64_t),
                             cudaMemcpyDeviceToDevice));
    jl_step_gather_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(n, dv.Current(),
                                                                  jl_dp<double>(g->w_imp),
                                                                  jl_dp<double>(g->prev_imp));
    JL_CUDA_TRY(cudaGetLastError());
    g->prev_n = n;
    JL_CUDA_TRY(cudaMemcpy(max_pen, g->summary.p, sizeof(double), cudaMemcpyDeviceToHost));
  }
  JL_STAGE(JL_STEP_STAGE_FINISH);
  return 0;
}

extern "C" void jl_cuda_scene_set_timing(jl_scene_gpu *g, int on) {
  g->timing = on;
  for (int k = 0; k < JL_STEP_STAGES; ++k) g->stage_s[k] = 0.0;
}

extern "C" void jl_cuda_scene_stage_times(const jl_scene_gpu *g, double *s) {
  for (int k = 0; k < JL_STEP_STAGES; ++k) s[k] = g->stage_s[k];
}
