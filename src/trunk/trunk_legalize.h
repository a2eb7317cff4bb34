/* Legalization: turns a packing that is nearly legal (a chain's state with
 * small overlaps, a block just inserted) into one that passes the exact
 * check, by contact relaxation against the exact triangles of each block's
 * neighbourhood and the other blocks (the separating-axis depths and axes
 * of trunk_check.c), dropping blocks that cannot fit. */
#ifndef JL_TRUNK_LEGALIZE_H
#define JL_TRUNK_LEGALIZE_H

#include "trunk_check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every this many sweeps the deepest violation must have fallen to this
 * share of what it was at the last look, or the deepest violator is
 * dropped. A packing with room converges geometrically (a legal fill of
 * the sedan with every block moved by up to 0.5 mm: the deepest overlap
 * halves about every 40 sweeps); a block that cannot fit is pushed back
 * and forth at the same depth. */
#define JL_LEGALIZE_SWEEPS 48
#define JL_LEGALIZE_PROGRESS 0.75
/* A contact deeper than this share of the exact check's tolerance is
 * pushed, to this other share of it. Pushing past contact (by the
 * relaxation's 1e-3 mm skin) left a gap at every block of a row: the
 * sedan's rows of twelve 100 mm blocks across its 1200 mm fill it to the
 * micrometre, and a legal fill whose blocks were moved by up to 0.5 mm
 * could not be made legal again. */
#define JL_LEGALIZE_PUSH_AT 0.5
#define JL_LEGALIZE_LEAVE 0.25
/* The pocket insertion slides a block this far off the wall it lays
 * against, mm (the relaxation's skin). */
#define JL_LEGALIZE_MARGIN 1e-3

typedef struct jl_legalize_info {
  int sweeps;              /* sweeps run, over all rounds */
  int moved;               /* blocks pushed at least once */
  int dropped_outside;     /* blocks dropped because their centre lay outside the trunk */
  int dropped_stuck;       /* blocks dropped as the deepest violator after a round of sweeps */
  int checks;              /* exact checks run */
  int legal;               /* p passed the exact check with more than `above` blocks */
  int cut;                 /* the limits stopped it first */
} jl_legalize_info;

/* Moves the blocks of p (translations only) until the packing passes the
 * exact check, keeping more than `above` blocks. Blocks [0, from) are taken
 * as legal among themselves and start at rest: only blocks from `from` on,
 * and whatever they push, are examined at first (from = 0: all). Blocks
 * whose centre lies outside are dropped first. Each sweep takes the
 * examined blocks in order: a block is pushed out of its deepest triangle
 * (up to a few times: corners), then every block overlapping it is pushed
 * apart from it along the axis of least depth, to a quarter of the check's
 * tolerance, each taking half the push. When the deepest violation stops
 * falling (JL_LEGALIZE_SWEEPS, JL_LEGALIZE_PROGRESS) the block with the
 * deepest violation is dropped and the sweeps go on, while more than
 * `above` blocks remain. On return p
 * holds the result: legal when info->legal, else moved and possibly
 * shortened (the caller keeps its own copy). lim (may be NULL) stops it
 * (info->cut). */
int jl_trunk_legalize(const jl_trunk_geom *g, jl_block_packing *p, int above, int from,
                      const jl_trunk_limits *lim, jl_legalize_info *info, jl_error *err);

/* Turns the blocks of p from index `from` on whose orientation lies
 * within max_deg of an axis-aligned one (each block edge along a trunk
 * axis) onto it, keeping their centres; returns how many it turned. The
 * chains jitter every block they move by a few degrees, and in a row of
 * blocks between walls a block turned by 3 degrees needs 5 mm more room,
 * which no translation finds. */
int jl_trunk_straighten(const jl_block_size *b, jl_block_packing *p, int from, double max_deg);

#ifdef __cplusplus
}
#endif

#endif
