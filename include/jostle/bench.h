/* Benchmarks: the timed kernels behind `jostle bench`. Each call builds its
 * own work, times it and returns plain figures; nothing is printed. */
#ifndef JOSTLE_BENCH_H
#define JOSTLE_BENCH_H

#include <jostle/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of the options (checked by each call, JL_ERR_INPUT naming the field). */
#define JL_BENCH_RELAX_N_MAX 4096
#define JL_BENCH_REPEAT_MAX 101
#define JL_BENCH_SPREAD_N_MAX 100000
#define JL_BENCH_TRUNK_BLOCKS_MAX 250
#define JL_BENCH_SCENE_STAGES 6
/* Most named marks a device step reports (jl_bench_scene_options.marks). */
#define JL_BENCH_SCENE_MARKS 48
#define JL_BENCH_NAME_MAX 128

/* ---- circles: the search's relaxation step ---- */

/* B random start packings of radii 1..n (equal: n unit circles), one
 * warm-up launch, then repeat launches in each of which every candidate does
 * exactly steps relaxation steps in a container 2% tighter than its packing
 * (search: the search's own work, walks and all, until it has spent steps). */
typedef struct jl_bench_relax_options {
  int n;                   /* circles, 2..JL_BENCH_RELAX_N_MAX (default 50) */
  int equal;               /* n unit circles instead of radii 1..n */
  int batch;               /* candidates per launch (0: chosen for the device) */
  long steps;              /* steps per candidate per launch (default 2000) */
  int repeat;              /* timed launches, 1..JL_BENCH_REPEAT_MAX (default 5) */
  const char *relax;       /* "fire" (default, the search's) or "jacobi" (the seed's) */
  int nbr;                 /* contacts from neighbour lists: 1, from all pairs: 0, as the
                            * search chooses by n: -1 (default); the same bits either way */
  int search;              /* time the search's walk instead of bare relaxation */
  uint64_t seed;           /* default 1 */
  const char *device;      /* "auto" (default), "cpu" or "cuda" */
  int threads;             /* host threads (0: all) */
} jl_bench_relax_options;

typedef struct jl_bench_relax_result {
  int nbr;                 /* 1: neighbour lists ran */
  int batch;               /* candidates per launch */
  uint64_t steps;          /* candidate-steps of one launch (the last) */
  double seconds;          /* the median launch */
  double seconds_min, seconds_max;
  double steps_per_s;      /* the median launch's candidate-steps per second */
  double circle_steps_per_s; /* steps_per_s times n */
  char device[8];          /* "cpu" or "cuda" */
  char device_name[128];
} jl_bench_relax_result;

JL_API void jl_bench_relax_options_default(jl_bench_relax_options *o);
JL_API int jl_bench_circles_relax(const jl_bench_relax_options *o, jl_bench_relax_result *res,
                                  jl_error *err);

/* ---- circles: the seed's spread baseline (Goetzmann 2007, 4.2.3) ---- */

/* ONE random overlapping packing of radii 1..n relaxed with one contact step
 * per kernel launch, no container and no early stop; the CPU runs the serial
 * twin on one thread. One warm-up step, then steps timed steps. */
typedef struct jl_bench_spread_options {
  int n;                   /* circles, 2..JL_BENCH_SPREAD_N_MAX (default 50) */
  long steps;              /* default 1000 */
  uint64_t seed;           /* default 1 */
  const char *device;      /* "auto" (default), "cpu" or "cuda" */
} jl_bench_spread_options;

typedef struct jl_bench_spread_result {
  int steps;               /* steps run */
  double seconds;
  double steps_per_s;
  char device[8];
  char device_name[128];
} jl_bench_spread_result;

JL_API void jl_bench_spread_options_default(jl_bench_spread_options *o);
JL_API int jl_bench_circles_spread(const jl_bench_spread_options *o, jl_bench_spread_result *res,
                                   jl_error *err);

/* ---- trunks: the block contact simulation step ---- */

/* A 1040 x 560 x 540 mm box trunk sampled with about points surface points,
 * blocks blocks of 200 x 100 x 50 from its grid fill, each shifted by up to
 * 8 mm and turned by up to 0.06 (the seed's Table 5.1 set-up). Times steps
 * relaxation steps (no early exit) of one candidate alone, then of batch
 * candidates in one launch. */
typedef struct jl_bench_trunk_options {
  int blocks;              /* 1..JL_BENCH_TRUNK_BLOCKS_MAX (default 242) */
  int points;              /* 100..10000000 (default 38700) */
  int batch;               /* 0: 8 per GPU multiprocessor, 2 per CPU thread */
  long steps;              /* default 50 */
  uint64_t seed;           /* default 1 */
  const char *device;      /* "auto" (default), "cpu" or "cuda" */
  int threads;             /* host threads (0: all) */
} jl_bench_trunk_options;

