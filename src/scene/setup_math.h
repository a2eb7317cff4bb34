/* Per-contact and per-row arithmetic of the contact setup: frame, lever rows
 * of W, c, the diagonal used by the prox step, the Delassus blocks of one
 * row, W^T u and M^-1 W lam. The one source for the reference path
 * (contact_setup.c, prox_solver.c, scene_step.c), the CPU twin
 * (setup_twin.c) and the CUDA kernels (kernels/scene/scene_setup.cu and the
 * others), so all give the same bits. Arrays are those of
 * jl_contact_problem (contact_setup.h), the device's layout too. */
#ifndef JL_SETUP_MATH_H
#define JL_SETUP_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "contact.h"
#include "contact_setup.h"
#include "error.h"
#include "rigid_body.h"
#include "hd.h"
#include "integrate.h"
#include "math3d.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An orthonormal frame (n, t1, t2) from a unit normal, t1 x t2 = n. t1 comes
 * from the coordinate axis least aligned with n: well conditioned, and the
 * same for the same normal, so warm starts see steady tangents. */
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

/* The lever rows r x d for d = n, t1, t2 (frame: 9) into rx (9). */
JL_HD static inline void jl_sm_lever_rows(const double r[3], const double *frame, double *rx) {
  for (int d = 0; d < 3; ++d) {
    const double *e = frame + 3 * d;
    double *q = rx + 3 * d;
    q[0] = r[1] * e[2] - r[2] * e[1];
    q[1] = r[2] * e[0] - r[0] * e[2];
    q[2] = r[0] * e[1] - r[1] * e[0];
  }
}

/* Row d (0 N, 1 T1, 2 T2) of W_iK^T u for side 0 (a) or 1 (b), u = (v, omega). */
JL_HD static inline double jl_sm_w_row_dot(const double *frame, const double *rx, int i, int side,
                                           int d, const double *u) {
  const double *e = frame + 9 * (size_t)i + 3 * d;
  const double *r = rx + 18 * (size_t)i + 9 * side + 3 * d;
  double v = e[0] * u[0] + e[1] * u[1] + e[2] * u[2] + r[0] * u[3] + r[1] * u[4] + r[2] * u[5];
  return side ? v : -v;
}

/* Component c (0-2 linear, 3-5 angular) of M_K^-1 W_iK lam for side 0 (a)
 * or 1 (b): one component alone, so a kernel can give each of a body's six
 * sums its own thread and still add exactly what jl_sm_mw_add adds. */
JL_HD static inline double jl_sm_mw_comp_rows(const double *e, const double *ir, double im_side,
                                              int side, const double lam[3], int c) {
  if (c < 3) {
    double m = side ? im_side : -im_side;
    return m * (e[c] * lam[0] + e[3 + c] * lam[1] + e[6 + c] * lam[2]);
  }
  double sg = side ? 1.0 : -1.0;
  int k = c - 3;
  return sg * (ir[k] * lam[0] + ir[3 + k] * lam[1] + ir[6 + k] * lam[2]);
}

/* The same from the problem's arrays (e: contact i's frame, ir: its side's
 * inertia lever rows, im_side: that side's inverse mass); the device's
 * persistent solve keeps e, ir and im_side on chip and calls the rows form. */
JL_HD static inline double jl_sm_mw_comp(const double *frame, const double *irx, const double *im,
                                         int i, int side, const double lam[3], int c) {
  return jl_sm_mw_comp_rows(frame + 9 * (size_t)i, irx + 18 * (size_t)i + 9 * side,
                            im[2 * (size_t)i + side], side, lam, c);
}

/* u += M_K^-1 W_iK lam for side 0 (a) or 1 (b). */
JL_HD static inline void jl_sm_mw_add(const double *frame, const double *irx, const double *im,
                                      int i, int side, const double lam[3], double *u) {
  for (int c = 0; c < 6; ++c) u[c] += jl_sm_mw_comp(frame, irx, im, i, side, lam, c);
}

/* Flat views of the bodies and of the problem's per-contact arrays. */
typedef struct jl_sm_bodies {
  const uint8_t *is_static;
  const double *pos, *quat, *vel, *omega, *inv_mass, *inv_inertia;
  const uint8_t *shape;
} jl_sm_bodies;

typedef struct jl_sm_problem {
  int *ka, *kb;
  double *frame, *rx, *irx, *im, *c, *mu, *diag, *lever, *iso, *arm;
} jl_sm_problem;

/* A sphere's lever r (contact point minus centre) lies along the normal n:
 * it is kept as r = l n with l = r . n, so that a solve can rebuild its bits
 * from l and the normal (the device's streamed solve reads 1 number a side
 * instead of 3). Returns l; r is rewritten. */
JL_HD static inline double jl_sm_sphere_lever(const double n[3], double r[3]) {
  double l = r[0] * n[0] + r[1] * n[1] + r[2] * n[2];
  for (int m = 0; m < 3; ++m) r[m] = l * n[m];
  return l;
}

/* Contact i (bodies a, b, point, unit normal; law mu, eps_n, eps_t; dv_free
 * 6 per body): frame, lever rows, c, mu and diag; a sphere side's lever as
 * l n (jl_sm_sphere_lever) with arm = l, every other side's arm 0. */
