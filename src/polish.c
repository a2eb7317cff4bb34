/* Local polish: the smallest container around a fixed contact pattern is a
 * smooth NLP, which SLSQP solves to machine precision where the search's
 * relaxation only creeps. Variables v = (x_0..x_{n-1}, y_0..y_{n-1}, R), all
 * divided by the start R so that every value is of order 1.
 *
 * Only pairs that are near each other are constrained (SLSQP's cost grows
 * with the square of the constraint count); after each solve every pair is
 * checked and the ones that came too close are added for another solve. */
#include "circles.h"

#include <math.h>
#include <nlopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* SLSQP is dense: memory grows as (2n)^2 and time per step as pairs * n^2,
 * so larger packings are only legalized, not polished. */
#define JL_POLISH_MAX_N 1000
/* Up to this many circles every pair is constrained from the start. */
#define JL_POLISH_ALL_PAIRS_N 12
/* Pairs whose gap is below this fraction of r_i + r_j are constrained. */
#define JL_POLISH_NEAR 0.25
/* One solve may shrink R by at most this factor, so that a loose start
 * cannot collapse through pairs that were not constrained. */
#define JL_POLISH_STEP 0.7
#define JL_POLISH_ROUNDS 20
/* Constraint slack NLopt grants when it calls a point feasible (scaled
 * units: containment in R^2, overlap relative to (r_i + r_j)^2). */
#define JL_POLISH_CTOL 1e-15
/* A solve ending further from feasibility than this is solved again. */
#define JL_POLISH_VIOL 1e-13

void jl_polish_opts_default(jl_polish_opts *o) {
  o->xtol_rel = 1e-14;
  o->max_eval = 2000;
  o->time_s = 0.0;
}

typedef struct jl_nlp {
  int n;
  double *r;                /* radii / R0 */
  double r_max, R_area;     /* largest radius; area bound sqrt(sum r^2) */
  double R_floor;           /* lower bound on R for the next solve */
  int *pi, *pj;             /* the constrained pairs */
  int npairs, cap;
  unsigned char *in_set;    /* n x n, upper triangle: pair constrained */
  double *tol;              /* per-constraint slack, max(n, pairs) long;
                               scratch between solves */
  double *last;             /* the last point NLopt evaluated */
} jl_nlp;

static double jl_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void jl_nlp_free(jl_nlp *p) {
  free(p->r);
  free(p->pi);
  free(p->pj);
  free(p->in_set);
  free(p->tol);
  free(p->last);
  memset(p, 0, sizeof *p);
}

static int jl_nlp_init(jl_nlp *p, const jl_circle_packing *pk, double R0) {
  memset(p, 0, sizeof *p);
  int n = pk->n;
  p->n = n;
  p->r = malloc((size_t)n * sizeof *p->r);
  p->in_set = calloc((size_t)n * (size_t)n, 1);
  p->last = malloc((size_t)(2 * n + 1) * sizeof *p->last);
  p->tol = malloc((size_t)n * sizeof *p->tol);
  if (!p->r || !p->in_set || !p->last || !p->tol) return JL_ERR_NOMEM;
  double area = 0.0;
  for (int i = 0; i < n; ++i) {
    p->r[i] = pk->r[i] / R0;
    p->r_max = fmax(p->r_max, p->r[i]);
    area += p->r[i] * p->r[i];
  }
  p->R_area = sqrt(area);
  return JL_OK;
}

static int jl_nlp_add_pair(jl_nlp *p, int i, int j) {
  if (p->npairs == p->cap) {
    int cap = p->cap ? 2 * p->cap : 64;
    int *a = realloc(p->pi, (size_t)cap * sizeof *a);
    if (!a) return JL_ERR_NOMEM;
    p->pi = a;
    int *b = realloc(p->pj, (size_t)cap * sizeof *b);
    if (!b) return JL_ERR_NOMEM;
    p->pj = b;
    p->cap = cap;
  }
  p->pi[p->npairs] = i;
  p->pj[p->npairs] = j;
  p->npairs++;
  p->in_set[(size_t)i * (size_t)p->n + (size_t)j] = 1;
  return JL_OK;
}

/* Adds the unconstrained pairs that would have a gap < near * (r_i + r_j)
 * if v were shrunk by q <= 1; *overlap counts those that overlap at v. */
