// One Moreau midpoint step on the device (src/scene/scene_gpu.h), matrix-free
// JOR or coloured SOR: half step, free velocity, collide keeping the closed
// contacts only (the narrow phase filters them, order kept),
// setup, warm start by key, JOR (or colouring + SOR,
// kernels/scene/scene_colour.cu), end velocities, half step, warm-start
// memory (each pair's points sorted by key, a thread per pair). The per-element
// arithmetic is src/scene/step_math.h and the other shared headers;
// src/scene/step_twin.c is the CPU twin. Host traffic: the counts that size
// buffers (kernels/scene/scene_collide.cu), the colours' offsets, the solver
// state every check_every iterations (a solve in one persistent launch: not
// waited for), and at the end one copy of the max penetration with the
// narrow phase's fault flag and the persistent solve's state.
#include <climits>
#include <cstring>
#include <ctime>

#include <cub/cub.cuh>

#include "jor_soa.cuh"
#include "scene_arena.cuh"

#include "collide.h"
#include "scene_gpu.h"
#include "step_math.h"

extern "C" int jl_cuda_scene_half_step(jl_scene_gpu *g, double half_dt, char *msg, int msg_len);
extern "C" int jl_cuda_scene_free_velocity(jl_scene_gpu *g, const double gravity[3], double dt,
                                           double *dv, char *msg, int msg_len);
extern "C" int jl_cuda_scene_setup(jl_scene_gpu *g, const double *mu_table,
                                   const double *eps_n_table, const double *eps_t_table,
                                   int build_g, int write_soa, char *msg, int msg_len);

// What the host reads at the end of a step, in one copy.
struct jl_step_summary {
  double max_pen;          // max(0, max -gap) over the closed contacts
  int fault;               // the narrow phase's write pass disagreed with its count pass
  jl_pm_state solve;       // a persistent solve's final state (the host did not wait for it)
};

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
    int parts, const double *part, const int *fault, jl_step_summary *out) {
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
  if (t == 0) {
    out->max_pen = s_m[0];
    out->fault = *fault;  // the collide's flag, next to the max: one copy for both
  }
}

// The frame from the contact's normal (jl_sm_frame, the setup's own bits):
// a lean setup writes no frames (jl_cuda_scene_setup), and 3 doubles a
// contact are read instead of 9.
__global__ void jl_step_warm_kernel(int n, int warm, const uint64_t *key, const double *normal,
                                    const uint64_t *prev_key, const double *prev_imp, int prev_n,
                                    double *lam, double *lam_init) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double l[3] = {0.0, 0.0, 0.0};
  if (warm) {
    double fr[9];
    jl_sm_frame(normal + 3 * (size_t)i, fr);
    jl_st_warm(key[i], fr, prev_key, prev_imp, prev_n, l);
  }
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

// The same after a streamed solve, a thread per body: its six sums from
// dv_free (jl_st_end_velocity_body's order), each contact's terms rebuilt
// from the constants by field (jl_soa_du_body), as the solve's du did;
// about a third of the bytes of the frame and inertia lever rows.
__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_step_end_velocity_soa_kernel(
    int nb, size_t n, const uint8_t *is_static, const double *dv, const int *body_ptr,
    const int *body_entry, const double *irx, const double *soa, const double *bc,
    const double *lam, double *vel, double *omega) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nb) return;
  int k = (int)t;
  if (is_static[k]) return;
  double acc[6];
  for (int c = 0; c < 6; ++c) acc[c] = dv[6 * (size_t)k + c];
  jl_soa_du_body(n, soa, body_ptr, body_entry, irx, bc[2 * (size_t)k],
                 bc[2 * (size_t)k + 1], k, lam, acc);
  for (int c = 0; c < 3; ++c) vel[3 * (size_t)k + c] += acc[c];
  for (int c = 0; c < 3; ++c) omega[3 * (size_t)k + c] += acc[3 + c];
}

