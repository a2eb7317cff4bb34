// Device discovery for the dispatch point in src/core/device.c.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

extern "C" int jl_cuda_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

extern "C" int jl_cuda_device_query(int ordinal, char *name, int name_len, int *sm_count) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) return -1;
  snprintf(name, (size_t)name_len, "%s", prop.name);
  *sm_count = prop.multiProcessorCount;
  return 0;
}

extern "C" int jl_cuda_device_use(int ordinal) {
  return cudaSetDevice(ordinal) == cudaSuccess ? 0 : -1;
}