static int jl_nlp_add_near(jl_nlp *p, const double *v, double near, double q, int *overlap) {
  int n = p->n;
  double lim = (1.0 + near) / q;
  *overlap = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (p->in_set[(size_t)i * (size_t)n + (size_t)j]) continue;
      double dx = v[i] - v[j], dy = v[n + i] - v[n + j], s = p->r[i] + p->r[j];
      double d2 = dx * dx + dy * dy;
      if (!(d2 < lim * lim * s * s)) continue;
      if (jl_nlp_add_pair(p, i, j)) return JL_ERR_NOMEM;
      if (d2 < s * s) ++*overlap;
    }
  return JL_OK;
}

static double jl_nlp_objective(unsigned nv, const double *v, double *grad, void *data) {
  jl_nlp *p = data;
  memcpy(p->last, v, nv * sizeof *v);
  if (grad) {
    memset(grad, 0, nv * sizeof *grad);
    grad[nv - 1] = 1.0;
  }
  return v[nv - 1];
}

/* Containment: x_i^2 + y_i^2 - (R - r_i)^2 <= 0 (with R >= max r_i). */
static void jl_nlp_contain(unsigned m, double *c, unsigned nv, const double *v, double *grad,
                           void *data) {
  const jl_nlp *p = data;
  int n = p->n;
  double R = v[2 * n];
  if (grad) memset(grad, 0, (size_t)m * nv * sizeof *grad);
  for (int i = 0; i < n; ++i) {
    double x = v[i], y = v[n + i], g = R - p->r[i];
    c[i] = x * x + y * y - g * g;
    if (!grad) continue;
    double *row = grad + (size_t)i * nv;
    row[i] = 2.0 * x;
    row[n + i] = 2.0 * y;
    row[2 * n] = -2.0 * g;
  }
}

/* Non-overlap, divided by (r_i + r_j)^2 so small and large pairs weigh
 * alike: 1 - |c_i - c_j|^2 / (r_i + r_j)^2 <= 0. */
static void jl_nlp_apart(unsigned m, double *c, unsigned nv, const double *v, double *grad,
                         void *data) {
  const jl_nlp *p = data;
  int n = p->n;
  if (grad) memset(grad, 0, (size_t)m * nv * sizeof *grad);
  for (int k = 0; k < (int)m; ++k) {
    int i = p->pi[k], j = p->pj[k];
    double dx = v[i] - v[j], dy = v[n + i] - v[n + j], s = p->r[i] + p->r[j];
    double w = 1.0 / (s * s);
    c[k] = 1.0 - (dx * dx + dy * dy) * w;
    if (!grad) continue;
    double *row = grad + (size_t)k * nv;
    row[i] = -2.0 * dx * w;
    row[j] = 2.0 * dx * w;
    row[n + i] = -2.0 * dy * w;
    row[n + j] = 2.0 * dy * w;
  }
}

/* The largest constraint value at v (<= 0: feasible). */
static double jl_nlp_violation(jl_nlp *p, const double *v) {
  int n = p->n;
  unsigned nv = (unsigned)(2 * n + 1);
  double *c = p->tol, worst = -INFINITY;
  jl_nlp_contain((unsigned)n, c, nv, v, NULL, p);
  for (int i = 0; i < n; ++i) worst = fmax(worst, c[i]);
  jl_nlp_apart((unsigned)p->npairs, c, nv, v, NULL, p);
  for (int k = 0; k < p->npairs; ++k) worst = fmax(worst, c[k]);
  return worst;
}

typedef struct jl_budget {
  double xtol_rel;
  int evals_left;
  double deadline;          /* 0: none */
} jl_budget;

static int jl_budget_spent(const jl_budget *b) {
  return b->evals_left <= 0 || (b->deadline > 0 && jl_now() >= b->deadline);
}

static int jl_nlp_bounds(nlopt_opt opt, const jl_nlp *p) {
  int n = p->n, nv = 2 * n + 1;
  double *lb = malloc((size_t)nv * sizeof *lb), *ub = malloc((size_t)nv * sizeof *ub);
  if (!lb || !ub) { free(lb); free(ub); return JL_ERR_NOMEM; }
  /* The start has R = 1; a box well beyond it only stops runaway steps. */
  for (int i = 0; i < 2 * n; ++i) { lb[i] = -4.0; ub[i] = 4.0; }
  lb[2 * n] = p->R_floor;
  ub[2 * n] = 4.0;
  int bad = nlopt_set_lower_bounds(opt, lb) < 0 || nlopt_set_upper_bounds(opt, ub) < 0;
  free(lb);
  free(ub);
  return bad ? JL_ERR_INTERNAL : JL_OK;
}

