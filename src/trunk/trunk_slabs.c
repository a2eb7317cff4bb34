#include "trunk_slabs.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "timer.h"
#include "trunk_baseline.h"

/* Positions along the rows and layer heights: the shortest block edge over this. */
#define JL_SLAB_FINE_PER_EDGE 8
/* Inner cut positions: the shortest block edge over this (12.5 mm for the DIN block). */
#define JL_SLAB_STEPS_PER_EDGE 4
/* Layer kinds: upright edge v (3) x which edge runs along the inner cut axis (2). */
/* Bytes of legality cache at most (the sedan needs 11 MB); larger trunks
 * are refused with JL_ERR_INPUT and the caller goes on without slabs. */
#define JL_SLAB_MAX_CACHE 2e8
#define JL_SLAB_KINDS 6

/* Geometry: the inner cut axis a (slabs [P_j, P_k], P_g = lo[a] + g step),
 * the outer axis b (zones [Q_p, Q_q] on a grid of one shortest edge), z
 * layers at heights zs[i] (a grid of dz up from the floor and one down
 * from the top, merged). A row of layer (i, kind) at P_g spans
 * [P_g, P_g + edge along a] and holds blocks placed greedily along b
 * within the zone. legal caches the box tests: per (i, kind, g) and fine
 * position t along b, 0 unknown, 1 legal, 2 not. */
typedef struct jl_slab_shared {
  const jl_trunk_geom *g;
  int a, b;
  double lo[3], hi[3];
  double step;
  int m;
  int max_span;            /* the longest edge / step */
  double fine;             /* positions along b: lo[b] + t fine, t <= n_fine */
  int n_fine;
  double dz;
  int n_z;
  double *zs;              /* layer start heights, ascending */
  uint8_t *legal;          /* n_z * KINDS * (m + 1) * (n_fine + 1) */
  double zlo, zhi;         /* the current zone along b */
  int *row;                /* n_z * KINDS * (m + 1): blocks of each row in the zone */
  int *value;              /* (m + 1)^2: blocks in the slab [P_j, P_k] of the zone */
  atomic_int next;
  atomic_llong tested;
  jl_trunk_limits lim;     /* the search's; placing runs within its own */
  double since;            /* start of the work lim.grace counts from */
  atomic_int cut;
} jl_slab_shared;

/* Row positions between polls of the limits (a box test costs about a microsecond). */
#define JL_SLAB_POLL 64

static int jl_slab_cmp(const void *a, const void *b) {
  double u = *(const double *)a, w = *(const double *)b;
  return (u > w) - (u < w);
}

static double jl_slab_edge(const jl_block_size *b, int e) { return e == 0 ? b->x : e == 1 ? b->y : b->z; }

static int jl_slab_stopped(jl_slab_shared *s) {
  if (atomic_load(&s->cut)) return 1;
  if (jl_trunk_limits_hit(&s->lim, s->since)) {
    atomic_store(&s->cut, 1);
    return 1;
  }
  return 0;
}

/* Kind k: upright edge v = k / 2; the other two edges, in index order, go
 * along a and b, or the reverse (k odd). e[w] is the block edge along
 * world axis w. */
static void jl_slab_kind_edges(const jl_slab_shared *s, int k, int e[3]) {
  int v = k / 2, p = (v + 1) % 3, q = (v + 2) % 3;
  if (p > q) { int t = p; p = q; q = t; }
  e[2] = v;
  e[s->a] = k % 2 ? q : p;
  e[s->b] = k % 2 ? p : q;
}

static size_t jl_slab_row_idx(const jl_slab_shared *s, int i, int k, int g) {
  return ((size_t)i * JL_SLAB_KINDS + (size_t)k) * (size_t)(s->m + 1) + (size_t)g;
}

/* Cut positions a row of kind k spans (its edge along a / step). */
static int jl_slab_span(const jl_slab_shared *s, int k) {
  int e[3];
  jl_slab_kind_edges(s, k, e);
  return (int)lround(jl_slab_edge(&s->g->block, e[s->a]) / s->step);
}

/* One row in the current zone, placed greedily along b: each block at the
 * first fine position past the previous one where it crosses no triangle
 * and lies inside. Leftmost first is optimal for equal blocks on a line,
 * so a row holds at least as many as any lattice offset on that grid.
 * Counted, and pushed onto out when out != NULL (placing: every test is
 * cached then). -1: out of memory; -2 (counting only): the limits stopped it. */
