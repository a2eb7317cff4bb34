/* Unit tests for the circle problem, packing, check, polish and file code. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "circle_elite.h"
#include "circles.h"
#include "file_util.h"

#define ZIMMERMANN_5_R 9.0013977460502193

/* ---- helpers ---- */

typedef struct tmpdir {
  char path[64];
} tmpdir;

static int tmpdir_setup(void **state) {
  tmpdir *d = calloc(1, sizeof *d);
  if (!d) return -1;
  snprintf(d->path, sizeof d->path, "/tmp/jostle-test-XXXXXX");
  if (!mkdtemp(d->path)) { free(d); return -1; }
  *state = d;
  return 0;
}

static int tmpdir_teardown(void **state) {
  tmpdir *d = *state;
  DIR *dir = opendir(d->path);
  if (dir) {
    struct dirent *e;
    char p[512];
    while ((e = readdir(dir))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(p, sizeof p, "%s/%s", d->path, e->d_name);
      unlink(p);
    }
    closedir(dir);
  }
  rmdir(d->path);
  free(d);
  return 0;
}

static const char *tmp_file(void **state, const char *name, char *buf, size_t cap) {
  const tmpdir *d = *state;
  snprintf(buf, cap, "%s/%s", d->path, name);
  return buf;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long len = ftell(f);
  assert_true(len >= 0);
  rewind(f);
  char *text = malloc((size_t)len + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
  text[len] = '\0';
  fclose(f);
  return text;
}

static int count_substr(const char *s, const char *sub) {
  int k = 0;
  for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) ++k;
  return k;
}

/* Deterministic starts without depending on the project's generator. */
typedef struct lcg {
  uint64_t s;
} lcg;

