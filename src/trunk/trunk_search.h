/* The trunk packing driver: grand-canonical simulated annealing over free
 * block positions and orientations, with contact relaxation (block_relax.h)
 * after every move, many chains at once (CPU threads or one CUDA thread
 * block per chain) sharing the best packing that passes the exact check. */
#ifndef JL_TRUNK_SEARCH_H
#define JL_TRUNK_SEARCH_H

#include <signal.h>
#include <stdint.h>

#include "device.h"
#include "error.h"
#include "migration.h"
#include "trunk.h"
#include "trunk_check.h"
#include "trunk_pockets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Islands (src/islands/islands.h): one search per MPI rank. The search calls the
 * hook after every launch; the hook starts an exchange when one is due or
 * the search would stop, and reports it when it has completed. A search
 * stops only on a completed exchange whose verdict is stop, so every rank
 * takes part in the same exchanges. */
typedef struct jl_trunk_migration {
  jl_migration_step step;          /* reasons JL_TRUNK_STOP_* */
  const jl_block_packing *offer;   /* in: this search's best legal packing */
  const jl_block_packing *incoming; /* out: the other ranks' best packings (owned by the hook) */
  int incoming_count;
} jl_trunk_migration;

typedef int (*jl_trunk_migrate_fn)(void *ctx, jl_trunk_migration *m, jl_error *err);

typedef struct jl_trunk_search_config {
  uint64_t seed;
  double time_s;           /* return after about this many seconds from the call
                              (setup, gap fill and launches included); 0: no limit */
  long rounds;             /* stop after this many launches; 0: no limit */
  int target_count;        /* stop once the best legal count reaches this; 0: none */
  int batch;               /* chains; 0: 16 per GPU multiprocessor, 2 per CPU thread */
  const char *device;      /* "cpu", "cuda" or "auto" (NULL: auto) */
  int threads;             /* CPU threads; 0: all cores */
  jl_block_size block;     /* full edges, mm; zeros: 200 x 100 x 50 */
  double spacing;          /* surface sample spacing, mm; 0: smallest edge / 10 */
  double cell;             /* grid cell, mm; 0: 20 */
  double point_skin;       /* blocks keep this far from the samples, mm;
                              < 0 (the default): 0, touching */
  int moves_per_round;     /* annealing moves per chain per launch; 0: 16, and
                              with a time limit adapted to ~1 s launches */
  double t_start, t_end;   /* temperature schedule (energy units: blocks); 0: 0.6, 0.03 */
  int no_gap_fill;         /* 1: no gap fill (jl_trunk_gap_fill) of the start and of new bests */
  int no_legalize;         /* 1: chains above the best are only checked, not legalized */
  int no_pockets;          /* 1: no turned blocks into free pockets (jl_trunk_pocket_insert) */
  double p_turn, p_settle, p_push; /* the chains' turn, settle and push move shares;
                              < 0 (the default): jl_block_params_default's */
  int device_slot;         /* CUDA device slot mod the devices present (an MPI rank's) */
  jl_trunk_migrate_fn migrate; /* islands: NULL for one search */
  void *migrate_ctx;
  double migrate_s;        /* a migration every this many seconds */
} jl_trunk_search_config;

void jl_trunk_search_config_default(jl_trunk_search_config *c);

/* Reported after every launch. */
typedef struct jl_trunk_progress {
  double time_s;
  int count;               /* most blocks in any chain's current state */
  int best_count;          /* best packing that passed the exact check */
  double temperature;      /* the schedule's base temperature */
  uint64_t moves, relax_steps;
  int chains_best;         /* most blocks any chain has held so far */
  int legalize_tried, legalize_legal; /* chain states above the best legalized / became legal */
} jl_trunk_progress;

typedef void (*jl_trunk_progress_fn)(void *ctx, const jl_trunk_progress *p);

enum { JL_TRUNK_STOP_ROUNDS = 0, JL_TRUNK_STOP_TIME = 1, JL_TRUNK_STOP_TARGET = 2,
       JL_TRUNK_STOP_SIGNAL = 3 };

/* The chains' move kinds (block_relax.h's JL_BMOVE_*), named for the result file. */
#define JL_TRUNK_MOVE_KINDS 7
extern const char *const jl_trunk_move_names[JL_TRUNK_MOVE_KINDS];

