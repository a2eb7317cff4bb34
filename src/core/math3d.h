/* Small vector and quaternion math for the host and CUDA kernels alike
 * (double precision; unit quaternions for orientations, w first). */
#ifndef JL_MATH3D_H
#define JL_MATH3D_H

#include <math.h>

#include "hd.h"

#define JL_PI 3.14159265358979323846

typedef struct jl_vec3 {
  double x, y, z;
} jl_vec3;

typedef struct jl_quat {
  double w, x, y, z;
} jl_quat;

JL_HD static inline jl_vec3 jl_v3(double x, double y, double z) {
  jl_vec3 v = {x, y, z};
  return v;
}
JL_HD static inline jl_vec3 jl_v3_add(jl_vec3 a, jl_vec3 b) { return jl_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
JL_HD static inline jl_vec3 jl_v3_sub(jl_vec3 a, jl_vec3 b) { return jl_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
JL_HD static inline jl_vec3 jl_v3_scale(jl_vec3 a, double s) { return jl_v3(a.x * s, a.y * s, a.z * s); }
JL_HD static inline double jl_v3_dot(jl_vec3 a, jl_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
JL_HD static inline jl_vec3 jl_v3_cross(jl_vec3 a, jl_vec3 b) {
  return jl_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
JL_HD static inline double jl_v3_len(jl_vec3 a) { return sqrt(jl_v3_dot(a, a)); }
/* The zero vector stays zero. */
JL_HD static inline jl_vec3 jl_v3_normalize(jl_vec3 a) {
  double l = jl_v3_len(a);
  return l > 0.0 ? jl_v3_scale(a, 1.0 / l) : a;
}

JL_HD static inline jl_quat jl_quat_identity(void) {
  jl_quat q = {1.0, 0.0, 0.0, 0.0};
  return q;
}
/* Rotation by angle (radians) about a unit axis. */
JL_HD static inline jl_quat jl_quat_axis_angle(jl_vec3 axis, double angle) {
  double s = sin(0.5 * angle);
  jl_quat q = {cos(0.5 * angle), axis.x * s, axis.y * s, axis.z * s};
  return q;
}
/* a then b applied after it: rotate(mul(b, a), v) == rotate(b, rotate(a, v)). */
JL_HD static inline jl_quat jl_quat_mul(jl_quat b, jl_quat a) {
  jl_quat q = {b.w * a.w - b.x * a.x - b.y * a.y - b.z * a.z,
               b.w * a.x + b.x * a.w + b.y * a.z - b.z * a.y,
               b.w * a.y - b.x * a.z + b.y * a.w + b.z * a.x,
               b.w * a.z + b.x * a.y - b.y * a.x + b.z * a.w};
  return q;
}
JL_HD static inline jl_quat jl_quat_conj(jl_quat q) {
  jl_quat c = {q.w, -q.x, -q.y, -q.z};
  return c;
}
/* Integration drifts off unit length: renormalise after each update. */
JL_HD static inline jl_quat jl_quat_normalize(jl_quat q) {
  double l = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  jl_quat n = {q.w / l, q.x / l, q.y / l, q.z / l};
  return n;
}
/* v' = q v q*, as t = 2 (u x v), v' = v + w t + u x t (u the vector part). */
JL_HD static inline jl_vec3 jl_quat_rotate(jl_quat q, jl_vec3 v) {
  jl_vec3 u = jl_v3(q.x, q.y, q.z);
  jl_vec3 t = jl_v3_scale(jl_v3_cross(u, v), 2.0);
  return jl_v3_add(jl_v3_add(v, jl_v3_scale(t, q.w)), jl_v3_cross(u, t));
}
/* Columns of the rotation matrix: the body axes in world coordinates. */
JL_HD static inline void jl_quat_to_axes(jl_quat q, jl_vec3 axes[3]) {
  axes[0] = jl_quat_rotate(q, jl_v3(1.0, 0.0, 0.0));
  axes[1] = jl_quat_rotate(q, jl_v3(0.0, 1.0, 0.0));
  axes[2] = jl_quat_rotate(q, jl_v3(0.0, 0.0, 1.0));
}

#endif
