/* The exact check every reported packing passes: long double geometry,
 * sharing no code with the search, so a bug there cannot hide here. */
#include "circles.h"

#include <math.h>

static int jl_finite_l(long double v) { return isfinite(v); }

/* R = max |c_i| + r_i, and the circle furthest outside the stated R. */
static int jl_check_container(const jl_circle_packing *pk, jl_circle_check *out) {
  int ok = isfinite(pk->R);
  long double R = 0.0L, excess = -INFINITY;
  for (int i = 0; i < pk->n; ++i) {
    long double x = pk->x[i], y = pk->y[i], r = pk->r[i];
    if (!jl_finite_l(x) || !jl_finite_l(y) || !jl_finite_l(r) || !(r > 0.0L)) ok = 0;
    long double reach = hypotl(x, y) + r;
    if (!(reach <= R)) R = reach;
    long double e = reach - (long double)pk->R;
    if (!(e <= excess)) { excess = e; out->excess_i = i; }
  }
  out->R = R;
  out->max_excess = excess;
  return ok;
}

/* The deepest overlap over all pairs (negative: the closest gap). */
static void jl_check_pairs(const jl_circle_packing *pk, jl_circle_check *out) {
  long double worst = -INFINITY;
  for (int i = 0; i < pk->n; ++i)
    for (int j = i + 1; j < pk->n; ++j) {
      long double dx = (long double)pk->x[i] - pk->x[j], dy = (long double)pk->y[i] - pk->y[j];
      long double o = (long double)pk->r[i] + pk->r[j] - hypotl(dx, dy);
      if (!(o <= worst)) { worst = o; out->overlap_i = i; out->overlap_j = j; }
    }
  /* No pairs: report 0 rather than -inf, which JSON cannot hold. */
  out->max_overlap = pk->n < 2 ? 0.0L : worst;
}

/* Fills out and returns JL_OK when legal, JL_ERR_NOT_LEGAL otherwise. */
int jl_circle_check_packing(const jl_circle_packing *pk, double rel_tol, jl_circle_check *out) {
  out->R = 0.0L;
  out->max_overlap = 0.0L;
  out->max_excess = 0.0L;
  out->overlap_i = out->overlap_j = out->excess_i = -1;
  out->legal = 0;
  if (!pk || pk->n < 1 || !pk->x || !pk->y || !pk->r) return JL_ERR_NOT_LEGAL;
  int ok = jl_check_container(pk, out);
  jl_check_pairs(pk, out);
  long double tol = (long double)rel_tol * out->R;
  ok = ok && jl_finite_l(out->R) && jl_finite_l(out->max_overlap) && jl_finite_l(out->max_excess);
  out->legal = ok && out->max_overlap <= tol && out->max_excess <= tol;
  return out->legal ? JL_OK : JL_ERR_NOT_LEGAL;
}
