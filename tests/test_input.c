/* The readers' shared limits: regular files of bounded size
 * (jl_file_open_regular), text without NUL bytes, one JSON parser with the
 * same messages for every format (jl_json_parse_text), escaped excerpts, and
 * mesh headers whose declared counts must fit the file (jl_mesh_scan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_util.h"
#include "json_file.h"
#include "mesh_scan.h"

static void assert_msg(const jl_error *err, const char *want) {
  if (!strstr(err->msg, want)) fail_msg("expected \"%s\" in \"%s\"", want, err->msg);
}

static void test_escape_bytes(void **state) {
  (void)state;
  char out[64];
  const char in[] = "a\033[31m\n\x7f\xc3\xa9z";
  jl_escape_bytes(out, sizeof out, in, sizeof in - 1, 1);
  assert_string_equal(out, "a\\x1b[31m\\x0a\\x7f\\xc3\\xa9z");
  jl_escape_bytes(out, sizeof out, in, sizeof in - 1, 0);   /* UTF-8 kept */
  assert_string_equal(out, "a\\x1b[31m\\x0a\\x7f\xc3\xa9z");
  /* a full buffer cuts between escapes, never inside one */
  jl_escape_bytes(out, 7, "ab\033cd", 5, 1);
  assert_string_equal(out, "ab\\x1b");
  jl_escape_bytes(out, 6, "ab\033cd", 5, 1);
  assert_string_equal(out, "ab");
}

