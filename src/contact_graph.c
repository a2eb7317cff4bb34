/* Greedy edge colouring of the contact graph (dynamic bodies only). */
#include "contact_graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
