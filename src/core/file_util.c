#include "file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *jl_file_kind(mode_t m) {
  if (S_ISDIR(m)) return "is a directory";
  if (S_ISFIFO(m)) return "not a regular file (a FIFO)";
  if (S_ISCHR(m)) return "not a regular file (a character device)";
  if (S_ISBLK(m)) return "not a regular file (a block device)";
  if (S_ISSOCK(m)) return "not a regular file (a socket)";
  return "not a regular file";
}

int jl_file_open_regular(const char *path, size_t max_bytes, size_t *size, jl_error *err) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == EISDIR) jl_error_set(err, JL_ERR_INPUT, "%s: is a directory", path);
    else jl_error_set(err, JL_ERR_INPUT, "%s: cannot open: %s", path, strerror(e));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    jl_error_set(err, JL_ERR_INPUT, "%s: cannot open: %s", path, strerror(e));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    jl_error_set(err, JL_ERR_INPUT, "%s: %s", path, jl_file_kind(st.st_mode));
    return -1;
  }
  if (st.st_size < 0 || (unsigned long long)st.st_size > max_bytes) {
    close(fd);
    size_t gib = (size_t)1 << 30, mib = (size_t)1 << 20;
    char limit[48];
    if (max_bytes >= gib && max_bytes % gib == 0) snprintf(limit, sizeof limit, "%zu GiB", max_bytes / gib);
    else if (max_bytes >= mib && max_bytes % mib == 0) snprintf(limit, sizeof limit, "%zu MiB", max_bytes / mib);
    else snprintf(limit, sizeof limit, "%zu bytes", max_bytes);
    jl_error_set(err, JL_ERR_INPUT, "%s: too large: %lld bytes, the limit is %s", path,
                 (long long)st.st_size, limit);
    return -1;
  }
  /* back to blocking reads (no effect on a regular file, but plain) */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  *size = (size_t)st.st_size;
  return fd;
}

int jl_file_read_all(const char *path, char **data, size_t *len, jl_error *err) {
  size_t size = 0;
  int fd = jl_file_open_regular(path, JL_FILE_MAX_BYTES, &size, err);
  if (fd < 0) return err ? err->code : JL_ERR_INPUT;
  /* The size was read before the allocation; a file that grows meanwhile is
   * read only up to it, so the bound holds. */
  char *buf = malloc(size + 1);
  if (!buf) {
    close(fd);
    return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for %zu bytes", path, size);
  }
  size_t n = 0;
  while (n < size) {
    ssize_t got = read(fd, buf + n, size - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int e = errno;
      free(buf);
      close(fd);
      return jl_error_set(err, JL_ERR_INPUT, "%s: read error: %s", path, strerror(e));
    }
    if (got == 0) break;   /* the file shrank: keep what is there */
    n += (size_t)got;
  }
  close(fd);
  buf[n] = '\0';
  *data = buf;
  if (len) *len = n;
  return JL_OK;
}

int jl_file_read_text(const char *path, char **data, size_t *len, jl_error *err) {
  size_t n = 0;
  int rc = jl_file_read_all(path, data, &n, err);
  if (rc) return rc;
  const char *nul = memchr(*data, '\0', n);
  if (nul) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: NUL byte at byte %zu (not a text file)", path,
                      (size_t)(nul - *data));
    free(*data);
    *data = NULL;
    return rc;
  }
  if (len) *len = n;
  return JL_OK;
}

char *jl_escape_bytes(char *out, size_t cap, const char *s, size_t len, int ascii_only) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  if (cap == 0) return out;
  for (size_t i = 0; i < len; ++i) {
    unsigned char c = (unsigned char)s[i];
    int plain = c >= 0x20 && c != 0x7f && (c < 0x80 || !ascii_only);
    if (o + (plain ? 1 : 4) >= cap) break;
    if (plain) {
      out[o++] = (char)c;
    } else {
      out[o++] = '\\';
      out[o++] = 'x';
      out[o++] = hex[c >> 4];
      out[o++] = hex[c & 15];
    }
  }
  out[o] = '\0';
  return out;
}

int jl_file_write_atomic(const char *path, const void *data, size_t len, jl_error *err) {
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp) return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", path);
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp.XXXXXX", 12);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return jl_error_set(err, JL_ERR_IO, "%s: cannot create temporary file: %s", path, strerror(e));
  }
  const char *p = data;
  size_t left = len;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd); unlink(tmp); free(tmp);
      return jl_error_set(err, JL_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    p += w;
    left -= (size_t)w;
  }
  fchmod(fd, 0644);
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
    unlink(tmp); free(tmp);
    return jl_error_set(err, JL_ERR_IO, "%s: write failed: %s", path, strerror(e));
  }
  if (rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp); free(tmp);
    return jl_error_set(err, JL_ERR_IO, "%s: cannot rename temporary file: %s", path, strerror(e));
  }
  free(tmp);
  return JL_OK;
}