static double lcg_u01(lcg *g) {
  g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(g->s >> 11) * (1.0 / 9007199254740992.0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void packing_from_problem(jl_circle_packing *pk, const jl_circle_problem *p) {
  jl_error err;
  assert_int_equal(jl_circle_packing_init(pk, p->n, &err), JL_OK);
  for (int i = 0; i < p->n; ++i) pk->r[i] = p->radii[i];
}

/* Circles in shuffled order around a ring just long enough to hold them,
 * jittered radially, then made legal: loose but legal. */
static void ring_start(jl_circle_packing *pk, lcg *g) {
  int n = pk->n;
  int *order = malloc((size_t)n * sizeof *order);
  assert_non_null(order);
  for (int i = 0; i < n; ++i) order[i] = i;
  for (int i = n - 1; i > 0; --i) {
    int j = (int)(lcg_u01(g) * (i + 1));
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  double len = 0.0;
  for (int i = 0; i < n; ++i) len += 2.0 * pk->r[i];
  double ring = len / (2.0 * 3.14159265358979323846), a = 0.0;
  for (int k = 0; k < n; ++k) {
    int i = order[k];
    double da = 2.0 * pk->r[i] / ring, rr = ring * (1.0 + 0.05 * (lcg_u01(g) - 0.5));
    a += 0.5 * da;
    pk->x[i] = rr * cos(a);
    pk->y[i] = rr * sin(a);
    a += 0.5 * da;
  }
  free(order);
  jl_circle_packing_separate(pk);
}

/* Greedy start: largest first, each circle at the position tangent to two
 * placed circles (or beside one) that is nearest the origin. */
static void greedy_start(jl_circle_packing *pk) {
  int n = pk->n;
  pk->x[0] = pk->y[0] = 0.0;
  for (int k = 1; k < n; ++k) {
    double best = INFINITY, bx = 0, by = 0, rk = pk->r[k];
    for (int a = 0; a < k; ++a)
      for (int b = a; b < k; ++b)
        for (int side = 0; side < (a == b ? 16 : 2); ++side) {
          double px, py;
          if (a == b) {
            double ang = side * 3.14159265358979323846 / 8.0, d = pk->r[a] + rk;
            px = pk->x[a] + d * cos(ang);
            py = pk->y[a] + d * sin(ang);
          } else {
            double dx = pk->x[b] - pk->x[a], dy = pk->y[b] - pk->y[a], d = hypot(dx, dy);
            double ra = pk->r[a] + rk, rb = pk->r[b] + rk;
            double u = (ra * ra - rb * rb + d * d) / (2 * d), h2 = ra * ra - u * u;
            if (h2 < 0 || d == 0) continue;
            double h = sqrt(h2) * (side ? 1 : -1);
            px = pk->x[a] + (u * dx - h * dy) / d;
            py = pk->y[a] + (u * dy + h * dx) / d;
          }
          double reach = hypot(px, py) + rk;
          if (reach >= best) continue;
          int ok = 1;
          for (int j = 0; j < k && ok; ++j)
            ok = hypot(px - pk->x[j], py - pk->y[j]) >= (pk->r[j] + rk) * (1 - 1e-12);
          if (ok) { best = reach; bx = px; by = py; }
        }
    pk->x[k] = bx;
    pk->y[k] = by;
  }
  jl_circle_packing_separate(pk);
}

static void assert_legal(const jl_circle_packing *pk) {
  jl_circle_check c;
  int rc = jl_circle_check_packing(pk, JL_LEGAL_REL_TOL, &c);
  if (rc != JL_OK || !c.legal)
    fail_msg("not legal: overlap %Lg (%d,%d) excess %Lg R %Lg", c.max_overlap, c.overlap_i,
             c.overlap_j, c.max_excess, c.R);
}

/* ---- problems ---- */

static void test_zimmermann(void **state) {
  (void)state;
  jl_circle_problem p;
  jl_error err;
  assert_int_equal(jl_circle_problem_zimmermann(&p, 30, &err), JL_OK);
  assert_int_equal(p.n, 30);
  for (int i = 0; i < 30; ++i) assert_true(p.radii[i] == i + 1);
  assert_string_equal(p.name, "zimmermann-30");
  assert_true(p.best_known_R == 104.54036376);
  assert_non_null(strstr(p.source, "1306.0694"));
  jl_circle_problem_free(&p);

  assert_int_equal(jl_circle_problem_zimmermann(&p, 5, &err), JL_OK);
  assert_string_equal(p.name, "zimmermann-05");
  assert_true(p.best_known_R == ZIMMERMANN_5_R);
  jl_circle_problem_free(&p);
  assert_int_equal(jl_circle_problem_zimmermann(&p, 50, &err), JL_OK);
  assert_true(p.best_known_R == 220.56540026);
  jl_circle_problem_free(&p);
  assert_int_equal(jl_circle_problem_zimmermann(&p, 4, &err), JL_OK);
  assert_true(p.best_known_R == 0.0);
  jl_circle_problem_free(&p);
  assert_int_equal(jl_circle_problem_zimmermann(&p, 51, &err), JL_OK);
  assert_true(p.best_known_R == 0.0);
  jl_circle_problem_free(&p);
  assert_int_equal(jl_circle_problem_zimmermann(&p, 0, &err), JL_ERR_INPUT);
  assert_int_equal(jl_circle_problem_zimmermann(&p, -3, &err), JL_ERR_INPUT);
}

static void test_equal(void **state) {
  (void)state;
  jl_circle_problem p;
  jl_error err;
  assert_int_equal(jl_circle_problem_equal(&p, 7, &err), JL_OK);
  assert_int_equal(p.n, 7);
  assert_string_equal(p.name, "equal-7");
  for (int i = 0; i < 7; ++i) assert_true(p.radii[i] == 1.0);
  assert_true(p.best_known_R == 0.0);
  jl_circle_problem_free(&p);
  assert_int_equal(jl_circle_problem_equal(&p, 0, &err), JL_ERR_INPUT);
}

static void test_load_good(void **state) {
  char path[256];
  jl_circle_problem p;
  jl_error err;

  tmp_file(state, "z30.json", path, sizeof path);
  write_text(path, "{\"kind\": \"circles\", \"name\": \"zimmermann-30\", \"radii\": {\"range\": [1, 30]},\n"
                   " \"best_known_R\": 104.54036376, \"source\": \"Ye\", \"description\": \"d\"}\n");
  assert_int_equal(jl_circle_problem_load(&p, path, &err), JL_OK);
  assert_int_equal(p.n, 30);
  assert_true(p.radii[0] == 1.0 && p.radii[29] == 30.0);
  assert_string_equal(p.name, "zimmermann-30");
  assert_true(p.best_known_R == 104.54036376);
  assert_string_equal(p.source, "Ye");
  jl_circle_problem_free(&p);

  tmp_file(state, "list.json", path, sizeof path);
  write_text(path, "{\"radii\": [1.5, 2, 0.25], \"kind\": \"circles\"}");
  assert_int_equal(jl_circle_problem_load(&p, path, &err), JL_OK);
  assert_int_equal(p.n, 3);
  assert_true(p.radii[0] == 1.5 && p.radii[1] == 2.0 && p.radii[2] == 0.25);
  assert_string_equal(p.name, "list"); /* from the file name */
  assert_true(p.best_known_R == 0.0);
  jl_circle_problem_free(&p);

  tmp_file(state, "eq.json", path, sizeof path);
  write_text(path, "{\"kind\": \"circles\", \"equal\": 12, \"name\": \"twelve\"}");
  assert_int_equal(jl_circle_problem_load(&p, path, &err), JL_OK);
  assert_int_equal(p.n, 12);
  for (int i = 0; i < 12; ++i) assert_true(p.radii[i] == 1.0);
  assert_string_equal(p.name, "twelve");
  jl_circle_problem_free(&p);
}

static void expect_load_error(void **state, const char *name, const char *text, const char *key) {
  char path[256];
  jl_circle_problem p;
  jl_error err = {0};
  tmp_file(state, name, path, sizeof path);
  write_text(path, text);
  int rc = jl_circle_problem_load(&p, path, &err);
  if (rc != JL_ERR_INPUT) fail_msg("%s: expected JL_ERR_INPUT, got %d (%s)", name, rc, err.msg);
  assert_int_equal(err.code, JL_ERR_INPUT);
  if (!strstr(err.msg, path)) fail_msg("%s: message lacks the path: %s", name, err.msg);
  if (key && !strstr(err.msg, key)) fail_msg("%s: message lacks \"%s\": %s", name, key, err.msg);
  assert_null(p.radii);
}

static void test_load_bad(void **state) {
  expect_load_error(state, "unknown.json", "{\"kind\": \"circles\", \"radii\": [1], \"radius\": 2}", "radius");
  expect_load_error(state, "negative.json", "{\"kind\": \"circles\", \"radii\": [1, 2, 3, -1]}", "radii[3]");
  expect_load_error(state, "zero.json", "{\"kind\": \"circles\", \"radii\": [0]}", "radii[0]");
  expect_load_error(state, "nan.json", "{\"kind\": \"circles\", \"radii\": [1, NaN]}", "radii");
  expect_load_error(state, "inf.json", "{\"kind\": \"circles\", \"radii\": [1, 1e999]}", "radii[1]");
  expect_load_error(state, "empty.json", "{\"kind\": \"circles\", \"radii\": []}", "radii");
  expect_load_error(state, "string.json", "{\"kind\": \"circles\", \"radii\": [1, \"2\"]}", "radii[1]");
  expect_load_error(state, "malformed.json", "{\"kind\": \"circles\",\n \"radii\": [1, 2,, 3]}", "radii");
  expect_load_error(state, "truncated.json", "{\"kind\": \"circles\", \"radii\": [1, 2", "line 1");
  expect_load_error(state, "nokind.json", "{\"radii\": [1, 2]}", "kind");
  expect_load_error(state, "wrongkind.json", "{\"kind\": \"boxes\", \"radii\": [1, 2]}", "kind");
  expect_load_error(state, "noradii.json", "{\"kind\": \"circles\"}", "radii");
  expect_load_error(state, "both.json", "{\"kind\": \"circles\", \"radii\": [1], \"equal\": 3}", "equal");
  expect_load_error(state, "equal0.json", "{\"kind\": \"circles\", \"equal\": 0}", "equal");
  expect_load_error(state, "equalfrac.json", "{\"kind\": \"circles\", \"equal\": 2.5}", "equal");
  expect_load_error(state, "range.json", "{\"kind\": \"circles\", \"radii\": {\"range\": [5, 2]}}", "range");
  expect_load_error(state, "rangekey.json", "{\"kind\": \"circles\", \"radii\": {\"span\": [1, 2]}}", "span");
  expect_load_error(state, "best.json", "{\"kind\": \"circles\", \"radii\": [1], \"best_known_R\": -4}",
                    "best_known_R");
  expect_load_error(state, "bestinf.json", "{\"kind\": \"circles\", \"radii\": [1], \"best_known_R\": 1e999}",
                    "best_known_R");
  expect_load_error(state, "dup.json", "{\"kind\": \"circles\", \"radii\": [1], \"radii\": [2]}", "radii");
  expect_load_error(state, "array.json", "[1, 2, 3]", "object");

  /* More than 100000 radii. */
  size_t cap = 16 + 2 * 100001 + 64;
  char *big = malloc(cap);
  assert_non_null(big);
  size_t len = (size_t)snprintf(big, cap, "{\"kind\": \"circles\", \"radii\": [1");
  for (int i = 1; i < 100001; ++i) { big[len++] = ','; big[len++] = '1'; }
  snprintf(big + len, cap - len, "]}");
  expect_load_error(state, "big.json", big, "radii");
  free(big);

  char path[256];
  jl_circle_problem p;
  jl_error err;
  tmp_file(state, "missing.json", path, sizeof path);
  assert_int_equal(jl_circle_problem_load(&p, path, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, path));
}

/* ---- verify ---- */

static void test_verify(void **state) {
  (void)state;
  jl_circle_packing pk;
  jl_circle_check c;
  jl_error err;
  assert_int_equal(jl_circle_packing_init(&pk, 2, &err), JL_OK);
  pk.x[0] = -1; pk.x[1] = 1;
  pk.r[0] = pk.r[1] = 1;
  assert_true(jl_circle_packing_update_R(&pk) == 2.0);
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_OK);
  assert_int_equal(c.legal, 1);
  assert_true(fabsl(c.max_overlap) <= 1e-18L);
  assert_true(c.R == 2.0L);
  assert_int_equal(c.overlap_i, 0);
  assert_int_equal(c.overlap_j, 1);

  pk.x[0] = -0.95; pk.x[1] = 0.95;
  jl_circle_packing_update_R(&pk);
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_ERR_NOT_LEGAL);
  assert_int_equal(c.legal, 0);
  assert_true(fabsl(c.max_overlap - 0.1L) <= 1e-15L);

  /* A circle outside the stated R. */
  pk.x[0] = -1; pk.x[1] = 1.5;
  pk.R = 2.0;
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_ERR_NOT_LEGAL);
  assert_true(fabsl(c.max_excess - 0.5L) <= 1e-15L);
  assert_int_equal(c.excess_i, 1);
  assert_true(fabsl(c.R - 2.5L) <= 1e-15L);
  jl_circle_packing_update_R(&pk);
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_OK);

  /* Non-finite values are never legal. */
  pk.y[1] = NAN;
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_ERR_NOT_LEGAL);
  jl_circle_packing_free(&pk);

  /* One circle: no pairs. */
  assert_int_equal(jl_circle_packing_init(&pk, 1, &err), JL_OK);
  pk.x[0] = 0.5; pk.r[0] = 2;
  jl_circle_packing_update_R(&pk);
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_OK);
  assert_int_equal(c.overlap_i, -1);
  assert_int_equal(c.overlap_j, -1);
  assert_true(c.R == 2.5L);
  jl_circle_packing_free(&pk);
}

