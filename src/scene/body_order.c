/* A spatial order of a scene's bodies (body_order.h). */
#include "body_order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *jl_body_order_name(jl_body_order o) {
  switch (o) {
  case JL_BODY_ORDER_GIVEN: return "given";
  case JL_BODY_ORDER_SPATIAL: return "spatial";
  default: return "auto";
  }
}

int jl_body_order_parse(const char *s, jl_body_order *o) {
  if (strcmp(s, "auto") == 0) *o = JL_BODY_ORDER_AUTO;
  else if (strcmp(s, "given") == 0) *o = JL_BODY_ORDER_GIVEN;
  else if (strcmp(s, "spatial") == 0) *o = JL_BODY_ORDER_SPATIAL;
  else return -1;
  return 0;
}

int jl_body_order_applies(jl_body_order o, int count) {
  if (o == JL_BODY_ORDER_SPATIAL) return count > 1;
  return o == JL_BODY_ORDER_AUTO && count >= JL_BODY_ORDER_AUTO_MIN;
}

/* The low 21 bits of v spread to every third bit. */
static uint64_t jl_morton_spread(uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

uint64_t jl_morton_key(const double p[3], const double lo[3], const double hi[3]) {
  const double top = (double)((1u << JL_MORTON_BITS) - 1);
  uint64_t key = 0;
  for (int d = 0; d < 3; ++d) {
    double w = hi[d] - lo[d];
    double t = w > 0 ? (p[d] - lo[d]) / w : 0.0;
    if (!(t >= 0)) t = 0; /* also NaN */
    if (t > 1) t = 1;
    key |= jl_morton_spread((uint64_t)(t * top)) << d;
  }
  return key;
}

typedef struct jl_order_item {
  uint64_t key;            /* 0: a plane; else 1 + the Morton key */
  int index;
} jl_order_item;

static int jl_order_cmp(const void *a, const void *b) {
  const jl_order_item *u = a, *v = b;
  if (u->key != v->key) return u->key < v->key ? -1 : 1;
  return (u->index > v->index) - (u->index < v->index);
}

int jl_bodies_spatial_order(const jl_bodies *b, int *perm, jl_error *err) {
  int n = b->count;
  if (n <= 0) return JL_OK;
  jl_order_item *items = malloc(sizeof *items * (size_t)n);
  if (!items) return jl_error_set(err, JL_ERR_NOMEM, "out of memory ordering %d bodies", n);
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; ++i) {
    if (b->shape[i] == JL_SHAPE_PLANE) continue;
    for (int d = 0; d < 3; ++d) {
      lo[d] = fmin(lo[d], b->pos[3 * (size_t)i + d]);
      hi[d] = fmax(hi[d], b->pos[3 * (size_t)i + d]);
    }
  }
  for (int i = 0; i < n; ++i) {
    items[i].index = i;
    items[i].key = b->shape[i] == JL_SHAPE_PLANE ? 0 : 1 + jl_morton_key(b->pos + 3 * (size_t)i, lo, hi);
  }
  qsort(items, (size_t)n, sizeof *items, jl_order_cmp);
  for (int k = 0; k < n; ++k) perm[k] = items[k].index;
  free(items);
  return JL_OK;
}

/* Body i of src into slot j of dst. */
static void jl_body_copy_one(jl_bodies *dst, size_t j, const jl_bodies *src, size_t i) {
  dst->shape[j] = src->shape[i];
  dst->is_static[j] = src->is_static[i];
  dst->material[j] = src->material[i];
  dst->inv_mass[j] = src->inv_mass[i];
  memcpy(dst->size + 3 * j, src->size + 3 * i, 3 * sizeof(double));
  memcpy(dst->pos + 3 * j, src->pos + 3 * i, 3 * sizeof(double));
  memcpy(dst->quat + 4 * j, src->quat + 4 * i, 4 * sizeof(double));
  memcpy(dst->vel + 3 * j, src->vel + 3 * i, 3 * sizeof(double));
  memcpy(dst->omega + 3 * j, src->omega + 3 * i, 3 * sizeof(double));
  memcpy(dst->inv_inertia + 3 * j, src->inv_inertia + 3 * i, 3 * sizeof(double));
}

/* dst (uninitialised) = the bodies of src in the order perm. */
static int jl_bodies_gather(jl_bodies *dst, const jl_bodies *src, const int *perm, jl_error *err) {
  int rc = jl_bodies_init(dst, src->count, err);
  if (rc != JL_OK) return rc;
  for (int k = 0; k < src->count; ++k) jl_body_copy_one(dst, (size_t)k, src, (size_t)perm[k]);
  dst->count = src->count;
  return JL_OK;
}

void jl_bodies_scatter(jl_bodies *dst, const jl_bodies *src, const int *perm) {
  for (int k = 0; k < src->count; ++k) jl_body_copy_one(dst, (size_t)perm[k], src, (size_t)k);
}

int jl_bodies_permute(jl_bodies *b, const int *q, jl_error *err) {
  jl_bodies t;
  int rc = jl_bodies_gather(&t, b, q, err);
  if (rc != JL_OK) {
    jl_bodies_free(&t);
    return rc;
  }
  jl_bodies_free(b);
  *b = t;
  return JL_OK;
}

int jl_bodies_order_copy(jl_bodies *dst, const jl_bodies *src, jl_body_order o, int **perm_out,
                         jl_error *err) {
  *perm_out = NULL;
  if (!jl_body_order_applies(o, src->count)) return JL_OK;
  int *perm = malloc(sizeof(int) * (size_t)src->count);
  if (!perm) return jl_error_set(err, JL_ERR_NOMEM, "out of memory ordering %d bodies", src->count);
  int rc = jl_bodies_spatial_order(src, perm, err);
  int identity = 1;
  for (int k = 0; rc == JL_OK && k < src->count && identity; ++k) identity = perm[k] == k;
  if (rc == JL_OK && !identity) {
    rc = jl_bodies_gather(dst, src, perm, err);
    if (rc != JL_OK) jl_bodies_free(dst);
  }
  if (rc != JL_OK || identity) {
    free(perm);
    return rc;
  }
  *perm_out = perm;
  return JL_OK;
}
