/* One candidate trunk packing's work: block contact relaxation by impulse
 * exchange (Goetzmann 2007, seed 004 ch. 5) and grand-canonical annealing
 * moves around it. Written once and compiled twice: as the CPU twin
 * (block_relax.c, one candidate per loop iteration on a thread) and as the
 * CUDA kernel (kernels/trunk/block_relax.cu, one thread block per candidate, one
 * thread per block of the packing). JL_BFOR runs over the blocks, JL_BSYNC is
 * a thread-block barrier, JL_BLEADER the thread that makes the random
 * choices. Every block's increments are summed by one thread in a fixed
 * order (its deepest point, then partners by ascending index), decisions
 * come from max reductions, random numbers from stateless Philox keyed by
 * (seed, candidate, move, block), and the builds disable FMA contraction:
 * both paths give the same bits. */
#ifndef JL_BLOCK_RELAX_H
#define JL_BLOCK_RELAX_H

#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "hd.h"
#include "math3d.h"
#include "rng.h"

/* The trunk's sample grid as the kernels see it (device or host pointers). */
typedef struct jl_grid_view {
  const double *px, *py, *pz;      /* samples sorted by cell */
  const int *cell_start, *cell_count;
  const double *cell_lo, *cell_hi; /* per cell: bounds of its samples (3 each) */
  const uint8_t *inside;           /* per cell: centre inside the trunk */
  const int *inside_cells;         /* the inside cells, where insertions go */
  int n_inside;
  double origin[3];
  double cell;
  int dim[3];
} jl_grid_view;

/* Annealing moves. */
enum { JL_BMOVE_INSERT = 0, JL_BMOVE_DELETE = 1, JL_BMOVE_SHIFT = 2, JL_BMOVE_SHAKE = 3,
       JL_BMOVE_TURN = 4, JL_BMOVE_SETTLE = 5, JL_BMOVE_PUSH = 6, JL_BMOVE_COUNT = 7 };

/* Settings shared by every candidate of a batch. */
typedef struct jl_block_params {
  double h[3];             /* half edges of the block, mm */
  double inv_mass;         /* 1 / m (all blocks alike; m cancels in the moves) */
  double inv_inertia[3];   /* body-frame principal 1 / I (seed eq. 5.5) */
  double radius;           /* bounding sphere radius |h| */
  double point_skin;       /* extra half edge against sample points only, mm: a
                              block kept this far from every sample cannot cut
                              a corner through the surface between samples */
  double tol;              /* legal when every penetration depth <= tol, mm */
  double gain;             /* share of each contact's separating move applied */
  int max_steps;           /* relaxation steps after a move */
  int iters;               /* annealing moves per candidate per launch */
  int bench_steps;         /* > 0: exactly this many relaxation steps, no moves */
  double p_insert, p_delete, p_shake; /* move probabilities; the rest shift one block */
  double p_copy;           /* inserted blocks take a random block's orientation */
  double p_axis;           /* else one of the 6 axis-aligned orientations (else random) */
  double shift_step;       /* largest shift per axis, mm */
  double shift_angle;      /* largest rotation increment component (quaternion units) */
  double shake_radius;     /* a shake moves the blocks whose centre is this close to a chosen one */
  double shake_step;
  double p_turn;           /* turn a block flush against the nearest face and slide it there */
  double p_settle;         /* shift the blocks near one down and toward the nearest wall */
  double p_push;           /* shift a column (or an x or y row) as a unit toward its nearer wall */
  double settle_step;      /* largest settle step along each of its two directions, mm */
  double push_step;        /* largest column push, mm */
  double face_reach;       /* turn and settle look for the face this far from a centre, mm */
  double penalty;          /* energy per mm of remaining penetration (summed over the
                              blocks' deepest contacts) */
  uint64_t seed;
  jl_grid_view grid;
  /* CPU twin only (the kernel's launches are bounded by their move count):
   * no further move starts once *stop is set or jl_time_now() reaches
   * deadline (> 0). Timed runs only; runs by rounds leave both unset. */
  double deadline;
  const volatile sig_atomic_t *stop;
} jl_block_params;

/* A batch of candidates, structure of arrays, candidate-major (cap slots
 * each). Orientation quaternions are (w, x, y, z). */
typedef struct jl_block_batch {
  int count, cap;
  int *n;                  /* blocks in each candidate */
  double *cx, *cy, *cz, *qw, *qx, *qy, *qz;
  double *temp;            /* annealing temperature per candidate (host sets) */
  double *energy;          /* -n + penalty * summed depth of the current state */
  double *worst;           /* deepest penetration of the current state */
  uint64_t *moves;         /* moves made, accumulated (the random stream's counter) */
  uint64_t *steps;         /* relaxation steps, accumulated */
  uint64_t *accepted;      /* accepted moves, accumulated */
  uint64_t *kind_moves, *kind_accepted; /* JL_BMOVE_COUNT per candidate: moves made and
                              accepted by kind, accumulated (the leader counts) */
  int *best_n;             /* most blocks of a state legal by the samples */
  double *bx, *by, *bz, *bqw, *bqx, *bqy, *bqz; /* that state */
} jl_block_batch;

#define JL_BR_REDUCE_SLOTS 32
/* Doubles of workspace per candidate: state (7), increments (6), backup
 * (7), per-block depth and active flag (2) per block slot, and the
 * reduction slots. */
#define JL_BR_WS_DOUBLES(cap) (22 * (size_t)(cap) + JL_BR_REDUCE_SLOTS)

#ifdef __CUDACC__
#define JL_BR_FN static __device__ __forceinline__
#define JL_BFOR(i, n) for (int i = (int)threadIdx.x; i < (n); i += (int)blockDim.x)
#define JL_BSYNC() __syncthreads()
#define JL_BLEADER (threadIdx.x == 0)
#define JL_LDG(p) __ldg(p)
#elif defined(JL_BR_EMULATE)
/* Tests only (tests/test_block_emu.c): the kernel's execution model on CPU
 * threads, one pthread per CUDA thread, a barrier for __syncthreads. */
#include <pthread.h>
extern _Thread_local int jl_emu_tid;
extern int jl_emu_threads;
extern pthread_barrier_t jl_emu_barrier;
#define JL_BR_FN static inline
#define JL_BFOR(i, n) for (int i = jl_emu_tid; i < (n); i += jl_emu_threads)
#define JL_BSYNC() ((void)pthread_barrier_wait(&jl_emu_barrier))
#define JL_BLEADER (jl_emu_tid == 0)
#define JL_LDG(p) (*(p))
#else
#include "stop_flag.h"
#include "timer.h"
#define JL_BR_FN static inline
#define JL_BFOR(i, n) for (int i = 0; i < (n); ++i)
#define JL_BSYNC() ((void)0)
#define JL_BLEADER 1
#define JL_LDG(p) (*(p))
#endif

/* ---- geometry and impulses (plain functions, unit-tested on the host) ---- */

/* Seed eq. 5.5 with half edges h (the factor 1/3 belongs to half edges;
 * with full edges it is 1/12): principal moments of a box of mass m. */
JL_HD static inline void jl_block_inertia(const double h[3], double m, double I[3]) {
  I[0] = m / 3.0 * (h[1] * h[1] + h[2] * h[2]);
  I[1] = m / 3.0 * (h[0] * h[0] + h[2] * h[2]);
  I[2] = m / 3.0 * (h[0] * h[0] + h[1] * h[1]);
}

/* I(q)^-1 v = DCM(q) I0^-1 DCM(q)^T v (seed eq. 5.6), with the axes the
 * columns of DCM(q). */
