#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#define JL_PROGRESS_PERIOD_S 5.0

void jl_progress_init(jl_progress *pr, FILE *out, int enabled) {
  pr->out = out;
  pr->enabled = enabled;
  pr->tty = isatty(fileno(out));
  pr->period = pr->tty ? 0.2 : JL_PROGRESS_PERIOD_S;
  pr->last = -1e300;
  pr->drawn = 0;
  pr->sink = NULL;
  pr->sink_ctx = NULL;
}

void jl_progress_init_sink(jl_progress *pr, jl_log_fn sink, void *ctx, double period, int enabled) {
  pr->out = NULL;
  pr->enabled = enabled && sink;
  pr->tty = 0;
  pr->period = period > 0 ? period : JL_PROGRESS_PERIOD_S;
  pr->last = -1e300;
  pr->drawn = 0;
  pr->sink = sink;
  pr->sink_ctx = ctx;
}

void jl_progress_update(jl_progress *pr, double now, int force, const char *fmt, ...) {
  if (!pr->enabled) return;
  if (!force && now - pr->last < pr->period) return;
  pr->last = now;
  va_list ap;
  va_start(ap, fmt);
  if (pr->sink) {
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pr->sink(pr->sink_ctx, JL_LOG_PROGRESS, line);
    return;
  }
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
