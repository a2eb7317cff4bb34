#include "circle_elite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int jl_cmp_profile_entry(const void *a, const void *b) {
  const jl_profile_entry *u = a, *v = b;
  if (u->r != v->r) return u->r < v->r ? -1 : 1;
  if (u->rho != v->rho) return u->rho < v->rho ? -1 : 1;
  return 0;
}

/* Distances from the centre are what rotations and mirror images keep, and
 * sorting them within a radius is what swaps of equal circles keep; the
 * angles, which would need an alignment, are left out. Weighting by area
 * lets the large circles, which make the arrangement, decide: a small
 * rattler may sit anywhere in its hole without changing the basin. */
void jl_circle_profile(const jl_circle_packing *pk, jl_profile_entry *tmp, double *rho, double *w) {
  int n = pk->n;
  double inv_R = pk->R > 0.0 ? 1.0 / pk->R : 0.0;
  for (int i = 0; i < n; ++i)
    tmp[i] = (jl_profile_entry){pk->r[i], hypot(pk->x[i], pk->y[i]) * inv_R};
  qsort(tmp, (size_t)n, sizeof *tmp, jl_cmp_profile_entry);
  double area = 0.0;
  for (int k = 0; k < n; ++k) area += tmp[k].r * tmp[k].r;
  for (int k = 0; k < n; ++k) {
    rho[k] = tmp[k].rho;
    w[k] = area > 0.0 ? tmp[k].r * tmp[k].r / area : 0.0;
  }
}

double jl_circle_profile_distance(const double *a, const double *b, const double *w, int n) {
  double d = 0.0;
  for (int k = 0; k < n; ++k) d += w[k] * fabs(a[k] - b[k]);
  return d;
}

int jl_circle_shape_distance(const jl_circle_packing *a, const jl_circle_packing *b, double *d,
                             jl_error *err) {
  int n = a->n;
  if (b->n != n) return jl_error_set(err, JL_ERR_INPUT, "shape distance: %d circles against %d", n, b->n);
  jl_profile_entry *tmp = malloc(sizeof *tmp * (size_t)(n > 0 ? n : 1));
  double *buf = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1));
  if (!tmp || !buf) {
    free(tmp);
    free(buf);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory");
  }
  double *ra = buf, *rb = buf + n, *w = buf + 2 * n;
  jl_circle_profile(a, tmp, ra, w);
  jl_circle_profile(b, tmp, rb, w);
  *d = jl_circle_profile_distance(ra, rb, w, n);
  free(tmp);
  free(buf);
  return JL_OK;
}

int jl_circle_elite_init(jl_circle_elite *e, int n, int cap, double crowding, jl_error *err) {
  memset(e, 0, sizeof *e);
  e->n = n;
  e->cap = cap > 0 ? cap : 1;
  e->crowding = crowding > 0.0 ? crowding : 0.0;
  size_t nn = (size_t)(n > 0 ? n : 1);
  e->pk = calloc((size_t)e->cap, sizeof *e->pk);
  e->rho = calloc((size_t)e->cap, sizeof *e->rho);
  e->rho_store = malloc(sizeof(double) * nn * (size_t)e->cap);
  e->w = malloc(sizeof(double) * nn);
  e->rho_new = malloc(sizeof(double) * nn);
  e->tmp = malloc(sizeof *e->tmp * nn);
  e->family = calloc((size_t)e->cap, 1);
  if (!e->pk || !e->rho || !e->rho_store || !e->w || !e->rho_new || !e->tmp || !e->family) {
    jl_circle_elite_free(e);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory");
  }
  for (int k = 0; k < e->cap; ++k) e->rho[k] = e->rho_store + (size_t)k * nn;
  return JL_OK;
}

void jl_circle_elite_free(jl_circle_elite *e) {
  if (e->pk)
    for (int k = 0; k < e->cap; ++k) jl_circle_packing_free(&e->pk[k]);
  free(e->pk);
  free(e->rho);
  free(e->rho_store);
  free(e->w);
  free(e->rho_new);
  free(e->tmp);
  free(e->family);
  memset(e, 0, sizeof *e);
}

