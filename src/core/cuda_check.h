/* Error checking for the CUDA launchers in kernels/: on failure, writes
 * "call: reason" into the launcher's msg buffer and returns -1. */
#ifndef JL_CUDA_CHECK_H
#define JL_CUDA_CHECK_H

#include <cstdio>
#include <cuda_runtime.h>

#define JL_CUDA_TRY(call)                                                        \
  do {                                                                           \
    cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                     \
      snprintf(msg, (size_t)msg_len, "%s: %s", #call, cudaGetErrorString(e_));   \
      return -1;                                                                 \
    }                                                                            \
  } while (0)

#endif
