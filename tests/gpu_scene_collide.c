/* gpu suite: collision detection on the device (kernels/scene/scene_collide.cu)
 * against the CPU reference: the candidate pairs equal jl_broad_phase_run's
 * (same set, same order), the contacts equal jl_collide's byte for byte
 * (same order, every field) by the general narrow kernels and, in a scene
 * without boxes, by those for round shapes; two runs give identical bytes, and the arena
 * grows for a larger scene and is reused for a smaller one. Exit 77 without
 * a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_test.h"

#include "broad_phase.h"
#include "collide.h"
#include "device.h"
#include "scene.h"
#include "scene_fixtures.h"
#include "scene_gpu.h"

#ifdef JL_HAVE_CUDA
static jl_scene_gpu *new_gpu(void) {
  jl_device dev;
  jl_error err = {0};
  assert_int_equal(jl_device_select(&dev, "cuda", 0, NULL, &err), JL_OK);
  jl_scene_gpu *g = NULL;
  assert_int_equal(jl_scene_gpu_create(&g, &dev, &err), JL_OK);
  return g;
}

static void assert_contacts_equal(const jl_contacts *x, const jl_contacts *y) {
  assert_int_equal(x->count, y->count);
  size_t c = (size_t)x->count;
  assert_memory_equal(x->body_a, y->body_a, c * sizeof(int));
  assert_memory_equal(x->body_b, y->body_b, c * sizeof(int));
  assert_memory_equal(x->point, y->point, 3 * c * sizeof(double));
  assert_memory_equal(x->normal, y->normal, 3 * c * sizeof(double));
  assert_memory_equal(x->gap, y->gap, c * sizeof(double));
  assert_memory_equal(x->key, y->key, c * sizeof(uint64_t));
}

/* One scene through both paths; returns the number of contacts (and the
 * device's stats into out unless NULL). */
static int compare_scene_stats(jl_scene_gpu *g, const jl_scene *s, double margin,
                               jl_gpu_collide_stats *out) {
  jl_error err = {0};
  const jl_bodies *b = &s->bodies;
  jl_broad_phase bp;
  jl_contacts cpu, gpu, again;
  assert_int_equal(jl_broad_phase_init(&bp, &err), JL_OK);
  assert_int_equal(jl_contacts_init(&cpu, 16, &err), JL_OK);
  assert_int_equal(jl_contacts_init(&gpu, 16, &err), JL_OK);
  assert_int_equal(jl_contacts_init(&again, 16, &err), JL_OK);
  assert_int_equal(jl_collide(b, margin, 2, &bp, &cpu, &err), JL_OK);

  assert_int_equal(jl_scene_gpu_set_bodies(g, b, &err), JL_OK);
  jl_gpu_collide_stats st;
  int rc = jl_scene_gpu_collide(g, margin, &st, &err);
  if (rc != JL_OK) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, JL_OK);
  assert_int_equal(st.pairs, bp.pair_count);
  int *pa = malloc(sizeof(int) * (size_t)(st.pairs + 1)), *pb = malloc(sizeof(int) * (size_t)(st.pairs + 1));
  assert_true(pa && pb);
  assert_int_equal(jl_scene_gpu_get_pairs(g, pa, pb, &err), JL_OK);
  assert_memory_equal(pa, bp.pair_a, sizeof(int) * (size_t)st.pairs);
  assert_memory_equal(pb, bp.pair_b, sizeof(int) * (size_t)st.pairs);
  assert_int_equal(jl_scene_gpu_get_contacts(g, &gpu, &err), JL_OK);
  assert_int_equal(st.contacts, gpu.count);
  assert_contacts_equal(&cpu, &gpu);

  /* determinism: the same step again, identical bytes; no new memory */
  size_t bytes = jl_scene_gpu_bytes(g);
  assert_int_equal(jl_scene_gpu_collide(g, margin, &st, &err), JL_OK);
  assert_int_equal(jl_scene_gpu_get_contacts(g, &again, &err), JL_OK);
  assert_contacts_equal(&gpu, &again);
  assert_true(jl_scene_gpu_bytes(g) == bytes);

  int n = cpu.count;
  if (out) *out = st;
  free(pa);
  free(pb);
  jl_contacts_free(&cpu);
  jl_contacts_free(&gpu);
  jl_contacts_free(&again);
  jl_broad_phase_free(&bp);
  return n;
}