/* Moves slot j to the end of the members and drops it from them; its
 * storage stays for the next packing. */
static void jl_elite_remove(jl_circle_elite *e, int j) {
  jl_circle_packing spare = e->pk[j];
  double *spare_rho = e->rho[j];
  for (int t = j; t + 1 < e->count; ++t) {
    e->pk[t] = e->pk[t + 1];
    e->rho[t] = e->rho[t + 1];
  }
  e->pk[e->count - 1] = spare;
  e->rho[e->count - 1] = spare_rho;
  e->count--;
}

int jl_circle_elite_offer(jl_circle_elite *e, const jl_circle_packing *pk,
                          jl_elite_outcome *outcome, jl_error *err) {
  jl_elite_outcome out_local;
  if (!outcome) outcome = &out_local;
  *outcome = JL_ELITE_REJECTED;
  if (pk->n != e->n)
    return jl_error_set(err, JL_ERR_INPUT, "elite: a packing of %d circles offered to one of %d",
                        pk->n, e->n);
  e->offers++;
  const double R = pk->R;
  if (e->crowding > 0.0) jl_circle_profile(pk, e->tmp, e->rho_new, e->w);
  int members = 0, by_shape = 0;
  for (int j = 0; j < e->count; ++j) {
    double Rj = e->pk[j].R;
    int same_R = Rj >= R * (1.0 - JL_ELITE_SAME) && Rj <= R * (1.0 + JL_ELITE_SAME);
    int near = !same_R && e->crowding > 0.0 &&
               jl_circle_profile_distance(e->rho_new, e->rho[j], e->w, e->n) < e->crowding;
    e->family[j] = (unsigned char)(same_R || near);
    if (!e->family[j]) continue;
    members++;
    by_shape |= near;
    /* its family already has a member as good */
    if (Rj <= R) {
      e->crowded += (uint64_t)by_shape;
      return JL_OK;
    }
  }
  e->crowded += (uint64_t)by_shape;
  if (members > 0) {
    for (int j = e->count - 1; j >= 0; --j)
      if (e->family[j]) jl_elite_remove(e, j);
    *outcome = JL_ELITE_REPLACED;
  } else if (e->count < e->cap) {
    *outcome = JL_ELITE_ADDED;
  } else if (R < e->pk[e->count - 1].R) {
    e->count--;
    *outcome = JL_ELITE_DISPLACED;
  } else {
    return JL_OK;
  }
  /* insert at its place by R into the first free slot's storage */
  int k = 0;
  while (k < e->count && e->pk[k].R <= R) ++k;
  int slot = e->count;
  jl_circle_packing spare = e->pk[slot];
  double *spare_rho = e->rho[slot];
  for (int t = slot; t > k; --t) {
    e->pk[t] = e->pk[t - 1];
    e->rho[t] = e->rho[t - 1];
  }
  e->pk[k] = spare;
  e->rho[k] = spare_rho;
  e->count++;
  int rc = jl_circle_packing_copy(&e->pk[k], pk, err);
  if (rc != JL_OK) {
    /* keep the members consistent: the slot holds nothing usable */
    jl_elite_remove(e, k);
    return rc;
  }
  if (e->crowding > 0.0) memcpy(e->rho[k], e->rho_new, sizeof(double) * (size_t)e->n);
  else jl_circle_profile(pk, e->tmp, e->rho[k], e->w);
  return JL_OK;
}

int jl_circle_elite_nearest(jl_circle_elite *e, const jl_circle_packing *pk, double near) {
  if (pk->n != e->n || e->count == 0) return -1;
  jl_circle_profile(pk, e->tmp, e->rho_new, e->w);
  int best = -1;
  double d_best = near;
  for (int j = 0; j < e->count; ++j) {
    double d = jl_circle_profile_distance(e->rho_new, e->rho[j], e->w, e->n);
    if (d < d_best) {
      d_best = d;
      best = j;
    }
  }
  return best;
}

double jl_circle_elite_spread(const jl_circle_elite *e, int k) {
  if (k <= 0 || k >= e->count) return 0.0;
  return jl_circle_profile_distance(e->rho[0], e->rho[k], e->w, e->n);
}
