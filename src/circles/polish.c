/* Local polish: the smallest container around a fixed contact pattern is a
 * smooth NLP, which SLSQP solves to machine precision where the search's
 * relaxation only creeps. Variables v = (x_0..x_{n-1}, y_0..y_{n-1}, R), all
 * divided by the start R so that every value is of order 1.
 *
 * SLSQP's cost grows with the square of the constraint count, so only near
 * pairs are constrained, inside a trust region: each centre may move at
 * most w_i along x and along y in one solve, and every pair that could
 * meet within those moves is constrained. The result of each solve is then
 * feasible for all pairs; solves repeat, recentred, while the region limits
 * the answer. A tight start (a search result) needs one solve. */
#include "circles.h"

#include <math.h>
#include <nlopt.h>
#include <stdlib.h>
#include <string.h>

#include "stop_flag.h"
#include "timer.h"

/* SLSQP is dense: one step costs about (pairs + 5n) (2n)^2 flops, some
 * 0.5 s at n = 200, so larger packings are only legalized, not polished. */
#define JL_POLISH_MAX_N 200
/* Up to this many circles every pair is constrained and moves are free. */
#define JL_POLISH_ALL_PAIRS_N 12
/* Trust region half-width w_i = step (r_i + mean r): step starts small, as
 * a search result needs only tiny moves, and doubles each time a solve ends
 * on the region's edge, up to the maximum (more pairs cost more). */
#define JL_POLISH_STEP0 0.02
#define JL_POLISH_STEP_MAX 0.15
#define JL_POLISH_ROUNDS 100
/* Failed solves in a row, each in a smaller region, before giving up. */
#define JL_POLISH_RETRIES 3
/* Constraint slack NLopt grants when it calls a point feasible (scaled
 * units: containment in R^2, overlap relative to (r_i + r_j)^2). */
#define JL_POLISH_CTOL 1e-15
/* A solve ending further from feasibility than this is solved again. */
#define JL_POLISH_VIOL 1e-13

void jl_polish_opts_default(jl_polish_opts *o) {
  o->xtol_rel = 1e-14;
  o->max_eval = 2000;
  o->time_s = 0.0;
  o->deadline = 0.0;
  o->stop = NULL;
  o->iter_s = NULL;
  o->end = 0.0;
  o->slow = 1.0;
}

typedef struct jl_nlp {
  int n;
  int all_pairs;            /* small n: every pair, no trust region */
  double *r;                /* radii / R0 */
  double *w;                /* trust region half-widths */
  double r_max, mean;
  double step;              /* trust region scale, see JL_POLISH_STEP0 */
  int *pi, *pj;             /* the constrained pairs */
  int npairs, cap;
  double *lb, *ub;          /* bounds on v for the current solve */
  double *tol;              /* per-constraint slack, max(n, pairs) long;
                               scratch between solves */
  double *last;             /* the last point NLopt evaluated */
  nlopt_opt opt;            /* the solve under way (the objective may stop it) */
  volatile sig_atomic_t *stop; /* SIGINT: stop the solve at its next evaluation */
  double deadline;          /* the solve's end (0: none) */
  double end;               /* the run's end (0: none) */
  double t_eval, c_eval;    /* when the last evaluation came, and this thread's CPU
                               seconds then (t_eval 0: none yet) */
  double t_iter;            /* the most CPU seconds between two evaluations (0: none yet) */
  double slow;              /* wall over CPU seconds of this thread's last long
                               stretch between evaluations (or the caller's), >= 1 */
} jl_nlp;

