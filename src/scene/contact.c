/* Contacts: growable structure-of-arrays storage. */
#include "contact.h"

#include <stdlib.h>
#include <string.h>

int jl_contacts_init(jl_contacts *c, int capacity, jl_error *err) {
  memset(c, 0, sizeof *c);
  return jl_contacts_reserve(c, capacity > 0 ? capacity : 64, err);
}

#define JL_GROW(field, per)                                                        \
  do {                                                                             \
    void *q = realloc(c->field, (size_t)capacity * (per) * sizeof *c->field);      \
    if (!q) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", capacity); \
    c->field = q;                                                                  \
  } while (0)

int jl_contacts_reserve(jl_contacts *c, int capacity, jl_error *err) {
  if (capacity <= c->capacity) return JL_OK;
  JL_GROW(body_a, 1);
  JL_GROW(body_b, 1);
  JL_GROW(point, 3);
  JL_GROW(normal, 3);
  JL_GROW(gap, 1);
  JL_GROW(key, 1);
  c->capacity = capacity;
  return JL_OK;
}
#undef JL_GROW

void jl_contacts_free(jl_contacts *c) {
  if (!c) return;
  free(c->body_a);
  free(c->body_b);
  free(c->point);
  free(c->normal);
  free(c->gap);
  free(c->key);
  memset(c, 0, sizeof *c);
}
