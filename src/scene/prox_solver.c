/* JOR and SOR prox iterations on G or matrix-free, sequential or by colours;
 * the per-contact and per-body arithmetic and the stop test are
 * prox_math.h's, shared with the device JOR and its twin. */
#include "prox_solver.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "prox_math.h"
#include "prox_rows.h"
#include "stop_flag.h"
#include "team.h"
#include "timer.h"

void jl_prox_opts_default(jl_prox_opts *o) {
  memset(o, 0, sizeof *o);
  o->kind = JL_SOLVER_SOR;
  o->alpha = JL_ALPHA_SOR;
  o->tol_abs = 1e-7;
  o->tol_rel = 1e-7;
  o->max_iter = 1000;
  o->warm_start = 1;
  o->matrix_free = JL_MATRIX_FREE_AUTO;
  o->sor_order = JL_SOR_COLOURED;
  o->threads = 1;
  o->min_per_thread = JL_PROX_MIN_PER_THREAD;
}

/* By jl_solver_kind. */
static const char *const jl_solver_names[] = {"jor", "sor", "apgd"};
static const char *const jl_solver_upper[] = {"JOR", "SOR", "APGD"};
#define JL_SOLVER_KINDS ((int)(sizeof jl_solver_names / sizeof *jl_solver_names))

int jl_solver_kind_parse(const char *name, jl_solver_kind *kind) {
  for (int k = 0; k < JL_SOLVER_KINDS; ++k)
    if (strcmp(name, jl_solver_names[k]) == 0) {
      *kind = (jl_solver_kind)k;
      return 0;
    }
  return -1;
}

const char *jl_solver_kind_name(jl_solver_kind kind) {
  return (int)kind >= 0 && (int)kind < JL_SOLVER_KINDS ? jl_solver_names[kind] : "?";
}

const char *jl_solver_kind_upper(jl_solver_kind kind) {
  return (int)kind >= 0 && (int)kind < JL_SOLVER_KINDS ? jl_solver_upper[kind] : "?";
}

double jl_solver_kind_alpha(jl_solver_kind kind) {
  return kind == JL_SOLVER_JOR ? JL_ALPHA_JOR : kind == JL_SOLVER_APGD ? JL_ALPHA_APGD : JL_ALPHA_SOR;
}

void jl_prox_opts_set_kind(jl_prox_opts *o, jl_solver_kind kind) {
  if (o->kind != kind) o->alpha = jl_solver_kind_alpha(kind);
  o->kind = kind;
}

void jl_prox_ws_free(jl_prox_ws *ws) {
  if (!ws) return;
  free(ws->lam2);
  free(ws->init);
  free(ws->rows);
  free(ws->lam_sweep);
  free(ws->terms);
  free(ws->body_term);
  free(ws->y);
  free(ws->y2);
  free(ws->du);
  free(ws->body_threads);
  jl_colouring_free(&ws->col);
  memset(ws, 0, sizeof *ws);
}

/* APGD's extrapolated points, as many as the impulses (only an APGD solve
 * asks: a million-contact JOR or SOR solve would carry 48 MB of them). */
static int jl_prox_ws_reserve_y(jl_prox_ws *ws, jl_error *err) {
  if (ws->y_cap >= ws->cap) return JL_OK;
  double *y = realloc(ws->y, 3 * sizeof(double) * (size_t)ws->cap);
  if (y) ws->y = y;
  double *y2 = realloc(ws->y2, 3 * sizeof(double) * (size_t)ws->cap);
  if (y2) ws->y2 = y2;
  if (!y || !y2) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", ws->cap);
  ws->y_cap = ws->cap;
  return JL_OK;
}

/* The packed rows and the sweep-ordered impulses, as many as the impulses
 * (only a matrix-free solve asks); with_terms: also JOR's and APGD's terms. */
