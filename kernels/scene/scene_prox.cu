// JOR prox on the device, matrix-free: one thread per contact updates its
// impulses from the previous iterate and the per-body velocity changes du;
// du is then rebuilt with one thread per body summing its contacts in
// ascending order (body CSR of the problem): a fixed order and no
// floating-point atomics, so a run is bitwise reproducible and equals the
// CPU twin (jl_prox_solve's JOR, src/scene/prox_solver.c, the same schedule;
// arithmetic in src/scene/prox_math.h). SOR (jl_scene_sor_core): one kernel per
// colour of the contact graph (kernels/scene/scene_colour.cu), runs of small
// colours in one block with a barrier between colours, updates in place
// (jl_pm_sor_contact); its CPU twin is jl_step_twin_sor. The stop test
// (residual, tolerance, divergence restarts) runs after every iteration
// (per-block partials, the last block joins them); the host reads the state
// every check_every iterations, and launches after a stop return at once.
// Per JOR iteration: the update fused with the stop test, then du (2
// kernels); per SOR iteration: the colour groups, then the stop test. A
// restart (rare) is done by the stop test's last block.
#include <cmath>
#include <cstring>
#include <vector>

#include <cooperative_groups.h>

#include "jor_soa.cuh"
#include "scene_arena.cuh"

#include "colour_math.h"
#include "prox_math.h"

struct jl_jor_problem {
  int n, nb;
  const int *ka, *kb, *body_ptr, *body_contact;
  const int *body_entry;   // jl_soa_entry's of body_contact (the streamed du)
  const double *frame, *rx, *irx, *im, *c, *mu, *diag;
  const double *lever, *iso, *arm;  // the streamed solve rebuilds rx and irx from these
  int on_g;                // xi from G (block CSR) instead of du
  const int *rowptr, *col;
  const double *blocks;
  double tol_rel, tol_abs;
  int max_iter;
};

// The solver's state on the device, read by the host every check_every
// iterations. arrive_*: blocks of the fused stop / restart kernels that
// finished (the last one to arrive does the one-block part, then resets it).
struct jl_state_and_buf {
  jl_pm_state s;
  int result_buf;
  unsigned arrive_stop;
};

// du of every body by a group of JL_DU_LANES lanes per body: each lane
// loads one of the body's contacts and computes its six terms, so the loads
// of a body's contacts go out together instead of as a chain (a brick of a
// wall has about 15 contacts); then lane c (< 6) adds the terms of
// component c in the body's contact order, the additions of jl_pm_du_body
// (so the same bits). The warp's lanes all take part in the shuffles, for
// the warp's largest number of rounds.
#define JL_DU_LANES 8
// The lanes' terms v (one contact each, slots e0q + j of the body's list
// ending at e1) added to lane c's sum in the body's contact order: the
// additions of jl_pm_du_body. Every lane of the warp must call it.
static __device__ __forceinline__ void jl_du_lanes_add(const double v[6], int e0q, int e1, int l, int base,
                                       double *acc) {
  for (int j = 0; j < JL_DU_LANES; ++j) {
#pragma unroll
    for (int c = 0; c < 6; ++c) {
      double y = __shfl_sync(0xffffffffu, v[c], base + j);
      if (l == c && e0q + j < e1) *acc += y;
    }
  }
}

// Virtual thread t of the du pass (t / JL_DU_LANES: the body); every lane
// of the warp must call it (shuffles over the whole warp).
static __device__ void jl_jor_du_lanes(const jl_jor_problem &p, const double *lam, double *du,
                                       long long t) {
  int lane = (int)(threadIdx.x & 31), l = lane % JL_DU_LANES, base = lane - l;
  long long kk = t / JL_DU_LANES;
  int live = kk < p.nb;
  int k = live ? (int)kk : 0;
  int e0 = live ? p.body_ptr[k] : 0, e1 = live ? p.body_ptr[k + 1] : 0;
  int rounds = (e1 - e0 + JL_DU_LANES - 1) / JL_DU_LANES;
  rounds = __reduce_max_sync(0xffffffffu, rounds);
  double acc = 0.0;
  for (int q = 0; q < rounds; ++q) {
    int e = e0 + q * JL_DU_LANES + l;
    double v[6] = {0, 0, 0, 0, 0, 0};
    if (e < e1) {
      int i = p.body_contact[e];
      int side = p.ka[i] == k ? 0 : 1;
#pragma unroll
      for (int c = 0; c < 6; ++c)
        v[c] = jl_sm_mw_comp(p.frame, p.irx, p.im, i, side, lam + 3 * (size_t)i, c);
    }
    jl_du_lanes_add(v, e0 + q * JL_DU_LANES, e1, l, base, &acc);
  }
  if (live && l < 6) du[6 * (size_t)k + l] = acc;
}

__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_jor_du_kernel(jl_jor_problem p,
                                                                   const double *lam, double *du,
                                                                   const jl_pm_state *state) {
  if (p.on_g || state->state != JL_PM_RUN) return;
  jl_jor_du_lanes(p, lam, du, (long long)blockIdx.x * blockDim.x + threadIdx.x);
}

// Max of r and AND of good over the block into s_res[0], s_ok[0] (blockDim
// a power of two). Residuals are never NaN (non-finite ones are INFINITY),
// so the max, like the AND, is exact in any order.
static __device__ void jl_block_max_and(double *s_res, int *s_ok, double r, int good) {
  int t = threadIdx.x;
  s_res[t] = r;
  s_ok[t] = good;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (t < h) {
      if (!(s_res[t + h] <= s_res[t])) s_res[t] = s_res[t + h];
      s_ok[t] &= s_ok[t + h];
    }
    __syncthreads();
  }
}

// Partials of the prox's stop test: one per block of the fused JOR update
// (a block per JL_SCENE_BLOCK contacts), at least the reductions' count.
static inline int jl_prox_partials(long long n) {
  int b = jl_scene_blocks(n);
  return b > JL_SCENE_REDUCE_PARTIALS ? b : JL_SCENE_REDUCE_PARTIALS;
}

// What a divergence restart resets: the impulses lam back to the warm start
// init (order: lam in colour order, lam[3 e + d] = init[3 order[e] + d]),
// and du rebuilt from init when with_du (JOR rebuilds du in the launch after).
struct jl_restart_args {
  const double *init;
  double *lam, *du;
  const int *order;
  int with_du;
  double *y;               // APGD: the extrapolated point, reset to init too (or null)
};

