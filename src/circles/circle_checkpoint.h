/* A circle search's whole state between two rounds, in a file: the
 * candidates (packings, records, walks, random-stream offsets, counters),
 * the best packing, the elite, the host's random stream and the run's
 * clock. A search that goes on from it (jl_circle_search_opts.resume_state)
 * continues as if it had never stopped: with --rounds the same bits as one
 * run without the stop. The layout is in docs/formats.md. */
#ifndef JL_CIRCLE_CHECKPOINT_H
#define JL_CIRCLE_CHECKPOINT_H

#include <stdint.h>

#include "circle_relax.h"
#include "circles.h"
#include "error.h"
#include "rng.h"

/* The first 8 bytes of a checkpoint file. */
#define JL_CHECKPOINT_MAGIC "JOSTLEcK"
#define JL_CHECKPOINT_VERSION 2u
/* Most candidates a checkpoint may hold: the CLI's --batch limit. */
#define JL_CHECKPOINT_MAX_BATCH 1000000

typedef struct jl_circle_checkpoint {
  uint64_t seed;
  int mode;                   /* jl_search_mode */
  long round;                 /* launches done */
  uint64_t restarts, adoptions, crossovers, migrations;
  uint64_t elite_offers, elite_crowded;
  uint64_t step_budget;       /* the next launch's relaxation steps per candidate */
  int first;                  /* CPU engine: the candidate the next launch takes first */
  double elapsed_s;           /* the run's seconds so far */
  double t_best;              /* when the best was found (seconds into the run) */
  double polish_iter_s;       /* the most CPU seconds an SLSQP iteration took */
  double launch_s, polish_s;  /* of elapsed_s, in the launches and in the polish */
  jl_rng host_rng;            /* the host's stream (restarts, adoptions) */
  jl_circle_batch batch;      /* count candidates of n circles, radii ascending */
  double *polished_R;         /* count: R at each candidate's last polish */
  jl_circle_packing best;     /* problem order; R 0: nothing polished yet */
  int elite_count;            /* members, R ascending, problem order */
  jl_circle_packing *elite;
  const char *path;           /* the file it was loaded from (messages) */
  int owned;                  /* 1: loaded, the arrays are this struct's to free */
} jl_circle_checkpoint;

/* Writes ck atomically to path (a temporary file renamed over it). */
int jl_circle_checkpoint_save(const char *path, const jl_circle_checkpoint *ck, jl_error *err);

/* Reads a checkpoint of the problem prob (n and radii must be its own) from
 * path; every field is checked (sizes against the header, finite numbers,
 * flags, the best and elite packings legal with the R they claim) before
 * the search may use it. Errors name the file and what is wrong. */
int jl_circle_checkpoint_load(const char *path, const jl_circle_problem *prob,
                              jl_circle_checkpoint *ck, jl_error *err);

/* Frees what load allocated; ck is zeroed. */
void jl_circle_checkpoint_free(jl_circle_checkpoint *ck);

#endif
