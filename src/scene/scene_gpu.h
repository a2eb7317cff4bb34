/* The scene time step's stages on a CUDA device (issue 5): bodies as
 * structure-of-arrays in a device arena that is preallocated, reused across
 * steps and grown when a step needs more (an out-of-memory error says how
 * many bytes were needed). Each stage has a CPU twin with the same
 * arithmetic (integrate.h, broad_math.h + grid_pairs.h + narrow_phase.h,
 * setup_math.h, prox_math.h, step_math.h), and the results equal the CPU
 * path's bit for bit:
 *   integration      == jl_integrate_half_step / jl_integrate_free_velocity
 *   broad phase      == jl_broad_phase_run's pairs (same set, same (a, b) order)
 *   narrow phase     == jl_collide's contacts (same order, same bits)
 *   contact setup    == jl_setup_twin (frames, W, c, body CSR, G in block CSR)
 *   JOR prox         == jl_prox_solve's JOR (matrix-free or on G, no atomics)
 *   colouring        == jl_contact_colour_jp (colour_math.h, Jones-Plassmann)
 *   SOR prox         == jl_step_twin_sor (colour by colour, matrix-free)
 *   whole step       == jl_step_twin_step (JOR: also jl_stepper_step's with
 *                       matrix-free JOR; SOR: close to jl_stepper_step's,
 *                       which colours greedily)
 * Only counts and summaries cross to the host during a step (the broad
 * phase's summaries with its grid and entries, pairs, closed contacts,
 * colour offsets, solver state every check_every iterations, and at the end
 * the max penetration with the narrow phase's fault flag). Built without CUDA,
 * every call returns JL_ERR_DEVICE. */
#ifndef JL_SCENE_GPU_H
#define JL_SCENE_GPU_H

#include <stddef.h>

#include "contact.h"
#include "contact_setup.h"
#include "device.h"
#include "error.h"
#include "prox_solver.h"
#include "rigid_body.h"
#include "scene.h"
#include "setup_math.h"
#include "step_stages.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_scene_gpu jl_scene_gpu;  /* device arena (kernels/scene/scene_arena.cuh) */

/* Summary of one collision pass on the device. */
typedef struct jl_gpu_collide_stats {
  long entries;            /* (cell, body) entries sorted */
  int spans;               /* grid bodies in every cell they span (the others: one cell) */
  int hashed;              /* 1: the cells' table is hashed (a sparse grid) */
  int pairs;               /* candidate pairs */
  int contacts;            /* contacts written: all within the margin (the device
                              step's own collide keeps only the closed ones) */
  int large, planes;       /* bodies kept out of the grid */
  double cell;             /* grid cell edge (0: no grid) */
  int kept;                /* 1: the device step kept its pair list (no broad phase) */
} jl_gpu_collide_stats;

int jl_scene_gpu_create(jl_scene_gpu **out, const jl_device *dev, jl_error *err);
void jl_scene_gpu_destroy(jl_scene_gpu *g);
/* Bytes of device memory the arena holds now. */
size_t jl_scene_gpu_bytes(const jl_scene_gpu *g);
/* Caps the arena at bytes (0: no cap but the device's memory); a stage that
 * would need more fails with JL_ERR_NOMEM saying how many bytes it needed. */
void jl_scene_gpu_set_limit(jl_scene_gpu *g, size_t bytes);

/* The solvers' iterations as CUDA graphs (on: the default) or one launch per
 * kernel (off); the results are the same bits either way. */
void jl_scene_gpu_set_graphs(jl_scene_gpu *g, int on);
/* JOR and APGD solves that fit in one wave of the device run in one
 * cooperative launch (on by default; off: the per-iteration kernels, for
 * the tests that compare the two). The count: solves that ran that way. */
void jl_scene_gpu_set_persistent(jl_scene_gpu *g, int on);
long jl_scene_gpu_persistent_solves(const jl_scene_gpu *g);
/* What a persistent solve keeps in shared memory, by plan: 0 "contacts+du2"
 * (each thread's contact constants and its du lane's first two contacts'
 * rows), 1 "contacts+du1", 2 "du2", 3 "contacts", 4 "du1", 5 "none" (every
 * constant read from the problem's arrays each iteration). mode -1 (the
 * default): the first plan that lets one wave hold the solve; k: plan k
 * only, when it fits (for the tests that compare each with the twin). The
 * same bits either way. The answer: the last persistent solve's plan's name
 * ("" before any). */
