/* The device broad phase's per-thread steps (kernels/scene/scene_collide.cu),
 * shared with its CPU twin (grid_twin.c). The grid is the CPU's
 * (broad_phase.h): bodies that span many cells ("large") and planes stay out
 * of it and are tested against every body. The CPU puts a grid body in
 * every cell its box spans; the device puts a body whose box is at most
 * JL_GP_ONE_CELL_MAX cell edges on each axis (JL_GP_GRID: a pile's sphere, a
 * wall's brick) in the one cell of its box's low corner, and only larger grid
 * bodies (JL_GP_SPAN) in every cell they span. Cells are found through a
 * table of buckets (jl_gp_table: the cell's index in the grid, or its hash
 * where the grid is sparse). A pair (u, v) is found once: for two one-cell
 * bodies by the one whose cell comes first (the lower body in one cell),
 * among the cells of u's box reached down by the largest one-cell box
 * (jl_gp_query); for a spanning body and a one-cell body by the spanning one;
 * for two spanning bodies by the lower one in the cell of the boxes' low
 * intersection corner; by the grid body for a grid/large pair, by the lower
 * one of two large bodies, by the non-plane body for a plane. Pairs are packed
 * as (min << 32 | max), so sorting them gives the CPU's (a, b) order.
 * broad_phase.c uses the kind, grid size, cell and key helpers as well. */
#ifndef JL_GRID_PAIRS_H
#define JL_GRID_PAIRS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "broad_math.h"
#include "hd.h"

/* Bodies whose box spans more grid cells than this are kept out of the grid
 * and tested against every body (a large static floor box, say). */
#define JL_GP_LARGE_CELLS 512
/* A grid body whose box is at most this many cell edges on every axis takes
 * one cell on the device (JL_GP_GRID), a larger one every cell it spans. */
#define JL_GP_ONE_CELL_MAX 1.5
/* The cells' table indexes the grid's cells directly while they are at most
 * this many per entry, and hashes them beyond (a sparse scene). */
#define JL_GP_DENSE_PER_ENTRY 4

/* JL_GP_SPAN: the device's and the twin's grid bodies in several cells (the
 * CPU's broad phase marks every grid body JL_GP_GRID). */
enum { JL_GP_GRID = 0, JL_GP_LARGE = 1, JL_GP_PLANE = 2, JL_GP_SPAN = 3 };

typedef struct jl_grid {
  double cell, origin[3];
  int bits[3];
  int dim[3]; /* cells per axis */
} jl_grid;

/* The cells' table: cell c (its index x + dim0 (y + dim1 z)) is in bucket c,
 * or in its hash's top hash_bits bits where hash_bits > 0. */
typedef struct jl_gp_table {
  long long buckets;
  int hash_bits;
} jl_gp_table;

/* Everything a partner search reads (device or host pointers). */
typedef struct jl_gp_view {
  int n;
  const uint8_t *is_static;
  const double *pos, *size; /* planes: point and normal */
  double margin;
  const double *aabb;       /* 6 per body */
  const uint8_t *kind;      /* JL_GP_* */
  const int *cell_range;    /* 6 per grid body */
  jl_grid grid;
  jl_gp_table table;
  double reach[3];          /* the one-cell bodies' largest box edge per axis */
  const int *bucket_start;  /* first sorted entry of each bucket, plus the end */
  const int *sorted_body;   /* body of each entry, sorted by bucket */
  const uint64_t *sorted_cell; /* its cell (hashed tables only) */
  const int *large, *planes;
  int n_large, n_planes;
} jl_gp_view;

JL_HD static inline int jl_gp_in_grid(int kind) {
  return kind == JL_GP_GRID || kind == JL_GP_SPAN;
}

/* JL_GP_GRID or JL_GP_SPAN for a grid body's box. */
JL_HD static inline int jl_gp_grid_kind(const double box[6], double cell) {
  for (int k = 0; k < 3; ++k)
    if (!(box[3 + k] - box[k] <= JL_GP_ONE_CELL_MAX * cell)) return JL_GP_SPAN;
  return JL_GP_GRID;
}

/* Grid or large, from the box and the cell edge. */
JL_HD static inline int jl_gp_kind(const double box[6], double cell) {
  double cells = 1.0;
  for (int k = 0; k < 3; ++k) cells *= (box[3 + k] - box[k]) / cell + 2.0;
  return cells > JL_GP_LARGE_CELLS ? JL_GP_LARGE : JL_GP_GRID;
}

/* Cell coordinates must fit 63 key bits and an int: coarsens the grid if
 * not (the CPU's loop). lo, hi: bounds of the grid bodies' boxes. */
