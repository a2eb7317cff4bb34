/* The seed's third GPU strategy, kept as a measured baseline only (Goetzmann
 * 2007, 4.2.3 "Fully Parallelized Contact Simulation"): one relaxation of ONE
 * packing spread over the whole GPU. Kernel launch k is contact simulation
 * step k: block i handles circle i, its threads each test partners j, and a
 * block reduction sums the moves; the enclosing radius is a separate kernel.
 * The seed found it slower than the serial CPU; `jostle bench spread`
 * measures it against the serial twin below.
 *
 * Both paths do the step of jl_relax_run (src/circles/circle_relax.h) with pair share
 * 1/2: moves (sum/d - 1)(c_i - c_j) / 2 summed over overlapping pairs, a pull
 * back onto the container of radius Rc (INFINITY: none), applied together.
 * Before each step the largest overlap is taken; the run stops, legal, as
 * soon as it is <= tol (tol < 0: never, so all steps run). There is no stall
 * test. The CUDA move sum is a tree reduction, so results may differ from
 * the twin in the last bits. */
#ifndef JL_CIRCLE_SPREAD_H
#define JL_CIRCLE_SPREAD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Relaxes the packing (x, y) of n circles of radii r in place for at most
 * steps steps. *legal_out (may be NULL): 1 when it stopped because the
 * largest overlap was <= tol. *R_out (may be NULL): the enclosing radius
 * max |c_i| + r_i of the result. Returns the steps applied, or -1 when out
 * of memory or n < 1. */
/* Radii 1..n and centres uniform in a square too small for them (seeded
 * Philox): the overlapped start that the spread benchmark and tests relax. */
void jl_spread_random_start(int n, uint64_t seed, double *r, double *x, double *y);

int jl_spread_relax_cpu(const double *r, double *x, double *y, int n, double Rc, double tol,
                        int steps, int *legal_out, double *R_out);

#ifdef JL_HAVE_CUDA
/* kernels/circles/circle_spread.cu: the same on the GPU; copies the packing to the
 * device and back. Returns -1 with msg set on a CUDA error. */
int jl_cuda_spread_relax(const double *r, double *x, double *y, int n, double Rc, double tol,
                         int steps, int *legal_out, double *R_out, char *msg, int msg_len);
#endif

#ifdef __cplusplus
}
#endif

#endif
