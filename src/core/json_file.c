#include "json_file.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "file_util.h"

/* Bytes of context either side of a parse error in the message. */
#define JL_JSON_NEAR_BEFORE 40
#define JL_JSON_NEAR_LEN 80

/* An upper bound on the values cJSON would make: every value but the first
 * follows a '[', '{' or ','; strings are skipped (with their escapes). */
static long jl_json_count_values(const char *text, size_t len) {
  long n = 1;
  int in_string = 0;
  for (size_t i = 0; i < len; ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = 0;
    } else if (c == '"') {
      in_string = 1;
    } else if (c == '[' || c == '{' || c == ',') {
      ++n;
    }
  }
  return n;
}

static int jl_json_parse_error(const char *name, const char *text, size_t len, const char *at,
                               jl_error *err) {
  if (!at || at < text || at > text + len) return jl_error_set(err, JL_ERR_INPUT, "%s: invalid JSON", name);
  size_t off = (size_t)(at - text);
  int line = 1;
  const char *line_start = text;
  for (const char *c = text; c < at; ++c)
    if (*c == '\n') { ++line; line_start = c + 1; }
  long col = (long)(at - line_start) + 1;
  const char *from = at - line_start > JL_JSON_NEAR_BEFORE ? at - JL_JSON_NEAR_BEFORE : line_start;
  const char *stop = text + len;
  size_t n = 0;
  while (n < JL_JSON_NEAR_LEN && from + n < stop && from[n] != '\n' && from[n] != '\r') ++n;
  char near[4 * JL_JSON_NEAR_LEN + 1];
  jl_escape_bytes(near, sizeof near, from, n, 1);
  return jl_error_set(err, JL_ERR_INPUT, "%s: invalid JSON at line %d, column %ld (byte %zu), near: %s",
                      name, line, col, off, near);
}

static size_t jl_json_skip_space(const char *text, size_t i, size_t len) {
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
  return i;
}

int jl_json_parse_text(const char *name, const char *text, size_t len, cJSON **root, jl_error *err) {
  *root = NULL;
  const char *nul = memchr(text, '\0', len);
  if (nul)
    return jl_error_set(err, JL_ERR_INPUT, "%s: NUL byte at byte %zu (not a text file)", name,
                        (size_t)(nul - text));
  if (jl_json_skip_space(text, 0, len) == len)
    return jl_error_set(err, JL_ERR_INPUT, "%s: empty file (expected a JSON object)", name);
  long values = jl_json_count_values(text, len);
  if (values > JL_JSON_VALUES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "%s: too many JSON values (about %ld, the limit is %ld)",
                        name, values, JL_JSON_VALUES_MAX);
  const char *end = NULL;
  /* Length-bounded, so text need not end in a NUL; what follows the value
   * is checked here. */
  *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!*root) return jl_json_parse_error(name, text, len, end, err);
  size_t rest = jl_json_skip_space(text, end ? (size_t)(end - text) : len, len);
  if (rest < len) {
    cJSON_Delete(*root);
    *root = NULL;
    return jl_json_parse_error(name, text, len, text + rest, err);
  }
  return JL_OK;
}

int jl_json_load_file(const char *path, cJSON **root, jl_error *err) {
  *root = NULL;
  char *text = NULL;
  size_t len = 0;
  int rc = jl_file_read_all(path, &text, &len, err);
  if (rc) return rc;
  rc = jl_json_parse_text(path, text, len, root, err);
  free(text);
  return rc;
}
