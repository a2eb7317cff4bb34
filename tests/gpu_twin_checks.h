/* The gpu suite's scene comparisons with the CPU twin (src/scene/step_twin.h): a
 * device step's summary, contacts, warm-start memory and bodies against the
 * twin's, and one device run against another (determinism). cmocka asserts:
 * include after cmocka.h. */
#ifndef JL_GPU_TWIN_CHECKS_H
#define JL_GPU_TWIN_CHECKS_H

#include <stdlib.h>

#include "contact.h"
#include "device.h"
#include "scene.h"
#include "scene_gpu.h"
#include "scene_gpu_stats.h"
#include "step_twin.h"

/* Two arenas on the CUDA device, each with its scene's bodies: the run
 * checked against the twin (g) and the one checked against it (h). */
static inline void gtc_two_arenas(const jl_scene *a, const jl_scene *b, jl_scene_gpu **g,
                                  jl_scene_gpu **h) {
  jl_error err = {0};
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  *g = *h = NULL;
  assert_int_equal(jl_scene_gpu_create(g, &dev, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_create(h, &dev, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_set_bodies(*g, &a->bodies, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_set_bodies(*h, &b->bodies, &err), JL_OK);
}

/* The device step's summary equals the twin's: the same contacts,
 * iterations, stop and restarts, and the same deepest penetration. */
static inline void gtc_stats_equal(const jl_step_twin_stats *t, const jl_gpu_step_stats *b) {
  assert_int_equal(t->contacts, b->contacts);
  assert_int_equal(t->iterations, b->iterations);
  assert_int_equal(t->converged, b->converged);
  assert_int_equal(t->restarts, b->restarts);
  assert_true(t->max_penetration == b->max_penetration);
}

/* The device step's closed contacts (jl_scene_gpu_get_contacts: the narrow
 * phase keeps only those) and its warm-start memory (keys sorted, world
 * impulses) equal the twin's last step byte for byte. */
static inline void gtc_contacts_equal(const jl_step_twin *t, jl_scene_gpu *g) {
  jl_error err = {0};
  jl_contacts c;
  assert_int_equal(jl_contacts_init(&c, 16, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_get_contacts(g, &c, &err), JL_OK);
  const jl_contacts *x = &t->contacts;
  assert_int_equal(x->count, c.count);
  size_t m = (size_t)c.count;
  assert_memory_equal(x->body_a, c.body_a, m * sizeof(int));
  assert_memory_equal(x->body_b, c.body_b, m * sizeof(int));
  assert_memory_equal(x->point, c.point, 3 * m * sizeof(double));
  assert_memory_equal(x->normal, c.normal, 3 * m * sizeof(double));
  assert_memory_equal(x->gap, c.gap, m * sizeof(double));
  assert_memory_equal(x->key, c.key, m * sizeof(uint64_t));
  jl_contacts_free(&c);
  uint64_t *keys = NULL;
  double *imp = NULL;
  int cap = 0, n = 0;
  assert_int_equal(jl_scene_gpu_get_impulses(g, &keys, &imp, &cap, &n, &err), JL_OK);
  assert_int_equal(n, t->prev_n);
  assert_memory_equal(keys, t->prev_key, (size_t)n * sizeof(uint64_t));
  assert_memory_equal(imp, t->prev_imp, 3 * (size_t)n * sizeof(double));
  free(keys);
  free(imp);
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
