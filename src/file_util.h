/* Whole-file reads and atomic writes (temp file in the same folder, fsync,
 * rename): a reader never sees half a file, and a failed write leaves the
 * old file as it was. */
#ifndef JL_FILE_UTIL_H
#define JL_FILE_UTIL_H

#include <stddef.h>

#include "error.h"

int jl_file_read_all(const char *path, char **data, size_t *len, jl_error *err);
int jl_file_write_atomic(const char *path, const void *data, size_t len, jl_error *err);
/* 1 when both paths name the same existing file. */
int jl_file_same(const char *a, const char *b);

/* Growable text buffer for building outputs before one atomic write. */
typedef struct jl_buf {
  char *data;
  size_t len, cap;
  int failed;                     /* set when an allocation failed */
} jl_buf;
void jl_buf_printf(jl_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
void jl_buf_free(jl_buf *b);

#endif
