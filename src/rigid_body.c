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
