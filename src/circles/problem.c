/* Circle problems: built-in families (Zimmermann contest, equal circles) and
 * JSON problem files, validated strictly so a typo fails loudly. */
#include "circles.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_util.h"
#include "json_file.h"

#define JL_RADII_MAX 100000

/* Best known R for radii 1..n, n = 5..50, copied from
 * ../shared/data/circle-records.tsv (Ye, Huang, Lu 2013; n = 5, 6 closed
 * forms, n = 8, 9, 10 high-precision ring constructions). */
static const double jl_zimmermann_best[46] = {
  9.0013977460502193, 11.057040399702021, 13.46211067,        16.221746676557724,
  19.233193908086124, 22.000193012737371, 24.96063428,        28.37138943,
  31.54586701,        35.09564714,        38.8379955,         42.45811643,
  46.29134211,        50.11976262,        54.24029359,        58.40056747,
  62.55887709,        66.76028624,        71.19946160,        75.74914258,
  80.28586443,        84.97819106,        89.75096268,        94.52587710,
  99.48311156,        104.54036376,       109.62924066,       114.79981466,
  120.06565963,       125.36693920,       130.84907874,       136.30791082,
  141.78373342,       147.45211646,       153.30060755,       159.05323691,
  164.88704217,       170.78052068,       176.79824042,       182.93102006,
  189.17108014,       195.35597250,       201.66853423,       208.04502791,
  214.28222252,       220.56540026,
};

static const char jl_zimmermann_source[] = "Ye, Huang, Lu, arXiv:1306.0694 (2013)";

int jl_circle_problem_init(jl_circle_problem *p, int n, jl_error *err) {
  memset(p, 0, sizeof *p);
  if (n < 1 || n > JL_RADII_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "circle count must be 1..%d, got %d", JL_RADII_MAX, n);
  p->radii = calloc((size_t)n, sizeof *p->radii);
  if (!p->radii) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d radii", n);
  p->n = n;
  return JL_OK;
}

void jl_circle_problem_free(jl_circle_problem *p) {
  if (!p) return;
  free(p->radii);
  p->radii = NULL;
  p->n = 0;
}

int jl_circle_radii_check(const double *r, int n, const char *path, const char *key_pre,
                          const char *key_post, jl_error *err) {
  int lo = 0, hi = 0;
  for (int i = 0; i < n; ++i) {
    if (!(r[i] >= JL_RADIUS_MIN && r[i] <= JL_RADIUS_MAX))  /* NaN fails too */
      return jl_error_set(err, JL_ERR_INPUT, "%s: %s%d%s: %g is outside [%g, %g]", path, key_pre, i,
                          key_post, r[i], JL_RADIUS_MIN, JL_RADIUS_MAX);
    if (r[i] < r[lo]) lo = i;
    if (r[i] > r[hi]) hi = i;
  }
  if (n > 0 && r[hi] > JL_RADIUS_RATIO_MAX * r[lo])
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: %s%d%s = %g is more than %g times %s%d%s = %g (the largest radius may be at "
                        "most %g times the smallest)", path, key_pre, hi, key_post, r[hi], JL_RADIUS_RATIO_MAX,
                        key_pre, lo, key_post, r[lo], JL_RADIUS_RATIO_MAX);
  return JL_OK;
}

int jl_circle_problem_zimmermann(jl_circle_problem *p, int n, jl_error *err) {
  int rc = jl_circle_problem_init(p, n, err);
  if (rc) return rc;
  for (int i = 0; i < n; ++i) p->radii[i] = i + 1;
  snprintf(p->name, sizeof p->name, "zimmermann-%02d", n);
  if (n >= 5 && n <= 50) {
    p->best_known_R = jl_zimmermann_best[n - 5];
    snprintf(p->source, sizeof p->source, "%s", jl_zimmermann_source);
  }
  return JL_OK;
}

int jl_circle_problem_equal(jl_circle_problem *p, int n, jl_error *err) {
  int rc = jl_circle_problem_init(p, n, err);
  if (rc) return rc;
  for (int i = 0; i < n; ++i) p->radii[i] = 1.0;
  snprintf(p->name, sizeof p->name, "equal-%d", n);
  return JL_OK;
}

/* ---- JSON problem files ---- */

static int jl_copy_string(char *dst, size_t cap, const cJSON *item, const char *path,
                          const char *key, jl_error *err) {
  if (!cJSON_IsString(item))
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: must be a string", path, key);
  size_t len = strlen(item->valuestring);
  if (len >= cap)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: longer than %zu characters", path, key, cap - 1);
  int rc = jl_utf8_check(item->valuestring, path, key, err);
  if (rc) return rc;
  memcpy(dst, item->valuestring, len + 1);
  return JL_OK;
}

