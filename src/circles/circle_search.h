/* The circle packing driver: a population of candidates doing basin
 * hopping (record-to-record travel) with contact relaxation (on the CPU twin
 * or CUDA), restarts at meta-stable states that adopt one of the elite
 * packings, and NLopt polishing of the best. */
#ifndef JL_CIRCLE_SEARCH_H
#define JL_CIRCLE_SEARCH_H

#include <signal.h>
#include <stdint.h>

#include "circle_relax.h"
#include "circles.h"
#include "device.h"
#include "error.h"
#include "migration.h"

/* The modes are the public API's (jl_circles_mode): population (basin
 * hopping per block, restarts adopt an elite packing), trials (seed 4.2.1:
 * every block tries one move on the one best), instances (seed 4.2.2:
 * independent instances, random restarts). */
typedef jl_circles_mode jl_search_mode;
#define JL_MODE_POPULATION JL_CIRCLES_POPULATION
#define JL_MODE_TRIALS JL_CIRCLES_TRIALS
#define JL_MODE_INSTANCES JL_CIRCLES_INSTANCES

/* One candidate in this many walks at a fixed container (jl_relax_walk_step);
 * the rest run the seed's trials. Every candidate walks by default: at
 * n = 30 that reached 7.7e-6 above the record in 2 of 4 seeds within 175 s,
 * where the trials never came within 3.6e-4 (docs/benchmarks.md). */
#define JL_WALK_DEFAULT 1
/* Share of the walk's jumps that move a circle drawn by its overlap energy
 * (jl_walk_aimed_circle). On one H200 at n = 30, 0.5 brought 6 of 10 seeds
 * within 1e-4 of the record in about 3 minutes, 0 brought 2 of 4 and 1 left
 * seed 1 5.1e-4 above (docs/benchmarks.md). */
#define JL_WALK_AIM_DEFAULT 0.5
/* Neighbours per walk step and the tabu tenure, measured at n = 30. From
 * JL_WALK_K_LARGE_N circles a step relaxes JL_WALK_K_LARGE neighbours: with
 * one move in n(n - 1)/2 swaps and n jumps, 8 samples found worse moves
 * (2 CPU threads, 60 s: n = 64, 100 with seeds 1 and 2, 200 and 150 equal
 * circles each ended lower with 16; docs/benchmarks.md). */
#define JL_WALK_K_DEFAULT 8
#define JL_WALK_K_LARGE 16
#define JL_WALK_K_LARGE_N 64
static inline int jl_walk_k_default(int n) {
  return n >= JL_WALK_K_LARGE_N ? JL_WALK_K_LARGE : JL_WALK_K_DEFAULT;
}
#define JL_WALK_TENURE_DEFAULT 4
/* How deep a walk goes before it begins again: walk steps without a new
 * lowest energy before the walk goes back to the candidate's record, and
 * walk steps without a new record before the candidate restarts. Deep from
 * JL_WALK_DEEP_N circles up to the large walks (JL_WALK_K_LARGE_N); shallow
 * below, where every contest record n = 5..19 is reached within 1.3 s on an
 * H200 and the deep walks were slower on the CPU twin, and above, where
 * they ended higher at n = 200 (2 of 2 runs, CPU twin). On one H200 at
 * n = 30 the deep walks reached the record with each of seeds 1-10 in
 * 21-107 s, where the shallow ones left 4 of 10 seeds at 1.03e-4 after
 * 3 minutes; at n = 32 the record in 99 s against 1.89e-4 after 560 s; at
 * n = 35, seeds 1-3, two within 1e-4 in 3 minutes against none
 * (docs/benchmarks.md). */
#define JL_WALK_DEEP_N 20
#define JL_WALK_RESET_SHALLOW 50
#define JL_WALK_RESET_DEEP 400
#define JL_STUCK_MIN 100
#define JL_STUCK_PER_CIRCLE 10
#define JL_STUCK_DEEP 4000
static inline int jl_walk_deep(int n) { return n >= JL_WALK_DEEP_N && n < JL_WALK_K_LARGE_N; }
static inline int jl_walk_reset_default(int n) {
  return jl_walk_deep(n) ? JL_WALK_RESET_DEEP : JL_WALK_RESET_SHALLOW;
}
static inline int jl_stuck_default(int n) {
  if (jl_walk_deep(n)) return JL_STUCK_DEEP;
  return n * JL_STUCK_PER_CIRCLE > JL_STUCK_MIN ? n * JL_STUCK_PER_CIRCLE : JL_STUCK_MIN;
}
/* The walk's probe below the record (jl_walk_probe): keep. On four H100s at
 * n = 30 over seeds 1-10 it reached the record 4 times and came within 1e-4
 * 6 times, no run past 1.03e-4, against 2, 5 and two runs at 5e-4 to 9e-4
 * without it; the restarting form lost seeds 1 and 2 their early records
 * (docs/benchmarks.md). */
