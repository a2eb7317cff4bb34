/* Serial CPU twin of kernels/circles/circle_spread.cu: jl_relax_run itself on one
 * packing, with the stall test switched off. */
#include "circle_spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "circle_relax.h"

int jl_spread_relax_cpu(const double *r, double *x, double *y, int n, double Rc, double tol,
                        int steps, int *legal_out, double *R_out) {
  if (legal_out) *legal_out = 0;
  if (n < 1) return -1;
  double *mem = malloc(sizeof(double) * JL_RELAX_WS_DOUBLES(n));
  if (!mem) return -1;
  jl_relax_ws w;
  memset(&w, 0, sizeof w);
  jl_relax_ws_bind(&w, mem, n);
  memcpy(w.x, x, sizeof(double) * (size_t)n);
  memcpy(w.y, y, sizeof(double) * (size_t)n);
  memcpy(w.r, r, sizeof(double) * (size_t)n);
  jl_relax_params p;
  memset(&p, 0, sizeof p);
  p.n = n;
  p.tol = tol;
  p.area_weighted = 0;
  /* worst > INFINITY * checkpoint never holds (INFINITY * 0 is NaN) */
  p.stall_ratio = INFINITY;
  int legal = jl_relax_run(&w, &p, Rc, steps < 0 ? 0 : steps);
  memcpy(x, w.x, sizeof(double) * (size_t)n);
  memcpy(y, w.y, sizeof(double) * (size_t)n);
  if (R_out) *R_out = jl_relax_enclosing(&w, n);
  if (legal_out) *legal_out = legal;
  int done = (int)w.steps;
  free(mem);
  return done;
}

void jl_spread_random_start(int n, uint64_t seed, double *r, double *x, double *y) {
  jl_rng g;
  jl_rng_init(&g, seed, 0, 0);
  double area = 0.0;
  for (int i = 0; i < n; ++i) {
    r[i] = (double)(i + 1);
    area += r[i] * r[i];
  }
  jl_rng_square(&g, 0.8 * sqrt(area), n, x, y);
}
