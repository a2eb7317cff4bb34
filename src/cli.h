/* The jostle command line: one function per subcommand, each returning the
 * process exit status (0 ok, 1 a check failed, 2 bad input, 3 I/O, 4 device). */
#ifndef JL_CLI_H
#define JL_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define JL_VERSION "0.1.0"

int jl_cli_circles(int argc, char **argv);
int jl_cli_verify(int argc, char **argv);
int jl_cli_bench(int argc, char **argv);
int jl_cli_trunk(int argc, char **argv);
/* verify for a trunk result (cli_trunk.c): 0 legal, 1 not, 2 bad input. */
int jl_cli_verify_trunk(const char *path);
int jl_cli_scene(int argc, char **argv);

/* Option value parsing: on failure, err names the option and the reason. */
int jl_cli_int(const char *opt, const char *s, long lo, long hi, long *out, jl_error *err);
int jl_cli_u64(const char *opt, const char *s, uint64_t *out, jl_error *err);
int jl_cli_double(const char *opt, const char *s, double lo, double hi, double *out,
                  jl_error *err);
/* Prints "jostle: <msg>" to stderr and returns the exit status for code. */
int jl_cli_fail(const jl_error *err);
/* FILE.json -> FILE.ext (replaces a trailing .json, else appends). */
void jl_cli_sibling(const char *json_path, const char *ext, char *out, size_t out_len);

#endif
