/* Scenes: spheres and boxes with Coulomb friction and impacts, stepped by
 * Moreau's midpoint scheme with a prox solver, on the CPU or a CUDA device.
 * A jl_scene_sim is a handle: create it from a scene file or from bodies,
 * step it, read its state. */
#ifndef JOSTLE_SCENE_H
#define JOSTLE_SCENE_H

#include <jostle/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_scene_sim jl_scene_sim;

typedef struct jl_scene_options {
  const char *device;      /* "auto" (default), "cpu" or "cuda" */
  int threads;             /* host threads (0: all the process may use) */
} jl_scene_options;

typedef enum jl_scene_shape {
  JL_SCENE_SPHERE = 0,
  JL_SCENE_BOX = 1,
  JL_SCENE_PLANE = 2       /* static: through position, normal = orientation's z axis */
} jl_scene_shape;

/* One body for jl_scene_sim_create. */
typedef struct jl_scene_body {
  jl_scene_shape shape;
  double size[3];          /* sphere: radius in size[0]; box: half-extents */
  double position[3];
  double orientation[4];   /* unit quaternion (w, x, y, z); zeros: identity */
  double velocity[3];
  double angular_velocity[3];
  double density;          /* kg / m^3; 0: static (fixed) body */
} jl_scene_body;

/* What is shared by all bodies of a created scene (one material). */
typedef struct jl_scene_settings {
  double gravity[3];       /* default (0, 0, -9.81) */
  double dt;               /* time step, s (default 0.002) */
  double friction;         /* Coulomb coefficient (default 0.5) */
  double restitution;      /* normal, 0..1 (default 0) */
  const char *solver;      /* "sor" (default), "jor" or "apgd" */
  int iterations;          /* solver iterations per step at most (0: the solver's default) */
} jl_scene_settings;

JL_API void jl_scene_options_default(jl_scene_options *o);
JL_API void jl_scene_settings_default(jl_scene_settings *s);

/* A scene file (docs/formats.md, "scene file"). */
JL_API int jl_scene_sim_load(const char *path, const jl_scene_options *o, jl_scene_sim **sim,
                             jl_error *err);
/* A scene of n bodies with the given settings. */
JL_API int jl_scene_sim_create(const jl_scene_settings *s, const jl_scene_body *bodies, int n,
                               const jl_scene_options *o, jl_scene_sim **sim, jl_error *err);

/* Advances steps time steps. */
JL_API int jl_scene_sim_step(jl_scene_sim *sim, long steps, jl_error *err);

JL_API int jl_scene_sim_body_count(const jl_scene_sim *sim);
JL_API double jl_scene_sim_time(const jl_scene_sim *sim);
JL_API long jl_scene_sim_steps_done(const jl_scene_sim *sim);
/* The current state, in the bodies' order: 3 doubles per body (positions,
 * velocities), 4 per body (orientations, w x y z). */
JL_API int jl_scene_sim_positions(jl_scene_sim *sim, double *out, jl_error *err);
JL_API int jl_scene_sim_orientations(jl_scene_sim *sim, double *out, jl_error *err);
JL_API int jl_scene_sim_velocities(jl_scene_sim *sim, double *out, jl_error *err);
/* The device it runs on: "CPU, 16 threads", "NVIDIA H100 80GB HBM3". */
JL_API const char *jl_scene_sim_device_name(const jl_scene_sim *sim);

JL_API void jl_scene_sim_free(jl_scene_sim *sim);

#ifdef __cplusplus
}
#endif

#endif