JL_HD static inline jl_vec3 jl_inv_inertia_apply(const jl_vec3 ax[3], const double inv_i[3],
                                                 jl_vec3 v) {
  jl_vec3 r = jl_v3_scale(ax[0], inv_i[0] * jl_v3_dot(ax[0], v));
  r = jl_v3_add(r, jl_v3_scale(ax[1], inv_i[1] * jl_v3_dot(ax[1], v)));
  return jl_v3_add(r, jl_v3_scale(ax[2], inv_i[2] * jl_v3_dot(ax[2], v)));
}

/* Box (centre c, axes ax, half edges h) against point P (seed 5.2.2): the
 * depth min_i (h_i - |d_i^T (P - c)|) (eq. 5.23, read with half edges) and
 * the face normal of that axis pointing from the centre towards P. Returns
 * the depth; > 0 means the point is inside. Ties take the lowest axis. */
JL_HD static inline double jl_box_point_depth(jl_vec3 c, const jl_vec3 ax[3], const double h[3],
                                              jl_vec3 P, jl_vec3 *n) {
  jl_vec3 d = jl_v3_sub(P, c);
  double best = INFINITY;
  int k = 0;
  double sk = 0.0;
  for (int i = 0; i < 3; ++i) {
    double s = jl_v3_dot(ax[i], d);
    double dep = h[i] - fabs(s);
    if (dep < best) { best = dep; k = i; sk = s; }
  }
  *n = sk >= 0.0 ? ax[k] : jl_v3_scale(ax[k], -1.0);
  return best;
}

/* A contact between two boxes: depth along n (from A to B), the contact
 * centre z, and which case produced it. */
enum { JL_CONTACT_FACE_A = 0, JL_CONTACT_FACE_B = 1, JL_CONTACT_EDGE = 2 };
typedef struct jl_box_contact {
  double depth;
  jl_vec3 n, z;
  int kind;
  int axis_a, axis_b;      /* the face axis (or the two edge axes) */
} jl_box_contact;

/* An edge axis wins over the best face axis only when clearly shallower:
 * nearly parallel faces (the common case of neighbouring blocks) then give
 * a face contact, whose centre does not twist aligned blocks. */
#define JL_EDGE_BIAS 0.95
/* Cross products shorter than this come from (nearly) parallel edges and
 * are no separating axis candidates (their face axes cover them). */
#define JL_EDGE_MIN_LEN 1e-6

/* Contact centre for a face contact (seed 5.2.3.2, cases 1 and 2): the
 * vertices of the other box O past the face plane of F (outward normal m),
 * each clamped into F's face rectangle, averaged, and set halfway into the
 * overlap. For one vertex that is the seed's point (its eq. 5.30 prints
 * z = p + d n; the text says half the depth, as used here); for two
 * aligned faces it is the centre of their common rectangle, so overlapping
 * aligned blocks are pushed apart without a twist. */
JL_HD static inline jl_vec3 jl_face_contact_centre(jl_vec3 cf, const jl_vec3 F[3], const double hf[3],
                                                   int k, jl_vec3 m, jl_vec3 co, const jl_vec3 O[3],
                                                   const double ho[3], double depth) {
  double u[3] = {0.0, 0.0, 0.0}, deep_u[3] = {0.0, 0.0, 0.0};
  int cnt = 0;
  double deep_proj = INFINITY;
  for (int v = 0; v < 8; ++v) {
    jl_vec3 p = co;
    for (int j = 0; j < 3; ++j)
      p = jl_v3_add(p, jl_v3_scale(O[j], (v >> j & 1) ? ho[j] : -ho[j]));
    jl_vec3 rel = jl_v3_sub(p, cf);
    double proj = jl_v3_dot(m, rel);
    double cu[3];
    for (int j = 0; j < 3; ++j) cu[j] = fmin(fmax(jl_v3_dot(rel, F[j]), -hf[j]), hf[j]);
    if (proj < hf[k]) {
      for (int j = 0; j < 3; ++j) u[j] += cu[j];
      cnt++;
    }
    if (proj < deep_proj) {
      deep_proj = proj;
      for (int j = 0; j < 3; ++j) deep_u[j] = cu[j];
    }
  }
  double sgn = jl_v3_dot(m, F[k]) >= 0.0 ? 1.0 : -1.0;
  jl_vec3 z = cf;
  for (int j = 0; j < 3; ++j) {
    double a = j == k ? sgn * (hf[k] - 0.5 * depth) : cnt > 0 ? u[j] / cnt : deep_u[j];
    z = jl_v3_add(z, jl_v3_scale(F[j], a));
  }
  return z;
}

/* Contact centre for an edge/edge contact (case 3): the edge of A along
 * A_i outermost along n, the edge of B along B_j innermost, and the middle
 * of the shortest segment between them (parameters clamped to the edges). */
JL_HD static inline jl_vec3 jl_edge_contact_centre(jl_vec3 ca, const jl_vec3 A[3], const double ha[3],
                                                   int i, jl_vec3 cb, const jl_vec3 B[3],
                                                   const double hb[3], int j, jl_vec3 n) {
  jl_vec3 pa = ca, pb = cb;
  for (int k = 0; k < 3; ++k) {
    if (k != i) pa = jl_v3_add(pa, jl_v3_scale(A[k], jl_v3_dot(n, A[k]) >= 0.0 ? ha[k] : -ha[k]));
    if (k != j) pb = jl_v3_add(pb, jl_v3_scale(B[k], jl_v3_dot(n, B[k]) >= 0.0 ? -hb[k] : hb[k]));
  }
  jl_vec3 u = A[i], v = B[j], w0 = jl_v3_sub(pa, pb);
  double b = jl_v3_dot(u, v), d = jl_v3_dot(u, w0), e = jl_v3_dot(v, w0);
  double den = 1.0 - b * b;
  double s = 0.0, t = 0.0;
  if (den > 1e-12) {
    s = (b * e - d) / den;
    t = (e - b * d) / den;
  }
  s = fmin(fmax(s, -ha[i]), ha[i]);
  t = fmin(fmax(t, -hb[j]), hb[j]);
  jl_vec3 qa = jl_v3_add(pa, jl_v3_scale(u, s)), qb = jl_v3_add(pb, jl_v3_scale(v, t));
  return jl_v3_scale(jl_v3_add(qa, qb), 0.5);
}

/* The 15-axis separating-axis test (seed 5.2.3.1, [GOT1996]) with
 * penetration depth per axis: r_A + r_B - |L^T (c_B - c_A)| over |L| (the
 * seed's eq. 5.27-5.28 subtract the centre distance twice; this is the
 * overlap of the two projected intervals). Returns 1 and fills *out when
 * the boxes overlap, 0 when an axis separates them (depth <= 0). */
