/* Block packings: growable storage for centres and orientations. */
#include <stdlib.h>
#include <string.h>

#include "trunk.h"

int jl_block_packing_init(jl_block_packing *p, int capacity, jl_error *err) {
  memset(p, 0, sizeof *p);
  return jl_block_packing_reserve(p, capacity > 0 ? capacity : 16, err);
}

int jl_block_packing_reserve(jl_block_packing *p, int capacity, jl_error *err) {
  if (capacity <= p->capacity) return JL_OK;
  double *c = realloc(p->centre, (size_t)capacity * 3 * sizeof *c);
  if (!c) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d blocks", capacity);
  p->centre = c;
  double *q = realloc(p->quat, (size_t)capacity * 4 * sizeof *q);
  if (!q) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d blocks", capacity);
  p->quat = q;
  p->capacity = capacity;
  return JL_OK;
}

int jl_block_packing_push(jl_block_packing *p, const double centre[3], const double quat[4],
                          jl_error *err) {
  if (p->count == p->capacity) {
    int rc = jl_block_packing_reserve(p, p->capacity ? 2 * p->capacity : 16, err);
    if (rc) return rc;
  }
  memcpy(p->centre + 3 * p->count, centre, 3 * sizeof *centre);
  memcpy(p->quat + 4 * p->count, quat, 4 * sizeof *quat);
  p->count++;
  return JL_OK;
}

int jl_block_packing_copy(jl_block_packing *dst, const jl_block_packing *src, jl_error *err) {
  if (dst == src) return JL_OK;
  int rc = jl_block_packing_reserve(dst, src->count, err);
  if (rc) return rc;
  memcpy(dst->centre, src->centre, (size_t)src->count * 3 * sizeof *dst->centre);
  memcpy(dst->quat, src->quat, (size_t)src->count * 4 * sizeof *dst->quat);
  dst->count = src->count;
  return JL_OK;
}

void jl_block_packing_free(jl_block_packing *p) {
  if (!p) return;
  free(p->centre);
  free(p->quat);
  memset(p, 0, sizeof *p);
}
