#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int jl_cli_error_set(jl_error *err, int code, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return code;
}

/* Control bytes (and DEL) as \xNN; stops before cap would be exceeded. */
static void jl_cli_escape(char *out, size_t cap, const char *s) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
    int plain = *c >= 0x20 && *c != 0x7f;
    if (o + (plain ? 1 : 4) >= cap) break;
    if (plain) {
      out[o++] = (char)*c;
    } else {
      out[o++] = '\\';
      out[o++] = 'x';
      out[o++] = hex[*c >> 4];
      out[o++] = hex[*c & 15];
    }
  }
  out[o] = '\0';
}

/* The same existing file (device and inode). */
static int jl_cli_file_same(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int jl_cli_int(const char *opt, const char *s, long lo, long hi, long *out, jl_error *err) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0')
    return jl_cli_error_set(err, JL_ERR_INPUT, "%s: expected an integer, got '%s'", opt, s);
  if (v < lo || v > hi)
    return jl_cli_error_set(err, JL_ERR_INPUT, "%s: must be between %ld and %ld, got %ld", opt, lo,
                        hi, v);
  *out = v;
  return JL_OK;
}

int jl_cli_u64(const char *opt, const char *s, uint64_t *out, jl_error *err) {
  char *end = NULL;
  errno = 0;
  if (*s == '-') return jl_cli_error_set(err, JL_ERR_INPUT, "%s: must not be negative, got '%s'", opt, s);
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end != '\0')
    return jl_cli_error_set(err, JL_ERR_INPUT, "%s: expected an unsigned integer, got '%s'", opt, s);
  *out = (uint64_t)v;
  return JL_OK;
}

int jl_cli_double(const char *opt, const char *s, double lo, double hi, double *out,
                  jl_error *err) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end != '\0' || !isfinite(v))
    return jl_cli_error_set(err, JL_ERR_INPUT, "%s: expected a finite number, got '%s'", opt, s);
  if (v < lo || v > hi)
    return jl_cli_error_set(err, JL_ERR_INPUT, "%s: must be between %g and %g, got %g", opt, lo, hi, v);
  *out = v;
  return JL_OK;
}

int jl_cli_fail(const jl_error *err) {
  /* Messages quote the input (keys, values, paths): control bytes are
   * escaped so a file cannot drive the terminal or split the line. */
  char safe[4 * JL_ERROR_MSG_MAX];
  jl_cli_escape(safe, sizeof safe, err->msg);
  fprintf(stderr, "jostle: %s\n", safe[0] ? safe : "failed");
  switch (err->code) {
  case JL_ERR_INPUT: return 2;
  case JL_ERR_IO: return 3;
  case JL_ERR_DEVICE: return 4;
  case JL_ERR_NOT_LEGAL: return 1;
  default: return 5;
  }
}

void jl_cli_sibling(const char *json_path, const char *ext, char *out, size_t out_len) {
  size_t n = strlen(json_path);
  if (n >= 5 && strcmp(json_path + n - 5, ".json") == 0) n -= 5;
  snprintf(out, out_len, "%.*s%s", (int)n, json_path, ext);
}

/* ---- the library's lines ---- */

void jl_cli_log_init(jl_cli_log *l, int quiet) {
  l->level = quiet ? JL_LOG_NOTICE : JL_LOG_INFO;
  l->progress = !quiet;
  l->tty = isatty(fileno(stderr));
  l->drawn = 0;
}

void jl_cli_log_end(jl_cli_log *l) {
  if (l->drawn) {
    fputc('\n', stderr);
    fflush(stderr);
  }
  l->drawn = 0;
}

double jl_cli_log_period(const jl_cli_log *l) { return l->tty ? 0.2 : 0.0; }

void jl_cli_log_line(void *ctx, int level, const char *line) {
  jl_cli_log *l = ctx;
  if (level == JL_LOG_PROGRESS) {
    if (!l->progress) return;
    if (l->tty) {
      fputs("\r\033[K", stderr);
      fputs(line, stderr);
      l->drawn = 1;
    } else {
      fputs(line, stderr);
      fputc('\n', stderr);
    }
    fflush(stderr);
    return;
  }
  if (level > l->level) return;
  jl_cli_log_end(l);
  fprintf(stderr, "jostle: %s\n", line);
  fflush(stderr);
}