JL_HD static inline int jl_box_box_contact(jl_vec3 ca, const jl_vec3 A[3], const double ha[3],
                                           jl_vec3 cb, const jl_vec3 B[3], const double hb[3],
                                           jl_box_contact *out) {
  /* in A's frame (seed 5.2.3.1: "rotating and translating the coordinate
   * system so that box A is located at the origin"): R = A^T B, T = A^T t */
  jl_vec3 t = jl_v3_sub(cb, ca);
  double R[3][3], AR[3][3], T[3];
  for (int i = 0; i < 3; ++i) {
    T[i] = jl_v3_dot(t, A[i]);
    for (int j = 0; j < 3; ++j) {
      R[i][j] = jl_v3_dot(A[i], B[j]);
      AR[i][j] = fabs(R[i][j]);
    }
  }
  double best = INFINITY;
  int kind = 0, ai = 0, bj = 0;
  for (int i = 0; i < 3; ++i) {
    double pen = ha[i] + (hb[0] * AR[i][0] + hb[1] * AR[i][1] + hb[2] * AR[i][2]) - fabs(T[i]);
    if (pen <= 0.0) return 0;
    if (pen < best) { best = pen; kind = JL_CONTACT_FACE_A; ai = i; }
  }
  for (int j = 0; j < 3; ++j) {
    double ra = ha[0] * AR[0][j] + ha[1] * AR[1][j] + ha[2] * AR[2][j];
    double tb = T[0] * R[0][j] + T[1] * R[1][j] + T[2] * R[2][j];
    double pen = ra + hb[j] - fabs(tb);
    if (pen <= 0.0) return 0;
    if (pen < best) { best = pen; kind = JL_CONTACT_FACE_B; bj = j; }
  }
  double face_best = best;
  for (int i = 0; i < 3; ++i) {
    int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      /* |A_i x B_j| = sqrt(1 - R_ij^2); its projections from R alone */
      double len2 = 1.0 - R[i][j] * R[i][j];
      if (len2 < JL_EDGE_MIN_LEN * JL_EDGE_MIN_LEN) continue;
      double len = sqrt(len2);
      double ra = ha[i1] * AR[i2][j] + ha[i2] * AR[i1][j];
      double rb = hb[j1] * AR[i][j2] + hb[j2] * AR[i][j1];
      double dist = fabs(T[i2] * R[i1][j] - T[i1] * R[i2][j]);
      double pen = (ra + rb - dist) / len;
      if (pen <= 0.0) return 0;
      if (pen < best && pen < JL_EDGE_BIAS * face_best) {
        best = pen; kind = JL_CONTACT_EDGE; ai = i; bj = j;
      }
    }
  }
  jl_vec3 bestL = kind == JL_CONTACT_FACE_A ? A[ai]
                  : kind == JL_CONTACT_FACE_B ? B[bj]
                                              : jl_v3_normalize(jl_v3_cross(A[ai], B[bj]));
  jl_vec3 n = jl_v3_dot(bestL, t) >= 0.0 ? bestL : jl_v3_scale(bestL, -1.0);
  out->depth = best;
  out->n = n;
  out->kind = kind;
  out->axis_a = ai;
  out->axis_b = bj;
  if (kind == JL_CONTACT_FACE_A)
    out->z = jl_face_contact_centre(ca, A, ha, ai, n, cb, B, hb, best);
  else if (kind == JL_CONTACT_FACE_B)
    out->z = jl_face_contact_centre(cb, B, hb, bj, jl_v3_scale(n, -1.0), ca, A, ha, best);
  else
    out->z = jl_edge_contact_centre(ca, A, ha, ai, cb, B, hb, bj, n);
  return 1;
}

/* Impulse exchange (seed eq. 5.16-5.21): mu = 1/m_A + 1/m_B + (r_A x n)^T
 * I_A^-1 (r_A x n) + (r_B x n)^T I_B^-1 (r_B x n); A moves by -d/(mu m_A) n
 * and turns by -d/mu I_A^-1 (r_A x n), B the opposite way. A body with
 * inv_m = 0 and inv_i = 0 is fixed (eq. 5.24-5.26 for a point). Returns mu. */
JL_HD static inline double jl_impulse_exchange(double d, jl_vec3 n, jl_vec3 z, jl_vec3 ca,
                                               const jl_vec3 A[3], double inv_ma,
                                               const double inv_ia[3], jl_vec3 cb,
                                               const jl_vec3 B[3], double inv_mb,
                                               const double inv_ib[3], jl_vec3 *dca,
                                               jl_vec3 *dpa, jl_vec3 *dcb, jl_vec3 *dpb) {
  jl_vec3 ua = jl_v3_cross(jl_v3_sub(z, ca), n), ub = jl_v3_cross(jl_v3_sub(z, cb), n);
  jl_vec3 wa = jl_inv_inertia_apply(A, inv_ia, ua), wb = jl_inv_inertia_apply(B, inv_ib, ub);
  double mu = inv_ma + inv_mb + jl_v3_dot(ua, wa) + jl_v3_dot(ub, wb);
  double p = d / mu;
  *dca = jl_v3_scale(n, -p * inv_ma);
  *dpa = jl_v3_scale(wa, -p);
  *dcb = jl_v3_scale(n, p * inv_mb);
  *dpb = jl_v3_scale(wb, p);
  return mu;
}

/* q + 1/2 Omega(dphi) q, renormalised (seed eq. 5.4). */
JL_HD static inline jl_quat jl_quat_turn(jl_quat q, jl_vec3 dphi) {
  jl_quat o = {0.0, dphi.x, dphi.y, dphi.z};
  jl_quat dq = jl_quat_mul(o, q);
  jl_quat r = {q.w + 0.5 * dq.w, q.x + 0.5 * dq.x, q.y + 0.5 * dq.y, q.z + 0.5 * dq.z};
  return jl_quat_normalize(r);
}

/* The 6 axis-aligned orientations of a box up to its own symmetries: which
 * block edge lies along x, y and z. */
#define JL_SQRT_HALF 0.70710678118654752440
JL_HD static inline jl_quat jl_axis_orientation(int k) {
  jl_quat q = {1.0, 0.0, 0.0, 0.0};
  switch (k) {
  case 1: q.w = JL_SQRT_HALF; q.x = JL_SQRT_HALF; break;
  case 2: q.w = JL_SQRT_HALF; q.z = JL_SQRT_HALF; break;
  case 3: q.w = JL_SQRT_HALF; q.y = JL_SQRT_HALF; break;
  case 4: q.w = 0.5; q.x = 0.5; q.y = 0.5; q.z = 0.5; break;
  case 5: q.w = 0.5; q.x = -0.5; q.y = -0.5; q.z = -0.5; break;
  default: break;
  }
  return q;
}

/* Grid cell along one axis, clamped (the same arithmetic as the grid build). */
JL_HD static inline int jl_grid_axis_cell(double v, double o, double cell, int dim) {
  double f = floor((v - o) / cell);
  if (!(f >= 0.0)) return 0;  /* also NaN */
  if (f > (double)(dim - 1)) return dim - 1;
  return (int)f;
}

/* 1 when the point lies in a grid cell marked inside. */
JL_BR_FN int jl_grid_point_inside(const jl_grid_view *g, jl_vec3 c) {
  double f[3] = {floor((c.x - g->origin[0]) / g->cell), floor((c.y - g->origin[1]) / g->cell),
                 floor((c.z - g->origin[2]) / g->cell)};
  for (int d = 0; d < 3; ++d)
    if (!(f[d] >= 0.0 && f[d] < (double)g->dim[d])) return 0;
  int cidx = (int)f[0] + g->dim[0] * ((int)f[1] + g->dim[1] * (int)f[2]);
  return JL_LDG(g->inside + cidx) != 0;
}

/* ---- the per-candidate workspace and its steps ---- */

/* Cells are skipped only when clearly away from the block (mm), so
 * rounding in the box bound never hides a point the exact test would take. */
#define JL_CELL_CULL_MARGIN 1e-6
/* Random points tried for an insertion before taking a covered one. */
#define JL_INSERT_TRIES 16

typedef struct jl_br_ws {
  double *x, *y, *z, *qw, *qx, *qy, *qz;   /* current state */
  double *dx, *dy, *dz, *ex, *ey, *ez;     /* increments: translation, rotation */
  double *sx, *sy, *sz, *sqw, *sqx, *sqy, *sqz; /* backup before a move */
  double *dep;                             /* per block: deepest contact this step */
  double *act;                             /* per block: 1 when it had a contact last step */
  double *red;
  int n, n_old, cand;
  uint64_t steps, accepted, moves;
  double worst, energy;
  int accept;
  int kind, pick;                          /* the move and its block */
  double mv[8];                            /* the move's random numbers */
  double dir[3];                           /* a push's shared step */
  int push_axis;                           /* a push's axis (its row's direction) */
} jl_br_ws;

