/* Trunk problem JSON (docs/formats.md) through jl_trunk_problem_load, as
 * `trunk PROBLEM.json` reads it (the mesh it names is not opened here: the
 * mesh harness covers the loader). */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "mesh.h"
#include "trunk_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, "trunk.json");
  jl_trunk_problem p;
  memset(&p, 0, sizeof p);
  jl_error err = {0};
  int rc = jl_trunk_problem_load(&p, path, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    return 0;
  }
  JL_FUZZ_CHECK(memchr(p.name, '\0', sizeof p.name) && memchr(p.mesh, '\0', sizeof p.mesh));
  JL_FUZZ_CHECK(p.mesh[0] != '\0' && p.name[0] != '\0');
  JL_FUZZ_CHECK(p.scale > 0 && p.scale == jl_units_scale(p.units));
  JL_FUZZ_CHECK(isfinite(p.block.x) && p.block.x > 0 && isfinite(p.block.y) && p.block.y > 0 &&
                isfinite(p.block.z) && p.block.z > 0);
  return 0;
}