/* A count or radius bound: an integral JSON number in [lo, hi]. */
static int jl_get_int(const cJSON *item, int lo, int hi, int *out, const char *path,
                      const char *key, jl_error *err) {
  double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
  if (!isfinite(v) || v != floor(v) || v < lo || v > hi)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: must be an integer in %d..%d", path, key, lo, hi);
  *out = (int)v;
  return JL_OK;
}

static int jl_radii_from_range(jl_circle_problem *p, const cJSON *obj, const char *path,
                               jl_error *err) {
  const cJSON *range = NULL;
  for (const cJSON *it = obj->child; it; it = it->next) {
    if (it->string && strcmp(it->string, "range") == 0 && !range) range = it;
    else
      return jl_error_set(err, JL_ERR_INPUT, "%s: radii.%s: unknown key (expected \"range\")", path,
                          it->string ? it->string : "?");
  }
  if (!cJSON_IsArray(range) || cJSON_GetArraySize(range) != 2)
    return jl_error_set(err, JL_ERR_INPUT, "%s: radii.range: must be an array [first, last]", path);
  int a = 0, b = 0, rc;
  if ((rc = jl_get_int(range->child, 1, JL_RADII_MAX, &a, path, "radii.range[0]", err))) return rc;
  if ((rc = jl_get_int(range->child->next, 1, JL_RADII_MAX, &b, path, "radii.range[1]", err)))
    return rc;
  if (b < a)
    return jl_error_set(err, JL_ERR_INPUT, "%s: radii.range: last (%d) is below first (%d)", path, b, a);
  if (b - a + 1 > JL_RADII_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "%s: radii.range: more than %d circles", path, JL_RADII_MAX);
  if ((rc = jl_circle_problem_init(p, b - a + 1, err))) return rc;
  for (int i = 0; i < p->n; ++i) p->radii[i] = a + i;
  return JL_OK;
}

static int jl_radii_from_array(jl_circle_problem *p, const cJSON *arr, const char *path,
                               jl_error *err) {
  int n = cJSON_GetArraySize(arr);
  if (n == 0) return jl_error_set(err, JL_ERR_INPUT, "%s: radii: must not be empty", path);
  if (n > JL_RADII_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "%s: radii: %d entries, at most %d allowed", path, n,
                        JL_RADII_MAX);
  int i = 0;
  for (const cJSON *it = arr->child; it; it = it->next, ++i) {
    if (!cJSON_IsNumber(it))
      return jl_error_set(err, JL_ERR_INPUT, "%s: radii[%d]: must be a finite number > 0, got a %s",
                          path, i, cJSON_IsString(it) ? "string" : "non-number");
    if (!isfinite(it->valuedouble) || !(it->valuedouble > 0))
      return jl_error_set(err, JL_ERR_INPUT, "%s: radii[%d]: must be a finite number > 0, got %g",
                          path, i, it->valuedouble);
  }
  int rc = jl_circle_problem_init(p, n, err);
  if (rc) return rc;
  i = 0;
  for (const cJSON *it = arr->child; it; it = it->next) p->radii[i++] = it->valuedouble;
  return jl_circle_radii_check(p->radii, n, path, "radii[", "]", err);
}

/* The keys a problem file may hold, found once each. */
typedef struct jl_problem_keys {
  const cJSON *kind, *name, *radii, *equal, *best, *source, *description;
} jl_problem_keys;

static int jl_problem_keys_find(const cJSON *root, jl_problem_keys *k, const char *path,
                                jl_error *err) {
  memset(k, 0, sizeof *k);
  for (const cJSON *it = root->child; it; it = it->next) {
    const char *s = it->string ? it->string : "";
    const cJSON **slot = NULL;
    if (strcmp(s, "kind") == 0) slot = &k->kind;
    else if (strcmp(s, "name") == 0) slot = &k->name;
    else if (strcmp(s, "radii") == 0) slot = &k->radii;
    else if (strcmp(s, "equal") == 0) slot = &k->equal;
    else if (strcmp(s, "best_known_R") == 0) slot = &k->best;
    else if (strcmp(s, "source") == 0) slot = &k->source;
    else if (strcmp(s, "description") == 0) slot = &k->description;
    if (!slot)
      return jl_error_set(err, JL_ERR_INPUT,
                          "%s: %s: unknown key (expected kind, name, radii, equal, best_known_R, "
                          "source, description)", path, s);
    if (*slot) return jl_error_set(err, JL_ERR_INPUT, "%s: %s: duplicate key", path, s);
    *slot = it;
  }
  return JL_OK;
}

