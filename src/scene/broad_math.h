/* Per-body tests of the broad phase, the one source for the CPU broad phase
 * (broad_phase.c), its device twin (grid_twin.c) and the CUDA broad-phase
 * kernels (kernels/scene/scene_collide.cu): inflated AABBs, box overlap, box near
 * a plane. Same bits everywhere, so all find the same candidate pairs. */
#ifndef JL_BROAD_MATH_H
#define JL_BROAD_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "hd.h"
#include "math3d.h"
#include "rigid_body.h"

/* Body i's box (min xyz, max xyz), inflated by margin / 2 on every side. */
JL_HD static inline void jl_bm_aabb(const uint8_t *shape, const double *size, const double *pos,
                                    const double *quat, int i, double margin, double box[6]) {
  const double *p = pos + 3 * (size_t)i, *s = size + 3 * (size_t)i;
  double e[3];
  if (shape[i] == JL_SHAPE_BOX) {
    const double *q = quat + 4 * (size_t)i;
    jl_quat qq = {q[0], q[1], q[2], q[3]};
    jl_vec3 ax[3];
    jl_quat_to_axes(qq, ax);
    e[0] = fabs(ax[0].x) * s[0] + fabs(ax[1].x) * s[1] + fabs(ax[2].x) * s[2];
    e[1] = fabs(ax[0].y) * s[0] + fabs(ax[1].y) * s[1] + fabs(ax[2].y) * s[2];
    e[2] = fabs(ax[0].z) * s[0] + fabs(ax[1].z) * s[1] + fabs(ax[2].z) * s[2];
  } else {
    e[0] = e[1] = e[2] = s[0];
  }
  for (int k = 0; k < 3; ++k) {
    box[k] = p[k] - e[k] - 0.5 * margin;
    box[3 + k] = p[k] + e[k] + 0.5 * margin;
  }
}

/* The longest edge of a box: a dynamic body's share of the mean that sets the
 * grid's cell edge. */
JL_HD static inline double jl_bm_longest_edge(const double box[6]) {
  double e = box[3] - box[0];
  if (box[4] - box[1] > e) e = box[4] - box[1];
  if (box[5] - box[2] > e) e = box[5] - box[2];
  return e;
}

JL_HD static inline int jl_bm_overlap(const double a[6], const double b[6]) {
  return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] &&
         b[2] <= a[5];
}

/* 1 when box reaches within margin / 2 of plane body p (point pos, normal size). */
JL_HD static inline int jl_bm_near_plane(const double *pos, const double *size, int p,
                                         const double box[6], double margin) {
  const double *o = pos + 3 * (size_t)p, *n = size + 3 * (size_t)p;
  double d = 0.0;
  for (int k = 0; k < 3; ++k) {
    double c = 0.5 * (box[k] + box[3 + k]), h = 0.5 * (box[3 + k] - box[k]);
    d += n[k] * (c - o[k]) - fabs(n[k]) * h;
  }
  return d <= 0.5 * margin;
}

#endif