/* ---- packing ---- */

static void test_separate(void **state) {
  (void)state;
  jl_circle_problem p;
  jl_circle_packing pk;
  jl_error err;
  lcg g = {7};
  assert_int_equal(jl_circle_problem_zimmermann(&p, 40, &err), JL_OK);
  packing_from_problem(&pk, &p);
  for (int i = 0; i < pk.n; ++i) {
    pk.x[i] = 40.0 * (lcg_u01(&g) - 0.5);
    pk.y[i] = 40.0 * (lcg_u01(&g) - 0.5);
  }
  pk.x[7] = pk.x[3]; /* coincident centres */
  pk.y[7] = pk.y[3];
  jl_circle_packing_update_R(&pk);
  jl_circle_check c;
  assert_int_equal(jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &c), JL_ERR_NOT_LEGAL);
  jl_circle_packing_separate(&pk);
  assert_legal(&pk);

  /* A legal packing is left as it is. */
  jl_circle_packing copy = {0};
  assert_int_equal(jl_circle_packing_copy(&copy, &pk, &err), JL_OK);
  jl_circle_packing_separate(&copy);
  for (int i = 0; i < pk.n; ++i) assert_true(copy.x[i] == pk.x[i] && copy.y[i] == pk.y[i]);
  assert_true(copy.R == pk.R);
  jl_circle_packing_free(&copy);
  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&p);

  /* Two touching circles with a sub-ulp overlap come out legal. */
  assert_int_equal(jl_circle_packing_init(&pk, 2, &err), JL_OK);
  pk.x[0] = -1; pk.x[1] = nextafter(1.0, 0.0);
  pk.r[0] = pk.r[1] = 1;
  jl_circle_packing_separate(&pk);
  assert_true(pk.x[1] - pk.x[0] >= 2.0);
  assert_legal(&pk);
  jl_circle_packing_free(&pk);
  assert_int_equal(jl_circle_packing_init(&pk, 0, &err), JL_ERR_INPUT);
}

/* ---- the elite's shape distance and crowding ---- */

