/* A bounding volume hierarchy over triangles (axis-aligned boxes, median
 * split): the self-intersection test and the exact packing check ask it
 * which triangles lie near a box or along a ray. */
#ifndef JL_BVH_H
#define JL_BVH_H

#include "error.h"

typedef struct jl_bvh_node {
  double lo[3], hi[3];
  int first;               /* leaf: first entry of jl_bvh.order; inner: left child (right = first + 1) */
  int count;               /* leaf: triangles in it; inner: 0 */
} jl_bvh_node;

typedef struct jl_bvh {
  int n_nodes;
  jl_bvh_node *nodes;      /* nodes[0] is the root */
  int *order;              /* triangle indices, leaves point into it */
  int n_triangles;
} jl_bvh;

/* vertices: 3 per vertex; triangles: 3 vertex indices each. */
int jl_bvh_build(jl_bvh *b, const double *vertices, const int *triangles, int n_triangles,
                 jl_error *err);
void jl_bvh_free(jl_bvh *b);

/* Calls fn(ctx, t) for every triangle whose box meets [lo, hi]; stops early
 * and returns fn's value when it returns non-zero, else 0. */
typedef int (*jl_bvh_visit_fn)(void *ctx, int triangle);
int jl_bvh_query_box(const jl_bvh *b, const double lo[3], const double hi[3], jl_bvh_visit_fn fn,
                     void *ctx);
/* Same for every triangle whose box the ray o + t d (t >= 0) meets. */
int jl_bvh_query_ray(const jl_bvh *b, const double o[3], const double d[3], jl_bvh_visit_fn fn,
                     void *ctx);

#endif
