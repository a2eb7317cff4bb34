#include "mesh_scan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A binary STL: 80-byte header, uint32 triangle count, 50 bytes a triangle. */
#define JL_STL_HEADER 84
#define JL_STL_TRIANGLE 50
/* An ASCII PLY value takes at least a digit and a separator. */
#define JL_PLY_ASCII_MIN 2

static int jl_has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  return n > e && strcasecmp(path + n - e, ext) == 0;
}

/* One line of the text: [*pos, end of line), without "\r\n"; *pos moves past it. */
static size_t jl_next_line(const char *d, size_t len, size_t *pos, const char **line) {
  const char *s = d + *pos;
  const char *nl = memchr(s, '\n', len - *pos);
  size_t n = nl ? (size_t)(nl - s) : len - *pos;
  *pos += nl ? n + 1 : n;
  *line = s;
  while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) --n;
  return n;
}

/* Splits a line into at most cap words (in place copies into buf). */
static int jl_words(const char *line, size_t n, char *buf, size_t bufcap, const char **w, int cap) {
  if (n >= bufcap) n = bufcap - 1;
  memcpy(buf, line, n);
  buf[n] = '\0';
  int k = 0;
  for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t && k < cap; t = strtok_r(NULL, " \t", &save))
    w[k++] = t;
  return k;
}

/* Elements and properties one PLY header may declare (a mesh has two
 * elements of a few properties each). */
#define JL_PLY_ELEMENTS_MAX 16
#define JL_PLY_PROPERTIES_MAX 32

typedef struct jl_ply_type {
  int size;          /* bytes in binary; 0 when unknown */
  int is_signed;
} jl_ply_type;

static jl_ply_type jl_ply_type_of(const char *t) {
  static const struct { const char *name; int size, is_signed; } types[] = {
    {"char", 1, 1},  {"uchar", 1, 0},  {"int8", 1, 1},  {"uint8", 1, 0},   {"short", 2, 1},
    {"ushort", 2, 0}, {"int16", 2, 1}, {"uint16", 2, 0}, {"int", 4, 1},    {"uint", 4, 0},
    {"int32", 4, 1}, {"uint32", 4, 0}, {"float", 4, 1}, {"float32", 4, 1}, {"double", 8, 1},
    {"float64", 8, 1},
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
    if (strcmp(t, types[i].name) == 0) return (jl_ply_type){types[i].size, types[i].is_signed};
  return (jl_ply_type){0, 0};
}

typedef struct jl_ply_property {
  int list;                 /* a list: a count, then that many items */
  jl_ply_type count, item;  /* item: the value itself when not a list */
} jl_ply_property;

typedef struct jl_ply_element {
  char name[64];
  unsigned long long count;
  int n_props;
  jl_ply_property prop[JL_PLY_PROPERTIES_MAX];
} jl_ply_element;

typedef struct jl_ply_header {
  int binary;               /* 0 ascii, 1 little endian, 2 big endian */
  int n_elements;
  size_t body;              /* offset of the data */
  jl_ply_element el[JL_PLY_ELEMENTS_MAX];
} jl_ply_header;

static int jl_ply_read_header(const char *path, const char *d, size_t len, jl_ply_header *h,
                              jl_error *err) {
  size_t pos = 0;
  const char *line;
  size_t n = jl_next_line(d, len, &pos, &line);
  h->binary = -1;
  if (!(n == 3 && memcmp(line, "ply", 3) == 0))
    return jl_error_set(err, JL_ERR_INPUT, "%s: not a PLY file (the first line is not \"ply\")", path);
  for (int lineno = 2;; ++lineno) {
    if (pos >= len)
      return jl_error_set(err, JL_ERR_INPUT, "%s: PLY header has no end_header line", path);
    n = jl_next_line(d, len, &pos, &line);
    char buf[256];
    const char *w[6];
    int k = jl_words(line, n, buf, sizeof buf, w, 6);
    if (k == 0) continue;
    if (strcmp(w[0], "end_header") == 0) break;
    if (strcmp(w[0], "comment") == 0 || strcmp(w[0], "obj_info") == 0) continue;
    /* Only the statements of PLY 1.0, each with its words: assimp's reader
     * wrote past its buffers on garbled and repeated header lines. */
    if (strcmp(w[0], "format") == 0) {
      if (h->binary >= 0)
        return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: a second format line", path, lineno);
      if (k != 3 || strcmp(w[2], "1.0") != 0) h->binary = -1;
      else if (strcmp(w[1], "ascii") == 0) h->binary = 0;
      else if (strcmp(w[1], "binary_little_endian") == 0) h->binary = 1;
      else if (strcmp(w[1], "binary_big_endian") == 0) h->binary = 2;
      if (h->binary < 0)
        return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: unknown format", path, lineno);
    } else if (strcmp(w[0], "element") == 0) {
      if (h->n_elements == JL_PLY_ELEMENTS_MAX)
        return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: more than %d elements", path, lineno,
                            JL_PLY_ELEMENTS_MAX);
      jl_ply_element *e = &h->el[h->n_elements++];
      char *end = NULL;
      if (k == 3 && w[2][0] >= '0' && w[2][0] <= '9') e->count = strtoull(w[2], &end, 10);
      if (!end || *end)
        return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: element needs a name and a count",
                            path, lineno);
      snprintf(e->name, sizeof e->name, "%s", w[1]);
      for (int i = 0; i < h->n_elements - 1; ++i)
        if (strcmp(h->el[i].name, e->name) == 0)
          return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: a second element of that name", path,
                              lineno);
    } else if (strcmp(w[0], "property") == 0) {
      if (h->n_elements == 0)
        return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: property before any element", path,
                            lineno);
      jl_ply_element *e = &h->el[h->n_elements - 1];
      if (e->n_props == JL_PLY_PROPERTIES_MAX)
        return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: more than %d properties in element %s",
                            path, lineno, JL_PLY_PROPERTIES_MAX, e->name);
      jl_ply_property *p = &e->prop[e->n_props++];
      p->list = k >= 2 && strcmp(w[1], "list") == 0;
      if (p->list && k == 5) {
        p->count = jl_ply_type_of(w[2]);
        p->item = jl_ply_type_of(w[3]);
      } else if (!p->list && k == 3) {
        p->item = jl_ply_type_of(w[1]);
      }
      if (p->item.size == 0 || (p->list && p->count.size == 0))
        return jl_error_set(err, JL_ERR_INPUT, "%s:%d: PLY header: bad property (expected property TYPE NAME "
                            "or property list COUNT_TYPE ITEM_TYPE NAME, with known types)", path, lineno);
    } else {
      return jl_error_set(err, JL_ERR_INPUT,
                          "%s:%d: PLY header: unknown statement (expected format, element, property, "
                          "comment, obj_info or end_header)", path, lineno);
    }
  }
  if (h->binary < 0) return jl_error_set(err, JL_ERR_INPUT, "%s: PLY header has no format line", path);
  h->body = pos;
  return JL_OK;
}

