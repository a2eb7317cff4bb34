/* FCLib export: block CSR -> scalar CSR, then fclib_write_local into a
 * fresh temp file, renamed over the target. */
#include "fclib_export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef JL_HAVE_FCLIB
#include <fclib.h>

int jl_fclib_write_local(const jl_fc_problem *p, const char *path, const char *title,
                         const char *description, jl_error *err) {
  return jl_fclib_write_local_solved(p, NULL, path, title, description, err);
}

int jl_fclib_write_local_solved(const jl_fc_problem *p, const double *lambda, const char *path,
                                const char *title, const char *description, jl_error *err) {
  int n = p->n;
  if (n <= 0) return jl_error_set(err, JL_ERR_INPUT, "%s: no contacts to export", path);
  int nb = p->rowptr[n];
  if (p->rowptr[0] != 0 || nb < 0)
    return jl_error_set(err, JL_ERR_INTERNAL, "fclib export: bad block row pointers");
  for (int r = 0; r < n; ++r) {
    if (p->rowptr[r + 1] < p->rowptr[r])
      return jl_error_set(err, JL_ERR_INTERNAL, "fclib export: row pointers decrease at %d", r);
    for (int k = p->rowptr[r]; k < p->rowptr[r + 1]; ++k)
      if (p->col[k] < 0 || p->col[k] >= n)
        return jl_error_set(err, JL_ERR_INTERNAL, "fclib export: block column %d out of range", p->col[k]);
  }
  int m = 3 * n;
  long nnz = 9L * nb;
  if (nnz > 0x7fffffffL) return jl_error_set(err, JL_ERR_INPUT, "%s: problem too large for FCLib", path);
  struct fclib_matrix W;
  memset(&W, 0, sizeof W);
  W.m = m;
  W.n = m;
  W.nz = -2;  /* compressed rows */
  W.nzmax = (int)nnz;
  W.p = malloc(sizeof(int) * ((size_t)m + 1));
  W.i = malloc(sizeof(int) * (size_t)(nnz > 0 ? nnz : 1));
  W.x = malloc(sizeof(double) * (size_t)(nnz > 0 ? nnz : 1));
  double *q = malloc(sizeof(double) * (size_t)m);
  double *mu = malloc(sizeof(double) * (size_t)n);
  char *tmp = malloc(strlen(path) + 16);
  double *sol_u = NULL, *sol_r = NULL;
  int rc = JL_OK;
  if (!W.p || !W.i || !W.x || !q || !mu || !tmp) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "fclib export: out of memory");
    goto done;
  }
  long o = 0;
  for (int r = 0; r < n; ++r)
    for (int a = 0; a < 3; ++a) {
      W.p[3 * r + a] = (int)o;
      for (int k = p->rowptr[r]; k < p->rowptr[r + 1]; ++k)
        for (int b = 0; b < 3; ++b) {
          W.i[o] = 3 * p->col[k] + b;
          W.x[o] = p->blocks[9 * (size_t)k + 3 * a + b];
          o++;
        }
    }
  W.p[m] = (int)o;
  memcpy(q, p->c, sizeof(double) * (size_t)m);
  memcpy(mu, p->mu, sizeof(double) * (size_t)n);

  struct fclib_info info = {(char *)(title ? title : "jostle contact problem"),
                            (char *)(description ? description : ""), (char *)""};
  struct fclib_local prob;
  memset(&prob, 0, sizeof prob);
  prob.W = &W;
  prob.q = q;
  prob.mu = mu;
  prob.spacedim = 3;
  prob.info = &info;

  /* A fresh temp name beside the target (FCLib appends to existing files). */
  sprintf(tmp, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    rc = jl_error_set(err, JL_ERR_IO, "%s: cannot create a temp file: %s", path, strerror(errno));
    goto done;
  }
  close(fd);
  unlink(tmp);
  if (!fclib_write_local(&prob, tmp)) {
    unlink(tmp);
    rc = jl_error_set(err, JL_ERR_IO, "%s: FCLib could not write the problem", path);
    goto done;
  }
  if (lambda) {
    /* u = W r + q, in the block order of W */
    sol_u = malloc(sizeof(double) * (size_t)m);
    sol_r = malloc(sizeof(double) * (size_t)m);
    if (!sol_u || !sol_r) {
      unlink(tmp);
      rc = jl_error_set(err, JL_ERR_NOMEM, "fclib export: out of memory");
      goto done;
    }
    memcpy(sol_r, lambda, sizeof(double) * (size_t)m);
    for (int row = 0; row < m; ++row) {
      double sum = q[row];
      for (int k = W.p[row]; k < W.p[row + 1]; ++k) sum += W.x[k] * sol_r[W.i[k]];
      sol_u[row] = sum;
    }
    struct fclib_solution sol = {NULL, sol_u, sol_r, NULL};
    if (!fclib_write_solution(&sol, tmp)) {
      unlink(tmp);
      rc = jl_error_set(err, JL_ERR_IO, "%s: FCLib could not write the solution", path);
      goto done;
    }
  }
  if (rename(tmp, path) != 0) {
    rc = jl_error_set(err, JL_ERR_IO, "%s: cannot rename the temp file: %s", path, strerror(errno));
    unlink(tmp);
  }

done:
  free(W.p);
  free(W.i);
  free(W.x);
  free(q);
  free(mu);
  free(tmp);
  free(sol_u);
  free(sol_r);
  return rc;
}

int jl_fclib_available(void) { return 1; }

#else /* built without FCLib (meson -Dfclib=disabled, or libfclib-dev missing) */

int jl_fclib_available(void) { return 0; }

int jl_fclib_write_local(const jl_fc_problem *p, const char *path, const char *title,
                         const char *description, jl_error *err) {
  return jl_fclib_write_local_solved(p, NULL, path, title, description, err);
}

int jl_fclib_write_local_solved(const jl_fc_problem *p, const double *lambda, const char *path,
                                const char *title, const char *description, jl_error *err) {
  (void)p, (void)lambda, (void)title, (void)description;
  return jl_error_set(err, JL_ERR_INPUT,
                      "%s: this jostle was built without FCLib (libfclib-dev), so it cannot export",
                      path);
}

#endif
