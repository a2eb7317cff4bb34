/* Circle packing: the problem (radii), a packing (centres), and the
 * independent checks and outputs around it. The search itself lives in
 * circle_search.h (driver) and circle_relax.h (per-candidate algorithm). */
#ifndef JL_CIRCLES_H
#define JL_CIRCLES_H

#include <signal.h>
#include <stdint.h>

#include <jostle/circles.h>

#include "device.h"
#include "error.h"

#define JL_NAME_MAX JL_CIRCLES_NAME_MAX
#define JL_SOURCE_MAX JL_CIRCLES_SOURCE_MAX

/* The problem, a packing, a run's facts and the exact check are the public
 * API's structs (include/jostle/circles.h). */
typedef jl_circles_problem jl_circle_problem;

typedef jl_circles_packing jl_circle_packing;

/* The population's elite (--elite): at most this many polished packings. */
#define JL_ELITE_MAX JL_CIRCLES_ELITE_MAX

/* What one search run did, written beside the packing in the result JSON. */
typedef jl_circles_run_info jl_circle_run_info;

enum { JL_STOP_TIME = 0, JL_STOP_TARGET = 1, JL_STOP_SIGNAL = 2, JL_STOP_ROUNDS = 3 };

/* Exact-geometry check, in long double, independent of the search code. */
typedef jl_circles_check jl_circle_check;

#define JL_LEGAL_REL_TOL JL_CIRCLES_LEGAL_TOL

/* Radii the arithmetic holds. Magnitude: squared distances reach (2 R)^2
 * with R up to about rmax sqrt(n) (1e102 at most), and tolerances go down
 * to 1e-10 of the smallest radius, squared 1e-220: both well inside
 * doubles (1e308 .. 2e-308 normal), so packings of radii from 1e-150 to 1e150
 * came out the same up to scale; 1e100 keeps a margin. Ratio: legality is
 * decided within JL_LEGAL_REL_TOL of R >= rmax and the search relaxes to
 * 1e-9 of rmax, so with rmax / rmin = 1e6 a small circle may still overlap
 * by 1e-4 .. 1e-3 of its radius; at 1e13 a packing of [1, 1e13, 3, 2] came
 * out 'legal' with circle 0 inside circle 1, and at 1e154 the search ends
 * with non-finite values. --n N and --equal N (radii 1..N, N <= 100,000)
 * stay within both. */
#define JL_RADIUS_MIN 1e-100
#define JL_RADIUS_MAX 1e100
#define JL_RADIUS_RATIO_MAX 1e6

/* problem.c */
int jl_circle_problem_init(jl_circle_problem *p, int n, jl_error *err);
int jl_circle_problem_zimmermann(jl_circle_problem *p, int n, jl_error *err);
int jl_circle_problem_equal(jl_circle_problem *p, int n, jl_error *err);
int jl_circle_problem_load(jl_circle_problem *p, const char *path, jl_error *err);
void jl_circle_problem_free(jl_circle_problem *p);
/* Every radius finite and within [JL_RADIUS_MIN, JL_RADIUS_MAX], the largest
 * at most JL_RADIUS_RATIO_MAX times the smallest: else JL_ERR_INPUT naming
 * path, the field (key_pre index key_post, e.g. "radii[" 3 "]") and the limit. */
int jl_circle_radii_check(const double *r, int n, const char *path, const char *key_pre,
                          const char *key_post, jl_error *err);
/* The built-in instance a stored name says ("zimmermann-NN" as --n NN
 * names it, "equal-N" as --equal N does): JL_OK with p filled, or with
 * p->n == 0 when the name is no built-in's. */
int jl_circle_problem_builtin(jl_circle_problem *p, const char *name, jl_error *err);