JL_HD static inline void jl_br_ws_bind(jl_br_ws *w, double *mem, int cap) {
  double **arr[22] = {&w->x, &w->y, &w->z, &w->qw, &w->qx, &w->qy, &w->qz,
                      &w->dx, &w->dy, &w->dz, &w->ex, &w->ey, &w->ez,
                      &w->sx, &w->sy, &w->sz, &w->sqw, &w->sqx, &w->sqy, &w->sqz, &w->dep,
                      &w->act};
  for (int k = 0; k < 22; ++k) *arr[k] = mem + (size_t)k * (size_t)cap;
  w->red = mem + 22 * (size_t)cap;
}

/* Stateless random numbers: Philox of (draw, lane, candidate, move) under
 * the seed, so any thread can draw for any block in any order. */
JL_HD static inline void jl_br_rand4(uint64_t seed, int cand, uint64_t move, uint32_t lane,
                                     uint32_t draw, uint32_t out[4]) {
  uint32_t ctr[4] = {draw, lane, (uint32_t)cand, (uint32_t)move};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32) ^ (uint32_t)(move >> 32)};
  jl_philox4x32_10(ctr, key, out);
}
#define JL_BR_LANE_LEADER 0xFFFFFFFFu

/* Max over the thread block of each thread's v (a no-op on the CPU, where
 * the loop has covered every block already). */
JL_BR_FN double jl_br_block_max(double v, double *red) {
#ifdef __CUDA_ARCH__
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = red[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) v = fmax(v, red[w]);
  return v;
#elif defined(JL_BR_EMULATE)
  JL_BSYNC();
  red[jl_emu_tid] = v;
  JL_BSYNC();
  v = red[0];
  for (int t = 1; t < jl_emu_threads; ++t) v = fmax(v, red[t]);
  return v;
#else
  (void)red;
  return v;
#endif
}

JL_HD static inline jl_quat jl_br_quat(const jl_br_ws *w, int i) {
  jl_quat q = {w->qw[i], w->qx[i], w->qy[i], w->qz[i]};
  return q;
}

/* All contacts of block i in the current state: its deepest sample point
 * (the only one that acts, seed 5.3.4) and every overlapping partner
 * (bounding-sphere sieve, then the SAT). Each pair is evaluated with the
 * lower index as A, so both partners see the same contact. Writes i's
 * summed increments and returns its deepest penetration. */
JL_BR_FN double jl_br_block_contacts(jl_br_ws *w, const jl_block_params *p, int i) {
  const jl_grid_view *g = &p->grid;
  jl_vec3 c = jl_v3(w->x[i], w->y[i], w->z[i]);
  jl_vec3 ax[3];
  jl_quat_to_axes(jl_br_quat(w, i), ax);
  jl_vec3 dc = jl_v3(0.0, 0.0, 0.0), dp = jl_v3(0.0, 0.0, 0.0);
  double worst = 0.0;
  /* box/point: the grid cells under the block's AABB */
  const double hp[3] = {p->h[0] + p->point_skin, p->h[1] + p->point_skin, p->h[2] + p->point_skin};
  double e[3];
  e[0] = hp[0] * fabs(ax[0].x) + hp[1] * fabs(ax[1].x) + hp[2] * fabs(ax[2].x);
  e[1] = hp[0] * fabs(ax[0].y) + hp[1] * fabs(ax[1].y) + hp[2] * fabs(ax[2].y);
  e[2] = hp[0] * fabs(ax[0].z) + hp[1] * fabs(ax[1].z) + hp[2] * fabs(ax[2].z);
  int lo[3], hi[3];
  double cc[3] = {c.x, c.y, c.z};
  for (int d = 0; d < 3; ++d) {
    lo[d] = jl_grid_axis_cell(cc[d] - e[d], g->origin[d], g->cell, g->dim[d]);
    hi[d] = jl_grid_axis_cell(cc[d] + e[d], g->origin[d], g->cell, g->dim[d]);
  }
  double pdeep = 0.0;
  jl_vec3 pn = ax[0], pz = c;
  for (int iz = lo[2]; iz <= hi[2]; ++iz)
    for (int iy = lo[1]; iy <= hi[1]; ++iy) {
      int row = g->dim[0] * (iy + g->dim[1] * iz);
      for (int ix = lo[0]; ix <= hi[0]; ++ix) {
        int cell = ix + row;
        int s0 = JL_LDG(g->cell_start + cell), cnt = JL_LDG(g->cell_count + cell);
        if (cnt == 0) continue;
        /* a cell whose samples' box lies outside one of the block's slabs
         * (deeper than the best so far) holds no point worth testing:
         * samples of a wall the block keeps off are skipped in one test */
        const double *clo = g->cell_lo + 3 * cell, *chi = g->cell_hi + 3 * cell;
        jl_vec3 bl = jl_v3(JL_LDG(clo), JL_LDG(clo + 1), JL_LDG(clo + 2));
        jl_vec3 bh = jl_v3(JL_LDG(chi), JL_LDG(chi + 1), JL_LDG(chi + 2));
        jl_vec3 bc = jl_v3_sub(jl_v3_scale(jl_v3_add(bl, bh), 0.5), c);
        jl_vec3 be = jl_v3_scale(jl_v3_sub(bh, bl), 0.5);
        int away = 0;
        for (int a = 0; a < 3 && !away; ++a) {
          double ext = fabs(ax[a].x) * be.x + fabs(ax[a].y) * be.y + fabs(ax[a].z) * be.z;
          away = fabs(jl_v3_dot(ax[a], bc)) - ext - hp[a] > JL_CELL_CULL_MARGIN - pdeep;
        }
        if (away) continue;
        for (int k = s0; k < s0 + cnt; ++k) {
          jl_vec3 P = jl_v3(JL_LDG(g->px + k), JL_LDG(g->py + k), JL_LDG(g->pz + k));
          /* the cheap rejections of jl_box_point_depth first */
          jl_vec3 d = jl_v3_sub(P, c);
          if (fabs(jl_v3_dot(ax[0], d)) - hp[0] >= -pdeep) continue;
          if (fabs(jl_v3_dot(ax[1], d)) - hp[1] >= -pdeep) continue;
          if (fabs(jl_v3_dot(ax[2], d)) - hp[2] >= -pdeep) continue;
          jl_vec3 n;
          double dep = jl_box_point_depth(c, ax, hp, P, &n);
          if (dep > pdeep) { pdeep = dep; pn = n; pz = P; }
        }
      }
    }
  if (pdeep > 0.0) {
    const double zero3[3] = {0.0, 0.0, 0.0};
    jl_vec3 dcb, dpb;
    jl_impulse_exchange(p->gain * pdeep, pn, pz, c, ax, p->inv_mass, p->inv_inertia, pz, ax, 0.0,
                        zero3, &dc, &dp, &dcb, &dpb);
    worst = pdeep;
  }
  /* box/box */
  double r2 = 4.0 * p->radius * p->radius;
  for (int j = 0; j < w->n; ++j) {
    if (j == i) continue;
    jl_vec3 cj = jl_v3(w->x[j], w->y[j], w->z[j]);
    jl_vec3 t = jl_v3_sub(cj, c);
    if (jl_v3_dot(t, t) >= r2) continue;
    jl_vec3 bx[3];
    jl_quat_to_axes(jl_br_quat(w, j), bx);
    jl_box_contact ct;
    int hit = i < j ? jl_box_box_contact(c, ax, p->h, cj, bx, p->h, &ct)
                    : jl_box_box_contact(cj, bx, p->h, c, ax, p->h, &ct);
    if (!hit) continue;
    jl_vec3 dca, dpa, dcb, dpb;
    if (i < j) {
      jl_impulse_exchange(p->gain * ct.depth, ct.n, ct.z, c, ax, p->inv_mass, p->inv_inertia, cj,
                          bx, p->inv_mass, p->inv_inertia, &dca, &dpa, &dcb, &dpb);
      dc = jl_v3_add(dc, dca);
      dp = jl_v3_add(dp, dpa);
    } else {
      jl_impulse_exchange(p->gain * ct.depth, ct.n, ct.z, cj, bx, p->inv_mass, p->inv_inertia, c,
                          ax, p->inv_mass, p->inv_inertia, &dca, &dpa, &dcb, &dpb);
      dc = jl_v3_add(dc, dcb);
      dp = jl_v3_add(dp, dpb);
    }
    worst = fmax(worst, ct.depth);
  }
  w->dx[i] = dc.x; w->dy[i] = dc.y; w->dz[i] = dc.z;
  w->ex[i] = dp.x; w->ey[i] = dp.y; w->ez[i] = dp.z;
  return worst;
}

