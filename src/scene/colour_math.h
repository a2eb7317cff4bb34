/* Parallel colouring of the contact graph for the device SOR (issue 5),
 * shared by the colouring kernel (kernels/scene/scene_colour.cu) and its CPU twin
 * (contact_graph.c, jl_contact_colour_jp): Jones-Plassmann with first-fit
 * colours. Contacts are the graph's vertices; two contacts are neighbours
 * when they share a dynamic body (static bodies are -1 in ka/kb and left
 * out, seed 002 ERRATA). Each contact's priority is a hash of its contact
 * key, ties broken by the lower index. A contact takes the smallest colour
 * that none of its higher-priority neighbours has, once they all have one.
 * That colour depends only on the graph and the priorities, never on the
 * order the device's threads run in, so the twin (priority order, one pass)
 * and the device (rounds) give the same colours. */
#ifndef JL_COLOUR_MATH_H
#define JL_COLOUR_MATH_H

#include <stddef.h>
#include <stdint.h>

#include "hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Colours with fewer contacts than this run together in one block of the
 * device (one launch for all of them, a block barrier between colours):
 * the seed's merge of small colours, kept correct because every colour of
 * the run still runs alone. It changes launches only, not the arithmetic.
 * The block is as large as the limit. One block is one multiprocessor
 * streaming each contact's data alone. On the H200, a limit of 512 left
 * the 1,000-sphere pile (colours of about 300) at 4.4 ms of solve per step,
 * against 2.5 ms without merging. With 256 (or 128), the merges cost
 * nothing and save a little on the pyramid and the wall. */
#define JL_COLOUR_MERGE_SIZE 256

/* splitmix64 finaliser: a well-mixed priority from the contact key. */
JL_HD static inline uint64_t jl_cm_hash(uint64_t key) {
  uint64_t z = key + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* 1 when contact j comes before contact i (higher priority). */
JL_HD static inline int jl_cm_before(uint64_t hj, int j, uint64_t hi, int i) {
  return hj > hi || (hj == hi && j < i);
}

JL_HD static inline int jl_cm_lowest_zero(uint64_t used) {
#ifdef __CUDA_ARCH__
  return __ffsll((long long)~used) - 1;
#else
  return __builtin_ctzll(~used);
#endif
}

/* For contact i at round r of the device: 1 when every higher-priority
 * neighbour was coloured in an earlier round (round[j] in [0, r)). A
 * neighbour coloured in this same round reads as -1 or r: not ready either
 * way, so concurrent writes do not change the answer. */
JL_HD static inline int jl_cm_ready(int i, int r, const int *ka, const int *kb,
                                    const int *body_ptr, const int *body_contact,
                                    const uint64_t *hash, const int *round) {
  uint64_t hi = hash[i];
  const int ks[2] = {ka[i], kb[i]};
  for (int s = 0; s < 2; ++s) {
    if (ks[s] < 0) continue;
    for (int e = body_ptr[ks[s]]; e < body_ptr[ks[s] + 1]; ++e) {
      int j = body_contact[e];
      if (j == i || !jl_cm_before(hash[j], j, hi, i)) continue;
      int rj = round[j];
      if (rj < 0 || rj >= r) return 0;
    }
  }
  return 1;
}

/* Smallest colour not taken by a higher-priority neighbour of contact i
 * (all of them coloured): 64 colours at a time. */
JL_HD static inline int jl_cm_first_fit(int i, const int *ka, const int *kb, const int *body_ptr,
                                        const int *body_contact, const uint64_t *hash,
                                        const int *colour) {
  uint64_t hi = hash[i];
  const int ks[2] = {ka[i], kb[i]};
  for (int base = 0;; base += 64) {
    uint64_t used = 0;
    for (int s = 0; s < 2; ++s) {
      if (ks[s] < 0) continue;
      for (int e = body_ptr[ks[s]]; e < body_ptr[ks[s] + 1]; ++e) {
        int j = body_contact[e];
        if (j == i || !jl_cm_before(hash[j], j, hi, i)) continue;
        int c = colour[j] - base;
        if (c >= 0 && c < 64) used |= 1ull << c;
      }
    }
    if (~used) return base + jl_cm_lowest_zero(used);
  }
}

/* First index e of the colours sorted ascending with colour_sorted[e] >= c. */
JL_HD static inline int jl_cm_lower_bound(const int *colour_sorted, int n, int c) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (colour_sorted[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Launch plan of one sweep: colours [first[g], first[g + 1]) form group g;
 * a group is one colour of at least JL_COLOUR_MERGE_SIZE contacts, or a run
 * of consecutive smaller colours (merged: one block). Returns the groups;
 * first needs colours + 1 entries, merged colours entries. */
static inline int jl_cm_plan(const int *colour_ptr, int colours, int *first, int *merged) {
  int groups = 0;
  for (int c = 0; c < colours; ++c) {
    int small = colour_ptr[c + 1] - colour_ptr[c] < JL_COLOUR_MERGE_SIZE;
    if (small && groups > 0 && merged[groups - 1]) continue;  /* extends the run */
    first[groups] = c;
    merged[groups] = small;
    groups++;
  }
  first[groups] = colours;
  return groups;
}

#ifdef __cplusplus
}
#endif

#endif
