/* Error values with messages. Library code never exits: it fills a jl_error
 * and returns its code; the CLI maps codes to exit statuses. */
#ifndef JL_ERROR_H
#define JL_ERROR_H

enum jl_status {
  JL_OK = 0,
  JL_ERR_INPUT = 2,        /* bad file, field or value: exit status 2 */
  JL_ERR_IO = 3,           /* cannot read or write a file */
  JL_ERR_DEVICE = 4,       /* CUDA missing or failed */
  JL_ERR_NOMEM = 5,
  JL_ERR_INTERNAL = 6,
  JL_ERR_NOT_LEGAL = 7     /* a packing failed the exact check */
};

#define JL_ERROR_MSG_MAX 1024

typedef struct jl_error {
  int code;
  char msg[JL_ERROR_MSG_MAX];
} jl_error;

/* Sets code and message (printf style) and returns code, so callers can
 * write `return jl_error_set(err, JL_ERR_INPUT, "...")`. err may be NULL. */
int jl_error_set(jl_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
void jl_error_clear(jl_error *err);

#endif
