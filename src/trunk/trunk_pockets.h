/* Oriented insertion: blocks turned into the free pockets that
 * axis-aligned blocks cannot use (wedges along sloped and curved walls).
 * A pocket is a connected region of free voxels at least half a shortest
 * block edge from anything occupied (distance transform of the free-space
 * voxel map); a block goes in at its centre turned to the pocket's
 * principal axes or flat against the nearest wall, and is kept when the
 * legalization (trunk_legalize.h) makes the packing pass the exact check. */
#ifndef JL_TRUNK_POCKETS_H
#define JL_TRUNK_POCKETS_H

#include <stddef.h>
#include <stdint.h>

#include "trunk_check.h"
#include "trunk_voxels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Free space of a trunk with a packing in place: voxel (i, j, k) spans
 * origin + [i, i + 1) v etc.; free[i + dim0 (j + dim1 k)] is 1 when the
 * voxel is inside and meets neither the surface nor a block. */

/* Pockets tried per reading of the map, largest first. */
#define JL_POCKETS_MAX 16

typedef struct jl_pocket_info {
  int pockets;             /* pockets found, over all readings of the map */
  int tried;               /* turned blocks handed to the legalization */
  int added;               /* blocks kept */
  double time_s;
} jl_pocket_info;

/* Adds up to max_add blocks to p (legal on entry) in the pockets of map
 * (p's free space; the kept blocks are marked occupied in it). Each pocket,
 * largest first, takes a block at its centre in a few frames: the block's
 * edges along the pocket's principal axes (PCA of its voxels, longest edge
 * along the largest spread), and flat or on its side against the nearest
 * wall (shortest or middle edge along the wall's normal, pushed against it),
 * each also turned by JL_POCKET_TURN_DEG both ways about the normal. A frame
 * whose box lies mostly in occupied voxels is skipped; the others are
 * legalized with p's blocks free to move, and the first that passes check
 * is kept; then the map is read again. lim (may be NULL) stops it, keeping
 * what was added. */
int jl_trunk_pocket_fill(const jl_trunk_geom *g, jl_voxel_map *map, jl_block_packing *p,
                         int max_add, jl_trunk_check_fn check, void *ctx,
                         const jl_trunk_limits *lim, jl_pocket_info *info, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
