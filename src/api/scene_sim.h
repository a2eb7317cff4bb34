/* The public scene handle (include/jostle/scene.h) inside: a scene, its
 * runner on the chosen device, and what a run keeps for its outputs.
 * scene_api.c makes and reads it, scene_sim_run.c steps it and writes the
 * files. */
#ifndef JL_SCENE_SIM_H
#define JL_SCENE_SIM_H

#include <jostle/scene.h>

#include "device.h"
#include "file_util.h"
#include "scene.h"
#include "scene_runner.h"
#include "trajectory.h"

struct jl_scene_sim {
  jl_scene scene;          /* settings; bodies current after a fetch */
  jl_scene_runner run;
  jl_device dev;
  int have_run;            /* started (the runner to free) */
  int cpu_fallback;        /* "auto" found no CUDA device */
  long steps;              /* asked for */
  double deadline;         /* jl_time_now() of the time limit, 0: none */
  int by_time;             /* jl_scene_sim_out_of_time said so */
  jl_scene_record rec;
  long glb_every, fclib_step;
  jl_buf csv;
  jl_trajectory traj;
  int have_traj;
  const jl_contact_problem *prob; /* the kept step's problem (fclib), while prob_step is current */
  long prob_step;
  double body_extent;
  double *pos0;            /* 3 per body: the start, for the displacement */
  double e0[2];            /* energies at the start */
  double t0;               /* jl_time_now() at the start */
  jl_scene_summary sum;    /* totals so far; complete once finished */
  double contacts_sum, iterations_sum;
  int diverged_said, finished;
  int not_finite;          /* a step left a body's state not finite: the run is over */
};

/* Makes the run (runner, records, start state); scene_sim_run.c. */
int jl_scene_sim_begin(jl_scene_sim *sim, const jl_scene_record *r, jl_error *err);
/* The largest moving body's size: a sphere's diameter, a box's diagonal. */
double jl_scene_body_extent(const jl_scene *s);
/* What jl_scene_sim_begin allocated, freed. */
void jl_scene_sim_end(jl_scene_sim *sim);

#endif
