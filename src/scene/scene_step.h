/* Moreau's midpoint time stepping (seed 000, sec. 4.5, Table 4.2), one call per step:
 *   1. q_M = q_S + dt/2 F(q_S) u_S              (positions and quaternions, renormalised)
 *   2. h at the mid-point (gravity, gyroscopic term); dv_free = M^-1 h dt
 *   3. contacts at q_M (jl_collide), closed set gap <= contact_tol
 *   4. contact setup: frames, W, c, Delassus blocks (contact_setup.h)
 *   5. warm start by contact key, prox solve (prox_solver.h)
 *   6. u_E = u_S + dv_free + M^-1 W Lambda
 *   7. q_E = q_M + dt/2 F(q_M) u_E               (renormalised)
 * The stepper owns every buffer and reuses it across steps. */
#ifndef JL_SCENE_STEP_H
#define JL_SCENE_STEP_H

#include <stdint.h>

#include "broad_phase.h"
#include "contact.h"
#include "contact_setup.h"
#include "error.h"
#include "prox_solver.h"
#include "scene.h"
#include "step_stages.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_step_stats {
  long step;               /* steps done after this one */
  double time;             /* simulated time at the end of the step */
  int contacts;            /* closed contacts solved */
  int iterations;
  double residual;
  int converged;
  int restarts;
  double max_penetration;  /* max -gap over contacts at the mid-point, >= 0 */
  double kinetic, potential;
  int pairs_kept;          /* 1: the step kept the last step's pair list (broad_phase.h) */
} jl_step_stats;

/* A contact's key and its index: the warm-start memory's sort. */
typedef struct jl_key_index {
  uint64_t key;
  int i;
} jl_key_index;

typedef struct jl_stepper {
  jl_scene *scene;
  int threads;
  struct jl_team_pool *pool; /* the step's teams run on these threads (NULL: one thread) */
  long step;
  double time;
  jl_broad_phase bp;
  jl_contacts contacts;    /* closed contacts of the last step, in solver order */
  jl_contact_problem prob; /* the last step's problem (G, c, mu: FCLib export) */
  jl_prox_ws ws;
  double *lambda;          /* 3 per contact: the last step's impulses in the contact frame */
  double *law;             /* 3 per contact: mu, eps_n, eps_t */
  jl_key_index *key_order; /* per contact: the keys sorted, for the warm-start memory */
  int contact_cap;
  double *dv_free;         /* 6 per body */
  int body_cap;
  /* warm start: last step's keys (sorted) and impulses in world coordinates */
  uint64_t *prev_key;
  double *prev_imp;
  int prev_n, prev_cap;
  int keep_g;              /* build G even for the matrix-free solver (export) */
  int matrix_free_used;    /* the last step solved matrix-free */
  int colours;             /* the last step's SOR colours (0: not coloured) */
  /* timing (jostle bench scene): seconds per stage (step_stages.h) summed
   * over the steps since it was turned on, and of the solve's the mean
   * time a thread waited at the team's barriers */
  int timing;
  double stage_s[JL_STEP_STAGES];
  double solve_wait_s;
} jl_stepper;

int jl_stepper_init(jl_stepper *st, jl_scene *scene, int threads, jl_error *err);
int jl_stepper_step(jl_stepper *st, jl_step_stats *stats, jl_error *err);
void jl_stepper_free(jl_stepper *st);

/* Moreau's index set: keeps the closed contacts of c (jl_st_closed) in
 * order, returns their count (also c->count); *max_pen: their deepest
 * penetration (0 when none). */
int jl_step_keep_closed(jl_contacts *c, const uint8_t *is_static, double contact_tol,
                        double *max_pen);

/* The warm-start memory of a step (also the device step's twin): the n
 * contacts' keys sorted, with their impulses (lambda, in the frames) turned
 * to world coordinates (jl_st_world_impulse), into *prev_key / *prev_imp
 * (grown as needed, capacity *prev_cap), *prev_n = n. */
/* key[0..n) (unique) with their indices into out, ascending by key. */
void jl_step_sort_keys(const uint64_t *key, int n, jl_key_index *out);

int jl_step_remember(const uint64_t *key, const double *frame, const double *lambda, int n,
                     uint64_t **prev_key, double **prev_imp, int *prev_cap, int *prev_n,
                     jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
