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

#endif
