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
#include "team.h"

/* Bodies a member of the team should have at least: below that, the
 * barriers between the stages cost more than the work. */
#define JL_BP_MIN_PER_THREAD 256
/* Digits of the radix sort. */
#define JL_RADIX_BITS 8
#define JL_RADIX_SIZE (1 << JL_RADIX_BITS)

typedef struct jl_bp_job jl_bp_job;
static void jl_bp_state_free(jl_bp_job *j);

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
  free(bp->box_now);
  free(bp->kept_shape);
  free(bp->kept_static);
  jl_pair_buf *local = bp->pair_local;
  if (local)
    for (int t = 0; t < JL_MAX_THREADS; ++t) {
      free(local[t].pairs);
      free(local[t].list);
    }
  free(local);
  jl_bp_state_free(bp->state);
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

/* ---- the grid, one stage after another on a thread team ---- */

/* What the members of the team share: the call's inputs, the grid, and the
 * scans' per-member counts (bp->state). */
struct jl_bp_job {
  const jl_bodies *bodies;
  jl_broad_phase *bp;
  double margin;
  double plane_margin;     /* the planes' test: margin, wider by twice the skin for a kept list */
  jl_grid g;               /* cell edge, origin, key bits per axis */
  int rc;                  /* tid 0's verdict, read by all after a barrier */
  int keep, check;         /* a kept list: build one; check the last one first */
  int escaped[JL_MAX_THREADS]; /* per member: a box of its chunk left its widened box */
  long dyn;                /* dynamic bodies in the grid or large */
  int grid;                /* bodies in the grid */
  long runs;
  long (*hist)[JL_RADIX_SIZE]; /* per member: digit counts, then output offsets */
  int hist_cap;
  long run_base[JL_MAX_THREADS + 1]; /* per member: runs starting in its entries, then the first run */
  long pair_base[JL_MAX_THREADS + 1];
  int bounds[JL_MAX_THREADS + 1]; /* body chunks of the pair pass, balanced by work */
};

static void jl_bp_state_free(jl_bp_job *j) {
  if (j) free(j->hist);
  free(j);
}

/* The boxes of now: into box_now for a kept list (aabb holds the widened
 * ones), else into aabb. */
static void jl_bp_aabbs(jl_bp_job *j, long lo, long hi) {
  double *out = j->keep ? j->bp->box_now : j->bp->aabb;
  for (long i = lo; i < hi; ++i)
    if (j->bodies->shape[i] != JL_SHAPE_PLANE)
      jl_bm_aabb(j->bodies->shape, j->bodies->size, j->bodies->pos, j->bodies->quat, (int)i,
                 j->margin, out + 6 * i);
}

/* 1 when a box of the chunk has left its widened box (or is not finite). */
static int jl_bp_escaped(const jl_bp_job *j, long lo, long hi) {
  const jl_broad_phase *bp = j->bp;
  for (long i = lo; i < hi; ++i)
    if (j->bodies->shape[i] != JL_SHAPE_PLANE && !jl_gp_inside(bp->box_now + 6 * i, bp->aabb + 6 * i))
      return 1;
  return 0;
}

/* Cells of each grid body's box (floor is monotone, so the cell of the low
 * corner of two boxes' intersection is the larger of their low cells). */
static void jl_bp_count(jl_bp_job *j, long lo, long hi) {
  jl_broad_phase *bp = j->bp;
  for (long i = lo; i < hi; ++i) {
    long n = 0;
    if (bp->kind[i] == JL_GP_GRID) n = (long)jl_gp_cells(&j->g, bp->aabb + 6 * i, bp->cell_range + 6 * i);
    bp->entry_start[i + 1] = n;
  }
}

static void jl_bp_fill(jl_bp_job *j, long lo, long hi) {
  jl_broad_phase *bp = j->bp;
  for (long i = lo; i < hi; ++i) {
    if (bp->kind[i] != JL_GP_GRID) continue;
    jl_gp_fill(&j->g, bp->cell_range + 6 * i, (int)i, bp->entry_start[i], bp->keys, bp->vals,
               bp->entry_body);
  }
}