/* The least bytes one element takes: in binary the scalars and the list
 * counts (a list may be empty), in ASCII a digit and a separator a value,
 * and at least one byte whatever it holds. */
static unsigned long long jl_ply_min_bytes(const jl_ply_header *h, const jl_ply_element *e) {
  unsigned long long b = 0;
  for (int i = 0; i < e->n_props; ++i) {
    const jl_ply_property *p = &e->prop[i];
    b += h->binary ? (unsigned)(p->list ? p->count.size : p->item.size) : JL_PLY_ASCII_MIN;
  }
  return b > 0 ? b : 1;
}

/* A binary integer of size bytes at s; -1 when signed and negative. */
static long long jl_ply_read_int(const unsigned char *s, jl_ply_type t, int big_endian) {
  unsigned long long v = 0;
  for (int i = 0; i < t.size; ++i) v |= (unsigned long long)s[big_endian ? t.size - 1 - i : i] << (8 * i);
  if (t.is_signed && t.size < 8 && (v >> (8 * t.size - 1)) & 1) return -1;
  return (long long)v;
}

/* One whitespace-separated word of the ASCII data at *pos; its length, 0 at the end. */
static size_t jl_ply_word(const char *d, size_t len, size_t *pos, const char **w) {
  size_t i = *pos;
  while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n')) ++i;
  size_t j = i;
  while (j < len && !(d[j] == ' ' || d[j] == '\t' || d[j] == '\r' || d[j] == '\n')) ++j;
  *w = d + i;
  *pos = j;
  return j - i;
}

/* Walks the data as the header lays it out: every list's count must be
 * one the rest of the file can hold, so no count makes the import allocate
 * beyond the file. ASCII data holds one element a line, as assimp reads it
 * (a count it takes from the start of a line must fit that line). */