/* An SLSQP iteration cannot be cut (NLopt looks at the clock between
 * evaluations), and at a few hundred circles one lasts up to a second. An
 * iteration is taken to last the most CPU seconds one has taken so far, or
 * before the run has seen one JL_POLISH_ITER_N3_S n^3 (200 equal circles:
 * 1 s, the longest measured on a thread of the 2-core development VM,
 * 0.5-1.1 s), times how much slower than its CPU time the thread now runs
 * (slow: other jobs on the machine). No iteration starts that would end past
 * the solve's deadline (a round's polish, or the run's end); nor one that
 * could end past the run's end: as long as JL_POLISH_ITER_MARGIN times that,
 * since a machine that gets busier mid-iteration (the test suite's other
 * jobs arriving on 2 cores) made one take twice as long. Without the slowdown
 * a run of --time 3 on 2 threads under six other busy processes ended at
 * 5.1-5.5 s: its first iteration, taken to last 1 s, lasted 4. */
#define JL_POLISH_ITER_MARGIN 2.0
#define JL_POLISH_ITER_N3_S 1.25e-7
/* Stretches between evaluations shorter than this do not measure the slowdown
 * (a time slice lost to another job would count a hundredfold). */
#define JL_POLISH_SLOW_MIN_S 0.02

static int jl_nlp_late(const jl_nlp *p, double now) {
  double n = p->n, t = p->t_iter > 0 ? p->t_iter : JL_POLISH_ITER_N3_S * n * n * n;
  double w = t * p->slow;
  return (p->deadline > 0 && now + (p->t_iter > 0 ? w : 0.0) > p->deadline) ||
         (p->end > 0 && now + JL_POLISH_ITER_MARGIN * w > p->end);
}

static void jl_nlp_free(jl_nlp *p) {
  free(p->r);
  free(p->w);
  free(p->pi);
  free(p->pj);
  free(p->lb);
  free(p->ub);
  free(p->tol);
  free(p->last);
  memset(p, 0, sizeof *p);
}

static int jl_nlp_init(jl_nlp *p, const jl_circle_packing *pk, double R0) {
  memset(p, 0, sizeof *p);
  int n = pk->n, nv = 2 * n + 1;
  p->n = n;
  p->all_pairs = n <= JL_POLISH_ALL_PAIRS_N;
  p->r = malloc((size_t)n * sizeof *p->r);
  p->w = malloc((size_t)n * sizeof *p->w);
  p->lb = malloc((size_t)nv * sizeof *p->lb);
  p->ub = malloc((size_t)nv * sizeof *p->ub);
  p->last = malloc((size_t)nv * sizeof *p->last);
  p->tol = malloc((size_t)n * sizeof *p->tol);
  if (!p->r || !p->w || !p->lb || !p->ub || !p->last || !p->tol) return JL_ERR_NOMEM;
  for (int i = 0; i < n; ++i) {
    p->r[i] = pk->r[i] / R0;
    p->r_max = fmax(p->r_max, p->r[i]);
    p->mean += p->r[i] / n;
  }
  p->step = JL_POLISH_STEP0;
  return JL_OK;
}

/* Large circles may move further; small ones still move by a fair share
 * of a typical radius, so they cannot pin the big ones in place. */
static void jl_nlp_widths(jl_nlp *p) {
  for (int i = 0; i < p->n; ++i) p->w[i] = p->step * (p->r[i] + p->mean);
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
  return JL_OK;
}

/* The trust region around v and the pairs that could meet inside it: a
 * centre moves at most sqrt(2) w_i, so a pair farther apart than
 * r_i + r_j + sqrt(2) (w_i + w_j) stays apart whatever the solve does. */
static int jl_nlp_region(jl_nlp *p, const double *v) {
  int n = p->n;
  jl_nlp_widths(p);
  p->npairs = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      double dx = v[i] - v[j], dy = v[n + i] - v[n + j];
      double reach = p->r[i] + p->r[j] + 1.4142135623730951 * (1.0 + 1e-9) * (p->w[i] + p->w[j]);
      if (p->all_pairs || dx * dx + dy * dy < reach * reach)
        if (jl_nlp_add_pair(p, i, j)) return JL_ERR_NOMEM;
    }
  for (int i = 0; i < n; ++i) {
    double w = p->all_pairs ? 4.0 : p->w[i];
    p->lb[i] = v[i] - w;
    p->ub[i] = v[i] + w;
    p->lb[n + i] = v[n + i] - w;
    p->ub[n + i] = v[n + i] + w;
  }
  p->lb[2 * n] = p->r_max;
  p->ub[2 * n] = fmax(4.0, 2.0 * v[2 * n]);
  return JL_OK;
}

