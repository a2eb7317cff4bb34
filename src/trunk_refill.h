/* Region refill: a search move that makes room instead of filling it. From
 * a legal packing, a region of the trunk where space is wasted (a column
 * box around the most free space of the free-voxel map, or around a large
 * sloped face) is emptied of every block that meets it and refilled by the
 * fills on the trunk clipped to the box: the layered and slab fills, the
 * tilted fill (bands against the sloped faces inside the region) and the
 * layered and slab fills in a few small turns of the frame. No kept block
 * meets the box and every refilled block lies in it, so the two cannot
 * overlap; the combined packing must still pass the exact check and hold
 * more blocks than before to be kept. Deterministic: regions, fills and
 * their order do not depend on the threads. */
#ifndef JL_TRUNK_REFILL_H
#define JL_TRUNK_REFILL_H

#include <signal.h>

#include "trunk_check.h"
#include "trunk_frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Regions tried at most (column boxes around the sloped faces and over the
 * trunk's floor, the largest free share of their interior first). */
#define JL_REFILL_MAX_REGIONS 48
/* Share of the search's time left that the refill may take in a run (the
 * annealing gets the rest). */
#define JL_REFILL_SHARE 0.5
/* Small turns of the frame a region is also filled in: pitch and roll by
 * this many degrees each way (a layer leaning into a wedge, a floor pitched
 * against the frame). */
#define JL_REFILL_TURN_DEG 5.0

typedef struct jl_refill_info {
  int regions;             /* regions chosen */
  int tried;               /* regions emptied and refilled */
  int kept;                /* refills kept (each gained blocks and passed the exact check) */
  int gained;              /* blocks gained in all */
  int removed;             /* blocks removed by the refills tried, in all */
  int refilled;            /* blocks the refills of those regions held, in all */
  int near;                /* refills level with or one short of what they removed, handed to the
                              gap fill and the pocket insertion */
  int closest;             /* the largest (refilled - removed) of a region tried (gain when > 0) */
  int unclean;             /* regions whose box could not be cut cleanly from the trunk (skipped) */
  int rejected;            /* combined packings that failed the exact check (never kept) */
  double time_s;
  int complete;            /* 0: the deadline or the stop flag ended it before every region was tried */
} jl_refill_info;

/* Refills regions of p (legal on entry; legal and at least as large on
 * return) in the trunk g, working in the frame f (NULL or not turned: the
 * mesh's; else the floor's, where the fills run, the result turned back).
 * Regions are tried, the most promising first, until every one was tried,
 * the trunk holds floor(volume) blocks, jl_time_now() reaches deadline
 * (> 0) or *stop (may be NULL) is set; fills cut short keep what they
 * placed. check (NULL: jl_trunk_check on g) is the gap fill's and the
 * pocket insertion's on refills level with what they removed; the combined
 * packing itself is always checked exactly against g. */
int jl_trunk_refill(const jl_trunk_geom *g, const jl_trunk_frame *f, jl_block_packing *p, int threads,
                    double deadline, const volatile sig_atomic_t *stop, jl_trunk_check_fn check, void *check_ctx,
                    jl_refill_info *info, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