static int compare_scene(jl_scene_gpu *g, const jl_scene *s, double margin) {
  return compare_scene_stats(g, s, margin, NULL);
}

static void test_mixed_scene_with_planes_and_large_box(void **state) {
  (void)state;
  jl_scene s;
  assert_int_equal(fx_mixed_scene(&s, 8, 21, 1, 1), 0);
  jl_scene_gpu *g = new_gpu();
  int n = compare_scene(g, &s, 0.02);
  assert_true(n > 1000);  /* every shape pair occurs in this scene */
  jl_scene_gpu_set_staged_narrow(g, 0);  /* count and write passes: the same bytes */
  assert_int_equal(compare_scene(g, &s, 0.02), n);
  jl_scene_gpu_destroy(g);
  jl_scene_free(&s);
}

/* No boxes: the narrow phase's kernels for round shapes (spheres of two
 * sizes, a large static sphere, planes on either side of a pair), the same
 * bytes as the CPU's jl_collide. */
static void test_round_scene_with_planes_and_large_sphere(void **state) {
  (void)state;
  jl_scene s;
  assert_int_equal(fx_mixed_scene(&s, 8, 22, 1, 1), 0);
  jl_bodies *b = &s.bodies;
  for (int k = 0; k < b->count; ++k)
    if (b->shape[k] == JL_SHAPE_BOX) {
      b->shape[k] = JL_SHAPE_SPHERE;
      b->size[3 * k] = b->is_static[k] ? 15.0 : 0.45;
      if (b->is_static[k]) b->pos[3 * k + 2] = -15.0 + 0.05;
    }
  jl_scene_gpu *g = new_gpu();
  int n = compare_scene(g, &s, 0.02);
  assert_true(n > 1000);
  jl_scene_gpu_set_round_narrow(g, 0);  /* the general kernels: the same bytes */
  assert_int_equal(compare_scene(g, &s, 0.02), n);
  jl_scene_gpu_destroy(g);
  jl_scene_free(&s);
}

/* Bodies of many sizes: the small ones in one grid cell, the large in every
 * cell they span; then a second cluster far away, so the cells' table is
 * hashed (grid_pairs.h). Pairs and contacts still the CPU's. */
static void test_spanning_bodies_and_hashed_cells(void **state) {
  (void)state;
  jl_scene s;
  assert_int_equal(fx_cluster_scene(&s), 0);
  jl_scene_gpu *g = new_gpu();
  jl_gpu_collide_stats st;
  int n = compare_scene_stats(g, &s, 0.02, &st);
  assert_true(n > 1000);
  assert_true(st.spans > 0 && st.spans < 700 / 2);
  assert_int_equal(st.hashed, 0);
  assert_int_equal(fx_cluster(&s, 500, 900.0, 6), 0);
  assert_true(compare_scene_stats(g, &s, 0.02, &st) > n);
  assert_int_equal(st.hashed, 1);
  jl_scene_gpu_destroy(g);
  jl_scene_free(&s);
}

static void test_arena_grows_and_is_reused(void **state) {
  (void)state;
  jl_scene small, big;
  assert_int_equal(fx_mixed_scene(&small, 3, 1, 0, 0), 0);
  assert_int_equal(fx_mixed_scene(&big, 16, 2, 1, 1), 0);
  jl_scene_gpu *g = new_gpu();
  assert_true(compare_scene(g, &small, 0.0) > 0);
  size_t before = jl_scene_gpu_bytes(g);
  assert_true(compare_scene(g, &big, 0.05) > 0);
  size_t after = jl_scene_gpu_bytes(g);
  assert_true(after > before);
  assert_true(compare_scene(g, &small, 0.0) > 0);
  assert_true(jl_scene_gpu_bytes(g) == after);  /* never shrinks, nothing reallocated */
  jl_scene_gpu_destroy(g);
  jl_scene_free(&small);
  jl_scene_free(&big);
}

