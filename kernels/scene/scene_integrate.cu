// Integration kernels of the scene step, one thread per body; the
// arithmetic is src/scene/integrate.h, shared with the CPU twin src/scene/integrate.c.
#include "scene_arena.cuh"

#include "integrate.h"

__global__ void jl_half_step_kernel(int n, const uint8_t *is_static, double *pos, double *quat,
                                    const double *vel, const double *omega, double half_dt) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  jl_int_half_step_body(is_static, pos, quat, vel, omega, k, half_dt);
}

struct jl_gravity {
  double g[3];
};

__global__ void jl_free_velocity_kernel(int n, const uint8_t *is_static, const double *quat,
                                        const double *omega, const double *inv_inertia,
                                        jl_gravity gravity, double dt, double *dv) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  jl_int_free_velocity_body(is_static, quat, omega, inv_inertia, gravity.g, dt, k,
                            dv + 6 * (size_t)k);
}

extern "C" int jl_cuda_scene_half_step(jl_scene_gpu *g, double half_dt, char *msg, int msg_len) {
  if (g->nb == 0) return 0;
  jl_half_step_kernel<<<jl_scene_blocks(g->nb), JL_SCENE_BLOCK>>>(
      g->nb, jl_dp<uint8_t>(g->is_static), jl_dp<double>(g->pos), jl_dp<double>(g->quat),
      jl_dp<double>(g->vel), jl_dp<double>(g->omega), half_dt);
  JL_CUDA_TRY(cudaGetLastError());
  return 0;
}

extern "C" int jl_cuda_scene_free_velocity(jl_scene_gpu *g, const double gravity[3], double dt,
                                           double *dv, char *msg, int msg_len) {
  if (g->nb == 0) return 0;
  jl_gravity gr = {{gravity[0], gravity[1], gravity[2]}};
  jl_free_velocity_kernel<<<jl_scene_blocks(g->nb), JL_SCENE_BLOCK>>>(
      g->nb, jl_dp<uint8_t>(g->is_static), jl_dp<double>(g->quat), jl_dp<double>(g->omega),
      jl_dp<double>(g->inv_inertia), gr, dt, jl_dp<double>(g->dv));
  JL_CUDA_TRY(cudaGetLastError());
  if (dv)
    JL_CUDA_TRY(cudaMemcpy(dv, g->dv.p, 6 * sizeof(double) * (size_t)g->nb, cudaMemcpyDeviceToHost));
  return 0;
}

// A kernel of this file: jl_cuda_kernels_load loads all of them (scene_arena.cu).
extern "C" const void *jl_cuda_scene_integrate_code(void) {
  return (const void *)jl_half_step_kernel;
}
