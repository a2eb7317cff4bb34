/* The one place that decides where kernels run: the CPU twin on all cores,
 * or CUDA when it was built in and a device is present. */
#ifndef JL_DEVICE_H
#define JL_DEVICE_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum jl_device_kind { JL_DEVICE_CPU = 0, JL_DEVICE_CUDA = 1 } jl_device_kind;

typedef struct jl_device {
  jl_device_kind kind;
  int threads;             /* CPU threads for the twin (also used on CUDA for host work) */
  int cuda_ordinal;
  int sm_count;
  char name[128];          /* "NVIDIA H100 80GB HBM3" or "CPU, 16 threads" */
} jl_device;

/* jl_rank_info, one MPI rank's device and work gathered to rank 0 for the
 * result (src/islands/islands.h), is the public API's (include/jostle/common.h). */

/* want: "cpu", "cuda" or "auto". threads <= 0 means all cores. With "auto"
 * and no device, *notice is set to 1 so the CLI can say it fell back. */
int jl_device_select(jl_device *dev, const char *want, int threads, int *notice, jl_error *err);
/* The same, on CUDA device slot mod the devices present (one MPI rank per
 * device: slot = the rank on its node); makes it the calling thread's device. */
int jl_device_select_slot(jl_device *dev, const char *want, int threads, int slot, int *notice,
                          jl_error *err);
/* The CPUs this process may run on (its affinity mask); the node's online
 * CPUs. */
int jl_cpu_count(void);
int jl_cpu_count_online(void);
const char *jl_device_kind_name(jl_device_kind k);

#ifdef JL_HAVE_CUDA
/* kernels/core/device_info.cu */
int jl_cuda_device_count(void);
int jl_cuda_device_query(int ordinal, char *name, int name_len, int *sm_count);
int jl_cuda_device_use(int ordinal);
/* kernels/core/rng_check.cu: count draws of cuRAND's Philox(seed, sub, offset) */
int jl_cuda_philox_sample(uint64_t seed, uint64_t sub, uint64_t offset, int count,
                          uint32_t *host_out);
#endif

#ifdef __cplusplus
}
#endif

#endif