static int jl_slab_row(jl_slab_shared *s, int i, int k, int g, long long *tested,
                       jl_block_packing *out) {
  const jl_trunk_geom *geo = s->g;
  int e[3];
  jl_slab_kind_edges(s, k, e);
  double ea = jl_slab_edge(&geo->block, e[s->a]), eb = jl_slab_edge(&geo->block, e[s->b]);
  double h = jl_slab_edge(&geo->block, e[2]);
  double z = s->zs[i];
  double a0 = s->lo[s->a] + g * s->step;
  if (z + h > s->hi[2] + geo->tol || a0 + ea > s->hi[s->a] + geo->tol) return 0;
  int t = (int)ceil((s->zlo - s->lo[s->b]) / s->fine - 1e-9);
  int t_end = (int)floor((s->zhi + geo->tol - s->lo[s->b] - eb) / s->fine);
  if (t_end > s->n_fine) t_end = s->n_fine;
  int span = (int)lround(eb / s->fine);
  uint8_t *leg = s->legal + jl_slab_row_idx(s, i, k, g) * (size_t)(s->n_fine + 1);
  double q[4];
  jl_trunk_axis_quat(e, q);
  int count = 0;
  long long polled = 0;
  for (; t <= t_end;) {
    if (!out && ++polled % JL_SLAB_POLL == 0 && jl_slab_stopped(s)) return -2;
    double c[3];
    c[s->a] = a0 + 0.5 * ea;
    c[s->b] = s->lo[s->b] + t * s->fine + 0.5 * eb;
    c[2] = z + 0.5 * h;
    if (!leg[t]) {
      jl_obb box;
      jl_obb_from_block(&geo->block, c, q, &box);
      ++*tested;
      int ok = jl_trunk_box_surface_depth(geo, &box, 1, NULL) <= geo->tol && jl_trunk_point_inside(geo, c);
      leg[t] = ok ? 1 : 2;
    }
    if (leg[t] != 1) {
      ++t;
      continue;
    }
    ++count;
    if (out && jl_block_packing_push(out, c, q, NULL) != JL_OK) return -1;
    t += span;
  }
  return count;
}

/* Work unit u < n_z * KINDS: every row of one layer height and kind. Each
 * unit owns its part of the cache. */
static void *jl_slab_row_worker(void *arg) {
  jl_slab_shared *s = arg;
  long long tested = 0;
  for (;;) {
    int u = atomic_fetch_add(&s->next, 1);
    if (u >= s->n_z * JL_SLAB_KINDS || jl_slab_stopped(s)) break;
    int i = u / JL_SLAB_KINDS, k = u % JL_SLAB_KINDS;
    for (int g = 0; g <= s->m && !jl_slab_stopped(s); ++g) {
      int c = jl_slab_row(s, i, k, g, &tested, NULL);
      s->row[jl_slab_row_idx(s, i, k, g)] = c > 0 ? c : 0;  /* a cut zone is not used */
    }
  }
  atomic_fetch_add(&s->tested, tested);
  return NULL;
}

/* Layer index after a layer of height h at z_i. */
static int jl_slab_after(const jl_slab_shared *s, int i, double h) {
  int j = i + 1;
  while (j < s->n_z && s->zs[j] < s->zs[i] + h - s->g->tol) ++j;
  return j;
}

/* One layer (i, upright edge v) of the slab [P_j, P_k]: its rows by
 * dynamic programming along a, rows of either kind of v (the edge along
 * a is one of the other two) or an empty step, so a layer may mix 200-
 * and 100-deep rows and end close to a sloped wall. L[g - j] is the most
 * blocks of rows within [P_j, P_g]; choice[g - j] the kind of the row
 * ending at P_g, -1 for an empty step. Returns L[k - j]. */
