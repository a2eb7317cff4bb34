/* The baseline packing: axis-aligned grid fill, layer by layer. For each of
 * the block's three edges standing vertical and each of a set of vertical
 * offsets, layers are stacked from the floor; every layer takes the better
 * of its two horizontal orientations and the best of a grid of horizontal
 * offsets. Each placed block passes the box/triangle test and lies inside. */
#ifndef JL_TRUNK_BASELINE_H
#define JL_TRUNK_BASELINE_H

#include "trunk_check.h"

#define JL_BASELINE_OFFSETS 8  /* offsets per axis: k / 8 of the block edge */

typedef struct jl_baseline_info {
  int count;
  int vertical;            /* the block edge standing vertical: 0 x, 1 y, 2 z */
  double z_offset;         /* mm above the bounding box floor */
  int layers;              /* layers holding at least one block */
  long long boxes_tested;  /* candidate positions tested, over all threads */
  double time_s;
} jl_baseline_info;

/* Fills out (initialised by the caller or empty) with the best grid fill,
 * using threads pthreads over (vertical edge, offset) jobs; the result does
 * not depend on the thread count. offsets <= 0 means JL_BASELINE_OFFSETS. */
int jl_trunk_baseline(const jl_trunk_geom *g, int threads, int offsets, jl_block_packing *out,
                      jl_baseline_info *info, jl_error *err);

/* Unit quaternion (w, x, y, z) of the rotation whose columns are the given
 * body axes in world coordinates (a proper rotation matrix). */
void jl_quat_from_axes(const double col[3][3], double q[4]);

#endif
