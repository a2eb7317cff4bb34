/* Greedy edge colouring of the contact graph (dynamic bodies only). */
#include "contact_graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colour_math.h"

void jl_colouring_free(jl_colouring *col) {
  if (!col) return;
  free(col->group_ptr);
  free(col->group_seg);
  free(col->seg_ptr);
  free(col->order);
  free(col->colour);
  memset(col, 0, sizeof *col);
}

/* A unit: a run of contacts of one body pair (the narrow phase numbers
 * contacts by pair). Same pair: one unit, swept in order by one thread. */
static int jl_same_unit(const jl_contact_problem *p, int i, int j) {
  return p->ka[i] == p->ka[j] && p->kb[i] == p->kb[j];
}

static int jl_colouring_reserve(jl_colouring *col, int n, int groups, jl_error *err) {
  if (n > col->cap || !col->seg_ptr) {
    int cap = n + n / 2 + 16;
    int *o = realloc(col->order, sizeof(int) * (size_t)cap);
    if (o) col->order = o;
    int *c = realloc(col->colour, sizeof(int) * (size_t)cap);
    if (c) col->colour = c;
    int *q = realloc(col->seg_ptr, sizeof(int) * (size_t)(cap + 1));
    if (q) col->seg_ptr = q;
    if (!o || !c || !q) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring");
    col->cap = cap;
  }
  if (groups + 1 > col->group_cap) {
    int *g = realloc(col->group_ptr, sizeof(int) * (size_t)(groups + 1));
    if (g) col->group_ptr = g;
    int *h = realloc(col->group_seg, sizeof(int) * (size_t)(groups + 1));
    if (h) col->group_seg = h;
    if (!g || !h) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring");
    col->group_cap = groups + 1;
  }
  return JL_OK;
}

/* One segment at slot *cur from the count units w (round k: the k-th
 * contact of each unit that has one). */
static void jl_weave(jl_colouring *col, const int *unit_start, const int *w, int *count, int *cur,
                     int *seg) {
  col->seg_ptr[(*seg)++] = *cur;
  for (int k = 0, more = 1; more; ++k) {
    more = 0;
    for (int q = 0; q < *count; ++q)
      if (unit_start[w[q]] + k < unit_start[w[q] + 1]) {
        col->order[(*cur)++] = unit_start[w[q]] + k;
        more = 1;
      }
  }
  *count = 0;
}

int jl_contact_colour(const jl_contact_problem *p, int min_size, jl_colouring *col,
                      jl_error *err) {
  int n = p->n, nb = p->nbodies;
  int rc = jl_colouring_reserve(col, n, 0, err);
  if (rc) return rc;
  /* a unit meets at most deg(a) + deg(b) - 2 others: that bounds the colours */
  int maxdeg = 1;
  for (int k = 0; k < nb; ++k) {
    int d = p->body_ptr[k + 1] - p->body_ptr[k];
    if (d > maxdeg) maxdeg = d;
  }
  int words = (2 * maxdeg + 63) / 64;
  uint64_t *mask = calloc((size_t)nb * (size_t)words, sizeof(uint64_t));
  /* units: unit_start[u] their first contacts, then n */
  int *unit_start = malloc(sizeof(int) * ((size_t)n + 1));
  int *per = NULL; /* per colour: the arrays below, one block */
  if ((!mask && nb > 0) || !unit_start) goto nomem;
  int units = 0, colours = 0;
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && jl_same_unit(p, i, j)) ++j;
    unit_start[units++] = i;
    int ka = p->ka[i], kb = p->kb[i];
    uint64_t *ma = ka >= 0 ? mask + (size_t)ka * words : NULL;
    uint64_t *mb = kb >= 0 ? mask + (size_t)kb * words : NULL;
    int c = 0;
    for (int w = 0; w < words; ++w) {
      uint64_t used = (ma ? ma[w] : 0) | (mb ? mb[w] : 0);
      if (~used) {
        c = 64 * w + __builtin_ctzll(~used);
        break;
      }
    }
    for (int e = i; e < j; ++e) col->colour[e] = c;
    if (ma) ma[c / 64] |= 1ull << (c % 64);
    if (mb) mb[c / 64] |= 1ull << (c % 64);
    if (c + 1 > colours) colours = c + 1;
    i = j;
  }
  unit_start[units] = n;
  col->colours = colours;
  /* per colour: its contacts (size), its group or -1: merged (gof), its
   * next slot (cur) and next segment (seg), its units waiting for their
   * segment (pend, pending of them) */
  size_t nc = (size_t)colours + 1;
  per = calloc((5 + JL_COLOUR_WEAVE) * nc, sizeof(int));
  if (!per) goto nomem;
  int *size = per, *gof = per + nc, *cur = per + 2 * nc, *seg = per + 3 * nc;
  int *pending = per + 4 * nc, *pend = per + 5 * nc;
  /* the big colours are groups in colour order, the small merged last */
  for (int i = 0; i < n; ++i) size[col->colour[i]]++;
  int groups = 0, merged_count = 0;
  for (int c = 0; c < colours; ++c) {
    if (size[c] >= min_size) gof[c] = groups++;
    else {
      gof[c] = -1;
      merged_count += size[c];
    }
  }
  int total_groups = groups + (merged_count > 0);
  if ((rc = jl_colouring_reserve(col, n, total_groups, err))) goto done;
  /* each colour group: its units by first contact, JL_COLOUR_WEAVE at a
   * time woven into one segment (round k: the k-th contact of each unit
   * that has one), so that neighbouring slots are of different units; the
   * merged group: its contacts in contact order, one segment. One pass over
   * the units, with each colour's next slot and next segment laid out first. */
  for (int u = 0; u < units; ++u) seg[col->colour[unit_start[u]]]++; /* units per colour */
  int pos = 0, segs = 0, g = 0;
  for (int c = 0; c < colours; ++c) {
    if (gof[c] < 0) continue;
    int nu = seg[c];
    col->group_ptr[g] = cur[c] = pos;
    col->group_seg[g] = seg[c] = segs;
    pos += size[c];
    segs += (nu + JL_COLOUR_WEAVE - 1) / JL_COLOUR_WEAVE;
    ++g;
  }
  for (int u = 0; u < units; ++u) {
    int c = col->colour[unit_start[u]];
    if (gof[c] < 0) continue;
    int *w = pend + (size_t)c * JL_COLOUR_WEAVE;
    w[pending[c]++] = u;
    if (pending[c] == JL_COLOUR_WEAVE) jl_weave(col, unit_start, w, &pending[c], &cur[c], &seg[c]);
  }
  for (int c = 0; c < colours; ++c) /* the last, partial segments */
    if (gof[c] >= 0 && pending[c] > 0)
      jl_weave(col, unit_start, pend + (size_t)c * JL_COLOUR_WEAVE, &pending[c], &cur[c], &seg[c]);
  if (merged_count > 0) {
    col->group_ptr[g] = pos;
    col->group_seg[g] = segs;
    col->seg_ptr[segs++] = pos;
    for (int i = 0; i < n; ++i)
      if (gof[col->colour[i]] < 0) col->order[pos++] = i;
    ++g;
  }
  col->group_ptr[g] = n;
  col->group_seg[g] = segs;
  col->seg_ptr[segs] = n;
  col->groups = total_groups;
  col->merged = merged_count > 0;
  goto done;