static int jl_prox_ws_reserve_rows(jl_prox_ws *ws, int with_terms, jl_error *err) {
  if (ws->row_cap < ws->cap) {
    jl_prox_row *r = realloc(ws->rows, sizeof(jl_prox_row) * (size_t)ws->cap);
    if (r) ws->rows = r;
    double *l = realloc(ws->lam_sweep, 3 * sizeof(double) * (size_t)ws->cap);
    if (l) ws->lam_sweep = l;
    if (!r || !l) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", ws->cap);
    ws->row_cap = ws->cap;
  }
  if (with_terms && ws->term_cap < ws->cap) {
    double *t = realloc(ws->terms, 12 * sizeof(double) * (size_t)ws->cap);
    if (t) ws->terms = t;
    int *bt = realloc(ws->body_term, 2 * sizeof(int) * (size_t)ws->cap);
    if (bt) ws->body_term = bt;
    if (!t || !bt) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", ws->cap);
    ws->term_cap = ws->cap;
  }
  return JL_OK;
}

int jl_prox_ws_reserve(jl_prox_ws *ws, int n, int nbodies, jl_error *err) {
  if (n > ws->cap) {
    int cap = n + n / 2 + 16;
    double *a = realloc(ws->lam2, 3 * sizeof(double) * (size_t)cap);
    if (a) ws->lam2 = a;
    double *b = realloc(ws->init, 3 * sizeof(double) * (size_t)cap);
    if (b) ws->init = b;
    if (!a || !b) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", n);
    ws->cap = cap;
  }
  if (nbodies > ws->body_cap) {
    double *d = realloc(ws->du, 6 * sizeof(double) * (size_t)nbodies);
    if (d) ws->du = d;
    uint64_t *t = realloc(ws->body_threads, sizeof(uint64_t) * (size_t)nbodies);
    if (t) ws->body_threads = t;
    if (!d || !t) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d bodies", nbodies);
    ws->body_cap = nbodies;
  }
  return JL_OK;
}

/* Coloured SOR waits on its neighbours instead of the team between colours
 * up to this many threads (jl_phase_wait); spins before a sched_yield. */
#define JL_PROX_NBR_THREADS 64
#define JL_PROX_PHASE_SPINS 4000

typedef struct jl_solve {
  const jl_contact_problem *p;
  const jl_prox_opts *o;
  double *lam, *lam2, *init, *du;
  double *y, *y2;          /* APGD */
  jl_prox_row *rows;       /* matrix-free: the constants in sweep order */
  double *lam_sweep;       /* matrix-free SOR: the impulses in sweep order */
  double *terms;           /* matrix-free JOR, APGD: 12 per contact, M^-1 W lam per side */
  int *body_term;          /* per body CSR entry: 2 contact + side, its term */
  /* per thread, two sets used in turn by iteration (a thread writes the
   * next set while another may still read this one): max |dL|, all
   * components within tolerance; thread 0's stop request (signal, deadline) */
  double t_res[2][JL_PROX_MAX_THREADS];
  int t_ok[2][JL_PROX_MAX_THREADS];
  int t_stop[2];
  double t_wait[JL_PROX_MAX_THREADS]; /* timing: each thread's seconds at barriers */
  int team_size;
  /* coloured SOR on up to 64 threads: each thread's colours (phases) done,
   * a cache line each, and per body the threads that touch it */
  struct {
    _Alignas(64) int done;
  } t_phase[JL_PROX_NBR_THREADS];
  uint64_t *body_threads;
  jl_pm_state pm;          /* iterations, residual, alpha, stop test (prox_math.h) */
  jl_prox_stats st;
} jl_solve;

/* du_K += (M^-1 W_iK) d for both dynamic bodies of contact i. */
static void jl_du_add(jl_solve *s, int i, const double d[3]) {
  const jl_contact_problem *p = s->p;
  if (p->ka[i] >= 0) jl_sm_mw_add(p->frame, p->irx, p->im, i, 0, d, s->du + 6 * (size_t)p->ka[i]);
  if (p->kb[i] >= 0) jl_sm_mw_add(p->frame, p->irx, p->im, i, 1, d, s->du + 6 * (size_t)p->kb[i]);
}

/* du of bodies [lo, hi) from scratch, contacts in ascending order. */
static void jl_du_rebuild(jl_solve *s, const double *lam, int lo, int hi) {
  const jl_contact_problem *p = s->p;
  for (int k = lo; k < hi; ++k)
    jl_pm_du_body(k, p->body_ptr, p->body_contact, p->ka, p->frame, p->irx, p->im, lam,
                  s->du + 6 * (size_t)k);
}