#define JL_SCENE_GPU_PERSIST_PLANS 6
void jl_scene_gpu_set_persistent_cache(jl_scene_gpu *g, int mode);
const char *jl_scene_gpu_persistent_cache(const jl_scene_gpu *g);
/* Matrix-free JOR and APGD solves too large for one launch: by the streamed
 * kernels (constants by field, du from the update's terms) or by the two
 * per-iteration kernels. mode -1 (the default): streamed from
 * JL_JOR_STREAMED_MIN contacts up, where it is the faster; 1 always, 0 never
 * (for the tests and benchmarks that compare them). The same bits either way. */
void jl_scene_gpu_set_streamed(jl_scene_gpu *g, int mode);
/* A scene without boxes goes through narrow-phase kernels for round shapes
 * (a third of the registers); on = 0 takes the general ones all the same
 * (for the benchmark that compares them). The same contacts either way. */
void jl_scene_gpu_set_round_narrow(jl_scene_gpu *g, int on);
/* Boxes' narrow phase computes each manifold once: the count pass stages a
 * pair's points in slots of its own and a gather moves them to their places;
 * on = 0 computes them twice, in a count pass and a write pass (what lists
 * too long for the stage do; for the test that compares them). The same
 * contacts either way. */
void jl_scene_gpu_set_staged_narrow(jl_scene_gpu *g, int on);
/* The device step keeps its pair list, built from the boxes widened by
 * share times the grid's cell edge and their way ahead at their speeds,
 * while every box stays inside its widened one (grid_pairs.h; default
 * JL_GP_SKIN); share = 0 builds a list
 * every step, as jl_scene_gpu_collide does (for the benchmark that compares
 * them). The same contacts either way. */
void jl_scene_gpu_set_pair_skin(jl_scene_gpu *g, double share);
/* A step whose solve streams has the setup write the constants by field
 * (jor_soa.cuh); on = 0 leaves the copy to the solve, as other solves do
 * (for the benchmark that compares them). The same bits either way. */
void jl_scene_gpu_set_soa_by_setup(jl_scene_gpu *g, int on);

/* Copies every body array to the device (grows the arena). */
int jl_scene_gpu_set_bodies(jl_scene_gpu *g, const jl_bodies *b, jl_error *err);
/* Copies pos, quat, vel, omega back into b (same count). */
int jl_scene_gpu_get_bodies(jl_scene_gpu *g, jl_bodies *b, jl_error *err);

/* Moreau step 1 / 7: positions and quaternions by half_dt. */
int jl_scene_gpu_half_step(jl_scene_gpu *g, double half_dt, jl_error *err);
/* Moreau step 2: dv_free (6 per body) on the device; copied to dv when not NULL. */
int jl_scene_gpu_free_velocity(jl_scene_gpu *g, const double gravity[3], double dt, double *dv,
                               jl_error *err);

/* Broad and narrow phase (as jl_collide); the pairs and contacts stay on the
 * device until fetched. */
int jl_scene_gpu_collide(jl_scene_gpu *g, double margin, jl_gpu_collide_stats *st, jl_error *err);
/* The last collide's candidate pairs (st->pairs each). */
int jl_scene_gpu_get_pairs(jl_scene_gpu *g, int *pair_a, int *pair_b, jl_error *err);
/* The last collide's contacts into out (grown as needed); after
 * jl_scene_gpu_step, the step's closed contacts in solver order. */
int jl_scene_gpu_get_contacts(jl_scene_gpu *g, jl_contacts *out, jl_error *err);

/* Contact setup of the last collide's contacts (all of them) with the
 * bodies and dv_free in the arena (jl_scene_gpu_free_velocity first); laws
 * from the material tables [m_a * JL_MATERIALS_MAX + m_b] (jl_scene's mu,
 * eps_n, eps_t). build_g: also the Delassus blocks. The problem stays on
 * the device for jl_scene_gpu_jor(g, NULL, ...). */