typedef struct jl_bench_trunk_result {
  int points;              /* surface points sampled */
  double spacing;          /* their spacing, mm */
  double cell;             /* the surface grid's cell, mm */
  double single_seconds;   /* one candidate alone */
  double single_step_ms;
  int batch;
  double batch_seconds;
  uint64_t candidate_steps;
  double candidate_steps_per_s;
  double worst_after_mm;   /* the first candidate's worst overlap after the batch launch */
  char device[8];
  char device_name[128];
} jl_bench_trunk_result;

JL_API void jl_bench_trunk_options_default(jl_bench_trunk_options *o);
JL_API int jl_bench_trunk(const jl_bench_trunk_options *o, jl_bench_trunk_result *res,
                          jl_error *err);

/* ---- scenes: where a device time step spends its time ---- */

/* Runs 1 + steps steps of a scene file with stage timing on: on the CUDA
 * device (synchronised at each stage's end) or the CPU path; the first step
 * (arena growth, graph instantiation, the thread pool's start) is not timed. */
typedef struct jl_bench_scene_options {
  long steps;              /* timed steps, 1..1000000 (default 10) */
  const char *solver;      /* "jor", "sor" or "apgd" (NULL: the scene's) */
  int max_iter;            /* solver iterations per step at most (0: the scene's) */
  int check_every;         /* iterations between convergence checks (default 8) */
  int persistent;          /* JOR and APGD in one cooperative launch when they fit (default 1) */
  int persistent_plan;     /* what that launch keeps on chip: -1 (default) the first plan
                            * whose grid fits one wave, 0 "contacts+du2" ... 5 "none" that
                            * plan only (docs/design.md) */
  int streamed;            /* larger JOR and APGD solves by the streamed kernels: 1 always,
                            * 0 never, -1 by size (default) */
  int round_narrow;        /* CUDA: a scene without boxes by the narrow-phase kernels for
                            * round shapes (default 1); 0 the general ones */
  int staged_narrow;       /* CUDA: boxes' manifolds computed once, staged and gathered
                            * (default 1); 0 twice, by a count and a write pass */
  int soa_by_setup;        /* CUDA: a streamed solve's constants by field written by the
                            * setup (default 1); 0 copied by the solve */
  double pair_skin;        /* the step keeps its pair list while the boxes stay in a skin
                            * of this share of the mean box edge; -1 (default) the
                            * library's, 0 a new list every step */
  const char *body_order;  /* "auto" (default), "spatial" or "given" */
  const char *device;      /* "cuda" (default), "cpu" or "auto" */
  int threads;             /* CPU path: threads (default 0: all cores) */
  int marks;               /* CUDA: time the step's launch groups by events (the result's
                            * marks); an error on the CPU path */
} jl_bench_scene_options;

typedef struct jl_bench_scene_result {
  char name[JL_BENCH_NAME_MAX];   /* the scene's name ("" when it has none) */
  char device_name[128];
  int bodies;
  char body_order[16];     /* the order stepped: "spatial" or "given" */
  char solver[8];          /* "jor", "sor" or "apgd" */
  int max_iterations;
  double ms_per_step;      /* wall time per timed step */
  char stage_name[JL_BENCH_SCENE_STAGES][16];  /* integrate, collide, setup, colour, solve, finish */
  double stage_ms_per_step[JL_BENCH_SCENE_STAGES];
  double contacts, iterations, colours;  /* means per timed step */
  long persistent_solves;  /* CUDA: solves that ran in one cooperative launch */
  long pair_lists;         /* timed steps that built their pair list (the others kept the
                            * step before's) */
  long body_lists;         /* CUDA: timed steps whose setup sorted its body lists (the
                            * others' contacts had the step before's bodies) */
  double solve_wait_ms_per_step; /* CPU: of the solve, the mean time a thread of the
                            * team waited at its barriers (0 on one thread) */
  char persistent_cache[16];  /* CUDA: what the last of them kept on chip ("contacts+du2"
                               * ... "none"; "" when none ran) */
  int marks;               /* with options.marks: how many named marks follow, in launch
                            * order; each is the device time since the mark before it
                            * (kernels, copies and the gaps between them), so they add up
                            * to the step's time on the device */
  char mark_name[JL_BENCH_SCENE_MARKS][32];
  double mark_ms_per_step[JL_BENCH_SCENE_MARKS];
} jl_bench_scene_result;

JL_API void jl_bench_scene_options_default(jl_bench_scene_options *o);
JL_API int jl_bench_scene(const char *path, const jl_bench_scene_options *o,
                          jl_bench_scene_result *res, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
