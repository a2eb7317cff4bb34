/* One seam for running a scene on the CPU reference path (jl_stepper, all
 * cores) or on a CUDA device (jl_scene_gpu: the bodies live in the device
 * arena, only per-step summaries cross to the host). The CLI and the tests
 * drive both through it:
 *
 *   jl_scene_runner_init(&r, &scene, &dev)     dev from jl_device_select
 *   jl_scene_runner_step(&r, &stats)           once per step
 *   jl_scene_runner_energy(&r, &ke, &pe)       when a CSV row needs it
 *   jl_scene_runner_fetch(&r)                  scene.bodies up to date (frames, final state)
 *   jl_scene_runner_free(&r)
 *
 * The scene's bodies are the start state until fetched (on the CPU they are
 * current when the run keeps their order). A scene of many bodies is stepped
 * in a spatial order (scene->body_order, body_order.h): the runner steps an
 * ordered copy and maps every result back, so callers see the scene's own
 * body numbering throughout. The order is renewed when the bodies have
 * travelled (below). */
#ifndef JL_SCENE_RUNNER_H
#define JL_SCENE_RUNNER_H

#include <stdint.h>

#include <jostle/scene.h>

#include "device.h"
#include "error.h"
#include "scene.h"
#include "scene_gpu.h"
#include "scene_gpu_stats.h"
#include "scene_step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device's solver state is read every this many iterations. */
#define JL_RUNNER_CHECK_EVERY 8
/* An ordered run checks every this many steps how far its bodies have
 * travelled since the order was set, and renews the order from their
 * current centres when the mean travel exceeds JL_RUNNER_RENEW_TRAVEL mean
 * body sizes: bodies that flow (a hopper, an avalanche) would otherwise
 * scatter neighbours over memory again. A check on the device downloads
 * the bodies (a million: about 100 MB, a few ms every 250 steps). */
#define JL_RUNNER_RENEW_STEPS 250
#define JL_RUNNER_RENEW_TRAVEL 2.0

/* What one step reports, on either path. */
/* A step's figures are the public API's (step, time, contacts, iterations,
 * converged, restarts, residual on either path, max_penetration >= 0); the
 * runner fills those and zeroes the rest, which jl_scene_sim_advance adds. */
typedef jl_scene_step_stats jl_scene_run_stats;

typedef struct jl_scene_runner {
  jl_scene *scene;         /* settings; bodies current after a fetch */
  jl_scene *run;           /* the scene stepped: scene itself, or &ordered */
  jl_scene ordered;        /* when perm: scene's settings, bodies in the spatial order */
  int *perm;               /* ordered body k is scene body perm[k]; NULL: as given */
  double *anchor;          /* ordered run: 3 per body, the centres when the order was set */
  double body_size;        /* mean longest box edge of the moving bodies */
  long renew_steps;        /* steps between two travel checks (0: never renewed) */
  double renew_travel;     /* the mean travel, in body sizes, that renews the order */
  long reorders;           /* orders renewed so far */
  jl_device dev;
  int on_gpu;
  long step;
  double time;
  int fresh;               /* scene->bodies hold the current state */
  jl_stepper cpu;          /* the CPU path */
  jl_scene_gpu *gpu;       /* the device path */
  jl_gpu_stats_ws ws;
  int check_every;
  double ke, pe;           /* energies of the current state, when have_energy */
  int have_energy;
  jl_scene aux_scene;      /* device path: a host copy stepped once to assemble G (export) */
  jl_stepper aux;
  int have_aux;
} jl_scene_runner;

/* Starts a run of scene s (kept, not copied) on dev (CPU: dev->threads).
 * On the device the bodies are uploaded once here, and s->solver.matrix_free
 * is set: the device step is matrix-free. */
int jl_scene_runner_init(jl_scene_runner *r, jl_scene *s, const jl_device *dev, jl_error *err);
int jl_scene_runner_step(jl_scene_runner *r, jl_scene_run_stats *st, jl_error *err);
/* One step that also gives the step's contact problem with G assembled
 * (FCLib export), valid until the next call, in the scene's body numbering.
 * On the device, or when the run is ordered, the problem is built on the
 * host from the state at the start of the step (a copy of the scene stepped
 * once by jl_stepper): contacts, G, c and mu do not depend on the solver,
 * and the device's setup equals the CPU's bit for bit (scene_gpu.h). */
int jl_scene_runner_step_problem(jl_scene_runner *r, jl_scene_run_stats *st,
                                 const jl_contact_problem **prob, jl_error *err);
/* Kinetic and potential energy of the current state (scene.h's definition):
 * jl_scene_energy on the CPU, the device reduction (scene_gpu_stats.h) on a
 * GPU, without fetching the bodies. The two differ only by the order of
 * additions. */
int jl_scene_runner_energy(jl_scene_runner *r, double *kinetic, double *potential, jl_error *err);
/* Makes r->scene->bodies the current state (a download on the device, once
 * per step at most). */
int jl_scene_runner_fetch(jl_scene_runner *r, jl_error *err);
/* The last step's contact keys (sorted) and impulses in world coordinates
 * (3 per contact), copied into *keys / *imp, grown to *cap as needed (the
 * caller frees them); *n: the count. Keys name the scene's bodies; in an
 * ordered run their feature ids are the ordered run's, and an impulse
 * follows collide.h's convention for the scene's numbering (normal from the
 * lower to the higher dynamic body). */
int jl_scene_runner_impulses(jl_scene_runner *r, uint64_t **keys, double **imp, int *cap, int *n,
                             jl_error *err);
/* Renumbers an ordered run's bodies: ordered body k afterwards is ordered
 * body q[k] before (a permutation of the bodies). The warm-start memory is
 * renumbered with them (an impulse changes sign where two moving bodies
 * swap places in the order), so the next step starts as warm as before.
 * The order's renewal does this; tests give their own q. */
int jl_scene_runner_permute(jl_scene_runner *r, const int *q, jl_error *err);
/* Waits for the device's queued work (nothing on the CPU): for timing. */
int jl_scene_runner_sync(jl_scene_runner *r, jl_error *err);
void jl_scene_runner_free(jl_scene_runner *r);

#ifdef __cplusplus
}
#endif

#endif