static double shape_distance(const jl_circle_packing *a, const jl_circle_packing *b) {
  jl_error err;
  double d = -1.0;
  assert_int_equal(jl_circle_shape_distance(a, b, &d, &err), JL_OK);
  return d;
}

static void test_shape_distance(void **state) {
  (void)state;
  static const double radii[10] = {3, 1, 4, 1, 2, 6, 2, 1, 5, 4};
  jl_circle_packing pk, cp = {0};
  jl_error err;
  lcg g = {11};
  assert_int_equal(jl_circle_packing_init(&pk, 10, &err), JL_OK);
  for (int i = 0; i < pk.n; ++i) {
    pk.r[i] = radii[i];
    pk.x[i] = 20.0 * (lcg_u01(&g) - 0.5);
    pk.y[i] = 20.0 * (lcg_u01(&g) - 0.5);
  }
  jl_circle_packing_update_R(&pk);
  assert_int_equal(jl_circle_packing_copy(&cp, &pk, &err), JL_OK);
  assert_true(shape_distance(&pk, &cp) == 0.0);

  /* mirror image: the same distances, bit for bit */
  for (int i = 0; i < cp.n; ++i) cp.y[i] = -cp.y[i];
  assert_true(shape_distance(&pk, &cp) == 0.0);
  /* equal circles swapped (radius 1: circles 1, 3, 7 in turn; radius 2: 4 and 6) */
  double x1 = cp.x[1], y1 = cp.y[1];
  cp.x[1] = cp.x[3]; cp.y[1] = cp.y[3];
  cp.x[3] = cp.x[7]; cp.y[3] = cp.y[7];
  cp.x[7] = x1; cp.y[7] = y1;
  double x4 = cp.x[4], y4 = cp.y[4];
  cp.x[4] = cp.x[6]; cp.y[4] = cp.y[6];
  cp.x[6] = x4; cp.y[6] = y4;
  assert_true(shape_distance(&pk, &cp) == 0.0);
  /* rotated by 0.7 rad: the same up to rounding of the distances */
  double c = cos(0.7), s = sin(0.7);
  for (int i = 0; i < cp.n; ++i) {
    double x = cp.x[i], y = cp.y[i];
    cp.x[i] = c * x - s * y;
    cp.y[i] = s * x + c * y;
  }
  jl_circle_packing_update_R(&cp);
  assert_true(shape_distance(&pk, &cp) < 1e-15);
  /* unequal circles swapped (radii 3 and 6): a different packing */
  double x0 = cp.x[0], y0 = cp.y[0];
  cp.x[0] = cp.x[5]; cp.y[0] = cp.y[5];
  cp.x[5] = x0; cp.y[5] = y0;
  jl_circle_packing_update_R(&cp);
  assert_true(shape_distance(&pk, &cp) > 1e-2);
  jl_circle_packing_free(&cp);
  jl_circle_packing_free(&pk);

  /* The distance by hand: radii 1, 2, 2, 3 in a container of radius 6
   * (circles 1 and 2 touch it), the circles of radius 1 and 3 trading
   * places: area weights 1/18 and 9/18, each distance changing by 1/6. */
  jl_circle_packing a, b;
  assert_int_equal(jl_circle_packing_init(&a, 4, &err), JL_OK);
  assert_int_equal(jl_circle_packing_init(&b, 4, &err), JL_OK);
  const double ax[4] = {0, 0, -4, 3}, ay[4] = {-2, 4, 0, 0}, r4[4] = {1, 2, 2, 3};
  for (int i = 0; i < 4; ++i) {
    a.x[i] = b.x[i] = ax[i];
    a.y[i] = b.y[i] = ay[i];
    a.r[i] = b.r[i] = r4[i];
  }
  b.x[0] = 3; b.y[0] = 0;
  b.x[3] = 0; b.y[3] = -2;
  assert_true(jl_circle_packing_update_R(&a) == 6.0 && jl_circle_packing_update_R(&b) == 6.0);
  assert_true(fabs(shape_distance(&a, &b) - 10.0 / 108.0) < 1e-16);
  /* ... and symmetric */
  assert_true(shape_distance(&a, &b) == shape_distance(&b, &a));
  b.n = 3;
  double d;
  assert_int_equal(jl_circle_shape_distance(&a, &b, &d, &err), JL_ERR_INPUT);
  b.n = 4;
  jl_circle_packing_free(&a);
  jl_circle_packing_free(&b);
}

/* A packing of radii 1, 2, 2, 3 whose circles lie on the x axis at the
 * given distances (relative to R) from the centre, with a stated R: the
 * elite reads only R and the profile. */
static void profile_packing(jl_circle_packing *pk, const double rho[4], double R) {
  static const double r4[4] = {1, 2, 2, 3};
  for (int i = 0; i < 4; ++i) {
    pk->r[i] = r4[i];
    pk->x[i] = rho[i] * R;
    pk->y[i] = 0.0;
  }
  pk->R = R;
}

static jl_elite_outcome offer(jl_circle_elite *e, const double rho[4], double R) {
  jl_circle_packing pk;
  jl_error err;
  jl_elite_outcome out = JL_ELITE_ADDED;
  assert_int_equal(jl_circle_packing_init(&pk, 4, &err), JL_OK);
  profile_packing(&pk, rho, R);
  assert_int_equal(jl_circle_elite_offer(e, &pk, &out, &err), JL_OK);
  jl_circle_packing_free(&pk);
  return out;
}

static void assert_elite(const jl_circle_elite *e, int count, const double *R, const double *x3) {
  assert_int_equal(e->count, count);
  for (int k = 0; k < count; ++k) {
    assert_true(e->pk[k].R == R[k]);
    /* the largest circle tells the shapes apart below */
    assert_true(e->pk[k].x[3] == x3[k]);
  }
}