// The stop test's join, called by every thread of every block after the
// thread's own max residual r and AND of good: each block leaves a partial,
// the last block to arrive joins the partials and applies the stop rule.
// Max and AND are exact in any order, so the decision does not depend on the
// blocks' order; no block reads the state after the last one arrives (every
// other block read it before arriving). A restart (rare: only a diverging
// solve, at most JL_PROX_MAX_RESTARTS times) is done by that last block
// alone, so no launch per iteration waits for one. result_buf: which iterate
// buffer holds the newest impulses at a stop.
static __device__ void jl_prox_join(const jl_jor_problem &p, double r, int good, double *part_res,
                                    int *part_ok, int dst_index,
                                    jl_state_and_buf *sb, const jl_restart_args &ra) {
  __shared__ double s_res[JL_SCENE_BLOCK];
  __shared__ int s_ok[JL_SCENE_BLOCK];
  __shared__ int s_last, s_restart;
  int t = threadIdx.x;
  jl_block_max_and(s_res, s_ok, r, good);
  if (t == 0) {
    part_res[blockIdx.x] = s_res[0];
    part_ok[blockIdx.x] = s_ok[0];
    __threadfence();  // the partial is visible before the arrival counts
    s_last = atomicAdd(&sb->arrive_stop, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  r = 0.0;
  good = 1;
  for (int i = t; i < (int)gridDim.x; i += blockDim.x) {
    double pr = __ldcg(part_res + i);  // L2: written by other blocks in this launch
    if (!(pr <= r)) r = pr;
    good &= __ldcg(part_ok + i);
  }
  jl_block_max_and(s_res, s_ok, r, good);
  if (t == 0) {
    jl_pm_decide(&sb->s, s_res[0], s_ok[0], p.max_iter);
    sb->result_buf = dst_index;
    sb->arrive_stop = 0;
    s_restart = sb->s.state == JL_PM_RESTART;
  }
  __syncthreads();
  if (!s_restart) return;
  for (long long i = t; i < 3LL * p.n; i += blockDim.x) {
    ra.lam[i] = ra.order ? __ldcg(ra.init + 3 * (size_t)ra.order[i / 3] + i % 3) : __ldcg(ra.init + i);
    if (ra.y) ra.y[i] = __ldcg(ra.init + i);
  }
  if (ra.with_du && !p.on_g)
    for (long long i = t; i < 6LL * p.nb; i += blockDim.x)
      ra.du[i] = jl_pm_du_body_comp((int)(i / 6), (int)(i % 6), p.body_ptr, p.body_contact, p.ka,
                                    p.frame, p.irx, p.im, ra.init, 0.0);
  __syncthreads();
  if (t == 0) {
    __threadfence();
    sb->s.state = JL_PM_RUN;
  }
}

// The per-contact constants an update reads: the problem's own arrays, or
// the persistent solve's copies on chip.
struct jl_jor_consts {
  const double *c, *frame, *rx, *diag, *mu;
};

// Contact i's JOR (or APGD, ydst not null) update: x from src (APGD: from
// ysrc) into dst, and APGD's next point into ydst; returns the residual.
// k holds the contact's constants at index li (the problem's arrays: li =
// i); a, b: its dynamic bodies (p.ka[i], p.kb[i]; -1: static).
static __device__ double jl_jor_update_one(const jl_jor_problem &p, const jl_jor_consts &k, int li,
                                           int i, int a, int b, const double *src, double *dst,
                                           const double *ysrc, double *ydst, const double *du,
                                           double alpha, double beta, int *good) {
  const double *from = ydst ? ysrc : src;
  double xi[3];
  if (p.on_g)
    jl_pm_xi_g(i, p.c, p.rowptr, p.col, p.blocks, from, xi);
  else  // jl_pm_xi_mf's arithmetic
    jl_pm_xi_rows(li, k.c, k.frame, k.rx, a >= 0, du + 6 * (size_t)(a >= 0 ? a : 0), b >= 0,
                  du + 6 * (size_t)(b >= 0 ? b : 0), xi);
  double x[3];
  double r = jl_pm_update(xi, from + 3 * (size_t)i, alpha, k.diag + 2 * (size_t)li, k.mu[li],
                          p.tol_rel, p.tol_abs, x, good);
  double *d = dst + 3 * (size_t)i;
  d[0] = x[0];
  d[1] = x[1];
  d[2] = x[2];
  if (ydst) {
    double y[3];
    jl_pm_extrapolate(x, src + 3 * (size_t)i, beta, y);
    double *yd = ydst + 3 * (size_t)i;
    for (int m = 0; m < 3; ++m) yd[m] = y[m];
  }
  return r;
}

// The streamed JOR / APGD solve, for problems too large for the persistent
// one (the million-sphere pile: 3 million contacts). Per iteration it moves
// fewer bytes than the two kernels above, by two changes, each the same
// arithmetic in the same order:
// - the update reads its contact's constants from a copy by field
//   (jl_jor_soa_kernel, once per solve), so a warp's loads are coalesced;
//   in the problem's contact-major layout the 47 doubles of 32 neighbouring
//   contacts went through L2 several times over (the update ran at 86% of
//   L2 throughput and 42% of DRAM);
// - the update and du both rebuild what they need from 17 doubles a contact
//   (c, the normal, the levers, diag, mu, the arms; 11 read where both sides
//   are spheres or static: jl_soa_lever) instead of the 47 the problem
//   holds: the tangents follow from the normal (jl_sm_frame), the lever rows
//   r x d from the levers r (jl_sm_lever_rows) and, for a body of isotropic
//   inertia (any sphere), I^-1 (r x d) = s (r x d); each rebuilt by the
//   setup's own arithmetic, so the same bits. Other bodies' I^-1 (r x d)
//   come from the problem's irx. du (a thread per body) reads an entry
//   (its contact and side in one int: jl_soa_entry) and the contact's
//   impulse, normal and arm (about 60 bytes a body entry; 76 with a lever)
//   and takes s and 1/m once per body (jl_jor_body_consts_kernel). jl_jor_du_lanes gathers
//   the frame, lever rows and impulses (about 300 bytes an entry); du terms
//   written by the update (12 doubles a contact, written and read back every
//   iteration) made the update 1.7x slower (0.36 ms an iteration of the
//   pile against 0.21) for a du of 0.10 ms against 0.14.
// The constants by field: jor_soa.cuh (the step's setup writes them when
// the solve will stream; other solves copy them here).
int jl_jor_streams(const jl_scene_gpu *g, long long n, int on_g) {
  return !on_g && (g->use_streamed > 0 || (g->use_streamed < 0 && n >= JL_JOR_STREAMED_MIN));
}

static int jl_jor_persistent_blocks(jl_scene_gpu *g, long long n, long long nb, int *plan);

int jl_jor_solve_streams(jl_scene_gpu *g, long long n, long long nb, int on_g) {
  int plan = 0;
  if (!jl_jor_streams(g, n, on_g)) return 0;
  return !(g->use_persistent && jl_jor_persistent_blocks(g, n, nb, &plan) > 0);
}

__global__ void jl_jor_soa_kernel(jl_jor_problem p, double *soa) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  size_t k = (size_t)i;
  jl_soa_store((size_t)p.n, k, p.c + 3 * k, p.frame + 9 * k, p.lever + 6 * k, p.diag + 2 * k,
               p.mu + k, p.arm + 2 * k, soa);
}

// Each body's s (iso: isotropic inverse inertia, else -1) and 1/m into bc
// (2 a body), from its first contact's side: every side of a body holds
// the same two (jl_sm_contact); a body without contacts gets 0 (never read).
__global__ void jl_jor_body_consts_kernel(jl_jor_problem p, double *bc) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= p.nb) return;
  double s = 0.0, im = 0.0;
  int e = p.body_ptr[k];
  if (e < p.body_ptr[k + 1]) {
    int i = p.body_contact[e], side = p.ka[i] == k ? 0 : 1;
    s = p.iso[2 * (size_t)i + side];
    im = p.im[2 * (size_t)i + side];
  }
  bc[2 * (size_t)k] = s;
  bc[2 * (size_t)k + 1] = im;
}

// Contact i's streamed update: jl_jor_update_one from the constants by
// field (frame and lever rows rebuilt into registers).
static __device__ __forceinline__ double jl_jor_update_streamed_one(
    const jl_jor_problem &p, const double *soa, int i, const double *src, double *dst,
    const double *ysrc, double *ydst, const double *du, double alpha, double beta, int *good) {
  size_t n = (size_t)p.n;
  const double *f = soa + i;
  double kc[3], kf[9], kr[18], kd[2], km[1], nrm[3];
  for (int m = 0; m < 3; ++m) kc[m] = f[(JL_SOA_C + m) * n];
  for (int m = 0; m < 3; ++m) nrm[m] = f[(JL_SOA_NORMAL + m) * n];
  jl_sm_frame(nrm, kf);
  for (int side = 0; side < 2; ++side) {
    double lv[3];
    jl_soa_lever(n, f, nrm, side, lv);
    jl_sm_lever_rows(lv, kf, kr + 9 * side);
  }
  for (int m = 0; m < 2; ++m) kd[m] = f[(JL_SOA_DIAG + m) * n];
  km[0] = f[JL_SOA_MU * n];
  const jl_jor_consts k = {kc, kf, kr, kd, km};
  return jl_jor_update_one(p, k, 0, i, p.ka[i], p.kb[i], src, dst, ysrc, ydst, du, alpha, beta,
                           good);
}

