/* Circles: the smallest circle around circles of given radii. */
#ifndef JOSTLE_CIRCLES_H
#define JOSTLE_CIRCLES_H

#include <jostle/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits: the most circles a search takes, the largest elite, and the exact
 * check's tolerance (overlap and excess at most this times R). */
#define JL_CIRCLES_MAX 10000
#define JL_CIRCLES_ELITE_MAX 256
#define JL_CIRCLES_WALK_K_MAX 256   /* neighbours per walk step */
#define JL_CIRCLES_LEGAL_TOL 1e-10
#define JL_CIRCLES_NAME_MAX 128
#define JL_CIRCLES_SOURCE_MAX 512

/* An instance: radii in order, a name for the outputs, the published record. */
typedef struct jl_circles_problem {
  int n;
  double *radii;                  /* n radii in file order, all finite and > 0 */
  char name[JL_CIRCLES_NAME_MAX]; /* e.g. "zimmermann-30" */
  double best_known_R;            /* published record, 0 when none is known */
  char source[JL_CIRCLES_SOURCE_MAX]; /* where best_known_R comes from */
} jl_circles_problem;

/* Circles in a container circle centred at the origin. */
typedef struct jl_circles_packing {
  int n;
  double *x, *y, *r;
  double R;                       /* container radius: max |c_i| + r_i */
} jl_circles_packing;

/* The exact-geometry check, in long double, independent of the search. */
typedef struct jl_circles_check {
  long double R;                  /* max |c_i| + r_i */
  long double max_overlap;        /* max over pairs of r_i + r_j - |c_i - c_j| (<= 0: apart) */
  long double max_excess;         /* max |c_i| + r_i - stated R (<= 0: inside) */
  int overlap_i, overlap_j;       /* the worst pair */
  int excess_i;                   /* the circle furthest outside */
  int legal;                      /* both within rel_tol * R */
} jl_circles_check;

/* The search's modes (docs/design.md). */
typedef enum jl_circles_mode {
  JL_CIRCLES_POPULATION = 0,  /* basin hopping per candidate, restarts adopt an elite packing */
  JL_CIRCLES_TRIALS = 1,      /* every candidate tries one move on the one best */
  JL_CIRCLES_INSTANCES = 2    /* independent instances, random restarts */
} jl_circles_mode;

/* The walk's probe: a walk state of a new lowest energy is also relaxed just
 * below the candidate's record, where a basin less than the walk's container
 * below the record is legal. RESTART begins the walk again below each record
 * it finds, KEEP keeps the walk going in its container. */
typedef enum jl_circles_probe {
  JL_CIRCLES_PROBE_OFF = 0,
  JL_CIRCLES_PROBE_RESTART = 1,
  JL_CIRCLES_PROBE_KEEP = 2
} jl_circles_probe;