/* 1 when some centre of v ended on its trust region's edge. */
static int jl_nlp_on_edge(const jl_nlp *p, const double *v) {
  if (p->all_pairs) return 0;
  for (int i = 0; i < 2 * p->n; ++i) {
    double w = p->w[i % p->n], margin = 1e-6 * w;
    if (v[i] <= p->lb[i] + margin || v[i] >= p->ub[i] - margin) return 1;
  }
  return 0;
}

static double jl_nlp_objective(unsigned nv, const double *v, double *grad, void *data) {
  jl_nlp *p = data;
  memcpy(p->last, v, nv * sizeof *v);
  if (jl_stop_requested(p->stop) && p->opt) nlopt_force_stop(p->opt);
  /* NLopt's maxtime is checked between evaluations: stop where the next
   * iteration would be late (jl_nlp_late) */
  if ((p->deadline > 0 || p->end > 0) && p->opt) {
    double now = jl_time_now(), cpu = jl_cpu_now(0);
    if (p->t_eval > 0) {
      double wall = now - p->t_eval, used = cpu - p->c_eval;
      p->t_iter = fmax(p->t_iter, used);
      if (wall > JL_POLISH_SLOW_MIN_S) p->slow = fmax(1.0, wall / fmax(used, 1e-6));
    }
    if (jl_nlp_late(p, now)) nlopt_force_stop(p->opt);
    p->t_eval = now;
    p->c_eval = cpu;
  }
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
  volatile sig_atomic_t *stop;
} jl_budget;

static int jl_budget_spent(const jl_budget *b) {
  return b->evals_left <= 0 || (b->deadline > 0 && jl_time_now() >= b->deadline) ||
         jl_stop_requested(b->stop);
}

static int jl_nlp_configure(nlopt_opt opt, jl_nlp *p, const jl_budget *b) {
  int n = p->n;
  int bad = nlopt_set_lower_bounds(opt, p->lb) < 0 || nlopt_set_upper_bounds(opt, p->ub) < 0;
  bad = bad || nlopt_set_min_objective(opt, jl_nlp_objective, p) < 0;
  bad = bad || nlopt_add_inequality_mconstraint(opt, (unsigned)n, jl_nlp_contain, p, p->tol) < 0;
  if (p->npairs > 0)
    bad = bad || nlopt_add_inequality_mconstraint(opt, (unsigned)p->npairs, jl_nlp_apart, p, p->tol) < 0;
  bad = bad || nlopt_set_xtol_rel(opt, b->xtol_rel) < 0;
  /* Coordinates near 0 never meet a relative test: also stop on absolute
   * steps, relative to the container (R = 1 here). */
  bad = bad || nlopt_set_xtol_abs1(opt, b->xtol_rel) < 0;
  bad = bad || nlopt_set_maxeval(opt, b->evals_left) < 0;
  if (b->deadline > 0) bad = bad || nlopt_set_maxtime(opt, fmax(b->deadline - jl_time_now(), 1e-3)) < 0;
  return bad ? JL_ERR_INTERNAL : JL_OK;
}

/* One SLSQP solve from v over the current region; v holds NLopt's best
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
    p->opt = opt;
    p->stop = b->stop;
    p->deadline = b->deadline;
    p->t_eval = 0.0;
    nlopt_optimize(opt, v, &f);
    p->opt = NULL;
    b->evals_left -= nlopt_get_numevals(opt);
  }
  nlopt_destroy(opt);
  return rc;
}

/* Scales v back to a packing, legalizes it by scaling and keeps it in best
 * when it is legal and smaller; returns 1 when kept. */
