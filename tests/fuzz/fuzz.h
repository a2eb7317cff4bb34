/* Shared by the fuzz harnesses (fuzz_*.c) and the corpus replay (replay.c). */
#ifndef JL_FUZZ_H
#define JL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The parsers take paths, as the CLI calls them, so each input goes to a file
 * NAME in a private folder (TMPDIR or /tmp), made once per process and
 * removed at exit; rewritten per input. Returns the file's path. */
const char *jl_fuzz_file(const uint8_t *data, size_t size, const char *name);

/* A broken promise of the parser: report it and abort, which libFuzzer and
 * the replay test count as a crash. */
#define JL_FUZZ_CHECK(cond)                                                          \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "fuzz: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                       \
    }                                                                                \
  } while (0)

/* A refused input: bad input (or out of memory), with a message that names
 * the file (docs/formats.md, error messages). */
void jl_fuzz_check_error(int rc, const jl_error *err, const char *path);

#endif
