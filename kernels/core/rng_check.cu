// cuRAND's Philox stream, sampled for the gpu suite to compare with the
// host implementation in src/core/rng.h.
#include <cstdint>
#include <cuda_runtime.h>
#include <curand_kernel.h>

__global__ void jl_philox_sample_kernel(unsigned long long seed, unsigned long long sub,
                                        unsigned long long offset, int count, uint32_t *out) {
  curandStatePhilox4_32_10_t s;
  curand_init(seed, sub, offset, &s);
  for (int i = 0; i < count; ++i) out[i] = curand(&s);
}

extern "C" int jl_cuda_philox_sample(uint64_t seed, uint64_t sub, uint64_t offset, int count,
                                     uint32_t *host_out) {
  uint32_t *d = nullptr;
  if (cudaMalloc(&d, sizeof(uint32_t) * (size_t)count) != cudaSuccess) return -1;
  jl_philox_sample_kernel<<<1, 1>>>(seed, sub, offset, count, d);
  cudaError_t e = cudaMemcpy(host_out, d, sizeof(uint32_t) * (size_t)count,
                             cudaMemcpyDeviceToHost);
  cudaFree(d);
  return e == cudaSuccess ? 0 : -1;
}
