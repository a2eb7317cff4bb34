/* JSON input files: one reader for every JSON format (circle problem and
 * result, trunk problem and result, scene), so their limits and messages
 * are the same: regular file of at most JL_FILE_MAX_BYTES, no NUL byte,
 * "empty file", at most JL_JSON_VALUES_MAX values, and parse errors with
 * line, column, byte and the text there with odd bytes escaped. */
#ifndef JL_JSON_FILE_H
#define JL_JSON_FILE_H

#include <stddef.h>

#include "error.h"

/* Parsed JSON takes about 100 bytes a value (cJSON node and key), 50 times
 * the 2 bytes of "0,": this caps the tree at a few GB whatever the file. */
#define JL_JSON_VALUES_MAX 25000000L

struct cJSON;

/* Parses text[0..len), which need not end in a NUL (name is for messages:
 * the file). On success *root is the tree (cJSON_Delete it); otherwise NULL
 * and err says why. */
int jl_json_parse_text(const char *name, const char *text, size_t len, struct cJSON **root,
                       jl_error *err);
/* Reads path (jl_file_read_all) and parses it (jl_json_parse_text). */
int jl_json_load_file(const char *path, struct cJSON **root, jl_error *err);

#endif
