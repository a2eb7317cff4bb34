/* A test-local exact check for block packings in a cuboid trunk [lo, hi]:
 * every corner inside the cuboid and no two blocks overlapping (15-axis
 * separation in long double). Shares no code with the search. */
#ifndef JL_TRUNK_TEST_CHECK_H
#define JL_TRUNK_TEST_CHECK_H

#include <math.h>

#include "trunk.h"

typedef struct cuboid_check {
  double lo[3], hi[3];
  double half[3];          /* half edges of the block */
  int calls;
  double tol;              /* legal up to this depth, mm (0: none; turned blocks'
                              quaternions reach walls with rounding errors) */
} cuboid_check;

static void cc_axes(const double *q, long double ax[3][3]) {
  long double w = q[0], x = q[1], y = q[2], z = q[3];
  /* columns of the rotation matrix */
  ax[0][0] = 1 - 2 * (y * y + z * z); ax[0][1] = 2 * (x * y + w * z); ax[0][2] = 2 * (x * z - w * y);
  ax[1][0] = 2 * (x * y - w * z); ax[1][1] = 1 - 2 * (x * x + z * z); ax[1][2] = 2 * (y * z + w * x);
  ax[2][0] = 2 * (x * z + w * y); ax[2][1] = 2 * (y * z - w * x); ax[2][2] = 1 - 2 * (x * x + y * y);
}

static long double cc_dot(const long double *a, const long double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Overlap of the two blocks' projections on axis L (> 0: they overlap on L). */
static long double cc_overlap(const long double *L, const double *ca, long double A[3][3],
                              const double *cb, long double B[3][3], const double *h) {
  long double ra = 0, rb = 0, t[3] = {cb[0] - (long double)ca[0], cb[1] - (long double)ca[1],
                                      cb[2] - (long double)ca[2]};
  for (int k = 0; k < 3; ++k) {
    ra += h[k] * fabsl(cc_dot(A[k], L));
    rb += h[k] * fabsl(cc_dot(B[k], L));
  }
  return ra + rb - fabsl(cc_dot(t, L));
}

static int cuboid_check_fn(void *ctx, const jl_block_packing *p, double *worst) {
  cuboid_check *cc = ctx;
  cc->calls++;
  long double bad = 0;
  for (int i = 0; i < p->count; ++i) {
    long double A[3][3];
    cc_axes(p->quat + 4 * i, A);
    for (int d = 0; d < 3; ++d) {
      long double e = 0;
      for (int k = 0; k < 3; ++k) e += cc->half[k] * fabsl(A[k][d]);
      long double lo = p->centre[3 * i + d] - e - cc->lo[d];
      long double hi = cc->hi[d] - (p->centre[3 * i + d] + e);
      if (-lo > bad) bad = -lo;
      if (-hi > bad) bad = -hi;
    }
    for (int j = i + 1; j < p->count; ++j) {
      long double B[3][3];
      cc_axes(p->quat + 4 * j, B);
      long double sep = INFINITY;  /* smallest overlap over the axes */
      for (int k = 0; k < 3; ++k) {
        long double o = cc_overlap(A[k], p->centre + 3 * i, A, p->centre + 3 * j, B, cc->half);
        if (o < sep) sep = o;
        o = cc_overlap(B[k], p->centre + 3 * i, A, p->centre + 3 * j, B, cc->half);
        if (o < sep) sep = o;
        for (int m = 0; m < 3; ++m) {
          long double L[3] = {A[k][1] * B[m][2] - A[k][2] * B[m][1],
                              A[k][2] * B[m][0] - A[k][0] * B[m][2],
                              A[k][0] * B[m][1] - A[k][1] * B[m][0]};
          long double len = sqrtl(cc_dot(L, L));
          if (len < 1e-9L) continue;
          for (int d = 0; d < 3; ++d) L[d] /= len;
          o = cc_overlap(L, p->centre + 3 * i, A, p->centre + 3 * j, B, cc->half);
          if (o < sep) sep = o;
        }
      }
      if (sep > bad) bad = sep;
    }
  }
  *worst = (double)bad;
  return bad <= cc->tol;
}

#endif