JL_HD static inline void jl_sm_contact(const jl_sm_bodies *b, int a, int bb, const double *pt,
                                       const double *normal, double mu, double eps_n,
                                       double eps_t, const double *dv_free, int i,
                                       jl_sm_problem *p) {
  p->ka[i] = b->is_static[a] ? -1 : a;
  p->kb[i] = b->is_static[bb] ? -1 : bb;
  double *fr = p->frame + 9 * (size_t)i;
  jl_sm_frame(normal, fr);
  double eps[3] = {eps_n, eps_t, eps_t};
  double free_part[3] = {0, 0, 0}, rel[3] = {0, 0, 0}, g[3] = {0, 0, 0};
  const int ks[2] = {p->ka[i], p->kb[i]};
  for (int side = 0; side < 2; ++side) {
    int k = ks[side];
    double *rx = p->rx + 18 * (size_t)i + 9 * side, *irx = p->irx + 18 * (size_t)i + 9 * side;
    double *lever = p->lever + 6 * (size_t)i + 3 * side;
    if (k < 0) {
      for (int m = 0; m < 9; ++m) rx[m] = irx[m] = 0.0;
      for (int m = 0; m < 3; ++m) lever[m] = 0.0;
      p->im[2 * (size_t)i + side] = 0.0;
      p->iso[2 * (size_t)i + side] = 0.0;
      p->arm[2 * (size_t)i + side] = 0.0;
      continue;
    }
    const double *x = b->pos + 3 * (size_t)k;
    double r[3] = {pt[0] - x[0], pt[1] - x[1], pt[2] - x[2]};
    p->arm[2 * (size_t)i + side] =
        b->shape[k] == JL_SHAPE_SPHERE ? jl_sm_sphere_lever(normal, r) : 0.0;
    for (int m = 0; m < 3; ++m) lever[m] = r[m];
    double im = b->inv_mass[k];
    p->im[2 * (size_t)i + side] = im;
    p->iso[2 * (size_t)i + side] = jl_int_iso_inv_inertia(b->inv_inertia + 3 * (size_t)k);
    jl_sm_lever_rows(r, fr, rx);
    for (int d = 0; d < 3; ++d) {
      double *q = rx + 3 * d;
      jl_int_inv_inertia_apply(b->quat + 4 * (size_t)k, b->inv_inertia + 3 * (size_t)k, q,
                               irx + 3 * d);
      g[d] += im + q[0] * irx[3 * d] + q[1] * irx[3 * d + 1] + q[2] * irx[3 * d + 2];
    }
    double u[6] = {b->vel[3 * k], b->vel[3 * k + 1], b->vel[3 * k + 2],
                   b->omega[3 * k], b->omega[3 * k + 1], b->omega[3 * k + 2]};
    const double *dv = dv_free + 6 * (size_t)k;
    for (int d = 0; d < 3; ++d) {
      free_part[d] += jl_sm_w_row_dot(p->frame, p->rx, i, side, d, dv);
      rel[d] += jl_sm_w_row_dot(p->frame, p->rx, i, side, d, u);
    }
  }
  double *ci = p->c + 3 * (size_t)i;
  for (int d = 0; d < 3; ++d) ci[d] = free_part[d] + (1.0 + eps[d]) * rel[d];
  p->mu[i] = mu;
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

/* G_ij = sum over the dynamic bodies K shared by i and j of W_iK^T M_K^-1 W_jK:
 * sign_iK sign_jK (m_K^-1 d_i . d_j + (r_iK x d_i) . I_K^-1 (r_jK x d_j)). */
JL_HD static inline void jl_sm_block(const int *ka, const int *kb, const double *frame,
                                     const double *rx, const double *irx, const double *imv,
                                     int i, int j, double g[9]) {
  for (int m = 0; m < 9; ++m) g[m] = 0.0;
  const int ki[2] = {ka[i], kb[i]}, kj[2] = {ka[j], kb[j]};
  const double *fi = frame + 9 * (size_t)i, *fj = frame + 9 * (size_t)j;
  for (int si = 0; si < 2; ++si) {
    int k = ki[si];
    if (k < 0) continue;
    int sj = k == kj[0] ? 0 : k == kj[1] ? 1 : -1;
    if (sj < 0) continue;
    double sign = si == sj ? 1.0 : -1.0, im = imv[2 * (size_t)i + si];
    const double *rxi = rx + 18 * (size_t)i + 9 * si, *irxj = irx + 18 * (size_t)j + 9 * sj;
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) {
        const double *di = fi + 3 * r, *dj = fj + 3 * q, *a = rxi + 3 * r, *bq = irxj + 3 * q;
        g[3 * r + q] += sign * (im * (di[0] * dj[0] + di[1] * dj[1] + di[2] * dj[2]) +
                                a[0] * bq[0] + a[1] * bq[1] + a[2] * bq[2]);
      }
  }
}

/* Body CSR entries of contact i: entry 2 i + side (a: 0, b: 1) holds its
 * side's body, or nb for a static side. The entries sorted stably by body
 * (they start in ascending order) list each body's contacts in ascending
 * order (the reference's body_contact), the static sides last. */
JL_HD static inline void jl_sm_body_sides(const int *ka, const int *kb, int i, int nb,
                                          uint32_t out[2]) {
  out[0] = ka[i] >= 0 ? (uint32_t)ka[i] : (uint32_t)nb;
  out[1] = kb[i] >= 0 ? (uint32_t)kb[i] : (uint32_t)nb;
}

/* First of the m sorted entries' bodies not below body: body_ptr[body]. */
JL_HD static inline int jl_sm_lower_bound(const uint32_t *bodies, int m, int body) {
  int lo = 0, hi = m;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (bodies[mid] < (uint32_t)body) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* setup_twin.c: the device setup's steps on the CPU (law per contact from the
 * material tables [m_a * JL_MATERIALS_MAX + m_b], as the stepper picks it). */
int jl_setup_twin(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                  const double *mu_table, const double *eps_n_table, const double *eps_t_table,
                  int materials_max, const double *dv_free, int build_g, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
