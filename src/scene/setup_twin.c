/* CPU twin of the device contact setup (kernels/scene/scene_setup.cu): the same
 * steps and per-element arithmetic (setup_math.h), one thread. The body CSR
 * comes from sorting (body << 32 | contact) keys, as on the device; G's
 * count, scan and fill per row are the device's steps and the reference's,
 * so the twin calls jl_contact_build_g. */
#include <stdlib.h>
#include <string.h>

#include "setup_math.h"

static int jl_u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int jl_setup_twin(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                  const double *mu_table, const double *eps_n_table, const double *eps_t_table,
                  int materials_max, const double *dv_free, int build_g, jl_error *err) {
  int n = c->count, nb = b->count;
  int rc = jl_contact_problem_reserve(p, n, nb, 0, err);
  if (rc) return rc;
  p->n = n;
  p->nbodies = nb;
  p->has_g = 0;
  p->nnz = 0;
  jl_sm_bodies sb = {b->is_static, b->pos, b->quat, b->vel, b->omega, b->inv_mass, b->inv_inertia,
                     b->shape};
  jl_sm_problem sp = {p->ka, p->kb, p->frame, p->rx, p->irx, p->im, p->c, p->mu, p->diag,
                     p->lever, p->iso, p->arm};
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
  /* G: rows counted, scanned, filled, as on the device: the reference's code */
  return jl_contact_build_g(p, 1, err);
}
