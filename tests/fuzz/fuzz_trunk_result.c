/* Trunk result JSON (docs/formats.md) through jl_trunk_result_read_json, as
 * `verify RESULT.json` and `trunk --resume` read it (the mesh it names is
 * not opened here: the mesh harness covers the loader). */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "mesh.h"
#include "trunk_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, "trunk-result.json");
  jl_trunk_problem p;
  memset(&p, 0, sizeof p);
  jl_block_packing bp;
  jl_error err = {0};
  int rc = jl_trunk_result_read_json(path, &p, &bp, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    JL_FUZZ_CHECK(bp.centre == NULL);
    return 0;
  }
  JL_FUZZ_CHECK(memchr(p.name, '\0', sizeof p.name) && memchr(p.mesh, '\0', sizeof p.mesh));
  JL_FUZZ_CHECK(p.scale > 0 && p.scale == jl_units_scale(p.units));
  JL_FUZZ_CHECK(p.block.x > 0 && p.block.y > 0 && p.block.z > 0);
  JL_FUZZ_CHECK(bp.count >= 0 && bp.count <= bp.capacity);
  for (int i = 0; i < bp.count; ++i) {
    const double *c = bp.centre + 3 * i, *q = bp.quat + 4 * i;
    JL_FUZZ_CHECK(isfinite(c[0]) && isfinite(c[1]) && isfinite(c[2]));
    JL_FUZZ_CHECK(fabs(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) - 1.0) < 1e-5);
  }
  jl_block_packing_free(&bp);
  return 0;
}
