/* A spatial order of a scene's bodies. Every stage of a step gathers the
 * data of bodies that touch (broad phase, narrow phase, setup, the solver's
 * per-contact velocities and per-body sums); when neighbours in space are
 * neighbours in memory those gathers share cache lines. A generated pile is
 * numbered in draw order, so without this every gather is random: on an
 * H200 the million-sphere pile took 52 ms per step in draw order and 35 ms
 * in cell order (docs/benchmarks.md).
 *
 * The order: planes first (they have no place), in their given order, then
 * the other bodies along a Z-order (Morton) curve through their centres,
 * ties in their given order. perm[k] is the given index of the body stepped
 * at k. The runner (scene_runner.h) steps the ordered copy and maps results
 * back, so callers see the scene's own numbering. */
#ifndef JL_BODY_ORDER_H
#define JL_BODY_ORDER_H

#include <stdint.h>

#include "error.h"
#include "rigid_body.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum jl_body_order {
  JL_BODY_ORDER_AUTO = 0,  /* spatial from JL_BODY_ORDER_AUTO_MIN bodies up, else as given */
  JL_BODY_ORDER_GIVEN = 1,
  JL_BODY_ORDER_SPATIAL = 2
} jl_body_order;

/* Below this the bodies fit in cache in any order (and small scenes keep
 * the bit-for-bit identity of a run with the stepper). */
#define JL_BODY_ORDER_AUTO_MIN 4096
/* Bits per axis of the Morton key (3 x 21 = 63). */
#define JL_MORTON_BITS 21

const char *jl_body_order_name(jl_body_order o);
int jl_body_order_parse(const char *s, jl_body_order *o);
/* Whether order o reorders a scene of count bodies. */
int jl_body_order_applies(jl_body_order o, int count);

/* The Morton key of a point quantised on a 2^21 grid over [lo, hi]. */
uint64_t jl_morton_key(const double p[3], const double lo[3], const double hi[3]);

/* When order o applies to src and changes its order: dst (uninitialised)
 * receives src's bodies in the spatial order, dst[k] = src[perm[k]], and
 * *perm the permutation (the caller frees both). Otherwise *perm = NULL and
 * dst is left alone. */
int jl_bodies_order_copy(jl_bodies *dst, const jl_bodies *src, jl_body_order o, int **perm,
                         jl_error *err);
/* The inverse: dst[perm[k]] = src[k], for dst of src's count. */
void jl_bodies_scatter(jl_bodies *dst, const jl_bodies *src, const int *perm);
/* b's bodies in the order q (b->count entries, a permutation): body k
 * afterwards is body q[k] before. */
int jl_bodies_permute(jl_bodies *b, const int *q, jl_error *err);
/* The spatial order of b's current centres into perm (b->count entries):
 * perm[k] is the index of the body that goes to k. */
int jl_bodies_spatial_order(const jl_bodies *b, int *perm, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