static int jl_nlp_configure(nlopt_opt opt, jl_nlp *p, const jl_budget *b) {
  int n = p->n;
  int rc = jl_nlp_bounds(opt, p);
  if (rc) return rc;
  int bad = nlopt_set_min_objective(opt, jl_nlp_objective, p) < 0;
  bad = bad || nlopt_add_inequality_mconstraint(opt, (unsigned)n, jl_nlp_contain, p, p->tol) < 0;
  if (p->npairs > 0)
    bad = bad || nlopt_add_inequality_mconstraint(opt, (unsigned)p->npairs, jl_nlp_apart, p, p->tol) < 0;
  bad = bad || nlopt_set_xtol_rel(opt, b->xtol_rel) < 0;
  /* Coordinates near 0 never meet a relative test: also stop on absolute
   * steps, relative to the container (R = 1 here). */
  bad = bad || nlopt_set_xtol_abs1(opt, b->xtol_rel) < 0;
  bad = bad || nlopt_set_maxeval(opt, b->evals_left) < 0;
  if (b->deadline > 0) bad = bad || nlopt_set_maxtime(opt, fmax(b->deadline - jl_now(), 1e-3)) < 0;
  return bad ? JL_ERR_INTERNAL : JL_OK;
}

/* One SLSQP solve from v over the current pair set; v holds NLopt's best
 * point afterwards and p->last its last one, whatever the return code
 * (roundoff limits are normal this close to machine precision). */
static int jl_nlp_solve(jl_nlp *p, double *v, jl_budget *b) {
  int m = p->n > p->npairs ? p->n : p->npairs;
  double *tol = realloc(p->tol, (size_t)m * sizeof *tol);
  if (!tol) return JL_ERR_NOMEM;
  p->tol = tol;
  for (int k = 0; k < m; ++k) tol[k] = JL_POLISH_CTOL;
  nlopt_opt opt = nlopt_create(NLOPT_LD_SLSQP, (unsigned)(2 * p->n + 1));
  if (!opt) return JL_ERR_NOMEM;
  memcpy(p->last, v, (size_t)(2 * p->n + 1) * sizeof *v);
  int rc = jl_nlp_configure(opt, p, b);
  if (!rc) {
    double f = 0.0;
    nlopt_optimize(opt, v, &f);
    b->evals_left -= nlopt_get_numevals(opt);
  }
  nlopt_destroy(opt);
  return rc;
}

/* Scales v back to a packing, legalizes it by scaling and keeps it in best
 * when it is legal and no larger. */
static void jl_polish_consider(const double *v, double R0, jl_circle_packing *tmp,
                               jl_circle_packing *best) {
  int n = tmp->n;
  for (int i = 0; i < n; ++i) {
    if (!isfinite(v[i]) || !isfinite(v[n + i])) return;
    tmp->x[i] = v[i] * R0;
    tmp->y[i] = v[n + i] * R0;
  }
  jl_circle_packing_separate(tmp);
  jl_circle_check c;
  if (jl_circle_check_packing(tmp, JL_LEGAL_REL_TOL, &c) != JL_OK) return;
  if (!(tmp->R <= best->R)) return;
  size_t bytes = (size_t)n * sizeof(double);
  memcpy(best->x, tmp->x, bytes);
  memcpy(best->y, tmp->y, bytes);
  best->R = tmp->R;
}

/* Where the next solve may take R: at most one step down, never below the
 * area bound or the largest radius. Returns the shrink factor. */
static double jl_nlp_set_floor(jl_nlp *p, double R_cur) {
  double q = fmin(1.0, fmax(JL_POLISH_STEP, p->R_area / R_cur));
  p->R_floor = fmax(p->r_max, q * R_cur);
  return q;
}