static int jl_ply_walk(const char *path, const char *d, size_t len, const jl_ply_header *h,
                       jl_error *err) {
  size_t pos = h->body, line_end = (size_t)-1;  /* no line read yet */
  for (int e = 0; e < h->n_elements; ++e) {
    const jl_ply_element *el = &h->el[e];
    if (el->n_props == 0) continue;
    for (unsigned long long c = 0; c < el->count; ++c)
      for (int i = 0; i < el->n_props; ++i) {
        if (!h->binary && i == 0) {
          if (line_end != (size_t)-1) pos = line_end < len ? line_end + 1 : len;
          const char *nl = memchr(d + pos, '\n', len - pos);
          line_end = nl ? (size_t)(nl - d) : len;
        }
        const jl_ply_property *p = &el->prop[i];
        long long items = 1;
        const char *skip;  /* a word past the line, to tell a short line from the file's end */
        if (h->binary) {
          if (p->list) {
            if (len - pos < (size_t)p->count.size) goto early;
            items = jl_ply_read_int((const unsigned char *)d + pos, p->count, h->binary == 2);
            pos += (size_t)p->count.size;
          }
          if (items < 0 || (unsigned long long)items > (len - pos) / (size_t)p->item.size) goto bad_list;
          pos += (size_t)items * (size_t)p->item.size;
        } else {
          const char *w;
          size_t n = jl_ply_word(d, line_end, &pos, &w);
          if (n == 0) goto short_line;
          if (p->list) {
            char num[32];
            char *end = NULL;
            snprintf(num, sizeof num, "%.*s", (int)(n < 31 ? n : 31), w);
            items = strtoll(num, &end, 10);
            if (*end || n > 30 || items < 0 || (unsigned long long)items > (len - pos) / JL_PLY_ASCII_MIN)
              goto bad_list;
            for (long long k = 0; k < items; ++k)
              if (jl_ply_word(d, line_end, &pos, &w) == 0) goto long_list;
          }
        }
        continue;
      short_line:
        if (jl_ply_word(d, len, &pos, &skip) > 0)
          return jl_error_set(err, JL_ERR_INPUT, "%s: PLY %s %llu: too few values on its line", path,
                              el->name, c);
      early:
        return jl_error_set(err, JL_ERR_INPUT, "%s: PLY data ends early, in %s %llu of %llu", path,
                            el->name, c, el->count);
      long_list:
        if (jl_ply_word(d, len, &pos, &skip) == 0) goto early;
        return jl_error_set(err, JL_ERR_INPUT, "%s: PLY %s %llu: a list of %lld items, more than its line holds",
                            path, el->name, c, items);
      bad_list:
        if (items < 0)
          return jl_error_set(err, JL_ERR_INPUT, "%s: PLY %s %llu: the list count is not a count", path,
                              el->name, c);
        return jl_error_set(err, JL_ERR_INPUT,
                            "%s: PLY %s %llu: a list of %lld items, more than the rest of the file holds",
                            path, el->name, c, items);
      }
  }
  return JL_OK;
}

static int jl_scan_ply(const char *path, const char *d, size_t len, jl_error *err) {
  jl_ply_header *h = calloc(1, sizeof *h);
  if (!h) return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", path);
  int rc = jl_ply_read_header(path, d, len, h, err);
  long double need = 0.0L, worst_need = -1.0L;
  unsigned long long faces = 0, vertices = 0;
  const jl_ply_element *worst = NULL;
  for (int e = 0; !rc && e < h->n_elements; ++e) {
    const jl_ply_element *el = &h->el[e];
    long double n = (long double)el->count * (long double)jl_ply_min_bytes(h, el);
    need += n;
    if (n > worst_need) {
      worst_need = n;
      worst = el;
    }
    if (strcmp(el->name, "face") == 0) faces += el->count;
    if (strcmp(el->name, "vertex") == 0) vertices += el->count;
  }
  size_t body = len - h->body;
  if (rc) {
  } else if (need > (long double)body) {
    rc = jl_error_set(err, JL_ERR_INPUT,
                      "%s: PLY header declares %llu %s elements: with the rest, at least %.0Lf bytes "
                      "of data, but the file has %zu bytes after the header",
                      path, worst->count, worst->name, need, body);
  } else if (faces > (unsigned long long)JL_MESH_TRIANGLES_MAX) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: PLY header declares %llu faces, the limit is %ld triangles",
                      path, faces, JL_MESH_TRIANGLES_MAX);
  } else if (vertices > (unsigned long long)JL_MESH_VERTICES_MAX) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: PLY header declares %llu vertices, the limit is %ld", path,
                      vertices, JL_MESH_VERTICES_MAX);
  } else {
    rc = jl_ply_walk(path, d, len, h, err);
  }
  free(h);
  return rc;
}

