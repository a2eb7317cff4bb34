/* CPU twin of the device time step (kernels/scene_step.cu + the other
 * scene kernels): Moreau's midpoint step as scene_step.c does it with the
 * matrix-free JOR solver, in the device's order of stages and with the
 * shared arithmetic (integrate.h, setup_math.h, prox_math.h, step_math.h).
 * The test suite holds it equal to jl_stepper_step bit for bit, and the
 * device step equal to it. */
#ifndef JL_STEP_TWIN_H
#define JL_STEP_TWIN_H

#include <stdint.h>

#include "broad_phase.h"
#include "contact.h"
#include "setup_math.h"
#include "error.h"
#include "prox_solver.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_step_twin {
  jl_broad_phase bp;
  jl_contacts contacts;    /* closed contacts of the last step */
  jl_contact_problem prob;
  jl_prox_ws ws;
  double *lambda, *dv;
  int contact_cap, body_cap;
  uint64_t *prev_key;      /* last step's keys, sorted, and world impulses */
  double *prev_imp;
  int prev_n, prev_cap;
} jl_step_twin;

typedef struct jl_step_twin_stats {
  int contacts;            /* closed contacts */
  int iterations;
  int converged;
  int restarts;
  double max_penetration;
} jl_step_twin_stats;

/* The scene's solver must be JOR (matrix_free is taken as 1). */
int jl_step_twin_step(jl_step_twin *t, jl_scene *s, jl_step_twin_stats *st, jl_error *err);
void jl_step_twin_free(jl_step_twin *t);

#ifdef __cplusplus
}
#endif

#endif
