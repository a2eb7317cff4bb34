/* CPU twin of the device contact setup (kernels/scene_setup.cu): the same
 * steps and per-element arithmetic (setup_math.h), one thread. The body CSR
 * comes from sorting (body << 32 | contact) keys, as on the device. */
#include <stdlib.h>
#include <string.h>

#include "setup_math.h"

#define JL_TWIN_GROW(ptr, count)                                                       \
  do {                                                                                 \
    void *q_ = realloc((ptr), (size_t)(count) * sizeof *(ptr));                        \
    if (!q_) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the contact problem"); \
    (ptr) = q_;                                                                        \
  } while (0)

void jl_gpu_problem_free(jl_gpu_problem *p) {
  if (!p) return;
  free(p->ka); free(p->kb); free(p->frame); free(p->rx); free(p->irx); free(p->im);
  free(p->c); free(p->mu); free(p->diag); free(p->body_ptr); free(p->body_contact);
  free(p->rowptr); free(p->col); free(p->blocks);
  memset(p, 0, sizeof *p);
}

static int jl_twin_reserve(jl_gpu_problem *p, int n, int nbodies, jl_error *err) {
  if (n > p->cap) {
    int cap = n + n / 2 + 16;
    JL_TWIN_GROW(p->ka, cap); JL_TWIN_GROW(p->kb, cap); JL_TWIN_GROW(p->frame, 9 * (size_t)cap);
    JL_TWIN_GROW(p->rx, 18 * (size_t)cap); JL_TWIN_GROW(p->irx, 18 * (size_t)cap);
    JL_TWIN_GROW(p->im, 2 * (size_t)cap);
    JL_TWIN_GROW(p->c, 3 * (size_t)cap); JL_TWIN_GROW(p->mu, cap);
    JL_TWIN_GROW(p->diag, 2 * (size_t)cap); JL_TWIN_GROW(p->rowptr, cap + 1);
    JL_TWIN_GROW(p->body_contact, 2 * (size_t)cap);
    p->cap = cap;
  }
  if (nbodies + 1 > p->body_cap) {
    JL_TWIN_GROW(p->body_ptr, nbodies + 1);
    p->body_cap = nbodies + 1;
  }
  return JL_OK;
}

int jl_setup_reserve(jl_gpu_problem *p, int n, int nbodies, int nnz, jl_error *err) {
  int rc = jl_twin_reserve(p, n > 0 ? n : 1, nbodies, err);
  if (rc) return rc;
  if (nnz > p->nnz_cap) {
    int cap = nnz + nnz / 2 + 16;
    JL_TWIN_GROW(p->col, cap);
    JL_TWIN_GROW(p->blocks, 9 * (size_t)cap);
    p->nnz_cap = cap;
  }
  return JL_OK;
}

static int jl_u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int jl_setup_twin(jl_gpu_problem *p, const jl_bodies *b, const jl_contacts *c,
                  const double *mu_table, const double *eps_n_table, const double *eps_t_table,
                  int materials_max, const double *dv_free, int build_g, jl_error *err) {
  int n = c->count, nb = b->count;
  int rc = jl_twin_reserve(p, n > 0 ? n : 1, nb, err);
  if (rc) return rc;
  p->n = n;
  p->nbodies = nb;
  p->has_g = 0;
  p->nnz = 0;
  jl_sm_bodies sb = {b->is_static, b->pos, b->quat, b->vel, b->omega, b->inv_mass, b->inv_inertia};
  jl_sm_problem sp = {p->ka, p->kb, p->frame, p->rx, p->irx, p->im, p->c, p->mu, p->diag};
  for (int i = 0; i < n; ++i) {
    int a = c->body_a[i], bb = c->body_b[i];
    int m = b->material[a] * materials_max + b->material[bb];
    jl_sm_contact(&sb, a, bb, c->point + 3 * (size_t)i, c->normal + 3 * (size_t)i, mu_table[m],
                  eps_n_table[m], eps_t_table[m], dv_free, i, &sp);
  }
  /* body CSR by sorting (body, contact) keys */
  uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)(2 * n > 0 ? 2 * n : 1));
  if (!keys) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the contact graph");
  for (int i = 0; i < n; ++i) jl_sm_body_keys(p->ka, p->kb, i, keys + 2 * (size_t)i);
  qsort(keys, (size_t)(2 * n), sizeof *keys, jl_u64_cmp);
  for (int k = 0; k <= nb; ++k) p->body_ptr[k] = jl_sm_lower_bound(keys, 2 * n, k);
  for (int e = 0; e < p->body_ptr[nb]; ++e) p->body_contact[e] = (int)(uint32_t)keys[e];
  free(keys);
  if (!build_g) return JL_OK;
  p->rowptr[0] = 0;
  long long total = 0;
  for (int i = 0; i < n; ++i) {
    total += jl_sm_row_columns(p->ka, p->kb, p->body_ptr, p->body_contact, i, NULL);
    if (total > 2000000000LL)
      return jl_error_set(err, JL_ERR_NOMEM, "Delassus matrix too large (%lld blocks)", total);
    p->rowptr[i + 1] = (int)total;
  }
  p->nnz = (int)total;
  if (p->nnz > p->nnz_cap) {
    int cap = p->nnz + p->nnz / 2 + 16;
    JL_TWIN_GROW(p->col, cap);
    JL_TWIN_GROW(p->blocks, 9 * (size_t)cap);
    p->nnz_cap = cap;
  }
  for (int i = 0; i < n; ++i) {
    int *cols = p->col + p->rowptr[i];
    int m = jl_sm_row_columns(p->ka, p->kb, p->body_ptr, p->body_contact, i, cols);
    for (int e = 0; e < m; ++e)
      jl_sm_block(p->ka, p->kb, p->frame, p->rx, p->irx, p->im, i, cols[e],
                  p->blocks + 9 * (size_t)(p->rowptr[i] + e));
  }
  p->has_g = 1;
  return JL_OK;
}
