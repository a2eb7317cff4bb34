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
  memset(t, 0, sizeof *t);
}

int jl_step_twin_step(jl_step_twin *t, jl_scene *s, jl_step_twin_stats *st, jl_error *err) {
  jl_bodies *b = &s->bodies;
  int nb = b->count, rc;
  double dt = s->dt;
  memset(st, 0, sizeof *st);
  if (s->solver.kind != JL_SOLVER_JOR)
    return jl_error_set(err, JL_ERR_INPUT, "the device step solves with JOR only");
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
    t->contact_cap = cap;
  }
  /* 5: warm start, JOR */
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
  if ((rc = jl_prox_solve(&t->prob, &o, t->lambda, &t->ws, &ps, err))) return rc;
  /* 6, 7: end velocities, end positions */
  const jl_contact_problem *p = &t->prob;
  for (int k = 0; k < nb; ++k)
    jl_st_end_velocity_body(k, b->is_static, t->dv, p->body_ptr, p->body_contact, p->ka,
                            p->frame, p->irx, p->im, t->lambda, b->vel, b->omega);
  jl_integrate_half_step(b, 0.5 * dt);
  /* warm-start memory: world impulses sorted by key (the device: SortPairs, gather) */
  if ((rc = jl_step_remember(c->key, p->frame, t->lambda, n, &t->prev_key, &t->prev_imp,
                             &t->prev_cap, &t->prev_n, err)))
    return rc;
  st->contacts = n;
  st->iterations = ps.iterations;
  st->converged = ps.converged;
  st->restarts = ps.restarts;
  return JL_OK;
}
