/* The gpu suite's scene comparisons with the CPU twin (src/scene/step_twin.h): a
 * device step's summary and bodies against the twin's, and one device run
 * against another (determinism). cmocka asserts: include after cmocka.h. */
#ifndef JL_GPU_TWIN_CHECKS_H
#define JL_GPU_TWIN_CHECKS_H

#include "scene.h"
#include "scene_gpu.h"
#include "step_twin.h"

/* The device step's summary equals the twin's: the same contacts,
 * iterations, stop and restarts, and the same deepest penetration. */
static inline void gtc_stats_equal(const jl_step_twin_stats *t, const jl_gpu_step_stats *b) {
  assert_int_equal(t->contacts, b->contacts);
  assert_int_equal(t->iterations, b->iterations);
  assert_int_equal(t->converged, b->converged);
  assert_int_equal(t->restarts, b->restarts);
  assert_true(t->max_penetration == b->max_penetration);
}

/* Two body sets equal byte for byte: positions, orientations, velocities. */
static inline void gtc_bodies_equal(const jl_bodies *a, const jl_bodies *b) {
  assert_int_equal(a->count, b->count);
  size_t n = (size_t)a->count;
  assert_memory_equal(a->pos, b->pos, 3 * n * sizeof(double));
  assert_memory_equal(a->quat, b->quat, 4 * n * sizeof(double));
  assert_memory_equal(a->vel, b->vel, 3 * n * sizeof(double));
  assert_memory_equal(a->omega, b->omega, 3 * n * sizeof(double));
}

#endif
