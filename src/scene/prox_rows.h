/* The matrix-free prox solvers' per-contact constants packed row by row in
 * the order the sweep visits the contacts (SOR: colour groups; JOR and
 * APGD: contact order). The problem keeps each quantity in its own array
 * (jl_contact_problem: the device's layout), so one update reads seven
 * arrays; swept by colours it lands in each of them about n / colours
 * contacts away from the last update, and from a few 10,000 contacts on
 * (the 8000-brick wall: 24 MB of constants) every row comes from memory
 * instead of cache. Packed in sweep order the constants are one forward
 * stream that the hardware prefetcher runs ahead of.
 *
 * The arithmetic is that of the problem's arrays (jl_pm_xi_rows,
 * jl_pm_update_r, jl_sm_mw_add on a row with index 0), so a solve over rows
 * gives the bits of one over the arrays, only faster. */
#ifndef JL_PROX_ROWS_H
#define JL_PROX_ROWS_H

#include "contact_setup.h"
#include "prox_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One contact's constants: c, the frame (n, t1, t2), r_K x d and
 * I_K^-1 (r_K x d) per side, 1/m per side, the prox steps r = alpha / diag
 * of the attempt (N, T), mu, the dynamic bodies (-1: static). 432 bytes. */
typedef struct jl_prox_row {
  int ka, kb;              /* first: the du loads wait for them */
  double mu;
  double r[2];
  double c[3];
  double frame[9];
  double rx[18];
  double irx[18];
  double im[2];
} jl_prox_row;

/* rows[e] for e in [lo, hi) from contact order[e] of p (order NULL: contact
 * e), with the prox steps of relaxation alpha. */
void jl_prox_rows_pack(const jl_contact_problem *p, const int *order, double alpha, int lo, int hi,
                       jl_prox_row *rows);
/* The prox steps of rows [lo, hi) for another alpha (a restart). */
void jl_prox_rows_set_alpha(const jl_contact_problem *p, const int *order, double alpha, int lo,
                            int hi, jl_prox_row *rows);

/* xi of a row from its bodies' du (6 per body): jl_pm_xi_mf's bits. */
static inline void jl_prox_row_xi(const jl_prox_row *r, const double *du, double xi[3]) {
  int a = r->ka, b = r->kb;
  jl_pm_xi_rows(0, r->c, r->frame, r->rx, a >= 0, du + 6 * (size_t)(a >= 0 ? a : 0), b >= 0,
                du + 6 * (size_t)(b >= 0 ? b : 0), xi);
}

/* One Gauss-Seidel update of a row in place: lam (its 3 impulses) and the
 * du rows of its dynamic bodies; returns the residual, clears *ok as
 * jl_pm_update does. The bits of jl_pm_sor_contact on the arrays. */