static int jl_slab_layer_dp(const jl_slab_shared *s, int i, int v, int j, int k, int *L, int *choice) {
  L[0] = 0;
  for (int g = j + 1; g <= k; ++g) {
    int best = L[g - 1 - j], c = -1;
    for (int kind = 2 * v; kind < 2 * v + 2; ++kind) {
      int span = jl_slab_span(s, kind);
      if (g - j < span) continue;
      int t = L[g - span - j] + s->row[jl_slab_row_idx(s, i, kind, g - span)];
      if (t > best) { best = t; c = kind; }
    }
    L[g - j] = best;
    if (choice) choice[g - j] = c;
  }
  return L[k - j];
}

/* Layers stacked by dynamic programming, as the baseline does: total[i] is
 * the most blocks in layers at z_i or above; next[i] the edge upright at
 * z_i (-1: none). Returns total[0]. */
static int jl_slab_stack(const jl_slab_shared *s, const int *cnt, int *total, int *next) {
  const jl_block_size *bs = &s->g->block;
  total[s->n_z] = 0;
  for (int i = s->n_z - 1; i >= 0; --i) {
    total[i] = total[i + 1];
    next[i] = -1;
    for (int v = 0; v < 3; ++v) {
      int c = cnt[3 * i + v];
      if (c <= 0) continue;
      int j = jl_slab_after(s, i, jl_slab_edge(bs, v));
      int t = c + (j < s->n_z ? total[j] : 0);
      if (t > total[i]) { total[i] = t; next[i] = v; }
    }
  }
  return s->n_z > 0 ? total[0] : 0;
}

typedef struct jl_slab_value_job {
  jl_slab_shared *s;
  atomic_int next_j;
  atomic_int failed;
} jl_slab_value_job;

/* Slab values of the zone, one start cut j at a time. The layer counts of
 * [P_j, P_k] are those of [P_j, P_k-1] and the rows that end at P_k. */
static void *jl_slab_value_worker(void *arg) {
  jl_slab_value_job *job = arg;
  jl_slab_shared *s = job->s;
  size_t nl = (size_t)s->n_z * 3;
  int *cnt = calloc(nl, sizeof *cnt);
  int *L = calloc(nl * (size_t)(s->m + 1), sizeof *L);  /* L[(g - j) * nl + 3 i + v] */
  int *total = malloc((size_t)(s->n_z + 1) * sizeof *total);
  int *next = malloc((size_t)(s->n_z + 1) * sizeof *next);
  if (!cnt || !L || !total || !next) {
    atomic_store(&job->failed, 1);
    free(cnt); free(L); free(total); free(next);
    return NULL;
  }
  int span[JL_SLAB_KINDS];
  for (int k = 0; k < JL_SLAB_KINDS; ++k) span[k] = jl_slab_span(s, k);
  for (;;) {
    int j = atomic_fetch_add(&job->next_j, 1);
    if (j >= s->m || jl_slab_stopped(s)) break;
    memset(L, 0, nl * sizeof *L);
    for (int kk = j + 1; kk <= s->m; ++kk) {
      if ((kk - j) % JL_SLAB_POLL == 0 && jl_slab_stopped(s)) break;
      /* each layer's row DP one step further (jl_slab_layer_dp) */
      int *Lk = L + (size_t)(kk - j) * nl, *Lp = L + (size_t)(kk - 1 - j) * nl;
      int changed = 0;
      for (int i = 0; i < s->n_z; ++i)
        for (int v = 0; v < 3; ++v) {
          int best = Lp[3 * i + v];
          for (int k = 2 * v; k < 2 * v + 2; ++k) {
            if (kk - j < span[k]) continue;
            int t = L[(size_t)(kk - span[k] - j) * nl + (size_t)(3 * i + v)] +
                    s->row[jl_slab_row_idx(s, i, k, kk - span[k])];
            if (t > best) best = t;
          }
          Lk[3 * i + v] = best;
          changed |= best != Lp[3 * i + v];
        }
      int val = changed || kk == j + 1 ? jl_slab_stack(s, Lk, total, next)
                                       : s->value[(size_t)j * (size_t)(s->m + 1) + (size_t)(kk - 1)];
      s->value[(size_t)j * (size_t)(s->m + 1) + (size_t)kk] = val;
    }
  }
  free(cnt); free(L); free(total); free(next);
  return NULL;
}

