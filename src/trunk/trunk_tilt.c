#include "trunk_tilt.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "mesh.h"
#include "timer.h"
#include "trunk_baseline.h"
#include "trunk_slabs.h"

/* Triangles are coplanar when their normals agree to this (cosine) and
 * their offsets to JL_TILT_OFFSET_TOL of the bounding box diagonal. */
#define JL_TILT_NORMAL_COS 0.999999
#define JL_TILT_OFFSET_TOL 1e-7
/* A normal is along an axis when one component is this close to 1. */
#define JL_TILT_AXIS_COS 0.9999
/* A cut this close to a vertex (mm) is not clean; the caller moves it. */
#define JL_TILT_VERTEX_EPS 1e-6
/* How far a cut moves (mm, away from the other part) when it is not clean. */
#define JL_TILT_NUDGE 1e-3
#define JL_TILT_NUDGES 4

static double jl_tilt_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void jl_tilt_normal(const jl_mesh *m, int t, double n[3], double *area) {
  const double *a = m->vertices + 3 * m->triangles[3 * t], *b = m->vertices + 3 * m->triangles[3 * t + 1],
               *c = m->vertices + 3 * m->triangles[3 * t + 2];
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  double w[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
  double l = sqrt(jl_tilt_dot(w, w));
  *area = 0.5 * l;
  for (int k = 0; k < 3; ++k) n[k] = l > 0.0 ? w[k] / l : 0.0;
}

static int jl_tilt_plane_cmp(const void *pa, const void *pb) {
  const jl_tilt_plane *a = pa, *b = pb;
  if (a->area != b->area) return a->area < b->area ? 1 : -1;
  for (int k = 0; k < 3; ++k)
    if (a->n[k] != b->n[k]) return a->n[k] < b->n[k] ? -1 : 1;
  return (a->d > b->d) - (a->d < b->d);
}

/* Triangles between polls of the limits: each is compared with every group
 * so far, so a mesh of many small faces costs T^2 / 2 comparisons. */
#define JL_TILT_POLL 16

/* jl_trunk_tilt_planes, giving up (no planes, *cut = 1) when lim (may be NULL) is hit. */
static int jl_tilt_planes_until(const jl_mesh *m, double min_frac, jl_tilt_plane *planes, int cap, int *n,
                                const jl_trunk_limits *lim, int *cut, jl_error *err) {
  *n = 0;
  double since = jl_time_now();
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                     (hi[2] - lo[2]) * (hi[2] - lo[2]));
  /* groups in triangle order; the first triangle of a group sets its plane */
  jl_tilt_plane *grp = malloc((size_t)(m->n_triangles > 0 ? m->n_triangles : 1) * sizeof *grp);
  if (!grp) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the tilted fill's faces");
  int ng = 0;
  double total = 0.0;
  for (int t = 0; t < m->n_triangles; ++t) {
    if (t % JL_TILT_POLL == 0 && jl_trunk_limits_hit(lim, since)) {
      *cut = 1;
      free(grp);
      return JL_OK;
    }
    double nt[3], area;
    jl_tilt_normal(m, t, nt, &area);
    total += area;
    if (area <= 0.0) continue;
    double d = jl_tilt_dot(nt, m->vertices + 3 * m->triangles[3 * t]);
    int k = 0;
    for (; k < ng; ++k)
      if (jl_tilt_dot(nt, grp[k].n) >= JL_TILT_NORMAL_COS && fabs(d - grp[k].d) <= JL_TILT_OFFSET_TOL * diag) break;
    if (k == ng) {
      memcpy(grp[ng].n, nt, sizeof nt);
      grp[ng].d = d;
      grp[ng].area = 0.0;
      grp[ng].triangles = 0;
      ++ng;
    }
    grp[k].area += area;
    ++grp[k].triangles;
  }
  int kept = 0;
  for (int k = 0; k < ng; ++k) {
    double amax = fmax(fabs(grp[k].n[0]), fmax(fabs(grp[k].n[1]), fabs(grp[k].n[2])));
    /* a vertical normal is along z; the face frame needs a horizontal line */
    if (grp[k].area >= min_frac * total && amax < JL_TILT_AXIS_COS) grp[kept++] = grp[k];
  }
  qsort(grp, (size_t)kept, sizeof *grp, jl_tilt_plane_cmp);
  for (int k = 0; k < kept && k < cap; ++k) planes[(*n)++] = grp[k];
  free(grp);
  return JL_OK;
}