#define JL_WALK_PROBE_DEFAULT JL_PROBE_KEEP

/* The elite restarts adopt from, by the size of the population. A large
 * one (a GPU's thousands of candidates) keeps 8 packings, one per shape
 * family (jl_circle_elite): packings whose radial profiles lie closer than
 * the crowding distance count as one arrangement, so the adopters spread
 * over several arrangements instead of near-copies of one. On four H100s
 * side by side (n = 35, 40, 45, seeds 1 and 2, 100 s, 2112 candidates) that
 * ended below the 4 distinct R in all six runs (mean gap 1.4e-3 against
 * 2.7e-3). A small one (a CPU's 8 candidates a thread) keeps the 4 best
 * distinct R: with 16 candidates (2 threads, n = 19 and 20, seeds 1-3,
 * 30 s) the crowded elite ended worse in 4 of 6 runs and equal in 2 (and
 * did no better at n = 21-30 on one thread; docs/benchmarks.md). Between
 * the two sizes nothing was measured; the threshold halves the distance. */
#define JL_ELITE_DEFAULT 8
#define JL_CROWDING_DEFAULT 0.02
#define JL_ELITE_SMALL_DEFAULT 4
#define JL_CROWD_MIN_BATCH 256

/* Share of restarts that start from a cut-and-splice child of two elite
 * packings (--cross): none. On four H100s (n = 30-50, 135-170 s) 0.25 ended
 * lower in 5 of 7 runs at n = 35-45 and reached the default's 4 records and
 * 6 of 10 seeds within 1e-4 at n = 30, with two seeds further off; 0.5
 * ended higher in 3 of 4 (docs/benchmarks.md). */
#define JL_CROSS_DEFAULT 0.0

/* The most circles a search takes: a relaxation step costs n^2 pair
 * tests, some 0.3 s of one CPU thread here, the longest a step may run
 * between two polls of --time and SIGINT. */
#define JL_SEARCH_MAX_CIRCLES JL_CIRCLES_MAX

/* Islands (src/islands/islands.h): several searches, one per MPI rank, hand each
 * other their best packings. The search calls the hook after every round;
 * the hook starts an exchange when one is due or the search would stop, and
 * reports it when it has completed (the ranks do not wait for each other,
 * except with blocking). A rank stops only on a completed exchange whose
 * verdict is stop, so every rank takes part in the same exchanges. */
typedef struct jl_circle_migration {
  jl_migration_step step;         /* reasons JL_STOP_* */
  const jl_circle_packing *offer; /* in: this search's best distinct packings, R ascending */
  int offer_count;
  const jl_circle_packing *incoming; /* out: the other ranks' packings (owned by the hook) */
  int incoming_count;
} jl_circle_migration;

typedef int (*jl_circle_migrate_fn)(void *ctx, jl_circle_migration *m, jl_error *err);