typedef struct jl_circles_options {
  double time_s;           /* stop after this many seconds (default 60; 0: no limit) */
  double target_R;         /* stop once R <= target_R (0: none) */
  long rounds;             /* stop after this many launches (0: none): with fixed batch and
                            * threads the same seed gives the same bits */
  uint64_t seed;           /* default 1 */
  const char *device;      /* "auto" (default: CUDA when present), "cpu" or "cuda" */
  int threads;             /* host threads (0: all the process may use; under islands the
                            * node's cores shared by its ranks) */
  int batch;               /* candidates at once (0: chosen for the device) */
  jl_progress_fn progress; /* about once a second, or NULL */
  void *progress_ctx;
  volatile sig_atomic_t *stop; /* set it (from a signal handler) to stop; or NULL */
  /* The search's settings; jl_circles_options_default gives the defaults. */
  jl_circles_mode mode;    /* default population */
  int trials;              /* trials per candidate per launch (0: by a step budget) */
  int stuck;               /* trials (walk steps) without a record before a restart (0: by n:
                            * 4000 for 20..63 circles, else max(100, 10 n)) */
  int stuck_behind;        /* the same for a candidate whose record lies above the median
                            * of the population's records (0: as stuck) */
  double band;             /* record-to-record band, relative (0: default 3e-4) */
  int band_levels;         /* rungs of the band ladder (0: default 2) */
  int walk;                /* one candidate in walk walks at a fixed container (default 1;
                            * 0: none) */
  double aim;              /* share of the walk's jumps aimed by overlap (default 0.5) */
  int walk_k;              /* neighbours a walk step relaxes (0: 8 below 64 circles, 16 from 64) */
  int tenure;              /* walk steps a moved circle stays tabu (0: default 4) */
  int walk_reset;          /* walk steps without a new lowest energy before the walk begins
                            * again from the record (0: by n: 400 for 20..63 circles, else 50) */
  int probe;               /* the walk's probe, a jl_circles_probe (default keep) */
  int elite;               /* population: elite size, at most JL_CIRCLES_ELITE_MAX (0: 8 from
                            * 256 candidates, as on a GPU, else 4) */
  double crowding;         /* population: shape distance of one family (0: equal R alone;
                            * default -1: 0.02 from 256 candidates, else 0) */
  double adopt;            /* population: share of restarts that adopt (default 0.5) */
  double behind_adopt;     /* population: the same for restarts due by stuck_behind alone
                            * (default -1: adopt) */
  double cross;            /* population: share of restarts that start from a child of two
                            * elite packings, cut and spliced (default 0; at most 1 - adopt) */
  int polish_after;        /* CUDA: polish after each launch instead of on the host threads
                            * beside it (default 0; the CPU always polishes after) */
  int adopt_spread;        /* population: adopt the elite packing fewest candidates are near
                            * (default 0: one drawn alike) */
  int area_weighted;       /* split contact moves by area */
  const jl_circles_packing *resume; /* start from this packing (the problem's radii), or NULL */
  /* Checkpoints (not under several MPI ranks): checkpoint names a file the
   * search's whole state is written to, atomically, every minute and when
   * it stops; continue_from one to go on from, with its seed, mode and
   * batch (seed, mode and batch here are then not used): time_s and rounds
   * count from the first run's start, so with rounds and fixed threads a
   * run in two parts gives the bits of one run. NULL: none. */
  const char *checkpoint;
  const char *continue_from;
  /* Lines for people (jl_circles_run only): notices, the run's first line
   * and, with progress_lines, the progress line every progress_period_s
   * (0: 5 s) and on every new best. NULL: silent. */
  jl_log_fn log;
  void *log_ctx;
  int progress_lines;
  double progress_period_s;
  /* jl_circles_run only: when an MPI launcher started this process among
   * several, join the job as one island of it (the ranks exchange their
   * best packings every migrate_s seconds, or with rounds every migrate_s
   * rounds; 0: n/10 s within 2..30, or 5 rounds). */
  int islands;
  double migrate_s;
  /* jl_circles_run only: called on every rank once the run has joined its
   * islands, before any work, with the rank (0 writes); a non-OK return
   * ends the run on every rank with that error (the CLI checks its outputs). */
  int (*ready)(void *ctx, int rank, jl_error *err);
  void *ready_ctx;
} jl_circles_options;

typedef struct jl_circles_result {
  int n;
  double *x, *y, *r;       /* centres and radii, in the order of the radii given */
  double R;                /* the container's radius, centred at the origin */
  double best_known_R;     /* the published record for radii 1..n (n = 5..50), else 0 */
  double max_overlap;      /* the exact check's deepest overlap (long double, <= 1e-10 R) */
  double time_s, time_to_best_s;
  double launch_s, polish_s;   /* of time_s, in the launches and in the polish between them
                                * (beside the launches: what of it outlasted them) */
  int polish_beside;           /* the polish ran beside the launches (CUDA) */
  uint64_t seed, trials, relax_steps, restarts;
  jl_stop_reason stopped_by;
  char device[8];          /* "cpu" or "cuda" */
  char device_name[128];   /* "NVIDIA H100 80GB HBM3", "CPU, 16 threads" */
  /* the search's settings and restarts, as the result file records them
   * (elite 0: not set, and jl_circles_result_write writes the defaults) */
  char mode[16];           /* "population", "trials" or "instances" */
  int walk, walk_k, tenure, walk_reset, stuck, stuck_behind, probe, elite, adopt_spread;
  double aim, crowding, cross;
  uint64_t adoptions, crossovers;
} jl_circles_result;

