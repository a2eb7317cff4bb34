/* Scenes: spheres and boxes with Coulomb friction and impacts, stepped by
 * Moreau's midpoint scheme with a prox solver, on the CPU or a CUDA device.
 * A jl_scene_sim is a handle: create it from a scene file or from bodies,
 * step it, read its state.
 *
 * Bodies are numbered as given: the order of jl_scene_sim_create's array,
 * or of a scene file's "bodies" followed by its generators' bodies in
 * order. Static planes count as bodies and keep their number; every state
 * reader fills jl_scene_sim_body_count entries.
 *
 * A run for files (what `jostle scene` does): jl_scene_sim_open with the
 * overrides, jl_scene_sim_info, jl_scene_sim_start with what to record,
 * jl_scene_sim_advance once per step (its stats), jl_scene_sim_finish (the
 * summary), then the writers: the result JSON, the per-step CSV, the glTF
 * trajectory and one step's FCLib problem. */
#ifndef JOSTLE_SCENE_H
#define JOSTLE_SCENE_H

#include <jostle/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_scene_sim jl_scene_sim;

/* The most steps a run may ask for. */
#define JL_SCENE_MAX_STEPS 1000000000L

/* How a scene runs. The fields after stop override the scene's settings;
 * zeros and NULLs keep them. */