// One JOR iteration's update and its stop test in one launch: each thread
// updates its contact from src into dst and keeps the residual and the
// tolerance test in registers; the blocks then join (jl_prox_join). One
// contact per thread (a block per 256 contacts, so partials for every block):
// with a grid-stride loop over 1024 blocks the million-sphere pile's update
// ran too few loads at once (83 ms per step's solve against 69).
// APGD (ydst not null): the update starts from the extrapolated point ysrc
// instead of src (src: the last iterate x_k), and writes the next point
// ydst = x_{k+1} + beta (x_{k+1} - x_k); beta is read from the state before
// the join moves it on.
// STREAMED: the streamed solve's update (jl_jor_update_streamed_one; soa
// is used only then). Its launch bound asks for 4 resident
// blocks (at most 64 registers, a few spills): without it the 33 constants
// held in registers took 100, and an SM held 2 blocks. The other asks for
// none (0): a minimum of 1 took it from 46 registers to 72.
template <bool STREAMED>
__global__ void __launch_bounds__(JL_SCENE_BLOCK, STREAMED ? 4 : 0) jl_jor_update_stop_kernel(
    jl_jor_problem p, const double *soa, const double *src, double *dst, const double *ysrc,
    double *ydst, const double *du, double *part_res, int *part_ok, int dst_index,
    jl_state_and_buf *sb, jl_restart_args ra) {
  if (sb->s.state != JL_PM_RUN) return;  // the same for every thread: no divergent barrier
  double alpha = sb->s.alpha, r = 0.0;
  double beta = ydst ? jl_pm_beta(&sb->s) : 0.0;
  int good = 1;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) {
    if (STREAMED) {
      r = jl_jor_update_streamed_one(p, soa, (int)i, src, dst, ysrc, ydst, du, alpha, beta, &good);
    } else {
      jl_jor_consts k = {p.c, p.frame, p.rx, p.diag, p.mu};
      r = jl_jor_update_one(p, k, (int)i, (int)i, p.ka[i], p.kb[i], src, dst, ysrc, ydst, du,
                            alpha, beta, &good);
    }
  }
  jl_prox_join(p, r, good, part_res, part_ok, dst_index, sb, ra);
}

// du of the streamed solve from lam (the new iterate; APGD: the next point;
// the start), a thread per body (jl_soa_du_body; s and 1/m: bc, by
// jl_jor_body_consts_kernel). A thread per body rather than jl_jor_du_lanes'
// lanes: on the pile (6 contacts a body) the lanes' shuffles and idle lanes
// took 0.25 ms an iteration against 0.14.
__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_jor_du_soa_kernel(
    jl_jor_problem p, const double *soa, const double *bc, const double *lam, double *du,
    const jl_state_and_buf *sb) {
  if (sb->s.state != JL_PM_RUN) return;
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= p.nb) return;
  int k = (int)t;
  double acc[6] = {0, 0, 0, 0, 0, 0};
  jl_soa_du_body((size_t)p.n, soa, p.body_ptr, p.body_entry, p.irx, bc[2 * (size_t)k],
                 bc[2 * (size_t)k + 1], k, lam, acc);
  for (int c = 0; c < 6; ++c) du[6 * (size_t)k + c] = acc[c];
}

// The stop test of a SOR iteration in one launch: max residual and AND of
// the contacts' tolerance flags (grid-stride), then the join.
__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_prox_stop_kernel(
    jl_jor_problem p, const double *res, const int *ok, double *part_res, int *part_ok,
    int dst_index, jl_state_and_buf *sb, jl_restart_args ra) {
  if (sb->s.state != JL_PM_RUN) return;  // uniform
  double r = 0.0;
  int good = 1;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
       i += (long long)gridDim.x * blockDim.x) {
    if (!(res[i] <= r)) r = res[i];
    good &= ok[i];
  }
  jl_prox_join(p, r, good, part_res, part_ok, dst_index, sb, ra);
}

// The iterate buffers of a JOR or APGD solve (y: null for JOR).
struct jl_jor_bufs {
  double *x[2], *y[2], *du;
  const double *init;
};

// A whole JOR or APGD solve in one cooperative launch, for problems where
// every contact and every du lane has a thread of one wave: where each of
// the two kernels of an iteration does a few microseconds of work (the
// 5050-box pyramid: 40,000 contacts) the launches, their gaps and the
// strided loads of the contacts' constants cost more than the work. What
// stays the same from iteration to iteration can stay on chip: each
// thread's contact bodies in registers and, as the solve's plan says
// (jl_persist_plan), in shared memory its contact's frame, lever rows, c,
// diag and mu (CACHE) and the frame, inertia lever rows and inverse mass of
// its du lane's first `rounds` contacts; what is not cached is read from the
// problem's arrays every iteration (from L2: the grid barriers' acquire
// drops L1), as the per-iteration kernels read it. The arithmetic is the
// per-iteration kernels', in the same order whatever the plan (so the same
// bits as the twin): the updates and each block's max and AND, a grid
// barrier, then every block joins all partials and applies the stop rule to
// its own copy of the solver state (the same decision everywhere, so no
// block waits for another's) while rebuilding du from the new iterate, and a
// barrier. A restart (rare) resets the next iterate to the start between two
// more barriers. Block 0 writes the final state for the host.
#define JL_PERSIST_BLOCK 128
#define JL_PERSIST_ROUNDS 2
#define JL_PERSIST_WARPS (JL_PERSIST_BLOCK / 32)
// Partials a thread loads ahead of du (grids of up to this many blocks a
// thread: the pyramid's 316 blocks, the 8000-brick wall's 501); a larger
// grid reads the rest after.
#define JL_PERSIST_AHEAD 4
// Shared memory per thread: the contact's frame (9), lever rows (18), c
// (3), diag (2) and mu; per cached du round e (9), ir (9), im (1) and the
// contact index and side packed in one int.
#define JL_PERSIST_CONTACT_DOUBLES 33
#define JL_PERSIST_SLOT_BYTES (19 * sizeof(double) + sizeof(int))

// What a persistent solve keeps in shared memory: the contacts' constants
// or not, and how many du rounds (0 to JL_PERSIST_ROUNDS). The plans go
// from the most bytes per thread to none; a solve takes the first whose
// blocks all fit one wave (jl_jor_persistent_blocks): each cached byte is
// one fewer read per iteration, and once the wave holds the grid more
// resident blocks buy nothing. The names and order are scene_gpu.h's.
struct jl_persist_plan {
  bool contacts;
  int rounds;
  const char *name;  // jl_scene_gpu_persistent_cache's answer
};
static const jl_persist_plan jl_persist_plans[] = {
    {true, 2, "contacts+du2"}, {true, 1, "contacts+du1"}, {false, 2, "du2"},
    {true, 0, "contacts"},     {false, 1, "du1"},         {false, 0, "none"}};
static_assert(sizeof jl_persist_plans / sizeof jl_persist_plans[0] ==
                  JL_SCENE_GPU_PERSIST_PLANS,
              "scene_gpu.h's count of plans");
static inline size_t jl_persist_smem(const jl_persist_plan &pl) {
  return (size_t)JL_PERSIST_BLOCK *
         ((pl.contacts ? JL_PERSIST_CONTACT_DOUBLES * sizeof(double) : 0) +
          (size_t)pl.rounds * JL_PERSIST_SLOT_BYTES);
}

// Max of r and AND of good over the block, by warp shuffles (exact in any
// order); every thread gets the result.
static __device__ void jl_persist_max_and(double *w_res, int *w_ok, double &r, int &good) {
  for (int o = 16; o > 0; o /= 2) {
    double x = __shfl_xor_sync(0xffffffffu, r, o);
    if (!(x <= r)) r = x;
  }
  good = __all_sync(0xffffffffu, good);
  int w = threadIdx.x / 32;
  __syncthreads();  // the last readers of w_res are done
  if ((threadIdx.x & 31) == 0) {
    w_res[w] = r;
    w_ok[w] = good;
  }
  __syncthreads();
  r = w_res[0];
  good = w_ok[0];
  for (int k = 1; k < JL_PERSIST_WARPS; ++k) {
    if (!(w_res[k] <= r)) r = w_res[k];
    good &= w_ok[k];
  }
}

// Resident blocks an SM must hold by registers (launch bounds). The cached
// instance: 4 (it needs 124 registers unbounded; its 74 KB plan holds 3
// blocks an SM by shared memory, its 54 KB one 4). The uncached one: 6 (80
// registers, a 4-byte spill; unbounded it took 128), so its 20 KB plan and
// the empty one hold 6 blocks an SM, its 40 KB one 5.
#define JL_PERSIST_MIN_CACHED 4
#define JL_PERSIST_MIN_UNCACHED 6

