#include "trunk_baseline.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "parallel.h"
#include "timer.h"

void jl_quat_from_axes(const double col[3][3], double q[4]) {
  /* m[r][c] = col[c][r]; Shepperd's method picks the largest diagonal term. */
  double m00 = col[0][0], m11 = col[1][1], m22 = col[2][2];
  double tr = m00 + m11 + m22;
  double w, x, y, z;
  if (tr > 0) {
    double s = 2.0 * sqrt(tr + 1.0);
    w = 0.25 * s;
    x = (col[1][2] - col[2][1]) / s;
    y = (col[2][0] - col[0][2]) / s;
    z = (col[0][1] - col[1][0]) / s;
  } else if (m00 > m11 && m00 > m22) {
    double s = 2.0 * sqrt(1.0 + m00 - m11 - m22);
    w = (col[1][2] - col[2][1]) / s;
    x = 0.25 * s;
    y = (col[1][0] + col[0][1]) / s;
    z = (col[2][0] + col[0][2]) / s;
  } else if (m11 > m22) {
    double s = 2.0 * sqrt(1.0 + m11 - m00 - m22);
    w = (col[2][0] - col[0][2]) / s;
    x = (col[1][0] + col[0][1]) / s;
    y = 0.25 * s;
    z = (col[2][1] + col[1][2]) / s;
  } else {
    double s = 2.0 * sqrt(1.0 + m22 - m00 - m11);
    w = (col[0][1] - col[1][0]) / s;
    x = (col[2][0] + col[0][2]) / s;
    y = (col[2][1] + col[1][2]) / s;
    z = 0.25 * s;
  }
  if (w < 0) { w = -w; x = -x; y = -y; z = -z; }
  double l = sqrt(w * w + x * x + y * y + z * z);
  q[0] = w / l;
  q[1] = x / l;
  q[2] = y / l;
  q[3] = z / l;
}

void jl_trunk_axis_quat(const int e[3], double q[4]) {
  double col[3][3] = {{0}};
  for (int w = 0; w < 3; ++w) col[e[w]][w] = 1.0;  /* body axis e[w] -> world axis w */
  double det = col[0][0] * (col[1][1] * col[2][2] - col[1][2] * col[2][1]) -
               col[0][1] * (col[1][0] * col[2][2] - col[1][2] * col[2][0]) +
               col[0][2] * (col[1][0] * col[2][1] - col[1][1] * col[2][0]);
  if (det < 0)  /* a box is symmetric: reverse one body axis to make a rotation */
    for (int k = 0; k < 3; ++k) col[e[2]][k] = -col[e[2]][k];
  jl_quat_from_axes(col, q);
}

typedef struct jl_layer_choice {
  int count;               /* -1 until computed */
  int swap;                /* 0: horizontal edges (a, b) along (x, y); 1: (b, a) */
  double ox, oy;
} jl_layer_choice;

/* Layers start on a z grid of step dz from the bounding box floor. Slot
 * (i, v) is the layer at z_i with block edge v upright; the slots are
 * independent, so threads take them from an atomic counter. */
typedef struct jl_baseline_shared {
  const jl_trunk_geom *g;
  double lo[3], hi[3];
  int offsets;
  double dz;
  int n_z;
  jl_layer_choice *slot;   /* n_z * 3 */
  atomic_int next;
  atomic_llong tested;
  atomic_int failed;
  jl_trunk_limits lim;     /* of the search over layers (no grace) */
  atomic_int cut;          /* 1 once a limit stopped the work */
} jl_baseline_shared;

/* Box tests between polls of the limits (a test costs about a microsecond). */
#define JL_BASELINE_POLL 64

static int jl_baseline_stopped(jl_baseline_shared *s) {
  if (atomic_load(&s->cut)) return 1;
  if (jl_trunk_limits_hit(&s->lim, 0.0)) {
    atomic_store(&s->cut, 1);
    return 1;
  }
  return 0;
}

/* Limits for placing and checking what a fill found: the run's, but not
 * before JL_TRUNK_FINISH_S from now. */
static jl_trunk_limits jl_finish_limits(const jl_trunk_limits *run) {
  jl_trunk_limits f = *run;
  f.grace = JL_TRUNK_FINISH_S;
  return f;
}

static double jl_edge(const jl_block_size *b, int e) { return e == 0 ? b->x : e == 1 ? b->y : b->z; }

/* Blocks of one layer at one horizontal offset and orientation that pass,
 * at most max (< 0: no cap); with out they are appended. Returns -1 when
 * out of memory, -2 when lim (work started at since) stopped it: without
 * out the count is then unknown, with out the blocks appended so far stay
 * (any part of a legal packing is legal). */