int jl_trunk_tilt_planes(const jl_mesh *m, double min_frac, jl_tilt_plane *planes, int cap, int *n,
                         jl_error *err) {
  int cut = 0;
  return jl_tilt_planes_until(m, min_frac, planes, cap, n, NULL, &cut, err);
}

int jl_trunk_tilt_planes_until(const jl_mesh *m, double min_frac, jl_tilt_plane *planes, int cap, int *n,
                               const jl_trunk_limits *lim, int *cut, jl_error *err) {
  *cut = 0;
  return jl_tilt_planes_until(m, min_frac, planes, cap, n, lim, cut, err);
}

void jl_trunk_tilt_frame(const double n[3], double rows[3][3]) {
  double h = sqrt(n[0] * n[0] + n[1] * n[1]);
  double x[3] = {-n[1] / h, n[0] / h, 0.0}, z[3] = {-n[0], -n[1], -n[2]};
  double y[3] = {z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]};
  memcpy(rows[0], x, sizeof x);
  memcpy(rows[1], y, sizeof y);
  memcpy(rows[2], z, sizeof z);
}

/* ---- cutting a closed mesh by a plane ---- */

typedef struct jl_tilt_edge_map {
  long long *key;
  int *val;
  size_t cap;              /* a power of two */
} jl_tilt_edge_map;

static int *jl_tilt_edge_slot(jl_tilt_edge_map *e, long long key) {
  size_t h = (size_t)((unsigned long long)key * 0x9E3779B97F4A7C15ULL >> 17) & (e->cap - 1);
  while (e->key[h] >= 0 && e->key[h] != key) h = (h + 1) & (e->cap - 1);
  if (e->key[h] < 0) {
    e->key[h] = key;
    e->val[h] = -1;
  }
  return &e->val[h];
}

/* Growing arrays of the cut mesh. */
typedef struct jl_tilt_build {
  double *v;
  int nv, cv;
  int *t;
  int nt, ct;
} jl_tilt_build;

/* arr with room for one more triple (n used, *cap allocated, elem bytes a
 * number): the same array, or a grown one (capacity doubled), or NULL when
 * out of memory (arr is then unchanged). */
static void *jl_tilt_grow(void *arr, int n, int *cap, size_t elem) {
  if (n < *cap) return arr;
  int c = *cap ? 2 * *cap : 64;
  void *a = realloc(arr, (size_t)c * 3 * elem);
  if (a) *cap = c;
  return a;
}

static int jl_tilt_add_vertex(jl_tilt_build *b, const double p[3]) {
  double *v = jl_tilt_grow(b->v, b->nv, &b->cv, sizeof *v);
  if (!v) return -1;
  b->v = v;
  memcpy(b->v + 3 * b->nv, p, 3 * sizeof *p);
  return b->nv++;
}

static int jl_tilt_add_tri(jl_tilt_build *b, int i, int j, int k) {
  int *t = jl_tilt_grow(b->t, b->nt, &b->ct, sizeof *t);
  if (!t) return -1;
  b->t = t;
  b->t[3 * b->nt] = i;
  b->t[3 * b->nt + 1] = j;
  b->t[3 * b->nt + 2] = k;
  ++b->nt;
  return 0;
}

/* 2D orientation of (a, b, c): > 0 counter-clockwise. */
static double jl_tilt_orient(const double *a, const double *b, const double *c) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

/* Ear clipping of one counter-clockwise simple loop of n points (2D in
 * xy, mesh indices in idx). An ear is strictly convex and holds no other
 * loop point, not even on its border, so no cap triangle is degenerate.
 * Returns 0, or -1 when no ear is left (a loop that is not simple). */