// CACHE: the contacts' constants in shared memory; nr: cached du rounds
// (the plan's), their slots after the constants (or from the start).
template <bool CACHE>
__global__ void __launch_bounds__(JL_PERSIST_BLOCK,
                                  CACHE ? JL_PERSIST_MIN_CACHED : JL_PERSIST_MIN_UNCACHED)
    jl_jor_persistent_kernel(jl_jor_problem p, jl_jor_bufs b, int apgd, int nr, double *part_res,
                             int *part_ok, jl_state_and_buf *sb) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  __shared__ double w_res[JL_PERSIST_WARPS];
  __shared__ int w_ok[JL_PERSIST_WARPS];
  extern __shared__ double jl_pcache[];
  const int B = JL_PERSIST_BLOCK, nslot = nr * JL_PERSIST_BLOCK, t = threadIdx.x;
  const long long g0 = (long long)blockIdx.x * blockDim.x + t;
  const int mine = g0 < p.n;
  const int ka = mine ? p.ka[g0] : -1, kb = mine ? p.kb[g0] : -1;
  // the contact's constants: the block's copies (index t) or the problem's (index g0)
  jl_jor_consts kc = {p.c, p.frame, p.rx, p.diag, p.mu};
  int li = (int)g0;
  double *c_e = jl_pcache;
  if (CACHE) {
    double *k_frame = jl_pcache, *k_rx = k_frame + 9 * B, *k_c = k_rx + 18 * B;
    double *k_diag = k_c + 3 * B, *k_mu = k_diag + 2 * B;
    kc = {k_c, k_frame, k_rx, k_diag, k_mu};
    li = t;
    c_e = k_mu + B;
    if (mine) {
      for (int m = 0; m < 9; ++m) k_frame[9 * t + m] = p.frame[9 * g0 + m];
      for (int m = 0; m < 18; ++m) k_rx[18 * t + m] = p.rx[18 * g0 + m];
      for (int m = 0; m < 3; ++m) k_c[3 * t + m] = p.c[3 * g0 + m];
      k_diag[2 * t] = p.diag[2 * g0];
      k_diag[2 * t + 1] = p.diag[2 * g0 + 1];
      k_mu[t] = p.mu[g0];
    }
  }
  // the du lanes' cached rounds (slot q B + t)
  double *c_ir = c_e + 9 * nslot, *c_im = c_ir + 9 * nslot;
  int *c_cs = (int *)(c_im + nslot);
  // this thread's du lane (jl_jor_du_lanes' layout) and its cached contacts
  const int lane = (int)(t & 31), l = lane % JL_DU_LANES, base = lane - l;
  const long long kk = g0 / JL_DU_LANES;
  const int live = !p.on_g && kk < p.nb, k = live ? (int)kk : 0;
  const int e0 = live ? p.body_ptr[k] : 0, e1 = live ? p.body_ptr[k + 1] : 0;
  const int rounds = __reduce_max_sync(0xffffffffu, (e1 - e0 + JL_DU_LANES - 1) / JL_DU_LANES);
  for (int q = 0; q < nr; ++q) {
    int e = e0 + q * JL_DU_LANES + l, slot = q * B + t;
    if (e < e1) {
      int i = p.body_contact[e], side = p.ka[i] == k ? 0 : 1;
      for (int m = 0; m < 9; ++m) {
        c_e[9 * slot + m] = p.frame[9 * (size_t)i + m];
        c_ir[9 * slot + m] = p.irx[18 * (size_t)i + 9 * side + m];
      }
      c_im[slot] = p.im[2 * (size_t)i + side];
      c_cs[slot] = 2 * i + side;
    }
  }
  jl_pm_state st = sb->s;  // every block's own copy, decided alike
  const int limit = p.max_iter + JL_PROX_MAX_RESTARTS;
  for (int it = 0; it < limit; ++it) {
    int cur = it & 1, nxt = 1 - cur;
    // selected, not indexed: an index into the parameter's arrays would copy
    // them to the stack
    double *xc = cur ? b.x[1] : b.x[0], *xn = cur ? b.x[0] : b.x[1];
    double *yc = cur ? b.y[1] : b.y[0], *yn = cur ? b.y[0] : b.y[1];
    double r = 0.0;
    int good = 1;
    if (mine)
      r = jl_jor_update_one(p, kc, li, (int)g0, ka, kb, xc, xn, yc, apgd ? yn : nullptr, b.du,
                            st.alpha, apgd ? jl_pm_beta(&st) : 0.0, &good);
    jl_persist_max_and(w_res, w_ok, r, good);
    if (t == 0) {
      part_res[blockIdx.x] = r;
      part_ok[blockIdx.x] = good;
    }
    grid.sync();
    // The partials are loaded now and joined after du (which does not need
    // the decision): their trip through L2 overlaps du's. The same values
    // in the same order, so the same decision.
    double pr[JL_PERSIST_AHEAD];
    int po[JL_PERSIST_AHEAD];
#pragma unroll
    for (int q = 0; q < JL_PERSIST_AHEAD; ++q) {
      const int m = t + q * B, in = m < (int)gridDim.x;
      pr[q] = in ? __ldcg(part_res + m) : 0.0;
      po[q] = in ? __ldcg(part_ok + m) : 1;
    }
    // du of the new iterate (APGD: of the next point), jl_jor_du_lanes' additions
    for (int pass = 0; pass < 2; ++pass) {
      const double *lam = apgd ? yn : xn;
      double acc = 0.0;
      for (int q = 0; q < rounds; ++q) {
        int e = e0 + q * JL_DU_LANES + l;
        double v[6] = {0, 0, 0, 0, 0, 0};
        if (e < e1) {
          if (q < nr) {
            int slot = q * B + t, cs = c_cs[slot];
            const double *lc = lam + 3 * (size_t)(cs >> 1);
#pragma unroll
            for (int c = 0; c < 6; ++c)
              v[c] = jl_sm_mw_comp_rows(c_e + 9 * slot, c_ir + 9 * slot, c_im[slot], cs & 1, lc, c);
          } else {
            int i = p.body_contact[e], side = p.ka[i] == k ? 0 : 1;
#pragma unroll
            for (int c = 0; c < 6; ++c)
              v[c] = jl_sm_mw_comp(p.frame, p.irx, p.im, i, side, lam + 3 * (size_t)i, c);
          }
        }
        jl_du_lanes_add(v, e0 + q * JL_DU_LANES, e1, l, base, &acc);
      }
      if (live && l < 6) b.du[6 * (size_t)k + l] = acc;
      if (pass == 0) {
        r = 0.0;
        good = 1;
#pragma unroll
        for (int q = 0; q < JL_PERSIST_AHEAD; ++q)
          if (t + q * B < (int)gridDim.x) {
            if (!(pr[q] <= r)) r = pr[q];
            good &= po[q];
          }
        for (int m = t + JL_PERSIST_AHEAD * B; m < (int)gridDim.x; m += B) {
          double x = __ldcg(part_res + m);
          if (!(x <= r)) r = x;
          good &= __ldcg(part_ok + m);
        }
        jl_persist_max_and(w_res, w_ok, r, good);
        jl_pm_decide(&st, r, good, p.max_iter);
      }
      if (pass == 1 || st.state != JL_PM_RESTART) break;
      // a restart: the next iterate back to the start, then du again
      grid.sync();  // every block is done with the iterate
      for (long long m = g0; m < 3LL * p.n; m += (long long)gridDim.x * B) {
        xn[m] = b.init[m];
        if (apgd) yn[m] = b.init[m];
      }
      grid.sync();
      st.state = JL_PM_RUN;
    }
    if (st.state == JL_PM_STOP) {
      // the result into x[0], where the step's later launches look for it
      // without reading the state (every read of x[cur] is behind the barrier)
      if (mine && nxt == 1)
        for (int d = 0; d < 3; ++d) xc[3 * g0 + d] = xn[3 * g0 + d];
      if (blockIdx.x == 0 && t == 0) {
        sb->s = st;
        sb->result_buf = 0;
      }
      break;
    }
    grid.sync();
  }
}

static const void *jl_persist_kernel(const jl_persist_plan &pl) {
  return pl.contacts ? (const void *)jl_jor_persistent_kernel<true>
                     : (const void *)jl_jor_persistent_kernel<false>;
}