JL_API void jl_circles_options_default(jl_circles_options *o);

/* Packs n circles of the given radii (finite, > 0, ratio at most 1e6) and
 * returns the best packing found, polished and legal by the exact check.
 * res is filled on JL_OK; free it with jl_circles_result_free. */
JL_API int jl_circles_pack(const double *radii, int n, const jl_circles_options *o,
                           jl_circles_result *res, jl_error *err);

/* The contest record for radii 1..n (n = 5..50), 0 for other n. */
JL_API double jl_circles_record(int n);

/* Writes the result as jostle's JSON (docs/formats.md), an SVG picture and
 * Packomania text; any path may be NULL. Each file is written atomically. */
JL_API int jl_circles_result_write(const jl_circles_result *res, const char *json_path,
                                   const char *svg_path, const char *txt_path, jl_error *err);

JL_API void jl_circles_result_free(jl_circles_result *res);

/* ---- problems, packings, checks ---- */

/* The contest instance radii 1..n (name zimmermann-NN, the record for n = 5..50). */
JL_API int jl_circles_problem_contest(jl_circles_problem *p, int n, jl_error *err);
/* n unit circles (name equal-N). */
JL_API int jl_circles_problem_equal(jl_circles_problem *p, int n, jl_error *err);
/* A problem file (docs/formats.md). */
JL_API int jl_circles_problem_load(jl_circles_problem *p, const char *path, jl_error *err);
/* Given radii (name circles-N; the contest's name and record when they are 1..n). */
JL_API int jl_circles_problem_radii(jl_circles_problem *p, const double *radii, int n,
                                    jl_error *err);
JL_API void jl_circles_problem_free(jl_circles_problem *p);

/* A packing to resume from: a result .json or Packomania text (.txt, whose
 * radii come from prob). With prob->n == 0 a result's stored problem fills
 * prob. The radii must be the problem's; the packing is scaled apart until
 * no pair overlaps. */
JL_API int jl_circles_resume_load(const char *path, jl_circles_problem *prob,
                                  jl_circles_packing *pk, jl_error *err);
JL_API void jl_circles_packing_free(jl_circles_packing *pk);

/* The exact check of a packing: overlap and excess within rel_tol * R. */
JL_API void jl_circles_packing_check(const jl_circles_packing *pk, double rel_tol,
                                     jl_circles_check *out);

/* What jl_circles_verify_file found. */
typedef struct jl_circles_verify_report {
  int n;
  int same_radii;          /* 0: the radii are not the instance's (why says which) */
  char why[JL_ERROR_MSG_MAX];
  jl_circles_check check;  /* when same_radii */
  double record;           /* the instance's (or the stored) record, 0 when none */
} jl_circles_verify_report;

/* Checks a result .json or Packomania .txt against an instance: inst, else
 * (a .json) the built-in one the stored problem.name says (zimmermann-NN,
 * equal-N), else the stored radii. A .txt needs inst. JL_OK when the file
 * was read (legal or not: rep says); an error when it cannot be. */
JL_API int jl_circles_verify_file(const char *path, const jl_circles_problem *inst,
                                  double rel_tol, jl_circles_verify_report *rep, jl_error *err);

/* ---- a full run, as the CLI makes it ---- */

/* "population", "trials", "instances"; parse returns JL_ERR_INPUT for others. */
JL_API const char *jl_circles_mode_name(jl_circles_mode m);
JL_API int jl_circles_mode_parse(const char *s, jl_circles_mode *m, jl_error *err);
/* "off", "restart", "keep"; parse returns JL_ERR_INPUT for others. */
JL_API const char *jl_circles_probe_name(int probe);
JL_API int jl_circles_probe_parse(const char *s, int *probe, jl_error *err);

