/* Messages for people, on a stream the caller owns: no global logger. The
 * CLI makes one from its options (--quiet) and passes it down. */
#ifndef JL_LOG_H
#define JL_LOG_H

#include <stdarg.h>
#include <stdio.h>

/* jl_log_level is the public API's (include/jostle/common.h) */
#include <jostle/common.h>

typedef struct jl_log {
  FILE *out;               /* NULL: silent */
  jl_log_level level;      /* messages above this level are dropped */
} jl_log;

/* Prints "jostle: message\n" when level <= log->level. */
void jl_log_printf(const jl_log *log, jl_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;

/* The longest line a log callback receives (a line names up to two paths). */
#define JL_LOG_LINE_MAX 8192

/* Formats one line and hands it to the caller's callback (the public API's
 * jl_log_fn); nothing when fn is NULL. For the callers' own printf-like
 * helpers, which keep their format checks. */
void jl_log_vline(jl_log_fn fn, void *ctx, int level, const char *fmt, va_list ap);

#endif
