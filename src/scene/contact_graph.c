/* Greedy edge colouring of the contact graph (dynamic bodies only). */
#include "contact_graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colour_math.h"

void jl_colouring_free(jl_colouring *col) {
  if (!col) return;
  free(col->group_ptr);
  free(col->order);
  free(col->colour);
  memset(col, 0, sizeof *col);
}

int jl_contact_colour(const jl_contact_problem *p, int min_size, jl_colouring *col,
                      jl_error *err) {
  int n = p->n, nb = p->nbodies;
  if (n > col->cap) {
    int cap = n + n / 2 + 16;
    int *o = realloc(col->order, sizeof(int) * (size_t)cap);
    if (o) col->order = o;
    int *c = realloc(col->colour, sizeof(int) * (size_t)cap);
    if (c) col->colour = c;
    if (!o || !c) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring");
    col->cap = cap;
  }
  /* a contact meets at most deg(a) + deg(b) - 2 others: that bounds the colours */
  int maxdeg = 1;
  for (int k = 0; k < nb; ++k) {
    int d = p->body_ptr[k + 1] - p->body_ptr[k];
    if (d > maxdeg) maxdeg = d;
  }
  int words = (2 * maxdeg + 63) / 64;
  uint64_t *mask = calloc((size_t)nb * (size_t)words, sizeof(uint64_t));
  if (!mask && nb > 0) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring");
  int colours = 0;
  for (int i = 0; i < n; ++i) {
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
    col->colour[i] = c;
    if (ma) ma[c / 64] |= 1ull << (c % 64);
    if (mb) mb[c / 64] |= 1ull << (c % 64);
    if (c + 1 > colours) colours = c + 1;
  }
  free(mask);
  col->colours = colours;
  /* size of each colour, then the big ones in colour order, the small merged last */
  int *size = calloc((size_t)colours + 1, sizeof(int));
  int *start = calloc((size_t)colours + 1, sizeof(int));
  if (!size || !start) {
    free(size);
    free(start);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring");
  }
  for (int i = 0; i < n; ++i) size[col->colour[i]]++;
  int groups = 0, merged_count = 0, pos = 0;
  for (int c = 0; c < colours; ++c)
    if (size[c] >= min_size) groups++;
    else merged_count += size[c];
  int total_groups = groups + (merged_count > 0);
  if (total_groups + 1 > col->group_cap) {
    int *g = realloc(col->group_ptr, sizeof(int) * (size_t)(total_groups + 1));
    if (!g) {
      free(size);
      free(start);
      return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the colouring");
    }
    col->group_ptr = g;
    col->group_cap = total_groups + 1;
  }
  int gi = 0;
  for (int c = 0; c < colours; ++c)
    if (size[c] >= min_size) {
      col->group_ptr[gi++] = pos;
      start[c] = pos;
      pos += size[c];
    }
  int merged_start = pos;
  if (merged_count > 0) col->group_ptr[gi++] = pos;
  col->group_ptr[gi] = n;
  for (int i = 0; i < n; ++i) {
    int c = col->colour[i];
    if (size[c] >= min_size) col->order[start[c]++] = i;
    else col->order[merged_start++] = i;
  }
  col->groups = total_groups;
  col->merged = merged_count > 0;
  free(size);
  free(start);
  return JL_OK;
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