// The warm-start memory in one pass, a thread per candidate pair: the
// narrow phase writes the keys ascending pair by pair (collide.h), so
// sorting each pair's few points (at most JL_MAX_MANIFOLD, by the count
// kernel) puts all of them in ascending order, the order a radix sort of the
// whole array gave (a step's keys are unique); each slot gets its key and
// its contact's world impulse (the frame from the contact's normal, as the
// warm start takes it). cstart: the narrow phase's offsets (m_pairs + 1).
__global__ void jl_step_remember_kernel(int m_pairs, const long long *cstart, const uint64_t *key,
                                        const double *normal, const double *lam,
                                        uint64_t *prev_key, double *prev_imp) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= m_pairs) return;
  long long lo = cstart[p];
  int m = (int)(cstart[p + 1] - lo);
  if (m > JL_MAX_MANIFOLD) m = JL_MAX_MANIFOLD;  // never: the count kernel keeps at most this
  uint64_t k[JL_MAX_MANIFOLD];
  int at[JL_MAX_MANIFOLD];
  for (int j = 0; j < m; ++j) {  // insertion sort: stable, as the radix sort
    uint64_t x = key[lo + j];
    int q = j;
    for (; q > 0 && k[q - 1] > x; --q) {
      k[q] = k[q - 1];
      at[q] = at[q - 1];
    }
    k[q] = x;
    at[q] = j;
  }
  for (int j = 0; j < m; ++j) {
    size_t i = (size_t)(lo + at[j]), e = (size_t)(lo + j);
    prev_key[e] = k[j];
    double fr[9];
    jl_sm_frame(normal + 3 * i, fr);
    jl_st_world_impulse(fr, lam + 3 * i, prev_imp + 3 * e);
  }
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
static int jl_scene_marks_collect(jl_scene_gpu *g, char *msg, int msg_len);

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
  g->mark_n = 0;
  jl_scene_mark(g, "begin");
  if (jl_cuda_scene_half_step(g, 0.5 * dt, msg, msg_len)) return -1;
  if (jl_cuda_scene_free_velocity(g, gravity, dt, nullptr, msg, msg_len)) return -1;
  jl_scene_mark(g, "half step, free velocity");
  JL_STAGE(JL_STEP_STAGE_INTEGRATE);
  double margin = contact_tol > 0 ? 2.0 * contact_tol : 1e-12;
  // Moreau's index set straight from the narrow phase: the closed contacts
  // (jl_st_closed), in the order jl_collide's filtered list has them; the
  // write pass's fault flag is read with the max penetration at the end;
  // the pair list is kept while the boxes stay in their skins
  jl_gpu_collide_stats cs;
  jl_collide_opts co = {1, contact_tol, 1, 1, JL_GP_AHEAD_STEPS * dt};
  if (jl_scene_collide(g, margin, &co, &cs, msg, msg_len)) return -1;
  int n = g->contacts;
  *contacts = n;
  if (n > 0) {
    JL_RESERVE(summary, sizeof(jl_step_summary), "step summary");
    JL_RESERVE(partial, JL_SCENE_REDUCE_PARTIALS * (sizeof(double) + sizeof(int)),
               "reduction partials");
    int rb = jl_scene_reduce_blocks(n);
    jl_step_pen_partial_kernel<<<rb, JL_SCENE_BLOCK>>>(n, jl_dp<double>(g->c_gap),
                                                       jl_dp<double>(g->partial));
    jl_step_max_pen_kernel<<<1, JL_SCENE_REDUCE_THREADS>>>(
        rb, jl_dp<double>(g->partial), jl_dp<int>(g->fault), jl_dp<jl_step_summary>(g->summary));
    JL_CUDA_TRY(cudaGetLastError());
    jl_scene_mark(g, "max penetration");
  }
  JL_STAGE(JL_STEP_STAGE_COLLIDE);  // with the max penetration, as step_stages.h has it
  // a solve that will stream reads its constants by field from the setup
  int write_soa = g->soa_by_setup && kind != JL_SOLVER_SOR && jl_jor_solve_streams(g, n, nb, 0);
  if (jl_cuda_scene_setup(g, mu_table, eps_n_table, eps_t_table, 0, write_soa, msg, msg_len))
    return -1;
  JL_STAGE(JL_STEP_STAGE_SETUP);
  const double *lam = nullptr;
  int solve_pending = 0;  // the solve's state comes with the end copy
  if (n > 0) {
    if (jl_scene_jor_reserve(g, kind == JL_SOLVER_APGD, msg, msg_len)) return -1;
    jl_step_warm_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(
        n, warm_start, jl_dp<uint64_t>(g->c_key), jl_dp<double>(g->c_normal),
        jl_dp<uint64_t>(g->prev_key), jl_dp<double>(g->prev_imp), g->prev_n,
        jl_dp<double>(g->lam0), jl_dp<double>(g->lam_init));
    JL_CUDA_TRY(cudaGetLastError());
    jl_scene_mark(g, "warm start");
    jl_pm_state fin;
    if (kind == JL_SOLVER_SOR) {
      if (jl_scene_colour(g, msg, msg_len)) return -1;
      jl_scene_mark(g, "colour");
      JL_STAGE(JL_STEP_STAGE_COLOUR);
      if (jl_scene_sor_core(g, alpha, tol_abs, tol_rel, max_iter, check_every, &fin, msg,
                            msg_len))
        return -1;
      lam = jl_dp<double>(g->lam0);
      *colours = g->colours;
      *groups = g->groups;
    } else if (jl_scene_jor_core(g, 0, kind == JL_SOLVER_APGD, alpha, tol_abs, tol_rel, max_iter,
                                 check_every, &lam, &fin, &solve_pending, msg, msg_len)) {
      return -1;
    }
    if (!solve_pending) {
      *iterations = fin.iterations;
      *converged = fin.converged;
      *restarts = fin.restarts;
      *residual = fin.residual;
    }
    jl_scene_mark(g, "solve");
    JL_STAGE(JL_STEP_STAGE_SOLVE);
  }
  if (nb > 0 && g->du_soa && lam) {  // a streamed solve: du as it rebuilt it
    jl_step_end_velocity_soa_kernel<<<jl_scene_blocks(nb), JL_SCENE_BLOCK>>>(
        nb, (size_t)n, jl_dp<uint8_t>(g->is_static), jl_dp<double>(g->dv),
        jl_dp<int>(g->p_body_ptr), jl_dp<int>(g->p_body_entry), jl_dp<double>(g->p_irx),
        jl_dp<double>(g->j_soa), jl_dp<double>(g->j_body_consts), lam,
        jl_dp<double>(g->vel), jl_dp<double>(g->omega));
    JL_CUDA_TRY(cudaGetLastError());
  } else if (nb > 0) {
    jl_step_end_velocity_kernel<<<jl_scene_blocks(6LL * nb), JL_SCENE_BLOCK>>>(
        nb, jl_dp<uint8_t>(g->is_static), jl_dp<double>(g->dv), jl_dp<int>(g->p_body_ptr),
        jl_dp<int>(g->p_body_contact), jl_dp<int>(g->p_ka), jl_dp<double>(g->p_frame),
        jl_dp<double>(g->p_irx), jl_dp<double>(g->p_im), lam ? lam : jl_dp<double>(g->lam0),
        jl_dp<double>(g->vel),
        jl_dp<double>(g->omega));
    JL_CUDA_TRY(cudaGetLastError());
  }
  if (jl_cuda_scene_half_step(g, 0.5 * dt, msg, msg_len)) return -1;
  jl_scene_mark(g, "end velocity, half step");
  // warm-start memory: this step's keys sorted, with their world impulses
  g->prev_n = 0;
  if (n > 0) {
    size_t sn = (size_t)n;
    JL_RESERVE(prev_key, sn * sizeof(uint64_t), "warm-start keys");
    JL_RESERVE(prev_imp, 3 * sn * sizeof(double), "warm-start impulses");
    // the contacts are still the collide's: its pairs and their offsets
    jl_step_remember_kernel<<<jl_scene_blocks(g->pairs), JL_SCENE_BLOCK>>>(
        g->pairs, jl_dp<long long>(g->np_start), jl_dp<uint64_t>(g->c_key),
        jl_dp<double>(g->c_normal), lam, jl_dp<uint64_t>(g->prev_key),
        jl_dp<double>(g->prev_imp));
    JL_CUDA_TRY(cudaGetLastError());
    jl_scene_mark(g, "memory");
    g->prev_n = n;
    jl_step_summary sum, *sum_d = jl_dp<jl_step_summary>(g->summary);
    if (solve_pending && jl_scene_jor_state_copy(g, &sum_d->solve, msg, msg_len)) return -1;
    JL_CUDA_TRY(cudaMemcpy(&sum, sum_d, sizeof sum, cudaMemcpyDeviceToHost));
    jl_scene_mark(g, "end copy");
    if (sum.fault) {
      g->contacts = g->prev_n = 0;  // nothing of this step is kept
      snprintf(msg, (size_t)msg_len, "%s", JL_NP_FAULT_MSG);
      return -1;
    }
    if (solve_pending) {
      if (jl_scene_jor_stopped(&sum.solve, kind == JL_SOLVER_APGD, max_iter, msg, msg_len)) {
        g->contacts = g->prev_n = 0;
        return -1;
      }
      *iterations = sum.solve.iterations;
      *converged = sum.solve.converged;
      *restarts = sum.solve.restarts;
      *residual = sum.solve.residual;
    }
    *max_pen = sum.max_pen;
  }
  JL_STAGE(JL_STEP_STAGE_FINISH);
  return jl_scene_marks_collect(g, msg, msg_len);
}

