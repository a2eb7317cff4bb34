#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int jl_error_set(jl_error *err, int code, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return code;
}

void jl_error_clear(jl_error *err) {
  if (!err) return;
  err->code = JL_OK;
  err->msg[0] = '\0';
}
