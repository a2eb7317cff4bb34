/* Per-step statistics of a scene on the device without fetching the bodies
 * (kernels/scene/scene_energy.cu): kinetic and potential energy by a deterministic
 * multi-block reduction, and the last device step's impulses. The CPU twin
 * jl_scene_energy_twin does the same arithmetic in the same order, so the
 * device's sums equal it bit for bit (tests/gpu_scene_physics.c).
 *
 * The reduction: pass 1 gives each block JL_EN_CHUNK consecutive bodies;
 * thread t sums bodies t, t + JL_EN_THREADS, ... of the chunk in order, then
 * the block adds its threads' sums by a fixed tree (stride 128, 64, ..., 1).
 * Each later pass reduces the previous pass's per-block sums the same way,
 * until one value is left. The result depends on the body count only, not
 * on the GPU or the launch. */
#ifndef JL_SCENE_GPU_STATS_H
#define JL_SCENE_GPU_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hd.h"
#include "math3d.h"
#include "rigid_body.h"
#include "scene_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define JL_EN_THREADS 256  /* threads per block (a power of 2: the tree) */
#define JL_EN_PER_THREAD 8 /* items each thread sums before the tree */
#define JL_EN_CHUNK (JL_EN_THREADS * JL_EN_PER_THREAD)

/* Kinetic and potential energy of body k (0 for static bodies), as
 * jl_scene_energy (scene.c) writes them: 1/2 m v^2 + 1/2 w_b . I w_b with
 * w_b the body-frame angular velocity, and -m g . x. */
JL_HD static inline void jl_en_body(const uint8_t *is_static, const double *pos,
                                    const double *quat, const double *vel,
                                    const double *omega, const double *inv_mass,
                                    const double *inv_inertia, const double gravity[3], long k,
                                    double *ke, double *pe) {
  *ke = 0.0;
  *pe = 0.0;
  if (is_static[k]) return;
  double m = 1.0 / inv_mass[k];
  const double *v = vel + 3 * k, *w = omega + 3 * k, *x = pos + 3 * k, *q = quat + 4 * k;
  const double *ii = inv_inertia + 3 * k;
  jl_quat qq = {q[0], q[1], q[2], q[3]};
  jl_vec3 wl = jl_quat_rotate(jl_quat_conj(qq), jl_v3(w[0], w[1], w[2]));
  *ke = 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
        0.5 * (wl.x * wl.x / ii[0] + wl.y * wl.y / ii[1] + wl.z * wl.z / ii[2]);
  *pe = -(m * (gravity[0] * x[0] + gravity[1] * x[1] + gravity[2] * x[2]));
}

/* Number of blocks of a pass over n items. */
JL_HD static inline long jl_en_blocks(long n) { return n > 0 ? (n + JL_EN_CHUNK - 1) / JL_EN_CHUNK : 1; }

/* CPU twin of the device reduction: the energies of the bodies with the
 * device's order of additions. 0 or JL_ERR_NOMEM. */
int jl_scene_energy_twin(const jl_bodies *b, const double gravity[3], double *kinetic,
                         double *potential, jl_error *err);

/* Device scratch of the reduction (owned by the caller, grown as needed). */
typedef struct jl_gpu_stats_ws {
  void *buf;
  size_t cap;
} jl_gpu_stats_ws;

/* Energies of the bodies in the arena (the state after the last device
 * step); two doubles cross to the host. Built without CUDA: JL_ERR_DEVICE. */
int jl_scene_gpu_energy(jl_scene_gpu *g, const double gravity[3], jl_gpu_stats_ws *ws,
                        double *kinetic, double *potential, jl_error *err);
void jl_gpu_stats_ws_free(jl_gpu_stats_ws *ws);

/* Waits until the device has done the work queued so far (timing). */
int jl_scene_gpu_sync(jl_scene_gpu *g, jl_error *err);

/* The last device step's contacts' keys, sorted, and impulses in world
 * coordinates (3 per contact): the step's warm-start memory, the same as
 * jl_stepper's prev_key / prev_imp after jl_stepper_step. *keys and *imp are
 * grown to *cap as needed (realloc); *n: the count. */
int jl_scene_gpu_get_impulses(jl_scene_gpu *g, uint64_t **keys, double **imp, int *cap, int *n,
                              jl_error *err);
/* Replaces that memory with n keys (sorted) and impulses, for the next
 * device step's warm start (the runner after it renumbers the bodies). */
int jl_scene_gpu_set_impulses(jl_scene_gpu *g, const uint64_t *keys, const double *imp, int n,
                              jl_error *err);
/* Grows *keys (m) and *imp (3 m) to hold m contacts; *cap: what they hold. */
int jl_impulses_reserve(uint64_t **keys, double **imp, int *cap, int m, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
