/* Contacts found by the narrow phase, structure-of-arrays: the seam between
 * collision detection (collide.c) and contact setup / prox solvers.
 *
 * Conventions: the normal is a unit vector pointing from body a towards
 * body b; gap is the signed distance along it (negative: penetration); the
 * point is the middle of the two closest surface points, world frame. A
 * contact with a static body has that body as b. key identifies the contact
 * across steps for warm starting: pair (a, b) and a feature id (which box
 * corner, edge or clipped vertex produced it). */
#ifndef JL_CONTACT_H
#define JL_CONTACT_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Box/box and box/plane manifolds keep at most this many points per pair. */
#define JL_MAX_MANIFOLD 4

typedef struct jl_contacts {
  int count;
  int capacity;
  int *body_a;
  int *body_b;
  double *point;           /* 3 per contact */
  double *normal;          /* 3 per contact, unit, from a to b */
  double *gap;             /* signed distance, < 0 when penetrating */
  uint64_t *key;           /* (min body, max body, feature) packed, for warm start */
} jl_contacts;

/* contact.c */
int jl_contacts_init(jl_contacts *c, int capacity, jl_error *err);
int jl_contacts_reserve(jl_contacts *c, int capacity, jl_error *err);
void jl_contacts_free(jl_contacts *c);

#ifdef __cplusplus
}
#endif

#endif
