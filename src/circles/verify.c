/* The exact check every reported packing passes: long double geometry,
 * sharing no code with the search, so a bug there cannot hide here. */
#include "circles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_util.h"

/* Below this many circles all pairs cost less than building a grid. */
#define JL_CHECK_GRID_MIN 64
/* Grid entries (circle, cell) per circle before the cell size doubles: a
 * circle much larger than the cells lies in many of them. */
#define JL_CHECK_GRID_LOAD 8
/* x-sorted neighbours each circle is paired with to seed the best pair. */
#define JL_CHECK_SEED_K 4
/* Boxes are widened by this share of the coordinates' magnitude, far above
 * long double rounding, so a pair the exact test needs is never missed. */
#define JL_CHECK_GUARD 1e-12L

static int jl_finite_l(long double v) { return isfinite(v); }

/* R = max |c_i| + r_i, and the circle furthest outside the stated R. */
static int jl_check_container(const jl_circle_packing *pk, jl_circle_check *out) {
  int ok = isfinite(pk->R);
  long double R = 0.0L, excess = -INFINITY;
  for (int i = 0; i < pk->n; ++i) {
    long double x = pk->x[i], y = pk->y[i], r = pk->r[i];
    if (!jl_finite_l(x) || !jl_finite_l(y) || !jl_finite_l(r) || !(r > 0.0L)) ok = 0;
    long double reach = hypotl(x, y) + r;
    if (!(reach <= R)) R = reach;
    long double e = reach - (long double)pk->R;
    if (!(e <= excess)) { excess = e; out->excess_i = i; }
  }
  out->R = R;
  out->max_excess = excess;
  return ok;
}

/* The one formula for a pair's overlap, i < j. */
static long double jl_pair_overlap(const jl_circle_packing *pk, int i, int j) {
  long double dx = (long double)pk->x[i] - pk->x[j], dy = (long double)pk->y[i] - pk->y[j];
  return (long double)pk->r[i] + pk->r[j] - hypotl(dx, dy);
}

void jl_circle_pairs_all(const jl_circle_packing *pk, long double *worst, int *wi, int *wj) {
  long double w = -INFINITY;
  *wi = *wj = -1;
  for (int i = 0; i < pk->n; ++i)
    for (int j = i + 1; j < pk->n; ++j) {
      long double o = jl_pair_overlap(pk, i, j);
      if (!(o <= w)) { w = o; *wi = i; *wj = j; }
    }
  *worst = w;
}

/* ---- the same through a uniform grid ---- */

typedef struct jl_best_pair {
  long double w;
  int i, j;                /* i < j */
} jl_best_pair;

/* Keeps the largest overlap, the first pair in (i, j) order among equals:
 * what the all-pairs loop keeps. */
static void jl_best_offer(jl_best_pair *b, long double o, int i, int j) {
  if (i > j) { int t = i; i = j; j = t; }
  if (o > b->w || (o == b->w && (i < b->i || (i == b->i && j < b->j)))) {
    b->w = o;
    b->i = i;
    b->j = j;
  }
}

typedef struct jl_sort_key {
  double v;
  int i;
} jl_sort_key;

