/* Broad phase: uniform grid by sorting cell keys (see broad_phase.h). The
 * per-body arithmetic (boxes, overlap and plane tests, large or grid, grid
 * size, cells, keys) is broad_math.h's and grid_pairs.h's, shared with the
 * device broad phase and its twin. */
#include "broad_phase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "grid_pairs.h"
#include "parallel.h"

/* Fewer threads than this many items each only cost thread start-up. */
#define JL_BP_MIN_PER_THREAD 1024
/* Digits of the radix sort. */
#define JL_RADIX_BITS 8
#define JL_RADIX_SIZE (1 << JL_RADIX_BITS)

typedef struct jl_pair_buf {
  uint64_t *pairs;         /* a << 32 | b, in order */
  long count, cap;
  int *list;               /* partners of one body */
  long list_count, list_cap;
  int failed;
} jl_pair_buf;

static void jl_pair_push(jl_pair_buf *b, int u, int v) {
  if (b->count == b->cap) {
    long cap = b->cap ? 2 * b->cap : 1024;
    uint64_t *q = realloc(b->pairs, (size_t)cap * sizeof *q);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->pairs = q;
    b->cap = cap;
  }
  b->pairs[b->count++] = ((uint64_t)(uint32_t)u << 32) | (uint32_t)v;
}

static void jl_list_push(jl_pair_buf *b, int v) {
  if (b->list_count == b->list_cap) {
    long cap = b->list_cap ? 2 * b->list_cap : 256;
    int *q = realloc(b->list, (size_t)cap * sizeof *q);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->list = q;
    b->list_cap = cap;
  }
  b->list[b->list_count++] = v;
}

static int jl_cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

