/* Vector and quaternion math against hand-computed rotations. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "math3d.h"

static void assert_vec(jl_vec3 a, double x, double y, double z) {
  assert_true(fabs(a.x - x) < 1e-15 && fabs(a.y - y) < 1e-15 && fabs(a.z - z) < 1e-15);
}

static void test_vector_ops(void **state) {
  (void)state;
  jl_vec3 a = jl_v3(1, 2, 3), b = jl_v3(-2, 0.5, 4);
  assert_vec(jl_v3_cross(a, b), 2 * 4 - 3 * 0.5, 3 * -2 - 1 * 4, 1 * 0.5 - 2 * -2);
  assert_true(jl_v3_dot(a, b) == -2 + 1 + 12);
  assert_true(fabs(jl_v3_len(jl_v3(3, 4, 12)) - 13) < 1e-15);
  assert_vec(jl_v3_normalize(jl_v3(0, 0, 0)), 0, 0, 0);
}

/* A quarter turn about z takes x to y; about x takes y to z. */
static void test_quarter_turns(void **state) {
  (void)state;
  jl_quat qz = jl_quat_axis_angle(jl_v3(0, 0, 1), JL_PI / 2);
  assert_vec(jl_quat_rotate(qz, jl_v3(1, 0, 0)), 0, 1, 0);
  jl_quat qx = jl_quat_axis_angle(jl_v3(1, 0, 0), JL_PI / 2);
  assert_vec(jl_quat_rotate(qx, jl_v3(0, 1, 0)), 0, 0, 1);
  /* composition: first qz then qx takes x -> y -> z */
  assert_vec(jl_quat_rotate(jl_quat_mul(qx, qz), jl_v3(1, 0, 0)), 0, 0, 1);
  /* the conjugate undoes it */
  jl_vec3 v = jl_v3(0.3, -1.2, 2.5);
  jl_vec3 back = jl_quat_rotate(jl_quat_conj(qz), jl_quat_rotate(qz, v));
  assert_vec(back, 0.3, -1.2, 2.5);
}

/* A third of a turn about (1,1,1) cycles the axes: x -> y -> z -> x. */
static void test_body_axes(void **state) {
  (void)state;
  jl_quat q = jl_quat_axis_angle(jl_v3_normalize(jl_v3(1, 1, 1)), 2 * JL_PI / 3);
  jl_vec3 ax[3];
  jl_quat_to_axes(q, ax);
  assert_vec(ax[0], 0, 1, 0);
  assert_vec(ax[1], 0, 0, 1);
  assert_vec(ax[2], 1, 0, 0);
  jl_quat n = jl_quat_normalize((jl_quat){2, 0, 0, 0});
  assert_true(n.w == 1 && n.x == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_vector_ops),
    cmocka_unit_test(test_quarter_turns),
    cmocka_unit_test(test_body_axes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