/* 1 when a block that had a contact last step lies within the sieve
 * distance of block i: only then can i have gained a contact. */
JL_BR_FN int jl_br_near_active(const jl_br_ws *w, const jl_block_params *p, int i) {
  double r2 = 4.0 * p->radius * p->radius;
  for (int j = 0; j < w->n; ++j) {
    if (w->act[j] == 0.0) continue;
    double dx = w->x[j] - w->x[i], dy = w->y[j] - w->y[i], dz = w->z[j] - w->z[i];
    if (dx * dx + dy * dy + dz * dz < r2) return 1;
  }
  return 0;
}

/* Contact relaxation (seed 5.2-5.4): every block takes the increments of
 * its deepest point and of all its overlapping partners, computed from one
 * state and applied together. Stops when every depth is <= tol (returns 1),
 * or after max_steps (0); exact > 0 runs exactly that many steps. Leaves
 * the deepest remaining penetration in w->worst.
 * The first step looks at every block; later steps only at blocks that had
 * a contact or lie near one that had (the others have not moved and nothing
 * that moved came near them, so they have no contact): the same result,
 * with the point and separating-axis tests only where contacts are. */
#if !defined(__CUDACC__) && !defined(JL_BR_EMULATE)
/* CPU twin: blocks between polls of p->stop and p->deadline. A step costs
 * n^2 pair tests, seconds for tens of thousands of blocks, so the twin polls
 * within steps; a relaxation cut short reports an infinite depth (never
 * legal) and the launch ends. */
#define JL_BR_POLL 16
static inline int jl_br_cpu_stopped(const jl_block_params *p) {
  return jl_stop_requested(p->stop) || (p->deadline > 0.0 && jl_time_now() >= p->deadline);
}
#endif

JL_BR_FN int jl_br_relax(jl_br_ws *w, const jl_block_params *p, int max_steps, int exact) {
  int limit = exact > 0 ? exact : max_steps;
  double worst = 0.0;
  for (int s = 0;; ++s) {
    double m = 0.0;
#if !defined(__CUDACC__) && !defined(JL_BR_EMULATE)
    int cut = 0;
#endif
    JL_BFOR(i, w->n) {
#if !defined(__CUDACC__) && !defined(JL_BR_EMULATE)
      if (i % JL_BR_POLL == 0 && jl_br_cpu_stopped(p)) {
        cut = 1;
        break;
      }
#endif
      double d = 0.0;
      if (s == 0 || w->act[i] != 0.0 || jl_br_near_active(w, p, i))
        d = jl_br_block_contacts(w, p, i);
      w->dep[i] = d;
      m = fmax(m, d);
    }
    worst = jl_br_block_max(m, w->red);
#if !defined(__CUDACC__) && !defined(JL_BR_EMULATE)
    if (cut) {
      worst = INFINITY;
      break;
    }
#endif
    if ((exact <= 0 && worst <= p->tol) || s >= limit) break;
    if (JL_BLEADER) w->steps++;
    JL_BFOR(i, w->n) {
      int hit = w->dep[i] > 0.0;
      w->act[i] = hit ? 1.0 : 0.0;
      if (!hit) continue;
      w->x[i] += w->dx[i];
      w->y[i] += w->dy[i];
      w->z[i] += w->dz[i];
      jl_quat q = jl_quat_turn(jl_br_quat(w, i), jl_v3(w->ex[i], w->ey[i], w->ez[i]));
      w->qw[i] = q.w; w->qx[i] = q.x; w->qy[i] = q.y; w->qz[i] = q.z;
    }
    JL_BSYNC();
  }
  /* every thread has read the reduction before anyone reuses it */
  JL_BSYNC();
  if (JL_BLEADER) w->worst = worst;
  JL_BSYNC();
  return worst <= p->tol;
}

/* Energy of the current state: -count + penalty * the summed depth of
 * every block's deepest contact left by the relaxation (one thread sums
 * them in index order: the same bits on both paths), or +inf when a block's
 * centre has left the trunk (the samples cannot tell the outside from the
 * inside, the cell mask can) or the relaxation was cut short. With the
 * deepest contact alone, a state with one deep overlap carried any number
 * of others for free: chains in the sedan held 386 blocks (the best legal
 * 385) with 964 overlaps summing 2.8 m, none of them close to legal. */
JL_BR_FN double jl_br_energy(jl_br_ws *w, const jl_block_params *p) {
  double out = 0.0;
  JL_BFOR(i, w->n) {
    if (!jl_grid_point_inside(&p->grid, jl_v3(w->x[i], w->y[i], w->z[i]))) out = 1.0;
  }
  out = jl_br_block_max(out, w->red);
  if (JL_BLEADER) {
    double depth = 0.0;
    if (!(w->worst <= p->tol)) {
      for (int i = 0; i < w->n; ++i)
        if (w->dep[i] > p->tol) depth += w->dep[i];
      if (!isfinite(w->worst)) depth = INFINITY;
    }
    w->energy = out > 0.0 ? INFINITY : -(double)w->n + p->penalty * depth;
  }
  JL_BSYNC();
  double e = w->energy;
  JL_BSYNC();  /* every thread has read n, worst and energy before the leader changes them */
  return e;
}

JL_HD static inline double jl_br_u01(const uint32_t r[4], int k) {
  return jl_u01_from_u32(r[2 * k], r[2 * k + 1]);
}

/* The leader's choices for one move: kind, block, and its numbers. */
JL_BR_FN void jl_br_choose_move(jl_br_ws *w, const jl_block_params *p, uint64_t seed) {
  uint32_t r[4];
  jl_br_rand4(seed, w->cand, w->moves, JL_BR_LANE_LEADER, 0, r);
  double u = jl_br_u01(r, 0);
  int kind;
  /* the sums grow by the new moves' shares: with those 0 every comparison
   * is the one made before they existed */
  double cum = p->p_insert + p->p_delete + p->p_shake;
  if (u < p->p_insert) kind = JL_BMOVE_INSERT;
  else if (u < p->p_insert + p->p_delete) kind = JL_BMOVE_DELETE;
  else if (u < cum) kind = JL_BMOVE_SHAKE;
  else if (u < cum + p->p_turn) kind = JL_BMOVE_TURN;
  else if (u < cum + p->p_turn + p->p_settle) kind = JL_BMOVE_SETTLE;
  else if (u < cum + p->p_turn + p->p_settle + p->p_push) kind = JL_BMOVE_PUSH;
  else kind = JL_BMOVE_SHIFT;
  if (w->n == 0) kind = JL_BMOVE_INSERT;
  w->kind = kind;
  w->pick = w->n > 0 ? (int)jl_uint_below(r[2], (uint32_t)w->n) : 0;
  for (int k = 0; k < 4; ++k) {
    uint32_t s[4];
    jl_br_rand4(seed, w->cand, w->moves, JL_BR_LANE_LEADER, 1u + (uint32_t)k, s);
    w->mv[2 * k] = jl_br_u01(s, 0);
    w->mv[2 * k + 1] = jl_br_u01(s, 1);
  }
}

