/* Per-body arithmetic of Moreau's midpoint step (scene_step.h, steps 1, 2
 * and 7): the one source for the stepper (scene_step.c, through
 * integrate.c's loops, which are also the twin of the integration kernels),
 * the contact setup's world inverse inertia, and the CUDA kernels
 * (kernels/scene/scene_integrate.cu), so all give the same bits
 * (-ffp-contract=off, nvcc -fmad=false). Arrays are the structure-of-arrays
 * of jl_bodies. */
#ifndef JL_INTEGRATE_H
#define JL_INTEGRATE_H

#include <stdint.h>
#include <stddef.h>

#include "hd.h"
#include "math3d.h"
#include "rigid_body.h"

#ifdef __cplusplus
extern "C" {
#endif

/* q + h/2 (0, omega) q, renormalised: dq/dt = 1/2 (0, omega_world) q. */
JL_HD static inline void jl_int_quat_advance(double *q, const double *w, double h) {
  jl_quat a = {q[0], q[1], q[2], q[3]};
  jl_quat o = {0.0, w[0], w[1], w[2]};
  jl_quat d = jl_quat_mul(o, a);
  jl_quat r = {a.w + 0.5 * h * d.w, a.x + 0.5 * h * d.x, a.y + 0.5 * h * d.y, a.z + 0.5 * h * d.z};
  r = jl_quat_normalize(r);
  q[0] = r.w;
  q[1] = r.x;
  q[2] = r.y;
  q[3] = r.z;
}

/* Half a step of body k's position and orientation with its velocities. */
JL_HD static inline void jl_int_half_step_body(const uint8_t *is_static, double *pos, double *quat,
                                               const double *vel, const double *omega, int k,
                                               double half_dt) {
  if (is_static[k]) return;
  for (int d = 0; d < 3; ++d) pos[3 * k + d] += half_dt * vel[3 * k + d];
  jl_int_quat_advance(quat + 4 * (size_t)k, omega + 3 * (size_t)k, half_dt);
}

/* The scalar s of an isotropic inverse inertia (I^-1 = s 1: spheres,
 * cubes), or -1 when the diagonal ii is not isotropic. */
JL_HD static inline double jl_int_iso_inv_inertia(const double *ii) {
  return ii[0] == ii[1] && ii[1] == ii[2] ? ii[0] : -1.0;
}

/* I^-1 x for isotropic inertia s: what jl_int_inv_inertia_apply computes
 * then, and what the streamed prox solve rebuilds I^-1 (r x d) with. */
JL_HD static inline void jl_int_iso_apply(double s, const double x[3], double out[3]) {
  out[0] = s * x[0];
  out[1] = s * x[1];
  out[2] = s * x[2];
}

/* World-frame inverse inertia times x (quat q, body-frame diagonal ii). */
JL_HD static inline void jl_int_inv_inertia_apply(const double *q, const double *ii, const double x[3],
                                                  double out[3]) {
  double s = jl_int_iso_inv_inertia(ii);
  if (s >= 0.0) {  /* the rotations would only add rounding */
    jl_int_iso_apply(s, x, out);
    return;
  }
  jl_quat qq = {q[0], q[1], q[2], q[3]};
  jl_vec3 l = jl_quat_rotate(jl_quat_conj(qq), jl_v3(x[0], x[1], x[2]));
  l = jl_v3(l.x * ii[0], l.y * ii[1], l.z * ii[2]);
  jl_vec3 w = jl_quat_rotate(qq, l);
  out[0] = w.x;
  out[1] = w.y;
  out[2] = w.z;
}

/* World-frame inertia times x, from the stored inverse diagonal (0: none). */
JL_HD static inline void jl_int_inertia_apply(const double *q, const double *ii, const double x[3],
                                              double out[3]) {
  jl_quat qq = {q[0], q[1], q[2], q[3]};
  jl_vec3 l = jl_quat_rotate(jl_quat_conj(qq), jl_v3(x[0], x[1], x[2]));
  l = jl_v3(ii[0] > 0 ? l.x / ii[0] : 0.0, ii[1] > 0 ? l.y / ii[1] : 0.0, ii[2] > 0 ? l.z / ii[2] : 0.0);
  jl_vec3 w = jl_quat_rotate(qq, l);
  out[0] = w.x;
  out[1] = w.y;
  out[2] = w.z;
}

/* dv (6) = M^-1 h dt of body k at the mid-point: gravity and the gyroscopic
 * term -omega x (I omega); zero for static bodies. */
JL_HD static inline void jl_int_free_velocity_body(const uint8_t *is_static, const double *quat,
                                                   const double *omega, const double *inv_inertia,
                                                   const double *gravity, double dt, int k,
                                                   double *dv) {
  if (is_static[k]) {
    for (int d = 0; d < 6; ++d) dv[d] = 0.0;
    return;
  }
  for (int d = 0; d < 3; ++d) dv[d] = gravity[d] * dt;
  const double *w = omega + 3 * (size_t)k;
  const double *q = quat + 4 * (size_t)k, *ii = inv_inertia + 3 * (size_t)k;
  double Iw[3], gyro[3];
  jl_int_inertia_apply(q, ii, w, Iw);
  gyro[0] = -(w[1] * Iw[2] - w[2] * Iw[1]) * dt;
  gyro[1] = -(w[2] * Iw[0] - w[0] * Iw[2]) * dt;
  gyro[2] = -(w[0] * Iw[1] - w[1] * Iw[0]) * dt;
  jl_int_inv_inertia_apply(q, ii, gyro, dv + 3);
}

/* Over all bodies (integrate.c): the stepper's and the twin's. */
void jl_integrate_half_step(jl_bodies *b, double half_dt);
/* dv: 6 per body. */
void jl_integrate_free_velocity(const jl_bodies *b, const double gravity[3], double dt, double *dv);

#ifdef __cplusplus
}
#endif

#endif