/* Pairs (u, v > u) for the bodies u of member t's chunk, in (u, v) order. */
static void jl_bp_pairs(jl_bp_job *j, int t) {
  jl_broad_phase *bp = j->bp;
  const jl_bodies *bodies = j->bodies;
  const uint8_t *st = bodies->is_static;
  int n = bodies->count;
  jl_pair_buf *out = (jl_pair_buf *)bp->pair_local + t;
  out->count = 0;
  out->failed = 0;
  long lo = j->bounds[t], hi = j->bounds[t + 1];
  for (long ul = lo; ul < hi; ++ul) {
    int u = (int)ul;
    const double *bu = bp->aabb + 6 * u;
    if (bp->kind[u] == JL_GP_PLANE) {
      for (int v = u + 1; v < n; ++v)
        if (bp->kind[v] != JL_GP_PLANE && !st[v] &&
            jl_bm_near_plane(bodies->pos, bodies->size, u, bp->aabb + 6 * v, j->plane_margin))
          jl_pair_push(out, u, v);
      continue;
    }
    if (bp->kind[u] == JL_GP_LARGE) {
      for (int v = u + 1; v < n; ++v) {
        if (bp->kind[v] == JL_GP_PLANE) {
          if (!st[u] && jl_bm_near_plane(bodies->pos, bodies->size, v, bu, j->plane_margin))
            jl_pair_push(out, u, v);
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
        if (P > u && jl_bm_near_plane(bodies->pos, bodies->size, P, bu, j->plane_margin))
          jl_list_push(out, P);
      }
    jl_sort_ints(out->list, out->list_count);
    for (long k = 0; k < out->list_count; ++k) jl_pair_push(out, u, out->list[k]);
  }
}

/* tid 0: the kinds of the bodies (plane, large, grid), the cell edge (the
 * mean box size of the dynamic bodies) and the grid's origin and extent. */
static int jl_bp_classify(jl_bp_job *j, jl_error *err) {
  jl_broad_phase *bp = j->bp;
  const jl_bodies *bodies = j->bodies;
  int n = bodies->count;
  double sum = 0.0;
  long dyn = 0;
  j->dyn = 0;
  j->grid = 0;
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
  j->dyn = dyn;
  if (dyn == 0) return JL_OK;  /* only static bodies: nothing can touch */
  double cell = sum / (double)dyn;
  if (!(cell > 0.0)) cell = 1.0;
  if (j->keep) {  /* a kept list: from the boxes widened by their skins */
    for (int i = 0; i < n; ++i) {
      if (bodies->shape[i] == JL_SHAPE_PLANE) continue;
      double *b = bp->aabb + 6 * i;
      jl_gp_fatten(bodies->shape, bodies->vel, bodies->omega, i, b, bp->keep_skin, cell,
                   bp->keep_ahead_s, b);
    }
    j->plane_margin = j->margin + 2.0 * (bp->keep_skin * cell);
  }
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
  j->grid = grid;
  if (grid > 0) {
    /* Cell coordinates must fit 63 key bits and an int; coarsen the grid if not. */
    jl_gp_grid_params(cell, lo, hi, &j->g);
    bp->cell = j->g.cell;
  }
  return JL_OK;
}

/* tid 0: the entries from the counts (exclusive scan), room for them. */
static int jl_bp_entries(jl_bp_job *j, jl_error *err) {
  jl_broad_phase *bp = j->bp;
  int n = j->bodies->count;
  bp->entry_start[0] = 0;
  for (int i = 0; i < n; ++i) bp->entry_start[i + 1] += bp->entry_start[i];
  long entries = bp->entry_start[n];
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
  return JL_OK;
}

/* Parallel LSD radix sort of the entries' cell keys (low key_bits bits; the
 * others are zero) with the entry indices beside them, stable: each member
 * counts the digits of its chunk, tid 0 turns the counts into offsets digit
 * major, chunk minor, each member scatters its chunk. The sorted keys end in
 * bp->keys / bp->vals (the buffers swap with the tmp ones). */
static void jl_bp_sort(jl_bp_job *j, int tid, jl_team *team) {
  jl_broad_phase *bp = j->bp;
  int nt = team->size;
  long n = bp->entries, lo, hi;
  jl_parallel_chunk(n, tid, nt, &lo, &hi);
  int key_bits = j->g.bits[0] + j->g.bits[1] + j->g.bits[2];
  uint64_t *key = bp->keys, *key_tmp = bp->keys_tmp;
  int *val = bp->vals, *val_tmp = bp->vals_tmp;
  long *h = j->hist[tid];
  if (n < 2) return;
  for (int shift = 0; shift < key_bits; shift += JL_RADIX_BITS) {
    memset(h, 0, sizeof(long) * JL_RADIX_SIZE);
    for (long i = lo; i < hi; ++i) h[(key[i] >> shift) & (JL_RADIX_SIZE - 1)]++;
    jl_team_sync(team);
    if (tid == 0) {
      long sum = 0;
      for (int d = 0; d < JL_RADIX_SIZE; ++d)
        for (int t = 0; t < nt; ++t) {
          long c = j->hist[t][d];
          j->hist[t][d] = sum;
          sum += c;
        }
    }
    jl_team_sync(team);
    for (long i = lo; i < hi; ++i) {
      long o = h[(key[i] >> shift) & (JL_RADIX_SIZE - 1)]++;
      key_tmp[o] = key[i];
      val_tmp[o] = val[i];
    }
    uint64_t *tk = key; key = key_tmp; key_tmp = tk;
    int *tv = val; val = val_tmp; val_tmp = tv;
    /* the next pass reads what the others wrote, and the counts are rewritten */
    jl_team_sync(team);
  }
  if (tid == 0) {
    bp->keys = key;
    bp->keys_tmp = key_tmp;
    bp->vals = val;
    bp->vals_tmp = val_tmp;
  }
}

/* Runs of equal keys: each member counts the runs starting in its chunk,
 * tid 0 scans, each member writes its chunk's. */
static void jl_bp_runs(jl_bp_job *j, int tid, jl_team *team) {
  jl_broad_phase *bp = j->bp;
  long lo, hi, c = 0;
  jl_parallel_chunk(bp->entries, tid, team->size, &lo, &hi);
  const uint64_t *k = bp->keys;
  for (long e = lo; e < hi; ++e)
    if (e == 0 || k[e] != k[e - 1]) c++;
  j->run_base[tid] = c;
  jl_team_sync(team);
  if (tid == 0) {
    long runs = 0;
    for (int t = 0; t < team->size; ++t) {
      long r = j->run_base[t];
      j->run_base[t] = runs;
      runs += r;
    }
    j->runs = runs;
  }
  jl_team_sync(team);
  long run = j->run_base[tid] - 1;
  for (long e = lo; e < hi; ++e) {
    if (e == 0 || k[e] != k[e - 1]) bp->cell_start[++run] = e;
    int en = bp->vals[e];
    bp->entry_run[en] = (int)run;
    bp->sorted_body[e] = bp->entry_body[en];
  }
  if (tid == 0) bp->cell_start[j->runs] = bp->entries;
}

/* tid 0: the pair pass's body chunks. Planes and large bodies test every
 * body after them: weigh them so in the chunks (the output order does not
 * depend on the chunks). */
static void jl_bp_bounds(jl_bp_job *j, int nt) {
  jl_broad_phase *bp = j->bp;
  int n = j->bodies->count;
  double work = 0.0;
  for (int i = 0; i < n; ++i) work += bp->kind[i] == JL_GP_GRID ? 1.0 : (double)(n - i);
  double acc = 0.0;
  int t = 1;
  j->bounds[0] = 0;
  for (int i = 0; i < n && t < nt; ++i) {
    acc += bp->kind[i] == JL_GP_GRID ? 1.0 : (double)(n - i);
    while (t < nt && acc >= work * t / nt) j->bounds[t++] = i + 1;
  }
  while (t <= nt) j->bounds[t++] = n;
}

/* tid 0: where each member's pairs go, room for them all. */
static int jl_bp_pair_offsets(jl_bp_job *j, int nt, jl_error *err) {
  jl_broad_phase *bp = j->bp;
  jl_pair_buf *local = bp->pair_local;
  long total = 0;
  for (int t = 0; t < nt; ++t) {
    if (local[t].failed) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: out of memory for pairs");
    j->pair_base[t] = total;
    total += local[t].count;
  }
  if (total > 0x7fffffffL) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: too many pairs (%ld)", total);
  if (total > bp->pair_cap) {
    JL_BP_GROW(bp->pair_a, total);
    JL_BP_GROW(bp->pair_b, total);
    bp->pair_cap = total;
  }
  bp->pair_count = (int)total;
  return JL_OK;
}

static int jl_bp_reserve_bodies(jl_broad_phase *bp, int n, jl_error *err) {
  if (n <= bp->body_cap) return JL_OK;
  JL_BP_GROW(bp->aabb, 6 * (size_t)n);
  JL_BP_GROW(bp->kind, n);
  JL_BP_GROW(bp->cell_range, 6 * (size_t)n);
  JL_BP_GROW(bp->entry_start, (size_t)n + 1);
  JL_BP_GROW(bp->planes, n);
  JL_BP_GROW(bp->large, n);
  JL_BP_GROW(bp->box_now, 6 * (size_t)n);
  JL_BP_GROW(bp->kept_shape, n);
  JL_BP_GROW(bp->kept_static, n);
  bp->body_cap = n;
  return JL_OK;
}

void jl_broad_phase_drop_kept(jl_broad_phase *bp) { bp->kept_ok = 0; }

int jl_broad_phase_threads(int threads, int bodies) {
  return jl_parallel_threads(threads, bodies, JL_BP_MIN_PER_THREAD);
}

int jl_broad_phase_prepare(const jl_bodies *bodies, double margin, int threads, jl_broad_phase *bp,
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
  if (jl_bp_reserve_bodies(bp, n, err)) return err ? err->code : JL_ERR_NOMEM;
  if (!bp->pair_local) {
    bp->pair_local = calloc(JL_MAX_THREADS, sizeof(jl_pair_buf));
    if (!bp->pair_local) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: out of memory");
  }
  if (!bp->state) {
    bp->state = calloc(1, sizeof(jl_bp_job));
    if (!bp->state) return jl_error_set(err, JL_ERR_NOMEM, "broad phase: out of memory");
  }
  jl_bp_job *j = bp->state;
  if (threads < 1) threads = 1;
  if (threads > JL_MAX_THREADS) threads = JL_MAX_THREADS;
  if (j->hist_cap < threads) {
    long(*h)[JL_RADIX_SIZE] = realloc(j->hist, sizeof(long) * JL_RADIX_SIZE * (size_t)threads);
    if (!h) return jl_error_set(err, JL_ERR_NOMEM, "radix sort: out of memory");
    j->hist = h;
    j->hist_cap = threads;
  }
  j->bodies = bodies;
  j->bp = bp;
  j->margin = margin;
  j->plane_margin = margin;
  j->rc = JL_OK;
  j->keep = bp->keep_skin > 0.0;
  bp->kept = 0;
  /* the last list stands only for the same bodies (a renumbering that moves
   * a plane or a static body shows here; jl_broad_phase_drop_kept for the rest) */
  j->check = j->keep && bp->kept_ok && bp->kept_n == n && bp->kept_margin == margin && n > 0 &&
             memcmp(bp->kept_shape, bodies->shape, (size_t)n) == 0 &&
             memcmp(bp->kept_static, bodies->is_static, (size_t)n) == 0;
  if (!j->keep) bp->kept_ok = 0;
  return JL_OK;
}

int jl_broad_phase_team(jl_broad_phase *bp, int tid, jl_team *team, jl_error *err) {
  jl_bp_job *j = bp->state;
  int nt = team->size, n = j->bodies->count;
  if (n == 0) return JL_OK;
  long lo, hi;
  jl_parallel_chunk(n, tid, nt, &lo, &hi);
  jl_bp_aabbs(j, lo, hi);
  if (j->check) {  /* the last list stands while every box lies inside its widened one */
    j->escaped[tid] = jl_bp_escaped(j, lo, hi);
    jl_team_sync(team);
    int escaped = 0;
    for (int t = 0; t < nt; ++t) escaped |= j->escaped[t];
    if (!escaped) {
      if (tid == 0) {
        bp->pair_count = bp->kept_pairs;
        bp->kept = 1;
      }
      jl_team_sync(team);  /* the count set, every flag read before the next call */
      return JL_OK;
    }
  }
  if (j->keep) memcpy(bp->aabb + 6 * lo, bp->box_now + 6 * lo, 6 * (size_t)(hi - lo) * sizeof(double));
  jl_team_sync(team);
  if (tid == 0) {
    bp->kept_ok = 0;
    j->rc = jl_bp_classify(j, err);
  }
  jl_team_sync(team);
  if (j->rc || j->dyn == 0) return j->rc;
  if (j->grid > 0) {
    jl_bp_count(j, lo, hi);
    jl_team_sync(team);
    if (tid == 0) j->rc = jl_bp_entries(j, err);
    jl_team_sync(team);
    if (j->rc) return j->rc;
    jl_bp_fill(j, lo, hi);
    jl_team_sync(team);
    jl_bp_sort(j, tid, team);
    jl_team_sync(team);
    jl_bp_runs(j, tid, team);
  }
  if (tid == 0) jl_bp_bounds(j, nt);
  jl_team_sync(team);
  jl_bp_pairs(j, tid);
  jl_team_sync(team);
  if (tid == 0) j->rc = jl_bp_pair_offsets(j, nt, err);
  jl_team_sync(team);
  if (j->rc) return j->rc;
  const jl_pair_buf *mine = (const jl_pair_buf *)bp->pair_local + tid;
  for (long k = 0, o = j->pair_base[tid]; k < mine->count; ++k, ++o) {
    bp->pair_a[o] = (int)(mine->pairs[k] >> 32);
    bp->pair_b[o] = (int)(uint32_t)mine->pairs[k];
  }
  if (tid == 0 && j->keep) {
    bp->kept_ok = 1;
    bp->kept_n = n;
    bp->kept_pairs = bp->pair_count;
    bp->kept_margin = j->margin;
    memcpy(bp->kept_shape, j->bodies->shape, (size_t)n);
    memcpy(bp->kept_static, j->bodies->is_static, (size_t)n);
  }
  jl_team_sync(team);
  return JL_OK;
}

typedef struct jl_bp_run {
  jl_broad_phase *bp;
  jl_error *err;
  int rc;
} jl_bp_run;

static void jl_bp_run_team(void *ctx, int tid, jl_team *team) {
  jl_bp_run *r = ctx;
  int rc = jl_broad_phase_team(r->bp, tid, team, tid == 0 ? r->err : NULL);
  if (tid == 0) r->rc = rc;
}

int jl_broad_phase_run(const jl_bodies *bodies, double margin, int threads, jl_broad_phase *bp,
                       jl_error *err) {
  int nt = jl_broad_phase_threads(threads, bodies->count);
  int rc = jl_broad_phase_prepare(bodies, margin, nt, bp, err);
  if (rc) return rc;
  jl_bp_run r = {bp, err, JL_OK};
  if ((rc = jl_team_pool_run(bp->pool, nt, jl_bp_run_team, &r, err))) return rc;
  return r.rc;
}
