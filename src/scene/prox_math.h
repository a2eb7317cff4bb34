/* Per-contact and per-body arithmetic of the prox solvers and their stop
 * test: the one source for prox_solver.c (JOR and SOR, on G or
 * matrix-free; its JOR on one thread is the device JOR's CPU twin) and the
 * CUDA JOR kernels (kernels/scene/scene_prox.cu), so all give the same bits.
 * Arrays are those of jl_contact_problem (contact_setup.h), the
 * reference's and the device's. */
#ifndef JL_PROX_MATH_H
#define JL_PROX_MATH_H

#include <math.h>
#include <stddef.h>

#include "hd.h"
#include "prox_solver.h"
#include "setup_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* xi_i = c_i + sum_e G_ie lam_e over row i of the block CSR. */
JL_HD static inline void jl_pm_xi_g(int i, const double *c, const int *rowptr, const int *col,
                                    const double *blocks, const double *lam, double xi[3]) {
  const double *ci = c + 3 * (size_t)i;
  xi[0] = ci[0];
  xi[1] = ci[1];
  xi[2] = ci[2];
  for (int e = rowptr[i]; e < rowptr[i + 1]; ++e) {
    const double *g = blocks + 9 * (size_t)e;
    const double *l = lam + 3 * (size_t)col[e];
    xi[0] += g[0] * l[0] + g[1] * l[1] + g[2] * l[2];
    xi[1] += g[3] * l[0] + g[4] * l[1] + g[5] * l[2];
    xi[2] += g[6] * l[0] + g[7] * l[1] + g[8] * l[2];
  }
}

/* xi_i = c_i + W_ia^T ua + W_ib^T ub from the two bodies' du rows; has_a /
 * has_b = 0 for a static side. Flags, not NULL rows: on the device a row
 * pointer chosen between a local array and NULL pushes the array onto the
 * stack (the SOR update ran 20% slower that way). */
JL_HD static inline void jl_pm_xi_rows(int i, const double *c, const double *frame,
                                       const double *rx, int has_a, const double *ua,
                                       int has_b, const double *ub, double xi[3]) {
  const double *ci = c + 3 * (size_t)i;
  xi[0] = ci[0];
  xi[1] = ci[1];
  xi[2] = ci[2];
  for (int d = 0; d < 3; ++d) {
    if (has_a) xi[d] += jl_sm_w_row_dot(frame, rx, i, 0, d, ua);
    if (has_b) xi[d] += jl_sm_w_row_dot(frame, rx, i, 1, d, ub);
  }
}

/* Matrix-free: xi_i = c_i + W_ia^T du_a + W_ib^T du_b (du: 6 per body). */
JL_HD static inline void jl_pm_xi_mf(int i, const double *c, const int *ka, const int *kb,
                                     const double *frame, const double *rx, const double *du,
                                     double xi[3]) {
  int a = ka[i], b = kb[i];
  jl_pm_xi_rows(i, c, frame, rx, a >= 0, du + 6 * (size_t)(a >= 0 ? a : 0), b >= 0,
                du + 6 * (size_t)(b >= 0 ? b : 0), xi);
}

/* du_k = sum over body k's contacts (ascending, body CSR) of (M^-1 W_ik) lam_i:
 * a fixed summation order, so the per-body sum needs no atomics. */
JL_HD static inline void jl_pm_du_body(int k, const int *body_ptr, const int *body_contact,
                                       const int *ka, const double *frame, const double *irx,
                                       const double *im, const double *lam, double out[6]) {
  double acc[6] = {0, 0, 0, 0, 0, 0};
  for (int e = body_ptr[k]; e < body_ptr[k + 1]; ++e) {
    int i = body_contact[e];
    jl_sm_mw_add(frame, irx, im, i, ka[i] == k ? 0 : 1, lam + 3 * (size_t)i, acc);
  }
  for (int m = 0; m < 6; ++m) out[m] = acc[m];
}

/* acc0 plus component c of body k's contact sum, in the order of
 * jl_pm_du_body (acc0 = 0: its component c, bit for bit). */