/* du of bodies [lo, hi) from the contacts' terms, contacts in ascending
 * order: jl_pm_du_body's additions of the same terms, the same bits. */
static void jl_du_from_terms(jl_solve *s, int lo, int hi) {
  const jl_contact_problem *p = s->p;
  for (int k = lo; k < hi; ++k) {
    double acc[6] = {0, 0, 0, 0, 0, 0};
    for (int e = p->body_ptr[k]; e < p->body_ptr[k + 1]; ++e) {
      const double *t = s->terms + 6 * (size_t)s->body_term[e];
      for (int c = 0; c < 6; ++c) acc[c] += t[c];
    }
    for (int c = 0; c < 6; ++c) s->du[6 * (size_t)k + c] = acc[c];
  }
}

/* JOR and APGD on the rows (contact order): contact i from src into dst,
 * APGD also y = dst + beta (dst - prev) into ydst; then the contact's terms
 * M^-1 W_iK lam (jl_sm_mw_comp's) from dst (JOR) or ydst (APGD), which du
 * sums next. */
static void jl_update_row(jl_solve *s, int i, const double *src, double *dst, const double *prev,
                          double *ydst, double beta, double *res, int *ok) {
  const jl_prox_row *r = s->rows + i;
  double xi[3], out[3];
  jl_prox_row_xi(r, s->du, xi);
  const double *old = src + 3 * (size_t)i;
  double q = jl_pm_update_r(xi, old, r->r[0], r->r[1], r->mu, s->o->tol_rel, s->o->tol_abs, out, ok);
  if (!(q <= *res)) *res = q;
  double *w = dst + 3 * (size_t)i;
  w[0] = out[0]; w[1] = out[1]; w[2] = out[2];
  const double *lam = w;
  if (ydst) {
    jl_pm_extrapolate(w, prev + 3 * (size_t)i, beta, ydst + 3 * (size_t)i);
    lam = ydst + 3 * (size_t)i;
  }
  double *t = s->terms + 12 * (size_t)i;
  for (int side = 0; side < 2; ++side)
    if ((side ? r->kb : r->ka) >= 0)
      for (int c = 0; c < 6; ++c)
        t[6 * side + c] = jl_sm_mw_comp_rows(r->frame, r->irx + 9 * side, r->im[side], side, lam, c);
}

/* Updates contact i from src into dst (same array for SOR); tracks the residual. */
static void jl_update(jl_solve *s, int i, double alpha, const double *src, double *dst, double *res,
                      int *ok) {
  const jl_contact_problem *p = s->p;
  double xi[3], out[3];
  if (s->o->matrix_free)
    jl_pm_xi_mf(i, p->c, p->ka, p->kb, p->frame, p->rx, s->du, xi);
  else
    jl_pm_xi_g(i, p->c, p->rowptr, p->col, p->blocks, src, xi);
  const double *old = src + 3 * (size_t)i;
  double r = jl_pm_update(xi, old, alpha, p->diag + 2 * (size_t)i, p->mu[i], s->o->tol_rel,
                          s->o->tol_abs, out, ok);
  if (!(r <= *res)) *res = r;
  if (s->o->matrix_free && src == dst) {
    double d[3] = {out[0] - old[0], out[1] - old[1], out[2] - old[2]};
    jl_du_add(s, i, d);
  }
  double *w = dst + 3 * (size_t)i;
  w[0] = out[0]; w[1] = out[1]; w[2] = out[2];
}

#ifdef JL_PROX_ROW_PAIRS
/* Rows r0 and r1 update independently: no dynamic body in common, neither
 * with one body on both sides (never made by the narrow phase). */
static int jl_rows_apart(const jl_prox_row *r0, const jl_prox_row *r1) {
  if ((r0->ka >= 0 && r0->ka == r0->kb) || (r1->ka >= 0 && r1->ka == r1->kb)) return 0;
  if (r0->ka >= 0 && (r0->ka == r1->ka || r0->ka == r1->kb)) return 0;
  if (r0->kb >= 0 && (r0->kb == r1->ka || r0->kb == r1->kb)) return 0;
  return 1;
}
#endif

