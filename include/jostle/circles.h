/* Circles: the smallest circle around circles of given radii. */
#ifndef JOSTLE_CIRCLES_H
#define JOSTLE_CIRCLES_H

#include <jostle/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_circles_options {
  double time_s;           /* stop after this many seconds (default 60; 0: no limit) */
  double target_R;         /* stop once R <= target_R (0: none) */
  long rounds;             /* stop after this many launches (0: none): with fixed batch and
                            * threads the same seed gives the same bits */
  uint64_t seed;           /* default 1 */
  const char *device;      /* "auto" (default: CUDA when present), "cpu" or "cuda" */
  int threads;             /* host threads (0: all the process may use) */
  int batch;               /* candidates at once (0: chosen for the device) */
  jl_progress_fn progress; /* about once a second, or NULL */
  void *progress_ctx;
  volatile sig_atomic_t *stop; /* set it (from a signal handler) to stop; or NULL */
} jl_circles_options;

typedef struct jl_circles_result {
  int n;
  double *x, *y, *r;       /* centres and radii, in the order of the radii given */
  double R;                /* the container's radius, centred at the origin */
  double best_known_R;     /* the published record for radii 1..n (n = 5..50), else 0 */
  double max_overlap;      /* the exact check's deepest overlap (long double, <= 1e-10 R) */
  double time_s, time_to_best_s;
  uint64_t seed, trials, relax_steps, restarts;
  jl_stop_reason stopped_by;
  char device[8];          /* "cpu" or "cuda" */
  char device_name[128];   /* "NVIDIA H100 80GB HBM3", "CPU, 16 threads" */
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

#ifdef __cplusplus
}
#endif

#endif