static int jl_tilt_ear_clip(const double *xy, const int *idx, int n, double eps, jl_tilt_build *b) {
  int *ring = malloc((size_t)n * sizeof *ring);
  if (!ring) return -1;
  for (int i = 0; i < n; ++i) ring[i] = i;
  int m = n, guard = 0;
  while (m > 3) {
    int found = -1;
    for (int r = 0; r < m && found < 0; ++r) {
      int ia = ring[(r + m - 1) % m], ib = ring[r], ic = ring[(r + 1) % m];
      const double *a = xy + 2 * ia, *p = xy + 2 * ib, *c = xy + 2 * ic;
      if (jl_tilt_orient(a, p, c) <= eps) continue;
      int clear = 1;
      for (int s = 0; s < m && clear; ++s) {
        int iq = ring[s];
        if (iq == ia || iq == ib || iq == ic) continue;
        const double *q = xy + 2 * iq;
        if (jl_tilt_orient(a, p, q) >= -eps && jl_tilt_orient(p, c, q) >= -eps && jl_tilt_orient(c, a, q) >= -eps)
          clear = 0;
      }
      if (clear) found = r;
    }
    if (found < 0 || ++guard > n) {
      free(ring);
      return -1;
    }
    int ia = ring[(found + m - 1) % m], ib = ring[found], ic = ring[(found + 1) % m];
    if (jl_tilt_add_tri(b, idx[ia], idx[ib], idx[ic]) < 0) {
      free(ring);
      return -1;
    }
    memmove(ring + found, ring + found + 1, (size_t)(m - found - 1) * sizeof *ring);
    --m;
  }
  int ok = jl_tilt_orient(xy + 2 * ring[0], xy + 2 * ring[1], xy + 2 * ring[2]) > eps &&
           jl_tilt_add_tri(b, idx[ring[0]], idx[ring[1]], idx[ring[2]]) == 0;
  free(ring);
  return ok ? 0 : -1;
}

