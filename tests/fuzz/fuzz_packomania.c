/* Packomania text (docs/formats.md) through jl_circle_read_packomania and the
 * exact check, as `verify NAME.txt --n N` and `circles --resume NAME.txt` run
 * them. The radii are 1..n (--n), or all 1 (--equal) for an input of odd
 * length, n the count of data lines, so that a well-formed file gets past the
 * count check; one circle fewer covers the "more circles than the problem"
 * path. */
#include <math.h>
#include <string.h>

#include "circles.h"
#include "fuzz.h"

/* Enough for every seed; more lines only repeat the per-line work. */
#define JL_FUZZ_PM_MAX 2000

/* Lines that are neither blank nor comments, as the reader counts them. */
static int jl_data_lines(const uint8_t *data, size_t size) {
  int count = 0;
  size_t i = 0;
  const uint8_t *nul = memchr(data, '\0', size);
  if (nul) size = (size_t)(nul - data);  /* the reader stops there */
  while (i < size) {
    size_t j = i;
    while (j < size && (data[j] == ' ' || data[j] == '\t' || data[j] == '\r')) ++j;
    if (j < size && data[j] != '\n' && data[j] != '#') ++count;
    while (i < size && data[i] != '\n') ++i;
    ++i;
  }
  return count;
}

static void jl_read_one(const char *path, int n, int equal) {
  jl_circle_problem prob;
  jl_error err = {0};
  int rc = equal ? jl_circle_problem_equal(&prob, n, &err) : jl_circle_problem_zimmermann(&prob, n, &err);
  JL_FUZZ_CHECK(rc == JL_OK);
  jl_circle_packing pk;
  rc = jl_circle_read_packomania(path, &prob, &pk, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    JL_FUZZ_CHECK(pk.x == NULL);
  } else {
    JL_FUZZ_CHECK(pk.n == n);
    for (int i = 0; i < n; ++i)
      JL_FUZZ_CHECK(isfinite(pk.x[i]) && isfinite(pk.y[i]) && pk.r[i] == prob.radii[i]);
    JL_FUZZ_CHECK(isfinite(pk.R) && pk.R > 0);
    jl_circle_check chk;
    jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &chk);
    jl_circle_packing_free(&pk);
  }
  jl_circle_problem_free(&prob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, "packing.txt");
  int lines = jl_data_lines(data, size);
  int n = lines < 1 ? 1 : lines > JL_FUZZ_PM_MAX ? JL_FUZZ_PM_MAX : lines;
  jl_read_one(path, n, size % 2 == 1);
  if (n > 1) jl_read_one(path, n - 1, 0);
  return 0;
}
