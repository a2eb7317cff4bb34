// The streamed JOR / APGD solve's contact constants by field
// (kernels/scene/scene_prox.cu): c, the normal, the levers, diag, mu,
// JL_SOA_FIELDS rows of n contacts (the du pass reads the normal and the
// levers too; the bodies' iso and im it takes per body). The
// contact setup writes them beside the problem's arrays when the step's
// solve will stream (kernels/scene/scene_setup.cu), so the solve reads them
// without a copy of its own; other solves copy them from the problem.
#ifndef JL_JOR_SOA_CUH
#define JL_JOR_SOA_CUH

#include <cstddef>

struct jl_scene_gpu;

enum {
  JL_SOA_C = 0, JL_SOA_NORMAL = 3, JL_SOA_LEVER = 6, JL_SOA_DIAG = 12, JL_SOA_MU = 14,
  JL_SOA_FIELDS = 15
};
// From this many contacts the streamed kernels beat the two per-iteration
// ones (H200: the 8000-brick wall, 63,000 contacts, 3.3 against 2.1 ms per
// solve of 100 iterations; the million-sphere pile, 3 million contacts,
// 47 against 66 ms).
#define JL_JOR_STREAMED_MIN 200000

// Whether a matrix-free (on_g 0) JOR or APGD solve of n contacts streams
// (g->use_streamed: by size, always or never).
int jl_jor_streams(const jl_scene_gpu *g, long long n, int on_g);

// Contact i of n into the rows by field, from the problem's arrays
// (contact_setup.h's layout: frame 9, lever 6, c 3, diag 2 per contact).
static __device__ inline void jl_soa_store(size_t n, size_t i, const double *c,
                                           const double *frame, const double *lever,
                                           const double *diag, const double *mu, double *soa) {
  double *o = soa + i;
  for (int m = 0; m < 3; ++m) o[(JL_SOA_C + m) * n] = c[3 * i + m];
  for (int m = 0; m < 3; ++m) o[(JL_SOA_NORMAL + m) * n] = frame[9 * i + m];
  for (int m = 0; m < 6; ++m) o[(JL_SOA_LEVER + m) * n] = lever[6 * i + m];
  for (int m = 0; m < 2; ++m) o[(JL_SOA_DIAG + m) * n] = diag[2 * i + m];
  o[JL_SOA_MU * n] = mu[i];
}

#endif
