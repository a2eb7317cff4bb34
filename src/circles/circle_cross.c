#include "circle_cross.h"

#include <math.h>
#include <stdlib.h>

#include "math3d.h"

static double jl_cross_u01(jl_rng *rng) {
  uint32_t a = jl_rng_u32(rng), b = jl_rng_u32(rng);
  return jl_u01_from_u32(a, b);
}

/* Offers (x, y, distance from the cut), farthest first; ties by position,
 * so the order never depends on the sort's own. */
static int jl_cross_cmp(const void *pa, const void *pb) {
  const double *a = pa, *b = pb;
  if (a[2] != b[2]) return a[2] > b[2] ? -1 : 1;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

void jl_circle_cross_child(const jl_circle_packing *a, const jl_circle_packing *b,
                           const jl_circle_sorted *s, jl_rng *rng, double *tmp, double *x,
                           double *y) {
  const int n = s->n;
  const double R = a->R, f = b->R > 0.0 ? a->R / b->R : 1.0;
  /* the turn of b onto a: maximize sum w a . rot(b), w = r^2, over the
   * circles of unique radius, plain and mirrored (y -> -y) */
  double C = 0.0, S = 0.0, Cm = 0.0, Sm = 0.0;
  for (int k = 0; k < n; ++k) {
    if ((k > 0 && s->r[k - 1] == s->r[k]) || (k + 1 < n && s->r[k + 1] == s->r[k])) continue;
    int i = s->orig[k];
    double w = s->r[k] * s->r[k];
    double ax = a->x[i], ay = a->y[i], bx = b->x[i] * f, by = b->y[i] * f;
    C += w * (ax * bx + ay * by);
    S += w * (ay * bx - ax * by);
    Cm += w * (ax * bx - ay * by);
    Sm += w * (ay * bx + ax * by);
  }
  double ang, mir;
  if (C * C + S * S > 0.0 || Cm * Cm + Sm * Sm > 0.0) {
    mir = Cm * Cm + Sm * Sm > C * C + S * S ? -1.0 : 1.0;
    ang = mir < 0.0 ? atan2(Sm, Cm) : atan2(S, C);
  } else {
    ang = 2.0 * JL_PI * jl_cross_u01(rng);
    mir = jl_cross_u01(rng) < 0.5 ? -1.0 : 1.0;
  }
  const double ca = cos(ang), sa = sin(ang);
  /* the cut: a on the side u . p < t, b on the other */
  double phi = 2.0 * JL_PI * jl_cross_u01(rng);
  double ux = cos(phi), uy = sin(phi), t = (jl_cross_u01(rng) - 0.5) * R;
  for (int k0 = 0; k0 < n;) {
    int k1 = k0 + 1;
    while (k1 < n && s->r[k1] == s->r[k0]) ++k1;
    int cnt = 0;
    for (int k = k0; k < k1; ++k) {
      int i = s->orig[k];
      double px = a->x[i], py = a->y[i], d = px * ux + py * uy - t;
      if (d < 0.0) { tmp[3 * cnt] = px; tmp[3 * cnt + 1] = py; tmp[3 * cnt + 2] = -d; ++cnt; }
      double bx = b->x[i] * f, by = b->y[i] * f * mir;
      px = ca * bx - sa * by;
      py = sa * bx + ca * by;
      d = px * ux + py * uy - t;
      if (d >= 0.0) { tmp[3 * cnt] = px; tmp[3 * cnt + 1] = py; tmp[3 * cnt + 2] = d; ++cnt; }
    }
    int m = k1 - k0;
    if (cnt > m) qsort(tmp, (size_t)cnt, 3 * sizeof(double), jl_cross_cmp);
    for (int k = k0; k < k1; ++k) {
      int j = k - k0;
      if (j < cnt) {
        x[k] = tmp[3 * j];
        y[k] = tmp[3 * j + 1];
      } else {
        double lim = fmax(R - s->r[k], 0.0), px, py;
        do {
          px = 2.0 * jl_cross_u01(rng) - 1.0;
          py = 2.0 * jl_cross_u01(rng) - 1.0;
        } while (px * px + py * py > 1.0);
        x[k] = px * lim;
        y[k] = py * lim;
      }
    }
    k0 = k1;
  }
}