typedef struct jl_trunk_run_info {
  int start_count;         /* blocks in the start packing */
  int start_legal;         /* the start passed the exact check */
  int best_count;
  double time_s, time_to_best_s;
  long rounds;
  uint64_t moves, accepted, relax_steps;
  uint64_t kind_moves[JL_TRUNK_MOVE_KINDS], kind_accepted[JL_TRUNK_MOVE_KINDS]; /* by move kind,
                              in jl_trunk_move_names' order */
  int checks, checks_failed; /* exact checks run / failed (candidates the samples passed) */
  int gap_added;           /* blocks the gap fill added (at the start and after new bests) */
  double gap_time_s;       /* the first gap fill's time */
  int chains_best;         /* most blocks any chain has held (current states) */
  int legalize_tried;      /* chain states with more blocks than the best handed to legalization */
  int legalize_legal;      /* of those, the ones that became legal (each a new best) */
  int legalize_dropped;    /* blocks the legalizations dropped, in all */
  double legalize_time_s;
  int pocket_tried;        /* turned blocks tried in free pockets (jl_trunk_pocket_insert) */
  int pocket_added;        /* of those, kept (at the start and after new bests) */
  double pocket_time_s;
  int n_points;            /* surface samples */
  double spacing, cell;
  int batch;
  int stopped_by;          /* JL_TRUNK_STOP_* */
  uint64_t migrations;     /* islands: exchanges with the other ranks */
  int migrate_adopted;     /* of the packings they sent, the ones that became the best */
  char device[8];          /* "cpu" or "cuda" */
  char device_name[128];
} jl_trunk_run_info;

/* The CUDA kernel keeps a candidate in shared memory: 22 doubles a slot
 * (227 KiB of shared memory per thread block on the H100/H200). */
#define JL_CUDA_MAX_SLOTS 1250

/* 1 when the search can take a trunk of up to `blocks` blocks on dev (0:
 * the CUDA kernel keeps fewer; the search would refuse it). */
int jl_trunk_search_fits(const jl_device *dev, long blocks);

/* Runs the search from start (may be NULL or empty: an empty trunk).
 * check decides legality exactly (required); a candidate becomes the new
 * best only when it passes. The start and every new best get the gap fill
 * and the pocket insertion; chain states with more blocks than the best
 * are legalized against the mesh's triangles (trunk_legalize.h) before
 * the check. progress (may be NULL) is called after every
 * launch; *stop (may be NULL), set from a signal handler, ends the run: no
 * move, launch or gap fill step starts after it is set (on the CPU; a CUDA
 * launch runs to its end). best receives the best legal packing (the start when
 * nothing better passed, or an empty packing when the start did not pass
 * either). */
int jl_trunk_search_run(const jl_trunk_search_config *cfg, const jl_mesh *mesh,
                        const jl_block_packing *start, jl_trunk_check_fn check, void *check_ctx,
                        jl_trunk_progress_fn progress, void *progress_ctx,
                        volatile sig_atomic_t *stop, jl_block_packing *best,
                        jl_trunk_run_info *info, jl_error *err);

/* Gap fill: adds axis-aligned blocks (all 6 orientations) where they fit
 * in the trunk's free space, lowest first (z, then y, then x), up to
 * max_add. Free space is a voxel map (voxel mm; <= 0: the smallest edge /
 * 20): voxels whose centre is inside, that no triangle and no block of p
 * meets; a block goes on a voxel corner where all its voxels are free, and
 * stays only when p with it passes check. Blocks are first slid toward
 * walls in a few fixed sequences (docs/design.md, "Gap fill"). With time_s
 * > 0 it returns after about that many seconds, and at once when *stop
 * (may be NULL) is set, keeping the blocks added so far (each passed the
 * check). *added gets the number added. */
int jl_trunk_gap_fill(const jl_mesh *mesh, jl_block_size size, double voxel, jl_block_packing *p,
                      int max_add, double time_s, const volatile sig_atomic_t *stop,
                      jl_trunk_check_fn check, void *check_ctx, int *added, jl_error *err);

/* Pocket fill (trunk_pockets.h) of p (legal) in the trunk g: the gap
 * fill's voxel map of the free space with p in place, voxels of `voxel` mm
 * (<= 0: the smallest edge / JL_POCKET_VOXELS_PER_EDGE), then turned blocks
 * into its largest pockets, each kept only when p with it passes check.
 * With time_s > 0 it returns after about that many seconds, and at once
 * when *stop (may be NULL) is set, keeping what it added. */
int jl_trunk_pocket_insert(const jl_trunk_geom *g, double voxel, jl_block_packing *p, int max_add,
                           double time_s, const volatile sig_atomic_t *stop,
                           jl_trunk_check_fn check, void *check_ctx, jl_pocket_info *info,
                           jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
