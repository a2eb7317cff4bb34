/* A progress line on stderr for long runs: redrawn in place on a terminal,
 * a plain line every few seconds otherwise (logs, CI). */
#ifndef JL_PROGRESS_H
#define JL_PROGRESS_H

#include <stdio.h>

#include <jostle/common.h>

typedef struct jl_progress {
  FILE *out;
  int enabled;
  int tty;
  double period;           /* seconds between lines */
  double last;             /* time of the last line */
  int drawn;               /* a line is on screen that needs ending */
  jl_log_fn sink;          /* NULL: out; else each line as JL_LOG_PROGRESS (the
                            * sink draws it) */
  void *sink_ctx;
} jl_progress;

void jl_progress_init(jl_progress *pr, FILE *out, int enabled);
/* Lines to a log callback every period seconds (0: 5 s) instead of a stream. */
void jl_progress_init_sink(jl_progress *pr, jl_log_fn sink, void *ctx, double period, int enabled);
/* Prints when force is set or the period has passed since the last line. */
void jl_progress_update(jl_progress *pr, double now, int force, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 4, 5)))
#endif
  ;
/* Erases a line drawn in place, so that a message takes its place; the
 * next update draws it again. */
void jl_progress_clear(jl_progress *pr);
/* Ends a line drawn in place, so later output starts on a fresh line. */
void jl_progress_end(jl_progress *pr);

#endif