static void test_json_messages(void **state) {
  (void)state;
  jl_error err = {0};
  cJSON *root = NULL;
  assert_int_equal(jl_json_parse_text("e.json", "", 0, &root, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "e.json: empty file (expected a JSON object)");
  assert_null(root);
  assert_int_equal(jl_json_parse_text("e.json", " \r\n\t ", 5, &root, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "e.json: empty file (expected a JSON object)");

  const char nul[] = "{\"a\": 1}\0{garbage";
  assert_int_equal(jl_json_parse_text("n.json", nul, sizeof nul - 1, &root, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "n.json: NUL byte at byte 8 (not a text file)");

  const char *nan = "{\"a\": 1,\n \"b\": [1, NaN]}";
  assert_int_equal(jl_json_parse_text("x.json", nan, strlen(nan), &root, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "x.json: invalid JSON at line 2, column 11 (byte 19), near:  \"b\": [1, NaN]}");

  /* cJSON takes every byte up to 0x20 for white space, so it stops at the J */
  const char *esc = "{\"a\": \x1b[2J\xff}";
  assert_int_equal(jl_json_parse_text("x.json", esc, strlen(esc), &root, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "x.json: invalid JSON at line 1, column 10 (byte 9), near: {\"a\": \\x1b[2J\\xff}");

  const char *trail = "{\"a\": 1} {";
  assert_int_equal(jl_json_parse_text("x.json", trail, strlen(trail), &root, &err), JL_ERR_INPUT);
  assert_msg(&err, "line 1, column 10 (byte 9)");
  assert_null(root);

  /* the length bounds the parse: no NUL needed after the text */
  const char buf[] = {'{', '"', 'a', '"', ':', '2', '}', 'x'};
  assert_int_equal(jl_json_parse_text("x.json", buf, 7, &root, &err), JL_OK);
  assert_true(cJSON_IsNumber(cJSON_GetObjectItem(root, "a")));
  cJSON_Delete(root);
}

static void test_json_value_limit(void **state) {
  (void)state;
  size_t n = (size_t)JL_JSON_VALUES_MAX;
  /* "[0,0,...,0]": JL_JSON_VALUES_MAX numbers and the array, one value too many
   * (refused before parsing, which would take about 2.5 GB) */
  char *text = malloc(2 * n + 4);
  assert_non_null(text);
  text[0] = '[';
  for (size_t i = 0; i < n; ++i) memcpy(text + 1 + 2 * i, "0,", 2);
  text[2 * n] = ']';
  jl_error err = {0};
  cJSON *root = NULL;
  /* the count also skips commas and brackets inside strings */
  const char *str = "[\"a,b,[{\\\",\", 1]";
  assert_int_equal(jl_json_parse_text("s.json", str, strlen(str), &root, &err), JL_OK);
  cJSON_Delete(root);
  assert_int_equal(jl_json_parse_text("v.json", text, 2 * n + 1, &root, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "v.json: too many JSON values (about 25000001, the limit is 25000000)");
  assert_null(root);
  free(text);
}

static void test_regular_files(void **state) {
  (void)state;
  char dir[] = "/tmp/jostle-input-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[64], small[64], nul[64];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(small, sizeof small, "%s/small", dir);
  snprintf(nul, sizeof nul, "%s/nul.txt", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  FILE *f = fopen(small, "w");
  assert_non_null(f);
  fputs("0123456789", f);
  fclose(f);
  f = fopen(nul, "w");
  assert_non_null(f);
  fwrite("1 0 0\n\0x\n", 1, 9, f);
  fclose(f);

  jl_error err = {0};
  size_t size = 0;
  char *data = NULL;
  assert_int_equal(jl_file_read_all(dir, &data, NULL, &err), JL_ERR_INPUT);
  assert_msg(&err, ": is a directory");
  /* refused at once, not waited on for a writer */
  assert_int_equal(jl_file_read_all(fifo, &data, NULL, &err), JL_ERR_INPUT);
  assert_msg(&err, "fifo: not a regular file (a FIFO)");
  assert_int_equal(jl_file_read_all("/dev/zero", &data, NULL, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "/dev/zero: not a regular file (a character device)");
  assert_int_equal(jl_file_open_regular(small, 9, &size, &err), -1);
  assert_msg(&err, "small: too large: 10 bytes, the limit is 9 bytes");
  int fd = jl_file_open_regular(small, 10, &size, &err);
  assert_true(fd >= 0);
  assert_int_equal(size, 10);
  close(fd);
  size_t len = 0;
  assert_int_equal(jl_file_read_text(small, &data, &len, &err), JL_OK);
  assert_int_equal(len, 10);
  assert_string_equal(data, "0123456789");
  free(data);
  data = NULL;
  assert_int_equal(jl_file_read_text(nul, &data, &len, &err), JL_ERR_INPUT);
  assert_msg(&err, "nul.txt: NUL byte at byte 6 (not a text file)");
  assert_null(data);
  /* binary files (meshes, glb) may hold NUL bytes */
  assert_int_equal(jl_file_read_all(nul, &data, &len, &err), JL_OK);
  assert_int_equal(len, 9);
  free(data);

  unlink(fifo);
  unlink(small);
  unlink(nul);
  rmdir(dir);
}

static const char jl_ply_head[] =
  "ply\nformat %s 1.0\nelement vertex %s\nproperty float x\nproperty float y\nproperty float z\n"
  "element face %s\nproperty list %s int vertex_indices\nend_header\n";

/* A PLY header with the given format, counts and list count type, then body. */
static size_t ply(char *out, size_t cap, const char *format, const char *nv, const char *nf,
                  const char *count_type, const void *body, size_t body_len) {
  int n = snprintf(out, cap, jl_ply_head, format, nv, nf, count_type);
  assert_true(n > 0 && (size_t)n + body_len <= cap);
  memcpy(out + n, body, body_len);
  return (size_t)n + body_len;
}

static void test_mesh_scan_ply(void **state) {
  (void)state;
  char buf[1024];
  jl_error err = {0};
  const char *ascii = "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
  size_t len = ply(buf, sizeof buf, "ascii", "3", "1", "uchar", ascii, strlen(ascii));
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_OK);

  len = ply(buf, sizeof buf, "ascii", "3", "1200000000", "uchar", ascii, strlen(ascii));
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "t.ply: PLY header declares 1200000000 face elements: with the rest, at "
                               "least 2400000018 bytes of data, but the file has 26 bytes after the header");
  /* within the file but over the triangle limit */
  char *big = malloc(2 * (size_t)JL_MESH_TRIANGLES_MAX + 1024);
  assert_non_null(big);
  char nf[32];
  snprintf(nf, sizeof nf, "%ld", JL_MESH_TRIANGLES_MAX + 1);
  char zeros[64] = {0};
  len = ply(big, 1024, "binary_little_endian", "0", nf, "uchar", zeros, 0);
  memset(big + len, 0, (size_t)JL_MESH_TRIANGLES_MAX + 1);
  assert_int_equal(jl_mesh_scan("t.ply", big, len + (size_t)JL_MESH_TRIANGLES_MAX + 1, &err), JL_ERR_INPUT);
  assert_msg(&err, "t.ply: PLY header declares 5000001 faces, the limit is 5000000 triangles");
  free(big);

  const char *long_list = "0 0 0\n1 0 0\n0 1 0\n2000000000 0 1 2\n";
  len = ply(buf, sizeof buf, "ascii", "3", "1", "uchar", long_list, strlen(long_list));
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "t.ply: PLY face 0: a list of 2000000000 items, more than the rest of the file holds");
  const char *short_data = "0 0 0\n1 0 0\n0 1 0\n3 0 1    \n";
  len = ply(buf, sizeof buf, "ascii", "3", "1", "uchar", short_data, strlen(short_data));
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "t.ply: PLY data ends early, in face 0 of 1");

  /* binary: 3 vertices of 12 bytes, one face with a uint count */
  unsigned char bin[36 + 4 + 12] = {0};
  bin[36] = 3;
  len = ply(buf, sizeof buf, "binary_little_endian", "3", "1", "uint", bin, sizeof bin);
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_OK);
  bin[39] = 0x70;   /* count 0x70000003 */
  len = ply(buf, sizeof buf, "binary_little_endian", "3", "1", "uint", bin, sizeof bin);
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_msg(&err, "t.ply: PLY face 0: a list of 1879048195 items");
  bin[39] = 0x80;   /* as a signed int, negative */
  len = ply(buf, sizeof buf, "binary_little_endian", "3", "1", "int", bin, sizeof bin);
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_msg(&err, "t.ply: PLY face 0: the list count is not a count");
  /* big endian: the count's high byte first */
  memset(bin, 0, sizeof bin);
  bin[39] = 3;
  len = ply(buf, sizeof buf, "binary_big_endian", "3", "1", "uint", bin, sizeof bin);
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_OK);

  len = ply(buf, sizeof buf, "ascii", "-1", "1", "uchar", ascii, strlen(ascii));
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_msg(&err, "t.ply:3: PLY header: element needs a name and a count");
  const char *no_end = "ply\nformat ascii 1.0\nelement vertex 3\n";
  assert_int_equal(jl_mesh_scan("t.ply", no_end, strlen(no_end), &err), JL_ERR_INPUT);
  assert_msg(&err, "t.ply: PLY header has no end_header line");
  /* the magic line decides, whatever the extension */
  len = ply(buf, sizeof buf, "ascii", "3", "1200000000", "uchar", ascii, strlen(ascii));
  assert_int_equal(jl_mesh_scan("t.mesh", buf, len, &err), JL_ERR_INPUT);

  /* ASCII data holds one element a line, as assimp reads it: a list count
   * that fits the file but not its line, and a short line, are refused */
  const char *split = "0 0 0\n1 0 0\n0 1 0\n3 0 1\n2 0 1\n";
  len = ply(buf, sizeof buf, "ascii", "3", "2", "uchar", split, strlen(split));
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "t.ply: PLY face 0: a list of 3 items, more than its line holds");
  const char *short_line = "0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
  len = ply(buf, sizeof buf, "ascii", "3", "1", "uchar", short_line, strlen(short_line));
  assert_int_equal(jl_mesh_scan("t.ply", buf, len, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "t.ply: PLY vertex 0: too few values on its line");
}

/* Only PLY 1.0's header statements, each once where once is allowed: assimp
 * wrote past its buffers on the fuzzer's garbled headers. */
static void test_mesh_scan_ply_header(void **state) {
  (void)state;
  static const struct { const char *header, *msg; } cases[] = {
    {"ply\nformat ascii 1.0\npro perty float x\nend_header\n", "t.ply:3: PLY header: unknown statement"},
    {"ply\nformat ascii 1.0\nformat ascii 1.0\nend_header\n", "t.ply:3: PLY header: a second format line"},
    {"ply\nformat ascii 2.0\nend_header\n", "t.ply:2: PLY header: unknown format"},
    {"ply\nformat ascii 1.0 x\nend_header\n", "t.ply:2: PLY header: unknown format"},
    {"ply\nformat ascii 1.0\nelement vertex 1\nelement vertex 2\nend_header\n",
     "t.ply:4: PLY header: a second element of that name"},
    {"ply\nformat ascii 1.0\nelement vertex 1 2\nend_header\n", "t.ply:3: PLY header: element needs"},
    {"ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int\nend_header\n",
     "t.ply:4: PLY header: bad property"},
    {"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x y\nend_header\n",
     "t.ply:4: PLY header: bad property"},
  };
  jl_error err = {0};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    assert_int_equal(jl_mesh_scan("t.ply", cases[i].header, strlen(cases[i].header), &err), JL_ERR_INPUT);
    assert_msg(&err, cases[i].msg);
  }
  const char *ok = "ply\r\nformat ascii 1.0\r\ncomment made by hand\r\nobj_info x\r\n"
                   "element vertex 1\r\nproperty float x\r\nend_header\r\n5\r\n";
  assert_int_equal(jl_mesh_scan("t.ply", ok, strlen(ok), &err), JL_OK);
}

static void test_mesh_scan_stl_obj(void **state) {
  (void)state;
  jl_error err = {0};
  unsigned char stl[256] = {0};
  stl[80] = 1;
  assert_int_equal(jl_mesh_scan("t.stl", (const char *)stl, 134, &err), JL_OK);
  assert_int_equal(jl_mesh_scan("t.STL", (const char *)stl, 134, &err), JL_OK);
  stl[80] = 2;
  assert_int_equal(jl_mesh_scan("t.stl", (const char *)stl, 134, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "t.stl: binary STL header declares 2 triangles, which need 84 + 50 x 2 = 184 "
                               "bytes, the file has 134 bytes");
  /* 84 + 50 n wraps to the file's size in 32 bits: refused, even after "solid" */
  uint32_t n = 85899346u + 1u;   /* 50 n = 2^32 + 54 */
  memcpy(stl, "solid x", 7);
  stl[80] = (unsigned char)n;
  stl[81] = (unsigned char)(n >> 8);
  stl[82] = (unsigned char)(n >> 16);
  stl[83] = (unsigned char)(n >> 24);
  assert_int_equal(jl_mesh_scan("t.stl", (const char *)stl, 84 + 54, &err), JL_ERR_INPUT);
  assert_msg(&err, "t.stl: binary STL header declares 85899347 triangles (4294967434 bytes), the file has 138 bytes");
  const char *ascii = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
                      "endloop\nendfacet\nendsolid t\n";
  assert_int_equal(jl_mesh_scan("t.stl", ascii, strlen(ascii), &err), JL_OK);
  assert_int_equal(jl_mesh_scan("t.stl", "hello", 5, &err), JL_ERR_INPUT);
  assert_msg(&err, "t.stl: not an STL file");

  const char *obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 4 3\n";
  assert_int_equal(jl_mesh_scan("t.obj", obj, strlen(obj), &err), JL_OK);
  /* one polygon of JL_MESH_TRIANGLES_MAX + 3 corners: that many triangles plus one */
  size_t corners = (size_t)JL_MESH_TRIANGLES_MAX + 3;
  char *poly = malloc(2 * corners + 4);
  assert_non_null(poly);
  poly[0] = 'f';
  for (size_t i = 0; i < corners; ++i) memcpy(poly + 1 + 2 * i, " 1", 2);
  poly[1 + 2 * corners] = '\n';
  assert_int_equal(jl_mesh_scan("t.obj", poly, 2 + 2 * corners, &err), JL_ERR_INPUT);
  assert_string_equal(err.msg, "t.obj: OBJ with 5000001 triangles, the limit is 5000000");
  free(poly);
  /* other formats are left to assimp and the size limit */
  assert_int_equal(jl_mesh_scan("t.gltf", "{", 1, &err), JL_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_escape_bytes),
    cmocka_unit_test(test_json_messages),
    cmocka_unit_test(test_json_value_limit),
    cmocka_unit_test(test_regular_files),
    cmocka_unit_test(test_mesh_scan_ply),
    cmocka_unit_test(test_mesh_scan_ply_header),
    cmocka_unit_test(test_mesh_scan_stl_obj),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