static inline double jl_prox_row_sor(const jl_prox_row *r, double tol_rel, double tol_abs,
                                     double *lam, double *du, int *ok) {
  double xi[3], out[3];
  jl_prox_row_xi(r, du, xi);
  double old[3] = {lam[0], lam[1], lam[2]};
  double res = jl_pm_update_r(xi, old, r->r[0], r->r[1], r->mu, tol_rel, tol_abs, out, ok);
  double d[3] = {out[0] - old[0], out[1] - old[1], out[2] - old[2]};
  if (r->ka >= 0) jl_sm_mw_add(r->frame, r->irx, r->im, 0, 0, d, du + 6 * (size_t)r->ka);
  if (r->kb >= 0) jl_sm_mw_add(r->frame, r->irx, r->im, 0, 1, d, du + 6 * (size_t)r->kb);
  lam[0] = out[0];
  lam[1] = out[1];
  lam[2] = out[2];
  return res;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* Two contacts' updates at once, one per SSE2 lane: jl_prox_row_sor on
 * rows r0 and r1 of one colour (no dynamic body in common, neither with the
 * same body on both sides), with every lane doing the scalar path's
 * operations in its order (-ffp-contract=off: nothing fused; a static side's
 * terms are computed on zeros and dropped by a select, so they add
 * nothing, not even a signed zero), so each contact gets the scalar bits.
 * *res and *ok collect both as two scalar calls would (max with non-finite
 * as infinity, AND: the same in any order). */
#define JL_PROX_ROW_PAIRS 1

static inline __m128d jl_pr_ld(const double *x0, const double *x1) {
  return _mm_loadh_pd(_mm_load_sd(x0), x1);
}
static inline __m128d jl_pr_sel(__m128d m, __m128d x, __m128d y) {
  return _mm_or_pd(_mm_and_pd(m, x), _mm_andnot_pd(m, y));
}
static inline __m128d jl_pr_mask(int l0, int l1) {
  return _mm_castsi128_pd(_mm_set_epi64x(l1 ? -1 : 0, l0 ? -1 : 0));
}

/* Row d of W_iK^T u for side `side` (jl_sm_w_row_dot before its sign). */
static inline __m128d jl_pr_dot(const jl_prox_row *r0, const jl_prox_row *r1, int side, int d,
                                const __m128d u[6]) {
  const double *e0 = r0->frame + 3 * d, *e1 = r1->frame + 3 * d;
  const double *q0 = r0->rx + 9 * side + 3 * d, *q1 = r1->rx + 9 * side + 3 * d;
  __m128d v = _mm_mul_pd(jl_pr_ld(e0, e1), u[0]);
  v = _mm_add_pd(v, _mm_mul_pd(jl_pr_ld(e0 + 1, e1 + 1), u[1]));
  v = _mm_add_pd(v, _mm_mul_pd(jl_pr_ld(e0 + 2, e1 + 2), u[2]));
  v = _mm_add_pd(v, _mm_mul_pd(jl_pr_ld(q0, q1), u[3]));
  v = _mm_add_pd(v, _mm_mul_pd(jl_pr_ld(q0 + 1, q1 + 1), u[4]));
  return _mm_add_pd(v, _mm_mul_pd(jl_pr_ld(q0 + 2, q1 + 2), u[5]));
}

/* The six terms M^-1 W lam of side `side` (jl_sm_mw_comp_rows), into u. */
static inline void jl_pr_terms(const jl_prox_row *r0, const jl_prox_row *r1, int side,
                               const __m128d d[3], __m128d u[6]) {
  const __m128d sign = _mm_set1_pd(-0.0);
  __m128d im = jl_pr_ld(r0->im + side, r1->im + side);
  if (!side) im = _mm_xor_pd(im, sign);
  for (int c = 0; c < 3; ++c) {
    const double *e0 = r0->frame, *e1 = r1->frame;
    __m128d t = _mm_mul_pd(jl_pr_ld(e0 + c, e1 + c), d[0]);
    t = _mm_add_pd(t, _mm_mul_pd(jl_pr_ld(e0 + 3 + c, e1 + 3 + c), d[1]));
    t = _mm_add_pd(t, _mm_mul_pd(jl_pr_ld(e0 + 6 + c, e1 + 6 + c), d[2]));
    u[c] = _mm_mul_pd(im, t);
  }
  for (int k = 0; k < 3; ++k) {
    const double *i0 = r0->irx + 9 * side, *i1 = r1->irx + 9 * side;
    __m128d t = _mm_mul_pd(jl_pr_ld(i0 + k, i1 + k), d[0]);
    t = _mm_add_pd(t, _mm_mul_pd(jl_pr_ld(i0 + 3 + k, i1 + 3 + k), d[1]));
    t = _mm_add_pd(t, _mm_mul_pd(jl_pr_ld(i0 + 6 + k, i1 + 6 + k), d[2]));
    u[3 + k] = side ? t : _mm_xor_pd(t, sign);
  }
}

/* u += M^-1 W d for side `side` (jl_sm_mw_add). */
static inline void jl_pr_mw_add(const jl_prox_row *r0, const jl_prox_row *r1, int side,
                                const __m128d d[3], __m128d u[6]) {
  __m128d t[6];
  jl_pr_terms(r0, r1, side, d, t);
  for (int c = 0; c < 6; ++c) u[c] = _mm_add_pd(u[c], t[c]);
}

/* xi of both rows from their bodies' du rows ua, ub (zero on a static
 * side, ha, hb: the dynamic sides): jl_pm_xi_rows. */
static inline void jl_pr_xi(const jl_prox_row *r0, const jl_prox_row *r1, __m128d ha,
                            const __m128d ua[6], __m128d hb, const __m128d ub[6], __m128d xi[3]) {
  const __m128d sign = _mm_set1_pd(-0.0);
  for (int d = 0; d < 3; ++d) {
    __m128d x = jl_pr_ld(r0->c + d, r1->c + d);
    x = jl_pr_sel(ha, _mm_add_pd(x, _mm_xor_pd(jl_pr_dot(r0, r1, 0, d, ua), sign)), x);
    xi[d] = jl_pr_sel(hb, _mm_add_pd(x, jl_pr_dot(r0, r1, 1, d, ub)), x);
  }
}

/* The du rows of both rows' sides, zero on a static side (mask h*). */
/* A static side's du row: zeros, so its lane reads nothing another thread
 * of the colour may be writing (body 0's row would be a data race, though
 * masked off). */
static const double jl_pr_no_du[6] = {0, 0, 0, 0, 0, 0};

static inline void jl_pr_load_du(const double *du, int a0, int a1, int b0, int b1, __m128d *ha,
                                 __m128d ua[6], __m128d *hb, __m128d ub[6]) {
  const double *ua0 = a0 >= 0 ? du + 6 * (size_t)a0 : jl_pr_no_du;
  const double *ua1 = a1 >= 0 ? du + 6 * (size_t)a1 : jl_pr_no_du;
  const double *ub0 = b0 >= 0 ? du + 6 * (size_t)b0 : jl_pr_no_du;
  const double *ub1 = b1 >= 0 ? du + 6 * (size_t)b1 : jl_pr_no_du;
  *ha = jl_pr_mask(a0 >= 0, a1 >= 0);
  *hb = jl_pr_mask(b0 >= 0, b1 >= 0);
  for (int m = 0; m < 6; ++m) {
    ua[m] = _mm_and_pd(*ha, jl_pr_ld(ua0 + m, ua1 + m));
    ub[m] = _mm_and_pd(*hb, jl_pr_ld(ub0 + m, ub1 + m));
  }
}

/* jl_pm_update_r on both lanes: old (o) -> out (x), with *res and *ok as
 * two scalar calls leave them. */
static inline void jl_pr_update(const jl_prox_row *r0, const jl_prox_row *r1, const __m128d xi[3],
                                const __m128d o[3], double tol_rel, double tol_abs, __m128d x[3],
                                double *res, int *ok) {
  const __m128d zero = _mm_setzero_pd();
  __m128d rn = jl_pr_ld(r0->r, r1->r), rt = jl_pr_ld(r0->r + 1, r1->r + 1);
  __m128d ln = _mm_sub_pd(o[0], _mm_mul_pd(rn, xi[0]));
  ln = _mm_and_pd(_mm_cmpgt_pd(ln, zero), ln);
  __m128d t1 = _mm_sub_pd(o[1], _mm_mul_pd(rt, xi[1])), t2 = _mm_sub_pd(o[2], _mm_mul_pd(rt, xi[2]));
  __m128d lim = _mm_mul_pd(jl_pr_ld(&r0->mu, &r1->mu), ln);
  __m128d tt = _mm_sqrt_pd(_mm_add_pd(_mm_mul_pd(t1, t1), _mm_mul_pd(t2, t2)));
  __m128d over = _mm_cmpgt_pd(tt, lim);
  __m128d sc = _mm_and_pd(_mm_cmpgt_pd(tt, zero), _mm_div_pd(lim, tt));
  x[0] = ln;
  x[1] = jl_pr_sel(over, _mm_mul_pd(t1, sc), t1);
  x[2] = jl_pr_sel(over, _mm_mul_pd(t2, sc), t2);
  double out[2][3], old[2][3];
  for (int k = 0; k < 3; ++k) {
    _mm_storel_pd(&out[0][k], x[k]);
    _mm_storeh_pd(&out[1][k], x[k]);
    _mm_storel_pd(&old[0][k], o[k]);
    _mm_storeh_pd(&old[1][k], o[k]);
  }
  for (int l = 0; l < 2; ++l)
    for (int k = 0; k < 3; ++k) {
      double ad = fabs(out[l][k] - old[l][k]);
      if (!(ad <= fabs(old[l][k]) * tol_rel + tol_abs)) *ok = 0;
      if (!(ad <= *res)) *res = isfinite(ad) ? ad : INFINITY;
    }
}

static inline void jl_prox_row_sor2(const jl_prox_row *r0, const jl_prox_row *r1, double tol_rel,
                                    double tol_abs, double *lam0, double *lam1, double *du,
                                    double *res, int *ok) {
  int a0 = r0->ka, a1 = r1->ka, b0 = r0->kb, b1 = r1->kb;
  double *ua0 = du + 6 * (size_t)(a0 >= 0 ? a0 : 0), *ua1 = du + 6 * (size_t)(a1 >= 0 ? a1 : 0);
  double *ub0 = du + 6 * (size_t)(b0 >= 0 ? b0 : 0), *ub1 = du + 6 * (size_t)(b1 >= 0 ? b1 : 0);
  __m128d ha, hb, ua[6], ub[6], xi[3], x[3];
  jl_pr_load_du(du, a0, a1, b0, b1, &ha, ua, &hb, ub);
  jl_pr_xi(r0, r1, ha, ua, hb, ub, xi);
  __m128d o[3] = {jl_pr_ld(lam0, lam1), jl_pr_ld(lam0 + 1, lam1 + 1), jl_pr_ld(lam0 + 2, lam1 + 2)};
  jl_pr_update(r0, r1, xi, o, tol_rel, tol_abs, x, res, ok);
  __m128d dl[3] = {_mm_sub_pd(x[0], o[0]), _mm_sub_pd(x[1], o[1]), _mm_sub_pd(x[2], o[2])};
  jl_pr_mw_add(r0, r1, 0, dl, ua);
  jl_pr_mw_add(r0, r1, 1, dl, ub);
  for (int m = 0; m < 6; ++m) {
    if (a0 >= 0) _mm_storel_pd(ua0 + m, ua[m]);
    if (a1 >= 0) _mm_storeh_pd(ua1 + m, ua[m]);
    if (b0 >= 0) _mm_storel_pd(ub0 + m, ub[m]);
    if (b1 >= 0) _mm_storeh_pd(ub1 + m, ub[m]);
  }
  for (int k = 0; k < 3; ++k) {
    _mm_storel_pd(lam0 + k, x[k]);
    _mm_storeh_pd(lam1 + k, x[k]);
  }
}
#endif

#ifdef __cplusplus
}
#endif

#endif