int jl_trunk_tilt_clip(const jl_mesh *m, const double n[3], double d, int keep_above, jl_mesh *out,
                       jl_error *err) {
  memset(out, 0, sizeof *out);
  double s = keep_above ? -1.0 : 1.0;
  int nv = m->n_vertices;
  double *f = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *f);
  int *map = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *map);
  jl_tilt_edge_map em = {0};
  em.cap = 64;
  while (em.cap < (size_t)m->n_triangles * 4) em.cap *= 2;
  em.key = malloc(em.cap * sizeof *em.key);
  em.val = malloc(em.cap * sizeof *em.val);
  jl_tilt_build b = {0};
  int *next = NULL, *loop = NULL;
  double *xy = NULL;
  int rc = JL_OK;
  if (!f || !map || !em.key || !em.val) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory cutting the mesh");
    goto done;
  }
  for (size_t h = 0; h < em.cap; ++h) em.key[h] = -1;
  int inside = 0;
  for (int i = 0; i < nv; ++i) {
    f[i] = s * (jl_tilt_dot(n, m->vertices + 3 * i) - d);
    map[i] = -1;
    if (fabs(f[i]) < JL_TILT_VERTEX_EPS) {
      rc = jl_error_set(err, JL_ERR_INPUT, "cut through vertex %d", i);
      goto done;
    }
    inside += f[i] < 0.0;
  }
  if (inside == 0) goto done;  /* nothing kept */
  for (int i = 0; i < nv; ++i)
    if (f[i] < 0.0 && (map[i] = jl_tilt_add_vertex(&b, m->vertices + 3 * i)) < 0) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory cutting the mesh");
      goto done;
    }
  int first_cut = b.nv;
  /* next[p - first_cut]: the cap edge entry -> exit, the reverse of the
   * cut triangle's border along the plane */
  int next_cap = 0;
  for (int t = 0; t < m->n_triangles && rc == JL_OK; ++t) {
    const int *tv = m->triangles + 3 * t;
    int in = (f[tv[0]] < 0.0) + (f[tv[1]] < 0.0) + (f[tv[2]] < 0.0);
    if (in == 0) continue;
    if (in == 3) {
      if (jl_tilt_add_tri(&b, map[tv[0]], map[tv[1]], map[tv[2]]) < 0) rc = JL_ERR_NOMEM;
      continue;
    }
    /* rotate: with one inside it goes first, with two the outside one goes last */
    int r = 0;
    for (; r < 3; ++r) {
      int a = tv[r], c = tv[(r + 2) % 3];
      if (in == 1 ? f[a] < 0.0 : f[c] >= 0.0 && f[a] < 0.0 && f[tv[(r + 1) % 3]] < 0.0) break;
    }
    int a = tv[r], bb = tv[(r + 1) % 3], c = tv[(r + 2) % 3];
    /* edge points on (a, b) or (b, c) where the border leaves, (c, a) where it enters */
    int ex0 = in == 1 ? a : bb, ex1 = in == 1 ? bb : c;
    int ends[2][2] = {{ex0, ex1}, {c, a}}, pt[2];
    for (int k = 0; k < 2 && rc == JL_OK; ++k) {
      int i = ends[k][0] < ends[k][1] ? ends[k][0] : ends[k][1], j = ends[k][0] ^ ends[k][1] ^ i;
      int *slot = jl_tilt_edge_slot(&em, (long long)i * nv + j);
      if (*slot < 0) {
        /* the same point for both triangles of the edge: from the lower index */
        const double *p = m->vertices + 3 * i, *q = m->vertices + 3 * j;
        double w = f[i] / (f[i] - f[j]), x[3];
        for (int e = 0; e < 3; ++e) x[e] = p[e] + w * (q[e] - p[e]);
        if ((*slot = jl_tilt_add_vertex(&b, x)) < 0) rc = JL_ERR_NOMEM;
      }
      pt[k] = *slot;
    }
    if (rc != JL_OK) break;
    int fail = in == 1 ? jl_tilt_add_tri(&b, map[a], pt[0], pt[1])
                       : jl_tilt_add_tri(&b, map[a], map[bb], pt[0]) | jl_tilt_add_tri(&b, map[a], pt[0], pt[1]);
    if (fail) {
      rc = JL_ERR_NOMEM;
      break;
    }
    int *nn = realloc(next, (size_t)(b.nv - first_cut) * sizeof *nn);
    if (!nn) {
      rc = JL_ERR_NOMEM;
      break;
    }
    for (int k = next_cap; k < b.nv - first_cut; ++k) nn[k] = -1;
    next = nn;
    next_cap = b.nv - first_cut;
    if (next[pt[1] - first_cut] >= 0) {
      rc = jl_error_set(err, JL_ERR_INPUT, "cut section is not a set of simple loops");
      break;
    }
    next[pt[1] - first_cut] = pt[0];
  }
  if (rc != JL_OK) {
    if (rc == JL_ERR_NOMEM) jl_error_set(err, JL_ERR_NOMEM, "out of memory cutting the mesh");
    goto done;
  }
  /* cap: each loop of cut points, in 2D coordinates of the cap plane
   * (u, v, s n right-handed), ear-clipped */
  int n_cut = b.nv - first_cut;
  double sn[3] = {s * n[0], s * n[1], s * n[2]};
  double u[3];
  if (fabs(sn[0]) < 0.6) {
    double e[3] = {1, 0, 0};
    double c = jl_tilt_dot(e, sn);
    for (int k = 0; k < 3; ++k) u[k] = e[k] - c * sn[k];
  } else {
    double e[3] = {0, 1, 0};
    double c = jl_tilt_dot(e, sn);
    for (int k = 0; k < 3; ++k) u[k] = e[k] - c * sn[k];
  }
  double ul = sqrt(jl_tilt_dot(u, u));
  for (int k = 0; k < 3; ++k) u[k] /= ul;
  double v[3] = {sn[1] * u[2] - sn[2] * u[1], sn[2] * u[0] - sn[0] * u[2], sn[0] * u[1] - sn[1] * u[0]};
  loop = malloc((size_t)(n_cut > 0 ? n_cut : 1) * sizeof *loop);
  xy = malloc((size_t)(n_cut > 0 ? n_cut : 1) * 2 * sizeof *xy);
  uint8_t *seen = calloc((size_t)(n_cut > 0 ? n_cut : 1), 1);
  if (!loop || !xy || !seen) {
    free(seen);
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory cutting the mesh");
    goto done;
  }
  for (int k0 = 0; k0 < n_cut && rc == JL_OK; ++k0) {
    if (seen[k0]) continue;
    int len = 0;
    for (int k = k0; !seen[k];) {
      seen[k] = 1;
      loop[len++] = first_cut + k;
      int nx = next ? next[k] : -1;
      if (nx < 0) {
        rc = jl_error_set(err, JL_ERR_INPUT, "cut section is not closed");
        break;
      }
      k = nx - first_cut;
    }
    if (rc != JL_OK) break;
    double area = 0.0, scale = 0.0;
    for (int k = 0; k < len; ++k) {
      const double *p = b.v + 3 * loop[k];
      xy[2 * k] = jl_tilt_dot(p, u);
      xy[2 * k + 1] = jl_tilt_dot(p, v);
    }
    for (int k = 0; k < len; ++k) {
      const double *p = xy + 2 * k, *q = xy + 2 * ((k + 1) % len);
      area += p[0] * q[1] - p[1] * q[0];
      scale = fmax(scale, fmax(fabs(p[0]), fabs(p[1])));
    }
    if (len < 3 || area <= 0.0) {
      rc = jl_error_set(err, JL_ERR_INPUT, "cut section has a hole");
      break;
    }
    if (jl_tilt_ear_clip(xy, loop, len, 1e-12 * scale * scale, &b) < 0)
      rc = jl_error_set(err, JL_ERR_INPUT, "cut section could not be triangulated");
  }
  free(seen);
  if (rc != JL_OK) goto done;
  rc = jl_mesh_from_arrays(out, b.v, b.nv, b.t, b.nt, err);
  if (rc == JL_OK) {
    jl_mesh_report rep;
    rc = jl_mesh_validate(out, "cut", &rep, err);
    if (rc == JL_OK && (rep.flipped_triangles || rep.degenerate_dropped))
      rc = jl_error_set(err, JL_ERR_INPUT, "cut: %d triangles flipped, %d dropped", rep.flipped_triangles,
                        rep.degenerate_dropped);
    if (rc != JL_OK) jl_mesh_free(out);
  }