/* Occurrences of the keyword in text, a bound on the ASCII STL's vertices. */
static unsigned long long jl_count_word(const char *d, size_t len, const char *word) {
  size_t w = strlen(word);
  unsigned long long n = 0;
  for (const char *p = d, *end = d + len; (size_t)(end - p) >= w;) {
    const char *c = memchr(p, word[0], (size_t)(end - p) - w + 1);
    if (!c) break;
    if (memcmp(c, word, w) == 0) {
      ++n;
      p = c + w;
    } else {
      p = c + 1;
    }
  }
  return n;
}

static int jl_scan_stl(const char *path, const char *d, size_t len, jl_error *err) {
  uint32_t count = 0;
  if (len >= JL_STL_HEADER) {
    const unsigned char *c = (const unsigned char *)d + 80;
    count = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
    unsigned long long want = JL_STL_HEADER + (unsigned long long)JL_STL_TRIANGLE * count;
    /* assimp takes the file for binary when the size matches in 32-bit arithmetic */
    uint32_t want32 = (uint32_t)(JL_STL_HEADER + JL_STL_TRIANGLE * count);
    if (want == len) {
      if (count > JL_MESH_TRIANGLES_MAX)
        return jl_error_set(err, JL_ERR_INPUT, "%s: binary STL with %u triangles, the limit is %ld", path,
                            count, JL_MESH_TRIANGLES_MAX);
      return JL_OK;
    }
    if (want32 == len)
      return jl_error_set(err, JL_ERR_INPUT,
                          "%s: binary STL header declares %u triangles (%llu bytes), the file has %zu bytes",
                          path, count, want, len);
  }
  size_t s = 0;
  while (s < len && (d[s] == ' ' || d[s] == '\t' || d[s] == '\r' || d[s] == '\n')) ++s;
  if (len - s >= 5 && memcmp(d + s, "solid", 5) == 0) {
    unsigned long long tri = jl_count_word(d, len, "vertex") / 3;
    if (tri > (unsigned long long)JL_MESH_TRIANGLES_MAX)
      return jl_error_set(err, JL_ERR_INPUT, "%s: ASCII STL with %llu triangles, the limit is %ld", path,
                          tri, JL_MESH_TRIANGLES_MAX);
    return JL_OK;
  }
  if (len < JL_STL_HEADER)
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: not an STL file: no \"solid\" line and shorter (%zu bytes) than a binary "
                        "STL's 84-byte header", path, len);
  return jl_error_set(err, JL_ERR_INPUT,
                      "%s: binary STL header declares %u triangles, which need 84 + 50 x %u = %llu bytes, "
                      "the file has %zu bytes", path, count, count,
                      JL_STL_HEADER + (unsigned long long)JL_STL_TRIANGLE * count, len);
}

/* OBJ: "v x y z" lines are vertices, "f a b c ..." lines polygons of n - 2 triangles. */
static int jl_scan_obj(const char *path, const char *d, size_t len, jl_error *err) {
  unsigned long long tri = 0, vertices = 0;
  for (size_t pos = 0; pos < len;) {
    const char *line;
    size_t n = jl_next_line(d, len, &pos, &line);
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (n - i < 2 || (line[i + 1] != ' ' && line[i + 1] != '\t')) continue;
    if (line[i] == 'v') {
      ++vertices;
    } else if (line[i] == 'f') {
      unsigned long long words = 0;
      for (size_t j = i + 1; j < n; ++j)
        words += (line[j] != ' ' && line[j] != '\t') && (line[j - 1] == ' ' || line[j - 1] == '\t');
      if (words > 2) tri += words - 2;
    }
  }
  if (tri > (unsigned long long)JL_MESH_TRIANGLES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "%s: OBJ with %llu triangles, the limit is %ld", path, tri,
                        JL_MESH_TRIANGLES_MAX);
  if (vertices > (unsigned long long)JL_MESH_VERTICES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "%s: OBJ with %llu vertices, the limit is %ld", path, vertices,
                        JL_MESH_VERTICES_MAX);
  return JL_OK;
}

int jl_mesh_scan(const char *path, const char *data, size_t len, jl_error *err) {
  int ply_magic = len >= 4 && memcmp(data, "ply", 3) == 0 && (data[3] == '\n' || data[3] == '\r');
  if (ply_magic || jl_has_ext(path, ".ply")) return jl_scan_ply(path, data, len, err);
  if (jl_has_ext(path, ".stl")) return jl_scan_stl(path, data, len, err);
  if (jl_has_ext(path, ".obj")) return jl_scan_obj(path, data, len, err);
  return JL_OK;
}