typedef struct jl_circle_search_opts {
  jl_search_mode mode;
  int batch;               /* candidates per launch; 0: chosen for the device */
  int trials_per_round;    /* improvement trials per candidate per launch; 0: auto */
  uint64_t seed;
  double time_s;           /* stop after this many seconds; 0: no limit */
  double t_start;          /* jl_time_now() when the run began, which time_s and the
                            * run's times count from (0: when the search begins) */
  double target_R;         /* stop once R <= target; 0: none */
  long rounds;             /* stop after this many launches; 0: no limit */
  int stuck_limit;         /* trials without a new record before a restart; 0: by n
                            * (jl_stuck_default) */
  int stuck_behind;        /* the same for a candidate whose record lies above the
                            * population's median; 0: stuck_limit. A deep walker lives
                            * about 100 s on a GPU at n = 35, so every candidate walks
                            * the first 100 s and the best of the first 30 waits that
                            * long for adopters. A quarter of it (1000) took n = 33 to
                            * its record and n = 35 seeds 2, 4, 5 from 7.9e-4 to
                            * 2.4e-4..5.2e-4, but n = 35 seed 1 from the record to
                            * 4.2e-4 (docs/benchmarks.md), so it is off by default. */
  double adopt;            /* population: share of restarts that adopt an elite packing */
  double behind_adopt;     /* population: the same for the restarts due by stuck_behind
                            * alone; < 0: adopt */
  double cross;            /* population: share of restarts that start from a child of two
                            * elite packings (jl_circle_cross_child), taken from the
                            * random starts' share */
  int polish_after;        /* CUDA: polish after each launch, not beside it */
  int adopt_spread;        /* population: an adopter takes the elite packing the fewest
                            * candidates are near (jl_circle_elite_nearest) instead of
                            * one drawn alike */
  int elite;               /* population: size of the elite, at most JL_ELITE_MAX;
                            * 0: by the batch (JL_CROWD_MIN_BATCH) */
  double crowding;         /* population: elite packings whose shapes lie closer
                            * than this (jl_circle_profile_distance) are one
                            * family; 0: only equal R; < 0: by the batch */
  double band;             /* record-to-record band of the first rung (relative); 0: default */
  int band_levels;         /* rungs of the band ladder; 0: default */
  int walk;                /* one candidate in walk runs a fixed-container walk;
                            * 0: none (the seed's trials only) */
  double aim;              /* share of the walk's jumps aimed by overlap energy */
  int walk_k;              /* neighbours per walk step; 0: by n (jl_walk_k_default) */
  int tenure;              /* walk steps a moved circle stays tabu; 0: JL_WALK_TENURE_DEFAULT */
  int walk_reset;          /* walk steps without a new lowest energy before the walk begins
                            * again from the record; 0: by n (jl_walk_reset_default) */
  int probe;               /* the walk's probe just below the record (JL_PROBE_*, jl_walk_probe) */
  int area_weighted;
  int progress;            /* progress line (on stderr, or through log) */
  jl_log_fn log;           /* progress lines as JL_LOG_PROGRESS; NULL: stderr */
  void *log_ctx;
  double progress_period_s; /* with log: between lines (0: 5 s) */
  const jl_circle_packing *resume; /* start every candidate from this packing */
  const struct jl_circle_checkpoint *resume_state; /* go on from this state (its seed,
                                    * mode and batch; circle_checkpoint.h): the rounds
                                    * and time_s count from the first run's start */
  const char *checkpoint;          /* write the state here every checkpoint_period_s
                                    * and when the search stops (NULL: never) */
  double checkpoint_period_s;      /* 0: JL_CHECKPOINT_PERIOD_S */
  volatile sig_atomic_t *stop;     /* set asynchronously (SIGINT): the launch, the
                                    * polish and the search end within about a second */
  jl_progress_fn on_progress;      /* after every round (about a second), on the calling
                                    * thread; non-zero stops the search as the flag does */
  void *on_progress_ctx;
  jl_circle_migrate_fn migrate;    /* islands: NULL for one search */
  void *migrate_ctx;
  double migrate_s;                /* a migration every this many seconds (--time runs) */
  long migrate_rounds;             /* or every this many rounds (--rounds runs, reproducible) */
} jl_circle_search_opts;

/* The run's population report (jl_circles_run_info.near_best): records
 * this close to the best R (relative) count as in its basin. */
#define JL_NEAR_BEST 1e-4

/* A checkpoint is rewritten at most this often (and when the search stops):
 * a run killed outright loses at most this much of its work. */
#define JL_CHECKPOINT_PERIOD_S 60.0

void jl_circle_search_opts_default(jl_circle_search_opts *o);
const char *jl_search_mode_name(jl_search_mode m);
int jl_search_mode_parse(const char *s, jl_search_mode *m);

/* Radii sorted ascending (swap-with-next-larger needs that order) and the
 * map back to the problem's order: the batch's radii, which a checkpoint
 * must hold too. */
typedef struct jl_circle_sorted {
  int n;
  double *r;
  int *orig;               /* sorted index -> problem index */
} jl_circle_sorted;
int jl_circle_sorted_init(jl_circle_sorted *s, const jl_circle_problem *prob, jl_error *err);
void jl_circle_sorted_free(jl_circle_sorted *s);

/* Relaxation settings for a problem (shared with benchmarks and tests). */
void jl_relax_params_default(jl_relax_params *p, const double *r_sorted, int n, uint64_t seed);

/* The candidates a search of n circles runs at once on dev. */
int jl_circle_search_batch(const jl_device *dev, int n, const jl_circle_search_opts *o);

/* Runs the search; best receives the best legal (polished, verified)
 * packing in the problem's circle order. */
int jl_circle_search(const jl_circle_problem *prob, const jl_device *dev,
                     const jl_circle_search_opts *o, jl_circle_packing *best,
                     jl_circle_run_info *info, jl_error *err);

#endif
