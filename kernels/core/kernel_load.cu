// Kernels loaded ahead of their first launch (kernel_load.cuh).
#include "kernel_load.cuh"

#include <cuda.h>
#include <vector>

extern "C" int jl_cuda_kernels_load(const void *const *kernels, int n) {
  int loaded = 0;
#if CUDART_VERSION >= 12050
  typedef CUresult (*get_library_fn)(CUlibrary *, CUkernel);
  typedef CUresult (*get_function_fn)(CUfunction *, CUkernel);
  typedef CUresult (*load_fn)(CUfunction);
  void *p[3] = {nullptr, nullptr, nullptr};
  const char *names[3] = {"cuKernelGetLibrary", "cuKernelGetFunction", "cuFuncLoad"};
  for (int k = 0; k < 3; ++k) {
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(names[k], &p[k], 12050, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !p[k]) {
      (void)cudaGetLastError();  // an older driver: the kernels load at their first launch
      return 0;
    }
  }
  get_library_fn get_library = (get_library_fn)p[0];
  get_function_fn get_function = (get_function_fn)p[1];
  load_fn load = (load_fn)p[2];
  for (int i = 0; i < n; ++i) {
    cudaKernel_t k;
    CUlibrary lib;
    unsigned count = 0;
    if (cudaGetKernel(&k, kernels[i]) != cudaSuccess ||
        get_library(&lib, (CUkernel)k) != CUDA_SUCCESS ||
        cudaLibraryGetKernelCount(&count, (cudaLibrary_t)lib) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    std::vector<cudaKernel_t> all(count);
    if (count == 0 ||
        cudaLibraryEnumerateKernels(all.data(), count, (cudaLibrary_t)lib) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    for (cudaKernel_t e : all) {
      CUfunction f;
      if (get_function(&f, (CUkernel)e) == CUDA_SUCCESS && load(f) == CUDA_SUCCESS) ++loaded;
    }
  }
#else
  (void)kernels;
  (void)n;
#endif
  return loaded;
}
