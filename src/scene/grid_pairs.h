/* The device broad phase's per-thread steps (kernels/scene/scene_collide.cu),
 * shared with its CPU twin (grid_twin.c): cells of a body's box, its
 * (cell key, entry) pairs, and its partners. The grid is the CPU's
 * (broad_phase.h): bodies that span many cells ("large") and planes stay out
 * of it and are tested against every body. A pair (u, v) is found once: by
 * the lower grid body in the cell of the boxes' low intersection corner, by
 * the grid body for a grid/large pair, by the lower one of two large
 * bodies, by the non-plane body for a plane. Pairs are packed as
 * (min << 32 | max), so sorting them gives the CPU's (a, b) order.
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

enum { JL_GP_GRID = 0, JL_GP_LARGE = 1, JL_GP_PLANE = 2 };

typedef struct jl_grid {
  double cell, origin[3];
  int bits[3];
} jl_grid;

/* Everything a partner search reads (device or host pointers). */
typedef struct jl_gp_view {
  int n;
  const uint8_t *is_static;
  const double *pos, *size; /* planes: point and normal */
  double margin;
  const double *aabb;       /* 6 per body */
  const uint8_t *kind;      /* JL_GP_* */
  const int *cell_range;    /* 6 per grid body */
  const long long *entry_start; /* first entry of each grid body (fill order) */
  const int *entry_run;     /* run of equal cells holding each entry (fill order) */
  const long long *cell_start; /* start of each run in the sorted entries, plus the end */
  const int *sorted_body;   /* body of each sorted entry */
  const int *large, *planes;
  int n_large, n_planes;
} jl_gp_view;

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

/* Partners of body u (see above); out == NULL: count only. */
JL_HD static inline long long jl_gp_partners(const jl_gp_view *w, int u, uint64_t *out) {
  long long cnt = 0;
  int ku = w->kind[u];
  if (ku == JL_GP_PLANE) return 0;
  const uint8_t *st = w->is_static;
  const double *bu = w->aabb + 6 * (size_t)u;
  if (ku == JL_GP_GRID) {
    const int *cu = w->cell_range + 6 * (size_t)u;
    long long e = w->entry_start[u];
    for (int z = cu[2]; z <= cu[5]; ++z)
      for (int y = cu[1]; y <= cu[4]; ++y)
        for (int x = cu[0]; x <= cu[3]; ++x, ++e) {
          int r = w->entry_run[e];
          for (long long p = w->cell_start[r], pe = w->cell_start[r + 1]; p < pe; ++p) {
            int v = w->sorted_body[p];
            if (v <= u || (st[u] && st[v])) continue;
            const int *cv = w->cell_range + 6 * (size_t)v;
            /* only in the cell of the intersection's low corner */
            if ((cu[0] > cv[0] ? cu[0] : cv[0]) != x || (cu[1] > cv[1] ? cu[1] : cv[1]) != y ||
                (cu[2] > cv[2] ? cu[2] : cv[2]) != z)
              continue;
            if (jl_bm_overlap(bu, w->aabb + 6 * (size_t)v)) {
              if (out) out[cnt] = jl_gp_pack(u, v);
              cnt++;
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
/* grid_twin.c: the device broad phase's steps run one after the other on the
 * CPU (sorts by qsort, stable by entry): the pairs, sorted, as (a << 32 | b)
 * into *pairs (malloc'd, caller frees). skin > 0: a kept list, from the boxes
 * widened by jl_gp_skin (skin times the cell edge, and ahead_s at each
 * body's speed), those boxes into fat (6 per body; planes' slots unset)
 * unless NULL. 0 or an error code. */
int jl_grid_twin_pairs(const jl_bodies *b, double margin, double skin, double ahead_s,
                       double *fat, uint64_t **pairs, long long *count, jl_error *err);
#ifdef __cplusplus
}
#endif

#endif