JL_HD static inline void jl_gp_grid_params(double cell, const double lo[3], const double hi[3],
                                           jl_grid *g) {
  g->cell = cell;
  for (;;) {
    int total = 0, fits = 1;
    for (int k = 0; k < 3; ++k) {
      g->origin[k] = lo[k];
      double cells = floor((hi[k] - lo[k]) / g->cell) + 1.0;
      if (cells > 1e9) fits = 0;
      g->dim[k] = fits ? (int)cells : 0;
      int bits = 1;
      while (bits < 62 && ldexp(1.0, bits) < cells) bits++;
      g->bits[k] = bits;
      total += bits;
    }
    if (fits && total <= 63) break;
    g->cell *= 2.0;
  }
}

/* Cell range (low xyz, high xyz) of a grid body's box; returns its cell count. */
JL_HD static inline long long jl_gp_cells(const jl_grid *g, const double box[6], int range[6]) {
  for (int k = 0; k < 3; ++k) {
    range[k] = (int)floor((box[k] - g->origin[k]) / g->cell);
    range[3 + k] = (int)floor((box[3 + k] - g->origin[k]) / g->cell);
  }
  return (long long)(range[3] - range[0] + 1) * (range[4] - range[1] + 1) * (range[5] - range[2] + 1);
}

JL_HD static inline uint64_t jl_gp_key(const jl_grid *g, int x, int y, int z) {
  return (uint64_t)x | ((uint64_t)y << g->bits[0]) | ((uint64_t)z << (g->bits[0] + g->bits[1]));
}

/* Body i's entries from offset o: cell keys, entry index, body. */
JL_HD static inline void jl_gp_fill(const jl_grid *g, const int range[6], int i, long long o,
                                    uint64_t *keys, int *vals, int *entry_body) {
  for (int z = range[2]; z <= range[5]; ++z)
    for (int y = range[1]; y <= range[4]; ++y)
      for (int x = range[0]; x <= range[3]; ++x) {
        keys[o] = jl_gp_key(g, x, y, z);
        vals[o] = (int)o;
        entry_body[o] = i;
        o++;
      }
}

JL_HD static inline uint64_t jl_gp_pack(int a, int b) {
  int lo = a < b ? a : b, hi = a < b ? b : a;
  return ((uint64_t)(uint32_t)lo << 32) | (uint32_t)hi;
}

/* The table for a grid of `entries` (cell, body) entries. */
JL_HD static inline jl_gp_table jl_gp_table_for(const jl_grid *g, long long entries) {
  jl_gp_table t;
  double cells = (double)g->dim[0] * (double)g->dim[1] * (double)g->dim[2];
  if (cells <= (double)JL_GP_DENSE_PER_ENTRY * (double)entries + 64.0) {
    t.buckets = (long long)cells;
    t.hash_bits = 0;
    return t;
  }
  int bits = 1;
  while (bits < 40 && (1LL << bits) < 2 * entries) bits++;
  t.buckets = 1LL << bits;
  t.hash_bits = bits;
  return t;
}

JL_HD static inline uint64_t jl_gp_cell_index(const jl_grid *g, int x, int y, int z) {
  return (uint64_t)x + (uint64_t)g->dim[0] * ((uint64_t)y + (uint64_t)g->dim[1] * (uint64_t)z);
}

JL_HD static inline uint64_t jl_gp_bucket(jl_gp_table t, uint64_t cell) {
  return t.hash_bits ? (cell * 0x9E3779B97F4A7C15ULL) >> (64 - t.hash_bits) : cell;
}

/* Grid body i's entries from offset o: its bucket, the entry's index, the
 * body and (a hashed table; else NULL) the cell. A one-cell body has one. */
JL_HD static inline void jl_gp_fill_table(const jl_grid *g, jl_gp_table t, int kind,
                                          const int range[6], int i, long long o, uint64_t *keys,
                                          int *vals, int *entry_body, uint64_t *entry_cell) {
  int hx = kind == JL_GP_GRID ? range[0] : range[3], hy = kind == JL_GP_GRID ? range[1] : range[4],
      hz = kind == JL_GP_GRID ? range[2] : range[5];
  for (int z = range[2]; z <= hz; ++z)
    for (int y = range[1]; y <= hy; ++y)
      for (int x = range[0]; x <= hx; ++x) {
        uint64_t c = jl_gp_cell_index(g, x, y, z);
        keys[o] = jl_gp_bucket(t, c);
        vals[o] = (int)o;
        entry_body[o] = i;
        if (entry_cell) entry_cell[o] = c;
        o++;
      }
}