static void test_elite_crowding(void **state) {
  (void)state;
  jl_circle_elite e;
  jl_error err;
  /* Distances (weights 1/18, 4/18, 4/18, 9/18 by area): a and a2 differ
   * by 9/18 * 0.02 = 0.01 (one family at crowding 0.05); b is 0.11 from a;
   * c and f 0.03 apart, f and g 0.03, c and g 0.06. */
  const double a[4] = {0.1, 0.5, 0.5, 0.50}, a2[4] = {0.1, 0.5, 0.5, 0.52};
  const double b[4] = {0.5, 0.1, 0.5, 0.50};
  const double c[4] = {0.1, 0.5, 0.5, 0.70}, f[4] = {0.1, 0.5, 0.5, 0.76};
  const double g[4] = {0.1, 0.5, 0.5, 0.82}, far[4] = {0.9, 0.9, 0.9, 0.2};
  assert_int_equal(jl_circle_elite_init(&e, 4, 3, 0.05, &err), JL_OK);

  assert_int_equal(offer(&e, a, 10.0), JL_ELITE_ADDED);
  /* its family has a better member */
  assert_int_equal(offer(&e, a2, 10.5), JL_ELITE_REJECTED);
  assert_elite(&e, 1, (double[]){10.0}, (double[]){5.0});
  assert_int_equal(e.crowded, 1);
  /* better than its family: takes its place */
  assert_int_equal(offer(&e, a2, 9.9), JL_ELITE_REPLACED);
  assert_elite(&e, 1, (double[]){9.9}, (double[]){0.52 * 9.9});
  /* new families while there is room, in order of R */
  assert_int_equal(offer(&e, b, 10.2), JL_ELITE_ADDED);
  assert_int_equal(offer(&e, c, 10.1), JL_ELITE_ADDED);
  assert_elite(&e, 3, (double[]){9.9, 10.1, 10.2}, (double[]){0.52 * 9.9, 0.7 * 10.1, 0.5 * 10.2});
  /* full: a new family worse than all is dropped, a better one takes the worst's place */
  assert_int_equal(offer(&e, far, 10.3), JL_ELITE_REJECTED);
  assert_int_equal(offer(&e, g, 10.0), JL_ELITE_DISPLACED);
  assert_elite(&e, 3, (double[]){9.9, 10.0, 10.1}, (double[]){0.52 * 9.9, 0.82 * 10.0, 0.7 * 10.1});
  /* near a better member (g) and a worse one (c): dropped, both stay */
  assert_int_equal(offer(&e, f, 10.05), JL_ELITE_REJECTED);
  assert_int_equal(e.count, 3);
  /* near two worse members: replaces both */
  assert_int_equal(offer(&e, f, 9.95), JL_ELITE_REPLACED);
  assert_elite(&e, 2, (double[]){9.9, 9.95}, (double[]){0.52 * 9.9, 0.76 * 9.95});
  /* the same R (within 1e-9) is one family whatever the shape */
  assert_int_equal(offer(&e, far, 9.9 * (1.0 + 5e-10)), JL_ELITE_REJECTED);
  assert_int_equal(e.count, 2);
  /* the profiles moved with their packings: f lies 9/18 * 0.24 from a2 */
  assert_true(fabs(jl_circle_elite_spread(&e, 1) - 9.0 / 18.0 * 0.24) < 1e-15);
  assert_int_equal(e.offers, 10);
  jl_circle_elite_free(&e);

  /* crowding 0: only equal R makes a family (the d = 0 case) */
  assert_int_equal(jl_circle_elite_init(&e, 4, 3, 0.0, &err), JL_OK);
  assert_int_equal(offer(&e, a, 10.0), JL_ELITE_ADDED);
  assert_int_equal(offer(&e, a2, 10.5), JL_ELITE_ADDED);
  assert_int_equal(offer(&e, a, 10.0 * (1.0 + 5e-10)), JL_ELITE_REJECTED);
  assert_int_equal(offer(&e, b, 10.0 * (1.0 - 5e-10)), JL_ELITE_REPLACED);
  assert_elite(&e, 2, (double[]){10.0 * (1.0 - 5e-10), 10.5}, (double[]){0.5 * 10.0 * (1.0 - 5e-10), 0.52 * 10.5});
  assert_int_equal(e.crowded, 0);
  /* a packing of another size is refused with a message */
  jl_circle_packing pk;
  assert_int_equal(jl_circle_packing_init(&pk, 3, &err), JL_OK);
  assert_int_equal(jl_circle_elite_offer(&e, &pk, NULL, &err), JL_ERR_INPUT);
  jl_circle_packing_free(&pk);
  jl_circle_elite_free(&e);
}

/* The member nearest a packing's shape, within a distance (--adopt-by spread
 * counts the candidates around each member with it). */
static int nearest(jl_circle_elite *e, const double rho[4], double R, double near) {
  jl_circle_packing pk;
  jl_error err;
  assert_int_equal(jl_circle_packing_init(&pk, 4, &err), JL_OK);
  profile_packing(&pk, rho, R);
  int k = jl_circle_elite_nearest(e, &pk, near);
  jl_circle_packing_free(&pk);
  return k;
}

static void test_elite_nearest(void **state) {
  (void)state;
  jl_circle_elite e;
  jl_error err;
  /* the profiles of test_elite_crowding: a2 lies 0.01 from a, f 0.03 from c
   * and 0.13 from a, far 0.37 from a */
  const double a[4] = {0.1, 0.5, 0.5, 0.50}, a2[4] = {0.1, 0.5, 0.5, 0.52};
  const double b[4] = {0.5, 0.1, 0.5, 0.50}, c[4] = {0.1, 0.5, 0.5, 0.70};
  const double f[4] = {0.1, 0.5, 0.5, 0.76}, far[4] = {0.9, 0.9, 0.9, 0.2};
  assert_int_equal(jl_circle_elite_init(&e, 4, 3, 0.05, &err), JL_OK);
  assert_int_equal(nearest(&e, a, 10.0, 1.0), -1);  /* no members yet */
  assert_int_equal(offer(&e, a, 10.0), JL_ELITE_ADDED);
  assert_int_equal(offer(&e, b, 10.2), JL_ELITE_ADDED);
  assert_int_equal(offer(&e, c, 10.1), JL_ELITE_ADDED);
  /* members by R: a, c, b */
  assert_int_equal(nearest(&e, a2, 9.0, 0.1), 0);
  assert_int_equal(nearest(&e, f, 11.0, 0.1), 1);
  assert_int_equal(nearest(&e, b, 10.2, 0.1), 2);
  /* nearer than the limit only: f is 0.03 from c, far 0.37 from a */
  assert_int_equal(nearest(&e, f, 11.0, 0.02), -1);
  assert_int_equal(nearest(&e, far, 10.0, 0.3), -1);
  /* a packing of another size is near none */
  jl_circle_packing pk;
  assert_int_equal(jl_circle_packing_init(&pk, 3, &err), JL_OK);
  assert_int_equal(jl_circle_elite_nearest(&e, &pk, 1.0), -1);
  jl_circle_packing_free(&pk);
  jl_circle_elite_free(&e);
}

