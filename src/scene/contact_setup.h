/* Contact setup (seed 000, sec. 4.7): contact frames (n, t1, t2), the W
 * columns per contact and body, M^-1 W, the free term c and the Delassus
 * blocks G_ij = sum_K W_iK^T M_K^-1 W_jK, kept only where contacts i and j
 * share a dynamic body (block-sparse CSR of 3x3 blocks, never dense).
 *
 * Velocities are u_K = (v, omega), both in the world frame. The relative
 * velocity of contact i is gamma_i = sum_K W_iK^T u_K (chi = 0: no moving
 * constraints), with gamma_N > 0 separating. Body a's rows carry the minus
 * sign: gamma = A^T (v_Cb - v_Ca). Static bodies have no rows: k = -1.
 *
 * Every array is flat and per contact (or per block); the device pipeline
 * keeps the same type (scene_gpu.h). The per-contact and per-row arithmetic
 * (frame, W rows, M^-1 W, c, diag, G's blocks) is setup_math.h's, shared
 * with the CUDA setup kernels and their twin. */
#ifndef JL_CONTACT_SETUP_H
#define JL_CONTACT_SETUP_H

#include <stddef.h>

#include "contact.h"
#include "error.h"
#include "rigid_body.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_contact_problem {
  int n, cap;              /* contacts */
  int nbodies;
  /* per contact i */
  int *ka, *kb;            /* dynamic body index, or -1 when that side is static */
  double *frame;           /* 9: n, t1, t2 (world), n from a to b */
  /* W_iK^T has rows sign_K (d, r_K x d) for d = n, t1, t2 (sign -1 for a, +1 for b);
   * (M_K^-1 W_iK)^T rows sign_K (m_K^-1 d, I_K^-1 (r_K x d)), I_K in the world frame.
   * Stored compactly: 47 numbers per contact instead of 4 x 18; jl_sm_w_row_dot
   * and jl_sm_mw_add (setup_math.h) apply W^T and M^-1 W from them. */
  double *rx;              /* 18: r_a x d then r_b x d, d = n, t1, t2 (zero for a static side) */
  double *irx;             /* 18: I_a^-1 (r_a x d) then I_b^-1 (r_b x d) */
  double *im;              /* 2: m_a^-1, m_b^-1 (0 for a static side) */
  double *c;               /* 3: W^T M^-1 h dt + (I + eps)(W^T u_S) */
  double *mu;              /* 1 */
  double *diag;            /* 2: G_ii(1,1) and max(G_ii(2,2), G_ii(3,3)) */
  /* What rx and irx are made of, for a solve that rebuilds them instead of
   * reading them (the device's streamed solve): */
  double *lever;           /* 6: r_a then r_b, contact point minus centre (0 for a static side) */
  double *iso;             /* 2: s where the side's I^-1 = s 1 (spheres, cubes), else -1; 0 static */
  double *arm;             /* 2: l where the side is a sphere, whose lever is l n; else 0 */
  /* G: block-sparse CSR of 3x3 blocks, row-major inside a block, columns ascending */
  int has_g;
  int nnz, nnz_cap;
  int *rowptr;             /* n + 1 */
  int *col;                /* nnz */
  double *blocks;          /* 9 nnz */
  /* dynamic bodies -> their contacts (ascending), CSR */
  int *body_ptr;           /* nbodies + 1 */
  int *body_contact;
  int body_cap;
} jl_contact_problem;

/* Per-contact law parameters, chosen by the caller from the materials. */
typedef struct jl_contact_law {
  const double *mu;        /* n */
  const double *eps_n;     /* n: normal restitution */
  const double *eps_t;     /* n: tangential restitution */
} jl_contact_law;

void jl_contact_problem_free(jl_contact_problem *p);
/* Room for n contacts (at least 1), nbodies bodies and nnz blocks of G. */
int jl_contact_problem_reserve(jl_contact_problem *p, int n, int nbodies, int nnz, jl_error *err);

/* Builds the problem for contacts `c` of bodies `b` (positions and
 * orientations at the mid-point, velocities u_S). dv_free holds 6 per body:
 * M^-1 h dt (the velocity change without contacts). build_g: assemble G
 * (otherwise only what the matrix-free solver needs). */
int jl_contact_setup(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                     const jl_contact_law *law, const double *dv_free, int build_g,
                     int threads, jl_error *err);

/* jl_contact_setup in parts, for a caller that runs the per-contact part on
 * its own thread team (the stepper, with its warm start): room for n
 * contacts and nbodies bodies; then contacts [lo, hi) (any split, the same
 * bits); then, with every contact done, the bodies' contact lists. */
int jl_contact_setup_begin(jl_contact_problem *p, int n, int nbodies, jl_error *err);
void jl_contact_setup_contacts(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                               const jl_contact_law *law, const double *dv_free, int lo, int hi);
int jl_contact_setup_bodies(jl_contact_problem *p, jl_error *err);

/* Assembles G of a problem set up without it. */
int jl_contact_build_g(jl_contact_problem *p, int threads, jl_error *err);
/* sum over dynamic bodies of (contacts of the body)^2: an upper bound of the
 * blocks of G, known before assembling it. */
long long jl_contact_g_estimate(const jl_contact_problem *p);

#ifdef __cplusplus
}
#endif

#endif
