/* Lets one header serve both the CPU twin (C11) and the CUDA kernel. */
#ifndef JL_HD_H
#define JL_HD_H

#ifdef __CUDACC__
#define JL_HD __host__ __device__
#define JL_DEVICE __device__
#else
#define JL_HD
#define JL_DEVICE
#endif

/* fmax without a call on the host: glibc's fmax is a library call (its NaN
 * rule keeps the compiler from inlining it). The same value as fmax for
 * every pair of arguments but a tie of +0 and -0, where fmax too may give
 * either; the device keeps its fmax instruction. */
#ifdef __CUDA_ARCH__
#define jl_fmax fmax
#else
static inline double jl_fmax(double a, double b) { return a > b || b != b ? a : b; }
#endif

#endif
