/* Scene JSON (docs/formats.md) through jl_scene_load, as `scene FILE` reads
 * it, generators included. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "scene.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, "scene.json");
  jl_scene s;
  jl_error err = {0};
  int rc = jl_scene_load(&s, path, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    jl_scene_free(&s);
    return 0;
  }
  JL_FUZZ_CHECK(s.bodies.count >= 1 && s.bodies.count <= JL_SCENE_BODIES_MAX);
  JL_FUZZ_CHECK(isfinite(s.dt) && s.dt > 0 && s.steps >= 1);
  JL_FUZZ_CHECK(memchr(s.name, '\0', sizeof s.name) != NULL);
  int dynamic = 0;
  for (int i = 0; i < s.bodies.count; ++i) {
    const double *q = s.bodies.quat + 4 * i;
    JL_FUZZ_CHECK(s.bodies.material[i] >= 0 && s.bodies.material[i] < s.n_materials);
    JL_FUZZ_CHECK(isfinite(s.bodies.pos[3 * i]) && isfinite(s.bodies.pos[3 * i + 1]) &&
                  isfinite(s.bodies.pos[3 * i + 2]));
    JL_FUZZ_CHECK(fabs(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1.0) < 1e-9);
    JL_FUZZ_CHECK(s.bodies.inv_mass[i] >= 0 && isfinite(s.bodies.inv_mass[i]));
    dynamic += !s.bodies.is_static[i];
  }
  JL_FUZZ_CHECK(dynamic >= 1);
  jl_scene_free(&s);
  return 0;
}