/* Matrix-free SOR on the rows: slots [lo, hi) of the sweep order, forward
 * or backward. A colour's share (colour) goes forward: neighbouring slots
 * of two units are independent and go two at a time where SSE2 is there,
 * slots of one unit one by one. */
static void jl_sor_rows(jl_solve *s, int lo, int hi, int back, int colour, double *res, int *ok) {
  double tr = s->o->tol_rel, ta = s->o->tol_abs, *lam = s->lam_sweep, *du = s->du;
  const jl_prox_row *rows = s->rows;
  double m = *res;
#ifdef JL_PROX_ROW_PAIRS
  if (colour) {
    for (int e = lo; e < hi;) {
      if (e + 1 < hi && jl_rows_apart(rows + e, rows + e + 1)) {
        jl_prox_row_sor2(rows + e, rows + e + 1, tr, ta, lam + 3 * (size_t)e,
                         lam + 3 * (size_t)(e + 1), du, &m, ok);
        e += 2;
      } else {
        double q = jl_prox_row_sor(rows + e, tr, ta, lam + 3 * (size_t)e, du, ok);
        if (!(q <= m)) m = q;
        e += 1;
      }
    }
    *res = m;
    return;
  }
#else
  (void)colour;
#endif
  if (back) {
    for (int e = hi - 1; e >= lo; --e) {
      double q = jl_prox_row_sor(rows + e, tr, ta, lam + 3 * (size_t)e, du, ok);
      if (!(q <= m)) m = q;
    }
  } else {
    for (int e = lo; e < hi; ++e) {
      double q = jl_prox_row_sor(rows + e, tr, ta, lam + 3 * (size_t)e, du, ok);
      if (!(q <= m)) m = q;
    }
  }
  *res = m;
}

/* Impulses between contact order (lam) and sweep order (sweep), slots [lo, hi). */
static void jl_to_sweep(const int *order, const double *lam, double *sweep, int lo, int hi) {
  for (int e = lo; e < hi; ++e) memcpy(sweep + 3 * (size_t)e, lam + 3 * (size_t)order[e], 3 * sizeof(double));
}
static void jl_from_sweep(const int *order, const double *sweep, double *lam, int lo, int hi) {
  for (int e = lo; e < hi; ++e) memcpy(lam + 3 * (size_t)order[e], sweep + 3 * (size_t)e, 3 * sizeof(double));
}

/* A signal or the deadline asks the solve to stop. */
static int jl_stop_asked(const jl_prox_opts *o) {
  return jl_stop_requested(o->stop) || (o->deadline > 0.0 && jl_time_now() >= o->deadline);
}

/* Every thread after each iteration, on its own copy of the state: the
 * threads' residuals (set par of nt) joined, then the stop test (converged,
 * diverging, or on). Max and AND are exact and thread 0's stop request is
 * one flag, so every copy takes the same decision without a second barrier. */
static void jl_decide(const jl_solve *s, jl_pm_state *pm, int par, int nt) {
  double res = 0.0;
  int ok = 1;
  for (int t = 0; t < nt; ++t) {
    if (!(s->t_res[par][t] <= res)) res = s->t_res[par][t];
    ok &= s->t_ok[par][t];
  }
  jl_pm_decide(pm, res, ok, s->o->max_iter);
  /* a signal or the deadline: the iterate as it stands (a restart is not begun) */
  if (pm->state != JL_PM_STOP && s->t_stop[par]) pm->state = JL_PM_STOP;
}

/* Thread tid's residual of the iteration into set par (thread 0: also the
 * stop request), before the iteration's last barrier. */
static void jl_post(jl_solve *s, int par, int tid, double res, int ok) {
  s->t_res[par][tid] = res;
  s->t_ok[par][tid] = ok;
  if (tid == 0) s->t_stop[par] = jl_stop_asked(s->o);
}

/* The team's barrier; with timing, the thread's wait added to *wait. */
static void jl_solve_sync(const jl_solve *s, jl_team *team, double *wait) {
  if (!s->o->timing) {
    jl_team_sync(team);
    return;
  }
  double t0 = jl_time_now();
  jl_team_sync(team);
  *wait += jl_time_now() - t0;
}

