// The streamed JOR / APGD solve's contact constants by field
// (kernels/scene/scene_prox.cu): c, the normal, the levers, diag, mu and the
// sphere sides' arms, JL_SOA_FIELDS rows of n contacts (du reads the normal
// and the levers too). A side whose arm l is not 0 has the lever l n
// (jl_sm_sphere_lever), and its 3 lever rows are not read. The
// contact setup writes them beside the problem's arrays when the step's
// solve will stream (kernels/scene/scene_setup.cu), so the solve reads them
// without a copy of its own; other solves copy them from the problem.
#ifndef JL_JOR_SOA_CUH
#define JL_JOR_SOA_CUH

#include <cstddef>

#include "setup_math.h"

struct jl_scene_gpu;

enum {
  JL_SOA_C = 0, JL_SOA_NORMAL = 3, JL_SOA_LEVER = 6, JL_SOA_DIAG = 12, JL_SOA_MU = 14,
  JL_SOA_ARM = 15, JL_SOA_FIELDS = 17
};
// From this many contacts the streamed kernels beat the two per-iteration
// ones (H200: the 8000-brick wall, 63,000 contacts, 3.3 against 2.1 ms per
// solve of 100 iterations; the million-sphere pile, 3 million contacts,
// 47 against 66 ms).
#define JL_JOR_STREAMED_MIN 200000

// Whether a matrix-free (on_g 0) JOR or APGD solve of n contacts streams
// (g->use_streamed: by size, always or never).
int jl_jor_streams(const jl_scene_gpu *g, long long n, int on_g);
// Whether such a solve of n contacts and nb bodies takes the streamed
// kernels: it streams and the persistent solve does not take it (the step
// has its setup write the constants by field then).
int jl_jor_solve_streams(jl_scene_gpu *g, long long n, long long nb, int on_g);

// Contact i of n into the rows by field, from its arrays in the problem's
// layout (contact_setup.h: c 3, frame 9, lever 6, diag 2, mu 1, arm 2), each
// pointer at contact i's own.
static __device__ inline void jl_soa_store(size_t n, size_t i, const double *c,
                                           const double *frame, const double *lever,
                                           const double *diag, const double *mu,
                                           const double *arm, double *soa) {
  double *o = soa + i;
  for (int m = 0; m < 3; ++m) o[(JL_SOA_C + m) * n] = c[m];
  for (int m = 0; m < 3; ++m) o[(JL_SOA_NORMAL + m) * n] = frame[m];
  for (int m = 0; m < 6; ++m) o[(JL_SOA_LEVER + m) * n] = lever[m];
  for (int m = 0; m < 2; ++m) o[(JL_SOA_DIAG + m) * n] = diag[m];
  o[JL_SOA_MU * n] = mu[0];
  for (int m = 0; m < 2; ++m) o[(JL_SOA_ARM + m) * n] = arm[m];
}

// Side side's lever of contact i (f = soa + i) into lv: l n from the arm l
// and the normal nrm where l is not 0 (jl_sm_sphere_lever's bits), else the
// lever's 3 rows.
static __device__ inline void jl_soa_lever(size_t n, const double *f, const double nrm[3],
                                           int side, double lv[3]) {
  double l = f[(JL_SOA_ARM + side) * n];
  if (l != 0.0) {
    for (int m = 0; m < 3; ++m) lv[m] = l * nrm[m];
  } else {
    for (int m = 0; m < 3; ++m) lv[m] = f[(JL_SOA_LEVER + 3 * side + m) * n];
  }
}

// A body list entry as the streamed solve reads it: its contact i and the
// body's side of it (0: ka[i], 1: kb[i]) in one int (n < 2^30: the setup's
// limit), so du loads no ka.
static __host__ __device__ inline int jl_soa_entry(int i, int side) { return 2 * i + side; }

// Body k's six sums acc += M^-1 W lam over its contacts in its contact order
// (jl_pm_du_body's additions, started from the caller's acc), each term
// rebuilt from the contact's impulse, normal and lever: the frame by
// jl_sm_frame and, where the body's inertia is isotropic (s >= 0),
// I^-1 (r x d) = s (r x d), the setup's own arithmetic, so jl_sm_mw_comp's
// bits on the problem's frame, irx and im (im: the body's 1/m). Other
// bodies read irx. The streamed solve's du and the step's end velocity.
// body_entry: jl_soa_entry's of body k's contacts (the arena's p_body_entry).
static __device__ inline void jl_soa_du_body(size_t n, const double *soa, const int *body_ptr,
                                             const int *body_entry, const double *irx, double s,
                                             double im, int k, const double *lam, double acc[6]) {
  for (int e = body_ptr[k]; e < body_ptr[k + 1]; ++e) {
    int i = body_entry[e] >> 1, side = body_entry[e] & 1;
    const double *f = soa + i;
    double nrm[3], kf[9], ir[9];
    for (int m = 0; m < 3; ++m) nrm[m] = f[(JL_SOA_NORMAL + m) * n];
    jl_sm_frame(nrm, kf);
    if (s >= 0.0) {  // jl_int_inv_inertia_apply's isotropic product
      double lv[3], rows[9];
      jl_soa_lever(n, f, nrm, side, lv);
      jl_sm_lever_rows(lv, kf, rows);
      for (int d = 0; d < 3; ++d) jl_int_iso_apply(s, rows + 3 * d, ir + 3 * d);
    } else {
      for (int m = 0; m < 9; ++m) ir[m] = irx[18 * (size_t)i + 9 * side + m];
    }
    const double *x = lam + 3 * (size_t)i;
#pragma unroll
    for (int c = 0; c < 6; ++c) acc[c] += jl_sm_mw_comp_rows(kf, ir, im, side, x, c);
  }
}

#endif