static int jl_polish_consider(const double *v, double R0, jl_circle_packing *tmp,
                              jl_circle_packing *best) {
  int n = tmp->n;
  for (int i = 0; i < n; ++i) {
    if (!isfinite(v[i]) || !isfinite(v[n + i])) return 0;
    tmp->x[i] = v[i] * R0;
    tmp->y[i] = v[n + i] * R0;
  }
  jl_circle_packing_separate(tmp);
  jl_circle_check c;
  if (jl_circle_check_packing(tmp, JL_LEGAL_REL_TOL, &c) != JL_OK) return 0;
  if (!(tmp->R < best->R)) return 0;
  size_t bytes = (size_t)n * sizeof(double);
  memcpy(best->x, tmp->x, bytes);
  memcpy(best->y, tmp->y, bytes);
  best->R = tmp->R;
  return 1;
}

static void jl_nlp_load(double *v, const jl_circle_packing *pk, double R0) {
  int n = pk->n;
  for (int i = 0; i < n; ++i) {
    v[i] = pk->x[i] / R0;
    v[n + i] = pk->y[i] / R0;
  }
  v[2 * n] = pk->R / R0;
}

/* Starts from best (legal) and replaces it by better legal points. Each
 * round starts from the best legal packing so far. */
static int jl_polish_rounds(jl_circle_packing *best, const jl_polish_opts *o,
                            jl_circle_packing *tmp) {
  int n = best->n, nv = 2 * n + 1;
  double R0 = best->R;
  jl_nlp p;
  double *v = malloc((size_t)nv * sizeof *v);
  int rc = v ? jl_nlp_init(&p, best, R0) : JL_ERR_NOMEM;
  if (rc) { free(v); if (v) jl_nlp_free(&p); return rc; }
  double deadline = o->time_s > 0 ? jl_time_now() + o->time_s : 0.0;
  if (o->deadline > 0 && (deadline == 0.0 || o->deadline < deadline)) deadline = o->deadline;
  jl_budget b = {o->xtol_rel > 0 ? o->xtol_rel : 1e-14, o->max_eval > 0 ? o->max_eval : 2000,
                 deadline, o->stop};
  int fails = 0;
  p.t_iter = o->iter_s && *o->iter_s > 0 ? *o->iter_s : 0.0;
  p.slow = o->slow > 1.0 ? o->slow : 1.0;
  p.deadline = deadline;
  p.end = o->end;
  for (int round = 0; round < JL_POLISH_ROUNDS && !jl_budget_spent(&b); ++round) {
    if (jl_nlp_late(&p, jl_time_now())) break;
    double R_before = best->R;
    jl_nlp_load(v, best, R0);
    if ((rc = jl_nlp_region(&p, v))) break;
    if ((rc = jl_nlp_solve(&p, v, &b))) break;
    /* NLopt returns its best point feasible to within the slack, which can
     * be the start; the last iterate is usually far better and off by only
     * rounding. Both are legalized and the better is kept. */
    int kept = jl_polish_consider(v, R0, tmp, best);
    kept |= jl_polish_consider(p.last, R0, tmp, best);
    if (!kept || best->R > R_before * (1.0 - 1e-15)) {
      /* SLSQP can lose its way in a large region: retry in a smaller one.
       * In the smallest, no progress means a local optimum. */
      if (p.step <= JL_POLISH_STEP0 || ++fails > JL_POLISH_RETRIES) break;
      p.step = fmax(0.25 * p.step, JL_POLISH_STEP0);
      continue;
    }
    fails = 0;
    /* Go on while the region cut the solve short (with a larger region) or
     * SLSQP stopped short of feasibility; otherwise this is a local optimum
     * of the whole problem. */
    int edge = jl_nlp_on_edge(&p, p.last);
    if (!edge && jl_nlp_violation(&p, p.last) <= JL_POLISH_VIOL) break;
    if (edge) p.step = fmin(2.0 * p.step, JL_POLISH_STEP_MAX);
  }
  if (o->iter_s) *o->iter_s = p.t_iter;
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
  jl_circle_packing best = {0}, tmp = {0};
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
