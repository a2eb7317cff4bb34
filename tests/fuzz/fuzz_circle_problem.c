/* Circle problem JSON (docs/formats.md) through jl_circle_problem_load, as
 * `circles --problem` and `verify --problem` read it. */
#include <math.h>
#include <string.h>

#include "circles.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, "problem.json");
  jl_circle_problem p;
  jl_error err = {0};
  int rc = jl_circle_problem_load(&p, path, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    JL_FUZZ_CHECK(p.radii == NULL);
    return 0;
  }
  JL_FUZZ_CHECK(p.n >= 1 && p.n <= 100000 && p.radii);
  for (int i = 0; i < p.n; ++i) JL_FUZZ_CHECK(isfinite(p.radii[i]) && p.radii[i] > 0);
  JL_FUZZ_CHECK(memchr(p.name, '\0', sizeof p.name) && memchr(p.source, '\0', sizeof p.source));
  JL_FUZZ_CHECK(p.best_known_R == 0 || (isfinite(p.best_known_R) && p.best_known_R > 0));
  jl_circle_problem_free(&p);
  return 0;
}
