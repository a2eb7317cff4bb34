/* Contact setup: frames, W, M^-1 W, c and the block-sparse Delassus matrix. */
#include "contact_setup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "team.h"

void jl_contact_problem_free(jl_contact_problem *p) {
  if (!p) return;
  free(p->ka); free(p->kb); free(p->frame); free(p->rx); free(p->irx); free(p->im);
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

static int jl_problem_reserve(jl_contact_problem *p, int n, int nbodies, jl_error *err) {
  if (n > p->cap) {
    int cap = n + n / 2 + 16;
    JL_GROW(p->ka, cap); JL_GROW(p->kb, cap); JL_GROW(p->frame, 9 * (size_t)cap);
    JL_GROW(p->rx, 18 * (size_t)cap); JL_GROW(p->irx, 18 * (size_t)cap);
    JL_GROW(p->im, 2 * (size_t)cap);
    JL_GROW(p->c, 3 * (size_t)cap); JL_GROW(p->mu, cap); JL_GROW(p->diag, 2 * (size_t)cap);
    JL_GROW(p->rowptr, cap + 1); JL_GROW(p->body_contact, 2 * (size_t)cap);
    p->cap = cap;
  }
  if (nbodies + 1 > p->body_cap) {
    int cap = nbodies + 1;
    JL_GROW(p->body_ptr, cap);
    p->body_cap = cap;
  }
  return JL_OK;
}

void jl_body_inv_inertia_apply(const jl_bodies *b, int k, const double x[3], double out[3]) {
  const double *q = b->quat + 4 * (size_t)k;
  const double *ii = b->inv_inertia + 3 * (size_t)k;
  jl_quat qq = {q[0], q[1], q[2], q[3]};
  jl_vec3 l = jl_quat_rotate(jl_quat_conj(qq), jl_v3(x[0], x[1], x[2]));
  l = jl_v3(l.x * ii[0], l.y * ii[1], l.z * ii[2]);
  jl_vec3 w = jl_quat_rotate(qq, l);
  out[0] = w.x; out[1] = w.y; out[2] = w.z;
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

/* Per contact: frame, lever-arm rows, c, diagonal. */
static void jl_setup_contact(jl_setup_job *j, int i) {
  jl_contact_problem *p = j->p;
  const jl_bodies *b = j->b;
  const jl_contacts *c = j->c;
  int a = c->body_a[i], bb = c->body_b[i];
  p->ka[i] = b->is_static[a] ? -1 : a;
  p->kb[i] = b->is_static[bb] ? -1 : bb;
  double *fr = p->frame + 9 * (size_t)i;
  jl_contact_frame(c->normal + 3 * (size_t)i, fr);
  const double *pt = c->point + 3 * (size_t)i;
  double eps[3] = {j->law->eps_n[i], j->law->eps_t[i], j->law->eps_t[i]};
  double free_part[3] = {0, 0, 0}, rel[3] = {0, 0, 0}, g[3] = {0, 0, 0};
  const int ks[2] = {p->ka[i], p->kb[i]};
  for (int side = 0; side < 2; ++side) {
    int k = ks[side];
    double *rx = p->rx + 18 * (size_t)i + 9 * side, *irx = p->irx + 18 * (size_t)i + 9 * side;
    if (k < 0) {
      memset(rx, 0, 9 * sizeof(double));
      memset(irx, 0, 9 * sizeof(double));
      p->im[2 * i + side] = 0.0;
      continue;
    }
    const double *x = b->pos + 3 * (size_t)k;
    double r[3] = {pt[0] - x[0], pt[1] - x[1], pt[2] - x[2]};
    double im = b->inv_mass[k];
    p->im[2 * i + side] = im;
    for (int d = 0; d < 3; ++d) {
      const double *e = fr + 3 * d;
      double *q = rx + 3 * d;
      q[0] = r[1] * e[2] - r[2] * e[1];
      q[1] = r[2] * e[0] - r[0] * e[2];
      q[2] = r[0] * e[1] - r[1] * e[0];
      jl_body_inv_inertia_apply(b, k, q, irx + 3 * d);
      g[d] += im + q[0] * irx[3 * d] + q[1] * irx[3 * d + 1] + q[2] * irx[3 * d + 2];
    }
    double u[6] = {b->vel[3 * k], b->vel[3 * k + 1], b->vel[3 * k + 2],
                   b->omega[3 * k], b->omega[3 * k + 1], b->omega[3 * k + 2]};
    const double *dv = j->dv_free + 6 * (size_t)k;
    for (int d = 0; d < 3; ++d) {
      free_part[d] += jl_w_row_dot(p, i, side, d, dv);
      rel[d] += jl_w_row_dot(p, i, side, d, u);
    }
  }
  double *ci = p->c + 3 * (size_t)i;
  for (int d = 0; d < 3; ++d) ci[d] = free_part[d] + (1.0 + eps[d]) * rel[d];
  p->mu[i] = j->law->mu[i];
  p->diag[2 * i] = g[0];
  p->diag[2 * i + 1] = g[1] > g[2] ? g[1] : g[2];
}

/* Sorted union of the contact lists of the dynamic bodies of contact i,
 * written to out when given; returns its length. */
static int jl_row_columns(const jl_contact_problem *p, int i, int *out) {
  int ka = p->ka[i], kb = p->kb[i];
  const int *la = NULL, *lb = NULL;
  int na = 0, nb = 0;
  if (ka >= 0) { la = p->body_contact + p->body_ptr[ka]; na = p->body_ptr[ka + 1] - p->body_ptr[ka]; }
  if (kb >= 0) { lb = p->body_contact + p->body_ptr[kb]; nb = p->body_ptr[kb + 1] - p->body_ptr[kb]; }
  int x = 0, y = 0, m = 0;
  while (x < na || y < nb) {
    int v;
    if (y >= nb || (x < na && la[x] < lb[y])) v = la[x++];
    else if (x >= na || lb[y] < la[x]) v = lb[y++];
    else { v = la[x++]; ++y; }
    if (out) out[m] = v;
    ++m;
  }
  return m;
}

/* G_ij = sum over the dynamic bodies K shared by i and j of W_iK^T M_K^-1 W_jK:
 * sign_iK sign_jK (m_K^-1 d_i . d_j + (r_iK x d_i) . I_K^-1 (r_jK x d_j)). */
static void jl_block(const jl_contact_problem *p, int i, int j, double g[9]) {
  memset(g, 0, 9 * sizeof(double));
  const int ki[2] = {p->ka[i], p->kb[i]}, kj[2] = {p->ka[j], p->kb[j]};
  const double *fi = p->frame + 9 * (size_t)i, *fj = p->frame + 9 * (size_t)j;
  for (int si = 0; si < 2; ++si) {
    int k = ki[si];
    if (k < 0) continue;
    int sj = k == kj[0] ? 0 : k == kj[1] ? 1 : -1;
    if (sj < 0) continue;
    double sign = si == sj ? 1.0 : -1.0, im = p->im[2 * i + si];
    const double *rxi = p->rx + 18 * (size_t)i + 9 * si, *irxj = p->irx + 18 * (size_t)j + 9 * sj;
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) {
        const double *di = fi + 3 * r, *dj = fj + 3 * q, *a = rxi + 3 * r, *bq = irxj + 3 * q;
        g[3 * r + q] += sign * (im * (di[0] * dj[0] + di[1] * dj[1] + di[2] * dj[2]) +
                                a[0] * bq[0] + a[1] * bq[1] + a[2] * bq[2]);
      }
  }
}

static void jl_setup_phase1(void *ctx, int tid, jl_team *team) {
  jl_setup_job *j = ctx;
  int lo, hi;
  jl_team_share(j->p->n, tid, team->size, &lo, &hi);
  for (int i = lo; i < hi; ++i) jl_setup_contact(j, i);
}

static void jl_setup_count(void *ctx, int tid, jl_team *team) {
  jl_setup_job *j = ctx;
  int lo, hi;
  jl_team_share(j->p->n, tid, team->size, &lo, &hi);
  for (int i = lo; i < hi; ++i) j->row_count[i] = jl_row_columns(j->p, i, NULL);
}

static void jl_setup_fill(void *ctx, int tid, jl_team *team) {
  jl_setup_job *j = ctx;
  jl_contact_problem *p = j->p;
  int lo, hi;
  jl_team_share(p->n, tid, team->size, &lo, &hi);
  for (int i = lo; i < hi; ++i) {
    int *cols = p->col + p->rowptr[i];
    int m = jl_row_columns(p, i, cols);
    for (int e = 0; e < m; ++e) jl_block(p, i, cols[e], p->blocks + 9 * (size_t)(p->rowptr[i] + e));
  }
}

int jl_contact_setup(jl_contact_problem *p, const jl_bodies *b, const jl_contacts *c,
                     const jl_contact_law *law, const double *dv_free, int build_g,
                     int threads, jl_error *err) {
  int n = c->count, nb = b->count;
  int rc = jl_problem_reserve(p, n > 0 ? n : 1, nb, err);
  if (rc) return rc;
  p->n = n;
  p->nbodies = nb;
  p->has_g = 0;
  p->nnz = 0;
  if (n < 256) threads = 1;  /* thread start-up costs more than the work */
  jl_setup_job job = {p, b, c, law, dv_free, build_g, NULL, 0};
  if ((rc = jl_team_run(threads, jl_setup_phase1, &job, err))) return rc;
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
  if (p->nnz > p->nnz_cap) {
    int cap = p->nnz + p->nnz / 2 + 16;
    JL_GROW(p->col, cap);
    JL_GROW(p->blocks, 9 * (size_t)cap);
    p->nnz_cap = cap;
  }
  if ((rc = jl_team_run(threads, jl_setup_fill, &job, err))) return rc;
  p->has_g = 1;
  return JL_OK;
}