/* packing.c */
int jl_circle_packing_init(jl_circle_packing *pk, int n, jl_error *err);
void jl_circle_packing_free(jl_circle_packing *pk);
/* dst is zeroed ({0}) or initialized; its arrays are reused when n matches. */
int jl_circle_packing_copy(jl_circle_packing *dst, const jl_circle_packing *src, jl_error *err);
/* Sets R to max |c_i| + r_i and returns it. */
double jl_circle_packing_update_R(jl_circle_packing *pk);
/* Scales all centres by the smallest factor >= 1 that leaves no pair
 * overlapping (in double), then updates R: an exact legalizer. */
void jl_circle_packing_separate(jl_circle_packing *pk);

/* verify.c */
int jl_circle_check_packing(const jl_circle_packing *pk, double rel_tol, jl_circle_check *out);
/* The check's pair part two ways, with one result: the largest
 * r_i + r_j - |c_i - c_j| over pairs (-inf when n < 2) and its pair i < j,
 * the first in (i, j) order among equal values. All pairs is O(n^2); the
 * grid (boxes of the circles widened until the best pair is certain) is
 * O(n log n) when each circle meets a few others, and returns
 * JL_ERR_NOMEM or, for non-finite values, JL_ERR_INPUT, computing nothing.
 * jl_circle_check_packing uses the grid from 64 circles up. */
void jl_circle_pairs_all(const jl_circle_packing *pk, long double *worst, int *i, int *j);
int jl_circle_pairs_grid(const jl_circle_packing *pk, long double *worst, int *i, int *j);
/* The packing's radii are the instance's, in order: else code (JL_ERR_INPUT
 * for --resume, JL_ERR_NOT_LEGAL for verify) with a message naming path and
 * the first circle that differs. */
int jl_circle_check_instance(const jl_circle_packing *pk, const jl_circle_problem *prob,
                             const char *path, int code, jl_error *err);

/* polish.c: local NLP (NLopt SLSQP): minimize R subject to containment and
 * non-overlap, started from pk; pk is replaced only by a legal packing that
 * is no worse. Returns JL_OK (also when nothing improved). */
typedef struct jl_polish_opts {
  double xtol_rel;                /* default 1e-14 */
  int max_eval;                   /* default 2000 */
  double time_s;                  /* 0: no limit */
  double deadline;                /* jl_time_now() at which to give up (0: none) */
  volatile sig_atomic_t *stop;    /* give up once set (SIGINT; NULL: never) */
  double *iter_s;                 /* in: CPU seconds an SLSQP iteration of this problem
                                   * took before (0: not known); out: the longest one seen;
                                   * no iteration starts that would end past the deadline */
  double end;                     /* the run's end, which the polish must not pass (0:
                                   * none): no iteration starts that could end past it
                                   * on a machine getting busier (jl_nlp_late) */
  double slow;                    /* how much slower than its CPU time a thread runs now
                                   * (a busy machine: wall over CPU seconds; <= 1: not) */
} jl_polish_opts;
void jl_polish_opts_default(jl_polish_opts *o);
int jl_circle_polish(jl_circle_packing *pk, const jl_polish_opts *opts, int *improved,
                     jl_error *err);

/* circle_io.c: result JSON, Packomania text (index x y, container radius 1), SVG */
int jl_circle_result_write_json(const char *path, const jl_circle_problem *prob,
                                const jl_circle_packing *pk, const jl_circle_run_info *info,
                                const jl_circle_check *check, jl_error *err);
/* Reads a circles result JSON (as written above); fills pk (allocated) and,
 * when prob is not NULL, the radii/name/best_known_R into prob (allocated). */
int jl_circle_result_read_json(const char *path, jl_circle_packing *pk,
                               jl_circle_problem *prob, jl_error *err);
int jl_circle_write_packomania(const char *path, const jl_circle_packing *pk, jl_error *err);
/* Radii come from prob (line k holds circle k, 1-based); coordinates are
 * scaled back from container radius 1 by prob's radii. */
int jl_circle_read_packomania(const char *path, const jl_circle_problem *prob,
                              jl_circle_packing *pk, jl_error *err);
int jl_circle_write_svg(const char *path, const jl_circle_problem *prob,
                        const jl_circle_packing *pk, jl_error *err);

#endif
