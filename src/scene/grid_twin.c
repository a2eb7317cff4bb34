/* CPU twin of the device broad phase (kernels/scene/scene_collide.cu): its steps
 * in order on one thread, with the per-thread work from grid_pairs.h (one
 * cell per small body, the cells' table), so the device algorithm is tested
 * here against jl_broad_phase_run (every cell a box spans). (The cell
 * edge's sum is taken in index order here and by a tree on the device; the
 * pairs do not depend on the cell edge.) */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "grid_pairs.h"

typedef struct jl_kv {
  uint64_t key;
  int val;
} jl_kv;

static int jl_kv_cmp(const void *a, const void *b) {
  const jl_kv *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->val > y->val) - (x->val < y->val);  /* stable, like the radix sort */
}

static int jl_u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int jl_grid_twin_pairs(const jl_bodies *b, double margin, double skin, double ahead_s,
                       double *fat, uint64_t **pairs, long long *count, jl_gp_stats *stats,
                       jl_error *err) {
  *pairs = NULL;
  *count = 0;
  if (stats) memset(stats, 0, sizeof *stats);
  int n = b->count, rc = JL_OK;
  if (n == 0) return JL_OK;
  size_t nn = (size_t)n + 1;
  double *aabb = calloc(6 * nn, sizeof(double));
  uint8_t *kind = calloc(nn, 1);
  int *range = calloc(6 * nn, sizeof(int)), *large = calloc(nn, sizeof(int)),
      *planes = calloc(nn, sizeof(int));
  long long *estart = calloc(nn, sizeof(long long)), *pstart = calloc(nn, sizeof(long long));
  jl_kv *kv = NULL;
  uint64_t *keys = NULL;
  int *vals = NULL, *entry_body = NULL, *sorted_body = NULL, *bucket_start = NULL;
  uint64_t *entry_cell = NULL, *sorted_cell = NULL;
  uint64_t *out = NULL;
  if (!aabb || !kind || !range || !large || !planes || !estart || !pstart) goto nomem;

  double sum = 0.0;
  long long dyn = 0;
  for (int i = 0; i < n; ++i) {
    if (b->shape[i] == JL_SHAPE_PLANE) {
      kind[i] = JL_GP_PLANE;
      continue;
    }
    double *x = aabb + 6 * (size_t)i;
    jl_bm_aabb(b->shape, b->size, b->pos, b->quat, i, margin, x);
    for (int k = 0; k < 6; ++k)
      if (!isfinite(x[k])) {
        rc = jl_error_set(err, JL_ERR_INPUT, "body %d: position or size is not finite", i);
        goto done;
      }
    if (!b->is_static[i]) {
      sum += jl_bm_longest_edge(x);
      dyn++;
    }
  }
  if (dyn == 0) goto done;
  double cell = sum / (double)dyn;
  if (!(cell > 0.0)) cell = 1.0;
  /* a kept list: boxes widened by their skins, planes tested with a margin
   * wider by twice the least skin (grid_pairs.h, JL_GP_SKIN) */
  double wide = skin * cell;
  if (wide > 0.0)
    for (int i = 0; i < n; ++i) {
      if (kind[i] == JL_GP_PLANE) continue;
      double *x = aabb + 6 * (size_t)i;
      jl_gp_fatten(b->shape, b->vel, b->omega, i, x, skin, cell, ahead_s, x);
    }
  if (fat) memcpy(fat, aabb, 6 * (size_t)n * sizeof(double));
  jl_gp_view w;
  memset(&w, 0, sizeof w);
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  long long grid = 0;
  int spans = 0;
  for (int i = 0; i < n; ++i) {
    if (kind[i] == JL_GP_PLANE) {
      planes[w.n_planes++] = i;
      continue;
    }
    const double *x = aabb + 6 * (size_t)i;
    kind[i] = (uint8_t)jl_gp_kind(x, cell);
    if (kind[i] == JL_GP_LARGE) {
      large[w.n_large++] = i;
      continue;
    }
    kind[i] = (uint8_t)jl_gp_grid_kind(x, cell);
    grid++;
    spans += kind[i] == JL_GP_SPAN;
    for (int k = 0; k < 3; ++k) {
      lo[k] = fmin(lo[k], x[k]);
      hi[k] = fmax(hi[k], x[3 + k]);
      if (kind[i] == JL_GP_GRID) w.reach[k] = fmax(w.reach[k], x[3 + k] - x[k]);
    }
  }
  w.n = n;
  w.is_static = b->is_static;
  w.pos = b->pos;
  w.size = b->size;
  w.margin = margin + 2.0 * wide;
  w.aabb = aabb;
  w.kind = kind;
  w.cell_range = range;
  w.large = large;
  w.planes = planes;
  if (grid > 0) {
    jl_gp_grid_params(cell, lo, hi, &w.grid);
    long long m = 0;
    for (int i = 0; i < n; ++i) {
      estart[i] = m;
      if (!jl_gp_in_grid(kind[i])) continue;
      long long c = jl_gp_cells(&w.grid, aabb + 6 * (size_t)i, range + 6 * (size_t)i);
      m += kind[i] == JL_GP_GRID ? 1 : c;
    }
    if (m >= INT_MAX) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "grid twin: too many entries (%lld)", m);
      goto done;
    }
    w.table = jl_gp_table_for(&w.grid, m);
    int hashed = w.table.hash_bits > 0;
    if (stats) {
      stats->entries = m;
      stats->hashed = hashed;
      stats->spans = spans;
    }
    size_t me = (size_t)m + 1;
    kv = malloc(me * sizeof *kv);
    keys = malloc(me * sizeof *keys);
    vals = malloc(me * sizeof *vals);
    entry_body = malloc(me * sizeof *entry_body);
    sorted_body = malloc(me * sizeof *sorted_body);
    bucket_start = malloc(((size_t)w.table.buckets + 1) * sizeof *bucket_start);
    if (hashed) {  /* the cells beside the entries only where buckets mix them, as on the device */
      entry_cell = malloc(me * sizeof *entry_cell);
      sorted_cell = malloc(me * sizeof *sorted_cell);
    }
    if (!kv || !keys || !vals || !entry_body || !sorted_body || !bucket_start ||
        (hashed && (!entry_cell || !sorted_cell)))
      goto nomem;
    for (int i = 0; i < n; ++i)
      if (jl_gp_in_grid(kind[i]))
        jl_gp_fill_table(&w.grid, w.table, kind[i], range + 6 * (size_t)i, i, estart[i], keys,
                         vals, entry_body, entry_cell);
    for (long long e = 0; e < m; ++e) {
      kv[e].key = keys[e];
      kv[e].val = vals[e];
    }
    qsort(kv, (size_t)m, sizeof *kv, jl_kv_cmp);
    for (long long e = 0; e < m; ++e) {
      keys[e] = kv[e].key;
      sorted_body[e] = entry_body[kv[e].val];
      if (hashed) sorted_cell[e] = entry_cell[kv[e].val];
    }
    for (long long k = 0; k <= w.table.buckets; ++k)
      bucket_start[k] = jl_gp_lower_bound(keys, (int)m, (uint64_t)k);
    w.bucket_start = bucket_start;
    w.sorted_body = sorted_body;
    w.sorted_cell = sorted_cell;
  }
  long long total = 0;
  for (int u = 0; u < n; ++u) {
    pstart[u] = total;
    total += jl_gp_partners(&w, u, NULL);
  }
  if (total > 0) {
    out = malloc((size_t)total * sizeof *out);
    if (!out) goto nomem;
    for (int u = 0; u < n; ++u) jl_gp_partners(&w, u, out + pstart[u]);
    qsort(out, (size_t)total, sizeof *out, jl_u64_cmp);
  }
  *pairs = out;
  *count = total;
  out = NULL;
  goto done;
nomem:
  rc = jl_error_set(err, JL_ERR_NOMEM, "grid twin: out of memory");
done:
  free(aabb); free(kind); free(range); free(large); free(planes); free(estart); free(pstart);
  free(kv); free(keys); free(vals); free(entry_body); free(entry_cell); free(sorted_body);
  free(sorted_cell); free(bucket_start); free(out);
  return rc;
}