JL_HD static inline double jl_pm_du_body_comp(int k, int c, const int *body_ptr,
                                              const int *body_contact, const int *ka,
                                              const double *frame, const double *irx,
                                              const double *im, const double *lam,
                                              double acc0) {
  double acc = acc0;
  for (int e = body_ptr[k]; e < body_ptr[k + 1]; ++e) {
    int i = body_contact[e];
    acc += jl_sm_mw_comp(frame, irx, im, i, ka[i] == k ? 0 : 1, lam + 3 * (size_t)i, c);
  }
  return acc;
}

/* One prox update of a contact from old (its 3 impulses) into out with the
 * prox steps r_n (normal) and r_t (tangent); returns
 * its residual max |out - old| (non-finite -> INFINITY) and sets *ok = 0
 * when a component misses |d| <= |old| tol_rel + tol_abs. */
JL_HD static inline double jl_pm_update_r(const double xi[3], const double old[3], double r_n,
                                          double r_t, double mu, double tol_rel, double tol_abs,
                                          double out[3], int *ok) {
  jl_prox_contact(xi, old, r_n, r_t, mu, out);
  double res = 0.0;
  for (int k = 0; k < 3; ++k) {
    double ad = fabs(out[k] - old[k]);
    if (!(ad <= fabs(old[k]) * tol_rel + tol_abs)) *ok = 0;
    if (!(ad <= res)) res = isfinite(ad) ? ad : INFINITY;
  }
  return res;
}

/* The same with the prox steps r_n = alpha / diag[0], r_t = alpha / diag[1]
 * computed here (the CPU's packed rows hold them: prox_rows.h). */
JL_HD static inline double jl_pm_update(const double xi[3], const double old[3], double alpha,
                                        const double diag[2], double mu, double tol_rel,
                                        double tol_abs, double out[3], int *ok) {
  return jl_pm_update_r(xi, old, alpha / diag[0], alpha / diag[1], mu, tol_rel, tol_abs, out, ok);
}

/* One matrix-free Gauss-Seidel update of contact i in place (the device
 * SOR and its twin, step_twin.c): xi from du, the prox update, then du of
 * both dynamic bodies moved by M^-1 W (new - old). Contacts of one colour
 * share no dynamic body, so a colour's updates commute bit for bit. */
JL_HD static inline double jl_pm_sor_contact(int i, const double *c, const int *ka,
                                             const int *kb, const double *frame,
                                             const double *rx, const double *irx,
                                             const double *im, const double *diag,
                                             const double *mu, double alpha, double tol_rel,
                                             double tol_abs, double *lam, double *du, int *ok) {
  /* Every load before the first store: a store through du or lam could
   * alias the problem's arrays, so a load after it would wait for it. Loaded
   * first, a contact's reads go out together (on the device: two rounds of
   * memory latency, the bodies' indices and then their du rows, instead of
   * a chain). The arithmetic is jl_pm_xi_rows' and jl_sm_mw_add's. */
  int a = ka[i], b = kb[i];
  double ua[6] = {0, 0, 0, 0, 0, 0}, ub[6] = {0, 0, 0, 0, 0, 0};
  if (a >= 0)
    for (int m = 0; m < 6; ++m) ua[m] = du[6 * (size_t)a + m];
  if (b >= 0)
    for (int m = 0; m < 6; ++m) ub[m] = du[6 * (size_t)b + m];
  double xi[3];
  jl_pm_xi_rows(i, c, frame, rx, a >= 0, ua, b >= 0, ub, xi);
  double *l = lam + 3 * (size_t)i;
  double old[3] = {l[0], l[1], l[2]}, out[3];
  double res = jl_pm_update(xi, old, alpha, diag + 2 * (size_t)i, mu[i], tol_rel, tol_abs, out, ok);
  double d[3] = {out[0] - old[0], out[1] - old[1], out[2] - old[2]};
  if (a >= 0) jl_sm_mw_add(frame, irx, im, i, 0, d, ua);
  if (b >= 0) {
    /* one body on both sides (never made by the narrow phase): side b adds
     * to the row side a left, as a sweep of the two sides in turn would */
    if (b == a)
      for (int m = 0; m < 6; ++m) ub[m] = ua[m];
    jl_sm_mw_add(frame, irx, im, i, 1, d, ub);
  }
  if (a >= 0)
    for (int m = 0; m < 6; ++m) du[6 * (size_t)a + m] = ua[m];
  if (b >= 0)
    for (int m = 0; m < 6; ++m) du[6 * (size_t)b + m] = ub[m];
  l[0] = out[0];
  l[1] = out[1];
  l[2] = out[2];
  return res;
}