extern "C" void jl_cuda_scene_set_timing(jl_scene_gpu *g, int on) {
  g->timing = on;
  for (int k = 0; k < JL_STEP_STAGES; ++k) g->stage_s[k] = 0.0;
}

extern "C" void jl_cuda_scene_stage_times(const jl_scene_gpu *g, double *s) {
  for (int k = 0; k < JL_STEP_STAGES; ++k) s[k] = g->stage_s[k];
}

extern "C" int jl_cuda_scene_set_marks(jl_scene_gpu *g, int on, char *msg, int msg_len) {
  g->marks_on = 0;
  g->mark_n = g->prof_n = 0;
  if (!on) return 0;
  for (int k = 0; k < JL_SCENE_GPU_MARKS; ++k)
    if (!g->mark_ev[k]) JL_CUDA_TRY(cudaEventCreate(&g->mark_ev[k]));
  g->marks_on = 1;
  return 0;
}

extern "C" int jl_cuda_scene_marks(const jl_scene_gpu *g, const char **names, double *ms,
                                   int cap) {
  int n = g->prof_n < cap ? g->prof_n : cap;
  for (int k = 0; k < n; ++k) {
    names[k] = g->prof_name[k];
    ms[k] = g->prof_ms[k];
  }
  return n;
}

// The step's marks into the sums by name (the step's last mark waited for).
static int jl_scene_marks_collect(jl_scene_gpu *g, char *msg, int msg_len) {
  int n = g->mark_n;
  g->mark_n = 0;
  if (!g->marks_on || n < 2) return 0;
  JL_CUDA_TRY(cudaEventSynchronize(g->mark_ev[n - 1]));
  for (int k = 1; k < n; ++k) {
    float ms = 0.0f;
    JL_CUDA_TRY(cudaEventElapsedTime(&ms, g->mark_ev[k - 1], g->mark_ev[k]));
    int j = 0;
    while (j < g->prof_n && strcmp(g->prof_name[j], g->mark_at[k]) != 0) ++j;
    if (j == g->prof_n) {
      if (j == JL_SCENE_GPU_MARKS) continue;
      g->prof_name[g->prof_n++] = g->mark_at[k];
      g->prof_ms[j] = 0.0;
    }
    g->prof_ms[j] += ms;
  }
  return 0;
}

// A kernel of this file: jl_cuda_kernels_load loads all of them (scene_arena.cu).
extern "C" const void *jl_cuda_scene_step_code(void) {
  return (const void *)jl_step_warm_kernel;
}
