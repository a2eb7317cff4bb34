/* The stages of a Moreau time step, as both paths time them (the CPU
 * stepper, scene_step.h, and the device step, scene_gpu.h) and as
 * `jostle bench scene` prints them. */
#ifndef JL_STEP_STAGES_H
#define JL_STEP_STAGES_H

enum {
  JL_STEP_STAGE_INTEGRATE = 0, /* half step, free velocities */
  JL_STEP_STAGE_COLLIDE,       /* broad + narrow phase, closed contacts, max penetration */
  JL_STEP_STAGE_SETUP,         /* contact frames, W, c, body CSR, warm start (CPU) */
  JL_STEP_STAGE_COLOUR,        /* SOR: contact graph colouring and launch plan */
  JL_STEP_STAGE_SOLVE,         /* prox iterations (device: and the warm start) */
  JL_STEP_STAGE_FINISH,        /* end velocities, half step, warm-start memory */
  JL_STEP_STAGES
};

/* "integrate", "collide", ... ("?" out of range). */
const char *jl_step_stage_name(int stage);

#endif
