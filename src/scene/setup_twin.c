/* CPU twin of the device contact setup (kernels/scene/scene_setup.cu): the same
 * steps and per-element arithmetic (setup_math.h), one thread. The body CSR
 * comes from sorting the contacts' sides stably by body, as on the device; G's
 * count, scan and fill per row are the device's steps and the reference's,
 * so the twin calls jl_contact_build_g. */
#include <stdlib.h>
#include <string.h>

#include "setup_math.h"

typedef struct jl_side {
  uint32_t body;
  int entry; /* 2 contact + side */
} jl_side;

static int jl_side_cmp(const void *a, const void *b) {
  const jl_side *x = a, *y = b;
  if (x->body != y->body) return x->body < y->body ? -1 : 1;
  return (x->entry > y->entry) - (x->entry < y->entry);  /* stable, like the radix sort */
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
  /* body CSR by sorting the sides stably by body */
  size_t m = (size_t)(2 * n > 0 ? 2 * n : 1);
  jl_side *sides = malloc(sizeof *sides * m);
  uint32_t *bodies = malloc(sizeof *bodies * m);
  if (!sides || !bodies) {
    free(sides);
    free(bodies);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the contact graph");
  }
  for (int i = 0; i < n; ++i) {
    uint32_t s[2];
    jl_sm_body_sides(p->ka, p->kb, i, nb, s);
    for (int k = 0; k < 2; ++k) sides[2 * i + k] = (jl_side){s[k], 2 * i + k};
  }
  qsort(sides, (size_t)(2 * n), sizeof *sides, jl_side_cmp);
  for (int e = 0; e < 2 * n; ++e) bodies[e] = sides[e].body;
  for (int k = 0; k <= nb; ++k) p->body_ptr[k] = jl_sm_lower_bound(bodies, 2 * n, k);
  for (int e = 0; e < p->body_ptr[nb]; ++e) p->body_contact[e] = sides[e].entry >> 1;
  free(sides);
  free(bodies);
  if (!build_g) return JL_OK;
  /* G: rows counted, scanned, filled, as on the device: the reference's code */
  return jl_contact_build_g(p, 1, err);
}
