/* The jostle command line: one function per subcommand, each returning the
 * process exit status (0 ok, 1 a check failed, 2 bad input, 3 I/O, 4 device). */
#ifndef JL_CLI_H
#define JL_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include <jostle/jostle.h>

#define JL_VERSION "0.1.0"

int jl_cli_circles(int argc, char **argv);
int jl_cli_verify(int argc, char **argv);
int jl_cli_bench(int argc, char **argv);
int jl_cli_trunk(int argc, char **argv);
int jl_cli_scene(int argc, char **argv);

/* Sets code and message (printf style) and returns code, as the library's
 * errors do; err may be NULL. */
int jl_cli_error_set(jl_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;

/* Option value parsing: on failure, err names the option and the reason. */
int jl_cli_int(const char *opt, const char *s, long lo, long hi, long *out, jl_error *err);
int jl_cli_u64(const char *opt, const char *s, uint64_t *out, jl_error *err);
int jl_cli_double(const char *opt, const char *s, double lo, double hi, double *out,
                  jl_error *err);
/* Prints "jostle: <msg>" to stderr and returns the exit status for code. */
int jl_cli_fail(const jl_error *err);
/* The CLI's log for the library's lines (jl_log_fn): messages up to level
 * on stderr as "jostle: LINE"; progress lines (JL_LOG_PROGRESS, when
 * progress is set) redrawn in place on a terminal, one a line otherwise. */
typedef struct jl_cli_log {
  int level;               /* JL_LOG_NOTICE (--quiet) or JL_LOG_INFO */
  int progress;
  int tty;
  int drawn;               /* a progress line is on the terminal, unended */
} jl_cli_log;
void jl_cli_log_init(jl_cli_log *l, int quiet);
void jl_cli_log_line(void *ctx, int level, const char *line);
/* Ends a progress line drawn in place, so later output starts on a fresh line. */
void jl_cli_log_end(jl_cli_log *l);
/* Seconds between progress lines: 0.2 on a terminal, else 0 (the library's). */
double jl_cli_log_period(const jl_cli_log *l);

/* FILE.json -> FILE.ext (replaces a trailing .json, else appends). */
void jl_cli_sibling(const char *json_path, const char *ext, char *out, size_t out_len);

/* getopt_long as every subcommand wants it. Set optind (1, or where the
 * options start) and zero given before the first call. Returns the option's
 * val, -1 after the last option, or 0 with err set: a missing value
 * ("--n: needs a value"), an unknown option, an option given twice. */
#define JL_CLI_OPTS_MAX 64
typedef struct jl_cli_opts {
  const struct option *opts;      /* at most JL_CLI_OPTS_MAX entries */
  const char *cmd;                /* "circles": says "see jostle circles --help" */
  const char *given[JL_CLI_OPTS_MAX];  /* value of each option so far ("" for a flag) */
} jl_cli_opts;
int jl_cli_next(jl_cli_opts *o, int argc, char **argv, jl_error *err);
/* --out names the JSON result and the other outputs are derived from it:
 * refuses a name that does not end in .json (opt names the option). */
int jl_cli_out_json(const char *opt, const char *path, jl_error *err);

/* Default output names come from a file's name field, which is data: the
 * stem keeps ASCII letters, digits, '-', '_' and '.', turns every other
 * byte into '_', never starts with '.' (no hidden file, "." or ".."), holds
 * at most JL_CLI_STEM_MAX bytes, and is fallback when name is empty. The
 * outputs land in the current folder. */
#define JL_CLI_STEM_MAX 100
void jl_cli_default_stem(const char *name, const char *fallback, char *out, size_t cap);

/* The files one run writes. Checked before any work (jl_cli_outputs_check:
 * no two the same file, none an input, none a folder, each in a folder that
 * exists and can be written), written to temporary files beside them
 * (jl_cli_outputs_stage gives the path a writer writes to) and renamed into
 * place together at the end (commit), so a failed write replaces none;
 * discard removes the temporary files. */
#define JL_CLI_OUTPUTS_MAX 8
#define JL_CLI_PATH_MAX 4096
typedef struct jl_cli_outputs {
  int n;
  const char *what[JL_CLI_OUTPUTS_MAX];   /* the option, for messages: "--svg" */
  const char *path[JL_CLI_OUTPUTS_MAX];
  char tmp[JL_CLI_OUTPUTS_MAX][JL_CLI_PATH_MAX];  /* "" until staged */
} jl_cli_outputs;
/* Adds an output; a NULL path (not asked for) is skipped. */
void jl_cli_outputs_add(jl_cli_outputs *o, const char *what, const char *path);
/* JL_ERR_INPUT for names that collide or name a folder, JL_ERR_IO for a folder that cannot be
 * written; inputs (n_inputs entries, NULL ones skipped) must not be replaced. */
int jl_cli_outputs_check(const jl_cli_outputs *o, const char *const *inputs, int n_inputs,
                         jl_error *err);
/* Creates output k's temporary file and returns its path (NULL and err on failure). */
const char *jl_cli_outputs_stage(jl_cli_outputs *o, int k, jl_error *err);
int jl_cli_outputs_commit(jl_cli_outputs *o, jl_error *err);
void jl_cli_outputs_discard(jl_cli_outputs *o);

#endif