// Blocks of a persistent solve of n contacts and nb bodies (a thread per
// contact and per du lane, all resident at once) and its plan (*plan: an
// index of jl_persist_plans: the first that fits, or the one the arena
// forces), or 0 when none fits (or the device cannot launch it): then the
// per-iteration kernels run. The device's capacity per plan is asked once
// per arena.
static int jl_jor_persistent_blocks(jl_scene_gpu *g, long long n, long long nb, int *plan) {
  if (!g->persist_asked) {
    g->persist_asked = 1;
    for (int k = 0; k < JL_SCENE_GPU_PERSIST_PLANS; ++k) g->persist_fit[k] = 0;
    int dev = 0, sms = 0, coop = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess || !coop ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      (void)cudaGetLastError();  // not available: the per-iteration kernels
      return 0;
    }
    // each instance may take its largest plan's bytes, so every smaller one launches too
    for (int cache = 0; cache < 2; ++cache) {
      size_t most = 0;
      for (const jl_persist_plan &pl : jl_persist_plans)
        if (pl.contacts == (cache != 0) && jl_persist_smem(pl) > most) most = jl_persist_smem(pl);
      if (cudaFuncSetAttribute(cache ? (const void *)jl_jor_persistent_kernel<true>
                                     : (const void *)jl_jor_persistent_kernel<false>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)most) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
      }
    }
    for (int k = 0; k < JL_SCENE_GPU_PERSIST_PLANS; ++k) {
      const jl_persist_plan &pl = jl_persist_plans[k];
      int per_sm = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, jl_persist_kernel(pl),
                                                        JL_PERSIST_BLOCK,
                                                        jl_persist_smem(pl)) != cudaSuccess) {
        (void)cudaGetLastError();  // this plan cannot launch here
        per_sm = 0;
      }
      g->persist_fit[k] = sms * per_sm;
    }
  }
  long long work = n > JL_DU_LANES * nb ? n : JL_DU_LANES * nb;
  long long want = (work + JL_PERSIST_BLOCK - 1) / JL_PERSIST_BLOCK;
  if (want > jl_prox_partials(n)) return 0;
  int forced = g->persist_cache;
  for (int k = forced < 0 ? 0 : forced; k < (forced < 0 ? JL_SCENE_GPU_PERSIST_PLANS : forced + 1);
       ++k) {
    if (want <= g->persist_fit[k]) {
      *plan = k;
      return (int)want;
    }
  }
  return 0;
}

// SOR sweeps on the contacts in colour order (jl_sor_gather below): the
// contacts of a colour sit side by side, so a sweep reads them coalesced,
// without an index through the colouring's order; the arithmetic is
// jl_pm_sor_contact's, whatever the contact's place.
struct jl_sor_perm {
  int *ka, *kb;
  double *frame, *rx, *irx, *im, *c, *mu, *diag, *lam;
};

// Problem arrays and the warm start into colour order: position e holds
// contact order[e].
__global__ void jl_sor_gather_kernel(jl_jor_problem p, const int *order, const double *lam,
                                     jl_sor_perm s) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= p.n) return;
  size_t i = (size_t)order[e], f = (size_t)e;
  s.ka[f] = p.ka[i];
  s.kb[f] = p.kb[i];
  for (int d = 0; d < 9; ++d) s.frame[9 * f + d] = p.frame[9 * i + d];
  for (int d = 0; d < 18; ++d) {
    s.rx[18 * f + d] = p.rx[18 * i + d];
    s.irx[18 * f + d] = p.irx[18 * i + d];
  }
  for (int d = 0; d < 2; ++d) {
    s.im[2 * f + d] = p.im[2 * i + d];
    s.diag[2 * f + d] = p.diag[2 * i + d];
  }
  for (int d = 0; d < 3; ++d) {
    s.c[3 * f + d] = p.c[3 * i + d];
    s.lam[3 * f + d] = lam[3 * i + d];
  }
  s.mu[f] = p.mu[i];
}

// The impulses back into contact order.
__global__ void jl_sor_scatter_kernel(int n, const int *order, const double *lam_s, double *lam) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  size_t i = (size_t)order[e];
  for (int d = 0; d < 3; ++d) lam[3 * i + d] = lam_s[3 * (size_t)e + d];
}

// SOR sweep of one colour: positions [lo, lo + count), no two contacts
// sharing a dynamic body, so the updates and du's changes do not race. Small
// blocks: a colour holds a few thousand contacts (a wall's 23 colours of
// about 2,500), and blocks of 256 would leave most multiprocessors idle while
// each thread waits on its loads.
#define JL_SOR_BLOCK 64
__global__ void jl_sor_colour_kernel(jl_jor_problem p, double *lam, double *du, double *res,
                                     int *ok, int lo, int count, const jl_pm_state *state) {
  if (state->state != JL_PM_RUN) return;
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= count) return;
  int i = lo + e, good = 1;
  res[i] = jl_pm_sor_contact(i, p.c, p.ka, p.kb, p.frame, p.rx, p.irx, p.im, p.diag, p.mu,
                             state->alpha, p.tol_rel, p.tol_abs, lam, du, &good);
  ok[i] = good;
}

// The merged small colours [c0, c1) (backwards when back) in one block:
// each colour still alone, a block barrier between two, so the result is
// the colour-by-colour sweep's.
__global__ void __launch_bounds__(JL_COLOUR_MERGE_SIZE) jl_sor_merged_kernel(
    jl_jor_problem p, double *lam, double *du, double *res, int *ok, const int *colour_ptr,
    int c0, int c1, int back, const jl_pm_state *state) {
  if (state->state != JL_PM_RUN) return;  // uniform: no divergent barrier
  double alpha = state->alpha;
  for (int cc = c0; cc < c1; ++cc) {
    int c = back ? c0 + c1 - 1 - cc : cc;
    for (int i = colour_ptr[c] + threadIdx.x; i < colour_ptr[c + 1]; i += blockDim.x) {
      int good = 1;
      res[i] = jl_pm_sor_contact(i, p.c, p.ka, p.kb, p.frame, p.rx, p.irx, p.im, p.diag, p.mu,
                                 alpha, p.tol_rel, p.tol_abs, lam, du, &good);
      ok[i] = good;
    }
    __syncthreads();  // this colour's du and impulses before the next colour reads them
  }
}

__global__ void jl_jor_init_kernel(jl_state_and_buf *sb, double alpha) {
  jl_pm_state_init(&sb->s, alpha);
  sb->result_buf = 0;
  sb->arrive_stop = 0;
}


// body_entry (jl_soa_entry) of an uploaded problem's body lists, a thread per body.
__global__ void jl_body_entry_kernel(int nb, const int *body_ptr, const int *body_contact,
                                     const int *ka, int *body_entry) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= nb) return;
  for (int e = body_ptr[k]; e < body_ptr[k + 1]; ++e) {
    int i = body_contact[e];
    body_entry[e] = jl_soa_entry(i, ka[i] == k ? 0 : 1);
  }
}

// Copies a problem set up on the host into the arena (the device setup writes the same arrays).
extern "C" int jl_cuda_scene_set_problem(jl_scene_gpu *g, const jl_contact_problem *p, char *msg,
                                         int msg_len) {
  int n = p->n, nb = p->nbodies;
  g->csr_ok = 0;  // the body lists are the host's problem's now
  g->soa_n = -1;  // and the constants by field a setup wrote are not of it
  g->du_soa = 0;
  g->p_lean = 0;  // every array is the host's
  g->p_n = 0;
  g->p_nb = 0;
  g->p_has_g = 0;
  g->p_nnz = 0;
  if (jl_reserve_problem(g, n, nb, msg, msg_len)) return -1;
  size_t sn = (size_t)n, snb = (size_t)nb, ne = (size_t)p->body_ptr[nb];
  cudaMemcpyKind h2d = cudaMemcpyHostToDevice;
  if (n > 0) {
    JL_CUDA_TRY(cudaMemcpy(g->p_ka.p, p->ka, sn * sizeof(int), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_kb.p, p->kb, sn * sizeof(int), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_frame.p, p->frame, 9 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_rx.p, p->rx, 18 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_irx.p, p->irx, 18 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_im.p, p->im, 2 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_lever.p, p->lever, 6 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_iso.p, p->iso, 2 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_arm.p, p->arm, 2 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_c.p, p->c, 3 * sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_mu.p, p->mu, sn * sizeof(double), h2d));
    JL_CUDA_TRY(cudaMemcpy(g->p_diag.p, p->diag, 2 * sn * sizeof(double), h2d));
  }
  JL_CUDA_TRY(cudaMemcpy(g->p_body_ptr.p, p->body_ptr, (snb + 1) * sizeof(int), h2d));
  if (ne > 0) JL_CUDA_TRY(cudaMemcpy(g->p_body_contact.p, p->body_contact, ne * sizeof(int), h2d));
  if (ne > 0 && nb > 0) {  // each entry's side, as the setup's body lists give it
    jl_body_entry_kernel<<<jl_scene_blocks(nb), JL_SCENE_BLOCK>>>(
        nb, jl_dp<int>(g->p_body_ptr), jl_dp<int>(g->p_body_contact), jl_dp<int>(g->p_ka),
        jl_dp<int>(g->p_body_entry));
    JL_CUDA_TRY(cudaGetLastError());
  }
  if (p->has_g) {
    size_t nz = (size_t)p->nnz;
    JL_RESERVE(p_rowptr, (sn + 1) * sizeof(int), "Delassus rows");
    JL_RESERVE(p_col, (nz > 0 ? nz : 1) * sizeof(int), "Delassus columns");
    JL_RESERVE(p_blocks, 9 * (nz > 0 ? nz : 1) * sizeof(double), "Delassus blocks");
    JL_CUDA_TRY(cudaMemcpy(g->p_rowptr.p, p->rowptr, (sn + 1) * sizeof(int), h2d));
    if (nz > 0) {
      JL_CUDA_TRY(cudaMemcpy(g->p_col.p, p->col, nz * sizeof(int), h2d));
      JL_CUDA_TRY(cudaMemcpy(g->p_blocks.p, p->blocks, 9 * nz * sizeof(double), h2d));
    }
    g->p_nnz = p->nnz;
    g->p_has_g = 1;
  }
  g->p_n = n;
  g->p_nb = nb;
  return 0;
}