/* The stopping rule of prox_solver.c after one iteration with residual res
 * (max over contacts) and ok (all within tolerance). */
enum { JL_PM_RUN = 0, JL_PM_STOP = 1, JL_PM_RESTART = 2 };

typedef struct jl_pm_state {
  int state;               /* JL_PM_RUN | STOP | RESTART */
  int iterations, converged, restarts, grow;
  double residual, prev, min_res, alpha;
  double theta;            /* APGD: Nesterov's t_k of the attempt (1 at its start) */
} jl_pm_state;

JL_HD static inline void jl_pm_state_init(jl_pm_state *s, double alpha) {
  s->state = JL_PM_RUN;
  s->iterations = s->converged = s->restarts = s->grow = 0;
  s->residual = 0.0;
  s->prev = INFINITY;
  s->min_res = INFINITY;
  s->alpha = alpha;
  s->theta = 1.0;
}

/* APGD's momentum for the iteration about to end: beta_k = (t_k - 1) /
 * t_{k+1} with t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2 (Beck and Teboulle's
 * FISTA sequence; 0 at an attempt's first iteration and after a momentum
 * restart). jl_pm_decide moves theta on. */
JL_HD static inline double jl_pm_theta_next(double t) { return 0.5 * (1.0 + sqrt(1.0 + 4.0 * t * t)); }
JL_HD static inline double jl_pm_beta(const jl_pm_state *s) {
  return (s->theta - 1.0) / jl_pm_theta_next(s->theta);
}

/* APGD's extrapolation of contact i: y = x + beta (x - x_old), x the new
 * iterate. */
JL_HD static inline void jl_pm_extrapolate(const double x[3], const double x_old[3], double beta,
                                           double y[3]) {
  for (int k = 0; k < 3; ++k) y[k] = x[k] + beta * (x[k] - x_old[k]);
}

JL_HD static inline void jl_pm_decide(jl_pm_state *s, double res, int ok, int max_iter) {
  int rose = res > s->prev;
  s->iterations++;
  s->residual = res;
  s->grow = rose ? s->grow + 1 : 0;
  s->prev = res;
  if (res < s->min_res) s->min_res = res;
  if (ok && isfinite(res)) {
    s->converged = 1;
    s->state = JL_PM_STOP;
  } else if ((!isfinite(res) ||
              (s->grow >= JL_PROX_DIVERGE_RUN && res > JL_PROX_DIVERGE_FACTOR * s->min_res)) &&
             s->restarts < JL_PROX_MAX_RESTARTS) {
    s->restarts++;
    s->alpha *= 0.5;
    s->theta = 1.0;
    s->grow = 0;
    s->prev = INFINITY;
    s->min_res = INFINITY;
    s->state = JL_PM_RESTART;
  } else if (s->iterations >= max_iter) {
    s->state = JL_PM_STOP;
  } else {
    s->state = JL_PM_RUN;
    /* APGD's adaptive restart (O'Donoghue and Candes 2015, with the max
     * step in place of the objective): momentum starts over whenever the
     * residual grows, or the ripples of plain FISTA keep it from converging
     * (and trip the divergence test) */
    s->theta = rose ? 1.0 : jl_pm_theta_next(s->theta);
  }
}

#ifdef __cplusplus
}
#endif

#endif