/* What a run did, as the result file records it. */
typedef struct jl_circles_run_info {
  uint64_t seed;
  const char *device;             /* "cpu" or "cuda" */
  const char *device_name;        /* "NVIDIA H100 80GB HBM3", "CPU, 16 threads" */
  const char *mode;               /* population, trials, instances */
  int walk;
  double aim;
  int walk_k;                     /* neighbours per walk step */
  int tenure;                     /* the walk's tabu tenure */
  int walk_reset;                 /* walk steps without a new lowest energy before a reset */
  int stuck;                      /* trials (walk steps) without a record before a restart */
  int stuck_behind;               /* the same behind the population's median record */
  int probe;                      /* the walk's probe (jl_circles_probe) */
  double time_s;
  double time_to_best_s;
  double launch_s;                /* of time_s, in the engine's launches (the GPU busy) */
  double polish_s;                /* of time_s, in the polish between launches (beside
                                   * them: what of it outlasted them) */
  int polish_beside;              /* the polish ran on the host beside the launches */
  uint64_t trials;
  uint64_t relax_steps;
  uint64_t restarts;
  uint64_t adoptions;             /* restarts that adopted an elite packing */
  uint64_t crossovers;            /* restarts from a child of two elite packings */
  double cross;                   /* the share of restarts that could take one */
  int elite;                      /* the elite's size */
  double crowding;                /* its crowding distance */
  int adopt_spread;               /* adopters took the member fewest candidates are near */
  uint64_t elite_crowded;         /* offers that met a member by shape, not R */
  int elite_count;                /* members at the end */
  double elite_R[JL_CIRCLES_ELITE_MAX];      /* their R, ascending */
  double elite_spread[JL_CIRCLES_ELITE_MAX]; /* their shape distance from the first */
  /* the population at the end: how far it has gathered in the best's basin */
  int population;                 /* candidates holding a record */
  int near_best;                  /* of them, records within 1e-4 of the best R */
  double median_gap;              /* their median record over the best R, minus 1 */
  int stopped_by;                 /* jl_stop_reason */
  uint64_t migrations;            /* islands: exchanges with the other ranks */
  int ranks;                      /* islands: MPI ranks (1: one search) */
  const jl_rank_info *rank_info;  /* ranks entries (rank 0 only), or NULL */
} jl_circles_run_info;

typedef struct jl_circles_run {
  jl_circles_packing best;        /* legal by the exact check (when writes) */
  jl_circles_check check;
  jl_circles_run_info info;       /* its strings point into the fields below */
  int rank;                       /* this process's MPI rank (0 without islands) */
  int writes;                     /* this process holds the result: rank 0 */
  int failed;                     /* islands: this rank's search failed, the others went on */
  jl_error failure;               /* why */
  char device[8];
  char device_name[128];
  char layout[160];               /* how the candidates sit on the device */
  jl_rank_info *ranks;            /* info.ranks entries on rank 0, else NULL */
} jl_circles_run;

/* Runs the search for prob as o says, logging through o->log: the first
 * line names the instance, the device, the layout, the mode and the seed.
 * With o->islands under an MPI launcher every rank calls it and rank 0
 * alone has the result (writes); setup errors are the same on every rank.
 * Free run with jl_circles_run_free (also after an error). */
JL_API int jl_circles_run_search(const jl_circles_problem *prob, const jl_circles_options *o,
                                 jl_circles_run *run, jl_error *err);
/* Writes the run's result JSON (docs/formats.md), SVG and Packomania text;
 * any path may be NULL; each file is written atomically. */
JL_API int jl_circles_run_write(const jl_circles_problem *prob, const jl_circles_run *run,
                                const char *json_path, const char *svg_path,
                                const char *txt_path, jl_error *err);
JL_API void jl_circles_run_free(jl_circles_run *run);

#ifdef __cplusplus
}
#endif

#endif
