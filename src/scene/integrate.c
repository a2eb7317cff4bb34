/* Steps 1, 2 and 7 over all bodies: the stepper's and the twin of the
 * integration kernels; the arithmetic is in integrate.h. */
#include "integrate.h"

void jl_integrate_half_step(jl_bodies *b, double half_dt) {
  for (int k = 0; k < b->count; ++k)
    jl_int_half_step_body(b->is_static, b->pos, b->quat, b->vel, b->omega, k, half_dt);
}

void jl_integrate_free_velocity(const jl_bodies *b, const double gravity[3], double dt, double *dv) {
  for (int k = 0; k < b->count; ++k)
    jl_int_free_velocity_body(b->is_static, b->quat, b->omega, b->inv_inertia, gravity, dt, k,
                              dv + 6 * (size_t)k);
}
