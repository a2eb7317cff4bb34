/* Export of one step's contact problem to the FCLib format (HDF5, through
 * Debian's libfclib), so other frictional-contact solvers can be run on the
 * same problem: a local problem u = W r + q with r in the Coulomb cones.
 * jostle's Delassus matrix G is W, its free term c is q; each contact's
 * three rows are in its frame (n, t1, t2), normal first, as FCLib expects. */
#ifndef JL_FCLIB_EXPORT_H
#define JL_FCLIB_EXPORT_H

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plain data, as contact_setup.h keeps it. */
typedef struct jl_fc_problem {
  int n;                   /* contacts */
  const int *rowptr;       /* n + 1: block-sparse CSR of 3x3 blocks */
  const int *col;          /* rowptr[n] block columns */
  const double *blocks;    /* 9 per block, row-major */
  const double *c;         /* 3 n: q */
  const double *mu;        /* n */
} jl_fc_problem;

/* 1 when this build can write FCLib files (meson found libfclib), else 0:
 * the CLI refuses --fclib up front instead of failing at the export step. */
int jl_fclib_available(void);

/* Writes an fclib_local problem (W as a compressed-row sparse matrix of
 * 3n x 3n, q, mu, spacedim 3, info title and description) to path,
 * atomically (temp file in the same folder, then rename). */
int jl_fclib_write_local(const jl_fc_problem *p, const char *path, const char *title,
                         const char *description, jl_error *err);
/* The same, plus jostle's impulses as FCLib's solution in the same file:
 * r = lambda (3 n, frame (n, t1, t2)), u = W r + q. */
int jl_fclib_write_local_solved(const jl_fc_problem *p, const double *lambda, const char *path,
                                const char *title, const char *description, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