nomem:
  rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring");
done:
  free(mask);
  free(per);
  free(unit_start);
  return rc;
}

/* ---- the device SOR's colouring, CPU twin (colour_math.h) ---- */

void jl_pcolouring_free(jl_pcolouring *col) {
  if (!col) return;
  free(col->colour);
  free(col->order);
  free(col->colour_ptr);
  free(col->hash);
  free(col->rank);
  memset(col, 0, sizeof *col);
}

/* qsort: higher priority first (jl_cm_before). */
static int jl_jp_cmp(const void *x, const void *y) {
  const jl_pc_item *a = x, *b = y;
  if (jl_cm_before(a->hash, a->index, b->hash, b->index)) return -1;
  if (jl_cm_before(b->hash, b->index, a->hash, a->index)) return 1;
  return 0;
}

int jl_contact_colour_jp(const jl_contact_problem *p, const uint64_t *key, jl_pcolouring *col,
                         jl_error *err) {
  int n = p->n;
  col->n = n;
  col->colours = 0;
  if (n > col->cap) {
    int cap = n + n / 2 + 16;
    int *c = realloc(col->colour, sizeof(int) * (size_t)cap);
    if (c) col->colour = c;
    int *o = realloc(col->order, sizeof(int) * (size_t)cap);
    if (o) col->order = o;
    uint64_t *h = realloc(col->hash, sizeof(uint64_t) * (size_t)cap);
    if (h) col->hash = h;
    jl_pc_item *r = realloc(col->rank, sizeof(jl_pc_item) * (size_t)cap);
    if (r) col->rank = r;
    if (!c || !o || !h || !r)
      return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring of %d contacts", n);
    col->cap = cap;
  }
  for (int i = 0; i < n; ++i) {
    col->hash[i] = jl_cm_hash(key[i]);
    col->colour[i] = -1;
    col->rank[i].hash = col->hash[i];
    col->rank[i].index = i;
  }
  /* priorities are a strict total order: qsort's instability cannot show */
  if (n > 1) qsort(col->rank, (size_t)n, sizeof(jl_pc_item), jl_jp_cmp);
  /* in priority order every higher-priority neighbour is coloured already */
  int colours = 0;
  for (int r = 0; r < n; ++r) {
    int i = col->rank[r].index;
    int c = jl_cm_first_fit(i, p->ka, p->kb, p->body_ptr, p->body_contact, col->hash, col->colour);
    col->colour[i] = c;
    if (c + 1 > colours) colours = c + 1;
  }
  if (colours + 1 > col->colour_cap) {
    int *q = realloc(col->colour_ptr, sizeof(int) * (size_t)(colours + 1));
    if (!q) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d colours", colours);
    col->colour_ptr = q;
    col->colour_cap = colours + 1;
  }
  /* counting sort by colour, stable (the device: a stable radix sort) */
  for (int c = 0; c <= colours; ++c) col->colour_ptr[c] = 0;
  for (int i = 0; i < n; ++i) col->colour_ptr[col->colour[i] + 1]++;
  for (int c = 0; c < colours; ++c) col->colour_ptr[c + 1] += col->colour_ptr[c];
  for (int i = 0; i < n; ++i) col->order[col->colour_ptr[col->colour[i]]++] = i;
  for (int c = colours; c > 0; --c) col->colour_ptr[c] = col->colour_ptr[c - 1];
  col->colour_ptr[0] = 0;
  col->colours = colours;
  return JL_OK;
}