/* Coloured SOR between two colours of one iteration needs no barrier of the
 * whole team: a thread's share of the next colour may begin once every
 * thread that touches one of its bodies, in any colour, has finished the
 * last one (its neighbours: contacts are numbered by body pair and the
 * shares are contiguous, so with bodies in spatial order a thread has a few).
 * A thread that waits on its neighbours at every colour is never a colour
 * ahead of one and never behind one, so no du row is read or written by two
 * threads at once, and the sweep's order and bits are the barrier's; the
 * iteration's end keeps the barrier (the stop test). Up to 64 threads (the
 * neighbour set is a word). */
static void jl_phase_done(jl_solve *s, int tid, int phase) {
  __atomic_store_n(&s->t_phase[tid].done, phase, __ATOMIC_RELEASE);
}

static void jl_phase_wait(const jl_solve *s, uint64_t nbrs, int phase, double *wait) {
  double t0 = s->o->timing ? jl_time_now() : 0.0;
  for (uint64_t m = nbrs; m; m &= m - 1) {
    int u = __builtin_ctzll(m);
    for (int spins = 0; __atomic_load_n(&s->t_phase[u].done, __ATOMIC_ACQUIRE) < phase; ++spins)
      if (spins >= JL_PROX_PHASE_SPINS) {
        sched_yield();
        spins = 0;
      }
  }
  if (s->o->timing) *wait += jl_time_now() - t0;
}

/* Thread tid's share of colour group g: [*lo, *hi) of the sweep order,
 * whole segments (a unit is one thread's), about a 1/nt of the group's
 * contacts; the merged group of small colours is thread 0's alone. */
static int jl_seg_at(const jl_colouring *col, int g, int slot) {
  /* the first segment of group g that starts at or after slot */
  int a = col->group_seg[g], b = col->group_seg[g + 1];
  while (a < b) {
    int m = a + (b - a) / 2;
    if (col->seg_ptr[m] < slot) a = m + 1;
    else b = m;
  }
  return col->seg_ptr[a];
}

static void jl_group_share(const jl_colouring *col, int g, int tid, int nt, int *lo, int *hi) {
  int a = col->group_ptr[g], b = col->group_ptr[g + 1];
  if (col->merged && g == col->groups - 1) {
    *lo = a;
    *hi = tid == 0 ? b : a;
    return;
  }
  jl_team_share(b - a, tid, nt, lo, hi);
  *lo = jl_seg_at(col, g, a + *lo);
  *hi = jl_seg_at(col, g, a + *hi);
}

/* Thread tid's neighbours (jl_phase_wait): body_threads cleared over the
 * thread's bodies [blo, bhi), a barrier, every thread marks the bodies of
 * its shares, a barrier, then the union over its shares' bodies. */
static uint64_t jl_phase_neighbours(jl_solve *s, const jl_colouring *col, int tid, int nt,
                                    int blo, int bhi, jl_team *team, double *wait) {
  const jl_contact_problem *p = s->p;
  const int *order = col->order;
  for (int k = blo; k < bhi; ++k) s->body_threads[k] = 0;
  jl_solve_sync(s, team, wait);
  uint64_t bit = 1ull << tid;
  for (int g = 0; g < col->groups; ++g) {
    int lo, hi;
    jl_group_share(col, g, tid, nt, &lo, &hi);
    for (int e = lo; e < hi; ++e) {
      int body[2] = {p->ka[order[e]], p->kb[order[e]]};
      for (int q = 0; q < 2; ++q)
        if (body[q] >= 0 && !(__atomic_load_n(&s->body_threads[body[q]], __ATOMIC_RELAXED) & bit))
          __atomic_fetch_or(&s->body_threads[body[q]], bit, __ATOMIC_RELAXED);
    }
  }
  jl_solve_sync(s, team, wait);
  uint64_t nbrs = 0;
  for (int g = 0; g < col->groups; ++g) {
    int lo, hi;
    jl_group_share(col, g, tid, nt, &lo, &hi);
    for (int e = lo; e < hi; ++e) {
      int a = p->ka[order[e]], b = p->kb[order[e]];
      if (a >= 0) nbrs |= s->body_threads[a];
      if (b >= 0) nbrs |= s->body_threads[b];
    }
  }
  return nbrs & ~bit;
}