/* First of the m sorted keys not below want. */
JL_HD static inline int jl_gp_lower_bound(const uint64_t *keys, int m, uint64_t want) {
  int lo = 0, hi = m;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (keys[mid] < want) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The cells (low xyz, high xyz) that hold the low corner of any one-cell
 * box meeting box: from its low side less the reach (and a rounding's slack:
 * the cells come from the same monotone floor as jl_gp_cells) to its high
 * side, within the grid. */
JL_HD static inline void jl_gp_query(const jl_grid *g, const double box[6],
                                     const double reach[3], int q[6]) {
  for (int k = 0; k < 3; ++k) {
    double low = box[k] - reach[k];
    low -= 1e-12 * (fabs(box[k]) + reach[k]);
    double a = floor((low - g->origin[k]) / g->cell);
    double b = floor((box[3 + k] - g->origin[k]) / g->cell);
    q[k] = a < 0.0 ? 0 : (int)a;
    q[3 + k] = b > (double)(g->dim[k] - 1) ? g->dim[k] - 1 : (int)b;
  }
}

/* Partners of body u (see above); out == NULL: count only. */
JL_HD static inline long long jl_gp_partners(const jl_gp_view *w, int u, uint64_t *out) {
  long long cnt = 0;
  int ku = w->kind[u];
  if (ku == JL_GP_PLANE) return 0;
  const uint8_t *st = w->is_static;
  const double *bu = w->aabb + 6 * (size_t)u;
  if (jl_gp_in_grid(ku)) {
    const int *cu = w->cell_range + 6 * (size_t)u;
    int q[6];
    jl_gp_query(&w->grid, bu, w->reach, q);
    /* a one-cell body looks at its own cell and the ones after it */
    uint64_t own = ku == JL_GP_GRID ? jl_gp_cell_index(&w->grid, cu[0], cu[1], cu[2]) : 0;
    for (int z = q[2]; z <= q[5]; ++z)
      for (int y = q[1]; y <= q[4]; ++y) {
        uint64_t row = jl_gp_cell_index(&w->grid, 0, y, z);
        if (row + (uint64_t)q[3] < own) continue;
        int x0 = q[0];
        if (row + (uint64_t)x0 < own) x0 = (int)(own - row);
        for (int x = x0; x <= q[3]; ++x) {
          uint64_t c = row + (uint64_t)x, k = jl_gp_bucket(w->table, c);
          for (int p = w->bucket_start[k], pe = w->bucket_start[k + 1]; p < pe; ++p) {
            if (w->table.hash_bits && w->sorted_cell[p] != c) continue;
            int v = w->sorted_body[p], kv = w->kind[v];
            if (ku == JL_GP_GRID) {
              if (kv != JL_GP_GRID || (c == own && v <= u)) continue;
            } else if (kv == JL_GP_SPAN) {
              if (v <= u) continue;
              const int *cv = w->cell_range + 6 * (size_t)v;
              /* only in the cell of the intersection's low corner */
              if ((cu[0] > cv[0] ? cu[0] : cv[0]) != x || (cu[1] > cv[1] ? cu[1] : cv[1]) != y ||
                  (cu[2] > cv[2] ? cu[2] : cv[2]) != z)
                continue;
            }
            if (st[u] && st[v]) continue;
            if (jl_bm_overlap(bu, w->aabb + 6 * (size_t)v)) {
              if (out) out[cnt] = jl_gp_pack(u, v);
              cnt++;
            }
          }
        }
      }
  }
  for (int l = 0; l < w->n_large; ++l) {
    int L = w->large[l];
    if (L == u || (ku == JL_GP_LARGE && L < u) || (st[u] && st[L])) continue;
    if (!jl_bm_overlap(bu, w->aabb + 6 * (size_t)L)) continue;
    if (out) out[cnt] = jl_gp_pack(u, L);
    cnt++;
  }
  if (!st[u])
    for (int l = 0; l < w->n_planes; ++l) {
      int P = w->planes[l];
      if (!jl_bm_near_plane(w->pos, w->size, P, bu, w->margin)) continue;
      if (out) out[cnt] = jl_gp_pack(u, P);
      cnt++;
    }
  return cnt;
}

/* A kept pair list (the step's, on the device and on the CPU): built from
 * every box widened by a skin on each side, it holds every pair the boxes
 * of a later step give while each of those lies inside its widened box (a box inside another
 * meets no more than the wider one does, and comes no nearer a plane). The
 * narrow phase then takes only the pairs that pass the broad phase's own
 * tests on the boxes of now (jl_gp_live), so the contacts are the same
 * bytes as from a list built afresh. A body's skin is JL_GP_SKIN times the
 * cell edge (the dynamic bodies' mean longest box edge) plus the way its
 * fastest point would go in JL_GP_AHEAD_STEPS steps at the build's speed,
 * so one fast body (a projectile) does not end the list every step. */
#define JL_GP_SKIN 0.1
#define JL_GP_AHEAD_STEPS 8
/* No skin is wider than this many cell edges: a body that fast (a diverged
 * run's) meets every body near it anyway, and its widened box stays finite. */
#define JL_GP_SKIN_MAX_CELLS 8.0

/* Body i's skin: base plus ahead_s times the speed bound of its box's
 * points, |v| + |w| times the half diagonal (spheres: |v|; their boxes do
 * not turn), at most cap (and cap for a speed that is not finite). vel,
 * omega: 3 per body. */
JL_HD static inline double jl_gp_skin(const uint8_t *shape, const double *vel,
                                      const double *omega, int i, const double box[6],
                                      double base, double cap, double ahead_s) {
  const double *v = vel + 3 * (size_t)i, *w = omega + 3 * (size_t)i;
  double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (shape[i] == JL_SHAPE_BOX) {
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) d2 += 0.25 * (box[3 + k] - box[k]) * (box[3 + k] - box[k]);
    speed += sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * sqrt(d2);
  }
  double s = base + ahead_s * speed;
  return s <= cap ? s : cap;
}