static int jl_layer_count(const jl_baseline_shared *s, const int e[3], double z, double ox,
                          double oy, long long *tested, jl_block_packing *out, int max,
                          const jl_trunk_limits *lim, double since) {
  const jl_trunk_geom *g = s->g;
  double dx = jl_edge(&g->block, e[0]), dy = jl_edge(&g->block, e[1]), dz = jl_edge(&g->block, e[2]);
  double q[4];
  jl_trunk_axis_quat(e, q);
  jl_obb o;
  int count = 0;
  int nx = (int)floor((s->hi[0] + g->tol - s->lo[0] - ox) / dx);
  int ny = (int)floor((s->hi[1] + g->tol - s->lo[1] - oy) / dy);
  long long polled = 0;
  for (int i = 0; i < nx; ++i)
    for (int k = 0; k < ny; ++k) {
      if (max >= 0 && count >= max) return count;
      if (++polled % JL_BASELINE_POLL == 0 && jl_trunk_limits_hit(lim, since)) return -2;
      double c[3] = {s->lo[0] + ox + i * dx + 0.5 * dx, s->lo[1] + oy + k * dy + 0.5 * dy, z + 0.5 * dz};
      jl_obb_from_block(&g->block, c, q, &o);
      ++*tested;
      if (jl_trunk_box_surface_depth(g, &o, 1, NULL) > g->tol) continue;
      if (!jl_trunk_point_inside(g, c)) continue;
      ++count;
      if (out && jl_block_packing_push(out, c, q, NULL) != JL_OK) return -1;
    }
  return count;
}

static void jl_layer_edges(int vertical, int swap, int e[3]) {
  int a = (vertical + 1) % 3, b = (vertical + 2) % 3;
  if (a > b) { int t = a; a = b; b = t; }
  e[0] = swap ? b : a;
  e[1] = swap ? a : b;
  e[2] = vertical;
}

static double jl_slot_z(const jl_baseline_shared *s, int i) { return s->lo[2] + i * s->dz; }

/* Whether a layer of height h starting at z_i fits under the bounding box top. */
static int jl_slot_fits(const jl_baseline_shared *s, int i, double h) {
  return jl_slot_z(s, i) + h <= s->hi[2] + s->g->tol;
}

/* The grid index where the next layer may start after one of height h at z_i. */
static int jl_slot_after(const jl_baseline_shared *s, int i, double h) {
  int j = i + (int)ceil((h - s->g->tol) / s->dz);
  return j > i ? j : i + 1;
}

/* The best horizontal orientation and offset of one layer. */
static void jl_run_slot(jl_baseline_shared *s, int i, int v) {
  const jl_trunk_geom *g = s->g;
  jl_layer_choice best = {0, 0, 0, 0};
  long long tested = 0;
  if (jl_slot_fits(s, i, jl_edge(&g->block, v))) {
    double z = jl_slot_z(s, i);
    for (int swap = 0; swap < 2; ++swap) {
      int e[3];
      jl_layer_edges(v, swap, e);
      if (swap && jl_edge(&g->block, e[0]) == jl_edge(&g->block, e[1])) continue;
      double dx = jl_edge(&g->block, e[0]), dy = jl_edge(&g->block, e[1]);
      for (int ix = 0; ix < s->offsets && !jl_baseline_stopped(s); ++ix)
        for (int iy = 0; iy < s->offsets; ++iy) {
          double ox = ix * dx / s->offsets, oy = iy * dy / s->offsets;
          int c = jl_layer_count(s, e, z, ox, oy, &tested, NULL, -1, &s->lim, 0.0);
          if (c == -2) {  /* cut: the offsets done so far are counted exactly */
            atomic_store(&s->cut, 1);
            break;
          }
          if (c > best.count) {
            best.count = c;
            best.swap = swap;
            best.ox = ox;
            best.oy = oy;
          }
        }
    }
  }
  s->slot[3 * i + v] = best;
  atomic_fetch_add(&s->tested, tested);
}

/* Every thread takes the next slot until none is left (jl_parallel_run's
 * chunk index is not used: the slots go to whichever thread is free). */
static void jl_baseline_worker(void *arg, int t, int nt) {
  (void)t; (void)nt;
  jl_baseline_shared *s = arg;
  for (;;) {
    int k = atomic_fetch_add(&s->next, 1);
    if (k >= 3 * s->n_z || jl_baseline_stopped(s)) break;
    jl_run_slot(s, k / 3, k % 3);
  }
}

int jl_trunk_baseline(const jl_trunk_geom *g, int threads, int offsets, jl_block_packing *out,
                      jl_baseline_info *info, jl_error *err) {
  return jl_trunk_baseline_until(g, threads, offsets, 0.0, NULL, out, info, err);
}