static void jl_slab_run_threads(void *(*fn)(void *), void *arg, int threads) {
  pthread_t *tid = malloc((size_t)threads * sizeof *tid);
  int started = 0;
  if (tid)
    for (; started < threads - 1; ++started)
      if (pthread_create(&tid[started], NULL, fn, arg) != 0) break;
  fn(arg);
  for (int t = 0; t < started; ++t) pthread_join(tid[t], NULL);
  free(tid);
}

/* The zone [zlo, zhi] along b: rows, slab values and the cuts along a by
 * dynamic programming (F[k]: most blocks below P_k; from[k]: the start of
 * the slab ending at P_k, -1: the step before P_k left empty). Returns the
 * zone's count, or -1 when out of memory; when the limits stopped it
 * (jl_slab_stopped) the count is not to be used. */
static int jl_slab_zone(jl_slab_shared *s, double zlo, double zhi, int threads, int *F, int *from) {
  s->zlo = zlo;
  s->zhi = zhi;
  memset(s->row, 0, (size_t)s->n_z * JL_SLAB_KINDS * (size_t)(s->m + 1) * sizeof *s->row);
  memset(s->value, 0, (size_t)(s->m + 1) * (size_t)(s->m + 1) * sizeof *s->value);
  atomic_store(&s->next, 0);
  jl_slab_run_threads(jl_slab_row_worker, s, threads);
  jl_slab_value_job job = {.s = s};
  atomic_init(&job.next_j, 0);
  atomic_init(&job.failed, 0);
  jl_slab_run_threads(jl_slab_value_worker, &job, threads);
  if (atomic_load(&job.failed)) return -1;
  F[0] = 0;
  for (int k = 1; k <= s->m; ++k) {
    F[k] = F[k - 1];
    from[k] = -1;
    for (int j = 0; j < k; ++j) {
      int t = F[j] + s->value[(size_t)j * (size_t)(s->m + 1) + (size_t)k];
      if (t > F[k]) { F[k] = t; from[k] = j; }
    }
  }
  return F[s->m];
}

/* Places the zone's blocks as jl_slab_zone chose them (it ran last). L and
 * choice hold m + 1 entries, cnt 3 n_z. */
static int jl_slab_zone_place(jl_slab_shared *s, const int *from, int *cnt, int *L, int *choice,
                              int *total, int *next, jl_block_packing *out, int *slabs, jl_error *err) {
  long long unused = 0;
  for (int k = s->m; k > 0;) {
    int j = from[k];
    if (j < 0) { --k; continue; }
    for (int i = 0; i < s->n_z; ++i)
      for (int v = 0; v < 3; ++v) cnt[3 * i + v] = jl_slab_layer_dp(s, i, v, j, k, L, NULL);
    jl_slab_stack(s, cnt, total, next);
    int placed = 0;
    for (int i = 0; i < s->n_z;) {
      int v = next[i];
      if (v < 0) { ++i; continue; }
      jl_slab_layer_dp(s, i, v, j, k, L, choice);
      for (int g = k; g > j;) {
        int kind = choice[g - j];
        if (kind < 0) { --g; continue; }
        int span = jl_slab_span(s, kind);
        int got = jl_slab_row(s, i, kind, g - span, &unused, out);
        if (got < 0) return jl_error_set(err, JL_ERR_NOMEM, "out of memory in the slab fill");
        placed += got;
        g -= span;
      }
      i = jl_slab_after(s, i, jl_slab_edge(&s->g->block, v));
    }
    int want = s->value[(size_t)j * (size_t)(s->m + 1) + (size_t)k];
    if (placed != want)
      return jl_error_set(err, JL_ERR_INTERNAL, "internal error: slab [%d, %d] placed %d blocks, expected %d",
                          j, k, placed, want);
    if (placed > 0) ++*slabs;
    k = j;
  }
  return JL_OK;
}