int jl_file_same(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void jl_buf_printf(jl_buf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int k = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (k < 0) { b->failed = 1; return; }
    if ((size_t)k < room) { b->len += (size_t)k; return; }
    size_t ncap = b->cap ? b->cap * 2 : 4096;
    while (ncap - b->len <= (size_t)k) ncap *= 2;
    char *nd = realloc(b->data, ncap);
    if (!nd) { b->failed = 1; return; }
    b->data = nd;
    b->cap = ncap;
  }
}

void jl_buf_free(jl_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

int jl_buf_write_atomic(jl_buf *b, const char *path, jl_error *err) {
  int rc = b->failed ? jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory building the file", path)
                     : jl_file_write_atomic(path, b->data, b->len, err);
  jl_buf_free(b);
  return rc;
}

char *jl_fmt_double(char *out, size_t cap, double v) {
  for (int prec = 15; prec <= 17; ++prec) {
    snprintf(out, cap, "%.*g", prec, v);
    if (strtod(out, NULL) == v) break;
  }
  return out;
}

char *jl_fmt_json_double(char *out, size_t cap, double v) {
  if (isfinite(v)) return jl_fmt_double(out, cap, v);
  snprintf(out, cap, "null");
  return out;
}

void jl_buf_json_number(jl_buf *b, double v) {
  if (!isfinite(v)) {
    jl_buf_printf(b, "null");
    return;
  }
  char s[40];
  jl_buf_printf(b, "%s", jl_fmt_double(s, sizeof s, v));
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 when there is none. */
static int jl_utf8_seq(const unsigned char *p) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  int n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else
    return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (int k = 2; k < n; ++k)
    if (p[k] < 0x80 || p[k] > 0xBF) return 0;
  return n;
}

long jl_utf8_invalid_at(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; p[i];) {
    int n = jl_utf8_seq(p + i);
    if (!n) return (long)i;
    i += (size_t)n;
  }
  return -1;
}

int jl_utf8_check(const char *s, const char *path, const char *key, jl_error *err) {
  long at = s ? jl_utf8_invalid_at(s) : -1;
  if (at < 0) return JL_OK;
  return jl_error_set(err, JL_ERR_INPUT, "%s: %s: not valid UTF-8 text (byte %ld of the string is 0x%02x)",
                      path, key, at + 1, (unsigned)(unsigned char)s[at]);
}

/* Valid JSON whatever the bytes: control characters escaped, bytes that are
 * not UTF-8 written as U+FFFD, so a reader never fails on a name. */
void jl_buf_json_string(jl_buf *b, const char *s) {
  if (!s) {
    jl_buf_printf(b, "null");
    return;
  }
  jl_buf_printf(b, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c;) {
    int n = jl_utf8_seq(c);
    if (!n) {
      jl_buf_printf(b, "\\ufffd");
      ++c;
      continue;
    }
    if (n > 1) jl_buf_printf(b, "%.*s", n, (const char *)c);
    else if (*c == '"' || *c == '\\') jl_buf_printf(b, "\\%c", *c);
    else if (*c == '\n') jl_buf_printf(b, "\\n");
    else if (*c == '\t') jl_buf_printf(b, "\\t");
    else if (*c < 0x20 || *c == 0x7f) jl_buf_printf(b, "\\u%04x", *c);
    else jl_buf_printf(b, "%c", *c);
    c += n;
  }
  jl_buf_printf(b, "\"");
}

void jl_buf_json_vec(jl_buf *b, const double *v, int n) {
  jl_buf_printf(b, "[");
  for (int k = 0; k < n; ++k) {
    if (k) jl_buf_printf(b, ", ");
    jl_buf_json_number(b, v[k]);
  }
  jl_buf_printf(b, "]");
}

void jl_buf_xml_text(jl_buf *b, const char *s) {
  for (const unsigned char *c = (const unsigned char *)s; *c;) {
    int n = jl_utf8_seq(c);
    /* XML 1.0 allows no control characters but tab and newline, and only UTF-8 here */
    if (!n || (*c < 0x20 && *c != '\t' && *c != '\n')) {
      jl_buf_printf(b, "\xef\xbf\xbd");
      ++c;
      continue;
    }
    if (*c == '&') jl_buf_printf(b, "&amp;");
    else if (*c == '<') jl_buf_printf(b, "&lt;");
    else if (*c == '>') jl_buf_printf(b, "&gt;");
    else if (*c == '"') jl_buf_printf(b, "&quot;");
    else jl_buf_printf(b, "%.*s", n, (const char *)c);
    c += n;
  }
}

/* Viridis at nine stops; t in [0, 1] from dark purple to yellow. */
void jl_viridis(double t, int rgb[3]) {
  static const unsigned char stops[9][3] = {
    {68, 1, 84},    {71, 45, 123},  {59, 82, 139},  {44, 114, 142}, {33, 145, 140},
    {40, 174, 128}, {94, 201, 98},  {170, 220, 50}, {253, 231, 37},
  };
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  double f = t * 8.0;
  int i = f >= 8.0 ? 7 : (int)f;
  double u = f - i;
  for (int c = 0; c < 3; ++c)
    rgb[c] = (int)lround(stops[i][c] + u * (stops[i + 1][c] - stops[i][c]));
}
