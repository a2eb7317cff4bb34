/* Per-contact and per-row arithmetic of the contact setup (contact_setup.c),
 * shared by the CPU twin (setup_twin.c) and the CUDA setup kernels
 * (kernels/scene_setup.cu): frame, rows of W^T and (M^-1 W)^T, c, the
 * diagonal used by the prox step, and the Delassus blocks of one row. */
#ifndef JL_SETUP_MATH_H
#define JL_SETUP_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "contact_setup.h"
#include "hd.h"
#include "integrate.h"
#include "math3d.h"
#include "prox_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Orthonormal (n, t1, t2) from a unit normal, t1 x t2 = n (jl_contact_frame). */
JL_HD static inline void jl_sm_frame(const double n[3], double frame[9]) {
  double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
  jl_vec3 e = ax <= ay && ax <= az ? jl_v3(1, 0, 0) : (ay <= az ? jl_v3(0, 1, 0) : jl_v3(0, 0, 1));
  jl_vec3 nn = jl_v3(n[0], n[1], n[2]);
  jl_vec3 t1 = jl_v3_normalize(jl_v3_cross(nn, e));
  jl_vec3 t2 = jl_v3_cross(nn, t1);
  frame[0] = nn.x; frame[1] = nn.y; frame[2] = nn.z;
  frame[3] = t1.x; frame[4] = t1.y; frame[5] = t1.z;
  frame[6] = t2.x; frame[7] = t2.y; frame[8] = t2.z;
}

/* Rows of W^T and (M^-1 W)^T of one contact for body k at lever r, sign s. */
JL_HD static inline void jl_sm_w_rows(const double *inv_mass, const double *quat,
                                      const double *inv_inertia, int k, const double *frame,
                                      const double r[3], double s, double w[18], double mw[18]) {
  double im = inv_mass[k];
  for (int d = 0; d < 3; ++d) {
    const double *e = frame + 3 * d;
    double rx = r[1] * e[2] - r[2] * e[1], ry = r[2] * e[0] - r[0] * e[2],
           rz = r[0] * e[1] - r[1] * e[0];
    double *row = w + 6 * d, *mrow = mw + 6 * d;
    row[0] = s * e[0]; row[1] = s * e[1]; row[2] = s * e[2];
    row[3] = s * rx; row[4] = s * ry; row[5] = s * rz;
    mrow[0] = im * row[0]; mrow[1] = im * row[1]; mrow[2] = im * row[2];
    jl_int_inv_inertia_apply(quat + 4 * (size_t)k, inv_inertia + 3 * (size_t)k, row + 3, mrow + 3);
  }
}

/* Flat views of the bodies, the contacts and the problem for one contact. */
typedef struct jl_sm_bodies {
  const uint8_t *is_static;
  const double *pos, *quat, *vel, *omega, *inv_mass, *inv_inertia;
} jl_sm_bodies;

typedef struct jl_sm_problem {
  int *ka, *kb;
  double *frame, *wa, *wb, *mwa, *mwb, *c, *mu, *diag;
} jl_sm_problem;

/* Contact i (bodies a, b, point, unit normal; law mu, eps_n, eps_t; dv_free
 * 6 per body): frame, W, M^-1 W, c, mu and diag of the problem. */
JL_HD static inline void jl_sm_contact(const jl_sm_bodies *b, int a, int bb, const double *pt,
                                       const double *normal, double mu, double eps_n,
                                       double eps_t, const double *dv_free, int i,
                                       jl_sm_problem *p) {
  p->ka[i] = b->is_static[a] ? -1 : a;
  p->kb[i] = b->is_static[bb] ? -1 : bb;
  double *fr = p->frame + 9 * (size_t)i;
  jl_sm_frame(normal, fr);
  double *wa = p->wa + 18 * (size_t)i, *wb = p->wb + 18 * (size_t)i;
  double *mwa = p->mwa + 18 * (size_t)i, *mwb = p->mwb + 18 * (size_t)i;
  double eps[3] = {eps_n, eps_t, eps_t};
  double free_part[3] = {0, 0, 0}, rel[3] = {0, 0, 0};
  const int ks[2] = {p->ka[i], p->kb[i]};
  double *ws[2] = {wa, wb}, *mws[2] = {mwa, mwb};
  for (int side = 0; side < 2; ++side) {
    int k = ks[side];
    if (k < 0) {
      for (int m = 0; m < 18; ++m) ws[side][m] = mws[side][m] = 0.0;
      continue;
    }
    const double *x = b->pos + 3 * (size_t)k;
    double r[3] = {pt[0] - x[0], pt[1] - x[1], pt[2] - x[2]};
    jl_sm_w_rows(b->inv_mass, b->quat, b->inv_inertia, k, fr, r, side == 0 ? -1.0 : 1.0, ws[side],
                 mws[side]);
    double u[6] = {b->vel[3 * k], b->vel[3 * k + 1], b->vel[3 * k + 2],
                   b->omega[3 * k], b->omega[3 * k + 1], b->omega[3 * k + 2]};
    const double *dv = dv_free + 6 * (size_t)k;
    for (int d = 0; d < 3; ++d) {
      free_part[d] += jl_pm_dot6(ws[side] + 6 * d, dv);
      rel[d] += jl_pm_dot6(ws[side] + 6 * d, u);
    }
  }
  double *ci = p->c + 3 * (size_t)i;
  for (int d = 0; d < 3; ++d) ci[d] = free_part[d] + (1.0 + eps[d]) * rel[d];
  p->mu[i] = mu;
  double g[3] = {0, 0, 0};
  for (int d = 0; d < 3; ++d)
    g[d] = jl_pm_dot6(wa + 6 * d, mwa + 6 * d) + jl_pm_dot6(wb + 6 * d, mwb + 6 * d);
  p->diag[2 * i] = g[0];
  p->diag[2 * i + 1] = g[1] > g[2] ? g[1] : g[2];
}