/* A capped arena: the stage that does not fit fails with JL_ERR_NOMEM and
 * says what it needed; without the cap the same scene runs. */
static void test_memory_limit_reports_bytes(void **state) {
  (void)state;
  jl_error err = {0};
  jl_scene s;
  assert_int_equal(fx_mixed_scene(&s, 8, 21, 1, 1), 0);
  jl_scene_gpu *g = new_gpu();
  jl_scene_gpu_set_limit(g, 1000);
  assert_int_equal(jl_scene_gpu_set_bodies(g, &s.bodies, &err), JL_ERR_NOMEM);
  assert_non_null(strstr(err.msg, "out of memory"));
  assert_non_null(strstr(err.msg, "bytes"));
  jl_scene_gpu_set_limit(g, 0);
  assert_int_equal(jl_scene_gpu_set_bodies(g, &s.bodies, &err), JL_OK);
  size_t held = jl_scene_gpu_bytes(g);
  jl_scene_gpu_set_limit(g, held + 4096);  /* the bodies fit, the broad phase does not */
  jl_gpu_collide_stats st;
  assert_int_equal(jl_scene_gpu_collide(g, 0.02, &st, &err), JL_ERR_NOMEM);
  assert_non_null(strstr(err.msg, "needs"));
  assert_true(jl_scene_gpu_bytes(g) <= held + 4096);
  jl_scene_gpu_set_limit(g, 0);
  assert_true(compare_scene(g, &s, 0.02) > 1000);
  jl_scene_gpu_destroy(g);
  jl_scene_free(&s);
}

/* Edge cases: only static bodies (no pairs); a lone sphere on the planes
 * with no grid neighbours; a dense grid of touching spheres. */
static void test_edge_scenes(void **state) {
  (void)state;
  jl_error err = {0};
  jl_scene_gpu *g = new_gpu();
  jl_scene s;
  assert_int_equal(fx_mixed_scene(&s, 2, 4, 1, 1), 0);
  for (int k = 0; k < s.bodies.count; ++k) s.bodies.is_static[k] = 1;
  assert_int_equal(compare_scene(g, &s, 0.02), 0);
  jl_scene_free(&s);

  assert_int_equal(jl_scene_init(&s, &err), JL_OK);
  double p0[3] = {0, 0, 0}, nz[3] = {0, 0, 1};
  assert_true(jl_scene_add_plane(&s, p0, nz, 0, &err) >= 0);
  jl_body_spec b;
  jl_body_spec_default(&b);
  b.size[0] = 0.5;
  b.pos[2] = 0.49;
  assert_true(jl_scene_add_body(&s, &b, &err) >= 0);
  assert_int_equal(compare_scene(g, &s, 0.0), 1);
  jl_scene_free(&s);

  assert_int_equal(jl_scene_init(&s, &err), JL_OK);
  assert_true(jl_scene_add_plane(&s, p0, nz, 0, &err) >= 0);
  jl_body_spec_default(&b);
  b.mass = 1.0;
  int counts[3] = {12, 12, 12};
  double origin[3] = {0, 0, 0.5};
  assert_int_equal(jl_scene_gen_sphere_grid(&s, &b, 0.5, counts, 1.0, origin, &err), JL_OK);
  /* touching neighbours exactly (gap 0): 3 * 11 * 144 pairs plus 144 on the floor */
  assert_int_equal(compare_scene(g, &s, 1e-9), 3 * 11 * 144 + 144);
  jl_scene_free(&s);
  jl_scene_gpu_destroy(g);
}
#endif

int main(void) {
#ifdef JL_HAVE_CUDA
  if (!jl_gpu_test_begin()) return JL_TEST_SKIP;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_mixed_scene_with_planes_and_large_box),
    cmocka_unit_test(test_round_scene_with_planes_and_large_sphere),
    cmocka_unit_test(test_spanning_bodies_and_hashed_cells),
    cmocka_unit_test(test_arena_grows_and_is_reused),
    cmocka_unit_test(test_edge_scenes),
    cmocka_unit_test(test_memory_limit_reports_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  return jl_gpu_test_no_cuda();
#endif
}
