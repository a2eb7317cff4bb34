/* Unit tests for the exact checks' fast paths (the circles' grid and the
 * trunk's block pairs give what all pairs give), and for what output names
 * and strings copied from files may hold (the default name stem, UTF-8,
 * JSON escapes). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "circles.h"
#include "cli.h"
#include "file_util.h"
#include "mesh.h"
#include "trunk_check.h"

/* A small deterministic generator (splitmix64): the cases are the same every run. */
static uint64_t rng_state;
static double uni(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

/* ---- circles: grid against all pairs ---- */

static void expect_same_pairs(const jl_circle_packing *pk, const char *what) {
  long double wa, wg;
  int ia, ja, ig, jg;
  jl_circle_pairs_all(pk, &wa, &ia, &ja);
  assert_int_equal(jl_circle_pairs_grid(pk, &wg, &ig, &jg), JL_OK);
  if (wa != wg || ia != ig || ja != jg)
    fail_msg("%s (n = %d): all pairs give %.21Lg at (%d, %d), the grid %.21Lg at (%d, %d)", what,
             pk->n, wa, ia, ja, wg, ig, jg);
}

static void packing(jl_circle_packing *pk, int n) {
  jl_error err = {0};
  assert_int_equal(jl_circle_packing_init(pk, n, &err), JL_OK);
}

/* Random circles in a square of side L: overlapping when L is small, sparse when large. */
static void test_grid_random(void **state) {
  (void)state;
  static const int ns[] = {2, 3, 17, 64, 300, 1000};
  static const double sides[] = {1.0, 10.0, 60.0, 1000.0, 1e6};
  rng_state = 1;
  for (size_t a = 0; a < sizeof ns / sizeof ns[0]; ++a)
    for (size_t b = 0; b < sizeof sides / sizeof sides[0]; ++b)
      for (int spread = 0; spread < 3; ++spread) {
        jl_circle_packing pk;
        packing(&pk, ns[a]);
        for (int i = 0; i < pk.n; ++i) {
          pk.x[i] = sides[b] * (uni() - 0.5);
          pk.y[i] = sides[b] * (uni() - 0.5);
          /* equal radii, 0.5..2, and a spread of six decades */
          pk.r[i] = spread == 0 ? 1.0 : spread == 1 ? 0.5 + 1.5 * uni() : pow(10.0, 6.0 * uni() - 3.0);
        }
        char what[64];
        snprintf(what, sizeof what, "random, side %g, spread %d", sides[b], spread);
        expect_same_pairs(&pk, what);
        jl_circle_packing_free(&pk);
      }
}

/* Touching unit circles on a square lattice: every neighbour pair ties at
 * overlap 0, so the first pair in (i, j) order must win; then the same with
 * a few circles nudged to overlap. */
static void test_grid_lattice_ties(void **state) {
  (void)state;
  int side = 60;
  jl_circle_packing pk;
  packing(&pk, side * side);
  for (int i = 0; i < pk.n; ++i) {
    pk.x[i] = 2.0 * (i % side);
    pk.y[i] = 2.0 * (i / side);
    pk.r[i] = 1.0;
  }
  expect_same_pairs(&pk, "lattice");
  pk.x[1234] += 0.25;
  pk.x[77] -= 0.25;
  expect_same_pairs(&pk, "lattice, nudged");
  /* shuffled numbering */
  rng_state = 7;
  for (int i = pk.n - 1; i > 0; --i) {
    int j = (int)(uni() * (i + 1));
    double t = pk.x[i]; pk.x[i] = pk.x[j]; pk.x[j] = t;
    t = pk.y[i]; pk.y[i] = pk.y[j]; pk.y[j] = t;
  }
  expect_same_pairs(&pk, "lattice, shuffled");
  /* columns 1 apart, rows 3 apart, x jittered: the nearest pairs are
   * neighbours in a row, far apart in x order, so no shortcut finds them */
  rng_state = 9;
  for (int i = 0; i < pk.n; ++i) {
    pk.x[i] = (i % side) + 0.2 * (uni() - 0.5);
    pk.y[i] = 3.0 * (i / side);
    pk.r[i] = 0.05 + 0.1 * uni();
  }
  expect_same_pairs(&pk, "rows");
  jl_circle_packing_free(&pk);
}

/* Degenerate layouts: all circles at one point, all on a line, one huge
 * circle among small ones, two far clusters, extreme scales. */
static void test_grid_degenerate(void **state) {
  (void)state;
  jl_circle_packing pk;
  packing(&pk, 1500);
  for (int i = 0; i < pk.n; ++i) pk.x[i] = pk.y[i] = 0.0, pk.r[i] = 1.0;
  expect_same_pairs(&pk, "coincident");
  for (int i = 0; i < pk.n; ++i) pk.r[i] = 1.0 + (i % 7);
  expect_same_pairs(&pk, "coincident, seven radii");
  for (int i = 0; i < pk.n; ++i) pk.x[i] = 10.0 * i, pk.y[i] = 0.0, pk.r[i] = 1.0;
  expect_same_pairs(&pk, "line");
  for (int i = 0; i < pk.n; ++i) pk.y[i] = 3.0 * i, pk.x[i] = 0.0;
  expect_same_pairs(&pk, "column");
  rng_state = 3;
  pk.x[0] = pk.y[0] = 0.0;
  pk.r[0] = 1000.0;
  for (int i = 1; i < pk.n; ++i) {
    double a = 2.0 * 3.14159265358979 * uni(), d = 1001.0 + 200.0 * uni();
    pk.x[i] = d * cos(a);
    pk.y[i] = d * sin(a);
    pk.r[i] = 1.0;
  }
  expect_same_pairs(&pk, "one huge circle");
  for (int i = 0; i < pk.n; ++i) {
    pk.x[i] = (i % 2 ? 1e9 : -1e9) + 50.0 * uni();
    pk.y[i] = 50.0 * uni();
    pk.r[i] = 0.1;
  }
  expect_same_pairs(&pk, "two far clusters");
  for (int i = 0; i < pk.n; ++i) {
    pk.x[i] = 1e150 * uni();
    pk.y[i] = 1e150 * uni();
    pk.r[i] = 1e147;
  }
  expect_same_pairs(&pk, "scale 1e150");
  for (int i = 0; i < pk.n; ++i) {
    pk.x[i] = 1e-150 * uni();
    pk.y[i] = 1e-150 * uni();
    pk.r[i] = 1e-153;
  }
  expect_same_pairs(&pk, "scale 1e-150");
  jl_circle_packing_free(&pk);
}

/* The check itself takes the grid for many circles and still sees an overlap. */
static void test_check_uses_grid(void **state) {
  (void)state;
  int side = 300;
  jl_circle_packing pk;
  packing(&pk, side * side);
  for (int i = 0; i < pk.n; ++i) {
    pk.x[i] = 2.0 * (i % side) - side;
    pk.y[i] = 2.0 * (i / side) - side;
    pk.r[i] = 1.0;
  }
  jl_circle_packing_update_R(&pk);
  jl_circle_check c;
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_OK);
  assert_int_equal(c.overlap_i, 0);
  assert_int_equal(c.overlap_j, 1);
  pk.x[50000] += 0.5;
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_ERR_NOT_LEGAL);
  assert_int_equal(c.overlap_i, 50000);
  assert_int_equal(c.overlap_j, 50001);
  assert_true(fabsl(c.max_overlap - 0.5L) < 1e-12L);
  jl_circle_packing_free(&pk);
}

