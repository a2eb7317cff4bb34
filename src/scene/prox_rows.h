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

#ifdef __cplusplus
}
#endif

#endif
