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

/* Sweeps over the violating blocks before the deepest remaining violator
 * is dropped. A block wedged between a wall and a row of blocks clears a
 * 1 mm overlap in one sweep; a chain of k overlapping blocks pushes the
 * overlap along in about k sweeps. */
#define JL_LEGALIZE_SWEEPS 48
/* mm past contact each push moves a block: the relaxation's skin
 * (block_relax.c), so pushed blocks keep a gap far above the exact check's
 * tolerance and rounding cannot bring them back into contact. */
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
 * apart from it along the axis of least depth, by depth plus
 * JL_LEGALIZE_MARGIN, split between the two unless one of them would move
 * into a wall that just pushed it. After JL_LEGALIZE_SWEEPS sweeps without a
 * legal packing the block with the deepest remaining violation is dropped
 * and the sweeps go on, while more than `above` blocks remain. On return p
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
