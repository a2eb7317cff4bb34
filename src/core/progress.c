#include "progress.h"

#include <stdarg.h>
#include <unistd.h>

void jl_progress_init(jl_progress *pr, FILE *out, int enabled) {
  pr->out = out;
  pr->enabled = enabled;
  pr->tty = isatty(fileno(out));
  pr->period = pr->tty ? 0.2 : 5.0;
  pr->last = -1e300;
  pr->drawn = 0;
}

void jl_progress_update(jl_progress *pr, double now, int force, const char *fmt, ...) {
  if (!pr->enabled) return;
  if (!force && now - pr->last < pr->period) return;
  pr->last = now;
  va_list ap;
  va_start(ap, fmt);
  if (pr->tty) fputs("\r\033[K", pr->out);
  vfprintf(pr->out, fmt, ap);
  va_end(ap);
  if (pr->tty) {
    pr->drawn = 1;
  } else {
    fputc('\n', pr->out);
  }
  fflush(pr->out);
}

void jl_progress_end(jl_progress *pr) {
  if (pr->enabled && pr->tty && pr->drawn) {
    fputc('\n', pr->out);
    fflush(pr->out);
  }
  pr->drawn = 0;
}

void jl_progress_clear(jl_progress *pr) {
  if (pr->enabled && pr->tty && pr->drawn) {
    fputs("\r\033[K", pr->out);
    fflush(pr->out);
  }
  pr->drawn = 0;
}