// JOR on the problem in the arena, from lambda's contents; result in lambda.
extern "C" int jl_cuda_scene_jor(jl_scene_gpu *g, int on_g, int apgd, double alpha, double tol_abs,
                                 double tol_rel, int max_iter, int check_every, double *lambda, int *iterations,
                                 double *residual, int *converged, int *restarts,
                                 double *alpha_out, char *msg, int msg_len) {
  int n = g->p_n;
  size_t sn = (size_t)n;
  if (n <= 0) return 0;
  if (jl_scene_jor_reserve(g, apgd, msg, msg_len)) return -1;
  cudaMemcpyKind h2d = cudaMemcpyHostToDevice;
  JL_CUDA_TRY(cudaMemcpy(g->lam0.p, lambda, 3 * sn * sizeof(double), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->lam_init.p, lambda, 3 * sn * sizeof(double), h2d));
  const double *result = nullptr;
  jl_pm_state fin;
  if (jl_scene_jor_core(g, on_g, apgd, alpha, tol_abs, tol_rel, max_iter, check_every, &result,
                        &fin, nullptr, msg, msg_len))
    return -1;
  JL_CUDA_TRY(cudaMemcpy(lambda, result, 3 * sn * sizeof(double), cudaMemcpyDeviceToHost));
  *iterations = fin.iterations;
  *residual = fin.residual;
  *converged = fin.converged;
  *restarts = fin.restarts;
  *alpha_out = fin.alpha;
  return 0;
}

// Room for the iterates of the problem in the arena (apgd: its extrapolated points too).
int jl_scene_jor_reserve(jl_scene_gpu *g, int apgd, char *msg, int msg_len) {
  size_t sn = (size_t)(g->p_n > 0 ? g->p_n : 1), snb = (size_t)(g->p_nb > 0 ? g->p_nb : 1);
  JL_RESERVE(lam0, 3 * sn * sizeof(double), "impulses");
  JL_RESERVE(lam1, 3 * sn * sizeof(double), "impulses");
  JL_RESERVE(lam_init, 3 * sn * sizeof(double), "impulses");
  if (apgd) {
    JL_RESERVE(lam_y0, 3 * sn * sizeof(double), "extrapolated impulses");
    JL_RESERVE(lam_y1, 3 * sn * sizeof(double), "extrapolated impulses");
  }
  JL_RESERVE(du, 6 * snb * sizeof(double), "body velocity changes");
  JL_RESERVE(res, sn * sizeof(double), "residuals");
  JL_RESERVE(ok, sn * sizeof(int), "tolerance flags");
  JL_RESERVE(state, sizeof(jl_state_and_buf), "solver state");
  JL_RESERVE(partial, (size_t)jl_prox_partials(g->p_n) * (sizeof(double) + sizeof(int)),
             "reduction partials");
  return 0;
}

// The solve loop: body(it, stream) launches iteration it's kernels (they do
// nothing once the device's stop test fired). The host reads the state
// every check_every iterations. With graphs on, an even number of
// iterations (check_every rounded up) is captured once per solve into a
// CUDA graph (the cached executable updated in place when the launches
// keep their shape) and launched until the state says stop: the same
// kernels in the same order, so the same bits, at a fraction of the
// launch cost. *host: the state at the stop.
template <typename Body>
static int jl_prox_loop(jl_scene_gpu *g, int max_iter, int check_every, Body &body,
                        std::vector<int> shape,
                        jl_state_and_buf *host, char *msg, int msg_len) {
  jl_state_and_buf *sb = jl_dp<jl_state_and_buf>(g->state);
  memset(host, 0, sizeof *host);
  // a restart decided at the last iteration buys one more (jl_pm_decide), at most
  // JL_PROX_MAX_RESTARTS times
  int limit = max_iter + JL_PROX_MAX_RESTARTS;
  if (!g->use_graphs) {
    for (int it = 0; it < limit; ++it) {
      body(it, (cudaStream_t)0);
      JL_CUDA_TRY(cudaGetLastError());
      if ((it + 1) % check_every == 0 || it + 1 == limit) {
        JL_CUDA_TRY(cudaMemcpy(host, sb, sizeof *host, cudaMemcpyDeviceToHost));
        if (host->s.state == JL_PM_STOP) break;
      }
    }
    return 0;
  }
  // a non-blocking stream (capture must not meet the legacy stream): the
  // legacy stream's work before is waited for by an event, and the host
  // synchronises the stream after every launch, so the work after waits too
  if (!g->stream) JL_CUDA_TRY(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
  if (!g->ready) JL_CUDA_TRY(cudaEventCreateWithFlags(&g->ready, cudaEventDisableTiming));
  int per = check_every + (check_every & 1);
  cudaGraph_t graph = nullptr;
  JL_CUDA_TRY(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
  for (int j = 0; j < per; ++j) body(j, g->stream);  // starts at an even iteration: same parities
  cudaError_t launch = cudaGetLastError();
  cudaError_t end = cudaStreamEndCapture(g->stream, &graph);
  if (launch != cudaSuccess || end != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    snprintf(msg, (size_t)msg_len, "capturing the solver's iterations: %s",
             cudaGetErrorString(launch != cudaSuccess ? launch : end));
    return -1;
  }
  shape.push_back(per);
  if (g->graph_exec && g->graph_shape != shape) {  // another topology: no update can take it
    cudaGraphExecDestroy(g->graph_exec);
    g->graph_exec = nullptr;
  }
  if (g->graph_exec) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(g->graph_exec, graph, &info) != cudaSuccess) {
      (void)cudaGetLastError();  // refused after all: instantiate anew
      cudaGraphExecDestroy(g->graph_exec);
      g->graph_exec = nullptr;
    }
  }
  if (!g->graph_exec) {
    cudaError_t e = cudaGraphInstantiate(&g->graph_exec, graph, 0);
    if (e != cudaSuccess) {
      g->graph_exec = nullptr;
      cudaGraphDestroy(graph);
      snprintf(msg, (size_t)msg_len, "instantiating the solver's graph: %s", cudaGetErrorString(e));
      return -1;
    }
    g->graph_shape = shape;
  }
  cudaGraphDestroy(graph);
  if (!g->h_state) JL_CUDA_TRY(cudaMallocHost(&g->h_state, 2 * sizeof(jl_state_and_buf)));
  for (int k = 0; k < 2; ++k)
    if (!g->checked[k])
      JL_CUDA_TRY(cudaEventCreateWithFlags(&g->checked[k], cudaEventDisableTiming));
  jl_state_and_buf *hs = (jl_state_and_buf *)g->h_state;
  JL_CUDA_TRY(cudaEventRecord(g->ready, 0));
  JL_CUDA_TRY(cudaStreamWaitEvent(g->stream, g->ready, 0));
  // One launch of the graph stays queued ahead of the check of the one
  // before, so the device does not idle while the host reads the state
  // (pinned, so the copy is asynchronous). After a stop the launch ahead
  // does nothing (every kernel returns on a stopped state); the stream is
  // drained before returning, so the next solve's start waits for it.
  auto enqueue = [&](int k) -> cudaError_t {
    cudaError_t e = cudaGraphLaunch(g->graph_exec, g->stream);
    if (e == cudaSuccess)
      e = cudaMemcpyAsync(hs + k, sb, sizeof *hs, cudaMemcpyDeviceToHost, g->stream);
    if (e == cudaSuccess) e = cudaEventRecord(g->checked[k], g->stream);
    return e;
  };
  JL_CUDA_TRY(enqueue(0));
  for (int done = 0, k = 0; done < limit; done += per, k ^= 1) {
    if (done + per < limit) JL_CUDA_TRY(enqueue(k ^ 1));
    JL_CUDA_TRY(cudaEventSynchronize(g->checked[k]));
    *host = hs[k];
    if (host->s.state == JL_PM_STOP) break;
  }
  JL_CUDA_TRY(cudaStreamSynchronize(g->stream));
  return 0;
}