int jl_trunk_baseline_until(const jl_trunk_geom *g, int threads, int offsets, double deadline,
                            const volatile sig_atomic_t *stop, jl_block_packing *out,
                            jl_baseline_info *info, jl_error *err) {
  double t0 = jl_time_now();
  jl_baseline_shared s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.lim = (jl_trunk_limits){deadline, stop, 0.0};
  jl_mesh_bounds(g->mesh, s.lo, s.hi);
  s.offsets = offsets > 0 ? offsets : JL_BASELINE_OFFSETS;
  double shortest = fmin(g->block.x, fmin(g->block.y, g->block.z));
  s.dz = shortest / s.offsets;
  double height = s.hi[2] - s.lo[2];
  s.n_z = (int)floor((height + g->tol - shortest) / s.dz) + 1;
  if (s.n_z < 0) s.n_z = 0;
  if ((double)s.n_z * 3 > 1e7)
    return jl_error_set(err, JL_ERR_INPUT, "trunk too tall for the baseline: %.6g mm in layers of %.3g mm",
                        height, s.dz);
  s.slot = calloc((size_t)(s.n_z > 0 ? 3 * s.n_z : 1), sizeof *s.slot);
  int *next = malloc((size_t)(s.n_z + 2) * sizeof *next);     /* DP: chosen edge, or -1: skip a step */
  int *total = calloc((size_t)(s.n_z + 2), sizeof *total);     /* DP: most blocks from z_i up */
  if (!s.slot || !next || !total) {
    free(s.slot); free(next); free(total);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the baseline");
  }
  atomic_init(&s.next, 0);
  atomic_init(&s.tested, 0);
  atomic_init(&s.failed, 0);
  atomic_init(&s.cut, 0);
  if (threads < 1) threads = 1;
  if (threads > 3 * s.n_z) threads = 3 * s.n_z > 0 ? 3 * s.n_z : 1;
  jl_parallel_run(threads, jl_baseline_worker, &s);
  /* Stack layers from the top down: total[i] is the most blocks in layers
   * starting at z_i or above. Ties go to a layer over a gap (blocks sit low),
   * then to the lowest edge index, so the result does not depend on the
   * threads. */
  for (int i = s.n_z - 1; i >= 0; --i) {
    total[i] = total[i + 1];
    next[i] = -1;
    for (int v = 0; v < 3; ++v) {
      const jl_layer_choice *c = &s.slot[3 * i + v];
      if (c->count <= 0) continue;
      int j = jl_slot_after(&s, i, jl_edge(&g->block, v));
      int t = c->count + (j < s.n_z ? total[j] : 0);
      if (t > total[i] || (t == total[i] && next[i] < 0)) {
        total[i] = t;
        next[i] = v;
      }
    }
  }
  /* Placing the chosen layers and the exact check get JL_TRUNK_FINISH_S
   * even when a limit stopped the search; a cut placement keeps the layers
   * placed (each layer counted exactly, max stops it where the search did). */
  out->count = 0;
  jl_trunk_limits fin = jl_finish_limits(&s.lim);
  double t_fin = jl_time_now();
  int rc = JL_OK, layers = 0, per_edge[3] = {0, 0, 0}, cut_fin = 0;
  for (int i = 0; i < s.n_z && !rc && !cut_fin;) {
    int v = next[i];
    if (v < 0) { ++i; continue; }
    const jl_layer_choice *c = &s.slot[3 * i + v];
    int e[3];
    jl_layer_edges(v, c->swap, e);
    long long t = 0;
    int got = jl_layer_count(&s, e, jl_slot_z(&s, i), c->ox, c->oy, &t, out, c->count, &fin, t_fin);
    if (got == -1) rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory in the baseline");
    if (got == -2) cut_fin = 1;
    ++layers;
    ++per_edge[v];
    i = jl_slot_after(&s, i, jl_edge(&g->block, v));
  }
  if (!rc) rc = jl_trunk_require_legal(g, out, "the baseline packing", &fin, &cut_fin, err);
  if (cut_fin) atomic_store(&s.cut, 1);
  if (info && !rc) {
    info->count = out->count;
    info->layers = layers;
    for (int v = 0; v < 3; ++v) info->layers_upright[v] = per_edge[v];
    info->z_step = s.dz;
    info->boxes_tested = atomic_load(&s.tested);
    info->time_s = jl_time_now() - t0;
    info->complete = !atomic_load(&s.cut);
  }
  free(s.slot);
  free(next);
  free(total);
  return rc;
}

/* ---- the grid fill (the baseline) ---- */

