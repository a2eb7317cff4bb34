/* Scenes: spheres and boxes with Coulomb friction and impacts, stepped by
 * Moreau's midpoint scheme with a prox solver, on the CPU or a CUDA device.
 * A jl_scene_sim is a handle: create it from a scene file or from bodies,
 * step it, read its state.
 *
 * Bodies are numbered as given: the order of jl_scene_sim_create's array,
 * or of a scene file's "bodies" followed by its generators' bodies in
 * order. Static planes count as bodies and keep their number; every state
 * reader fills jl_scene_sim_body_count entries. */
#ifndef JOSTLE_SCENE_H
#define JOSTLE_SCENE_H

#include <jostle/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_scene_sim jl_scene_sim;

typedef struct jl_scene_options {
  const char *device;      /* "auto" (default: CUDA when present), "cpu" or "cuda" */
  int threads;             /* host threads (0: all the process may use) */
  volatile sig_atomic_t *stop; /* set it (from a signal handler) to end the step under way
                            * early and return; or NULL */
} jl_scene_options;

typedef enum jl_scene_shape {
  JL_SCENE_SPHERE = 0,
  JL_SCENE_BOX = 1,
  JL_SCENE_PLANE = 2       /* static half-space: position is a point on it, size its
                            * outward normal (any length but zero) */
} jl_scene_shape;

/* One body for jl_scene_sim_create. Lengths, densities, positions and
 * velocities must be finite and at most 1e12 in size; lengths and densities
 * at least 1e-9. */
typedef struct jl_scene_body {
  jl_scene_shape shape;
  double size[3];          /* sphere: radius in size[0]; box: half-extents; plane: normal */
  double position[3];
  double orientation[4];   /* quaternion (w, x, y, z), normalised when added; zeros: identity */
  double velocity[3];      /* world frame; ignored for static bodies */
  double angular_velocity[3];
  double density;          /* kg / m^3; 0: static (fixed) body; planes: 0 */
} jl_scene_body;

/* What is shared by all bodies of a created scene (one material). */
typedef struct jl_scene_settings {
  double gravity[3];       /* default (0, 0, -9.81); components at most 1e6 in size */
  double dt;               /* time step, s, 1e-9 to 10 (default 0.001) */
  double friction;         /* Coulomb coefficient, 0 to 1e6 (default 0.5) */
  double restitution;      /* normal, 0..1 (default 0) */
  const char *solver;      /* "sor" (default), "jor" or "apgd" */
  int iterations;          /* solver iterations per step at most (0: the solver's default) */
} jl_scene_settings;

JL_API void jl_scene_options_default(jl_scene_options *o);
JL_API void jl_scene_settings_default(jl_scene_settings *s);

/* A scene file (docs/formats.md, "scene file"). o may be NULL (defaults).
 * *sim is set on JL_OK, else NULL. */
JL_API int jl_scene_sim_load(const char *path, const jl_scene_options *o, jl_scene_sim **sim,
                             jl_error *err);
/* A scene of n bodies (at least one dynamic) with the given settings (NULL:
 * defaults). Every field is checked first: a message names the field, as
 * "bodies[3].size[0]: must be > 0, got 0". */
JL_API int jl_scene_sim_create(const jl_scene_settings *s, const jl_scene_body *bodies, int n,
                               const jl_scene_options *o, jl_scene_sim **sim, jl_error *err);

/* Advances steps (>= 0) time steps. With the stop flag set it returns
 * JL_OK after the step under way (its solve cut short): see
 * jl_scene_sim_steps_done. */
JL_API int jl_scene_sim_step(jl_scene_sim *sim, long steps, jl_error *err);

JL_API int jl_scene_sim_body_count(const jl_scene_sim *sim);
/* The time step (s), the simulated time (steps done x dt) and the steps done. */
JL_API double jl_scene_sim_dt(const jl_scene_sim *sim);
JL_API double jl_scene_sim_time(const jl_scene_sim *sim);
JL_API long jl_scene_sim_steps_done(const jl_scene_sim *sim);
/* The current state, in the bodies' order, planes included: 3 doubles per
 * body (positions, velocities, angular velocities: world frame), 4 per body
 * (orientations, w x y z). On a CUDA device the bodies are fetched once
 * after each step. */
JL_API int jl_scene_sim_positions(jl_scene_sim *sim, double *out, jl_error *err);
JL_API int jl_scene_sim_orientations(jl_scene_sim *sim, double *out, jl_error *err);
JL_API int jl_scene_sim_velocities(jl_scene_sim *sim, double *out, jl_error *err);
JL_API int jl_scene_sim_angular_velocities(jl_scene_sim *sim, double *out, jl_error *err);
/* The device it runs on: "CPU, 16 threads", "NVIDIA H100 80GB HBM3". */
JL_API const char *jl_scene_sim_device_name(const jl_scene_sim *sim);

/* sim may be NULL. */
JL_API void jl_scene_sim_free(jl_scene_sim *sim);

#ifdef __cplusplus
}
#endif

#endif