/* ---- polish ---- */

static void test_polish_zimmermann5(void **state) {
  (void)state;
  jl_circle_problem p;
  jl_error err;
  assert_int_equal(jl_circle_problem_zimmermann(&p, 5, &err), JL_OK);
  lcg g = {2024};
  double best = INFINITY;
  jl_polish_opts o;
  jl_polish_opts_default(&o);
  for (int s = 0; s < 8; ++s) {
    jl_circle_packing pk;
    packing_from_problem(&pk, &p);
    ring_start(&pk, &g);
    assert_legal(&pk);
    double R_in = pk.R;
    int improved = 0;
    assert_int_equal(jl_circle_polish(&pk, &o, &improved, &err), JL_OK);
    assert_legal(&pk);
    assert_true(pk.R <= R_in);
    assert_int_equal(improved, pk.R < R_in);
    assert_true(pk.R >= ZIMMERMANN_5_R * (1 - 1e-12)); /* nobody beats a proven optimum */
    best = fmin(best, pk.R);
    jl_circle_packing_free(&pk);
  }
  if (fabs(best / ZIMMERMANN_5_R - 1.0) > 1e-9)
    fail_msg("best R %.17g, record %.17g", best, ZIMMERMANN_5_R);
  jl_circle_problem_free(&p);
}

static void test_polish_equal3(void **state) {
  (void)state;
  jl_circle_packing pk;
  jl_error err;
  assert_int_equal(jl_circle_packing_init(&pk, 3, &err), JL_OK);
  double d = 1.3; /* loose: touching would be 2 / sqrt(3) = 1.1547 */
  for (int i = 0; i < 3; ++i) {
    double a = 1.5707963267948966 + i * 2.0943951023931957 + 0.05 * (i - 1);
    pk.x[i] = d * cos(a) + 0.01 * i;
    pk.y[i] = d * sin(a) - 0.02 * i;
    pk.r[i] = 1.0;
  }
  jl_circle_packing_separate(&pk);
  int improved = 0;
  assert_int_equal(jl_circle_polish(&pk, NULL, &improved, &err), JL_OK);
  assert_int_equal(improved, 1);
  assert_legal(&pk);
  double want = 1.0 + 2.0 / sqrt(3.0);
  if (fabs(pk.R / want - 1.0) > 1e-10) fail_msg("R %.17g, want %.17g", pk.R, want);
  jl_circle_packing_free(&pk);
}

static void test_polish_illegal_input(void **state) {
  (void)state;
  /* Slightly overlapping input: polish returns a legal packing. */
  jl_circle_packing pk;
  jl_error err;
  assert_int_equal(jl_circle_packing_init(&pk, 2, &err), JL_OK);
  pk.x[0] = -1 + 1e-8; pk.x[1] = 1 - 1e-8;
  pk.r[0] = pk.r[1] = 1;
  jl_circle_packing_update_R(&pk);
  int improved = 0;
  assert_int_equal(jl_circle_polish(&pk, NULL, &improved, &err), JL_OK);
  assert_legal(&pk);
  assert_true(fabs(pk.R - 2.0) < 1e-12);
  jl_circle_packing_free(&pk);

  /* One circle ends centred. */
  assert_int_equal(jl_circle_packing_init(&pk, 1, &err), JL_OK);
  pk.x[0] = 3; pk.y[0] = -4; pk.r[0] = 2;
  jl_circle_packing_update_R(&pk);
  assert_int_equal(jl_circle_polish(&pk, NULL, &improved, &err), JL_OK);
  assert_int_equal(improved, 1);
  assert_true(fabs(pk.R - 2.0) < 1e-12);
  assert_legal(&pk);

  /* Non-finite input is an input error. */
  pk.x[0] = NAN;
  assert_int_equal(jl_circle_polish(&pk, NULL, &improved, &err), JL_ERR_INPUT);
  jl_circle_packing_free(&pk);
}

/* A greedy start for radii 1..n, polished, then disturbed the way a search
 * result is (small moves, small overlaps) and polished again in time. */