static int jl_problem_check_kind(const cJSON *kind, const char *path, jl_error *err) {
  if (!kind) return jl_error_set(err, JL_ERR_INPUT, "%s: kind: missing (expected \"circles\")", path);
  if (!cJSON_IsString(kind))
    return jl_error_set(err, JL_ERR_INPUT, "%s: kind: must be the string \"circles\"", path);
  if (strcmp(kind->valuestring, "circles") != 0)
    return jl_error_set(err, JL_ERR_INPUT, "%s: kind: expected \"circles\", got \"%.64s\"", path,
                        kind->valuestring);
  return JL_OK;
}

static int jl_problem_radii(jl_circle_problem *p, const jl_problem_keys *k, const char *path,
                            jl_error *err) {
  if (k->radii && k->equal)
    return jl_error_set(err, JL_ERR_INPUT, "%s: radii, equal: give exactly one of them", path);
  if (k->equal) {
    int n = 0, rc = jl_get_int(k->equal, 1, JL_RADII_MAX, &n, path, "equal", err);
    if (rc) return rc;
    if ((rc = jl_circle_problem_init(p, n, err))) return rc;
    for (int i = 0; i < n; ++i) p->radii[i] = 1.0;
    return JL_OK;
  }
  if (!k->radii)
    return jl_error_set(err, JL_ERR_INPUT, "%s: radii: missing (give radii or equal)", path);
  if (cJSON_IsArray(k->radii)) return jl_radii_from_array(p, k->radii, path, err);
  if (cJSON_IsObject(k->radii)) return jl_radii_from_range(p, k->radii, path, err);
  return jl_error_set(err, JL_ERR_INPUT,
                      "%s: radii: must be an array of numbers or {\"range\": [first, last]}", path);
}

/* Name, record and source; the name defaults to the file name without
 * folder and extension. */
static int jl_problem_labels(jl_circle_problem *p, const jl_problem_keys *k, const char *path,
                             jl_error *err) {
  int rc;
  if (k->name) {
    if ((rc = jl_copy_string(p->name, sizeof p->name, k->name, path, "name", err))) return rc;
  } else {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strcspn(base, ".");
    if (len >= sizeof p->name) len = sizeof p->name - 1;
    memcpy(p->name, base, len);
    p->name[len] = '\0';
  }
  if (k->best && !cJSON_IsNull(k->best)) {
    double v = cJSON_IsNumber(k->best) ? k->best->valuedouble : NAN;
    if (!isfinite(v) || !(v > 0))
      return jl_error_set(err, JL_ERR_INPUT, "%s: best_known_R: must be a finite number > 0", path);
    p->best_known_R = v;
  }
  if (k->source && (rc = jl_copy_string(p->source, sizeof p->source, k->source, path, "source", err)))
    return rc;
  if (k->description && !cJSON_IsString(k->description))
    return jl_error_set(err, JL_ERR_INPUT, "%s: description: must be a string", path);
  return JL_OK;
}

static int jl_problem_from_json(jl_circle_problem *p, const cJSON *root, const char *path,
                                jl_error *err) {
  if (!cJSON_IsObject(root))
    return jl_error_set(err, JL_ERR_INPUT, "%s: the top level must be a JSON object", path);
  jl_problem_keys k;
  int rc = jl_problem_keys_find(root, &k, path, err);
  if (!rc) rc = jl_problem_check_kind(k.kind, path, err);
  if (!rc) rc = jl_problem_radii(p, &k, path, err);
  if (!rc) rc = jl_problem_labels(p, &k, path, err);
  return rc;
}

int jl_circle_problem_load(jl_circle_problem *p, const char *path, jl_error *err) {
  memset(p, 0, sizeof *p);
  cJSON *root = NULL;
  int rc = jl_json_load_file(path, &root, err);
  if (rc) return rc;
  rc = jl_problem_from_json(p, root, path, err);
  cJSON_Delete(root);
  if (rc) jl_circle_problem_free(p);
  return rc;
}

int jl_circle_problem_builtin(jl_circle_problem *p, const char *name, jl_error *err) {
  memset(p, 0, sizeof *p);
  static const char *const prefix[2] = {"zimmermann-", "equal-"};
  for (int k = 0; k < 2; ++k) {
    size_t len = strlen(prefix[k]);
    if (strncmp(name, prefix[k], len) != 0) continue;
    const char *d = name + len;
    if (strspn(d, "0123456789") != strlen(d) || !d[0] || strlen(d) > 6) return JL_OK;
    int n = atoi(d);
    if (n < 1 || n > JL_RADII_MAX) return JL_OK;
    int rc = k == 0 ? jl_circle_problem_zimmermann(p, n, err) : jl_circle_problem_equal(p, n, err);
    if (rc) return rc;
    if (strcmp(p->name, name) != 0) jl_circle_problem_free(p);  /* "zimmermann-5" is not --n 5's name */
    return JL_OK;
  }
  return JL_OK;
}
