/* Tilted fill: blocks laid flat against a large sloped face, the way a
 * person measuring by DIN 70020 lays them against a seat back. The
 * mesh's large planar faces that are not axis-aligned are found by
 * grouping coplanar triangles. For such a face and a thickness t (a small
 * set of multiples of the shortest block edge) the trunk is cut by the
 * plane parallel to the face at depth t into two closed meshes: the band
 * next to the face is turned into the face's frame (z' along the inward
 * normal, x' along the horizontal line in the face, y' up the slope) and
 * filled there by the axis-aligned fills (layered and slab), the
 * remainder is filled axis-aligned in the world frame; the two never
 * overlap as they lie on either side of the cut. The best split wins. Every
 * box test is the fills' own against the cut meshes; the combined packing
 * passes the exact check against the whole trunk before it is kept.
 * Sequential over splits, the fills deterministic: the result does not
 * depend on the threads. */
#ifndef JL_TRUNK_TILT_H
#define JL_TRUNK_TILT_H

#include <signal.h>

#include "trunk_check.h"

/* A face counts when it holds at least this fraction of the surface area. */
#define JL_TILT_MIN_AREA_FRAC 0.05
/* At most this many faces are tried, the largest first. */
#define JL_TILT_MAX_PLANES 4

/* A planar face: coplanar triangles with the same outward normal. */
typedef struct jl_tilt_plane {
  double n[3];             /* outward unit normal */
  double d;                /* n . p on the face, mm */
  double area;             /* mm^2 */
  int triangles;
} jl_tilt_plane;

/* The largest planar faces (area >= min_frac of the surface, normal along
 * no axis), largest first, at most cap of them in planes; *n their number. */
int jl_trunk_tilt_planes(const jl_mesh *m, double min_frac, jl_tilt_plane *planes, int cap, int *n,
                         jl_error *err);
/* The same, giving up (no planes, *cut = 1) once lim (may be NULL) is hit:
 * a mesh of many small faces costs T^2 / 2 comparisons. */
int jl_trunk_tilt_planes_until(const jl_mesh *m, double min_frac, jl_tilt_plane *planes, int cap, int *n,
                               const jl_trunk_limits *lim, int *cut, jl_error *err);

/* The closed part of m on one side of the plane n . p = d: n . p <= d
 * (keep_above = 0) or >= d, capped by the section (ear-clipped) and
 * validated. out is empty (no triangles) when nothing is kept. A cut that
 * is not clean (a vertex within 1e-6 mm of the plane, a section with a
 * hole, a cap that fails validation) is JL_ERR_INPUT. */
int jl_trunk_tilt_clip(const jl_mesh *m, const double n[3], double d, int keep_above, jl_mesh *out,
                       jl_error *err);

/* Rows of the rotation world -> face frame: x' the horizontal line in the
 * face, y' up the face, z' = -n (into the trunk). n must not be vertical. */
void jl_trunk_tilt_frame(const double n[3], double rows[3][3]);

typedef struct jl_tilt_info {
  int count;               /* blocks of the best split (0: none found) */
  int tilted;              /* of these, in the face frame */
  int planes;              /* faces tried */
  int plane;               /* the winning face (index into the planes found), -1 when none */
  double n[3];             /* its outward normal */
  double thickness;        /* mm: the winning band thickness */
  int splits;              /* (face, thickness) pairs filled */
  int skipped;             /* pairs whose volume bound could not beat the count to beat */
  int unclean;             /* pairs whose cut was not clean (skipped) */
  int rejected;            /* combined packings that failed the exact check (never kept) */
  long long boxes_tested;
  double time_s;
  int complete;            /* 0: a deadline or the stop flag cut the work short */
} jl_tilt_info;

/* Fills out (initialised by the caller) with the best tilted split of the
 * trunk. The remainder gets the layered fill and the slab fills across the
 * axes in rem_axes (bit 0: x, bit 1: y); the band all three. Splits whose
 * band count plus the remainder's volume bound cannot exceed
 * max(beat, best so far) are not filled (beat 0: fill every split). Stops at
 * deadline (> 0) or once *stop (may be NULL) is set, keeping the best found.
 * out->count is 0 when the trunk has no such face or no split held a block. */
int jl_trunk_tilt_fill(const jl_trunk_geom *g, int rem_axes, int beat, int threads, double deadline,
                       const volatile sig_atomic_t *stop, jl_block_packing *out, jl_tilt_info *info,
                       jl_error *err);

#endif
