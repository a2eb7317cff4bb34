/* Error values with messages. Library code never exits: it fills a jl_error
 * and returns its code; the CLI maps codes to exit statuses. */
#ifndef JL_ERROR_H
#define JL_ERROR_H

/* The status codes and jl_error are the public API's (include/jostle/common.h). */
#include <jostle/common.h>

/* Sets code and message (printf style) and returns code, so callers can
 * write `return jl_error_set(err, JL_ERR_INPUT, "...")`. err may be NULL. */
int jl_error_set(jl_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
void jl_error_clear(jl_error *err);

#endif