/* A uniformly random orientation from the leader's draws (rejection in
 * the 4-cube, no trigonometry, so both paths agree). */
JL_BR_FN jl_quat jl_br_random_quat(const jl_br_ws *w, uint64_t seed) {
  for (uint32_t k = 0; k < 64; ++k) {
    uint32_t a[4], b[4];
    jl_br_rand4(seed, w->cand, w->moves, JL_BR_LANE_LEADER, 16u + 2u * k, a);
    jl_br_rand4(seed, w->cand, w->moves, JL_BR_LANE_LEADER, 17u + 2u * k, b);
    jl_quat q = {2.0 * jl_br_u01(a, 0) - 1.0, 2.0 * jl_br_u01(a, 1) - 1.0,
                 2.0 * jl_br_u01(b, 0) - 1.0, 2.0 * jl_br_u01(b, 1) - 1.0};
    double l2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
    if (l2 > 1e-4 && l2 <= 1.0) return jl_quat_normalize(q);
  }
  return jl_quat_identity();
}

/* A small turn: q + 1/2 (0, a) q with a uniform in [-angle, angle]^3. */
JL_HD static inline jl_quat jl_br_jitter_quat(jl_quat q, double angle, double u0, double u1,
                                              double u2) {
  jl_vec3 a = jl_v3(angle * (2.0 * u0 - 1.0), angle * (2.0 * u1 - 1.0), angle * (2.0 * u2 - 1.0));
  return jl_quat_turn(q, a);
}

JL_BR_FN void jl_br_set(jl_br_ws *w, int i, jl_vec3 c, jl_quat q) {
  w->x[i] = c.x; w->y[i] = c.y; w->z[i] = c.z;
  w->qw[i] = q.w; w->qx[i] = q.x; w->qy[i] = q.y; w->qz[i] = q.z;
}

/* The surface sample nearest to c within reach, searched in the cells of
 * the box c +- reach. zband > 0: only samples within zband of c in z, with
 * the distance taken in x-y (the nearest wall at the block's height).
 * Returns 0 when there is none. Ties keep the first in cell order. */
JL_BR_FN int jl_br_nearest_sample(const jl_grid_view *g, jl_vec3 c, double reach, double zband,
                                  jl_vec3 *out) {
  int lo[3], hi[3];
  double cc[3] = {c.x, c.y, c.z};
  for (int d = 0; d < 3; ++d) {
    double r = d == 2 && zband > 0.0 ? zband : reach;
    lo[d] = jl_grid_axis_cell(cc[d] - r, g->origin[d], g->cell, g->dim[d]);
    hi[d] = jl_grid_axis_cell(cc[d] + r, g->origin[d], g->cell, g->dim[d]);
  }
  double best = reach * reach;
  int found = 0;
  for (int iz = lo[2]; iz <= hi[2]; ++iz)
    for (int iy = lo[1]; iy <= hi[1]; ++iy)
      for (int ix = lo[0]; ix <= hi[0]; ++ix) {
        int cell = ix + g->dim[0] * (iy + g->dim[1] * iz);
        int s0 = JL_LDG(g->cell_start + cell), cnt = JL_LDG(g->cell_count + cell);
        for (int k = s0; k < s0 + cnt; ++k) {
          jl_vec3 P = jl_v3(JL_LDG(g->px + k), JL_LDG(g->py + k), JL_LDG(g->pz + k));
          jl_vec3 d = jl_v3_sub(P, c);
          if (zband > 0.0) {
            if (fabs(d.z) > zband) continue;
            d.z = 0.0;
          }
          double d2 = jl_v3_dot(d, d);
          if (d2 < best) { best = d2; *out = P; found = 1; }
        }
      }
  return found;
}

/* Share of a cell around the nearest sample whose samples fix the face's
 * plane: small enough to stay on one face near an edge, large enough to
 * hold samples at the default spacing (a quarter of a cell). */
#define JL_FACE_PATCH 0.5
/* Below this (relative to the patch's area squared) three samples are
 * collinear and give no plane. */
#define JL_FACE_MIN_AREA 1e-6

/* The unit normal, pointing toward c, of the face through P0 (the sample
 * nearest to c): the plane of P0 and two samples within JL_FACE_PATCH
 * cells of it spanning the largest triangle (the samples of a flat face
 * are coplanar, so it is the face's own plane); c - P0 when the patch
 * holds no such triangle. */
JL_BR_FN jl_vec3 jl_br_face_normal(const jl_grid_view *g, jl_vec3 c, jl_vec3 P0) {
  double r = JL_FACE_PATCH * g->cell, r2 = r * r;
  int lo[3], hi[3];
  double pc[3] = {P0.x, P0.y, P0.z};
  for (int d = 0; d < 3; ++d) {
    lo[d] = jl_grid_axis_cell(pc[d] - r, g->origin[d], g->cell, g->dim[d]);
    hi[d] = jl_grid_axis_cell(pc[d] + r, g->origin[d], g->cell, g->dim[d]);
  }
  jl_vec3 e1 = jl_v3(0.0, 0.0, 0.0), nrm = jl_v3(0.0, 0.0, 0.0);
  double far = 0.0, area = 0.0;
  for (int pass = 0; pass < 2; ++pass)
    for (int iz = lo[2]; iz <= hi[2]; ++iz)
      for (int iy = lo[1]; iy <= hi[1]; ++iy)
        for (int ix = lo[0]; ix <= hi[0]; ++ix) {
          int cell = ix + g->dim[0] * (iy + g->dim[1] * iz);
          int s0 = JL_LDG(g->cell_start + cell), cnt = JL_LDG(g->cell_count + cell);
          for (int k = s0; k < s0 + cnt; ++k) {
            jl_vec3 d = jl_v3_sub(jl_v3(JL_LDG(g->px + k), JL_LDG(g->py + k), JL_LDG(g->pz + k)), P0);
            double d2 = jl_v3_dot(d, d);
            if (d2 > r2) continue;
            if (pass == 0) {
              if (d2 > far) { far = d2; e1 = d; }
            } else {
              jl_vec3 x = jl_v3_cross(e1, d);
              double a2 = jl_v3_dot(x, x);
              if (a2 > area) { area = a2; nrm = x; }
            }
          }
        }
  jl_vec3 t = jl_v3_sub(c, P0);
  if (!(area > JL_FACE_MIN_AREA * r2 * r2)) nrm = t;
  else if (jl_v3_dot(nrm, t) < 0.0) nrm = jl_v3_scale(nrm, -1.0);
  return jl_v3_normalize(nrm);
}

/* The smallest turn that lays a face of a block (orientation q) on a plane
 * of unit normal n: its axis most nearly along n, signed toward n, turned
 * onto n by the half-angle quaternion (1 + a.n, a x n) (no trigonometry,
 * so both paths agree). *axis: that axis, whose half edge then lies along n. */