int jl_trunk_slab_fill(const jl_trunk_geom *g, int axis, int zones, double step, int threads,
                       double deadline, const volatile sig_atomic_t *stop, jl_block_packing *out,
                       jl_slab_info *info, jl_error *err) {
  double t0 = jl_time_now();
  if (axis != 0 && axis != 1) return jl_error_set(err, JL_ERR_INPUT, "slab fill: axis must be 0 or 1");
  jl_slab_shared s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.a = axis;
  s.b = 1 - axis;
  s.lim = (jl_trunk_limits){deadline, stop, 0.0};
  jl_mesh_bounds(g->mesh, s.lo, s.hi);
  double shortest = fmin(g->block.x, fmin(g->block.y, g->block.z));
  s.step = step > 0.0 ? step : shortest / JL_SLAB_STEPS_PER_EDGE;
  for (int e = 0; e < 3; ++e) {
    double r = jl_slab_edge(&g->block, e) / s.step;
    if (fabs(r - lround(r)) > 1e-9 || lround(r) < 1)
      return jl_error_set(err, JL_ERR_INPUT, "slab fill: the step %.6g mm must divide every block edge",
                          s.step);
  }
  s.max_span = (int)lround(fmax(g->block.x, fmax(g->block.y, g->block.z)) / s.step);
  s.m = (int)floor((s.hi[axis] - s.lo[axis] + g->tol) / s.step);
  s.fine = shortest / JL_SLAB_FINE_PER_EDGE;
  s.n_fine = (int)floor((s.hi[s.b] - s.lo[s.b] + g->tol) / s.fine);
  s.dz = shortest / JL_SLAB_FINE_PER_EDGE;
  /* Layer heights: dz steps up from the floor, and down from the top so
   * that stacks can end at the lid (over the sedan's arches, whose top is
   * 200 mm under the lid, 4 layers of 50 fit only from the top grid). */
  int n_up = (int)floor((s.hi[2] - s.lo[2] + g->tol - shortest) / s.dz) + 1;
  if (n_up < 0) n_up = 0;
  s.zs = malloc((size_t)(2 * n_up + 1) * sizeof *s.zs);
  if (!s.zs) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the slab fill");
  for (int i = 0; i < n_up; ++i) {
    s.zs[i] = s.lo[2] + i * s.dz;
    s.zs[n_up + i] = s.hi[2] - shortest - i * s.dz;
  }
  qsort(s.zs, (size_t)(2 * n_up), sizeof *s.zs, jl_slab_cmp);
  s.n_z = 0;
  for (int i = 0; i < 2 * n_up; ++i)
    if (s.zs[i] >= s.lo[2] - g->tol && (s.n_z == 0 || s.zs[i] > s.zs[s.n_z - 1] + 1e-6 * s.dz))
      s.zs[s.n_z++] = s.zs[i];
  double n_rows = (double)s.n_z * JL_SLAB_KINDS * (s.m + 1);
  if (s.m < 1 || s.n_z < 1 || n_rows * (s.n_fine + 1) > JL_SLAB_MAX_CACHE || (double)(s.m + 1) * (s.m + 1) > 5e7) {
    free(s.zs);
    return jl_error_set(err, JL_ERR_INPUT, "slab fill: trunk of %d cut positions, %d layer heights and "
                        "%d row positions out of range", s.m + 1, s.n_z, s.n_fine + 1);
  }
  /* zones along b: cuts Q_r = lo[b] + r * zstep, and hi[b]. Zone cuts
   * every 25 mm found no more blocks in the sedan at 3 times the time,
   * every 100 mm 3 fewer. */
  double zstep = shortest;
  int nq = zones ? (int)floor((s.hi[s.b] - s.lo[s.b] + g->tol) / zstep) : 0;
  double *Q = malloc((size_t)(nq + 2) * sizeof *Q);
  int nQ = 0;
  if (Q) {
    for (int r = 0; r <= nq; ++r) Q[nQ++] = s.lo[s.b] + r * zstep;
    if (nQ == 0 || Q[nQ - 1] < s.hi[s.b] - g->tol) Q[nQ++] = s.hi[s.b];
    if (nQ > 1 && Q[nQ - 1] > s.hi[s.b]) Q[nQ - 1] = s.hi[s.b];
  }
  size_t nr = (size_t)n_rows;
  s.legal = calloc(nr * (size_t)(s.n_fine + 1), 1);
  s.row = calloc(nr, sizeof *s.row);
  s.value = calloc((size_t)(s.m + 1) * (size_t)(s.m + 1), sizeof *s.value);
  int *F = calloc((size_t)s.m + 1, sizeof *F), *from = calloc((size_t)s.m + 1, sizeof *from);
  int *cnt = calloc((size_t)s.n_z * 3, sizeof *cnt);
  int *L = calloc((size_t)s.m + 1, sizeof *L), *choice = calloc((size_t)s.m + 1, sizeof *choice);
  int *total = calloc((size_t)s.n_z + 1, sizeof *total), *next = calloc((size_t)s.n_z + 1, sizeof *next);
  int *zval = calloc((size_t)nQ * (size_t)nQ + 1, sizeof *zval);
  int *G = calloc((size_t)nQ + 1, sizeof *G), *zfrom = calloc((size_t)nQ + 1, sizeof *zfrom);
  int rc = JL_OK;
  if (!Q || !s.legal || !s.row || !s.value || !F || !from || !cnt || !L || !choice || !total || !next || !zval ||
      !G || !zfrom) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the slab fill");
    goto done;
  }
  if (threads < 1) threads = 1;
  atomic_init(&s.next, 0);
  atomic_init(&s.tested, 0);
  atomic_init(&s.cut, 0);
  /* Zones by dynamic programming over the cuts Q: G[q] is the most blocks
   * below Q_q. The whole width (one zone) goes first, so a cut-short run
   * still has it. */
  int whole = jl_slab_zone(&s, Q[0], Q[nQ - 1], threads, F, from);
  if (whole < 0) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the slab fill");
    goto done;
  }
  /* cut short before the whole width was done: nothing to place */
  int usable = !jl_slab_stopped(&s);
  zval[(size_t)0 * (size_t)nQ + (size_t)(nQ - 1)] = usable ? whole : 0;
  for (int p = 0; p < nQ - 1 && !jl_slab_stopped(&s); ++p)
    for (int q = p + 1; q < nQ && !jl_slab_stopped(&s); ++q) {
      if (p == 0 && q == nQ - 1) continue;
      int v = jl_slab_zone(&s, Q[p], Q[q], threads, F, from);
      if (v < 0) {
        rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the slab fill");
        goto done;
      }
      zval[(size_t)p * (size_t)nQ + (size_t)q] = jl_slab_stopped(&s) ? 0 : v;
    }
  G[0] = 0;
  for (int q = 1; q < nQ; ++q) {
    G[q] = G[q - 1];
    zfrom[q] = -1;
    for (int p = 0; p < q; ++p) {
      int t = G[p] + zval[(size_t)p * (size_t)nQ + (size_t)q];
      if (t > G[q]) { G[q] = t; zfrom[q] = p; }
    }
  }
  out->count = 0;
  int slabs = 0, n_zones = 0;
  /* Zones not evaluated before a cut count 0, so G is still a legal plan.
   * Placing recomputes its zones from the cache (all their box tests are
   * there); it and the exact check get JL_TRUNK_FINISH_S past the limits.
   * A zone cut short is not placed; the zones placed stay. */
  int cut = atomic_load(&s.cut);
  s.lim.grace = JL_TRUNK_FINISH_S;
  s.since = jl_time_now();
  atomic_store(&s.cut, 0);
  for (int q = nQ - 1; q > 0 && rc == JL_OK && usable;) {
    int p = zfrom[q];
    if (p < 0) { --q; continue; }
    /* recompute the zone (the cache makes this cheap) and place it */
    int v = jl_slab_zone(&s, Q[p], Q[q], threads, F, from);
    if (v < 0) rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the slab fill");
    else if (jl_slab_stopped(&s)) break;
    else rc = jl_slab_zone_place(&s, from, cnt, L, choice, total, next, out, &slabs, err);
    if (rc == JL_OK && v > 0) ++n_zones;
    q = p;
  }
  if (atomic_load(&s.cut)) cut = 1;
  if (!usable) out->count = 0;
  if (rc == JL_OK) rc = jl_trunk_require_legal(g, out, "the slab fill", &s.lim, &cut, err);
  if (info && rc == JL_OK) {
    info->count = out->count;
    info->axis = axis;
    info->zones = n_zones;
    info->slabs = slabs;
    info->step = s.step;
    info->boxes_tested = atomic_load(&s.tested);
    info->time_s = jl_time_now() - t0;
    info->complete = !cut;
  }
done:
  free(s.zs); free(Q); free(s.legal); free(s.row); free(s.value); free(F); free(from); free(cnt); free(L); free(choice);
  free(total); free(next); free(zval); free(G); free(zfrom);
  return rc;
}
