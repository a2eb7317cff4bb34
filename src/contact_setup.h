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

#include <stddef.h>

#include "contact.h"
#include "error.h"
#include "hd.h"
#include "math3d.h"
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
   * Stored compactly: 47 numbers per contact instead of 4 x 18. */
  double *rx;              /* 18: r_a x d then r_b x d, d = n, t1, t2 (zero for a static side) */
  double *irx;             /* 18: I_a^-1 (r_a x d) then I_b^-1 (r_b x d) */
  double *im;              /* 2: m_a^-1, m_b^-1 (0 for a static side) */
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

/* Row d (0 N, 1 T1, 2 T2) of W_iK^T u for side 0 (a) or 1 (b); u = (v, omega). */
JL_HD static inline double jl_w_row_dot(const jl_contact_problem *p, int i, int side, int d,
                                  const double *u) {
  const double *e = p->frame + 9 * (size_t)i + 3 * d;
  const double *r = p->rx + 18 * (size_t)i + 9 * side + 3 * d;
  double v = e[0] * u[0] + e[1] * u[1] + e[2] * u[2] + r[0] * u[3] + r[1] * u[4] + r[2] * u[5];
  return side ? v : -v;
}

/* u += M_K^-1 W_iK lam for side 0 (a) or 1 (b). */
JL_HD static inline void jl_mw_add(const jl_contact_problem *p, int i, int side, const double lam[3],
                             double *u) {
  const double *e = p->frame + 9 * (size_t)i;
  const double *ir = p->irx + 18 * (size_t)i + 9 * side;
  double m = side ? p->im[2 * i + 1] : -p->im[2 * i];
  double sg = side ? 1.0 : -1.0;
  for (int k = 0; k < 3; ++k) {
    u[k] += m * (e[k] * lam[0] + e[3 + k] * lam[1] + e[6 + k] * lam[2]);
    u[3 + k] += sg * (ir[k] * lam[0] + ir[3 + k] * lam[1] + ir[6 + k] * lam[2]);
  }
}

/* Assembles G of a problem set up without it. */
int jl_contact_build_g(jl_contact_problem *p, int threads, jl_error *err);
/* sum over dynamic bodies of (contacts of the body)^2: an upper bound of the
 * blocks of G, known before assembling it. */
long long jl_contact_g_estimate(const jl_contact_problem *p);

/* An orthonormal frame (n, t1, t2) from a unit normal, t1 x t2 = n. t1 comes
 * from the coordinate axis least aligned with n: well conditioned, and the
 * same for the same normal, so warm starts see steady tangents. */
JL_HD static inline void jl_contact_frame(const double n[3], double frame[9]) {
  double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
  jl_vec3 e = ax <= ay && ax <= az ? jl_v3(1, 0, 0) : (ay <= az ? jl_v3(0, 1, 0) : jl_v3(0, 0, 1));
  jl_vec3 nn = jl_v3(n[0], n[1], n[2]);
  jl_vec3 t1 = jl_v3_normalize(jl_v3_cross(nn, e));
  jl_vec3 t2 = jl_v3_cross(nn, t1);
  frame[0] = nn.x; frame[1] = nn.y; frame[2] = nn.z;
  frame[3] = t1.x; frame[4] = t1.y; frame[5] = t1.z;
  frame[6] = t2.x; frame[7] = t2.y; frame[8] = t2.z;
}

/* World-frame inverse inertia times x for body k. */
void jl_body_inv_inertia_apply(const jl_bodies *b, int k, const double x[3], double out[3]);

#ifdef __cplusplus
}
#endif

#endif