/* Starts from best (legal) and replaces it by better legal points. */
static int jl_polish_rounds(jl_circle_packing *best, const jl_polish_opts *o,
                            jl_circle_packing *tmp) {
  int n = best->n, nv = 2 * n + 1;
  double R0 = best->R;
  jl_nlp p;
  double *v = malloc((size_t)nv * sizeof *v);
  int rc = v ? jl_nlp_init(&p, best, R0) : JL_ERR_NOMEM;
  if (rc) { free(v); if (v) jl_nlp_free(&p); return rc; }
  for (int i = 0; i < n; ++i) {
    v[i] = best->x[i] / R0;
    v[n + i] = best->y[i] / R0;
  }
  v[2 * n] = 1.0;
  jl_budget b = {o->xtol_rel > 0 ? o->xtol_rel : 1e-14, o->max_eval > 0 ? o->max_eval : 2000,
                 o->time_s > 0 ? jl_now() + o->time_s : 0.0};
  double near = n <= JL_POLISH_ALL_PAIRS_N ? INFINITY : JL_POLISH_NEAR;
  int floor_hit = 0, overlap = 0;
  double viol = 0.0;
  for (int round = 0; round < JL_POLISH_ROUNDS && !jl_budget_spent(&b); ++round) {
    double q = jl_nlp_set_floor(&p, v[2 * n]);
    if ((rc = jl_nlp_add_near(&p, v, round ? JL_POLISH_NEAR : near, q, &overlap))) break;
    /* Done when no unconstrained pair overlaps, SLSQP did not stop short of
     * feasibility, and R did not end on the step limit. */
    if (round > 0 && overlap == 0 && viol <= JL_POLISH_VIOL && !floor_hit) break;
    int evals = b.evals_left;
    if ((rc = jl_nlp_solve(&p, v, &b))) break;
    /* NLopt returns its best point feasible to within the slack, which can
     * be the start; the last iterate is usually far better and off by only
     * rounding. Both are legalized and the better is kept. */
    jl_polish_consider(v, R0, tmp, best);
    jl_polish_consider(p.last, R0, tmp, best);
    if (evals - b.evals_left < 3) break;   /* no progress to build on */
    memcpy(v, p.last, (size_t)nv * sizeof *v);
    viol = jl_nlp_violation(&p, v);
    floor_hit = p.R_floor > p.r_max && v[2 * n] <= p.R_floor * (1.0 + 1e-9);
    if (!(viol < INFINITY)) break;          /* NaN or worse: nothing to continue from */
  }
  free(v);
  jl_nlp_free(&p);
  return rc;
}

static int jl_packing_finite(const jl_circle_packing *pk) {
  for (int i = 0; i < pk->n; ++i)
    if (!isfinite(pk->x[i]) || !isfinite(pk->y[i]) || !isfinite(pk->r[i]) || !(pk->r[i] > 0))
      return 0;
  return 1;
}

int jl_circle_polish(jl_circle_packing *pk, const jl_polish_opts *opts, int *improved,
                     jl_error *err) {
  if (improved) *improved = 0;
  if (!pk || pk->n < 1 || !jl_packing_finite(pk))
    return jl_error_set(err, JL_ERR_INPUT, "polish: the packing has no circles or non-finite values");
  jl_polish_opts o;
  if (opts) o = *opts;
  else jl_polish_opts_default(&o);
  jl_circle_packing best, tmp;
  int rc = jl_circle_packing_copy(&best, pk, err);
  if (rc) return rc;
  if ((rc = jl_circle_packing_copy(&tmp, pk, err))) { jl_circle_packing_free(&best); return rc; }
  /* The input may overlap a little: its legalized form is the baseline. */
  double R_in = jl_circle_packing_update_R(&best);
  jl_circle_packing_separate(&best);
  if (pk->n <= JL_POLISH_MAX_N) rc = jl_polish_rounds(&best, &o, &tmp);
  if (rc == JL_ERR_NOMEM) rc = jl_error_set(err, rc, "polish: out of memory (n = %d)", pk->n);
  else if (rc) rc = jl_error_set(err, rc, "polish: NLopt setup failed (n = %d)", pk->n);
  size_t bytes = (size_t)pk->n * sizeof(double);
  memcpy(pk->x, best.x, bytes);
  memcpy(pk->y, best.y, bytes);
  pk->R = best.R;
  if (improved) *improved = best.R < R_in;
  jl_circle_packing_free(&best);
  jl_circle_packing_free(&tmp);
  return rc;
}
