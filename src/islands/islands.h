/* Islands: one search per MPI rank (`mpirun -np K jostle circles|trunk`),
 * each on its own device and seed, handing each other their best packings
 * every few seconds through one MPI_Allgather of small fixed-size messages.
 * Rank 0 alone prints progress and writes the outputs.
 *
 * Without MPI (meson -Dmpi=disabled) or outside an MPI launcher everything
 * runs as one rank and no MPI call is made. A build without MPI started by
 * an MPI launcher with several ranks refuses to run, so K copies never write
 * the same files. */
#ifndef JL_ISLANDS_H
#define JL_ISLANDS_H

#include <stddef.h>
#include <stdint.h>

#include "circle_search.h"
#include "circles.h"
#include "device.h"
#include "trunk.h"
#include "trunk_run.h"
#include "trunk_search.h"
#include "error.h"

/* Packings each rank offers per migration (its best distinct ones). */
#define JL_ISLANDS_OFFER 3
/* The migration interval when --migrate is not given: a few launches at
 * small n, longer where a packing takes longer to change (seconds). */
#define JL_ISLANDS_MIGRATE_MIN_S 2.0
#define JL_ISLANDS_MIGRATE_MAX_S 30.0
/* Trunks: a migration every this many seconds of the search (a packing of
 * hundreds of blocks changes slowly; a check of an incoming one costs
 * about a launch). */
#define JL_ISLANDS_TRUNK_MIGRATE_S 10.0
/* --rounds runs (reproducible): a migration every this many rounds. */
#define JL_ISLANDS_MIGRATE_ROUNDS 5
#define JL_ISLANDS_MSG 256

typedef struct jl_islands {
  int rank, size;
  int local_rank;          /* rank among those on this node: picks the CUDA device */
  int local_size;          /* ranks on this node: share its CPU threads */
  int mpi;                 /* 1: MPI_Init was called here (finalize calls MPI_Finalize) */
  /* one migration's buffers: every rank's slot, then the packings taken in */
  unsigned char *slots;    /* size + 1 slots: every rank's (received), then this rank's (sent) */
  size_t slot_bytes;
  int in_flight;           /* an exchange was started and has not completed */
  void *request;           /* its MPI_Request */
  jl_circle_packing *incoming;
  int incoming_cap;
  const jl_circle_problem *prob; /* radii for the packings taken in */
  jl_block_packing *blocks_in;   /* trunks: the other ranks' packings (size entries) */
  int cap;                       /* trunks: most blocks a packing may hold (same on all ranks) */
  int failed;              /* this rank's search failed; it only exchanges */
  char failed_msg[JL_ISLANDS_MSG];
} jl_islands;


/* The ranks an MPI launcher (mpirun, srun) started, from its environment
 * variables; 0 when none did. */
int jl_islands_launched(void);

/* Joins the MPI job when started by an MPI launcher (mpirun, srun): sets
 * rank, size and local rank. Otherwise one rank. */
int jl_islands_init(jl_islands *isl, jl_error *err);
void jl_islands_finalize(jl_islands *isl);

/* The seed of rank r: --seed itself on rank 0 (one rank runs as before),
 * a splitmix64 mix of seed and rank elsewhere. */
uint64_t jl_islands_seed(uint64_t seed, int rank);

/* A rank's host threads when --threads is not given: its share of the
 * node's CPUs (online / ranks on the node), never more than its affinity
 * mask allows. *bound (may be NULL) is set when the launcher's binding
 * (Open MPI binds to one core per rank from 2 ranks) leaves it fewer than
 * that share. One rank outside a launcher: 0 (all it may run on). */
int jl_islands_threads(const jl_islands *isl, int *bound);
/* What rank 0 says when bound: its threads, then the node's CPUs. */
#define JL_ISLANDS_BOUND_NOTE                                                            \
  "the MPI launcher bound this rank to %d of the node's %d CPUs, so it runs that many "   \
  "host threads; mpirun --bind-to none or srun --cpus-per-task=N gives every rank its "  \
  "share of the node"

/* The default migration interval for n circles (seconds). */
double jl_islands_migrate_default(int n);

/* Collective: 1 when every rank passes ok = 1. With one rank: ok. */
int jl_islands_all_ok(jl_islands *isl, int ok);

/* Prepares the circle exchange for prob (buffers for every rank's offer). */
int jl_islands_circles_begin(jl_islands *isl, const jl_circle_problem *prob, jl_error *err);

/* The circle search's migrate hook (ctx: jl_islands *). */
int jl_islands_circle_migrate(void *ctx, jl_circle_migration *m, jl_error *err);

/* A rank whose search failed keeps taking part in the migrations, offering
 * nothing, until the others stop. */
int jl_islands_circles_idle(jl_islands *isl, const char *msg, jl_error *err);

/* Collective at the end: every rank offers best (R = 0: none); on rank 0
 * best becomes the smallest legal one. */
int jl_islands_circles_collect(jl_islands *isl, jl_circle_packing *best, jl_error *err);

/* Collective: every rank's facts to rank 0 (all[size] there; may be NULL
 * elsewhere). */
int jl_islands_gather(jl_islands *isl, const jl_rank_info *mine, jl_rank_info *all,
                      jl_error *err);

/* Prepares the trunk exchange: packings of at most cap blocks (the same on
 * every rank: the volume bound of the one mesh). */
int jl_islands_trunk_begin(jl_islands *isl, int cap, jl_error *err);

/* The trunk search's migrate hook (ctx: jl_islands *). */
int jl_islands_trunk_migrate(void *ctx, jl_trunk_migration *m, jl_error *err);

/* A rank that runs no search (failed, or nothing left to search) takes
 * part in the migrations, offering nothing and wanting to stop (want:
 * JL_TRUNK_STOP_* + 1), until every rank stops. */
int jl_islands_trunk_until_stop(jl_islands *isl, int want, jl_error *err);

/* Collective at the end: every rank's best; on rank 0 best becomes the
 * largest that passes check (of equal counts the lowest rank's). */
int jl_islands_trunk_collect(jl_islands *isl, jl_block_packing *best, jl_trunk_check_fn check,
                             void *check_ctx, jl_error *err);

/* The trunk run's seams over these islands (jl_trunk_run's cfg->islands);
 * migrate_s <= 0: JL_ISLANDS_TRUNK_MIGRATE_S. */
void jl_islands_trunk_seams(jl_islands *isl, double migrate_s, jl_trunk_islands *s);

void jl_islands_free(jl_islands *isl);

#endif
