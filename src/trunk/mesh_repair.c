#include "mesh_repair.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void jl_rp_sub(const double *a, const double *b, double *o) {
  o[0] = a[0] - b[0];
  o[1] = a[1] - b[1];
  o[2] = a[2] - b[2];
}
static void jl_rp_cross(const double *a, const double *b, double *o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}
static double jl_rp_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* ---- welding ---- */

static uint32_t jl_cell_hash(long long x, long long y, long long z) {
  uint64_t h = (uint64_t)x * 0x9E3779B97F4A7C15ull ^ (uint64_t)y * 0xC2B2AE3D27D4EB4Full ^
               (uint64_t)z * 0x165667B19E3779F9ull;
  return (uint32_t)(h ^ (h >> 32));
}

int jl_mesh_weld_near(jl_mesh *m, double tol, int *welded, jl_error *err) {
  *welded = 0;
  int n = m->n_vertices;
  if (!(tol > 0) || n < 2) return JL_OK;
  double lo[3] = {m->vertices[0], m->vertices[1], m->vertices[2]};
  for (int v = 1; v < n; ++v)
    for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], m->vertices[3 * v + k]);
  /* A hash of cells of edge tol: the kept vertices within tol of a vertex lie
   * in its cell's 27 neighbours. Buckets hold kept vertices of any cell that
   * hashes there; each is checked by distance. */
  size_t size = 1;
  while (size < (size_t)n) size <<= 1;
  int *head = malloc(size * sizeof *head), *next = malloc((size_t)n * sizeof *next);
  int *map = malloc((size_t)n * sizeof *map);
  if (!head || !next || !map) {
    free(head); free(next); free(map);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory welding %d vertices", n);
  }
  for (size_t i = 0; i < size; ++i) head[i] = -1;
  int kept = 0;
  double tol2 = tol * tol;
  for (int v = 0; v < n; ++v) {
    const double *p = m->vertices + 3 * v;
    long long c[3];
    for (int k = 0; k < 3; ++k) c[k] = (long long)floor((p[k] - lo[k]) / tol);
    int best = -1;
    double best_d2 = tol2;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
          for (int r = head[jl_cell_hash(c[0] + dx, c[1] + dy, c[2] + dz) & (size - 1)]; r >= 0; r = next[r]) {
            double d[3];
            jl_rp_sub(p, m->vertices + 3 * map[r], d);  /* kept vertices moved down to map[r] */
            double d2 = jl_rp_dot(d, d);
            if (d2 < best_d2 || (d2 == best_d2 && (best < 0 || r < best))) {
              best = r;
              best_d2 = d2;
            }
          }
    if (best >= 0) {
      map[v] = map[best];
      ++*welded;
    } else {
      uint32_t b = jl_cell_hash(c[0], c[1], c[2]) & (size - 1);
      next[v] = head[b];
      head[b] = v;
      map[v] = kept;
      if (kept != v) memmove(m->vertices + 3 * kept, p, 3 * sizeof *p);
      ++kept;
    }
  }
  for (int i = 0; i < 3 * m->n_triangles; ++i) m->triangles[i] = map[m->triangles[i]];
  m->n_vertices = kept;
  free(head); free(next); free(map);
  return JL_OK;
}

/* ---- doubled triangles ---- */

typedef struct jl_tri_key {
  int v[3];     /* sorted corners */
  int odd;      /* the corners in file order are an odd permutation of v */
  int tri;
} jl_tri_key;

static int jl_cmp_tri_key(const void *a, const void *b) {
  const jl_tri_key *p = a, *q = b;
  for (int k = 0; k < 3; ++k)
    if (p->v[k] != q->v[k]) return p->v[k] < q->v[k] ? -1 : 1;
  if (p->odd != q->odd) return p->odd - q->odd;
  return p->tri < q->tri ? -1 : p->tri > q->tri;
}

int jl_mesh_drop_doubled(jl_mesh *m, int *orig, int *removed, jl_error *err) {
  *removed = 0;
  int n = m->n_triangles;
  if (n < 2) return JL_OK;
  jl_tri_key *key = malloc((size_t)n * sizeof *key);
  char *drop = calloc((size_t)n, 1);
  if (!key || !drop) {
    free(key); free(drop);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d triangles", n);
  }
  for (int t = 0; t < n; ++t) {
    int a = m->triangles[3 * t], b = m->triangles[3 * t + 1], c = m->triangles[3 * t + 2], odd = 0, x;
    /* sort three by swaps, counting them */
    if (a > b) { x = a; a = b; b = x; odd ^= 1; }
    if (b > c) { x = b; b = c; c = x; odd ^= 1; }
    if (a > b) { x = a; a = b; b = x; odd ^= 1; }
    key[t] = (jl_tri_key){{a, b, c}, odd, t};
  }
  qsort(key, (size_t)n, sizeof *key, jl_cmp_tri_key);
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && memcmp(key[j].v, key[i].v, sizeof key[i].v) == 0) ++j;
    /* [i, j): even ones first, then odd ones; pair them off */
    int e = i;
    while (e < j && !key[e].odd) ++e;
    int pairs = e - i < j - e ? e - i : j - e;
    for (int k = 0; k < pairs; ++k) {
      drop[key[i + k].tri] = 1;
      drop[key[e + k].tri] = 1;
    }
    i = j;
  }
  int kept = 0;
  for (int t = 0; t < n; ++t) {
    if (drop[t]) continue;
    memmove(m->triangles + 3 * kept, m->triangles + 3 * t, 3 * sizeof *m->triangles);
    if (orig) orig[kept] = orig[t];
    ++kept;
  }
  *removed = n - kept;
  m->n_triangles = kept;
  free(key); free(drop);
  return JL_OK;
}