static void jl_sort_ints(int *v, long n) {
  if (n > 32) {
    qsort(v, (size_t)n, sizeof *v, jl_cmp_int);
    return;
  }
  for (long i = 1; i < n; ++i) {
    int x = v[i];
    long j = i - 1;
    while (j >= 0 && v[j] > x) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
}

int jl_broad_phase_init(jl_broad_phase *bp, jl_error *err) {
  (void)err;
  memset(bp, 0, sizeof *bp);
  return JL_OK;
}

void jl_broad_phase_free(jl_broad_phase *bp) {
  if (!bp) return;
  free(bp->pair_a);
  free(bp->pair_b);
  free(bp->aabb);
  free(bp->kind);
  free(bp->cell_range);
  free(bp->entry_start);
  free(bp->keys);
  free(bp->keys_tmp);
  free(bp->vals);
  free(bp->vals_tmp);
  free(bp->entry_body);
  free(bp->entry_run);
  free(bp->sorted_body);
  free(bp->cell_start);
  free(bp->planes);
  free(bp->large);
  jl_pair_buf *local = bp->pair_local;
  if (local)
    for (int t = 0; t < JL_MAX_THREADS; ++t) {
      free(local[t].pairs);
      free(local[t].list);
    }
  free(local);
  jl_contacts *contacts = bp->contact_local;
  if (contacts)
    for (int t = 0; t < bp->contact_local_count; ++t) jl_contacts_free(&contacts[t]);
  free(contacts);
  memset(bp, 0, sizeof *bp);
}

#define JL_BP_GROW(ptr, n)                                                                  \
  do {                                                                                      \
    void *q_ = realloc((ptr), (size_t)(n) * sizeof *(ptr));                                 \
    if (!q_) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: out of memory");          \
    (ptr) = q_;                                                                             \
  } while (0)

/* ---- parallel LSD radix sort of 64-bit keys (with optional int values) ---- */

typedef struct jl_radix_job {
  const uint64_t *key_in;
  uint64_t *key_out;
  const int *val_in;
  int *val_out;
  long n;
  int shift;
  long (*hist)[JL_RADIX_SIZE];
} jl_radix_job;

static void jl_radix_count(void *ctx, int t, int nt) {
  jl_radix_job *j = ctx;
  long lo, hi;
  jl_parallel_chunk(j->n, t, nt, &lo, &hi);
  long *h = j->hist[t];
  memset(h, 0, sizeof(long) * JL_RADIX_SIZE);
  for (long i = lo; i < hi; ++i) h[(j->key_in[i] >> j->shift) & (JL_RADIX_SIZE - 1)]++;
}

static void jl_radix_scatter(void *ctx, int t, int nt) {
  jl_radix_job *j = ctx;
  long lo, hi;
  jl_parallel_chunk(j->n, t, nt, &lo, &hi);
  long *h = j->hist[t];  /* now the output offsets of this chunk */
  for (long i = lo; i < hi; ++i) {
    long o = h[(j->key_in[i] >> j->shift) & (JL_RADIX_SIZE - 1)]++;
    j->key_out[o] = j->key_in[i];
    if (j->val_in) j->val_out[o] = j->val_in[i];
  }
}

/* Stable sort of keys[0..n) (and vals beside them when not NULL) by their
 * low key_bits bits (the others are zero), using tmp buffers of the same
 * size; the result ends in *keys / *vals (the pointers may be swapped with
 * the tmp ones). */
static int jl_radix_sort(uint64_t **keys, uint64_t **keys_tmp, int **vals, int **vals_tmp, long n,
                         int key_bits, int nt, jl_error *err) {
  if (n < 2) return JL_OK;
  long(*hist)[JL_RADIX_SIZE] = malloc(sizeof(long) * JL_RADIX_SIZE * (size_t)nt);
  if (!hist) return jl_error_set(err, JL_ERR_NOMEM, "radix sort: out of memory");
  for (int shift = 0; shift < key_bits; shift += JL_RADIX_BITS) {
    jl_radix_job j = {*keys, *keys_tmp, vals ? *vals : NULL, vals ? *vals_tmp : NULL, n, shift,
                      hist};
    jl_parallel_run(nt, jl_radix_count, &j);
    /* Offsets digit-major, chunk-minor: the sort stays stable. */
    long sum = 0;
    for (int d = 0; d < JL_RADIX_SIZE; ++d)
      for (int t = 0; t < nt; ++t) {
        long c = hist[t][d];
        hist[t][d] = sum;
        sum += c;
      }
    jl_parallel_run(nt, jl_radix_scatter, &j);
    uint64_t *tk = *keys;
    *keys = *keys_tmp;
    *keys_tmp = tk;
    if (vals) {
      int *tv = *vals;
      *vals = *vals_tmp;
      *vals_tmp = tv;
    }
  }
  free(hist);
  return JL_OK;
}

/* ---- the grid ---- */

typedef struct jl_bp_job {
  const jl_bodies *bodies;
  jl_broad_phase *bp;
  double margin;
  jl_grid g;               /* cell edge, origin, key bits per axis */
  int bounds[JL_MAX_THREADS + 1]; /* body chunks of the pair pass, balanced by work */
} jl_bp_job;

static void jl_bp_aabbs(void *ctx, int t, int nt) {
  jl_bp_job *j = ctx;
  long lo, hi;
  jl_parallel_chunk(j->bodies->count, t, nt, &lo, &hi);
  for (long i = lo; i < hi; ++i)
    if (j->bodies->shape[i] != JL_SHAPE_PLANE)
      jl_bm_aabb(j->bodies->shape, j->bodies->size, j->bodies->pos, j->bodies->quat, (int)i,
                 j->margin, j->bp->aabb + 6 * i);
}

/* Cells of each grid body's box (floor is monotone, so the cell of the low
 * corner of two boxes' intersection is the larger of their low cells). */
static void jl_bp_count(void *ctx, int t, int nt) {
  jl_bp_job *j = ctx;
  jl_broad_phase *bp = j->bp;
  long lo, hi;
  jl_parallel_chunk(j->bodies->count, t, nt, &lo, &hi);
  for (long i = lo; i < hi; ++i) {
    long n = 0;
    if (bp->kind[i] == JL_GP_GRID) n = (long)jl_gp_cells(&j->g, bp->aabb + 6 * i, bp->cell_range + 6 * i);
    bp->entry_start[i + 1] = n;
  }
}

static void jl_bp_fill(void *ctx, int t, int nt) {
  jl_bp_job *j = ctx;
  jl_broad_phase *bp = j->bp;
  long lo, hi;
  jl_parallel_chunk(j->bodies->count, t, nt, &lo, &hi);
  for (long i = lo; i < hi; ++i) {
    if (bp->kind[i] != JL_GP_GRID) continue;
    jl_gp_fill(&j->g, bp->cell_range + 6 * i, (int)i, bp->entry_start[i], bp->keys, bp->vals,
               bp->entry_body);
  }
}

/* Pairs (u, v > u) for the bodies u of this chunk, in (u, v) order. */
static void jl_bp_pairs(void *ctx, int t, int nt) {
  jl_bp_job *j = ctx;
  jl_broad_phase *bp = j->bp;
  const jl_bodies *bodies = j->bodies;
  const uint8_t *st = bodies->is_static;
  int n = bodies->count;
  jl_pair_buf *out = (jl_pair_buf *)bp->pair_local + t;
  out->count = 0;
  out->failed = 0;
  (void)nt;
  long lo = j->bounds[t], hi = j->bounds[t + 1];
  for (long ul = lo; ul < hi; ++ul) {
    int u = (int)ul;
    const double *bu = bp->aabb + 6 * u;
    if (bp->kind[u] == JL_GP_PLANE) {
      for (int v = u + 1; v < n; ++v)
        if (bp->kind[v] != JL_GP_PLANE && !st[v] && jl_bm_near_plane(bodies->pos, bodies->size, u, bp->aabb + 6 * v, j->margin))
          jl_pair_push(out, u, v);
      continue;
    }
    if (bp->kind[u] == JL_GP_LARGE) {
      for (int v = u + 1; v < n; ++v) {
        if (bp->kind[v] == JL_GP_PLANE) {
          if (!st[u] && jl_bm_near_plane(bodies->pos, bodies->size, v, bu, j->margin)) jl_pair_push(out, u, v);
        } else if (!(st[u] && st[v]) && jl_bm_overlap(bu, bp->aabb + 6 * v)) {
          jl_pair_push(out, u, v);
        }
      }
      continue;
    }
    out->list_count = 0;
    const int *cu = bp->cell_range + 6 * u;
    int e = 0;
    for (int z = cu[2]; z <= cu[5]; ++z)
      for (int y = cu[1]; y <= cu[4]; ++y)
        for (int x = cu[0]; x <= cu[3]; ++x, ++e) {
          int r = bp->entry_run[bp->entry_start[u] + e];
          for (long p = bp->cell_start[r], pe = bp->cell_start[r + 1]; p < pe; ++p) {
            int v = bp->sorted_body[p];
            if (v <= u || (st[u] && st[v])) continue;
            const int *cv = bp->cell_range + 6 * v;
            /* only in the cell of the intersection's low corner */
            if ((cu[0] > cv[0] ? cu[0] : cv[0]) != x || (cu[1] > cv[1] ? cu[1] : cv[1]) != y ||
                (cu[2] > cv[2] ? cu[2] : cv[2]) != z)
              continue;
            if (jl_bm_overlap(bu, bp->aabb + 6 * v)) jl_list_push(out, v);
          }
        }
    for (int l = 0; l < bp->large_count; ++l) {
      int L = bp->large[l];
      if (L > u && !(st[u] && st[L]) && jl_bm_overlap(bu, bp->aabb + 6 * L)) jl_list_push(out, L);
    }
    if (!st[u])
      for (int l = 0; l < bp->plane_count; ++l) {
        int P = bp->planes[l];
        if (P > u && jl_bm_near_plane(bodies->pos, bodies->size, P, bu, j->margin)) jl_list_push(out, P);
      }
    jl_sort_ints(out->list, out->list_count);
    for (long k = 0; k < out->list_count; ++k) jl_pair_push(out, u, out->list[k]);
  }
}

typedef struct jl_runs_job {
  jl_broad_phase *bp;
  long entries;
  long *run_base;          /* per chunk: runs starting in it, then the first run's index */
} jl_runs_job;

static void jl_runs_count(void *ctx, int t, int nt) {
  jl_runs_job *j = ctx;
  const uint64_t *k = j->bp->keys;
  long lo, hi, c = 0;
  jl_parallel_chunk(j->entries, t, nt, &lo, &hi);
  for (long e = lo; e < hi; ++e)
    if (e == 0 || k[e] != k[e - 1]) c++;
  j->run_base[t] = c;
}

static void jl_runs_write(void *ctx, int t, int nt) {
  jl_runs_job *j = ctx;
  jl_broad_phase *bp = j->bp;
  const uint64_t *k = bp->keys;
  long lo, hi, run = j->run_base[t] - 1;
  jl_parallel_chunk(j->entries, t, nt, &lo, &hi);
  for (long e = lo; e < hi; ++e) {
    if (e == 0 || k[e] != k[e - 1]) bp->cell_start[++run] = e;
    int en = bp->vals[e];
    bp->entry_run[en] = (int)run;
    bp->sorted_body[e] = bp->entry_body[en];
  }
}

static int jl_bp_reserve_bodies(jl_broad_phase *bp, int n, jl_error *err) {
  if (n <= bp->body_cap) return JL_OK;
  JL_BP_GROW(bp->aabb, 6 * (size_t)n);
  JL_BP_GROW(bp->kind, n);
  JL_BP_GROW(bp->cell_range, 6 * (size_t)n);
  JL_BP_GROW(bp->entry_start, (size_t)n + 1);
  JL_BP_GROW(bp->planes, n);
  JL_BP_GROW(bp->large, n);
  bp->body_cap = n;
  return JL_OK;
}

int jl_broad_phase_run(const jl_bodies *bodies, double margin, int threads, jl_broad_phase *bp,
                       jl_error *err) {
  int n = bodies->count;
  bp->pair_count = 0;
  bp->cell = 0.0;
  bp->entries = 0;
  bp->large_count = 0;
  bp->plane_count = 0;
  if (!(margin >= 0.0) || !isfinite(margin))
    return jl_error_set(err, JL_ERR_INPUT, "collision margin must be finite and >= 0 (got %g)", margin);
  if (n < 0) return jl_error_set(err, JL_ERR_INTERNAL, "negative body count");
  if (n == 0) return JL_OK;
  if (jl_bp_reserve_bodies(bp, n, err)) return err ? err->code : JL_ERR_NOMEM;
  if (!bp->pair_local) {
    bp->pair_local = calloc(JL_MAX_THREADS, sizeof(jl_pair_buf));
    if (!bp->pair_local) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: out of memory");
  }
  int nt = jl_parallel_threads(threads, n, JL_BP_MIN_PER_THREAD);
  jl_bp_job job = {.bodies = bodies, .bp = bp, .margin = margin};
  jl_parallel_run(nt, jl_bp_aabbs, &job);

  /* Cell edge: the mean box size of the dynamic bodies. */
  double sum = 0.0;
  long dyn = 0;
  for (int i = 0; i < n; ++i) {
    if (bodies->shape[i] == JL_SHAPE_PLANE) {
      bp->kind[i] = JL_GP_PLANE;
      bp->planes[bp->plane_count++] = i;
      continue;
    }
    const double *b = bp->aabb + 6 * i;
    for (int k = 0; k < 3; ++k)
      if (!isfinite(b[k]) || !isfinite(b[3 + k]))
        return jl_error_set(err, JL_ERR_INPUT, "body %d: position or size is not finite", i);
    if (!bodies->is_static[i]) {
      sum += jl_bm_longest_edge(b);
      dyn++;
    }
  }
  if (dyn == 0) return JL_OK;  /* only static bodies: nothing can touch */
  double cell = sum / (double)dyn;
  if (!(cell > 0.0)) cell = 1.0;
  /* Large bodies leave the grid; the rest fix its origin and extent. */
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  int grid = 0;
  for (int i = 0; i < n; ++i) {
    if (bodies->shape[i] == JL_SHAPE_PLANE) continue;
    const double *b = bp->aabb + 6 * i;
    if (jl_gp_kind(b, cell) == JL_GP_LARGE) {
      bp->kind[i] = JL_GP_LARGE;
      bp->large[bp->large_count++] = i;
      continue;
    }
    bp->kind[i] = JL_GP_GRID;
    grid++;
    for (int k = 0; k < 3; ++k) {
      lo[k] = fmin(lo[k], b[k]);
      hi[k] = fmax(hi[k], b[3 + k]);
    }
  }
  long entries = 0;
  if (grid > 0) {
    /* Cell coordinates must fit 63 key bits and an int; coarsen the grid if not. */
    jl_gp_grid_params(cell, lo, hi, &job.g);
    bp->cell = job.g.cell;
    jl_parallel_run(nt, jl_bp_count, &job);
    bp->entry_start[0] = 0;
    for (int i = 0; i < n; ++i) bp->entry_start[i + 1] += bp->entry_start[i];
    entries = bp->entry_start[n];
    if (entries > 0x7fffffffL)
      return jl_error_set(err, JL_ERR_NOMEM, "broad phase: too many grid entries (%ld)", entries);
    bp->entries = entries;
    if (entries > bp->entry_cap) {
      JL_BP_GROW(bp->keys, entries);
      JL_BP_GROW(bp->keys_tmp, entries);
      JL_BP_GROW(bp->vals, entries);
      JL_BP_GROW(bp->vals_tmp, entries);
      JL_BP_GROW(bp->entry_body, entries);
      JL_BP_GROW(bp->entry_run, entries);
      JL_BP_GROW(bp->sorted_body, entries);
      JL_BP_GROW(bp->cell_start, entries + 1);
      bp->entry_cap = entries;
    }
    jl_parallel_run(nt, jl_bp_fill, &job);
    int snt = jl_parallel_threads(threads, entries, JL_BP_MIN_PER_THREAD);
    int key_bits = job.g.bits[0] + job.g.bits[1] + job.g.bits[2];
    if (jl_radix_sort(&bp->keys, &bp->keys_tmp, &bp->vals, &bp->vals_tmp, entries, key_bits, snt, err))
      return err ? err->code : JL_ERR_NOMEM;
    /* Runs of equal keys: count per chunk, scan, then write. */
    long run_base[JL_MAX_THREADS + 1];
    jl_runs_job rj = {bp, entries, run_base};
    jl_parallel_run(snt, jl_runs_count, &rj);
    long runs = 0;
    for (int t = 0; t < snt; ++t) {
      long c = run_base[t];
      run_base[t] = runs;
      runs += c;
    }
    jl_parallel_run(snt, jl_runs_write, &rj);
    bp->cell_start[runs] = entries;
  }

  /* Planes and large bodies test every body after them: weigh them so in
   * the chunks (the output order does not depend on the chunks). */
  double work = 0.0;
  for (int i = 0; i < n; ++i) work += bp->kind[i] == JL_GP_GRID ? 1.0 : (double)(n - i);
  double acc = 0.0;
  int t = 1;
  job.bounds[0] = 0;
  for (int i = 0; i < n && t < nt; ++i) {
    acc += bp->kind[i] == JL_GP_GRID ? 1.0 : (double)(n - i);
    while (t < nt && acc >= work * t / nt) job.bounds[t++] = i + 1;
  }
  while (t <= nt) job.bounds[t++] = n;
  jl_parallel_run(nt, jl_bp_pairs, &job);
  jl_pair_buf *local = bp->pair_local;
  long total = 0;
  for (int t = 0; t < nt; ++t) {
    if (local[t].failed) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: out of memory for pairs");
    total += local[t].count;
  }
  if (total > 0x7fffffffL) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: too many pairs (%ld)", total);
  if (total > bp->pair_cap) {
    JL_BP_GROW(bp->pair_a, total);
    JL_BP_GROW(bp->pair_b, total);
    bp->pair_cap = total;
  }
  long o = 0;
  for (int t = 0; t < nt; ++t)
    for (long k = 0; k < local[t].count; ++k, ++o) {
      bp->pair_a[o] = (int)(local[t].pairs[k] >> 32);
      bp->pair_b[o] = (int)(uint32_t)local[t].pairs[k];
    }
  bp->pair_count = (int)total;
  return JL_OK;
}
