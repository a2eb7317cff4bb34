/* Contact setup: frames, W, M^-1 W, c and the block-sparse Delassus matrix;
 * the per-contact and per-row arithmetic is setup_math.h's. */
#include "contact_setup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "setup_math.h"
#include "team.h"

void jl_contact_problem_free(jl_contact_problem *p) {
  if (!p) return;
  free(p->ka); free(p->kb); free(p->frame); free(p->rx); free(p->irx); free(p->im);
  free(p->lever); free(p->iso); free(p->arm);
  free(p->c); free(p->mu); free(p->diag); free(p->rowptr); free(p->col);
  free(p->blocks); free(p->body_ptr); free(p->body_contact);
  memset(p, 0, sizeof *p);
}

#define JL_GROW(ptr, count)                                                        \
  do {                                                                             \
    void *q_ = realloc((ptr), (size_t)(count) * sizeof *(ptr));                    \
    if (!q_) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the contact problem"); \
    (ptr) = q_;                                                                    \
  } while (0)

int jl_contact_problem_reserve(jl_contact_problem *p, int n, int nbodies, int nnz, jl_error *err) {
  if (n < 1) n = 1;
  if (n > p->cap) {
    int cap = n + n / 2 + 16;
    JL_GROW(p->ka, cap); JL_GROW(p->kb, cap); JL_GROW(p->frame, 9 * (size_t)cap);
    JL_GROW(p->rx, 18 * (size_t)cap); JL_GROW(p->irx, 18 * (size_t)cap);
    JL_GROW(p->im, 2 * (size_t)cap);
    JL_GROW(p->lever, 6 * (size_t)cap); JL_GROW(p->iso, 2 * (size_t)cap);
    JL_GROW(p->arm, 2 * (size_t)cap);
    JL_GROW(p->c, 3 * (size_t)cap); JL_GROW(p->mu, cap); JL_GROW(p->diag, 2 * (size_t)cap);
    JL_GROW(p->rowptr, cap + 1); JL_GROW(p->body_contact, 2 * (size_t)cap);
    p->cap = cap;
  }
  if (nbodies + 1 > p->body_cap) {
    int cap = nbodies + 1;
    JL_GROW(p->body_ptr, cap);
    p->body_cap = cap;
  }
  if (nnz > p->nnz_cap) {
    int cap = nnz + nnz / 2 + 16;
    JL_GROW(p->col, cap);
    JL_GROW(p->blocks, 9 * (size_t)cap);
    p->nnz_cap = cap;
  }
  return JL_OK;
}

typedef struct jl_setup_job {
  jl_contact_problem *p;
  const jl_bodies *b;
  const jl_contacts *c;
  const jl_contact_law *law;
  const double *dv_free;
  int build_g;
  int *row_count;          /* nnz per row (first pass) */
  int failed;
} jl_setup_job;

void jl_contact_setup_contacts(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                               const jl_contact_law *law, const double *dv_free, int lo, int hi) {
  jl_sm_bodies sb = {b->is_static, b->pos, b->quat, b->vel, b->omega, b->inv_mass, b->inv_inertia,
                     b->shape};
  jl_sm_problem sp = {p->ka, p->kb, p->frame, p->rx, p->irx, p->im, p->c, p->mu, p->diag,
                     p->lever, p->iso, p->arm};
  for (int i = lo; i < hi; ++i)
    jl_sm_contact(&sb, c->body_a[i], c->body_b[i], c->point + 3 * (size_t)i,
                  c->normal + 3 * (size_t)i, law->mu[i], law->eps_n[i], law->eps_t[i], dv_free, i,
                  &sp);
}

static void jl_setup_phase1(void *ctx, int tid, jl_team *team) {
  jl_setup_job *j = ctx;
  int lo, hi;
  jl_team_share(j->p->n, tid, team->size, &lo, &hi);
  jl_contact_setup_contacts(j->p, j->b, j->c, j->law, j->dv_free, lo, hi);
}

static void jl_setup_count(void *ctx, int tid, jl_team *team) {
  jl_setup_job *j = ctx;
  int lo, hi;
  jl_team_share(j->p->n, tid, team->size, &lo, &hi);
  const jl_contact_problem *p = j->p;
  for (int i = lo; i < hi; ++i)
    j->row_count[i] = jl_sm_row_columns(p->ka, p->kb, p->body_ptr, p->body_contact, i, NULL);
}

static void jl_setup_fill(void *ctx, int tid, jl_team *team) {
  jl_setup_job *j = ctx;
  jl_contact_problem *p = j->p;
  int lo, hi;
  jl_team_share(p->n, tid, team->size, &lo, &hi);
  for (int i = lo; i < hi; ++i) {
    int *cols = p->col + p->rowptr[i];
    int m = jl_sm_row_columns(p->ka, p->kb, p->body_ptr, p->body_contact, i, cols);
    for (int e = 0; e < m; ++e)
      jl_sm_block(p->ka, p->kb, p->frame, p->rx, p->irx, p->im, i, cols[e],
                  p->blocks + 9 * (size_t)(p->rowptr[i] + e));
  }
}

int jl_contact_setup_begin(jl_contact_problem *p, int n, int nbodies, jl_error *err) {
  int rc = jl_contact_problem_reserve(p, n, nbodies, 0, err);
  if (rc) return rc;
  p->n = n;
  p->nbodies = nbodies;
  p->has_g = 0;
  p->nnz = 0;
  return JL_OK;
}

int jl_contact_setup_bodies(jl_contact_problem *p, jl_error *err) {
  int n = p->n, nb = p->nbodies;
  /* bodies -> contacts, ascending by construction */
  memset(p->body_ptr, 0, sizeof(int) * (size_t)(nb + 1));
  for (int i = 0; i < n; ++i) {
    if (p->ka[i] >= 0) p->body_ptr[p->ka[i] + 1]++;
    if (p->kb[i] >= 0) p->body_ptr[p->kb[i] + 1]++;
  }
  for (int k = 0; k < nb; ++k) p->body_ptr[k + 1] += p->body_ptr[k];
  int *fill = malloc(sizeof(int) * (size_t)(nb + 1));
  if (!fill) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the contact graph");
  memcpy(fill, p->body_ptr, sizeof(int) * (size_t)(nb + 1));
  for (int i = 0; i < n; ++i) {
    if (p->ka[i] >= 0) p->body_contact[fill[p->ka[i]]++] = i;
    if (p->kb[i] >= 0) p->body_contact[fill[p->kb[i]]++] = i;
  }
  free(fill);
  return JL_OK;
}

int jl_contact_setup(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                     const jl_contact_law *law, const double *dv_free, int build_g,
                     int threads, jl_error *err) {
  int n = c->count;
  int rc = jl_contact_setup_begin(p, n, b->count, err);
  if (rc) return rc;
  if (n < 256) threads = 1;  /* thread start-up costs more than the work */
  jl_setup_job job = {p, b, c, law, dv_free, build_g, NULL, 0};
  if ((rc = jl_team_run(threads, jl_setup_phase1, &job, err))) return rc;
  if ((rc = jl_contact_setup_bodies(p, err))) return rc;
  if (!build_g) return JL_OK;
  return jl_contact_build_g(p, threads, err);
}

long long jl_contact_g_estimate(const jl_contact_problem *p) {
  long long s = 0;
  for (int k = 0; k < p->nbodies; ++k) {
    long long d = p->body_ptr[k + 1] - p->body_ptr[k];
    s += d * d;
  }
  return s;
}

int jl_contact_build_g(jl_contact_problem *p, int threads, jl_error *err) {
  int n = p->n, rc;
  if (n < 256) threads = 1;
  jl_setup_job job = {p, NULL, NULL, NULL, NULL, 1, NULL, 0};
  job.row_count = p->rowptr + 1;
  if ((rc = jl_team_run(threads, jl_setup_count, &job, err))) return rc;
  p->rowptr[0] = 0;
  long long total = 0;
  for (int i = 0; i < n; ++i) {
    total += p->rowptr[i + 1];
    if (total > 2000000000LL)
      return jl_error_set(err, JL_ERR_NOMEM, "Delassus matrix too large (%lld blocks)", total);
    p->rowptr[i + 1] = (int)total;
  }
  p->nnz = (int)total;
  if ((rc = jl_contact_problem_reserve(p, n, p->nbodies, p->nnz, err))) return rc;
  if ((rc = jl_team_run(threads, jl_setup_fill, &job, err))) return rc;
  p->has_g = 1;
  return JL_OK;
}
