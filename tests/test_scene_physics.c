/* The scene pipeline (collision, contact setup, prox solve, Moreau step)
 * against known physical answers on the CPU path, through the runner
 * (scene_runner.h). The checks live in scene_checks.h, shared with the
 * device's run of them (tests/gpu_scene_physics.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "scene_checks.h"

/* The stated tolerance of the device comparison (tests/gpu_scene_physics.c)
 * holds between two solvers on the CPU: SOR and JOR. */
static void test_sor_and_jor_agree(void **state) {
  const jl_device *dev = *state;
  double pos, imp;
  sc_compare_runs(dev, JL_SOLVER_SOR, dev, JL_SOLVER_JOR, &pos, &imp);
  assert_true(pos <= SC_CMP_POS);
  assert_true(imp <= SC_CMP_IMP);
}

/* argv[1]: run only the tests matching this pattern. */
int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  jl_error err = {0};
  jl_device one, two; /* the results do not depend on the thread count */
  if (jl_device_select(&one, "cpu", 1, NULL, &err) != JL_OK ||
      jl_device_select(&two, "cpu", 2, NULL, &err) != JL_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_prestate(sc_sphere_rests, &one),
    cmocka_unit_test_prestate(sc_block_slides, &one),
    cmocka_unit_test_prestate(sc_incline, &one),
    cmocka_unit_test_prestate(sc_ball_rebounds, &one),
    cmocka_unit_test_prestate(sc_newtons_cradle, &one),
    cmocka_unit_test_prestate(sc_box_stack_stands, &two),
    cmocka_unit_test_prestate(sc_pyramid_stands, &two),
    cmocka_unit_test_prestate(sc_pyramid_stands_apgd, &two),
    cmocka_unit_test_prestate(sc_pile_energy_decreases, &two),
    cmocka_unit_test_prestate(sc_warm_start_helps, &one),
    cmocka_unit_test_prestate(test_sor_and_jor_agree, &one),
    cmocka_unit_test_prestate(sc_spatial_order_is_given_order, &two),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