/* ---- trunk: block pairs against all pairs ---- */

static void cube_mesh(jl_mesh *m, double s) {
  static const int tris[12][3] = {
    {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
    {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5},
  };
  double v[24];
  for (int k = 0; k < 8; ++k) {
    v[3 * k] = (k & 1) ? s : 0;
    v[3 * k + 1] = (k & 2) ? s : 0;
    v[3 * k + 2] = (k & 4) ? s : 0;
  }
  jl_error err = {0};
  assert_int_equal(jl_mesh_from_arrays(m, v, 8, &tris[0][0], 12, &err), JL_OK);
  assert_int_equal(jl_mesh_validate(m, "cube", NULL, &err), JL_OK);
}

/* What the check did before its grid: every pair whose bounding spheres
 * meet, the first in (i, j) order among equal depths. */
static void pairs_reference(const jl_trunk_geom *g, const jl_block_packing *p, double *worst,
                            int *wi, int *wj) {
  double rad = 0.5 * sqrt(g->block.x * g->block.x + g->block.y * g->block.y + g->block.z * g->block.z);
  *worst = -INFINITY;
  *wi = *wj = -1;
  for (int i = 0; i < p->count; ++i)
    for (int j = i + 1; j < p->count; ++j) {
      jl_obb a, b;
      jl_obb_from_block(&g->block, p->centre + 3 * i, p->quat + 4 * i, &a);
      jl_obb_from_block(&g->block, p->centre + 3 * j, p->quat + 4 * j, &b);
      double d2 = 0.0;
      for (int k = 0; k < 3; ++k) d2 += (a.c[k] - b.c[k]) * (a.c[k] - b.c[k]);
      if (d2 > 4 * rad * rad) continue;
      double ov = jl_obb_overlap_depth(&a, &b);
      if (ov > *worst) {
        *worst = ov;
        *wi = i;
        *wj = j;
      }
    }
  if (*wi < 0) *worst = 0.0;
}

static void expect_same_blocks(const jl_trunk_geom *g, const jl_block_packing *p, const char *what) {
  double w;
  int i, j;
  pairs_reference(g, p, &w, &i, &j);
  jl_trunk_report r;
  jl_error err = {0};
  assert_int_equal(jl_trunk_check_packing(g, p, &r, &err), JL_OK);
  if (r.max_overlap_depth != w || r.overlap_i != i || r.overlap_j != j)
    fail_msg("%s (%d blocks): all pairs give %.17g at (%d, %d), the check %.17g at (%d, %d)", what,
             p->count, w, i, j, r.max_overlap_depth, r.overlap_i, r.overlap_j);
}

static void test_block_pairs(void **state) {
  (void)state;
  jl_mesh m = {0};
  cube_mesh(&m, 2000.0);
  jl_trunk_geom g;
  jl_error err = {0};
  jl_block_size bs = {200, 100, 50};
  assert_int_equal(jl_trunk_geom_init(&g, &m, bs, &err), JL_OK);
  static const double spans[] = {150.0, 600.0, 1800.0};
  rng_state = 11;
  for (int s = 0; s < 3; ++s)
    for (int turned = 0; turned < 2; ++turned) {
      jl_block_packing p = {0};
      assert_int_equal(jl_block_packing_init(&p, 400, &err), JL_OK);
      for (int i = 0; i < 400; ++i) {
        double c[3], q[4] = {1, 0, 0, 0};
        for (int k = 0; k < 3; ++k) c[k] = 1000.0 + spans[s] * (uni() - 0.5);
        if (turned)
          for (int k = 0; k < 4; ++k) q[k] = uni() - 0.5;
        if (i % 10 == 9) {  /* copies of an earlier block */
          int src = (int)(uni() * i);
          memcpy(c, p.centre + 3 * src, sizeof c);
          memcpy(q, p.quat + 4 * src, sizeof q);
        }
        assert_int_equal(jl_block_packing_push(&p, c, q, &err), JL_OK);
      }
      char what[64];
      snprintf(what, sizeof what, "span %g mm, %s", spans[s], turned ? "turned" : "axis-aligned");
      expect_same_blocks(&g, &p, what);
      jl_block_packing_free(&p);
    }
  /* a touching lattice, numbered at random: ties at depth 0 everywhere, and
   * the same lattice jittered, overlapping a little here and there */
  for (int jitter = 0; jitter < 2; ++jitter) {
    jl_block_packing p = {0};
    int nx = 9, ny = 18, nz = 36, n = nx * ny * nz;
    assert_int_equal(jl_block_packing_init(&p, n, &err), JL_OK);
    int *perm = malloc((size_t)n * sizeof *perm);
    assert_non_null(perm);
    for (int i = 0; i < n; ++i) perm[i] = i;
    for (int i = n - 1; i > 0; --i) {
      int j = (int)(uni() * (i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int i = 0; i < n; ++i) {
      int k = perm[i];
      double c[3] = {100.0 + 200.0 * (k % nx), 50.0 + 100.0 * (k / nx % ny), 25.0 + 50.0 * (k / nx / ny)};
      for (int d = 0; d < 3 && jitter; ++d) c[d] += 4.0 * (uni() - 0.5);
      double q[4] = {1, 0, 0, 0};
      assert_int_equal(jl_block_packing_push(&p, c, q, &err), JL_OK);
    }
    free(perm);
    expect_same_blocks(&g, &p, jitter ? "jittered lattice" : "lattice");
    jl_block_packing_free(&p);
  }
  /* 100,000 copies of one block: one box, not 5e9 pairs */
  jl_block_packing p = {0};
  assert_int_equal(jl_block_packing_init(&p, JL_TRUNK_MAX_BLOCKS, &err), JL_OK);
  double c[3] = {1000, 1000, 1000}, q[4] = {1, 0, 0, 0};
  for (int i = 0; i < JL_TRUNK_MAX_BLOCKS; ++i) assert_int_equal(jl_block_packing_push(&p, c, q, &err), JL_OK);
  jl_trunk_report r;
  assert_int_equal(jl_trunk_check_packing(&g, &p, &r, &err), JL_OK);
  assert_false(r.legal);
  assert_int_equal(r.worst_kind, JL_VIOLATION_OVERLAP);
  assert_int_equal(r.overlap_i, 0);
  assert_int_equal(r.overlap_j, 1);
  assert_true(fabs(r.max_overlap_depth - 50.0) < 1e-9);  /* through along the 50 mm edge */
  jl_block_packing_free(&p);
  jl_trunk_geom_free(&g);
  jl_mesh_free(&m);
}

/* ---- output names and strings ---- */

static void expect_stem(const char *name, const char *want) {
  char out[JL_CLI_STEM_MAX + 1];
  jl_cli_default_stem(name, "circles", out, sizeof out);
  if (strcmp(out, want) != 0) fail_msg("stem of '%s': expected '%s', got '%s'", name ? name : "(null)", want, out);
}

static void test_default_stem(void **state) {
  (void)state;
  expect_stem("zimmermann-10", "zimmermann-10");
  expect_stem("equal-5.v2_x", "equal-5.v2_x");
  expect_stem("/some/other/dir/x", "_some_other_dir_x");
  expect_stem("../x", "_._x");
  expect_stem("..", "_.");
  expect_stem(".", "_");
  expect_stem(".hidden", "_hidden");
  expect_stem("", "circles");
  expect_stem(NULL, "circles");
  expect_stem("a b\tc\nd", "a_b_c_d");
  expect_stem("caf\xc3\xa9", "caf__");
  expect_stem("x\xff", "x_");
  char longname[300];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  char out[JL_CLI_STEM_MAX + 1];
  jl_cli_default_stem(longname, "circles", out, sizeof out);
  assert_int_equal((int)strlen(out), JL_CLI_STEM_MAX);
  char small[4];
  jl_cli_default_stem("abcdef", "circles", small, sizeof small);
  assert_string_equal(small, "abc");
}

static void test_utf8(void **state) {
  (void)state;
  assert_int_equal(jl_utf8_invalid_at("plain ascii"), -1);
  assert_int_equal(jl_utf8_invalid_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), -1);
  assert_int_equal(jl_utf8_invalid_at("bad\xff"), 3);
  assert_int_equal(jl_utf8_invalid_at("\xc3"), 0);            /* cut short */
  assert_int_equal(jl_utf8_invalid_at("a\xc0\xaf"), 1);       /* overlong '/' */
  assert_int_equal(jl_utf8_invalid_at("\xe0\x80\xaf"), 0);    /* overlong, 3 bytes */
  assert_int_equal(jl_utf8_invalid_at("\xed\xa0\x80"), 0);    /* a surrogate */
  assert_int_equal(jl_utf8_invalid_at("\xf4\x90\x80\x80"), 0);/* above U+10FFFF */
  assert_int_equal(jl_utf8_invalid_at("\xf4\x8f\xbf\xbf"), -1);
  jl_error err = {0};
  assert_int_equal(jl_utf8_check("ok", "p.json", "name", &err), JL_OK);
  assert_int_equal(jl_utf8_check("x\xfe", "p.json", "name", &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "p.json: name: not valid UTF-8"));
}

static void test_json_string_always_valid(void **state) {
  (void)state;
  jl_buf b = {0};
  jl_buf_json_string(&b, "a\"b\\c\n\x01\x7f caf\xc3\xa9 \xff\xfe end\xe2\x82");
  jl_buf_printf(&b, "%c", '\0');
  assert_false(b.failed);
  assert_string_equal(b.data,
                      "\"a\\\"b\\\\c\\n\\u0001\\u007f caf\xc3\xa9 \\ufffd\\ufffd end\\ufffd\\ufffd\"");
  jl_buf_free(&b);
  jl_buf_xml_text(&b, "<a&\x01\xff\xc3\xa9>");
  jl_buf_printf(&b, "%c", '\0');
  assert_string_equal(b.data, "&lt;a&amp;\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9&gt;");
  jl_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grid_random),
    cmocka_unit_test(test_grid_lattice_ties),
    cmocka_unit_test(test_grid_degenerate),
    cmocka_unit_test(test_check_uses_grid),
    cmocka_unit_test(test_block_pairs),
    cmocka_unit_test(test_default_stem),
    cmocka_unit_test(test_utf8),
    cmocka_unit_test(test_json_string_always_valid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
