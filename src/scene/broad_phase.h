/* Broad phase of collision detection: a uniform grid built by sorting
 * (cell key, body) entries, the same steps a GPU does with a radix sort:
 *   per-body AABB (inflated by margin / 2) -> cells per body (count, scan)
 *   -> (cell key, entry) pairs -> radix sort by key -> runs of equal cells
 *   -> per body u, the partners v > u in its cells, each kept only in the
 *      cell holding the low corner of the two boxes' intersection (so no
 *      duplicates), plus planes and very large bodies (kept out of the grid
 *      and tested against every body), sorted: the pairs come out ordered
 *      by (a, b) without a global sort.
 * The stages run on one thread team (team.h), a barrier between them;
 * the result does not depend on the thread count. */
#ifndef JL_BROAD_PHASE_H
#define JL_BROAD_PHASE_H

#include <stdint.h>

#include "error.h"
#include "rigid_body.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jl_team;            /* team.h: kept out of here, which nvcc's C++ also includes */
struct jl_team_pool;

/* Persistent buffers of the broad and narrow phase, grown as needed and
 * reused every step (no allocation in a steady state). The fields after the
 * first block are working storage; candidate pairs of the last call are
 * readable (pair_a < pair_b as body indices, planes included). */
typedef struct jl_broad_phase {
  /* results of the last call, for diagnostics and tests */
  int pair_count;          /* candidate pairs handed to the narrow phase */
  int *pair_a, *pair_b;    /* candidate pairs, a < b, sorted by (a, b), unique */
  double cell;             /* grid cell edge used (0: no grid this call) */
  long entries;            /* (cell, body) entries sorted */
  int large_count;         /* bodies too large for the grid, tested against all */
  int plane_count;

  /* working storage */
  int body_cap;
  double *aabb;            /* 6 per body: min xyz, max xyz, inflated by margin / 2 */
  uint8_t *kind;           /* per body: grid, large or plane */
  int *cell_range;         /* 6 per body: grid cells of the box, low xyz, high xyz */
  long *entry_start;       /* body_cap + 1: exclusive scan of cells per body */
  long entry_cap;
  uint64_t *keys, *keys_tmp; /* cell key per entry, sorted */
  int *vals, *vals_tmp;    /* entry index, sorted with the keys */
  int *entry_body;         /* body of each entry (in fill order) */
  int *entry_run;          /* run of equal cells holding each entry (fill order) */
  int *sorted_body;        /* body of each sorted entry */
  long *cell_start;        /* start of each run of equal keys, plus the end */
  long pair_cap;
  int *planes;             /* indices of plane bodies */
  int *large;              /* indices of large bodies */
  void *pair_local;        /* per-thread pair buffers (broad_phase.c) */
  void *state;             /* what a call's team shares (broad_phase.c) */
  struct jl_team_pool *pool; /* the owner's: the teams run on it (NULL: threads per call) */
  void *contact_local;     /* per-thread jl_contacts of the narrow phase (collide.c) */
  int contact_local_count;

  /* A kept pair list (grid_pairs.h, JL_GP_SKIN): with keep_skin > 0 a call
   * builds the pairs from every box widened by keep_skin times the cell
   * edge and keep_ahead_s at the body's speed (into aabb), and the next
   * calls keep them while every box of now (box_now) lies inside its
   * widened one and the bodies' shapes and static flags are those of the
   * build; the caller then takes only the pairs jl_gp_live passes on
   * box_now (jl_collide does), the pairs a new list would give. */
  double keep_skin, keep_ahead_s;
  double *box_now;         /* 6 per body: the boxes of now, inflated by margin / 2 */
  uint8_t *kept_shape, *kept_static; /* the bodies' shapes and flags at the build */
  int kept_ok, kept_n, kept_pairs;
  double kept_margin;
  int kept;                /* the last call kept its list */
} jl_broad_phase;

/* The per-body tests (inflated boxes, overlap, box near a plane) are
 * broad_math.h's, shared with the device broad phase. */

int jl_broad_phase_init(jl_broad_phase *bp, jl_error *err);
void jl_broad_phase_free(jl_broad_phase *bp);
/* The bodies were renumbered: the next call builds a new list. */
void jl_broad_phase_drop_kept(jl_broad_phase *bp);

/* Broad phase only: fills bp->pair_a / pair_b with every pair whose AABBs,
 * each inflated by margin / 2, overlap (plane pairs: the body's inflated
 * AABB reaches the plane's solid side), excluding static-static pairs.
 * threads <= 0: all cores. */
int jl_broad_phase_run(const jl_bodies *bodies, double margin, int threads, jl_broad_phase *bp,
                       jl_error *err);

/* The same on a team the caller runs (jl_collide: the broad and the narrow
 * phase in one team): the team's size for `threads` (<= 0: all cores) and
 * this many bodies; the call's checks and buffers for a team of at most
 * `team_size`; then every member calls jl_broad_phase_team, which returns
 * the same code on every member (err: tid 0's). */
int jl_broad_phase_threads(int threads, int bodies);
int jl_broad_phase_prepare(const jl_bodies *bodies, double margin, int team_size,
                           jl_broad_phase *bp, jl_error *err);
int jl_broad_phase_team(jl_broad_phase *bp, int tid, struct jl_team *team, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