/* ---- options ---- */

int jl_cli_next(jl_cli_opts *o, int argc, char **argv, jl_error *err) {
  int li = -1;
  opterr = 0;
  /* ':' first: a missing value comes back as ':', not as an unknown option */
  int c = getopt_long(argc, argv, ":", o->opts, &li);
  if (c == -1) return -1;
  if (c == ':') {
    jl_cli_error_set(err, JL_ERR_INPUT, "%s: needs a value", argv[optind - 1]);
    return 0;
  }
  if (c == '?' || li < 0 || li >= JL_CLI_OPTS_MAX) {
    if (optopt > 0 && optopt < 128 && c == '?' && argv[optind - 1][0] == '-' && argv[optind - 1][1] != '-')
      jl_cli_error_set(err, JL_ERR_INPUT, "unknown option '-%c' (see jostle %s --help)", optopt, o->cmd);
    else
      jl_cli_error_set(err, JL_ERR_INPUT, "unknown option '%s' (see jostle %s --help)", argv[optind - 1],
                   o->cmd);
    return 0;
  }
  const char *name = o->opts[li].name, *val = optarg ? optarg : "";
  if (o->given[li]) {
    if (optarg)
      jl_cli_error_set(err, JL_ERR_INPUT, "--%s: given twice ('%s' and '%s'); give it once", name,
                   o->given[li], val);
    else
      jl_cli_error_set(err, JL_ERR_INPUT, "--%s: given twice; give it once", name);
    return 0;
  }
  o->given[li] = val;
  return c;
}

int jl_cli_out_json(const char *opt, const char *path, jl_error *err) {
  size_t n = path ? strlen(path) : 0;
  if (!path || (n > 5 && strcmp(path + n - 5, ".json") == 0)) return JL_OK;
  return jl_cli_error_set(err, JL_ERR_INPUT,
                      "%s %s: the result is JSON: give a name ending in .json (the other outputs are "
                      "named after it)", opt, path);
}

/* ---- output names ---- */

void jl_cli_default_stem(const char *name, const char *fallback, char *out, size_t cap) {
  size_t n = 0, lim = cap - 1 < JL_CLI_STEM_MAX ? cap - 1 : JL_CLI_STEM_MAX;
  for (const unsigned char *c = (const unsigned char *)(name ? name : ""); *c && n < lim; ++c) {
    int keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
               *c == '-' || *c == '_' || *c == '.';
    out[n++] = keep ? (char)*c : '_';
  }
  out[n] = '\0';
  if (n == 0) snprintf(out, cap, "%s", fallback);
  if (out[0] == '.') out[0] = '_';  /* no hidden file, no "." or ".." */
}

/* ---- outputs ---- */

void jl_cli_outputs_add(jl_cli_outputs *o, const char *what, const char *path) {
  if (!path || o->n >= JL_CLI_OUTPUTS_MAX) return;
  o->what[o->n] = what;
  o->path[o->n] = path;
  o->tmp[o->n][0] = '\0';
  o->n++;
}

