/* Prox solvers for the contact problem xi = G Lambda + c (seed 000,
 * sec. 4.6): per contact
 *   Lambda_N <- max(0, Lambda_N - r_N xi_N)
 *   Lambda_T <- projection of Lambda_T - r_T xi_T on the disk mu Lambda_N (new value)
 * with r_N = alpha / G_ii(1,1), r_T = alpha / max(G_ii(2,2), G_ii(3,3)).
 *   JOR: Jacobi, double-buffered, parallel over contacts.
 *   APGD: JOR from Nesterov's extrapolated point (below).
 *   SOR: Gauss-Seidel in place; sequential contact order (the reference) or
 *        parallel by contact-graph colours (contact_graph.h).
 * Either runs on G (block CSR) or matrix-free: xi_i = c_i + W_i^T du with
 * du = M^-1 W Lambda kept per body (seed 002, fig. 3.6).
 * Stops when |L^{k+1} - L^k| <= |L^k| T_rel + T_abs for every component, or
 * at the iteration cap. A residual that keeps growing well above its
 * minimum (or turns non-finite) restarts from the initial impulses with alpha halved, at most 5 times. */
#ifndef JL_PROX_SOLVER_H
#define JL_PROX_SOLVER_H

#include <math.h>
#include <signal.h>
#include <stdint.h>

#include "contact_graph.h"
#include "contact_setup.h"
#include "error.h"
#include "hd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jl_team_pool;       /* team.h */

/* APGD: the JOR sweep with Nesterov's momentum (FISTA: Beck and Teboulle
 * 2009; for contact, Mazhar et al. 2015): each sweep starts from the
 * extrapolated point y = x_k + beta_k (x_k - x_{k-1}) instead of x_k, with
 * beta_k from Nesterov's sequence restarted at every solve (prox_math.h).
 * The same parallel sweep as JOR, far fewer sweeps on tall stacks; it
 * needs a smaller alpha (about 1 / the largest eigenvalue of diag(G)^-1 G:
 * 0.15 by default). */
typedef enum jl_solver_kind {
  JL_SOLVER_JOR = 0,
  JL_SOLVER_SOR = 1,
  JL_SOLVER_APGD = 2
} jl_solver_kind;

/* Relaxation alpha of each method when the scene gives none. */
#define JL_ALPHA_JOR 0.35
#define JL_ALPHA_SOR 1.0
#define JL_ALPHA_APGD 0.15
typedef enum jl_sor_order { JL_SOR_COLOURED = 0, JL_SOR_SEQUENTIAL = 1 } jl_sor_order;

/* Divergence: this many consecutive growing residuals that end above
 * JL_PROX_DIVERGE_FACTOR times the smallest one of the attempt; and the
 * restarts allowed. */
#define JL_PROX_DIVERGE_RUN 10
#define JL_PROX_DIVERGE_FACTOR 10.0
#define JL_PROX_MAX_RESTARTS 5

/* Contacts a thread should have per phase: below that, barriers cost more
 * than the work (the 1000-brick wall's colours of about 430 contacts gain
 * 1.6x on 2 threads; at 256 they ran on one). */
#define JL_PROX_MIN_PER_THREAD 128
/* Threads a solve uses at most. */
#define JL_PROX_MAX_THREADS 256

#define JL_MATRIX_FREE_AUTO (-1)
#define JL_MATRIX_FREE_BLOCKS 4

typedef struct jl_prox_opts {
  jl_solver_kind kind;
  double alpha;            /* relaxation: r = alpha / G_ii */
  double tol_abs, tol_rel;
  int max_iter;
  int warm_start;          /* used by the stepper: start from the last step's impulses */
  int matrix_free;         /* per-body velocity changes instead of G; the stepper
                              reads JL_MATRIX_FREE_AUTO as: when G would hold more
                              than JL_MATRIX_FREE_BLOCKS blocks per contact */
  jl_sor_order sor_order;
  int threads;
  struct jl_team_pool *pool; /* the caller's threads (team.h), or NULL: started per solve */
  int min_per_thread;      /* fewer threads when a phase between barriers (a colour,
                              or a JOR sweep) would give a thread fewer contacts */
  /* The CPU solve ends after the current iteration, not converged, once
   * *stop is set (SIGINT) or jl_time_now() reaches deadline (> 0): one
   * step can take 1e8 iterations. NULL and 0: never. */
  const volatile sig_atomic_t *stop;
  double deadline;
  int timing;              /* time the colouring and the waits at the team's barriers
                              (jl_prox_stats colour_s, wait_s) */
} jl_prox_opts;

