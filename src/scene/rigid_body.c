/* Rigid bodies: growable structure-of-arrays storage. */
#include "rigid_body.h"

#include <stdlib.h>
#include <string.h>

int jl_bodies_init(jl_bodies *b, int capacity, jl_error *err) {
  memset(b, 0, sizeof *b);
  return jl_bodies_reserve(b, capacity > 0 ? capacity : 16, err);
}

#define JL_GROW(field, per)                                                        \
  do {                                                                             \
    void *q = realloc(b->field, (size_t)capacity * (per) * sizeof *b->field);      \
    if (!q) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d bodies", capacity); \
    b->field = q;                                                                  \
  } while (0)

int jl_bodies_reserve(jl_bodies *b, int capacity, jl_error *err) {
  if (capacity <= b->capacity) return JL_OK;
  JL_GROW(shape, 1);
  JL_GROW(is_static, 1);
  JL_GROW(material, 1);
  JL_GROW(size, 3);
  JL_GROW(pos, 3);
  JL_GROW(quat, 4);
  JL_GROW(vel, 3);
  JL_GROW(omega, 3);
  JL_GROW(inv_mass, 1);
  JL_GROW(inv_inertia, 3);
  b->capacity = capacity;
  return JL_OK;
}
#undef JL_GROW

int jl_bodies_copy(jl_bodies *dst, const jl_bodies *src, jl_error *err) {
  int rc = jl_bodies_init(dst, src->count, err);
  if (rc != JL_OK) return rc;
  size_t n = (size_t)src->count;
  memcpy(dst->shape, src->shape, n);
  memcpy(dst->is_static, src->is_static, n);
  memcpy(dst->material, src->material, n * sizeof(int));
  memcpy(dst->size, src->size, 3 * n * sizeof(double));
  memcpy(dst->pos, src->pos, 3 * n * sizeof(double));
  memcpy(dst->quat, src->quat, 4 * n * sizeof(double));
  memcpy(dst->vel, src->vel, 3 * n * sizeof(double));
  memcpy(dst->omega, src->omega, 3 * n * sizeof(double));
  memcpy(dst->inv_mass, src->inv_mass, n * sizeof(double));
  memcpy(dst->inv_inertia, src->inv_inertia, 3 * n * sizeof(double));
  dst->count = src->count;
  return JL_OK;
}

void jl_bodies_free(jl_bodies *b) {
  if (!b) return;
  free(b->shape);
  free(b->is_static);
  free(b->material);
  free(b->size);
  free(b->pos);
  free(b->quat);
  free(b->vel);
  free(b->omega);
  free(b->inv_mass);
  free(b->inv_inertia);
  memset(b, 0, sizeof *b);
}