static int jl_cmp_desc(const void *a, const void *b) {
  const jl_sort_key *p = a, *q = b;
  if (p->v != q->v) return p->v > q->v ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

static int jl_cmp_asc(const void *a, const void *b) {
  const jl_sort_key *p = a, *q = b;
  if (p->v != q->v) return p->v < q->v ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

typedef struct jl_grid_work {
  const jl_circle_packing *pk;
  int *order;              /* circles by radius, largest first (index breaks ties) */
  int *ix0, *iy0;          /* each circle's first cell */
  size_t *start;           /* cell c's entries: entry[start[c] .. start[c + 1]) */
  int *entry, *skip;       /* circles; skip: the next entry of a smaller radius */
  size_t cap_cells, cap_entries;
} jl_grid_work;

static long double jl_cells_along(long double lo, long double hi, long double h) {
  return floorl(hi / h) - floorl(lo / h) + 1.0L;
}

/* One pass with boxes of half-size max(0, r + m) + guard: it meets every
 * pair with r_i + r_j - d >= -2m. */
static int jl_grid_pass(jl_grid_work *g, long double m, long double guard, jl_best_pair *best) {
  const jl_circle_packing *pk = g->pk;
  int n = pk->n;
  long double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (int i = 0; i < n; ++i) {
    long double s = fmaxl(0.0L, (long double)pk->r[i] + m) + guard;
    xlo = fminl(xlo, pk->x[i] - s);
    xhi = fmaxl(xhi, pk->x[i] + s);
    ylo = fminl(ylo, pk->y[i] - s);
    yhi = fmaxl(yhi, pk->y[i] + s);
  }
  long double W = xhi - xlo, H = yhi - ylo;
  /* about n cells over the boxes, none thinner than the box along one axis over n */
  long double h = fmaxl(sqrtl(W * H / n), fmaxl(W, H) / n);
  if (!(h > 0.0L)) h = fmaxl(guard, 1e-300L);
  for (;;) {  /* coarser until the entries fit the budget */
    long double total = 0.0L, budget = (long double)JL_CHECK_GRID_LOAD * n + 4.0L;
    for (int i = 0; i < n && total <= budget; ++i) {
      long double s = fmaxl(0.0L, (long double)pk->r[i] + m) + guard;
      total += jl_cells_along(pk->x[i] - s - xlo, pk->x[i] + s - xlo, h) *
               jl_cells_along(pk->y[i] - s - ylo, pk->y[i] + s - ylo, h);
    }
    if (total <= budget) break;
    h *= 2.0L;
  }
  long nx = (long)floorl(W / h) + 1, ny = (long)floorl(H / h) + 1;
  size_t cells = (size_t)nx * (size_t)ny;
  if (cells + 1 > g->cap_cells) {
    size_t *ns = realloc(g->start, (cells + 1) * sizeof *ns);
    if (!ns) return JL_ERR_NOMEM;
    g->start = ns;
    g->cap_cells = cells + 1;
  }
  memset(g->start, 0, (cells + 1) * sizeof *g->start);
  size_t total = 0;
  for (int k = 0; k < n; ++k) {  /* count, and each circle's cell range */
    int i = g->order[k];
    long double s = fmaxl(0.0L, (long double)pk->r[i] + m) + guard;
    long x0 = (long)floorl((pk->x[i] - s - xlo) / h), x1 = (long)floorl((pk->x[i] + s - xlo) / h);
    long y0 = (long)floorl((pk->y[i] - s - ylo) / h), y1 = (long)floorl((pk->y[i] + s - ylo) / h);
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 >= nx ? nx - 1 : x1;
    y1 = y1 >= ny ? ny - 1 : y1;
    g->ix0[i] = (int)x0;
    g->iy0[i] = (int)y0;
    for (long cy = y0; cy <= y1; ++cy)
      for (long cx = x0; cx <= x1; ++cx) g->start[(size_t)cy * (size_t)nx + (size_t)cx + 1]++;
    total += (size_t)(x1 - x0 + 1) * (size_t)(y1 - y0 + 1);
  }
  if (total > g->cap_entries) {
    int *ne = realloc(g->entry, total * sizeof *ne), *nk = NULL;
    if (ne) g->entry = ne;
    if (ne) nk = realloc(g->skip, total * sizeof *nk);
    if (!ne || !nk) return JL_ERR_NOMEM;
    g->skip = nk;
    g->cap_entries = total;
  }
  for (size_t c = 0; c < cells; ++c) g->start[c + 1] += g->start[c];
  /* fill in radius order, so every cell lists its circles largest first */
  for (int k = 0; k < n; ++k) {
    int i = g->order[k];
    long double s = fmaxl(0.0L, (long double)pk->r[i] + m) + guard;
    long x1 = (long)floorl((pk->x[i] + s - xlo) / h), y1 = (long)floorl((pk->y[i] + s - ylo) / h);
    x1 = x1 >= nx ? nx - 1 : x1;
    y1 = y1 >= ny ? ny - 1 : y1;
    for (long cy = g->iy0[i]; cy <= y1; ++cy)
      for (long cx = g->ix0[i]; cx <= x1; ++cx) {
        size_t c = (size_t)cy * (size_t)nx + (size_t)cx;
        g->entry[g->start[c]++] = i;  /* start[c] ends at cell c + 1's start */
      }
  }
  for (size_t c = cells; c > 0; --c) g->start[c] = g->start[c - 1];
  g->start[0] = 0;
  for (size_t c = 0; c < cells; ++c) {
    size_t a = g->start[c], e = g->start[c + 1];
    for (size_t q = e; q-- > a;)
      g->skip[q] = (int)(q + 1 < e && pk->r[g->entry[q + 1]] == pk->r[g->entry[q]] ? g->skip[q + 1]
                                                                                     : (int)(q + 1));
  }
  /* Each pair once, in the first cell both lie in. Radii fall along a list,
   * so once r_i + r_j is below the best nothing further can win; at equality
   * only a smaller pair can, and the pairs of one radius grow along it. */
  for (size_t c = 0; c < cells; ++c) {
    long cx = (long)(c % (size_t)nx), cy = (long)(c / (size_t)nx);
    size_t a = g->start[c], e = g->start[c + 1];
    for (size_t p = a; p < e; ++p) {
      int i = g->entry[p];
      for (size_t q = p + 1; q < e; ++q) {
        int j = g->entry[q];
        long double sum = (long double)pk->r[i] + pk->r[j];
        if (sum < best->w) break;
        int lo = i < j ? i : j, hi = i < j ? j : i;
        if (sum == best->w && (lo > best->i || (lo == best->i && hi > best->j))) {
          q = (size_t)g->skip[q] - 1;
          continue;
        }
        int ox = g->ix0[i] > g->ix0[j] ? g->ix0[i] : g->ix0[j];
        int oy = g->iy0[i] > g->iy0[j] ? g->iy0[i] : g->iy0[j];
        if (ox != cx || oy != cy) continue;
        jl_best_offer(best, jl_pair_overlap(pk, lo, hi), lo, hi);
      }
    }
  }
  return JL_OK;
}

int jl_circle_pairs_grid(const jl_circle_packing *pk, long double *worst, int *wi, int *wj) {
  int n = pk->n;
  *worst = -INFINITY;
  *wi = *wj = -1;
  if (n < 2) return JL_OK;
  for (int i = 0; i < n; ++i)
    if (!isfinite(pk->x[i]) || !isfinite(pk->y[i]) || !isfinite(pk->r[i])) return JL_ERR_INPUT;
  jl_grid_work g;
  memset(&g, 0, sizeof g);
  g.pk = pk;
  jl_sort_key *keys = malloc((size_t)n * sizeof *keys);
  g.order = malloc((size_t)n * sizeof *g.order);
  g.ix0 = malloc((size_t)n * sizeof *g.ix0);
  g.iy0 = malloc((size_t)n * sizeof *g.iy0);
  int rc = keys && g.order && g.ix0 && g.iy0 ? JL_OK : JL_ERR_NOMEM;
  jl_best_pair best = {-INFINITY, -1, -1};
  long double scale = 0.0L, rmax = 0.0L, area = 0.0L;
  if (rc == JL_OK) {
    /* seed: each circle with its next neighbours along x */
    for (int i = 0; i < n; ++i) keys[i] = (jl_sort_key){pk->x[i], i};
    qsort(keys, (size_t)n, sizeof *keys, jl_cmp_asc);
    for (int k = 0; k < n; ++k)
      for (int t = k + 1; t < n && t <= k + JL_CHECK_SEED_K; ++t) {
        int i = keys[k].i, j = keys[t].i;
        jl_best_offer(&best, jl_pair_overlap(pk, i < j ? i : j, i < j ? j : i), i, j);
      }
    for (int i = 0; i < n; ++i) keys[i] = (jl_sort_key){pk->r[i], i};
    qsort(keys, (size_t)n, sizeof *keys, jl_cmp_desc);
    for (int k = 0; k < n; ++k) g.order[k] = keys[k].i;
    long double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int i = 0; i < n; ++i) {
      long double x = pk->x[i], y = pk->y[i], r = pk->r[i];
      scale = fmaxl(scale, fmaxl(fabsl(x), fabsl(y)) + r);
      rmax = fmaxl(rmax, r);
      xlo = fminl(xlo, x - r);
      xhi = fmaxl(xhi, x + r);
      ylo = fminl(ylo, y - r);
      yhi = fmaxl(yhi, y + r);
    }
    area = (xhi - xlo) * (yhi - ylo);
  }
  long double guard = JL_CHECK_GUARD * scale;
  /* Margin m: the pass meets every pair with overlap >= -2m, so it is final
   * once the best is at least -2m. Start near the circles' spacing (or the
   * seed's gap, when smaller) and widen fourfold when the circles are sparser. */
  long double m = fminl(-best.w / 2.0L, fmaxl(sqrtl(area / n), guard));
  while (rc == JL_OK) {
    rc = jl_grid_pass(&g, m, guard, &best);
    if (rc != JL_OK || best.w >= -2.0L * m) break;
    m = fminl(-best.w / 2.0L, 4.0L * m);
  }
  free(keys);
  free(g.order);
  free(g.ix0);
  free(g.iy0);
  free(g.start);
  free(g.entry);
  free(g.skip);
  if (rc != JL_OK) return rc;
  *worst = best.w;
  *wi = best.i;
  *wj = best.j;
  return JL_OK;
}

/* The deepest overlap over all pairs (negative: the closest gap). */
static void jl_check_pairs(const jl_circle_packing *pk, jl_circle_check *out) {
  long double worst;
  int i, j;
  if (pk->n < JL_CHECK_GRID_MIN || jl_circle_pairs_grid(pk, &worst, &i, &j) != JL_OK)
    jl_circle_pairs_all(pk, &worst, &i, &j);  /* also for non-finite values, never legal */
  out->overlap_i = i;
  out->overlap_j = j;
  /* No pairs: report 0 rather than -inf, which JSON cannot hold. */
  out->max_overlap = pk->n < 2 ? 0.0L : worst;
}

/* Fills out and returns JL_OK when legal, JL_ERR_NOT_LEGAL otherwise. */
int jl_circle_check_packing(const jl_circle_packing *pk, double rel_tol, jl_circle_check *out) {
  out->R = 0.0L;
  out->max_overlap = 0.0L;
  out->max_excess = 0.0L;
  out->overlap_i = out->overlap_j = out->excess_i = -1;
  out->legal = 0;
  if (!pk || pk->n < 1 || !pk->x || !pk->y || !pk->r) return JL_ERR_NOT_LEGAL;
  int ok = jl_check_container(pk, out);
  jl_check_pairs(pk, out);
  long double tol = (long double)rel_tol * out->R;
  ok = ok && jl_finite_l(out->R) && jl_finite_l(out->max_overlap) && jl_finite_l(out->max_excess);
  out->legal = ok && out->max_overlap <= tol && out->max_excess <= tol;
  return out->legal ? JL_OK : JL_ERR_NOT_LEGAL;
}

int jl_circle_check_instance(const jl_circle_packing *pk, const jl_circle_problem *prob,
                             const char *path, int code, jl_error *err) {
  if (pk->n != prob->n)
    return jl_error_set(err, code, "%s: has %d circles, the instance %s has %d", path, pk->n,
                        prob->name, prob->n);
  for (int i = 0; i < prob->n; ++i)
    if (pk->r[i] != prob->radii[i]) {
      char a[40], b[40];
      return jl_error_set(err, code, "%s: circles[%d].r is %s, the instance %s says %s", path, i,
                          jl_fmt_double(a, sizeof a, pk->r[i]), prob->name,
                          jl_fmt_double(b, sizeof b, prob->radii[i]));
    }
  return JL_OK;
}