typedef struct jl_team_solve {
  jl_solve *s;
  const jl_colouring *col;
} jl_team_solve;

static void jl_solve_team(void *ctx, int tid, jl_team *team) {
  jl_team_solve *ts = ctx;
  jl_solve *s = ts->s;
  const jl_contact_problem *p = s->p;
  int nt = team->size, n = p->n;
  double wait = 0.0;
  int clo, chi, blo, bhi;
  jl_team_share(n, tid, nt, &clo, &chi);
  jl_team_share(p->nbodies, tid, nt, &blo, &bhi);
  int apgd = s->o->kind == JL_SOLVER_APGD, jor = s->o->kind == JL_SOLVER_JOR || apgd;
  double *src = s->lam, *dst = jor ? s->lam2 : s->lam;
  /* APGD: the sweep reads the extrapolated point ysrc and writes x into dst
   * and the next point into ydst (JOR: x only, and du follows x) */
  double *ysrc = s->y, *ydst = s->y2;
  /* matrix-free: the rows; coloured SOR: in colour order with the impulses
   * in sweep order; JOR, APGD: in contact order, with each body's terms */
  const int *order = s->rows && !jor ? ts->col->order : NULL;
  /* coloured SOR on several threads: colour to colour by neighbours */
  int p2p = order && nt > 1 && nt <= JL_PROX_NBR_THREADS;
  uint64_t nbrs = p2p ? jl_phase_neighbours(s, ts->col, tid, nt, blo, bhi, team, &wait) : 0;
  if (order) {
    /* each thread packs the rows it sweeps, so they start in its cache */
    for (int g = 0; g < ts->col->groups; ++g) {
      int lo, hi;
      jl_group_share(ts->col, g, tid, nt, &lo, &hi);
      jl_prox_rows_pack(p, order, s->pm.alpha, lo, hi, s->rows);
      jl_to_sweep(order, s->lam, s->lam_sweep, lo, hi);
    }
  } else if (s->rows) {
    jl_prox_rows_pack(p, NULL, s->pm.alpha, clo, chi, s->rows);
    for (int k = blo; k < bhi; ++k)
      for (int e = p->body_ptr[k]; e < p->body_ptr[k + 1]; ++e) {
        int i = p->body_contact[e];
        s->body_term[e] = 2 * i + (p->ka[i] == k ? 0 : 1);
      }
  }
  if (s->o->matrix_free) jl_du_rebuild(s, apgd ? ysrc : src, blo, bhi);
  jl_solve_sync(s, team, &wait);
  /* the state, one copy per thread (jl_decide) */
  jl_pm_state pm = s->pm;
  int phase = 0; /* colours swept so far (jl_phase_wait) */
  int mf = s->o->matrix_free;
  for (int par = 0;; par ^= 1) {
    double res = 0.0;
    int ok = 1;
    /* each iteration ends with one barrier after jl_post */
    if (jor && s->rows) {
      double beta = apgd ? jl_pm_beta(&pm) : 0.0;
      const double *from = apgd ? ysrc : src;
      for (int i = clo; i < chi; ++i)
        jl_update_row(s, i, from, dst, src, apgd ? ydst : NULL, beta, &res, &ok);
      jl_solve_sync(s, team, &wait);
      jl_du_from_terms(s, blo, bhi);
      jl_post(s, par, tid, res, ok);
      jl_solve_sync(s, team, &wait);
    } else if (apgd) {
      double beta = jl_pm_beta(&pm);
      for (int i = clo; i < chi; ++i) {
        jl_update(s, i, pm.alpha, ysrc, dst, &res, &ok);
        jl_pm_extrapolate(dst + 3 * (size_t)i, src + 3 * (size_t)i, beta, ydst + 3 * (size_t)i);
      }
      if (mf) {
        jl_solve_sync(s, team, &wait);
        jl_du_rebuild(s, ydst, blo, bhi);
      }
      jl_post(s, par, tid, res, ok);
      jl_solve_sync(s, team, &wait);
    } else if (jor) {
      for (int i = clo; i < chi; ++i) jl_update(s, i, pm.alpha, src, dst, &res, &ok);
      if (mf) {
        jl_solve_sync(s, team, &wait);
        jl_du_rebuild(s, dst, blo, bhi);
      }
      jl_post(s, par, tid, res, ok);
      jl_solve_sync(s, team, &wait);
    } else {
      const jl_colouring *col = ts->col;
      int back = pm.iterations & 1;
      for (int gg = 0; gg < col->groups; ++gg) {
        int g = back ? col->groups - 1 - gg : gg, lo, hi;
        jl_group_share(col, g, tid, nt, &lo, &hi);
        if (p2p && gg > 0) jl_phase_wait(s, nbrs, phase, &wait);
        /* a colour group forward (its units' contacts in order; backward,
         * the rows' stream ran 1.4x slower), the merged group's small
         * colours backward on backward sweeps */
        int merged = col->merged && g == col->groups - 1, rev = back && merged;
        if (order)
          jl_sor_rows(s, lo, hi, rev, !merged, &res, &ok);
        else
          for (int e = lo; e < hi; ++e)
            jl_update(s, col->order[rev ? lo + hi - 1 - e : e], pm.alpha, src, dst, &res, &ok);
        ++phase;
        if (p2p) jl_phase_done(s, tid, phase);
        if (gg == col->groups - 1) jl_post(s, par, tid, res, ok);
        if (!p2p || gg == col->groups - 1) jl_solve_sync(s, team, &wait);
      }
    }
    jl_decide(s, &pm, par, nt);
    int state = pm.state;
    if (jor) {
      double *t = src; src = dst; dst = t;
      t = ysrc; ysrc = ydst; ydst = t;
    }
    if (state == JL_PM_STOP) break;
    if (state == JL_PM_RESTART) {
      memcpy(src + 3 * (size_t)clo, s->init + 3 * (size_t)clo, 3 * sizeof(double) * (size_t)(chi - clo));
      if (apgd)
        memcpy(ysrc + 3 * (size_t)clo, s->init + 3 * (size_t)clo, 3 * sizeof(double) * (size_t)(chi - clo));
      if (s->rows) jl_prox_rows_set_alpha(p, order, pm.alpha, clo, chi, s->rows);
      if (order) jl_to_sweep(order, s->init, s->lam_sweep, clo, chi);
      jl_solve_sync(s, team, &wait);
      if (s->o->matrix_free) jl_du_rebuild(s, apgd ? ysrc : src, blo, bhi);
      jl_solve_sync(s, team, &wait);
    }
  }
  if (tid == 0) s->pm = pm;
  s->t_wait[tid] = wait;
  if (tid == 0) s->team_size = nt;
  /* the latest iterate is in src (SOR on rows: in sweep order) */
  if (order) {
    jl_from_sweep(order, s->lam_sweep, s->lam, clo, chi);
  } else if (src != s->lam) {
    memcpy(s->lam + 3 * (size_t)clo, src + 3 * (size_t)clo, 3 * sizeof(double) * (size_t)(chi - clo));
  }
}