JL_HD static inline jl_quat jl_br_turn_onto(jl_quat q, jl_vec3 n, int *axis) {
  jl_vec3 ax[3];
  jl_quat_to_axes(q, ax);
  int k = 0;
  double best = -1.0, sg = 1.0;
  for (int i = 0; i < 3; ++i) {
    double d = jl_v3_dot(ax[i], n);
    if (fabs(d) > best) { best = fabs(d); k = i; sg = d >= 0.0 ? 1.0 : -1.0; }
  }
  jl_vec3 a = jl_v3_scale(ax[k], sg), v = jl_v3_cross(a, n);
  jl_quat r = {1.0 + jl_v3_dot(a, n), v.x, v.y, v.z};
  *axis = k;
  return jl_quat_normalize(jl_quat_mul(jl_quat_normalize(r), q));
}

/* Cells walked from a point along axis a (direction sg) before leaving the
 * trunk's inside cells: how far its wall is that way, in cells. */
JL_BR_FN int jl_br_cells_to_wall(const jl_grid_view *g, jl_vec3 c, int a, double sg) {
  double v[3] = {c.x, c.y, c.z};
  int k = 0;
  for (; k < g->dim[a]; ++k) {
    v[a] += sg * g->cell;
    if (!jl_grid_point_inside(g, jl_v3(v[0], v[1], v[2]))) break;
  }
  return k;
}

/* Applies the chosen move to the state (the leader for one-block moves,
 * every thread for a shake). Returns with the state synced. */
JL_BR_FN void jl_br_apply_move(jl_br_ws *w, const jl_block_params *p, int cap, uint64_t seed) {
  const jl_grid_view *g = &p->grid;
  int kind = w->kind, i = w->pick;
  if (kind == JL_BMOVE_SHAKE) {
    /* from the backup: block i itself may already be moving on another thread */
    jl_vec3 ctr = jl_v3(w->sx[i], w->sy[i], w->sz[i]);
    double r2 = p->shake_radius * p->shake_radius;
    JL_BFOR(j, w->n) {
      jl_vec3 cj = jl_v3(w->x[j], w->y[j], w->z[j]);
      jl_vec3 t = jl_v3_sub(cj, ctr);
      if (jl_v3_dot(t, t) <= r2) {
        uint32_t a[4], b[4], c4[4];
        jl_br_rand4(seed, w->cand, w->moves, (uint32_t)j, 0, a);
        jl_br_rand4(seed, w->cand, w->moves, (uint32_t)j, 1, b);
        jl_br_rand4(seed, w->cand, w->moves, (uint32_t)j, 2, c4);
        double s = p->shake_step;
        cj = jl_v3_add(cj, jl_v3(s * (2.0 * jl_br_u01(a, 0) - 1.0), s * (2.0 * jl_br_u01(a, 1) - 1.0),
                                 s * (2.0 * jl_br_u01(b, 0) - 1.0)));
        jl_quat q = jl_br_jitter_quat(jl_br_quat(w, j), 0.5 * p->shift_angle, jl_br_u01(b, 1),
                                      jl_br_u01(c4, 0), jl_br_u01(c4, 1));
        jl_br_set(w, j, cj, q);
      }
    }
    JL_BSYNC();
    return;
  }
  if (kind == JL_BMOVE_SETTLE) {
    /* the blocks near block i step down and toward the wall nearest at
     * their height, each by the same random amounts */
    jl_vec3 ctr = jl_v3(w->sx[i], w->sy[i], w->sz[i]);
    double r2 = p->shake_radius * p->shake_radius;
    double down = p->settle_step * w->mv[6], side = p->settle_step * w->mv[7];
    double band = fmin(p->h[0], fmin(p->h[1], p->h[2]));
    JL_BFOR(j, w->n) {
      jl_vec3 cj = jl_v3(w->x[j], w->y[j], w->z[j]);
      jl_vec3 t = jl_v3_sub(cj, ctr);
      if (jl_v3_dot(t, t) <= r2) {
        jl_vec3 step = jl_v3(0.0, 0.0, -down), P = cj;
        if (jl_br_nearest_sample(g, cj, p->face_reach, band, &P)) {
          double hx = P.x - cj.x, hy = P.y - cj.y, len = sqrt(hx * hx + hy * hy);
          if (len > 0.0) step = jl_v3(side * hx / len, side * hy / len, -down);
        }
        jl_br_set(w, j, jl_v3_add(cj, step), jl_br_quat(w, j));
      }
    }
    JL_BSYNC();
    return;
  }
  if (kind == JL_BMOVE_PUSH) {
    /* block i's column (z) or row (x or y): the blocks whose centres lie
     * within half the smallest edge of its line, all moved by one step
     * toward the wall nearer to block i along the line */
    if (JL_BLEADER) {
      int a = w->mv[7] < 1.0 / 3.0 ? 2 : w->mv[7] < 2.0 / 3.0 ? 0 : 1;
      jl_vec3 ci = jl_v3(w->sx[i], w->sy[i], w->sz[i]);
      double sg = jl_br_cells_to_wall(g, ci, a, 1.0) < jl_br_cells_to_wall(g, ci, a, -1.0) ? 1.0 : -1.0;
      w->push_axis = a;
      w->dir[0] = w->dir[1] = w->dir[2] = 0.0;
      w->dir[a] = sg * p->push_step * w->mv[6];
    }
    JL_BSYNC();
    const int a = w->push_axis;
    const double line[3] = {w->sx[i], w->sy[i], w->sz[i]};
    const double tol = fmin(p->h[0], fmin(p->h[1], p->h[2]));
    JL_BFOR(j, w->n) {
      double cj[3] = {w->x[j], w->y[j], w->z[j]};
      int in = 1;
      for (int d = 0; d < 3; ++d)
        if (d != a && !(fabs(cj[d] - line[d]) <= tol)) in = 0;
      if (in) {
        w->x[j] = cj[0] + w->dir[0];
        w->y[j] = cj[1] + w->dir[1];
        w->z[j] = cj[2] + w->dir[2];
      }
    }
    JL_BSYNC();
    return;
  }
  if (JL_BLEADER) {
    if (kind == JL_BMOVE_TURN) {
      /* flush against the nearest face: turned onto its plane and slid
       * along its normal to touch it (a block that finds no face within
       * reach stays, and the relaxation alone decides) */
      jl_vec3 c = jl_v3(w->x[i], w->y[i], w->z[i]), P0 = c;
      if (jl_br_nearest_sample(g, c, p->face_reach, 0.0, &P0)) {
        jl_vec3 nrm = jl_br_face_normal(g, c, P0);
        int k;
        jl_quat q = jl_br_turn_onto(jl_br_quat(w, i), nrm, &k);
        double gap = jl_v3_dot(jl_v3_sub(c, P0), nrm) - (p->h[k] + p->point_skin);
        jl_br_set(w, i, jl_v3_sub(c, jl_v3_scale(nrm, gap)), q);
      }
    } else if (kind == JL_BMOVE_INSERT) {
      if (w->n < cap && g->n_inside > 0) {
        /* a free spot: the first of a few random points in inside cells
         * that no block covers */
        jl_vec3 c = jl_v3(0.0, 0.0, 0.0);
        uint32_t r[4] = {0, 0, 0, 0};
        for (uint32_t t = 0; t < JL_INSERT_TRIES; ++t) {
          uint32_t s4[4];
          jl_br_rand4(seed, w->cand, w->moves, JL_BR_LANE_LEADER, 32u + 2u * t, r);
          jl_br_rand4(seed, w->cand, w->moves, JL_BR_LANE_LEADER, 33u + 2u * t, s4);
          int cell = JL_LDG(g->inside_cells + jl_uint_below(r[0], (uint32_t)g->n_inside));
          int ix = cell % g->dim[0], iy = (cell / g->dim[0]) % g->dim[1];
          int iz = cell / (g->dim[0] * g->dim[1]);
          c = jl_v3(g->origin[0] + (ix + jl_u01_from_u32(r[1], r[2])) * g->cell,
                    g->origin[1] + (iy + jl_u01_from_u32(r[3], s4[0])) * g->cell,
                    g->origin[2] + (iz + jl_u01_from_u32(s4[1], s4[2])) * g->cell);
          int covered = 0;
          for (int j = 0; j < w->n && !covered; ++j) {
            jl_vec3 bx[3], nn;
            jl_quat_to_axes(jl_br_quat(w, j), bx);
            covered = jl_box_point_depth(jl_v3(w->x[j], w->y[j], w->z[j]), bx, p->h, c, &nn) > 0.0;
          }
          if (!covered) break;
        }
        /* orientation: a neighbour's (packings like to align), one of the
         * 6 axis-aligned ones, or uniformly random */
        jl_quat q;
        if (w->mv[3] < p->p_copy && w->n > 0) q = jl_br_quat(w, w->pick);
        else if (w->mv[4] < p->p_axis) q = jl_axis_orientation((int)jl_uint_below(r[3], 6u));
        else q = jl_br_random_quat(w, seed);
        jl_br_set(w, w->n, c, q);
        w->n++;
      }
    } else if (kind == JL_BMOVE_DELETE) {
      int last = w->n - 1;
      jl_br_set(w, i, jl_v3(w->x[last], w->y[last], w->z[last]), jl_br_quat(w, last));
      w->n--;
    } else {
      double s = p->shift_step;
      jl_vec3 c = jl_v3(w->x[i] + s * (2.0 * w->mv[0] - 1.0), w->y[i] + s * (2.0 * w->mv[1] - 1.0),
                        w->z[i] + s * (2.0 * w->mv[2] - 1.0));
      jl_quat q = jl_br_jitter_quat(jl_br_quat(w, i), p->shift_angle, w->mv[3], w->mv[4], w->mv[5]);
      jl_br_set(w, i, c, q);
    }
  }
  JL_BSYNC();
}