done:
  free(f); free(map); free(em.key); free(em.val); free(b.v); free(b.t); free(next); free(loop); free(xy);
  return rc;
}

/* ---- the fill ---- */

/* Best of the layered fill and the slab fills across the axes in mask (bit
 * 0: x, bit 1: y) of one part. A part too large for the slab fill's cache
 * goes without. *cut is set when a limit stopped a fill. */
static int jl_tilt_fill_part(const jl_trunk_geom *g, int mask, int threads, double deadline,
                             const volatile sig_atomic_t *stop, jl_block_packing *best, jl_block_packing *tmp,
                             long long *tested, int *cut, jl_error *err) {
  jl_baseline_info bi;
  best->count = 0;
  int rc = jl_trunk_baseline_until(g, threads, 0, deadline, stop, best, &bi, err);
  if (rc != JL_OK) return rc;
  *tested += bi.boxes_tested;
  if (!bi.complete) *cut = 1;
  for (int ax = 0; ax < 2 && !*cut; ++ax) {
    if (!(mask & (1 << ax))) continue;
    jl_slab_info si;
    tmp->count = 0;
    rc = jl_trunk_slab_fill(g, ax, 1, 0.0, threads, deadline, stop, tmp, &si, err);
    if (rc == JL_ERR_INPUT) {  /* too large for the slab fill */
      if (err) memset(err, 0, sizeof *err);
      continue;
    }
    if (rc != JL_OK) return rc;
    *tested += si.boxes_tested;
    if (!si.complete) *cut = 1;
    if (tmp->count > best->count && (rc = jl_block_packing_copy(best, tmp, err)) != JL_OK) return rc;
  }
  return JL_OK;
}

/* Cuts m by n . p = d keeping one side, moving the cut away from the other
 * side while it is not clean. *ok = 0 when no clean cut was found. */