/* The reference: Gauss-Seidel in contact order on one thread. */
static void jl_solve_sequential(jl_solve *s) {
  if (s->o->matrix_free) jl_du_rebuild(s, s->lam, 0, s->p->nbodies);
  for (;;) {
    double res = 0.0;
    int ok = 1;
    int n = s->p->n, back = s->pm.iterations & 1;
    for (int e = 0; e < n; ++e)
      jl_update(s, back ? n - 1 - e : e, s->pm.alpha, s->lam, s->lam, &res, &ok);
    jl_post(s, 0, 0, res, ok);
    jl_decide(s, &s->pm, 0, 1);
    if (s->pm.state == JL_PM_STOP) break;
    if (s->pm.state == JL_PM_RESTART) {
      memcpy(s->lam, s->init, 3 * sizeof(double) * (size_t)s->p->n);
      if (s->o->matrix_free) jl_du_rebuild(s, s->lam, 0, s->p->nbodies);
    }
  }
}

int jl_prox_solve(const jl_contact_problem *p, const jl_prox_opts *o, double *lambda,
                  jl_prox_ws *ws, jl_prox_stats *st, jl_error *err) {
  memset(st, 0, sizeof *st);
  st->alpha = o->alpha;
  int n = p->n;
  if (n <= 0) {
    st->converged = 1;
    return JL_OK;
  }
  if (o->matrix_free < 0)
    return jl_error_set(err, JL_ERR_INTERNAL, "prox solve: choose matrix-free or G first");
  if (!o->matrix_free && !p->has_g)
    return jl_error_set(err, JL_ERR_INTERNAL, "prox solve without the Delassus matrix");
  if (!(o->alpha > 0.0) || o->max_iter < 1)
    return jl_error_set(err, JL_ERR_INPUT, "solver: alpha must be > 0 and max_iter >= 1");
  int rc = jl_prox_ws_reserve(ws, n, o->matrix_free ? p->nbodies : 0, err);
  if (rc) return rc;
  for (int i = 0; i < n; ++i)
    if (!(p->diag[2 * i] > 0.0) || !(p->diag[2 * i + 1] > 0.0))
      return jl_error_set(err, JL_ERR_INTERNAL, "contact %d has no dynamic body", i);
  memcpy(ws->init, lambda, 3 * sizeof(double) * (size_t)n);
  if (o->kind == JL_SOLVER_APGD) {
    if ((rc = jl_prox_ws_reserve_y(ws, err))) return rc;
    memcpy(ws->y, lambda, 3 * sizeof(double) * (size_t)n);
  }
  int threads = o->threads > 0 ? o->threads : 1;
  if (threads > JL_PROX_MAX_THREADS) threads = JL_PROX_MAX_THREADS;
  jl_solve s;
  memset(&s, 0, sizeof s);
  s.p = p;
  s.o = o;
  s.lam = lambda;
  s.lam2 = ws->lam2;
  s.init = ws->init;
  s.du = ws->du;
  s.body_threads = ws->body_threads;
  s.y = ws->y;
  s.y2 = ws->y2;
  int sequential = o->kind == JL_SOLVER_SOR && o->sor_order == JL_SOR_SEQUENTIAL;
  if (o->matrix_free && !sequential) {
    if ((rc = jl_prox_ws_reserve_rows(ws, o->kind != JL_SOLVER_SOR, err))) return rc;
    s.rows = ws->rows;
    s.lam_sweep = ws->lam_sweep;
    s.terms = ws->terms;
    s.body_term = ws->body_term;
  }
  jl_pm_state_init(&s.pm, o->alpha);
  if (sequential) {
    jl_solve_sequential(&s);
  } else {
    jl_team_solve ts = {&s, NULL};
    if (o->kind == JL_SOLVER_SOR) {
      double t0 = o->timing ? jl_time_now() : 0.0;
      if ((rc = jl_contact_colour(p, JL_COLOUR_MIN_SIZE, &ws->col, err))) return rc;
      if (o->timing) s.st.colour_s = jl_time_now() - t0;
      ts.col = &ws->col;
      s.st.colours = ws->col.colours;
      s.st.groups = ws->col.groups;
    }
    /* each thread gets at least min_per_thread contacts between two barriers */
    int phase = o->kind == JL_SOLVER_SOR ? n / (ws->col.groups > 0 ? ws->col.groups : 1) : n;
    int per = o->min_per_thread > 0 ? o->min_per_thread : JL_PROX_MIN_PER_THREAD;
    if (phase / per < threads) threads = phase / per > 1 ? phase / per : 1;
    if ((rc = jl_team_pool_run(o->pool, threads, jl_solve_team, &ts, err))) return rc;
    if (o->timing && s.team_size > 1) {
      for (int t = 0; t < s.team_size; ++t) s.st.wait_s += s.t_wait[t];
      s.st.wait_s /= s.team_size;
    }
  }
  s.st.iterations = s.pm.iterations;
  s.st.residual = s.pm.residual;
  s.st.converged = s.pm.converged;
  s.st.restarts = s.pm.restarts;
  s.st.alpha = s.pm.alpha;
  *st = s.st;
  return JL_OK;
}