/* Copies the state arrays one way or the other (backup <-> current). */
JL_BR_FN void jl_br_copy(jl_br_ws *w, int n, int to_backup) {
  JL_BFOR(i, n) {
    if (to_backup) {
      w->sx[i] = w->x[i]; w->sy[i] = w->y[i]; w->sz[i] = w->z[i];
      w->sqw[i] = w->qw[i]; w->sqx[i] = w->qx[i]; w->sqy[i] = w->qy[i]; w->sqz[i] = w->qz[i];
    } else {
      w->x[i] = w->sx[i]; w->y[i] = w->sy[i]; w->z[i] = w->sz[i];
      w->qw[i] = w->sqw[i]; w->qx[i] = w->sqx[i]; w->qy[i] = w->sqy[i]; w->qz[i] = w->sqz[i];
    }
  }
  JL_BSYNC();
}

/* One candidate's launch: load, relax (the state as the host left it),
 * then p->iters annealing moves, each relaxed and accepted by Metropolis on
 * the energy; the best state legal by the samples is kept. Bench launches
 * only relax for exactly bench_steps. */
JL_BR_FN void jl_block_candidate(jl_br_ws *w, double *mem, const jl_block_params *p,
                                 jl_block_batch b, int c) {
  const int cap = b.cap;
  const size_t off = (size_t)c * (size_t)cap;
  if (JL_BLEADER) {
    jl_br_ws_bind(w, mem, cap);
    w->n = b.n[c];
    w->cand = c;
    w->steps = 0;
    w->accepted = 0;
    w->moves = b.moves[c];
  }
  JL_BSYNC();
  JL_BFOR(i, w->n) {
    w->x[i] = b.cx[off + i]; w->y[i] = b.cy[off + i]; w->z[i] = b.cz[off + i];
    w->qw[i] = b.qw[off + i]; w->qx[i] = b.qx[off + i]; w->qy[i] = b.qy[off + i];
    w->qz[i] = b.qz[off + i];
  }
  JL_BSYNC();
  int best_n = b.best_n[c];
  if (p->bench_steps > 0) {
    jl_br_relax(w, p, 0, p->bench_steps);
  } else {
    int legal = jl_br_relax(w, p, p->max_steps, 0);
    double e = jl_br_energy(w, p), worst = w->worst;
    const double T = b.temp[c];
    for (int it = 0; it < p->iters; ++it) {
#if !defined(__CUDACC__) && !defined(JL_BR_EMULATE)
      if (jl_stop_requested(p->stop) || (p->deadline > 0.0 && jl_time_now() >= p->deadline)) break;
#endif
      if (legal && isfinite(e) && w->n > best_n) {
        best_n = w->n;
        JL_BFOR(i, w->n) {
          b.bx[off + i] = w->x[i]; b.by[off + i] = w->y[i]; b.bz[off + i] = w->z[i];
          b.bqw[off + i] = w->qw[i]; b.bqx[off + i] = w->qx[i]; b.bqy[off + i] = w->qy[i];
          b.bqz[off + i] = w->qz[i];
        }
      }
      jl_br_copy(w, w->n, 1);
      if (JL_BLEADER) {
        w->n_old = w->n;
        jl_br_choose_move(w, p, p->seed);
      }
      JL_BSYNC();
      jl_br_apply_move(w, p, cap, p->seed);
      int leg = jl_br_relax(w, p, p->max_steps, 0);
      double en = jl_br_energy(w, p);
      if (JL_BLEADER) {
        double dE = en - e;
        int acc = 0;
        if (dE <= 0.0) acc = 1;
        else if (isfinite(dE) && T > 0.0) {
          uint32_t r[4];
          jl_br_rand4(p->seed, w->cand, w->moves, JL_BR_LANE_LEADER, 15, r);
          acc = jl_br_u01(r, 0) < exp(-dE / T);
        }
        w->accept = acc;
        size_t kk = (size_t)c * JL_BMOVE_COUNT + (size_t)w->kind;
        b.kind_moves[kk]++;
        if (acc) { w->accepted++; b.kind_accepted[kk]++; }
        else w->n = w->n_old;
        w->moves++;
      }
      JL_BSYNC();
      if (w->accept) {
        e = en;
        legal = leg;
        worst = w->worst;
      } else {
        jl_br_copy(w, w->n, 0);
      }
    }
    if (legal && isfinite(e) && w->n > best_n) {
      best_n = w->n;
      JL_BFOR(i, w->n) {
        b.bx[off + i] = w->x[i]; b.by[off + i] = w->y[i]; b.bz[off + i] = w->z[i];
        b.bqw[off + i] = w->qw[i]; b.bqx[off + i] = w->qx[i]; b.bqy[off + i] = w->qy[i];
        b.bqz[off + i] = w->qz[i];
      }
    }
    JL_BSYNC();  /* every thread has read w->worst of the last move */
    if (JL_BLEADER) {
      b.energy[c] = e;
      w->worst = worst;  /* of the state kept, not of a rejected last move */
    }
    JL_BSYNC();
  }
  JL_BFOR(i, w->n) {
    b.cx[off + i] = w->x[i]; b.cy[off + i] = w->y[i]; b.cz[off + i] = w->z[i];
    b.qw[off + i] = w->qw[i]; b.qx[off + i] = w->qx[i]; b.qy[off + i] = w->qy[i];
    b.qz[off + i] = w->qz[i];
  }
  if (JL_BLEADER) {
    b.n[c] = w->n;
    b.worst[c] = w->worst;
    b.best_n[c] = best_n;
    b.moves[c] = w->moves;
    b.steps[c] += w->steps;
    b.accepted[c] += w->accepted;
  }
}

#endif
