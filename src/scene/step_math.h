/* Per-contact and per-body arithmetic of the stepper's glue (steps 3, 5, 6
 * and the warm-start memory): the one source for the stepper
 * (scene_step.c), its device twin (step_twin.c) and the device step
 * (kernels/scene/scene_step.cu). */
#ifndef JL_STEP_MATH_H
#define JL_STEP_MATH_H

#include <stddef.h>
#include <stdint.h>

#include "hd.h"
#include "rigid_body.h"
#include "setup_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Moreau's index set: closed when gap <= contact_tol, never static-static. */
JL_HD static inline int jl_st_closed(double gap, int a, int b, const uint8_t *is_static,
                                     double contact_tol) {
  return gap <= contact_tol && !(is_static[a] && is_static[b]);
}

/* Last step's impulse for key (world frame, keys sorted) in this step's
 * frame, the normal part clamped at 0; zero when the contact is new. */
JL_HD static inline void jl_st_warm(uint64_t key, const double *frame, const uint64_t *prev_key,
                                    const double *prev_imp, int prev_n, double lam[3]) {
  lam[0] = lam[1] = lam[2] = 0.0;
  int lo = 0, hi = prev_n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    uint64_t k = prev_key[mid];
    if (k == key) {
      const double *P = prev_imp + 3 * (size_t)mid;
      for (int d = 0; d < 3; ++d)
        lam[d] = frame[3 * d] * P[0] + frame[3 * d + 1] * P[1] + frame[3 * d + 2] * P[2];
      if (lam[0] < 0.0) lam[0] = 0.0;
      return;
    }
    if (k < key) lo = mid + 1;
    else hi = mid - 1;
  }
}

/* Impulse of a contact in world coordinates, from its frame. */
JL_HD static inline void jl_st_world_impulse(const double *f, const double *l, double out[3]) {
  for (int d = 0; d < 3; ++d) out[d] = f[d] * l[0] + f[3 + d] * l[1] + f[6 + d] * l[2];
}

/* u_E = u_S + dv_free + sum over body k's contacts (ascending) of M^-1 W Lambda. */
JL_HD static inline void jl_st_end_velocity_body(int k, const uint8_t *is_static,
                                                 const double *dv_free, const int *body_ptr,
                                                 const int *body_contact, const int *ka,
                                                 const double *frame, const double *irx,
                                                 const double *im, const double *lambda,
                                                 double *vel, double *omega) {
  if (is_static[k]) return;
  double acc[6];
  for (int m = 0; m < 6; ++m) acc[m] = dv_free[6 * (size_t)k + m];
  for (int e = body_ptr[k]; e < body_ptr[k + 1]; ++e) {
    int i = body_contact[e];
    jl_sm_mw_add(frame, irx, im, i, ka[i] == k ? 0 : 1, lambda + 3 * (size_t)i, acc);
  }
  for (int d = 0; d < 3; ++d) {
    vel[3 * (size_t)k + d] += acc[d];
    omega[3 * (size_t)k + d] += acc[3 + d];
  }
}

#ifdef __cplusplus
}
#endif

#endif