int jl_scene_gpu_setup(jl_scene_gpu *g, const double *mu_table, const double *eps_n_table,
                       const double *eps_t_table, int build_g, jl_error *err);
/* Copies a problem set up on the host to the device (replaces the device's). */
int jl_scene_gpu_set_problem(jl_scene_gpu *g, const jl_contact_problem *p, jl_error *err);
/* The device's problem into p (grown as needed). */
int jl_scene_gpu_get_problem(jl_scene_gpu *g, jl_contact_problem *p, jl_error *err);

/* JOR prox of problem p (set up on the host, copied over; NULL: the problem
 * already on the device), from lambda's contents; result in lambda.
 * Matrix-free, or on G (block CSR, no per-body sums) when o->matrix_free is
 * 0 and the problem has G. The stop test (prox_solver.h) runs on
 * the device after every iteration; the host reads it every check_every
 * iterations (later launches of a stopped solve do nothing, so the
 * iterations equal the twin's). Uses o->alpha, tol_abs, tol_rel, max_iter. */
int jl_scene_gpu_jor(jl_scene_gpu *g, const jl_contact_problem *p, const jl_prox_opts *o,
                     int check_every, double *lambda, jl_prox_stats *st, jl_error *err);

/* on: synchronise the device at the end of each stage of jl_scene_gpu_step
 * and add its wall time to that stage (step_stages.h; costs a little; resets the sums). */
void jl_scene_gpu_set_timing(jl_scene_gpu *g, int on);
/* Seconds per stage summed since timing was turned on (JL_STEP_STAGES values). */
void jl_scene_gpu_stage_times(const jl_scene_gpu *g, double *seconds);

/* Marks (jostle bench scene --marks): with marks on, jl_scene_gpu_step
 * records a CUDA event on the launching stream after each named group of
 * launches, and the device time from one mark to the next (the kernels, the
 * copies, and the idle gaps while the host waits on a count or launches) is
 * added to the later mark's name, so the marks of a step add up to its time
 * on the device. Turning marks on resets the sums; no device sync is added
 * but one per step at its end. No profiler needed: the device machines have
 * none that works. */
#define JL_SCENE_GPU_MARKS 48
int jl_scene_gpu_set_marks(jl_scene_gpu *g, int on, jl_error *err);
/* The marks' names and milliseconds summed since marks were turned on, in
 * the order first seen; returns how many (at most cap). */
int jl_scene_gpu_marks(const jl_scene_gpu *g, const char **names, double *ms, int cap);

/* Summary of one device step. */
typedef struct jl_gpu_step_stats {
  int contacts;            /* closed contacts solved */
  int iterations, converged, restarts;
  double max_penetration;
  double residual;         /* the solve's last max |lambda change| (as the CPU step's) */
  int colours;             /* SOR: colours of the contact graph (0 with JOR) */
  int groups;              /* SOR: kernel launches per sweep (small colours merged) */
  int pairs_kept;          /* 1: the step kept the last step's pair list */
  int body_lists_kept;     /* 1: ... and its contacts had the last step's bodies in order,
                              so the setup kept its body lists (no sort) */
} jl_gpu_step_stats;

/* One Moreau midpoint step of the bodies in the arena (jl_scene_gpu_set_bodies
 * once, jl_scene_gpu_get_bodies to look), as jl_stepper_step does it,
 * matrix-free, with the scene's solver: JOR, or SOR by colours of the
 * contact graph coloured on the device every step (sor_order is not used:
 * the device always colours). Equal to the CPU twin jl_step_twin_step bit
 * for bit. Warm starts come from the previous device step's impulses, kept
 * on the device. */
int jl_scene_gpu_step(jl_scene_gpu *g, const jl_scene *s, int check_every, jl_gpu_step_stats *st,
                      jl_error *err);

/* The last SOR step's colouring: colour of each of its contacts (solver
 * order, as jl_scene_gpu_get_contacts; room for st->contacts) and the
 * number of colours (0 after a JOR step). */
int jl_scene_gpu_get_colours(jl_scene_gpu *g, int *colour, int *colours, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