/* Orientations in lexicographic order of (edge along x, along y, along z). */
static const int jl_grid_orient[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* Item k: orientation k / offsets^3, then offsets along x, y, z. Each item's
 * count lands in its own slot, so the reduction does not depend on threads. */
typedef struct jl_grid_shared {
  jl_baseline_shared base;  /* geometry, bounds, limits; its slots are unused */
  int n_items;
  int *count;               /* per item; -1 when not tried */
} jl_grid_shared;

static void jl_grid_item(const jl_grid_shared *s, int k, int e[3], double off[3]) {
  int n = s->base.offsets, o = k / (n * n * n), r = k % (n * n * n);
  int ix[3] = {r / (n * n), (r / n) % n, r % n};
  for (int w = 0; w < 3; ++w) {
    e[w] = jl_grid_orient[o][w];
    off[w] = ix[w] * jl_edge(&s->base.g->block, e[w]) / n;
  }
}

/* The lattice filled layer by layer in z; with out, its blocks are
 * appended. -1: out of memory; -2: lim stopped it (with out, the blocks
 * appended so far stay). */
static int jl_grid_count(const jl_grid_shared *s, int k, long long *tested, jl_block_packing *out,
                         const jl_trunk_limits *lim, double since) {
  int e[3];
  double off[3];
  jl_grid_item(s, k, e, off);
  const jl_baseline_shared *b = &s->base;
  double h = jl_edge(&b->g->block, e[2]);
  int count = 0;
  for (int j = 0;; ++j) {
    double z = b->lo[2] + off[2] + j * h;
    if (z + h > b->hi[2] + b->g->tol) break;
    int c = jl_layer_count(b, e, z, off[0], off[1], tested, out, -1, lim, since);
    if (c < 0) return c;
    count += c;
  }
  return count;
}

static void jl_grid_worker(void *arg, int t, int nt) {
  (void)t; (void)nt;
  jl_grid_shared *s = arg;
  for (;;) {
    int k = atomic_fetch_add(&s->base.next, 1);
    if (k >= s->n_items || jl_baseline_stopped(&s->base)) break;
    long long tested = 0;
    int c = jl_grid_count(s, k, &tested, NULL, &s->base.lim, 0.0);
    if (c == -2) atomic_store(&s->base.cut, 1);  /* not tried: count -1 */
    else s->count[k] = c;
    atomic_fetch_add(&s->base.tested, tested);
  }
}

int jl_trunk_grid_fill(const jl_trunk_geom *g, int threads, int offsets, double deadline,
                       const volatile sig_atomic_t *stop, jl_block_packing *out, jl_grid_info *info,
                       jl_error *err) {
  double t0 = jl_time_now();
  jl_grid_shared s;
  memset(&s, 0, sizeof s);
  s.base.g = g;
  s.base.lim = (jl_trunk_limits){deadline, stop, 0.0};
  jl_mesh_bounds(g->mesh, s.base.lo, s.base.hi);
  s.base.offsets = offsets > 0 ? offsets : JL_BASELINE_OFFSETS;
  if (s.base.offsets > 64)
    return jl_error_set(err, JL_ERR_INPUT, "grid fill: %d offsets per axis, at most 64", s.base.offsets);
  s.n_items = 6 * s.base.offsets * s.base.offsets * s.base.offsets;
  s.count = malloc((size_t)s.n_items * sizeof *s.count);
  if (!s.count) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the grid fill");
  for (int k = 0; k < s.n_items; ++k) s.count[k] = -1;
  atomic_init(&s.base.next, 0);
  atomic_init(&s.base.tested, 0);
  atomic_init(&s.base.failed, 0);
  atomic_init(&s.base.cut, 0);
  if (threads < 1) threads = 1;
  if (threads > s.n_items) threads = s.n_items;
  jl_parallel_run(threads, jl_grid_worker, &s);
  int best = -1;
  for (int k = 0; k < s.n_items; ++k)
    if (s.count[k] > 0 && (best < 0 || s.count[k] > s.count[best])) best = k;
  /* placing the best lattice and the exact check get JL_TRUNK_FINISH_S even
   * after a limit stopped the search; a cut placement keeps what it placed */
  out->count = 0;
  int rc = JL_OK, cut_fin = 0;
  jl_trunk_limits fin = jl_finish_limits(&s.base.lim);
  double t_fin = jl_time_now();
  if (best >= 0) {
    long long t = 0;
    int got = jl_grid_count(&s, best, &t, out, &fin, t_fin);
    if (got == -1) rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory in the grid fill");
    if (got == -2) cut_fin = 1;
  }
  if (!rc) rc = jl_trunk_require_legal(g, out, "the grid fill", &fin, &cut_fin, err);
  if (cut_fin) atomic_store(&s.base.cut, 1);
  if (info && !rc) {
    memset(info, 0, sizeof *info);
    info->count = out->count;
    if (best >= 0) jl_grid_item(&s, best, info->edges, info->offset);
    info->boxes_tested = atomic_load(&s.base.tested);
    info->time_s = jl_time_now() - t0;
    info->complete = !atomic_load(&s.base.cut);
  }
  free(s.count);
  return rc;
}
