/* CPU twin of the device time step: see step_twin.h. */
#include "step_twin.h"

#include <stdlib.h>
#include <string.h>

#include "collide.h"
#include "integrate.h"
#include "prox_math.h"
#include "scene_step.h"
#include "setup_math.h"
#include "step_math.h"

void jl_step_twin_free(jl_step_twin *t) {
  if (!t) return;
  jl_broad_phase_free(&t->bp);
  jl_contacts_free(&t->contacts);
  jl_contact_problem_free(&t->prob);
  jl_prox_ws_free(&t->ws);
  free(t->lambda);
  free(t->dv);
  free(t->prev_key);
  free(t->prev_imp);
  free(t->init);
  jl_pcolouring_free(&t->col);
  memset(t, 0, sizeof *t);
}

void jl_step_twin_sor(const jl_contact_problem *p, const jl_pcolouring *col,
                      const jl_prox_opts *o, double *lambda, double *init, double *du,
                      jl_prox_stats *st) {
  int n = p->n, nb = p->nbodies;
  memset(st, 0, sizeof *st);
  st->colours = col->colours;
  memcpy(init, lambda, 3 * sizeof(double) * (size_t)n);
  for (int k = 0; k < nb; ++k)
    jl_pm_du_body(k, p->body_ptr, p->body_contact, p->ka, p->frame, p->irx, p->im, lambda,
                  du + 6 * (size_t)k);
  jl_pm_state pm;
  jl_pm_state_init(&pm, o->alpha);
  for (;;) {
    double res = 0.0;
    int ok = 1, back = pm.iterations & 1, C = col->colours;
    for (int cc = 0; cc < C; ++cc) {
      int c = back ? C - 1 - cc : cc;
      for (int e = col->colour_ptr[c]; e < col->colour_ptr[c + 1]; ++e) {
        double r = jl_pm_sor_contact(col->order[e], p->c, p->ka, p->kb, p->frame, p->rx, p->irx,
                                     p->im, p->diag, p->mu, pm.alpha, o->tol_rel, o->tol_abs,
                                     lambda, du, &ok);
        if (!(r <= res)) res = r;
      }
    }
    jl_pm_decide(&pm, res, ok, o->max_iter);
    if (pm.state == JL_PM_STOP) break;
    if (pm.state == JL_PM_RESTART) {
      memcpy(lambda, init, 3 * sizeof(double) * (size_t)n);
      for (int k = 0; k < nb; ++k)
        jl_pm_du_body(k, p->body_ptr, p->body_contact, p->ka, p->frame, p->irx, p->im, lambda,
                      du + 6 * (size_t)k);
    }
  }
  st->iterations = pm.iterations;
  st->residual = pm.residual;
  st->converged = pm.converged;
  st->restarts = pm.restarts;
  st->alpha = pm.alpha;
}

int jl_step_twin_step(jl_step_twin *t, jl_scene *s, jl_step_twin_stats *st, jl_error *err) {
  jl_bodies *b = &s->bodies;
  int nb = b->count, rc;
  double dt = s->dt;
  memset(st, 0, sizeof *st);
  int sor = s->solver.kind == JL_SOLVER_SOR;
  if (nb > t->body_cap) {
    double *d = realloc(t->dv, 6 * sizeof(double) * (size_t)nb);
    if (!d) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d bodies", nb);
    t->dv = d;
    t->body_cap = nb;
  }
  if (!t->contacts.capacity && (rc = jl_contacts_init(&t->contacts, 64, err))) return rc;
  /* 1, 2: mid-point, free velocity */
  jl_integrate_half_step(b, 0.5 * dt);
  jl_integrate_free_velocity(b, s->gravity, dt, t->dv);
  /* 3: contacts at the mid-point, closed ones kept in order */
  double margin = s->contact_tol > 0 ? 2.0 * s->contact_tol : 1e-12;
  if ((rc = jl_collide(b, margin, 1, &t->bp, &t->contacts, err))) return rc;
  jl_contacts *c = &t->contacts;
  int n = jl_step_keep_closed(c, b->is_static, s->contact_tol, &st->max_penetration);
  /* 4: setup */
  rc = jl_setup_twin(&t->prob, b, c, s->mu, s->eps_n, s->eps_t, JL_MATERIALS_MAX, t->dv, 0, err);
  if (rc) return rc;
  if (n > t->contact_cap) {
    int cap = n + n / 2 + 16;
    double *l = realloc(t->lambda, 3 * sizeof(double) * (size_t)cap);
    if (!l) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", n);
    t->lambda = l;
    double *w = realloc(t->init, 3 * sizeof(double) * (size_t)cap);
    if (!w) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d contacts", n);
    t->init = w;
    t->contact_cap = cap;
  }
  /* 5: warm start, JOR or coloured SOR */
  for (int i = 0; i < n; ++i) {
    double *l = t->lambda + 3 * (size_t)i;
    if (s->solver.warm_start)
      jl_st_warm(c->key[i], t->prob.frame + 9 * (size_t)i, t->prev_key, t->prev_imp, t->prev_n, l);
    else
      l[0] = l[1] = l[2] = 0.0;
  }
  jl_prox_opts o = s->solver;
  o.matrix_free = 1;
  jl_prox_stats ps;
  o.threads = 1;
  if (sor) {
    if ((rc = jl_contact_colour_jp(&t->prob, c->key, &t->col, err))) return rc;
    if ((rc = jl_prox_ws_reserve(&t->ws, n, nb, err))) return rc;
    if (n > 0) {
      if (!(o.alpha > 0.0) || o.max_iter < 1)
        return jl_error_set(err, JL_ERR_INPUT, "solver: alpha must be > 0 and max_iter >= 1");
      jl_step_twin_sor(&t->prob, &t->col, &o, t->lambda, t->init, t->ws.du, &ps);
    } else {
      memset(&ps, 0, sizeof ps);
      ps.converged = 1;
    }
    st->colours = t->col.colours;
  } else if ((rc = jl_prox_solve(&t->prob, &o, t->lambda, &t->ws, &ps, err))) {
    return rc;
  }
  /* 6, 7: end velocities, end positions */
  const jl_contact_problem *p = &t->prob;
  for (int k = 0; k < nb; ++k)
    jl_st_end_velocity_body(k, b->is_static, t->dv, p->body_ptr, p->body_contact, p->ka,
                            p->frame, p->irx, p->im, t->lambda, b->vel, b->omega);
  jl_integrate_half_step(b, 0.5 * dt);
  /* warm-start memory: world impulses sorted by key (the device: each pair's points sorted) */
  if ((rc = jl_step_remember(c->key, p->frame, t->lambda, n, &t->prev_key, &t->prev_imp,
                             &t->prev_cap, &t->prev_n, err)))
    return rc;
  st->contacts = n;
  st->iterations = ps.iterations;
  st->converged = ps.converged;
  st->restarts = ps.restarts;
  return JL_OK;
}
