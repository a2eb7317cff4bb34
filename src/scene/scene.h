/* A rigid-body scene: gravity, time step, solver settings, materials with
 * per-pair friction and restitution, and the bodies (structure-of-arrays,
 * rigid_body.h). Built from a scene file (docs/formats.md) or in code
 * (tests): jl_scene_init, then materials, bodies and generators. Axis
 * convention of the generators: z is up. */
#ifndef JL_SCENE_H
#define JL_SCENE_H

#include <stdint.h>

#include "body_order.h"
#include "error.h"
#include "prox_solver.h"
#include "rigid_body.h"

#ifdef __cplusplus
extern "C" {
#endif

#define JL_SCENE_NAME_MAX 128
#define JL_MATERIALS_MAX 32
#define JL_SCENE_BODIES_MAX 10000000
#define JL_SCENE_STEPS_MAX 1000000000L

/* Defaults of a new scene (jl_scene_init). */
#define JL_SCENE_GRAVITY_Z (-9.81)
#define JL_SCENE_DT_DEFAULT 1e-3
#define JL_SCENE_MU_DEFAULT 0.5

/* Bounds of a scene's numbers, for the file reader and the public API
 * alike. Lengths, masses and densities have lower bounds so that a body's
 * mass (density x volume) and inertia (mass x length^2) stay normal
 * doubles, at least 1e-36 and 1e-54: a sphere of radius 1e-100 and density
 * 1e12 had an inertia that underflowed to 0, and its first contact failed
 * the step ("contact 0 has no dynamic body"). */
#define JL_SCENE_BIG 1e12         /* positions, velocities, lengths, densities, in size */
#define JL_SCENE_LENGTH_MIN 1e-9
#define JL_SCENE_MASS_MIN 1e-30
#define JL_SCENE_DENSITY_MIN 1e-9
#define JL_SCENE_GRAVITY_MAX 1e6
#define JL_SCENE_DT_MIN 1e-9
#define JL_SCENE_DT_MAX 10.0
#define JL_SCENE_MU_MAX 1e6
#define JL_SCENE_ITERATIONS_MAX 100000000L
/* A plane's normal or an orientation of squared length below this is zero. */
#define JL_SCENE_ZERO_NORM2 1e-24

typedef struct jl_material {
  char name[64];
  double density;
} jl_material;

typedef struct jl_scene {
  char name[JL_SCENE_NAME_MAX];
  double gravity[3];
  double dt;
  long steps;
  double contact_tol;      /* a contact is closed when gap <= contact_tol (Moreau's index set) */
  jl_prox_opts solver;
  jl_body_order body_order; /* the order a run steps the bodies in (body_order.h) */
  int n_materials;
  jl_material materials[JL_MATERIALS_MAX];
  /* per material pair [a * JL_MATERIALS_MAX + b], symmetric */
  double mu[JL_MATERIALS_MAX * JL_MATERIALS_MAX];
  double eps_n[JL_MATERIALS_MAX * JL_MATERIALS_MAX];
  double eps_t[JL_MATERIALS_MAX * JL_MATERIALS_MAX];
  jl_bodies bodies;
} jl_scene;

/* One body to add. mass > 0 wins; else density > 0; else the material's density. */
typedef struct jl_body_spec {
  jl_shape shape;
  double size[3];          /* sphere: radius; box: half extents; plane: outward normal */
  int is_static;
  int material;
  double mass, density;
  double pos[3];           /* plane: a point on it */
  double quat[4];          /* w, x, y, z; normalised when added */
  double vel[3], omega[3]; /* world frame */
} jl_body_spec;

/* Defaults: gravity (0, 0, JL_SCENE_GRAVITY_Z), dt JL_SCENE_DT_DEFAULT, 1000 steps,
 * contact_tol 1e-6, SOR (jl_prox_opts_default), one material "default" of density 1000 with
 * mu JL_SCENE_MU_DEFAULT and restitution 0. */
int jl_scene_init(jl_scene *s, jl_error *err);
void jl_scene_free(jl_scene *s);

/* Adds a material; its pairs with every material get mu and restitution
 * (normal eps_n, tangential eps_t). Returns the index (>= 0) or -code. */
int jl_scene_add_material(jl_scene *s, const char *name, double density, jl_error *err);
void jl_scene_set_pair(jl_scene *s, int m1, int m2, double mu, double eps_n, double eps_t);
int jl_scene_find_material(const jl_scene *s, const char *name);

void jl_body_spec_default(jl_body_spec *spec);
/* Returns the new body's index (>= 0), or -code with err set. */
int jl_scene_add_body(jl_scene *s, const jl_body_spec *spec, jl_error *err);
/* Shorthands used by tests and generators. */
int jl_scene_add_plane(jl_scene *s, const double point[3], const double normal[3], int material,
                       jl_error *err);

/* Generators (z up). `proto` gives material, density/mass, static flag and
 * velocities shared by all generated bodies; its shape and size are set here. */
int jl_scene_gen_sphere_grid(jl_scene *s, const jl_body_spec *proto, double radius,
                             const int counts[3], double spacing, const double origin[3],
                             jl_error *err);
/* count spheres of radius in [r_min, r_max] placed without overlap at random in
 * the box [lo, hi] (Philox stream of seed); error when they do not fit. */
int jl_scene_gen_sphere_pile(jl_scene *s, const jl_body_spec *proto, int count, double r_min,
                             double r_max, const double lo[3], const double hi[3], uint64_t seed,
                             jl_error *err);
/* rows x columns x layers of bricks (half extents he), running bond (every
 * other row shifted by half a brick, half bricks not added), along x, depth
 * along y, standing on z = origin[2]. gap: between neighbours in a row and
 * between layers (rows rest on each other). */
int jl_scene_gen_brick_wall(jl_scene *s, const jl_body_spec *proto, int rows, int columns,
                            int layers, const double he[3], double gap, const double origin[3],
                            jl_error *err);
/* 2-D pyramid in the x-z plane: rows boxes at the bottom, one at the top;
 * gap between neighbours in a row (rows rest on each other). */
int jl_scene_gen_box_pyramid(jl_scene *s, const jl_body_spec *proto, int rows, const double he[3],
                             double gap, const double origin[3], jl_error *err);
/* count boxes stacked along z, the lowest resting on z = origin[2]. */
int jl_scene_gen_box_stack(jl_scene *s, const jl_body_spec *proto, int count, const double he[3],
                           double gap, const double origin[3], jl_error *err);
/* count boxes (half extents he) standing in a ring of the given radius
 * around origin, each facing the centre (Strobl's well). */
int jl_scene_gen_box_ring(jl_scene *s, const jl_body_spec *proto, int count, double radius,
                          const double he[3], const double origin[3], jl_error *err);

/* Reads and validates a scene file: errors name the file, the key and the reason. */
int jl_scene_load(jl_scene *s, const char *path, jl_error *err);

/* Kinetic and potential energy (potential -m g . x, zero at the origin) of the dynamic bodies. */
void jl_scene_energy(const jl_scene *s, double *kinetic, double *potential);

#ifdef __cplusplus
}
#endif

#endif