static int jl_tilt_cut(const jl_mesh *m, const double n[3], double d, int keep_above, jl_mesh *out, int *ok,
                       jl_error *err) {
  *ok = 0;
  for (int k = 0; k < JL_TILT_NUDGES; ++k) {
    double dk = d + (keep_above ? 1.0 : -1.0) * k * JL_TILT_NUDGE;
    jl_error e = {0};
    int rc = jl_trunk_tilt_clip(m, n, dk, keep_above, out, &e);
    if (rc == JL_OK) {
      *ok = 1;
      return JL_OK;
    }
    if (rc != JL_ERR_INPUT) {
      if (err) *err = e;
      return rc;
    }
  }
  return JL_OK;
}

/* Extent of m along the unit direction n. A box is at least its shortest
 * edge wide along any direction (the sum of e_k |n . a_k| >= min e_k). */
static double jl_tilt_width(const jl_mesh *m, const double n[3]) {
  double lo = INFINITY, hi = -INFINITY;
  for (int v = 0; v < m->n_vertices; ++v) {
    double x = jl_tilt_dot(n, m->vertices + 3 * v);
    lo = fmin(lo, x);
    hi = fmax(hi, x);
  }
  return m->n_vertices ? hi - lo : 0.0;
}


int jl_trunk_tilt_fill(const jl_trunk_geom *g, int rem_axes, int beat, int threads, double deadline,
                       const volatile sig_atomic_t *stop, jl_block_packing *out, jl_tilt_info *info,
                       jl_error *err) {
  double t0 = jl_time_now();
  jl_tilt_info inf;
  memset(&inf, 0, sizeof inf);
  inf.plane = -1;
  inf.complete = 1;
  out->count = 0;
  jl_tilt_plane planes[JL_TILT_MAX_PLANES];
  int np = 0, cut = 0;
  jl_trunk_limits lim = {deadline, stop, 0.0};
  /* the combined packing's exact check may finish past the limits */
  jl_trunk_limits fin = {deadline, stop, JL_TRUNK_FINISH_S};
  int rc = jl_tilt_planes_until(g->mesh, JL_TILT_MIN_AREA_FRAC, planes, JL_TILT_MAX_PLANES, &np, &lim, &cut, err);
  if (rc != JL_OK) return rc;
  if (np > JL_TILT_MAX_PLANES) np = JL_TILT_MAX_PLANES;  /* already so; the bound keeps -Wstringop-overread quiet */
  inf.planes = np;
  const jl_block_size *bs = &g->block;
  double shortest = fmin(bs->x, fmin(bs->y, bs->z)), longest = fmax(bs->x, fmax(bs->y, bs->z));
  double bvol = bs->x * bs->y * bs->z;
  int n_t = (int)floor(longest / shortest + 1e-9) + 1;
  jl_block_packing band = {0}, rem = {0}, tmp = {0}, cand = {0};
  jl_mesh bm = {0}, rm = {0};
  if ((rc = jl_block_packing_init(&band, 64, err)) != JL_OK || (rc = jl_block_packing_init(&rem, 256, err)) != JL_OK ||
      (rc = jl_block_packing_init(&tmp, 256, err)) != JL_OK || (rc = jl_block_packing_init(&cand, 256, err)) != JL_OK)
    goto done;
  for (int p = 0; p < np && rc == JL_OK && !cut; ++p) {
    const jl_tilt_plane *pl = &planes[p];
    double R[3][3];
    jl_trunk_tilt_frame(pl->n, R);
    double qR[4];
    jl_quat_from_axes(R, qR);  /* columns of R^T: the face frame's axes in the world */
    for (int k = 1; k <= n_t && rc == JL_OK && !cut; ++k) {
      if (jl_trunk_limits_hit(&lim, 0.0)) {
        cut = 1;
        break;
      }
      double t = k * shortest, dcut = pl->d - t;
      int ok_b = 0, ok_r = 0;
      jl_mesh_free(&bm);
      jl_mesh_free(&rm);
      if ((rc = jl_tilt_cut(g->mesh, pl->n, dcut, 1, &bm, &ok_b, err)) != JL_OK) break;
      if ((rc = jl_tilt_cut(g->mesh, pl->n, dcut, 0, &rm, &ok_r, err)) != JL_OK) break;
      if (!ok_b || !ok_r) {
        ++inf.unclean;
        continue;
      }
      if (bm.n_triangles == 0) continue;
      /* a remainder thinner than the shortest edge holds no block */
      double rvol = rm.n_triangles && jl_tilt_width(&rm, pl->n) >= shortest - g->tol ? jl_mesh_volume(&rm) : 0.0;
      int to_beat = beat > out->count ? beat : out->count;
      int last = rm.n_triangles == 0;  /* thicker bands hold the same */
      if ((int)floor(jl_mesh_volume(&bm) / bvol + 1e-9) + (int)floor(rvol / bvol + 1e-9) <= to_beat) {
        ++inf.skipped;
        if (last) break;
        continue;
      }
      /* the band in the face frame */
      for (int v = 0; v < bm.n_vertices; ++v) {
        double *x = bm.vertices + 3 * v, y[3];
        for (int r = 0; r < 3; ++r) y[r] = jl_tilt_dot(R[r], x);
        memcpy(x, y, sizeof y);
      }
      jl_trunk_geom bg, rg;
      if ((rc = jl_trunk_geom_init(&bg, &bm, *bs, err)) != JL_OK) break;
      rc = jl_tilt_fill_part(&bg, 3, threads, deadline, stop, &band, &tmp, &inf.boxes_tested, &cut, err);
      jl_trunk_geom_free(&bg);
      if (rc != JL_OK || cut) break;
      if (band.count + (int)floor(rvol / bvol + 1e-9) <= to_beat) {
        ++inf.skipped;
        if (last) break;
        continue;
      }
      rem.count = 0;
      if (rvol > 0.0) {
        if ((rc = jl_trunk_geom_init(&rg, &rm, *bs, err)) != JL_OK) break;
        rc = jl_tilt_fill_part(&rg, rem_axes, threads, deadline, stop, &rem, &tmp, &inf.boxes_tested, &cut, err);
        jl_trunk_geom_free(&rg);
        if (rc != JL_OK) break;
      }
      ++inf.splits;
      if (band.count == 0 || band.count + rem.count <= out->count) {
        if (last) break;
        continue;
      }
      /* band blocks back to the world, then the remainder's */
      cand.count = 0;
      jl_quat qr = {qR[0], qR[1], qR[2], qR[3]};
      for (int i = 0; i < band.count && rc == JL_OK; ++i) {
        const double *c = band.centre + 3 * i, *q = band.quat + 4 * i;
        double w[3];
        for (int e = 0; e < 3; ++e) w[e] = R[0][e] * c[0] + R[1][e] * c[1] + R[2][e] * c[2];
        jl_quat qb = {q[0], q[1], q[2], q[3]};
        jl_quat qw = jl_quat_normalize(jl_quat_mul(qr, qb));
        double qq[4] = {qw.w, qw.x, qw.y, qw.z};
        rc = jl_block_packing_push(&cand, w, qq, err);
      }
      for (int i = 0; i < rem.count && rc == JL_OK; ++i)
        rc = jl_block_packing_push(&cand, rem.centre + 3 * i, rem.quat + 4 * i, err);
      if (rc != JL_OK) break;
      jl_trunk_report rep;
      if ((rc = jl_trunk_check_packing_until(g, &cand, &fin, &rep, err)) != JL_OK) break;
      if (!rep.complete) {  /* not checked: never kept */
        cut = 1;
        break;
      }
      if (!rep.legal) {  /* never kept */
        ++inf.rejected;
        continue;
      }
      if ((rc = jl_block_packing_copy(out, &cand, err)) != JL_OK) break;
      inf.count = cand.count;
      inf.tilted = band.count;
      inf.plane = p;
      memcpy(inf.n, pl->n, sizeof inf.n);
      inf.thickness = t;
      if (last) break;
    }
  }
  if (cut) inf.complete = 0;
done:
  jl_mesh_free(&bm);
  jl_mesh_free(&rm);
  jl_block_packing_free(&band);
  jl_block_packing_free(&rem);
  jl_block_packing_free(&tmp);
  jl_block_packing_free(&cand);
  inf.time_s = jl_time_now() - t0;
  if (info && rc == JL_OK) *info = inf;
  return rc;
}