/* Sorted union of the contact lists of contact i's dynamic bodies (row i's
 * columns of G), written to out when given; returns its length. */
JL_HD static inline int jl_sm_row_columns(const int *ka, const int *kb, const int *body_ptr,
                                          const int *body_contact, int i, int *out) {
  int a = ka[i], b = kb[i];
  const int *la = NULL, *lb = NULL;
  int na = 0, nb = 0;
  if (a >= 0) { la = body_contact + body_ptr[a]; na = body_ptr[a + 1] - body_ptr[a]; }
  if (b >= 0) { lb = body_contact + body_ptr[b]; nb = body_ptr[b + 1] - body_ptr[b]; }
  int x = 0, y = 0, m = 0;
  while (x < na || y < nb) {
    int v;
    if (y >= nb || (x < na && la[x] < lb[y])) v = la[x++];
    else if (x >= na || lb[y] < la[x]) v = lb[y++];
    else { v = la[x++]; ++y; }
    if (out) out[m] = v;
    ++m;
  }
  return m;
}

/* G_ij = sum over the dynamic bodies K shared by i and j of W_iK^T M_K^-1 W_jK. */
JL_HD static inline void jl_sm_block(const int *ka, const int *kb, const double *wa,
                                     const double *wb, const double *mwa, const double *mwb, int i,
                                     int j, double g[9]) {
  for (int m = 0; m < 9; ++m) g[m] = 0.0;
  const int ki[2] = {ka[i], kb[i]};
  const double *wi[2] = {wa + 18 * (size_t)i, wb + 18 * (size_t)i};
  for (int s = 0; s < 2; ++s) {
    int k = ki[s];
    if (k < 0) continue;
    const double *mwj = k == ka[j] ? mwa + 18 * (size_t)j : k == kb[j] ? mwb + 18 * (size_t)j : NULL;
    if (!mwj) continue;
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) g[3 * r + q] += jl_pm_dot6(wi[s] + 6 * r, mwj + 6 * q);
  }
}

/* Body CSR entries of contact i: (body << 32 | contact) per dynamic side,
 * UINT64_MAX for a static side; sorted, they list each body's contacts in
 * ascending order (the reference's body_contact). */
JL_HD static inline void jl_sm_body_keys(const int *ka, const int *kb, int i, uint64_t out[2]) {
  out[0] = ka[i] >= 0 ? ((uint64_t)(uint32_t)ka[i] << 32) | (uint32_t)i : UINT64_MAX;
  out[1] = kb[i] >= 0 ? ((uint64_t)(uint32_t)kb[i] << 32) | (uint32_t)i : UINT64_MAX;
}

/* First index of sorted keys[0..m) not below (body << 32): body_ptr[body]. */
JL_HD static inline int jl_sm_lower_bound(const uint64_t *keys, int m, int body) {
  uint64_t want = (uint64_t)(uint32_t)body << 32;
  int lo = 0, hi = m;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (keys[mid] < want) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* setup_twin.c: the device setup's steps on the CPU (law per contact from the
 * material tables [m_a * JL_MATERIALS_MAX + m_b], as the stepper picks it). */
int jl_setup_twin(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                  const double *mu_table, const double *eps_n_table, const double *eps_t_table,
                  int materials_max, const double *dv_free, int build_g, jl_error *err);

/* Room in p for n contacts, nbodies bodies and nnz blocks of G (setup_twin.c). */
int jl_setup_reserve(jl_contact_problem *p, int n, int nbodies, int nnz, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
