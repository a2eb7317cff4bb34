#include "bvh.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JL_BVH_LEAF 4
#define JL_BVH_STACK 128

typedef struct jl_bvh_build_ctx {
  const double *v;
  const int *t;
  double *centroid;        /* 3 per triangle */
  jl_bvh *b;
} jl_bvh_build_ctx;

static void jl_tri_bounds(const jl_bvh_build_ctx *c, int tri, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; ++k) {
    lo[k] = DBL_MAX;
    hi[k] = -DBL_MAX;
  }
  for (int j = 0; j < 3; ++j) {
    const double *p = c->v + 3 * c->t[3 * tri + j];
    for (int k = 0; k < 3; ++k) {
      if (p[k] < lo[k]) lo[k] = p[k];
      if (p[k] > hi[k]) hi[k] = p[k];
    }
  }
}

/* Orders order[first..first+count) by centroid along axis (insertion-free:
 * quickselect around the median is enough for a balanced split). */
static void jl_select(const double *cen, int axis, int *a, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    double pivot = cen[3 * a[(lo + hi) / 2] + axis];
    int i = lo, j = hi;
    while (i <= j) {
      while (cen[3 * a[i] + axis] < pivot) ++i;
      while (cen[3 * a[j] + axis] > pivot) --j;
      if (i <= j) {
        int s = a[i]; a[i] = a[j]; a[j] = s;
        ++i; --j;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
}

static void jl_bvh_split(jl_bvh_build_ctx *c, int node, int first, int count) {
  jl_bvh *b = c->b;
  jl_bvh_node *nd = &b->nodes[node];
  double clo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, chi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
  for (int k = 0; k < 3; ++k) {
    nd->lo[k] = DBL_MAX;
    nd->hi[k] = -DBL_MAX;
  }
  for (int i = first; i < first + count; ++i) {
    int tri = b->order[i];
    double lo[3], hi[3];
    jl_tri_bounds(c, tri, lo, hi);
    for (int k = 0; k < 3; ++k) {
      if (lo[k] < nd->lo[k]) nd->lo[k] = lo[k];
      if (hi[k] > nd->hi[k]) nd->hi[k] = hi[k];
      double m = c->centroid[3 * tri + k];
      if (m < clo[k]) clo[k] = m;
      if (m > chi[k]) chi[k] = m;
    }
  }
  if (count <= JL_BVH_LEAF) {
    nd->first = first;
    nd->count = count;
    return;
  }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
  int half = count / 2;
  jl_select(c->centroid, axis, b->order + first, count, half);
  int left = b->n_nodes;
  b->n_nodes += 2;
  nd->first = left;
  nd->count = 0;
  jl_bvh_split(c, left, first, half);
  jl_bvh_split(c, left + 1, first + half, count - half);
}

int jl_bvh_build(jl_bvh *b, const double *vertices, const int *triangles, int n_triangles,
                 jl_error *err) {
  memset(b, 0, sizeof *b);
  if (n_triangles <= 0) return jl_error_set(err, JL_ERR_INPUT, "no triangles to build a BVH over");
  b->n_triangles = n_triangles;
  b->nodes = malloc((size_t)2 * n_triangles * sizeof *b->nodes);
  b->order = malloc((size_t)n_triangles * sizeof *b->order);
  double *cen = malloc((size_t)3 * n_triangles * sizeof *cen);
  if (!b->nodes || !b->order || !cen) {
    free(cen);
    jl_bvh_free(b);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for a BVH of %d triangles", n_triangles);
  }
  for (int t = 0; t < n_triangles; ++t) {
    b->order[t] = t;
    for (int k = 0; k < 3; ++k)
      cen[3 * t + k] = (vertices[3 * triangles[3 * t] + k] + vertices[3 * triangles[3 * t + 1] + k] +
                        vertices[3 * triangles[3 * t + 2] + k]) / 3.0;
  }
  jl_bvh_build_ctx c = {vertices, triangles, cen, b};
  b->n_nodes = 1;
  jl_bvh_split(&c, 0, 0, n_triangles);
  free(cen);
  return JL_OK;
}

void jl_bvh_free(jl_bvh *b) {
  if (!b) return;
  free(b->nodes);
  free(b->order);
  memset(b, 0, sizeof *b);
}

static int jl_box_meets(const jl_bvh_node *n, const double lo[3], const double hi[3]) {
  return n->lo[0] <= hi[0] && n->hi[0] >= lo[0] && n->lo[1] <= hi[1] && n->hi[1] >= lo[1] &&
         n->lo[2] <= hi[2] && n->hi[2] >= lo[2];
}

/* The one traversal behind both queries: visit every leaf triangle whose
 * node passes meets(); static so the compiler inlines the test. */
static int jl_bvh_walk(const jl_bvh *b, int (*meets)(const jl_bvh_node *, const double *, const double *),
                       const double *p, const double *q, jl_bvh_visit_fn fn, void *ctx) {
  if (!b->nodes) return 0;
  int stack[JL_BVH_STACK], top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const jl_bvh_node *n = &b->nodes[stack[--top]];
    if (!meets(n, p, q)) continue;
    if (n->count > 0) {
      for (int i = n->first; i < n->first + n->count; ++i) {
        int r = fn(ctx, b->order[i]);
        if (r) return r;
      }
    } else {
      stack[top++] = n->first;
      stack[top++] = n->first + 1;
    }
  }
  return 0;
}

int jl_bvh_query_box(const jl_bvh *b, const double lo[3], const double hi[3], jl_bvh_visit_fn fn,
                     void *ctx) {
  return jl_bvh_walk(b, jl_box_meets, lo, hi, fn, ctx);
}

/* Slab test, widened a little so a ray grazing a box face is not lost. */
static int jl_ray_meets(const jl_bvh_node *n, const double o[3], const double d[3]) {
  double t0 = 0.0, t1 = DBL_MAX;
  for (int k = 0; k < 3; ++k) {
    double pad = 1e-9 * (fabs(n->lo[k]) + fabs(n->hi[k]) + 1.0);
    double lo = n->lo[k] - pad, hi = n->hi[k] + pad;
    if (d[k] == 0.0) {
      if (o[k] < lo || o[k] > hi) return 0;
      continue;
    }
    double a = (lo - o[k]) / d[k], c = (hi - o[k]) / d[k];
    if (a > c) { double s = a; a = c; c = s; }
    if (a > t0) t0 = a;
    if (c < t1) t1 = c;
    if (t0 > t1) return 0;
  }
  return 1;
}

int jl_bvh_query_ray(const jl_bvh *b, const double o[3], const double d[3], jl_bvh_visit_fn fn,
                     void *ctx) {
  return jl_bvh_walk(b, jl_ray_meets, o, d, fn, ctx);
}
