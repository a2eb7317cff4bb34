#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_util.h"

int jl_cli_int(const char *opt, const char *s, long lo, long hi, long *out, jl_error *err) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0')
    return jl_error_set(err, JL_ERR_INPUT, "%s: expected an integer, got '%s'", opt, s);
  if (v < lo || v > hi)
    return jl_error_set(err, JL_ERR_INPUT, "%s: must be between %ld and %ld, got %ld", opt, lo,
                        hi, v);
  *out = v;
  return JL_OK;
}

int jl_cli_u64(const char *opt, const char *s, uint64_t *out, jl_error *err) {
  char *end = NULL;
  errno = 0;
  if (*s == '-') return jl_error_set(err, JL_ERR_INPUT, "%s: must not be negative, got '%s'", opt, s);
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end != '\0')
    return jl_error_set(err, JL_ERR_INPUT, "%s: expected an unsigned integer, got '%s'", opt, s);
  *out = (uint64_t)v;
  return JL_OK;
}

int jl_cli_double(const char *opt, const char *s, double lo, double hi, double *out,
                  jl_error *err) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end != '\0' || !isfinite(v))
    return jl_error_set(err, JL_ERR_INPUT, "%s: expected a finite number, got '%s'", opt, s);
  if (v < lo || v > hi)
    return jl_error_set(err, JL_ERR_INPUT, "%s: must be between %g and %g, got %g", opt, lo, hi, v);
  *out = v;
  return JL_OK;
}

int jl_cli_fail(const jl_error *err) {
  /* Messages quote the input (keys, values, paths): control bytes are
   * escaped so a file cannot drive the terminal or split the line. */
  char safe[4 * JL_ERROR_MSG_MAX];
  jl_escape_bytes(safe, sizeof safe, err->msg, strlen(err->msg), 0);
  fprintf(stderr, "jostle: %s\n", safe[0] ? safe : "failed");
  switch (err->code) {
  case JL_ERR_INPUT: return 2;
  case JL_ERR_IO: return 3;
  case JL_ERR_DEVICE: return 4;
  case JL_ERR_NOT_LEGAL: return 1;
  default: return 5;
  }
}

void jl_cli_sibling(const char *json_path, const char *ext, char *out, size_t out_len) {
  size_t n = strlen(json_path);
  if (n >= 5 && strcmp(json_path + n - 5, ".json") == 0) n -= 5;
  snprintf(out, out_len, "%.*s%s", (int)n, json_path, ext);
}
