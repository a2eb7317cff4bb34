/* Whole-file reads and atomic writes (temp file in the same folder, fsync,
 * rename): a reader never sees half a file, and a failed write leaves the
 * old file as it was. */
#ifndef JL_FILE_UTIL_H
#define JL_FILE_UTIL_H

#include <stddef.h>

#include "error.h"

/* Largest file any reader takes (1 GiB): a bound on what one input can make
 * jostle allocate, checked on the opened file before any allocation. */
#define JL_FILE_MAX_BYTES ((size_t)1 << 30)

/* Opens path for reading if it is a regular file (not a directory, FIFO or
 * device) of at most max_bytes; the size in *size. A FIFO is opened without
 * blocking, so it is refused rather than waited on. Returns the descriptor,
 * or -1 with err set (JL_ERR_INPUT). */
int jl_file_open_regular(const char *path, size_t max_bytes, size_t *size, jl_error *err);
/* The whole file, NUL-terminated (*len excludes the NUL), from a regular file
 * of at most JL_FILE_MAX_BYTES (jl_file_open_regular). */
int jl_file_read_all(const char *path, char **data, size_t *len, jl_error *err);
/* jl_file_read_all for text: also refuses a NUL byte ("NUL byte at byte N"),
 * which C string parsing would otherwise take for the end of the file. */
int jl_file_read_text(const char *path, char **data, size_t *len, jl_error *err);
/* Writes s[0..len) into out (cap bytes, always terminated) with control
 * bytes (below 0x20, 0x7f) as \xNN, and with ascii_only every byte from
 * 0x80 too, so input echoed in a message cannot drive the terminal or split
 * the line. Cuts at a whole byte when out is full. Returns out. */
char *jl_escape_bytes(char *out, size_t cap, const char *s, size_t len, int ascii_only);
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
/* Writes the buffer atomically to path and frees it; an earlier allocation
 * failure becomes JL_ERR_NOMEM. */
int jl_buf_write_atomic(jl_buf *b, const char *path, jl_error *err);

/* Shortest of %.15g..%.17g that reads back to the same double, so files
 * round-trip exactly without noise digits like 104.54036376000001. out
 * holds at least 32 chars; returns out. */
char *jl_fmt_double(char *out, size_t cap, double v);
/* Offset of the first byte of s that does not start a well-formed UTF-8
 * sequence, -1 when all of s is UTF-8. */
long jl_utf8_invalid_at(const char *s);
/* A string read from a file must be UTF-8 (it is copied into outputs):
 * JL_ERR_INPUT naming path, key and the bad byte otherwise. */
int jl_utf8_check(const char *s, const char *path, const char *key, jl_error *err);

/* JSON pieces: a number (null when not finite), a string with escapes
 * (null for NULL; control characters escaped, bytes that are not UTF-8
 * written as U+FFFD, so the output is always valid JSON), an array of n
 * numbers. */
void jl_buf_json_number(jl_buf *b, double v);
/* Viridis at nine stops (the pictures' colour map); t in [0, 1], dark purple to yellow. */
void jl_viridis(double t, int rgb[3]);
/* jl_fmt_double for a JSON value: null when v is not finite (JSON has no inf or nan). */
char *jl_fmt_json_double(char *out, size_t cap, double v);
void jl_buf_json_string(jl_buf *b, const char *s);
void jl_buf_json_vec(jl_buf *b, const double *v, int n);
/* Text escaped for XML/SVG (&, <, >, "); control characters and bytes
 * that are not UTF-8 become U+FFFD. */
void jl_buf_xml_text(jl_buf *b, const char *s);

#endif
