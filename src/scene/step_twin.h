/* CPU twin of the device time step (kernels/scene/scene_step.cu + the other
 * scene kernels): Moreau's midpoint step as scene_step.c does it with the
 * matrix-free JOR solver, in the device's order of stages and with the
 * shared arithmetic (integrate.h, setup_math.h, prox_math.h, step_math.h).
 * The test suite holds it equal to jl_stepper_step bit for bit, and the
 * device step equal to it. With SOR it solves as the device does: the
 * contact graph coloured by jl_contact_colour_jp (colour_math.h), colours
 * swept in order (backwards every other iteration, as prox_solver.c's
 * symmetric sweeps), jl_pm_sor_contact per contact; the CPU reference
 * colours greedily instead, so it agrees with jl_stepper_step to a
 * tolerance, not bit for bit. */
#ifndef JL_STEP_TWIN_H
#define JL_STEP_TWIN_H

#include <stdint.h>

#include "broad_phase.h"
#include "contact.h"
#include "contact_graph.h"
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
  jl_pcolouring col;       /* SOR: the device's colouring */
  double *init;            /* SOR: the warm start, for restarts */
} jl_step_twin;

typedef struct jl_step_twin_stats {
  int contacts;            /* closed contacts */
  int iterations;
  int converged;
  int restarts;
  double max_penetration;
  int colours;             /* SOR: colours of the contact graph (0 with JOR) */
} jl_step_twin_stats;

/* JOR or SOR (matrix_free is taken as 1, SOR is always coloured). */
int jl_step_twin_step(jl_step_twin *t, jl_scene *s, jl_step_twin_stats *st, jl_error *err);
void jl_step_twin_free(jl_step_twin *t);

/* The device SOR on one thread: from lambda (init: scratch of 3 n, du: of
 * 6 per body), colours col of p, opts o's alpha, tolerances and max_iter. */
void jl_step_twin_sor(const jl_contact_problem *p, const jl_pcolouring *col,
                      const jl_prox_opts *o, double *lambda, double *init, double *du,
                      jl_prox_stats *st);

#ifdef __cplusplus
}
#endif

#endif