/* ---- slivers ---- */

double jl_mesh_triangle_height(const jl_mesh *m, int t, int *edge) {
  const int *tr = m->triangles + 3 * t;
  double e[3][3], n[3], best = -1.0;
  int k_best = 0;
  for (int k = 0; k < 3; ++k) {
    jl_rp_sub(m->vertices + 3 * tr[(k + 1) % 3], m->vertices + 3 * tr[k], e[k]);
    double l = jl_rp_dot(e[k], e[k]);
    if (l > best) {
      best = l;
      k_best = k;
    }
  }
  jl_rp_cross(e[0], e[1], n);
  if (edge) *edge = k_best;
  return best > 0 ? sqrt(jl_rp_dot(n, n)) / sqrt(best) : 0.0;
}

static void jl_rp_normal(const double *v, int a, int b, int c, double *n) {
  double u[3], w[3];
  jl_rp_sub(v + 3 * b, v + 3 * a, u);
  jl_rp_sub(v + 3 * c, v + 3 * a, w);
  jl_rp_cross(u, w, n);
}

/* Height of a, b, c over its longest edge. */
static double jl_rp_height(const double *v, int a, int b, int c) {
  double n[3], e[3], l = 0.0;
  jl_rp_normal(v, a, b, c, n);
  int p[4] = {a, b, c, a};
  for (int k = 0; k < 3; ++k) {
    jl_rp_sub(v + 3 * p[k + 1], v + 3 * p[k], e);
    l = fmax(l, jl_rp_dot(e, e));
  }
  return l > 0 ? sqrt(jl_rp_dot(n, n)) / sqrt(l) : 0.0;
}

typedef struct jl_rp_edge {
  int lo, hi, tri, slot;
} jl_rp_edge;

static int jl_cmp_rp_edge(const void *a, const void *b) {
  const jl_rp_edge *p = a, *q = b;
  if (p->lo != q->lo) return p->lo < q->lo ? -1 : 1;
  if (p->hi != q->hi) return p->hi < q->hi ? -1 : 1;
  return p->tri < q->tri ? -1 : p->tri > q->tri;
}

/* Index of the first edge (lo, hi) in the sorted array, or -1. */
static int jl_rp_find(const jl_rp_edge *e, int n, int lo, int hi) {
  int a = 0, b = n;
  while (a < b) {
    int mid = a + (b - a) / 2;
    if (e[mid].lo < lo || (e[mid].lo == lo && e[mid].hi < hi)) a = mid + 1;
    else b = mid;
  }
  return a < n && e[a].lo == lo && e[a].hi == hi ? a : -1;
}

int jl_mesh_flip_slivers(jl_mesh *m, double tol, int *flips, jl_error *err) {
  *flips = 0;
  int n = m->n_triangles, ne = 3 * n;
  if (!(tol > 0) || n < 2) return JL_OK;
  jl_rp_edge *e = malloc((size_t)ne * sizeof *e);
  int *mark = calloc((size_t)m->n_vertices, sizeof *mark);
  if (!e || !mark) {
    free(e); free(mark);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d edges", ne);
  }
  for (int round = 1; round <= JL_MESH_SLIVER_ROUNDS; ++round) {
    for (int t = 0; t < n; ++t)
      for (int k = 0; k < 3; ++k) {
        int a = m->triangles[3 * t + k], b = m->triangles[3 * t + (k + 1) % 3];
        e[3 * t + k] = (jl_rp_edge){a < b ? a : b, a < b ? b : a, t, k};
      }
    qsort(e, (size_t)ne, sizeof *e, jl_cmp_rp_edge);
    int done = 0;
    for (int t = 0; t < n; ++t) {
      int k;
      double h = jl_mesh_triangle_height(m, t, &k);
      if (!(h < tol)) continue;
      int *tr = m->triangles + 3 * t;
      int A = tr[k], B = tr[(k + 1) % 3], C = tr[(k + 2) % 3];
      /* the neighbour across AB: the other triangle of that edge */
      int i = jl_rp_find(e, ne, A < B ? A : B, A < B ? B : A);
      if (i < 0 || i + 1 >= ne || e[i + 1].lo != e[i].lo || e[i + 1].hi != e[i].hi) continue;
      int u = e[i].tri == t ? e[i + 1].tri : e[i].tri;
      int *tu = m->triangles + 3 * u;
      int j = -1;
      for (int s = 0; s < 3; ++s)
        if (tu[s] == B && tu[(s + 1) % 3] == A) j = s;
      if (j < 0) continue;  /* not oriented consistently: the validation says so */
      int D = tu[(j + 2) % 3];
      if (D == C || mark[A] == round || mark[B] == round || mark[C] == round || mark[D] == round) continue;
      if (jl_rp_find(e, ne, C < D ? C : D, C < D ? D : C) >= 0) continue;
      double nr[3], n1[3], n2[3];
      jl_rp_normal(m->vertices, B, A, D, nr);
      jl_rp_normal(m->vertices, A, D, C, n1);
      jl_rp_normal(m->vertices, D, B, C, n2);
      if (!(jl_rp_dot(n1, nr) > 0 && jl_rp_dot(n2, nr) > 0)) continue;
      if (!(fmin(jl_rp_height(m->vertices, A, D, C), jl_rp_height(m->vertices, D, B, C)) > h)) continue;
      tr[0] = A; tr[1] = D; tr[2] = C;
      tu[0] = D; tu[1] = B; tu[2] = C;
      mark[A] = mark[B] = mark[C] = mark[D] = round;
      ++done;
    }
    *flips += done;
    if (!done) break;
  }
  free(e); free(mark);
  return JL_OK;
}
