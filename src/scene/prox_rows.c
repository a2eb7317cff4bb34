/* Packing the matrix-free solvers' rows (prox_rows.h). */
#include "prox_rows.h"

#include <string.h>

void jl_prox_rows_pack(const jl_contact_problem *p, const int *order, double alpha, int lo, int hi,
                       jl_prox_row *rows) {
  for (int e = lo; e < hi; ++e) {
    size_t i = (size_t)(order ? order[e] : e);
    jl_prox_row *r = rows + e;
    memcpy(r->c, p->c + 3 * i, sizeof r->c);
    memcpy(r->frame, p->frame + 9 * i, sizeof r->frame);
    memcpy(r->rx, p->rx + 18 * i, sizeof r->rx);
    memcpy(r->irx, p->irx + 18 * i, sizeof r->irx);
    memcpy(r->im, p->im + 2 * i, sizeof r->im);
    r->r[0] = alpha / p->diag[2 * i];
    r->r[1] = alpha / p->diag[2 * i + 1];
    r->mu = p->mu[i];
    r->ka = p->ka[i];
    r->kb = p->kb[i];
  }
}

void jl_prox_rows_set_alpha(const jl_contact_problem *p, const int *order, double alpha, int lo,
                            int hi, jl_prox_row *rows) {
  for (int e = lo; e < hi; ++e) {
    size_t i = (size_t)(order ? order[e] : e);
    rows[e].r[0] = alpha / p->diag[2 * i];
    rows[e].r[1] = alpha / p->diag[2 * i + 1];
  }
}
