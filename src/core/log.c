#include "log.h"

#include <stdarg.h>

void jl_log_vline(jl_log_fn fn, void *ctx, int level, const char *fmt, va_list ap) {
  if (!fn) return;
  char line[JL_LOG_LINE_MAX];
  vsnprintf(line, sizeof line, fmt, ap);
  fn(ctx, level, line);
}

void jl_log_printf(const jl_log *log, jl_log_level level, const char *fmt, ...) {
  if (!log || !log->out || level > log->level) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("jostle: ", log->out);
  vfprintf(log->out, fmt, ap);
  fputc('\n', log->out);
  va_end(ap);
  fflush(log->out);
}
