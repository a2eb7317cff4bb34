/* Rigid bodies of a scene as structure-of-arrays, so the CPU stages and the
 * CUDA kernels of the scene pipeline read the same flat arrays.
 *
 * A time step is a pipeline of stages over these arrays (scene_step.c):
 *   integrate to mid-point -> broad phase -> narrow phase (collide.c, -> jl_contacts)
 *   -> contact setup (frames, W, Delassus blocks) -> prox solve (JOR | SOR) -> integrate */
#ifndef JL_RIGID_BODY_H
#define JL_RIGID_BODY_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum jl_shape {
  JL_SHAPE_SPHERE = 0,     /* size[0] = radius */
  JL_SHAPE_BOX = 1,        /* size[0..2] = half extents along the body axes */
  JL_SHAPE_PLANE = 2       /* static half-space: pos is a point on the plane, size[0..2] the
                              unit outward normal; the solid side is -normal */
} jl_shape;

typedef struct jl_bodies {
  int count;
  int capacity;
  /* per body i: scalars at [i], vectors at [3 i], quaternions (w, x, y, z) at [4 i] */
  uint8_t *shape;          /* jl_shape */
  uint8_t *is_static;      /* 1: infinite mass, never moves (planes are always static) */
  int *material;           /* index into the scene's materials */
  double *size;            /* 3 per body, see jl_shape */
  double *pos;             /* 3: centre of mass, world frame */
  double *quat;            /* 4: body frame -> world frame, unit */
  double *vel;             /* 3: linear velocity, world frame */
  double *omega;           /* 3: angular velocity, world frame */
  double *inv_mass;        /* 0 for static bodies */
  double *inv_inertia;     /* 3: diagonal of the body-frame inverse inertia, 0 when static */
} jl_bodies;

/* rigid_body.c */
int jl_bodies_init(jl_bodies *b, int capacity, jl_error *err);
int jl_bodies_reserve(jl_bodies *b, int capacity, jl_error *err);
/* dst (uninitialised) gets its own copy of every body of src. */
int jl_bodies_copy(jl_bodies *dst, const jl_bodies *src, jl_error *err);
void jl_bodies_free(jl_bodies *b);

#ifdef __cplusplus
}
#endif

#endif
