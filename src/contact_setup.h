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
 * Every array is flat and per contact (or per block), so the GPU issue can
 * build the same problem with one thread per contact / per block. */
#ifndef JL_CONTACT_SETUP_H
#define JL_CONTACT_SETUP_H

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
  double *wa, *wb;         /* 18: rows N, T1, T2 of W_iK^T, each (linear 3, angular 3) */
  double *mwa, *mwb;       /* 18: the same rows of (M_K^-1 W_iK)^T */
  double *c;               /* 3: W^T M^-1 h dt + (I + eps)(W^T u_S) */
  double *mu;              /* 1 */
  double *diag;            /* 2: G_ii(1,1) and max(G_ii(2,2), G_ii(3,3)) */
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

/* Builds the problem for contacts `c` of bodies `b` (positions and
 * orientations at the mid-point, velocities u_S). dv_free holds 6 per body:
 * M^-1 h dt (the velocity change without contacts). build_g: assemble G
 * (otherwise only what the matrix-free solver needs). */
int jl_contact_setup(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                     const jl_contact_law *law, const double *dv_free, int build_g,
                     int threads, jl_error *err);

/* Assembles G of a problem set up without it. */
int jl_contact_build_g(jl_contact_problem *p, int threads, jl_error *err);
/* sum over dynamic bodies of (contacts of the body)^2: an upper bound of the
 * blocks of G, known before assembling it. */
long long jl_contact_g_estimate(const jl_contact_problem *p);

/* An orthonormal frame (n, t1, t2) from a unit normal, t1 x t2 = n. */
void jl_contact_frame(const double n[3], double frame[9]);

/* World-frame inverse inertia times x for body k. */
void jl_body_inv_inertia_apply(const jl_bodies *b, int k, const double x[3], double out[3]);

#ifdef __cplusplus
}
#endif

#endif