static void polish_size(int n, double limit_s) {
  jl_circle_problem p;
  jl_circle_packing pk, base = {0};
  jl_error err;
  assert_int_equal(jl_circle_problem_zimmermann(&p, n, &err), JL_OK);
  packing_from_problem(&pk, &p);
  greedy_start(&pk);
  assert_legal(&pk);
  double R_greedy = pk.R;
  /* Polish until it stops improving: a local optimum to disturb. */
  int improved = 1, calls = 0;
  double t0 = now_s();
  while (improved && calls < 20) {
    assert_int_equal(jl_circle_polish(&pk, NULL, &improved, &err), JL_OK);
    ++calls;
  }
  double t_first = now_s() - t0;
  assert_int_equal(improved, 0);
  assert_legal(&pk);
  assert_true(pk.R <= R_greedy);
  double area = 0.0; /* no packing beats the area bound */
  for (int i = 0; i < n; ++i) area += pk.r[i] * pk.r[i];
  assert_true(pk.R >= sqrt(area));
  assert_int_equal(jl_circle_packing_copy(&base, &pk, &err), JL_OK);

  lcg g = {(uint64_t)n};
  double t_max = 0.0;
  for (int trial = 0; trial < 3; ++trial) {
    for (int i = 0; i < n; ++i) {
      double a = 6.283185307179586 * lcg_u01(&g);
      pk.x[i] = base.x[i] + 1e-3 * base.r[i] * cos(a);
      pk.y[i] = base.y[i] + 1e-3 * base.r[i] * sin(a);
    }
    jl_circle_packing_update_R(&pk);
    t0 = now_s();
    assert_int_equal(jl_circle_polish(&pk, NULL, &improved, &err), JL_OK);
    t_max = fmax(t_max, now_s() - t0);
    assert_legal(&pk);
    assert_true(pk.R <= base.R * (1 + 1e-9));
  }
  print_message("polish n=%d: greedy R %.6f -> %.10f (record %.8f) in %.3f s (%d calls); "
                "disturbed re-polish max %.4f s\n",
                n, R_greedy, base.R, p.best_known_R, t_first, calls, t_max);
  /* Timings are printed for information only: speed is the benchmarks' job. */
  (void)limit_s;
  jl_circle_packing_free(&base);
  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&p);
}

static void test_polish_sizes(void **state) {
  (void)state;
  polish_size(20, 1.0);
  polish_size(50, 2.0);
}

/* ---- files ---- */

static void make_result(jl_circle_problem *p, jl_circle_packing *pk) {
  jl_error err;
  assert_int_equal(jl_circle_problem_zimmermann(p, 12, &err), JL_OK);
  packing_from_problem(pk, p);
  lcg g = {99};
  ring_start(pk, &g);
  assert_int_equal(jl_circle_polish(pk, NULL, NULL, &err), JL_OK);
  /* Values with full 17-digit mantissas. */
  for (int i = 0; i < pk->n; ++i) pk->x[i] += 1e-3 * lcg_u01(&g);
  jl_circle_packing_separate(pk);
}

static void test_json_round_trip(void **state) {
  char path[256];
  jl_circle_problem p, q;
  jl_circle_packing pk, back;
  jl_error err;
  make_result(&p, &pk);
  jl_circle_run_info info = {.seed = 12345678901234ULL, .device = "cpu",
                             .device_name = "16 CPU threads", .mode = "population", .walk = 1,
                             .aim = 0.5, .time_s = 1.5, .time_to_best_s = 0.25, .trials = 1000,
                             .relax_steps = 200000, .restarts = 3, .stopped_by = JL_STOP_TARGET};
  tmp_file(state, "out.json", path, sizeof path);
  assert_int_equal(jl_circle_result_write_json(path, &p, &pk, &info, NULL, &err), JL_OK);

  char *text = read_text(path);
  const char *order[] = {"\"format\": \"jostle-result\"", "\"version\": 1", "\"kind\": \"circles\"",
                         "\"problem\"", "\"name\": \"zimmermann-12\"", "\"n\": 12",
                         "\"best_known_R\": 28.37138943", "\"source\"", "\"R\"", "\"gap_to_record\"",
                         "\"legal\": true", "\"check\"", "\"max_overlap\"", "\"max_excess\"",
                         "\"rel_tol\": 1e-10", "\"run\"", "\"seed\": 12345678901234",
                         "\"device\": \"cpu\"", "\"device_name\": \"16 CPU threads\"",
                         "\"mode\": \"population\"", "\"walk\": 1", "\"aim\": 0.5", "\"time_s\": 1.5", "\"time_to_best_s\": 0.25",
                         "\"trials\": 1000", "\"relax_steps\": 200000", "\"restarts\": 3",
                         "\"stopped_by\": \"target\"", "\"circles\""};
  const char *at = text;
  for (size_t k = 0; k < sizeof order / sizeof *order; ++k) {
    const char *f = strstr(at, order[k]);
    if (!f) fail_msg("missing or out of order: %s\n%s", order[k], text);
    at = f;
  }
  free(text);

  assert_int_equal(jl_circle_result_read_json(path, &back, &q, &err), JL_OK);
  assert_int_equal(back.n, pk.n);
  for (int i = 0; i < pk.n; ++i) {
    assert_memory_equal(&back.x[i], &pk.x[i], sizeof(double));
    assert_memory_equal(&back.y[i], &pk.y[i], sizeof(double));
    assert_memory_equal(&back.r[i], &pk.r[i], sizeof(double));
    assert_true(q.radii[i] == pk.r[i]);
  }
  assert_true(back.R == pk.R);
  assert_string_equal(q.name, p.name);
  assert_string_equal(q.source, p.source);
  assert_true(q.best_known_R == p.best_known_R);
  jl_circle_packing_free(&back);
  jl_circle_problem_free(&q);

  /* No run info, no record: "run" left out, nulls written, still readable. */
  p.best_known_R = 0;
  assert_int_equal(jl_circle_result_write_json(path, &p, &pk, NULL, NULL, &err), JL_OK);
  text = read_text(path);
  assert_null(strstr(text, "\"run\""));
  assert_non_null(strstr(text, "\"gap_to_record\": null"));
  free(text);
  assert_int_equal(jl_circle_result_read_json(path, &back, NULL, &err), JL_OK);
  jl_circle_packing_free(&back);

  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&p);
}

static void expect_read_error(void **state, const char *name, const char *text, const char *key) {
  char path[256];
  jl_circle_packing pk;
  jl_circle_problem p;
  jl_error err = {0};
  tmp_file(state, name, path, sizeof path);
  write_text(path, text);
  int rc = jl_circle_result_read_json(path, &pk, &p, &err);
  if (rc != JL_ERR_INPUT) fail_msg("%s: expected JL_ERR_INPUT, got %d (%s)", name, rc, err.msg);
  if (!strstr(err.msg, path) || !strstr(err.msg, key))
    fail_msg("%s: message lacks the path or \"%s\": %s", name, key, err.msg);
  assert_null(pk.x);
  assert_null(p.radii);
}

