/* Slab fill: the trunk cut across one horizontal axis a into slabs, at
 * cut positions chosen by dynamic programming, each slab filled with its
 * own layered fill (the baseline's layers: one upright edge, heights on a
 * fine grid, stacked by dynamic programming; in a slab each layer is a
 * sequence of rows along a, of either depth or an empty step, chosen by
 * dynamic programming, each row holding blocks placed greedily along the
 * other axis b). With zones, the trunk is first
 * cut across b into zones (cuts on a grid of the shortest block edge, by
 * dynamic programming too), each zone slab-filled on its own: wheel arches,
 * a sloped seat back and a flat middle then get different layer plans.
 * Every placed block passes the box/triangle test and lies inside, and the
 * packing passes the exact check before it is returned. Deterministic: the
 * result does not depend on the threads. */
#ifndef JL_TRUNK_SLABS_H
#define JL_TRUNK_SLABS_H

#include <signal.h>

#include "trunk_check.h"

typedef struct jl_slab_info {
  int count;
  int axis;                /* the slab cut axis: 0 x, 1 y (zones cut across the other) */
  int zones;               /* zones holding blocks */
  int slabs;               /* slabs holding blocks, over all zones */
  double step;             /* mm between the positions a cut may take */
  long long boxes_tested;
  double time_s;
  int complete;            /* 0: a deadline or the stop flag cut the work short */
} jl_slab_info;

/* Fills out (initialised by the caller) with the best slab fill cutting
 * across axis (0 or 1), in zones across the other axis when zones != 0,
 * slab cuts on a grid of step mm from the bounding box corner (<= 0: the
 * shortest block edge / 4), on threads pthreads. Once jl_time_now()
 * reaches deadline (> 0) or *stop (may be NULL) is set it stops evaluating
 * and places the best plan of the zones evaluated (info->complete = 0);
 * an empty packing when the whole width was not evaluated yet. A trunk too
 * large for its cache is JL_ERR_INPUT. */
int jl_trunk_slab_fill(const jl_trunk_geom *g, int axis, int zones, double step, int threads,
                       double deadline, const volatile sig_atomic_t *stop, jl_block_packing *out,
                       jl_slab_info *info, jl_error *err);

#endif
