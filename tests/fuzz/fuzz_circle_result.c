/* Circles result JSON (docs/formats.md) through jl_circle_result_read_json and
 * the exact check, as `verify RESULT.json` and `circles --resume` run them. */
#include <math.h>
#include <string.h>

#include "circles.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, "result.json");
  jl_circle_packing pk;
  jl_circle_problem prob;
  jl_error err = {0};
  int rc = jl_circle_result_read_json(path, &pk, &prob, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    JL_FUZZ_CHECK(pk.x == NULL && prob.radii == NULL);
    return 0;
  }
  JL_FUZZ_CHECK(pk.n >= 1 && pk.n == prob.n);
  for (int i = 0; i < pk.n; ++i) {
    JL_FUZZ_CHECK(isfinite(pk.x[i]) && isfinite(pk.y[i]) && isfinite(pk.r[i]) && pk.r[i] > 0);
    JL_FUZZ_CHECK(prob.radii[i] == pk.r[i]);
  }
  JL_FUZZ_CHECK(memchr(prob.name, '\0', sizeof prob.name) != NULL);
  jl_circle_check chk;
  jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &chk);
  JL_FUZZ_CHECK(chk.legal == 0 || chk.legal == 1);
  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&prob);

  /* --resume with the instance given on the command line reads no problem */
  rc = jl_circle_result_read_json(path, &pk, NULL, &err);
  JL_FUZZ_CHECK(rc == JL_OK);
  jl_circle_packing_free(&pk);
  return 0;
}
