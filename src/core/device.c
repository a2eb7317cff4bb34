/* sched_getaffinity and CPU_COUNT */
#define _GNU_SOURCE
#include "device.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int jl_cpu_count_online(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* The CPUs this process may run on (taskset, a cpuset, an MPI launcher's
 * binding), as nproc counts them; all online ones where that is unknown. */
int jl_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return jl_cpu_count_online();
}

const char *jl_device_kind_name(jl_device_kind k) { return k == JL_DEVICE_CUDA ? "cuda" : "cpu"; }

static void jl_device_cpu(jl_device *dev, int threads) {
  dev->kind = JL_DEVICE_CPU;
  dev->threads = threads > 0 ? threads : jl_cpu_count();
  dev->cuda_ordinal = -1;
  dev->sm_count = 0;
  snprintf(dev->name, sizeof dev->name, "CPU, %d thread%s", dev->threads,
           dev->threads == 1 ? "" : "s");
}

int jl_device_select(jl_device *dev, const char *want, int threads, int *notice, jl_error *err) {
  return jl_device_select_slot(dev, want, threads, 0, notice, err);
}

int jl_device_select_slot(jl_device *dev, const char *want, int threads, int slot, int *notice,
                          jl_error *err) {
  if (notice) *notice = 0;
  memset(dev, 0, sizeof *dev);
  if (!want || strcmp(want, "auto") == 0 || strcmp(want, "cuda") == 0) {
    int must = want && strcmp(want, "cuda") == 0;
#ifdef JL_HAVE_CUDA
    int count = jl_cuda_device_count();
    if (count > 0) {
      jl_device_cpu(dev, threads);
      dev->kind = JL_DEVICE_CUDA;
      dev->cuda_ordinal = (slot > 0 ? slot : 0) % count;
      if (jl_cuda_device_query(dev->cuda_ordinal, dev->name, sizeof dev->name, &dev->sm_count) != 0)
        return jl_error_set(err, JL_ERR_DEVICE, "CUDA device %d could not be queried",
                            dev->cuda_ordinal);
      if (dev->cuda_ordinal != 0 && jl_cuda_device_use(dev->cuda_ordinal) != 0)
        return jl_error_set(err, JL_ERR_DEVICE, "CUDA device %d could not be made current",
                            dev->cuda_ordinal);
      return JL_OK;
    }
    if (must) return jl_error_set(err, JL_ERR_DEVICE, "--device cuda: no CUDA device is present");
#else
    (void)slot;
    if (must)
      return jl_error_set(err, JL_ERR_DEVICE,
                          "--device cuda: this jostle was built without CUDA (meson -Dcuda=enabled)");
#endif
    if (notice) *notice = 1;
    jl_device_cpu(dev, threads);
    return JL_OK;
  }
  if (strcmp(want, "cpu") == 0) {
    jl_device_cpu(dev, threads);
    return JL_OK;
  }
  return jl_error_set(err, JL_ERR_INPUT, "--device: expected cpu, cuda or auto, got '%s'", want);
}

int jl_device_cuda_count(void) {
#ifdef JL_HAVE_CUDA
  int n = jl_cuda_device_count();
  return n > 0 ? n : 0;
#else
  return 0;
#endif
}

#define JL_STR2(x) #x
#define JL_STR(x) JL_STR2(x)

const char *jl_version(void) {
  return JL_STR(JOSTLE_VERSION_MAJOR) "." JL_STR(JOSTLE_VERSION_MINOR) "." JL_STR(JOSTLE_VERSION_PATCH);
}