/* Seed values: SOR alpha 1.0, tolerances 1e-7 (ERRATA), colouring on. */
void jl_prox_opts_default(jl_prox_opts *o);

/* "jor", "sor", "apgd": 0 and *kind set, or -1 for another name. */
int jl_solver_kind_parse(const char *name, jl_solver_kind *kind);
/* The method's name as parsed ("jor", ...). */
const char *jl_solver_kind_name(jl_solver_kind kind);
/* "JOR", "SOR", "APGD": for messages. */
const char *jl_solver_kind_upper(jl_solver_kind kind);
/* JL_ALPHA_JOR, _SOR or _APGD. */
double jl_solver_kind_alpha(jl_solver_kind kind);
/* Another method (a command line's --solver): kind set, and alpha set to
 * the method's default when the method changes. */
void jl_prox_opts_set_kind(jl_prox_opts *o, jl_solver_kind kind);

typedef struct jl_prox_stats {
  int iterations;
  double residual;         /* max |L^{k+1} - L^k| of the last iteration */
  int converged;
  int restarts;            /* divergence restarts */
  double alpha;            /* alpha of the last attempt */
  int colours;             /* SOR coloured: greedy colours (0 otherwise) */
  int groups;              /* SOR coloured: groups after merging */
  double colour_s;         /* timing: seconds spent colouring */
  double wait_s;           /* timing: seconds a thread of the team waited at its
                              barriers, the mean over the team (0 on one thread) */
} jl_prox_stats;

struct jl_prox_row;

typedef struct jl_prox_ws {
  double *lam2, *init;     /* 3 n */
  struct jl_prox_row *rows; /* matrix-free: the constants in sweep order (prox_rows.h) */
  double *lam_sweep;       /* 3 n: SOR's impulses in sweep order */
  double *terms;           /* 12 n: JOR's and APGD's M^-1 W lam per contact and side */
  int *body_term;          /* 2 n: per body CSR entry, 2 contact + side */
  double *y, *y2;          /* 3 y_cap, APGD's extrapolated points (an APGD solve grows them) */
  double *du;              /* 6 per body (matrix-free) */
  uint64_t *body_threads;  /* per body, coloured SOR on threads: the threads whose
                              share of a colour touches it (one bit each) */
  int cap, body_cap, y_cap, row_cap, term_cap;
  jl_colouring col;
} jl_prox_ws;

void jl_prox_ws_free(jl_prox_ws *ws);
/* Room for n contacts and nbodies bodies' du (0: none needed). */
int jl_prox_ws_reserve(jl_prox_ws *ws, int n, int nbodies, jl_error *err);

/* Solves for lambda (3 per contact: N, T1, T2), starting from its contents.
 * Needs p->has_g unless o->matrix_free. */
int jl_prox_solve(const jl_contact_problem *p, const jl_prox_opts *o, double *lambda,
                  jl_prox_ws *ws, jl_prox_stats *st, jl_error *err);

/* One prox step of one contact: out = prox(lam - R^-1 xi). */
JL_HD static inline void jl_prox_contact(const double xi[3], const double lam[3], double r_n,
                                         double r_t, double mu, double out[3]) {
  double ln = lam[0] - r_n * xi[0];
  if (!(ln > 0.0)) ln = 0.0;
  double t1 = lam[1] - r_t * xi[1], t2 = lam[2] - r_t * xi[2];
  double lim = mu * ln, tt = sqrt(t1 * t1 + t2 * t2);
  if (tt > lim) {
    double s = tt > 0.0 ? lim / tt : 0.0;
    t1 *= s;
    t2 *= s;
  }
  out[0] = ln;
  out[1] = t1;
  out[2] = t2;
}

#ifdef __cplusplus
}
#endif

#endif