/* The folder part of path ("." when none) and the name after it. */
static void jl_cli_split(const char *path, char *dir, size_t cap, const char **base) {
  const char *slash = strrchr(path, '/');
  *base = slash ? slash + 1 : path;
  if (!slash) snprintf(dir, cap, ".");
  else if (slash == path) snprintf(dir, cap, "/");
  else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

/* One file named two ways: the same existing file, or the same name in the
 * same folder (also before the file exists: r.json and ./r.json). */
static int jl_cli_same(const char *a, const char *b) {
  if (strcmp(a, b) == 0 || jl_cli_file_same(a, b)) return 1;
  char da[JL_CLI_PATH_MAX], db[JL_CLI_PATH_MAX];
  const char *ba, *bb;
  jl_cli_split(a, da, sizeof da, &ba);
  jl_cli_split(b, db, sizeof db, &bb);
  return strcmp(ba, bb) == 0 && jl_cli_file_same(da, db);
}

int jl_cli_outputs_check(const jl_cli_outputs *o, const char *const *inputs, int n_inputs,
                         jl_error *err) {
  for (int k = 0; k < o->n; ++k) {
    const char *p = o->path[k], *base;
    char dir[JL_CLI_PATH_MAX];
    struct stat st;
    if (strlen(p) >= JL_CLI_PATH_MAX - 16)
      return jl_cli_error_set(err, JL_ERR_INPUT, "%s: %s: path longer than %d characters", o->what[k],
                          p, JL_CLI_PATH_MAX - 17);
    jl_cli_split(p, dir, sizeof dir, &base);
    if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
        (stat(p, &st) == 0 && S_ISDIR(st.st_mode)))
      return jl_cli_error_set(err, JL_ERR_INPUT, "%s %s: names a folder, not a file", o->what[k], p);
    for (int m = 0; m < n_inputs; ++m)
      if (inputs[m] && jl_cli_same(p, inputs[m]))
        return jl_cli_error_set(err, JL_ERR_INPUT, "%s: output would overwrite the input %s", p,
                            inputs[m]);
    for (int m = 0; m < k; ++m)
      if (jl_cli_same(p, o->path[m]))
        return jl_cli_error_set(err, JL_ERR_INPUT, "%s %s and %s %s: the same file; give each output "
                            "its own name", o->what[m], o->path[m], o->what[k], p);
    if (stat(dir, &st) != 0)
      return jl_cli_error_set(err, JL_ERR_IO, "%s %s: cannot write into %s: %s", o->what[k], p, dir,
                          strerror(errno));
    if (!S_ISDIR(st.st_mode))
      return jl_cli_error_set(err, JL_ERR_IO, "%s %s: cannot write into %s: not a folder", o->what[k],
                          p, dir);
    if (access(dir, W_OK | X_OK) != 0)
      return jl_cli_error_set(err, JL_ERR_IO, "%s %s: cannot write into %s: %s", o->what[k], p, dir,
                          strerror(errno));
  }
  return JL_OK;
}

const char *jl_cli_outputs_stage(jl_cli_outputs *o, int k, jl_error *err) {
  if (k < 0 || k >= o->n) {
    jl_cli_error_set(err, JL_ERR_INTERNAL, "internal error: no output %d", k);
    return NULL;
  }
  if (o->tmp[k][0]) return o->tmp[k];
  snprintf(o->tmp[k], sizeof o->tmp[k], "%s.tmp.XXXXXX", o->path[k]);
  int fd = mkstemp(o->tmp[k]);
  if (fd < 0) {
    int e = errno;
    o->tmp[k][0] = '\0';
    jl_cli_error_set(err, JL_ERR_IO, "%s: cannot create temporary file: %s", o->path[k], strerror(e));
    return NULL;
  }
  fchmod(fd, 0644);  /* what the library's atomic writes give; writers that open the file keep it */
  close(fd);
  return o->tmp[k];
}

int jl_cli_outputs_commit(jl_cli_outputs *o, jl_error *err) {
  for (int k = 0; k < o->n && k < JL_CLI_OUTPUTS_MAX; ++k) {
    if (!o->tmp[k][0]) continue;
    if (rename(o->tmp[k], o->path[k]) != 0) {
      int e = errno;
      jl_cli_outputs_discard(o);
      return jl_cli_error_set(err, JL_ERR_IO, "%s: cannot rename temporary file: %s", o->path[k],
                          strerror(e));
    }
    o->tmp[k][0] = '\0';
  }
  return JL_OK;
}

void jl_cli_outputs_discard(jl_cli_outputs *o) {
  for (int k = 0; k < o->n && k < JL_CLI_OUTPUTS_MAX; ++k)
    if (o->tmp[k][0]) {
      unlink(o->tmp[k]);
      o->tmp[k][0] = '\0';
    }
}