static void test_json_read_errors(void **state) {
  const char *head = "{\"format\": \"jostle-result\", \"version\": 1, \"kind\": \"circles\", ";
  char buf[512];
  expect_read_error(state, "fmt.json", "{\"format\": \"other\", \"kind\": \"circles\", \"circles\": []}",
                    "format");
  snprintf(buf, sizeof buf, "%s\"circles\": [{\"x\": 0, \"y\": 0, \"r\": 1}, {\"x\": 3, \"y\": 0, \"r\": -2}]}",
           head);
  expect_read_error(state, "r.json", buf, "circles[1].r");
  snprintf(buf, sizeof buf, "%s\"circles\": [{\"x\": 1e999, \"y\": 0, \"r\": 1}]}", head);
  expect_read_error(state, "x.json", buf, "circles[0].x");
  snprintf(buf, sizeof buf, "%s\"circles\": [{\"x\": 0, \"r\": 1}]}", head);
  expect_read_error(state, "y.json", buf, "circles[0].y");
  snprintf(buf, sizeof buf, "%s\"circles\": []}", head);
  expect_read_error(state, "empty.json", buf, "circles");
  snprintf(buf, sizeof buf, "%s\"problem\": {\"n\": 3}, \"circles\": [{\"x\": 0, \"y\": 0, \"r\": 1}]}", head);
  expect_read_error(state, "n.json", buf, "problem.n");
  expect_read_error(state, "kind.json", "{\"format\": \"jostle-result\", \"kind\": \"boxes\"}", "kind");
  expect_read_error(state, "bad.json", "{\"format\": \"jostle-result\",\n\"kind\": }", "line 2");
}

static void test_packomania_round_trip(void **state) {
  char path[256];
  jl_circle_problem p;
  jl_circle_packing pk, back;
  jl_error err;
  make_result(&p, &pk);
  tmp_file(state, "pm.txt", path, sizeof path);
  assert_int_equal(jl_circle_write_packomania(path, &pk, &err), JL_OK);
  char *text = read_text(path);
  assert_int_equal(count_substr(text, "\n"), pk.n);
  assert_int_equal(strncmp(text, "1 ", 2), 0);
  free(text);
  assert_int_equal(jl_circle_read_packomania(path, &p, &back, &err), JL_OK);
  assert_int_equal(back.n, pk.n);
  for (int i = 0; i < pk.n; ++i) {
    assert_true(fabs(back.x[i] - pk.x[i]) <= 1e-14 * pk.R);
    assert_true(fabs(back.y[i] - pk.y[i]) <= 1e-14 * pk.R);
    assert_true(back.r[i] == pk.r[i]);
  }
  assert_true(fabs(back.R / pk.R - 1.0) <= 1e-14);
  jl_circle_packing_free(&back);

  /* Comments, blank lines and CRLF are fine; wrong counts and points
   * outside the unit circle are not. */
  write_text(path, "# two circles\n\n1 -0.5 0\r\n2 0.5 0\r\n");
  jl_circle_problem two;
  assert_int_equal(jl_circle_problem_equal(&two, 2, &err), JL_OK);
  assert_int_equal(jl_circle_read_packomania(path, &two, &back, &err), JL_OK);
  assert_true(fabs(back.R - 2.0) < 1e-15 && fabs(back.x[1] - 1.0) < 1e-15);
  jl_circle_packing_free(&back);
  write_text(path, "1 -0.5 0\n");
  assert_int_equal(jl_circle_read_packomania(path, &two, &back, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, path));
  write_text(path, "1 -0.5 0\n3 0.5 0\n");
  assert_int_equal(jl_circle_read_packomania(path, &two, &back, &err), JL_ERR_INPUT);
  write_text(path, "1 -0.5 0\n2 1.5 0\n");
  assert_int_equal(jl_circle_read_packomania(path, &two, &back, &err), JL_ERR_INPUT);
  write_text(path, "1 -0.5 0\n2 zero 0\n");
  assert_int_equal(jl_circle_read_packomania(path, &two, &back, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, ":2:"));
  jl_circle_problem_free(&two);

  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&p);
}

static void test_svg(void **state) {
  char path[256];
  jl_circle_problem p;
  jl_circle_packing pk;
  jl_error err;
  make_result(&p, &pk);
  tmp_file(state, "pic.svg", path, sizeof path);
  assert_int_equal(jl_circle_write_svg(path, &p, &pk, &err), JL_OK);
  char *text = read_text(path);
  assert_non_null(strstr(text, "<svg"));
  assert_non_null(strstr(text, "</svg>"));
  assert_int_equal(count_substr(text, "<circle"), pk.n + 1);
  assert_non_null(strstr(text, "zimmermann-12"));
  assert_non_null(strstr(text, ">12</text>")); /* the largest circle is labelled */
  free(text);
  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_zimmermann),
    cmocka_unit_test(test_equal),
    cmocka_unit_test_setup_teardown(test_load_good, tmpdir_setup, tmpdir_teardown),
    cmocka_unit_test_setup_teardown(test_load_bad, tmpdir_setup, tmpdir_teardown),
    cmocka_unit_test(test_verify),
    cmocka_unit_test(test_separate),
    cmocka_unit_test(test_shape_distance),
    cmocka_unit_test(test_elite_crowding),
    cmocka_unit_test(test_elite_nearest),
    cmocka_unit_test(test_polish_zimmermann5),
    cmocka_unit_test(test_polish_equal3),
    cmocka_unit_test(test_polish_illegal_input),
    cmocka_unit_test(test_polish_sizes),
    cmocka_unit_test_setup_teardown(test_json_round_trip, tmpdir_setup, tmpdir_teardown),
    cmocka_unit_test_setup_teardown(test_json_read_errors, tmpdir_setup, tmpdir_teardown),
    cmocka_unit_test_setup_teardown(test_packomania_round_trip, tmpdir_setup, tmpdir_teardown),
    cmocka_unit_test_setup_teardown(test_svg, tmpdir_setup, tmpdir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
