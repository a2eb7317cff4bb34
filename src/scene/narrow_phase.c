/* Narrow phase, host side: poses from the structure-of-arrays. The geometry
 * itself lives in narrow_phase.h, shared with the CUDA kernels. */
#include "narrow_phase.h"

jl_shape_pose jl_body_pose(const jl_bodies *bodies, int i) {
  jl_shape_pose p;
  p.shape = bodies->shape[i];
  p.pos = jl_v3(bodies->pos[3 * i], bodies->pos[3 * i + 1], bodies->pos[3 * i + 2]);
  p.quat.w = bodies->quat[4 * i];
  p.quat.x = bodies->quat[4 * i + 1];
  p.quat.y = bodies->quat[4 * i + 2];
  p.quat.z = bodies->quat[4 * i + 3];
  p.size = jl_v3(bodies->size[3 * i], bodies->size[3 * i + 1], bodies->size[3 * i + 2]);
  return p;
}