// The problem in the arena, as the kernels take it.
static jl_jor_problem jl_prox_problem(jl_scene_gpu *g, int on_g, double tol_abs, double tol_rel,
                                      int max_iter) {
  int n = g->p_n, nb = g->p_nb;
  jl_jor_problem q;
  q.n = n;
  q.nb = nb;
  q.ka = jl_dp<int>(g->p_ka);
  q.kb = jl_dp<int>(g->p_kb);
  q.body_ptr = jl_dp<int>(g->p_body_ptr);
  q.body_contact = jl_dp<int>(g->p_body_contact);
  q.body_entry = jl_dp<int>(g->p_body_entry);
  q.frame = jl_dp<double>(g->p_frame);
  q.rx = jl_dp<double>(g->p_rx);
  q.irx = jl_dp<double>(g->p_irx);
  q.im = jl_dp<double>(g->p_im);
  q.c = jl_dp<double>(g->p_c);
  q.mu = jl_dp<double>(g->p_mu);
  q.diag = jl_dp<double>(g->p_diag);
  q.lever = jl_dp<double>(g->p_lever);
  q.iso = jl_dp<double>(g->p_iso);
  q.arm = jl_dp<double>(g->p_arm);
  q.on_g = on_g;
  q.rowptr = jl_dp<int>(g->p_rowptr);
  q.col = jl_dp<int>(g->p_col);
  q.blocks = jl_dp<double>(g->p_blocks);
  q.tol_rel = tol_rel;
  q.tol_abs = tol_abs;
  q.max_iter = max_iter;
  return q;
}

// JOR (or APGD) from the impulses in lam0 (lam_init holds the same);
// *result: the buffer with the final impulses; *out: the final state.
int jl_scene_jor_core(jl_scene_gpu *g, int on_g, int apgd, double alpha, double tol_abs,
                      double tol_rel, int max_iter, int check_every, const double **result,
                      jl_pm_state *out, int *pending, char *msg, int msg_len) {
  if (pending) *pending = 0;
  int n = g->p_n, nb = g->p_nb;
  if (on_g && !g->p_has_g) {
    snprintf(msg, (size_t)msg_len, "JOR on G without the Delassus matrix on the device");
    return -1;
  }
  if (apgd && (!g->lam_y0.p || g->lam_y0.cap < 3 * (size_t)n * sizeof(double))) {
    snprintf(msg, (size_t)msg_len, "APGD without room for its extrapolated points");
    return -1;
  }
  if (check_every < 1) check_every = 1;
  jl_jor_problem q = jl_prox_problem(g, on_g, tol_abs, tol_rel, max_iter);
  double *buf[2] = {jl_dp<double>(g->lam0), jl_dp<double>(g->lam1)};
  double *ybuf[2] = {apgd ? jl_dp<double>(g->lam_y0) : nullptr,
                     apgd ? jl_dp<double>(g->lam_y1) : nullptr};
  double *du = jl_dp<double>(g->du);
  jl_state_and_buf *sb = jl_dp<jl_state_and_buf>(g->state);
  jl_pm_state *state = &sb->s;
  int cb = jl_scene_blocks(n), bb = jl_scene_blocks(nb > 0 ? (long long)JL_DU_LANES * nb : 1);
  double *part_res = jl_dp<double>(g->partial);
  int *part_ok = (int *)(part_res + jl_prox_partials(n));
  jl_jor_init_kernel<<<1, 1>>>(sb, alpha);
  JL_CUDA_TRY(cudaGetLastError());
  if (apgd)  // the first extrapolated point is the start
    JL_CUDA_TRY(cudaMemcpyAsync(ybuf[0], buf[0], 3 * (size_t)n * sizeof(double),
                                cudaMemcpyDeviceToDevice));
  jl_state_and_buf host;
  double *lam_init = jl_dp<double>(g->lam_init);
  int plan = 0;
  int pb = g->use_persistent ? jl_jor_persistent_blocks(g, n, nb, &plan) : 0;
  // Matrix-free and too large for the persistent solve: the streamed kernels
  // (constants by field, du rebuilt from them); on G, the update and the
  // lanes' du.
  double *soa = nullptr, *bc = nullptr;
  int streamed = pb == 0 && jl_jor_streams(g, n, on_g), nbb = jl_scene_blocks(nb > 0 ? nb : 1);
  g->du_soa = 0;
  if (streamed) {
    size_t sn = (size_t)n, snb = (size_t)(nb > 0 ? nb : 1);
    JL_RESERVE(j_soa, JL_SOA_FIELDS * sn * sizeof(double), "contact constants by field");
    JL_RESERVE(j_body_consts, 2 * snb * sizeof(double), "body inertia and mass");
    soa = jl_dp<double>(g->j_soa);
    bc = jl_dp<double>(g->j_body_consts);
    if (g->soa_n != n) {  // the setup did not write them
      jl_jor_soa_kernel<<<cb, JL_SCENE_BLOCK>>>(q, soa);
      JL_CUDA_TRY(cudaGetLastError());
    }
    if (nb > 0) {
      jl_jor_body_consts_kernel<<<nbb, JL_SCENE_BLOCK>>>(q, bc);
      JL_CUDA_TRY(cudaGetLastError());
    }
    g->du_soa = 1;
    jl_jor_du_soa_kernel<<<nbb, JL_SCENE_BLOCK>>>(q, soa, bc, buf[0], du, sb);
  } else {
    jl_jor_du_kernel<<<bb, JL_SCENE_BLOCK>>>(q, buf[0], du, state);
  }
  JL_CUDA_TRY(cudaGetLastError());
  if (pb > 0) {
    const jl_persist_plan &pl = jl_persist_plans[plan];
    jl_jor_bufs jb = {{buf[0], buf[1]}, {ybuf[0], ybuf[1]}, du, lam_init};
    int nr = pl.rounds;
    void *args[] = {&q, &jb, &apgd, &nr, &part_res, &part_ok, &sb};
    JL_CUDA_TRY(cudaLaunchCooperativeKernel(jl_persist_kernel(pl), dim3(pb),
                                            dim3(JL_PERSIST_BLOCK), args, jl_persist_smem(pl), 0));
    g->persistent_solves++;
    g->persist_last = pl.name;
    if (pending) {  // the caller reads the state later (jl_scene_jor_state_copy)
      *pending = 1;
      *result = buf[0];
      return 0;
    }
    JL_CUDA_TRY(cudaMemcpy(&host, sb, sizeof host, cudaMemcpyDeviceToHost));
  } else {
    // iteration it: from buf[it & 1] into buf[1 - (it & 1)] (APGD: and from
    // ybuf[it & 1] into ybuf[1 - (it & 1)]; du follows y). A restart resets
    // the next iteration's x and y.
    auto body = [&](int it, cudaStream_t st) {
      int cur = it & 1, nxt = 1 - cur;
      jl_restart_args ra = {lam_init, buf[nxt], du, nullptr, 0, ybuf[nxt]};
      const double *pt = apgd ? ybuf[nxt] : buf[nxt];
      if (!streamed) {
        jl_jor_update_stop_kernel<false><<<cb, JL_SCENE_BLOCK, 0, st>>>(
            q, nullptr, buf[cur], buf[nxt], ybuf[cur], ybuf[nxt], du, part_res, part_ok, nxt, sb,
            ra);
        jl_jor_du_kernel<<<bb, JL_SCENE_BLOCK, 0, st>>>(q, pt, du, state);
        return;
      }
      jl_jor_update_stop_kernel<true><<<cb, JL_SCENE_BLOCK, 0, st>>>(
          q, soa, buf[cur], buf[nxt], ybuf[cur], ybuf[nxt], du, part_res, part_ok, nxt, sb, ra);
      jl_jor_du_soa_kernel<<<nbb, JL_SCENE_BLOCK, 0, st>>>(q, soa, bc, pt, du, sb);
    };
    if (jl_prox_loop(g, max_iter, check_every, body, {0, on_g, apgd, streamed}, &host, msg,
                     msg_len))
      return -1;
  }
  if (jl_scene_jor_stopped(&host.s, apgd, max_iter, msg, msg_len)) return -1;
  *result = buf[host.result_buf];
  *out = host.s;
  return 0;
}