JL_HD static inline void jl_gp_widen(const double box[6], double skin, double fat[6]) {
  for (int k = 0; k < 3; ++k) {
    fat[k] = box[k] - 0.5 * skin;
    fat[3 + k] = box[3 + k] + 0.5 * skin;
  }
}

/* Body i's box widened by its skin (jl_gp_skin: share of the cell edge, and
 * ahead_s at its speed, at most JL_GP_SKIN_MAX_CELLS cell edges) into fat
 * (fat may be box): the CPU's broad phase, its twin and the device alike. */
JL_HD static inline void jl_gp_fatten(const uint8_t *shape, const double *vel,
                                      const double *omega, int i, const double box[6],
                                      double share, double cell, double ahead_s, double fat[6]) {
  jl_gp_widen(box,
              jl_gp_skin(shape, vel, omega, i, box, share * cell, JL_GP_SKIN_MAX_CELLS * cell,
                         ahead_s),
              fat);
}

/* 1 when box lies inside fat (NaN: never). */
JL_HD static inline int jl_gp_inside(const double box[6], const double fat[6]) {
  return box[0] >= fat[0] && box[1] >= fat[1] && box[2] >= fat[2] && box[3] <= fat[3] &&
         box[4] <= fat[4] && box[5] <= fat[5];
}

/* 1 when the pair (u, v) passes the broad phase's tests on the boxes aabb
 * (jl_gp_partners': boxes that meet, not both static; a plane and a
 * dynamic body's box within margin / 2 of it). A plane's box is not read. */
JL_HD static inline int jl_gp_live(const uint8_t *shape, const uint8_t *is_static,
                                   const double *pos, const double *size, const double *aabb,
                                   double margin, int u, int v) {
  if (shape[u] == JL_SHAPE_PLANE || shape[v] == JL_SHAPE_PLANE) {
    int p = shape[u] == JL_SHAPE_PLANE ? u : v, o = p == u ? v : u;
    return !is_static[o] && jl_bm_near_plane(pos, size, p, aabb + 6 * (size_t)o, margin);
  }
  return !(is_static[u] && is_static[v]) &&
         jl_bm_overlap(aabb + 6 * (size_t)u, aabb + 6 * (size_t)v);
}

#ifdef __cplusplus
extern "C" {
#endif
/* What the twin's grid held (jl_gpu_collide_stats' entries, spans, hashed). */
typedef struct jl_gp_stats {
  long long entries;
  int spans, hashed;
} jl_gp_stats;

/* grid_twin.c: the device broad phase's steps run one after the other on the
 * CPU (sorts by qsort, stable by entry): the pairs, sorted, as (a << 32 | b)
 * into *pairs (malloc'd, caller frees). skin > 0: a kept list, from the boxes
 * widened by jl_gp_skin (skin times the cell edge, and ahead_s at each
 * body's speed), those boxes into fat (6 per body; planes' slots unset)
 * unless NULL; the grid's numbers into stats unless NULL. 0 or an error code. */
int jl_grid_twin_pairs(const jl_bodies *b, double margin, double skin, double ahead_s,
                       double *fat, uint64_t **pairs, long long *count, jl_gp_stats *stats,
                       jl_error *err);
#ifdef __cplusplus
}
#endif

#endif
