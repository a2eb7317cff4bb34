/* Packings: storage, the container radius, and the scaling legalizer. */
#include "circles.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int jl_circle_packing_init(jl_circle_packing *pk, int n, jl_error *err) {
  memset(pk, 0, sizeof *pk);
  if (n < 1) return jl_error_set(err, JL_ERR_INPUT, "a packing needs at least 1 circle, got %d", n);
  pk->x = calloc((size_t)n, sizeof *pk->x);
  pk->y = calloc((size_t)n, sizeof *pk->y);
  pk->r = calloc((size_t)n, sizeof *pk->r);
  if (!pk->x || !pk->y || !pk->r) {
    jl_circle_packing_free(pk);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for a packing of %d circles", n);
  }
  pk->n = n;
  return JL_OK;
}

void jl_circle_packing_free(jl_circle_packing *pk) {
  if (!pk) return;
  free(pk->x);
  free(pk->y);
  free(pk->r);
  memset(pk, 0, sizeof *pk);
}

int jl_circle_packing_copy(jl_circle_packing *dst, const jl_circle_packing *src, jl_error *err) {
  if (dst == src) return JL_OK;
  if (!dst->x || dst->n != src->n) {  /* reuse dst's arrays when they fit */
    jl_circle_packing_free(dst);
    int rc = jl_circle_packing_init(dst, src->n, err);
    if (rc) return rc;
  }
  size_t bytes = (size_t)src->n * sizeof(double);
  memcpy(dst->x, src->x, bytes);
  memcpy(dst->y, src->y, bytes);
  memcpy(dst->r, src->r, bytes);
  dst->R = src->R;
  return JL_OK;
}

double jl_circle_packing_update_R(jl_circle_packing *pk) {
  double R = 0.0;
  for (int i = 0; i < pk->n; ++i) {
    double d = sqrt(pk->x[i] * pk->x[i] + pk->y[i] * pk->y[i]) + pk->r[i];
    if (!(d <= R)) R = d; /* a NaN makes R NaN, so it cannot pass as legal */
  }
  pk->R = R;
  return R;
}

/* Coincident centres cannot be separated by scaling: move the later circle
 * of such a pair to touch the earlier one, in a direction fixed by its index
 * (golden-angle steps), so the result does not depend on anything else. */
static int jl_packing_unstack(jl_circle_packing *pk) {
  int moved = 0;
  for (int i = 0; i < pk->n; ++i)
    for (int j = i + 1; j < pk->n; ++j) {
      if (pk->x[i] != pk->x[j] || pk->y[i] != pk->y[j]) continue;
      double a = 2.399963229728653 * (double)(j + 1), s = pk->r[i] + pk->r[j];
      pk->x[j] = pk->x[i] + s * cos(a);
      pk->y[j] = pk->y[i] + s * sin(a);
      moved = 1;
    }
  return moved;
}

/* Largest (r_i + r_j) / d_ij over all pairs, at least 1. */
static double jl_packing_overlap_factor(const jl_circle_packing *pk) {
  double s = 1.0;
  for (int i = 0; i < pk->n; ++i)
    for (int j = i + 1; j < pk->n; ++j) {
      double dx = pk->x[i] - pk->x[j], dy = pk->y[i] - pk->y[j];
      double d = sqrt(dx * dx + dy * dy);
      double f = (pk->r[i] + pk->r[j]) / d;
      if (f > s) s = f;
    }
  return s;
}

void jl_circle_packing_separate(jl_circle_packing *pk) {
  /* A few passes: a moved circle could (very rarely) land on another centre. */
  for (int pass = 0; pass < 8 && jl_packing_unstack(pk); ++pass) {}
  double s = jl_packing_overlap_factor(pk);
  if (s > 1.0 && isfinite(s)) {
    /* The margin covers the rounding of the scaled products and of sqrt. */
    s *= 1.0 + 4.0 * DBL_EPSILON;
    for (int i = 0; i < pk->n; ++i) {
      pk->x[i] *= s;
      pk->y[i] *= s;
    }
  }
  jl_circle_packing_update_R(pk);
}