int jl_scene_jor_stopped(const jl_pm_state *s, int apgd, int max_iter, char *msg, int msg_len) {
  if (s->state == JL_PM_STOP) return 0;
  snprintf(msg, (size_t)msg_len, "%s on the device did not stop after %d iterations",
           apgd ? "APGD" : "JOR", max_iter + JL_PROX_MAX_RESTARTS);
  return -1;
}

// A pending solve's final state into dst (device memory), queued behind it.
int jl_scene_jor_state_copy(jl_scene_gpu *g, jl_pm_state *dst, char *msg, int msg_len) {
  const jl_state_and_buf *sb = jl_dp<jl_state_and_buf>(g->state);
  JL_CUDA_TRY(cudaMemcpyAsync(dst, &sb->s, sizeof *dst, cudaMemcpyDeviceToDevice, 0));
  return 0;
}

// SOR from the impulses in lam0 (lam_init holds the same), in place, by the
// colours of jl_scene_colour: colour after colour (backwards on odd
// iterations, as the twin and prox_solver.c's symmetric sweeps), the small
// ones merged per run into one block; then the stop test as JOR's.
int jl_scene_sor_core(jl_scene_gpu *g, double alpha, double tol_abs, double tol_rel, int max_iter,
                      int check_every, jl_pm_state *out, char *msg, int msg_len) {
  int n = g->p_n, nb = g->p_nb, colours = g->colours;
  if (n <= 0) return 0;
  if (colours < 1) {
    snprintf(msg, (size_t)msg_len, "SOR on the device without a colouring");
    return -1;
  }
  if (check_every < 1) check_every = 1;
  jl_jor_problem q = jl_prox_problem(g, 0, tol_abs, tol_rel, max_iter);
  // launch plan: groups of colours [first[k], first[k + 1])
  std::vector<int> first((size_t)colours + 1), merged((size_t)colours);
  int groups = jl_cm_plan(g->h_colour_ptr, colours, first.data(), merged.data());
  g->groups = groups;
  size_t sn = (size_t)n;
  JL_RESERVE(s_ka, sn * sizeof(int), "contacts in colour order");
  JL_RESERVE(s_kb, sn * sizeof(int), "contacts in colour order");
  JL_RESERVE(s_frame, 9 * sn * sizeof(double), "contacts in colour order");
  JL_RESERVE(s_rx, 18 * sn * sizeof(double), "contacts in colour order");
  JL_RESERVE(s_irx, 18 * sn * sizeof(double), "contacts in colour order");
  JL_RESERVE(s_im, 2 * sn * sizeof(double), "contacts in colour order");
  JL_RESERVE(s_c, 3 * sn * sizeof(double), "contacts in colour order");
  JL_RESERVE(s_mu, sn * sizeof(double), "contacts in colour order");
  JL_RESERVE(s_diag, 2 * sn * sizeof(double), "contacts in colour order");
  JL_RESERVE(s_lam, 3 * sn * sizeof(double), "contacts in colour order");
  jl_sor_perm sp = {jl_dp<int>(g->s_ka), jl_dp<int>(g->s_kb), jl_dp<double>(g->s_frame),
                    jl_dp<double>(g->s_rx), jl_dp<double>(g->s_irx), jl_dp<double>(g->s_im),
                    jl_dp<double>(g->s_c), jl_dp<double>(g->s_mu), jl_dp<double>(g->s_diag),
                    jl_dp<double>(g->s_lam)};
  jl_jor_problem qs = q;  // the sweeps' view: the same problem in colour order
  qs.ka = sp.ka;
  qs.kb = sp.kb;
  qs.frame = sp.frame;
  qs.rx = sp.rx;
  qs.irx = sp.irx;
  qs.im = sp.im;
  qs.c = sp.c;
  qs.mu = sp.mu;
  qs.diag = sp.diag;
  double *lam0 = jl_dp<double>(g->lam0), *lam = sp.lam;
  double *du = jl_dp<double>(g->du), *res = jl_dp<double>(g->res);
  int *ok = jl_dp<int>(g->ok);
  const int *order = jl_dp<int>(g->col_order), *cptr = jl_dp<int>(g->col_ptr);
  jl_state_and_buf *sb = jl_dp<jl_state_and_buf>(g->state);
  jl_pm_state *state = &sb->s;
  int bb = jl_scene_blocks(nb > 0 ? (long long)JL_DU_LANES * nb : 1);
  int rb = jl_scene_reduce_blocks(n);
  double *part_res = jl_dp<double>(g->partial);
  int *part_ok = (int *)(part_res + jl_prox_partials(n));
  jl_jor_init_kernel<<<1, 1>>>(sb, alpha);
  JL_CUDA_TRY(cudaGetLastError());
  jl_jor_du_kernel<<<bb, JL_SCENE_BLOCK>>>(q, lam0, du, state);
  JL_CUDA_TRY(cudaGetLastError());
  jl_sor_gather_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(q, order, lam0, sp);
  JL_CUDA_TRY(cudaGetLastError());
  jl_state_and_buf host;
  const int *hptr = g->h_colour_ptr;
  double *lam_init = jl_dp<double>(g->lam_init);
  auto body = [&](int it, cudaStream_t st) {
    int back = it & 1;  // the state's iteration count while it runs: the twin's parity
    for (int kk = 0; kk < groups; ++kk) {
      int k = back ? groups - 1 - kk : kk;
      int c0 = first[(size_t)k], c1 = first[(size_t)k + 1];
      if (merged[(size_t)k]) {
        jl_sor_merged_kernel<<<1, JL_COLOUR_MERGE_SIZE, 0, st>>>(qs, lam, du, res, ok, cptr, c0,
                                                                 c1, back, state);
      } else {
        int lo = hptr[c0], count = hptr[c0 + 1] - lo;
        jl_sor_colour_kernel<<<(count + JL_SOR_BLOCK - 1) / JL_SOR_BLOCK, JL_SOR_BLOCK, 0, st>>>(
            qs, lam, du, res, ok, lo, count, state);
      }
    }
    jl_restart_args ra = {lam_init, lam, du, order, 1, nullptr};
    jl_prox_stop_kernel<<<rb, JL_SCENE_BLOCK, 0, st>>>(q, res, ok, part_res, part_ok, 0, sb, ra);
  };
  std::vector<int> shape = {1, groups};  // SOR: the plan's merged flags fix the kernels
  shape.insert(shape.end(), merged.begin(), merged.begin() + groups);
  if (jl_prox_loop(g, max_iter, check_every, body, shape, &host, msg, msg_len)) return -1;
  if (host.s.state != JL_PM_STOP) {
    snprintf(msg, (size_t)msg_len, "SOR on the device did not stop after %d iterations",
             max_iter + JL_PROX_MAX_RESTARTS);
    return -1;
  }
  jl_sor_scatter_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(n, order, lam, lam0);
  JL_CUDA_TRY(cudaGetLastError());
  *out = host.s;
  return 0;
}

// A kernel of this file: jl_cuda_kernels_load loads all of them (scene_arena.cu).
extern "C" const void *jl_cuda_scene_prox_code(void) {
  return (const void *)jl_jor_du_kernel;
}
