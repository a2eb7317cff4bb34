// Kernels loaded ahead of their first launch. CUDA loads a kernel lazily, at
// its first launch (CUDA_MODULE_LOADING=LAZY, the default), so a job's first
// step pays for every kernel it launches (the 100-row pyramid's first step:
// about 5 ms). Loading them when the job sets up moves that cost there.
#ifndef JL_KERNEL_LOAD_CUH
#define JL_KERNEL_LOAD_CUH

// Loads every kernel of the source files that kernels[0..n) come from (one
// kernel of each file: a file's kernels, CUB's it instantiates included, are
// one library) into the current device's context. Returns how many it
// loaded: 0 where the driver cannot say (older than CUDA 12.5), and the
// kernels then load at their first launch as before; never an error.
extern "C" int jl_cuda_kernels_load(const void *const *kernels, int n);

#endif
