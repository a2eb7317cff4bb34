/* CPU twin of the device JOR prox (kernels/scene_prox.cu): the same
 * schedule and the same per-contact / per-body arithmetic (prox_math.h),
 * one thread; matrix-free, or on G when o->matrix_free is 0. */
#include <stdlib.h>
#include <string.h>

#include "prox_math.h"

static void jl_twin_du(const jl_contact_problem *p, const double *lam, double *du) {
  if (!du) return;  /* on G: no per-body velocity changes */
  for (int k = 0; k < p->nbodies; ++k)
    jl_pm_du_body(k, p->body_ptr, p->body_contact, p->ka, p->frame, p->irx, p->im, lam,
                  du + 6 * (size_t)k);
}

int jl_jor_twin_solve(const jl_contact_problem *p, const jl_prox_opts *o, double *lambda,
                      jl_prox_ws *ws, jl_prox_stats *st, jl_error *err) {
  memset(st, 0, sizeof *st);
  st->alpha = o->alpha;
  int n = p->n;
  if (n <= 0) {
    st->converged = 1;
    return JL_OK;
  }
  if (!(o->alpha > 0.0) || o->max_iter < 1)
    return jl_error_set(err, JL_ERR_INPUT, "solver: alpha must be > 0 and max_iter >= 1");
  for (int i = 0; i < n; ++i)
    if (!(p->diag[2 * i] > 0.0) || !(p->diag[2 * i + 1] > 0.0))
      return jl_error_set(err, JL_ERR_INTERNAL, "contact %d has no dynamic body", i);
  int on_g = !o->matrix_free;
  if (on_g && !p->has_g)
    return jl_error_set(err, JL_ERR_INTERNAL, "JOR on G without the Delassus matrix");
  int rc = jl_prox_ws_reserve(ws, n, p->nbodies, err);
  if (rc) return rc;
  double *du = on_g ? NULL : ws->du;
  memcpy(ws->init, lambda, 3 * sizeof(double) * (size_t)n);
  double *src = lambda, *dst = ws->lam2;
  jl_pm_state s;
  jl_pm_state_init(&s, o->alpha);
  jl_twin_du(p, src, du);
  while (s.state != JL_PM_STOP) {
    double res = 0.0;
    int ok = 1;
    for (int i = 0; i < n; ++i) {
      double xi[3];
      if (on_g)
        jl_pm_xi_g(i, p->c, p->rowptr, p->col, p->blocks, src, xi);
      else
        jl_pm_xi_mf(i, p->c, p->ka, p->kb, p->frame, p->rx, du, xi);
      double r = jl_pm_update(xi, src + 3 * (size_t)i, s.alpha, p->diag + 2 * (size_t)i, p->mu[i],
                              o->tol_rel, o->tol_abs, dst + 3 * (size_t)i, &ok);
      if (!(r <= res)) res = r;
    }
    jl_twin_du(p, dst, du);
    jl_pm_decide(&s, res, ok, o->max_iter);
    double *t = src;
    src = dst;
    dst = t;
    if (s.state == JL_PM_RESTART) {
      memcpy(src, ws->init, 3 * sizeof(double) * (size_t)n);
      jl_twin_du(p, src, du);
    }
  }
  if (src != lambda) memcpy(lambda, src, 3 * sizeof(double) * (size_t)n);
  st->iterations = s.iterations;
  st->residual = s.residual;
  st->converged = s.converged;
  st->restarts = s.restarts;
  st->alpha = s.alpha;
  return JL_OK;
}
