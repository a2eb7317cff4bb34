/* The spatial order of a scene's bodies (body_order.h):
 *   - Morton keys interleave x, y, z bits (x lowest) over the bounding box;
 *   - a shuffled grid comes back in Z order, planes first in their given
 *     order, and the permutation is a bijection;
 *   - gather then scatter gives back every array bit for bit;
 *   - bodies already in order are not copied (no permutation). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "body_order.h"
#include "scene.h"

static void test_morton_key_bits(void **state) {
  (void)state;
  const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  const double top = (double)((1u << JL_MORTON_BITS) - 1);
  double p[3] = {0, 0, 0};
  assert_true(jl_morton_key(p, lo, hi) == 0);
  for (int d = 0; d < 3; ++d) {
    double q[3] = {0, 0, 0};
    q[d] = 1.0 / top; /* one grid step along axis d: bit d */
    assert_true(jl_morton_key(q, lo, hi) == (uint64_t)1 << d);
    q[d] = 2.0 / top; /* two steps: bit 3 + d */
    assert_true(jl_morton_key(q, lo, hi) == (uint64_t)1 << (3 + d));
  }
  double far[3] = {1, 1, 1};
  assert_true(jl_morton_key(far, lo, hi) == ((uint64_t)1 << (3 * JL_MORTON_BITS)) - 1);
  double out[3] = {-5, 7, NAN}; /* clamped to the box; NaN to its low side */
  assert_true(jl_morton_key(out, lo, hi) == (((uint64_t)1 << (3 * JL_MORTON_BITS)) - 1) / 7 * 2);
}

/* side^3 unit spheres on a grid of spacing 2, added in a shuffled order,
 * with a ground plane first and a wall plane in the middle of the list. */
static void shuffled_grid(jl_scene *s, int side, uint64_t seed) {
  jl_error err = {0};
  assert_int_equal(jl_scene_init(s, &err), JL_OK);
  int n = side * side * side;
  int *cell = malloc(sizeof(int) * (size_t)n);
  assert_non_null(cell);
  for (int i = 0; i < n; ++i) cell[i] = i;
  for (int i = n - 1; i > 0; --i) { /* Fisher-Yates with a small LCG */
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    int j = (int)((seed >> 33) % (uint64_t)(i + 1));
    int t = cell[i]; cell[i] = cell[j]; cell[j] = t;
  }
  const double o[3] = {0, 0, 0}, up[3] = {0, 0, 1}, side_n[3] = {1, 0, 0};
  assert_true(jl_scene_add_plane(s, o, up, 0, &err) >= 0);
  for (int i = 0; i < n; ++i) {
    if (i == n / 2) assert_true(jl_scene_add_plane(s, o, side_n, 0, &err) >= 0);
    jl_body_spec b;
    jl_body_spec_default(&b);
    b.shape = JL_SHAPE_SPHERE;
    b.size[0] = b.size[1] = b.size[2] = 1.0;
    b.pos[0] = 2.0 * (cell[i] % side);
    b.pos[1] = 2.0 * (cell[i] / side % side);
    b.pos[2] = 2.0 * (cell[i] / (side * side));
    b.vel[0] = i; /* marks the body */
    assert_true(jl_scene_add_body(s, &b, &err) >= 0);
  }
  free(cell);
}