typedef struct jl_scene_options {
  const char *device;      /* "auto" (default: CUDA when present), "cpu" or "cuda" */
  int threads;             /* host threads (0: all the process may use) */
  volatile sig_atomic_t *stop; /* set it (from a signal handler) to end the step under way
                            * early and return; or NULL */
  long steps;              /* the steps a run is for, 0 to JL_SCENE_MAX_STEPS (0: the
                            * scene's steps or duration; jl_scene_info.steps) */
  const char *solver;      /* "sor", "jor" or "apgd" (alpha, if the scene gives none,
                            * is the method's default) */
  int iterations;          /* solver iterations per step at most */
  int matrix_free;         /* 1: per-body velocity changes, -1: the assembled Delassus
                            * matrix G, 0: the scene's choice (on a CUDA device the
                            * step is matrix-free whatever this says) */
  const char *body_order;  /* "auto", "spatial" or "given" (default "auto": spatial
                            * from 4096 bodies up) */
  double time_limit;       /* seconds from the open or load: the solve under way then
                            * ends early and no step starts (jl_scene_sim_out_of_time);
                            * 0: none */
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

/* A scene file (docs/formats.md, "scene file"), opened and started with
 * nothing recorded. o may be NULL (defaults). *sim is set on JL_OK, else
 * NULL. */
JL_API int jl_scene_sim_load(const char *path, const jl_scene_options *o, jl_scene_sim **sim,
                             jl_error *err);
/* A scene of n bodies (at least one dynamic) with the given settings (NULL:
 * defaults). Every field is checked first: a message names the field, as
 * "bodies[3].size[0]: must be > 0, got 0". */
JL_API int jl_scene_sim_create(const jl_scene_settings *s, const jl_scene_body *bodies, int n,
                               const jl_scene_options *o, jl_scene_sim **sim, jl_error *err);

/* Advances steps (>= 0) time steps. With the stop flag set, or past the
 * time limit, it returns JL_OK after the step under way (its solve cut
 * short), and after a step that left a body's state not finite (a diverged
 * solve; jl_scene_step_stats.not_finite): see jl_scene_sim_steps_done. */
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

/* --- A run for files --- */

/* A scene file read, the device chosen and the overrides applied, not yet
 * started: jl_scene_sim_info tells what will run; jl_scene_sim_start. */
JL_API int jl_scene_sim_open(const char *path, const jl_scene_options *o, jl_scene_sim **sim,
                             jl_error *err);

/* What a run keeps for its output files. */
typedef struct jl_scene_record {
  int csv;                 /* a CSV row per step, and step 0 (jl_scene_sim_write_csv) */
  int glb;                 /* glTF frames (jl_scene_sim_write_glb) */
  long glb_every;          /* a frame every this many steps and at the last step asked
                            * for (0: about 30 per simulated second) */
  int fclib;               /* keep one step's contact problem (jl_scene_sim_write_fclib) */
  long fclib_step;         /* that step, 1 to jl_scene_info.steps (0: the last) */
} jl_scene_record;

JL_API void jl_scene_record_default(jl_scene_record *r);

/* Starts the run of an opened scene (uploads it to the device); r may be
 * NULL (nothing recorded). Loaded and created scenes are started already. */
JL_API int jl_scene_sim_start(jl_scene_sim *sim, const jl_scene_record *r, jl_error *err);

/* What runs: after open, and after start for matrix_free and ordered. */
typedef struct jl_scene_info {
  const char *name;        /* the scene's name */
  int bodies, dynamic_bodies;
  double dt;
  long steps;              /* the steps asked for (options.steps or the scene's) */
  const char *solver;      /* "sor", "jor" or "apgd" */
  double alpha;
  int matrix_free;         /* 1 yes, 0 assembled G, -1 chosen per step (dense G: yes) */
  const char *device;      /* "CPU, 16 threads", "NVIDIA H100 80GB HBM3" */
  int on_cuda;             /* the run is on a CUDA device */
  int threads;             /* host threads */
  int cpu_fallback;        /* device "auto" found no CUDA device: on the CPU */
  int ordered;             /* started, and the bodies are stepped in a spatial order
                            * (every output keeps the scene's numbering) */
  double body_extent;      /* the largest moving body's size (sphere: diameter, box:
                            * diagonal): a deeper penetration is a diverged solve */
} jl_scene_info;

JL_API void jl_scene_sim_info(const jl_scene_sim *sim, jl_scene_info *out);

/* What one step did. */
typedef struct jl_scene_step_stats {
  long step;               /* steps done after this one */
  double time;             /* simulated time at its end */
  int contacts;            /* closed contacts solved */
  int iterations, converged, restarts;
  double residual;         /* the solve's last largest impulse change */
  double max_penetration;  /* max -gap over the closed contacts at the mid-point */
  double kinetic, potential; /* energies of the dynamic bodies after the step (potential
                            * -m g . x); on a CUDA device only when a CSV is recorded,
                            * else NAN */
  int diverged;            /* the first step whose penetration passed body_extent (or is
                            * not finite): the motion from here is not physical */
  int fclib_ready;         /* this step's contact problem is kept until the next step:
                            * jl_scene_sim_write_fclib */
  double wall_s;           /* seconds since the start (the first step's device queue
                            * drained, later ones not) */
  int not_finite;          /* a dynamic body's state is no longer finite (a diverged
                            * solve blew up): the run ends here, stopped_by "diverged";
                            * checked from the diverged step on, and when a step fails
                            * on such a state */
} jl_scene_step_stats;

/* One step of a started run, which records what was asked for. */
JL_API int jl_scene_sim_advance(jl_scene_sim *sim, jl_scene_step_stats *st, jl_error *err);
/* Whether options.time_limit has passed; once it said so, the run is
 * stopped by time. */
JL_API int jl_scene_sim_out_of_time(jl_scene_sim *sim);

/* A run's totals. */
typedef struct jl_scene_summary {
  long steps;              /* steps done */
  double time;             /* simulated, s */
  double wall_s;           /* the steps, device queue drained */
  double first_s;          /* the first step alone (arena growth, graph instantiation) */
  double contacts_mean, iterations_mean;
  int contacts_max, iterations_max;
  long not_converged;      /* steps with contacts whose solve did not converge */
  long restarts;
  double residual_max;     /* NAN when a step's residual is */
  double penetration_max;
  double displacement_max; /* farthest any dynamic body ended from where it started */
  long diverged_step;      /* the first diverged step, 0: none */
  double energy_initial[2], energy_final[2]; /* kinetic, potential */
  const char *stopped_by;  /* "steps", "time" (time_limit), "signal" (the stop flag) or
                            * "diverged" (a body's state stopped being finite) */
  int fclib_kept;          /* the FCLib step was reached */
  long fclib_step;         /* the step asked for (record.fclib_step or the last) */
} jl_scene_summary;

/* Ends the run: waits for the device, fetches the final state and fills
 * *out (may be NULL). Once; later calls give the same summary. */
JL_API int jl_scene_sim_finish(jl_scene_sim *sim, jl_scene_summary *out, jl_error *err);

/* The writers (docs/formats.md), each file written whole or not at all
 * (a temporary file renamed into place). The result (finishes the run if
 * needed): settings, run, summary and the final state; scene_file is the
 * path the JSON names. */
JL_API int jl_scene_sim_write_result(jl_scene_sim *sim, const char *path, const char *scene_file,
                                     jl_error *err);
/* step,time,kinetic,potential,contacts,iterations,residual,max_penetration:
 * step 0 and every step run (record.csv). */
JL_API int jl_scene_sim_write_csv(const jl_scene_sim *sim, const char *path, jl_error *err);
/* The animated trajectory, glTF binary, one node per body (record.glb). */
JL_API int jl_scene_sim_write_glb(const jl_scene_sim *sim, const char *path, jl_error *err);
/* The kept step's contact problem (G, c, mu), FCLib HDF5, while
 * jl_scene_step_stats.fclib_ready is fresh. */
JL_API int jl_scene_sim_write_fclib(jl_scene_sim *sim, const char *path, jl_error *err);
/* Whether this build can write FCLib files. */
JL_API int jl_scene_fclib_available(void);

/* sim may be NULL. */
JL_API void jl_scene_sim_free(jl_scene_sim *sim);

#ifdef __cplusplus
}
#endif

#endif
