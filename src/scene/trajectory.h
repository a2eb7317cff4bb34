/* Trajectory of a scene: body poses recorded frame by frame, written as an
 * animated binary glTF (.glb) that this module writes itself: one node per body
 * with a sphere or box mesh (one mesh per distinct shape and size), planes
 * as a large thin two-sided quad, and per dynamic body one animation channel
 * with a translation and a rotation key per frame. */
#ifndef JL_TRAJECTORY_H
#define JL_TRAJECTORY_H

#include <stdint.h>

#include "error.h"
#include "rigid_body.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_trajectory {
  int body_count;
  uint8_t *shape;          /* copied from the bodies at init */
  uint8_t *is_static;
  double *size;            /* 3 per body */
  double *pos0;            /* 3 per body: pose at init (static bodies keep it) */
  double *quat0;           /* 4 per body */
  int dynamic_count;
  int *dynamic;            /* indices of the dynamic bodies: the animated ones */
  int frame_count, frame_cap;
  double *time;            /* per frame, seconds */
  float *pos;              /* 3 per dynamic body per frame, frame-major */
  float *quat;             /* 4 per dynamic body per frame (w, x, y, z) */
  double plane_size;       /* edge of the quads drawn for planes (0: from the scene) */
} jl_trajectory;

int jl_trajectory_init(jl_trajectory *t, const jl_bodies *bodies, jl_error *err);
/* Appends the current poses of the dynamic bodies at time (seconds,
 * increasing). */
int jl_trajectory_add_frame(jl_trajectory *t, const jl_bodies *bodies, double time, jl_error *err);
/* Writes the .glb atomically (temp file + rename). */
int jl_trajectory_write_glb(const jl_trajectory *t, const char *path, jl_error *err);
void jl_trajectory_free(jl_trajectory *t);

#ifdef __cplusplus
}
#endif

#endif
