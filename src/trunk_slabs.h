/* Slab fill: the trunk cut across one horizontal axis into slabs, at cut
 * positions chosen by dynamic programming, each slab filled with its own
 * layered fill (the baseline's layers: one upright edge, heights on a fine
 * grid, stacked by dynamic programming; in a slab the rows of a layer start
 * flush with the slab's lower cut, the offset along the other axis is the
 * layer's own). Wheel arches, a sloped seat back and a flat middle then get
 * different layer plans. Every placed block passes the box/triangle test
 * and lies inside, and the packing passes the exact check before it is
 * returned. Deterministic: the result does not depend on the threads. */
#ifndef JL_TRUNK_SLABS_H
#define JL_TRUNK_SLABS_H

#include <signal.h>

#include "trunk_check.h"

typedef struct jl_slab_info {
  int count;
  int axis;                /* the cut axis: 0 x, 1 y */
  int slabs;               /* slabs holding blocks */
  double step;             /* mm between the positions a cut may take */
  long long boxes_tested;
  double time_s;
  int complete;            /* 0: a deadline or the stop flag cut the work short */
} jl_slab_info;

/* Fills out (initialised by the caller) with the best slab fill cutting
 * across axis (0 or 1), cuts on a grid of step mm from the bounding box
 * corner (<= 0: the shortest block edge / 4), on threads pthreads. Stops
 * early, with the best of what was tried, once jl_time_now() reaches
 * deadline (> 0) or *stop (may be NULL) is set. */
int jl_trunk_slab_fill(const jl_trunk_geom *g, int axis, double step, int threads, double deadline,
                       const volatile sig_atomic_t *stop, jl_block_packing *out,
                       jl_slab_info *info, jl_error *err);

#endif
