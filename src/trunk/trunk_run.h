/* A trunk run end to end, as `jostle trunk` and jl_trunk_volume do it: the
 * mesh loaded (or given) and repaired, its size checked, the reachable
 * volume, the fills in the mesh's frame and the floor's, a resumed packing,
 * the annealing search, the islands' exchanges and the final exact check.
 * Messages and progress lines go to the caller's log; no file is written. */
#ifndef JL_TRUNK_RUN_H
#define JL_TRUNK_RUN_H

#include <signal.h>
#include <stdint.h>

#include <jostle/trunk.h>

#include "device.h"
#include "mesh.h"
#include "trunk_baseline.h"
#include "trunk_check.h"
#include "trunk_frame.h"
#include "trunk_io.h"
#include "trunk_reach.h"
#include "trunk_search.h"

/* The seams of one search per MPI rank (src/islands fills them:
 * jl_islands_trunk_seams). The run calls the collective ones on every rank
 * in the same order: all_ok once (also when it fails before the search),
 * then until_stop when this rank runs no search, collect and gather. */
typedef struct jl_trunk_islands {
  void *ctx;
  int rank, size;
  int local_rank;          /* picks the CUDA device slot */
  double migrate_s;        /* a migration every this many seconds of the search */
  /* prepares exchanges of packings of at most cap blocks (same on every rank) */
  int (*begin)(void *ctx, int cap, jl_error *err);
  /* collective: 1 when every rank passes ok = 1 */
  int (*all_ok)(void *ctx, int ok);
  jl_trunk_migrate_fn migrate;
  /* this rank's search failed: from now on it offers nothing */
  void (*fail)(void *ctx, const char *msg);
  /* collective: a rank without a search takes part until all stop (want: JL_TRUNK_STOP_* + 1, 0: failed) */
  int (*until_stop)(void *ctx, int want, jl_error *err);
  /* collective: on rank 0 best becomes the largest of the ranks' bests that passes check */
  int (*collect)(void *ctx, jl_block_packing *best, jl_trunk_check_fn check, void *check_ctx,
                 jl_error *err);
  /* collective: every rank's facts to rank 0 (all: size entries there, NULL elsewhere) */
  int (*gather)(void *ctx, const jl_rank_info *mine, jl_rank_info *all, jl_error *err);
} jl_trunk_islands;

typedef struct jl_trunk_run_config {
  const jl_trunk_problem *problem; /* name, mesh path, scale (mm per unit), block */
  const jl_mesh *mesh;     /* NULL: read problem->mesh; else these triangles in the
                              problem's units, welded, validated and repaired as a file
                              is (messages name problem->mesh) */
  const jl_device *dev;    /* selected by the caller */
  const char *device;      /* the search's device: "cpu", "cuda" or "auto" */
  int threads;             /* the search's CPU threads (0: all) */
  double t0;               /* the run's start (jl_time_now()); time_s counts from it */
  double time_s;           /* the whole run, from t0 (> 0) */
  uint64_t seed;           /* the search's (islands: rank 0's; the others mix in their rank) */
  double spacing;          /* surface sample spacing, mm (0: the search's default) */
  double cell;             /* surface grid cell, mm */
  double moves[3];         /* turn, settle and push shares (< 0: the search's default) */
  long max_blocks;         /* refuse a mesh that could hold more */
  const char *units_name, *max_blocks_name, *time_name, *device_name;
                           /* what messages call the unit, the limit, the time and the
                              device (the CLI's --units, --max-blocks, --time, --device) */
  int no_reach;            /* 1: the reachable volume is not measured */
  const char *resume;      /* a trunk result to start from when it beats the fills, or NULL */
  jl_log_fn log;     /* notices, steps and progress lines (NULL: silent) */
  void *log_ctx;
  int progress_live;       /* progress lines for drawing in place (jl_trunk_config's) */
  jl_progress_fn progress; /* at each fill's end and each launch of the search (about a
                              second), on the calling thread; non-zero sets *stop */
  void *progress_ctx;
  volatile sig_atomic_t *stop; /* required: set (a signal handler) to stop any phase */
  const jl_trunk_islands *islands; /* NULL: one search */
} jl_trunk_run_config;

/* Defaults of the CLI: 60 s, seed 1, cell 20 mm, JL_TRUNK_MAX_BLOCKS, moves < 0, its option names. */
void jl_trunk_run_config_default(jl_trunk_run_config *c);

typedef struct jl_trunk_run_result {
  jl_mesh mesh;            /* the validated mesh, mm */
  jl_mesh_report mesh_report;
  long bound;              /* floor(mesh volume / block volume) */
  jl_block_packing best;   /* legal by the exact check (islands: on rank 0, the ranks' best) */
  jl_trunk_report check;   /* best's exact check (rank 0) */
  jl_grid_info grid;       /* the mesh frame's grid baseline (the reported baseline) */
  jl_baseline_info layered; /* the mesh frame's layered fill */
  jl_trunk_fill_report fills;
  int fills_complete;      /* 0: the time or a stop cut a fill short below the bound:
                              best is what they reached, not the trunk's volume */
  jl_reach_info reach;     /* measured 0: not measured */
  jl_trunk_run_info search; /* what the search did (zeros when none ran) */
  int ran_search;
  const char *source;      /* where best comes from: a fill ("layered", "slabs_x", "tilt", ...),
                              "resume", "anneal" or "rank" */
  const char *start;       /* the search's start (the best before it) */
  const char *stopped_by;  /* "time", "target", "signal" or "rounds" */
  double time_s, time_to_best_s; /* from t0 */
  uint64_t seed;           /* this rank's search seed */
  int root;                /* 1: rank 0 (or one search): best and check are the run's */
  int rank_failed;         /* islands: this rank's search failed, the others went on */
  int rank_code;           /* its error code */
  jl_rank_info *ranks;     /* islands, rank 0: every rank's facts (islands->size entries) */
} jl_trunk_run_result;

/* Runs it: out (uninitialised) is filled on JL_OK, and on another status
 * left empty; free it with jl_trunk_run_result_free. err is required. A
 * rank whose search failed returns JL_OK with rank_failed set. */
int jl_trunk_run(const jl_trunk_run_config *cfg, jl_trunk_run_result *out, jl_error *err);
void jl_trunk_run_result_free(jl_trunk_run_result *r);

/* Degrees of an angle in radians for a message, without a "-0.00". */
double jl_trunk_angle_deg(double rad);

#endif