static void test_shuffled_grid_comes_back_in_z_order(void **state) {
  (void)state;
  jl_scene s;
  const int side = 8, n = side * side * side;
  shuffled_grid(&s, side, 7);
  jl_error err = {0};
  jl_bodies ordered;
  int *perm = NULL;
  assert_int_equal(jl_bodies_order_copy(&ordered, &s.bodies, JL_BODY_ORDER_SPATIAL, &perm, &err),
                   JL_OK);
  assert_non_null(perm);
  assert_int_equal(ordered.count, n + 2);
  /* planes first, in their given order */
  assert_int_equal(perm[0], 0);
  assert_int_equal(perm[1], 1 + n / 2);
  assert_int_equal(ordered.shape[0], JL_SHAPE_PLANE);
  assert_int_equal(ordered.shape[1], JL_SHAPE_PLANE);
  /* a bijection */
  char *seen = calloc((size_t)n + 2, 1);
  assert_non_null(seen);
  for (int k = 0; k < n + 2; ++k) {
    assert_true(perm[k] >= 0 && perm[k] < n + 2);
    assert_int_equal(seen[perm[k]], 0);
    seen[perm[k]] = 1;
  }
  free(seen);
  /* the spheres in Z order of their grid cells: cell k of the curve is
   * the k-th sphere, since the grid is a power of two on a side */
  for (int k = 0; k < n; ++k) {
    const double *p = ordered.pos + 3 * (size_t)(k + 2);
    int q[3] = {(int)(p[0] / 2), (int)(p[1] / 2), (int)(p[2] / 2)};
    int z = 0;
    for (int bit = 0; bit < 3; ++bit)
      for (int d = 0; d < 3; ++d) z |= ((q[d] >> bit) & 1) << (3 * bit + d);
    assert_int_equal(z, k);
  }
  /* gather then scatter restores every array */
  jl_bodies back;
  assert_int_equal(jl_bodies_copy(&back, &s.bodies, &err), JL_OK);
  memset(back.pos, 0, 3 * sizeof(double) * (size_t)back.count);
  memset(back.vel, 0, 3 * sizeof(double) * (size_t)back.count);
  memset(back.shape, 0, (size_t)back.count);
  jl_bodies_scatter(&back, &ordered, perm);
  size_t nb = (size_t)s.bodies.count;
  assert_memory_equal(back.shape, s.bodies.shape, nb);
  assert_memory_equal(back.is_static, s.bodies.is_static, nb);
  assert_memory_equal(back.material, s.bodies.material, nb * sizeof(int));
  assert_memory_equal(back.size, s.bodies.size, 3 * nb * sizeof(double));
  assert_memory_equal(back.pos, s.bodies.pos, 3 * nb * sizeof(double));
  assert_memory_equal(back.quat, s.bodies.quat, 4 * nb * sizeof(double));
  assert_memory_equal(back.vel, s.bodies.vel, 3 * nb * sizeof(double));
  assert_memory_equal(back.omega, s.bodies.omega, 3 * nb * sizeof(double));
  assert_memory_equal(back.inv_mass, s.bodies.inv_mass, nb * sizeof(double));
  assert_memory_equal(back.inv_inertia, s.bodies.inv_inertia, 3 * nb * sizeof(double));

  /* ordered bodies need no further order */
  jl_bodies again;
  int *perm2 = NULL;
  assert_int_equal(jl_bodies_order_copy(&again, &ordered, JL_BODY_ORDER_SPATIAL, &perm2, &err),
                   JL_OK);
  assert_null(perm2);
  /* auto leaves a scene this small as given */
  assert_int_equal(jl_bodies_order_copy(&again, &s.bodies, JL_BODY_ORDER_AUTO, &perm2, &err),
                   JL_OK);
  assert_null(perm2);
  free(perm);
  jl_bodies_free(&back);
  jl_bodies_free(&ordered);
  jl_scene_free(&s);
}

static void test_order_policy(void **state) {
  (void)state;
  assert_false(jl_body_order_applies(JL_BODY_ORDER_AUTO, JL_BODY_ORDER_AUTO_MIN - 1));
  assert_true(jl_body_order_applies(JL_BODY_ORDER_AUTO, JL_BODY_ORDER_AUTO_MIN));
  assert_false(jl_body_order_applies(JL_BODY_ORDER_GIVEN, 1000000));
  assert_true(jl_body_order_applies(JL_BODY_ORDER_SPATIAL, 2));
  assert_false(jl_body_order_applies(JL_BODY_ORDER_SPATIAL, 1));
  jl_body_order o;
  assert_int_equal(jl_body_order_parse("spatial", &o), 0);
  assert_int_equal(o, JL_BODY_ORDER_SPATIAL);
  assert_int_equal(jl_body_order_parse("given", &o), 0);
  assert_int_equal(o, JL_BODY_ORDER_GIVEN);
  assert_int_equal(jl_body_order_parse("auto", &o), 0);
  assert_int_equal(o, JL_BODY_ORDER_AUTO);
  assert_int_equal(jl_body_order_parse("morton", &o), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_morton_key_bits),
    cmocka_unit_test(test_shuffled_grid_comes_back_in_z_order),
    cmocka_unit_test(test_order_policy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
