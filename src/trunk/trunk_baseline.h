/* Two axis-aligned fills. The grid fill is the baseline: one
 * orientation and one regular lattice for the whole trunk. The layered fill
 * (jostle's first search stage) is stronger: a layer
 * stands one of the block's three edges upright and lays the block in the
 * better of its two horizontal orientations at the best of a grid of
 * horizontal offsets; layers start on a fine grid of heights and are stacked
 * by dynamic programming, so thicknesses may mix. Every placed block passes
 * the box/triangle test and lies inside, and the packing passes the exact
 * check before it is returned. */
#ifndef JL_TRUNK_BASELINE_H
#define JL_TRUNK_BASELINE_H

#include <signal.h>

#include "trunk_check.h"

#define JL_BASELINE_OFFSETS 8  /* offsets per axis: k / 8 of the block edge; heights step by 1/8 of the shortest edge */

typedef struct jl_baseline_info {
  int count;
  int layers;              /* layers holding blocks */
  int layers_upright[3];   /* of these, how many stand block edge x, y, z upright */
  double z_step;           /* mm between the heights a layer may start at */
  long long boxes_tested;  /* candidate positions tested, over all threads */
  double time_s;
  int complete;            /* 0: stopped by the deadline or the stop flag before every
                              layer and offset was tried (the packing is still legal) */
} jl_baseline_info;

/* Fills out (initialised by the caller) with the best grid fill, using
 * threads pthreads over (height, upright edge) layers; the result does not
 * depend on the thread count. offsets <= 0 means JL_BASELINE_OFFSETS. */
int jl_trunk_baseline(const jl_trunk_geom *g, int threads, int offsets, jl_block_packing *out,
                      jl_baseline_info *info, jl_error *err);
/* The same, stopping early (with the best of what was tried) once
 * jl_time_now() reaches deadline (> 0) or *stop (may be NULL) is set. */
int jl_trunk_baseline_until(const jl_trunk_geom *g, int threads, int offsets, double deadline,
                            const volatile sig_atomic_t *stop, jl_block_packing *out,
                            jl_baseline_info *info, jl_error *err);

typedef struct jl_grid_info {
  int count;
  int edges[3];            /* block edges along world x, y, z of the winning lattice */
  double offset[3];        /* mm from the bounding box corner to the lattice origin */
  long long boxes_tested;  /* lattice cells tested, over all threads */
  double time_s;
  int complete;            /* 0: stopped by the deadline or the stop flag before every
                              orientation and offset was tried (the packing is still legal) */
} jl_grid_info;

/* The grid baseline: for each of the 6 axis-aligned orientations and each
 * lattice offset (k / offsets of the block edge along x, y and z; offsets <=
 * 0 means JL_BASELINE_OFFSETS), the lattice with pitch equal to the block's
 * extents, counting the cells whose block passes the box/triangle test and
 * lies inside. The largest count wins (ties: the first orientation in
 * lexicographic edge order, then the lowest offset); the result does not
 * depend on threads. Stops early (best of what was tried) at deadline (> 0)
 * or once *stop (may be NULL) is set. out is initialised by the caller and
 * passes the exact check. */
int jl_trunk_grid_fill(const jl_trunk_geom *g, int threads, int offsets, double deadline,
                       const volatile sig_atomic_t *stop, jl_block_packing *out, jl_grid_info *info,
                       jl_error *err);

/* Unit quaternion (w, x, y, z) of the rotation whose columns are the given
 * body axes in world coordinates (a proper rotation matrix). */
void jl_quat_from_axes(const double col[3][3], double q[4]);
/* Orientation with block edge e[0] along world x, e[1] along y, e[2] along z. */
void jl_trunk_axis_quat(const int e[3], double q[4]);

#endif
