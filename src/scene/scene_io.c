/* Scene files (JSON, docs/formats.md), validated strictly: unknown keys,
 * wrong types, non-finite numbers and out-of-range values fail with the
 * file, the key (as a path like bodies[3].radius) and the reason. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_util.h"
#include "json_file.h"
#include "scene.h"

#define JL_KEY_MAX 160

typedef struct jl_ctx {
  const char *path;
  jl_error *err;
} jl_ctx;

static int jl_bad(const jl_ctx *c, const char *key, const char *reason) {
  return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: %s", c->path, key, reason);
}

/* Key paths are cut at JL_KEY_MAX: only the message gets shorter. */
static void jl_key(char *out, const char *where, const char *key) {
  if (snprintf(out, JL_KEY_MAX, "%s%s%s", where, where[0] ? "." : "", key) >= JL_KEY_MAX)
    out[JL_KEY_MAX - 1] = '\0';
}

/* Every child key of obj must be in `allowed` (NULL-terminated), once. */
static int jl_keys_check(const jl_ctx *c, const cJSON *obj, const char *where,
                         const char *const *allowed) {
  for (const cJSON *it = obj->child; it; it = it->next) {
    const char *s = it->string ? it->string : "";
    int ok = 0;
    for (int k = 0; allowed[k]; ++k) ok |= strcmp(s, allowed[k]) == 0;
    char key[JL_KEY_MAX];
    jl_key(key, where, s);
    if (!ok) {
      char list[512] = "";
      for (int k = 0; allowed[k]; ++k) {
        strncat(list, allowed[k], sizeof list - strlen(list) - 1);
        if (allowed[k + 1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
      }
      return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: unknown key (expected one of: %s)",
                          c->path, key, list);
    }
    for (const cJSON *o = obj->child; o != it; o = o->next)
      if (o->string && strcmp(o->string, s) == 0) return jl_bad(c, key, "duplicate key");
  }
  return JL_OK;
}

static const cJSON *jl_get(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}


/* A finite number in [lo, hi]; absent keeps *out. */
static int jl_num(const jl_ctx *c, const cJSON *obj, const char *where, const char *name,
                  double lo, double hi, double *out) {
  const cJSON *it = jl_get(obj, name);
  if (!it) return JL_OK;
  char key[JL_KEY_MAX];
  jl_key(key, where, name);
  if (!cJSON_IsNumber(it)) return jl_bad(c, key, "must be a number");
  double v = it->valuedouble;
  if (!isfinite(v)) return jl_bad(c, key, "must be finite");
  if (v < lo || v > hi)
    return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: must be in [%g, %g], got %g", c->path, key,
                        lo, hi, v);
  *out = v;
  return JL_OK;
}

static int jl_int(const jl_ctx *c, const cJSON *obj, const char *where, const char *name,
                  long lo, long hi, long *out) {
  const cJSON *it = jl_get(obj, name);
  if (!it) return JL_OK;
  char key[JL_KEY_MAX];
  jl_key(key, where, name);
  double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
  if (!isfinite(v) || v != floor(v) || v < (double)lo || v > (double)hi)
    return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: must be an integer in %ld..%ld", c->path,
                        key, lo, hi);
  *out = (long)v;
  return JL_OK;
}

static int jl_bool(const jl_ctx *c, const cJSON *obj, const char *where, const char *name,
                   int *out) {
  const cJSON *it = jl_get(obj, name);
  if (!it) return JL_OK;
  char key[JL_KEY_MAX];
  jl_key(key, where, name);
  if (!cJSON_IsBool(it)) return jl_bad(c, key, "must be true or false");
  *out = cJSON_IsTrue(it);
  return JL_OK;
}

/* An array of n finite numbers, each in [lo, hi]. */
static int jl_vec(const jl_ctx *c, const cJSON *obj, const char *where, const char *name, int n,
                  double lo, double hi, double *out) {
  const cJSON *it = jl_get(obj, name);
  if (!it) return JL_OK;
  char key[JL_KEY_MAX];
  jl_key(key, where, name);
  if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != n)
    return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: must be an array of %d numbers", c->path,
                        key, n);
  int i = 0;
  for (const cJSON *e = it->child; e; e = e->next, ++i) {
    char k2[JL_KEY_MAX + 16];
    if (snprintf(k2, sizeof k2, "%s[%d]", key, i) >= (int)sizeof k2) k2[sizeof k2 - 1] = '\0';
    if (!cJSON_IsNumber(e)) return jl_bad(c, k2, "must be a number");
    if (!isfinite(e->valuedouble)) return jl_bad(c, k2, "must be finite");
    if (e->valuedouble < lo || e->valuedouble > hi)
      return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: must be in [%g, %g], got %g", c->path,
                          k2, lo, hi, e->valuedouble);
    out[i] = e->valuedouble;
  }
  return JL_OK;
}

static int jl_str(const jl_ctx *c, const cJSON *obj, const char *where, const char *name,
                  const char **out) {
  const cJSON *it = jl_get(obj, name);
  if (!it) return JL_OK;
  char key[JL_KEY_MAX];
  jl_key(key, where, name);
  if (!cJSON_IsString(it)) return jl_bad(c, key, "must be a string");
  int rc = jl_utf8_check(it->valuestring, c->path, key, c->err);
  if (rc) return rc;
  *out = it->valuestring;
  return JL_OK;
}

static int jl_need(const jl_ctx *c, const cJSON *obj, const char *where, const char *name) {
  if (jl_get(obj, name)) return JL_OK;
  char key[JL_KEY_MAX];
  jl_key(key, where, name);
  return jl_bad(c, key, "missing");
}

#define TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

static int jl_material_ref(const jl_ctx *c, const jl_scene *s, const cJSON *obj, const char *where,
                           int *out) {
  const char *name = NULL;
  TRY(jl_str(c, obj, where, "material", &name));
  if (!name) return JL_OK;
  int m = jl_scene_find_material(s, name);
  if (m < 0) {
    char key[JL_KEY_MAX];
    jl_key(key, where, "material");
    return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: unknown material \"%.64s\"", c->path, key,
                        name);
  }
  *out = m;
  return JL_OK;
}

/* Keys a body and a generator share: material, static, mass, density, velocities, orientation. */
static int jl_common(const jl_ctx *c, const jl_scene *s, const cJSON *obj, const char *where,
                     jl_body_spec *b) {
  TRY(jl_material_ref(c, s, obj, where, &b->material));
  TRY(jl_bool(c, obj, where, "static", &b->is_static));
  TRY(jl_num(c, obj, where, "mass", JL_SCENE_MASS_MIN, JL_SCENE_BIG, &b->mass));
  TRY(jl_num(c, obj, where, "density", JL_SCENE_DENSITY_MIN, JL_SCENE_BIG, &b->density));
  TRY(jl_vec(c, obj, where, "velocity", 3, -JL_SCENE_BIG, JL_SCENE_BIG, b->vel));
  TRY(jl_vec(c, obj, where, "angular_velocity", 3, -JL_SCENE_BIG, JL_SCENE_BIG, b->omega));
  TRY(jl_vec(c, obj, where, "orientation", 4, -JL_SCENE_BIG, JL_SCENE_BIG, b->quat));
  const cJSON *q = jl_get(obj, "orientation");
  if (q && b->quat[0] * b->quat[0] + b->quat[1] * b->quat[1] + b->quat[2] * b->quat[2] +
                   b->quat[3] * b->quat[3] < JL_SCENE_ZERO_NORM2) {
    char key[JL_KEY_MAX];
    jl_key(key, where, "orientation");
    return jl_bad(c, key, "must not be the zero quaternion");
  }
  return JL_OK;
}

#define COMMON_KEYS "material", "static", "mass", "density", "velocity", "angular_velocity", "orientation"

static int jl_add(const jl_ctx *c, jl_scene *s, const jl_body_spec *b, const char *where) {
  jl_error e2 = {0};
  int k = jl_scene_add_body(s, b, &e2);
  if (k < 0) return jl_error_set(c->err, -k, "%s: %s: %s", c->path, where, e2.msg);
  return JL_OK;
}

static int jl_body(const jl_ctx *c, jl_scene *s, const cJSON *obj, const char *where) {
  static const char *const keys[] = {"shape", "radius", "half_extents", "normal", "position",
                                     COMMON_KEYS, NULL};
  TRY(jl_keys_check(c, obj, where, keys));
  jl_body_spec b;
  jl_body_spec_default(&b);
  const char *shape = NULL;
  TRY(jl_need(c, obj, where, "shape"));
  TRY(jl_str(c, obj, where, "shape", &shape));
  char key[JL_KEY_MAX];
  jl_key(key, where, "shape");
  const char *need = NULL, *wrong[2] = {NULL, NULL};
  if (strcmp(shape, "sphere") == 0) {
    b.shape = JL_SHAPE_SPHERE;
    need = "radius"; wrong[0] = "half_extents"; wrong[1] = "normal";
    TRY(jl_num(c, obj, where, "radius", JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, &b.size[0]));
  } else if (strcmp(shape, "box") == 0) {
    b.shape = JL_SHAPE_BOX;
    need = "half_extents"; wrong[0] = "radius"; wrong[1] = "normal";
    TRY(jl_vec(c, obj, where, "half_extents", 3, JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, b.size));
  } else if (strcmp(shape, "plane") == 0) {
    b.shape = JL_SHAPE_PLANE;
    b.is_static = 1;
    need = "normal"; wrong[0] = "radius"; wrong[1] = "half_extents";
    TRY(jl_vec(c, obj, where, "normal", 3, -JL_SCENE_BIG, JL_SCENE_BIG, b.size));
    if (b.size[0] * b.size[0] + b.size[1] * b.size[1] + b.size[2] * b.size[2] < JL_SCENE_ZERO_NORM2) {
      jl_key(key, where, "normal");
      return jl_bad(c, key, "must not be the zero vector");
    }
  } else {
    return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: expected sphere, box or plane, got \"%.32s\"",
                        c->path, key, shape);
  }
  TRY(jl_need(c, obj, where, need));
  for (int w = 0; w < 2; ++w)
    if (jl_get(obj, wrong[w])) {
      jl_key(key, where, wrong[w]);
      return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: not a key of a %s", c->path, key, shape);
    }
  TRY(jl_vec(c, obj, where, "position", 3, -JL_SCENE_BIG, JL_SCENE_BIG, b.pos));
  TRY(jl_common(c, s, obj, where, &b));
  if (b.shape == JL_SHAPE_PLANE && jl_get(obj, "static") && !b.is_static) {
    jl_key(key, where, "static");
    return jl_bad(c, key, "a plane is always static");
  }
  return jl_add(c, s, &b, where);
}

static int jl_generator(const jl_ctx *c, jl_scene *s, const cJSON *obj, const char *where) {
  const char *type = NULL;
  TRY(jl_need(c, obj, where, "type"));
  TRY(jl_str(c, obj, where, "type", &type));
  jl_body_spec b;
  jl_body_spec_default(&b);
  double origin[3] = {0, 0, 0}, he[3] = {0.5, 0.5, 0.5}, gap = 0.0;
  jl_error *err = c->err;
  if (strcmp(type, "sphere_grid") == 0) {
    static const char *const keys[] = {"type", "counts", "radius", "spacing", "origin", COMMON_KEYS, NULL};
    TRY(jl_keys_check(c, obj, where, keys));
    TRY(jl_need(c, obj, where, "counts"));
    TRY(jl_need(c, obj, where, "radius"));
    double cnt[3], r = 0, spacing = -1;
    TRY(jl_vec(c, obj, where, "counts", 3, 1, 1000, cnt));
    for (int d = 0; d < 3; ++d)
      if (cnt[d] != floor(cnt[d])) {
        char key[JL_KEY_MAX];
        jl_key(key, where, "counts");
        return jl_bad(c, key, "must hold three integers in 1..1000");
      }
    TRY(jl_num(c, obj, where, "radius", JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, &r));
    TRY(jl_num(c, obj, where, "spacing", JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, &spacing));
    TRY(jl_vec(c, obj, where, "origin", 3, -JL_SCENE_BIG, JL_SCENE_BIG, origin));
    TRY(jl_common(c, s, obj, where, &b));
    int counts[3] = {(int)cnt[0], (int)cnt[1], (int)cnt[2]};
    if ((double)counts[0] * counts[1] * counts[2] + s->bodies.count > JL_SCENE_BODIES_MAX)
      return jl_error_set(err, JL_ERR_INPUT, "%s: %s: more than %d bodies", c->path, where,
                          JL_SCENE_BODIES_MAX);
    if (spacing < 0) spacing = 2.0 * r;
    TRY(jl_scene_gen_sphere_grid(s, &b, r, counts, spacing, origin, err));
  } else if (strcmp(type, "sphere_pile") == 0) {
    static const char *const keys[] = {"type", "count", "radius", "radius_range", "min", "max", "seed",
                                       COMMON_KEYS, NULL};
    TRY(jl_keys_check(c, obj, where, keys));
    TRY(jl_need(c, obj, where, "count"));
    TRY(jl_need(c, obj, where, "min"));
    TRY(jl_need(c, obj, where, "max"));
    long count = 0, seed = 1;
    double r = -1, rr[2] = {-1, -1}, lo[3], hi[3];
    TRY(jl_int(c, obj, where, "count", 1, JL_SCENE_BODIES_MAX, &count));
    TRY(jl_num(c, obj, where, "radius", JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, &r));
    TRY(jl_vec(c, obj, where, "radius_range", 2, JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, rr));
    TRY(jl_vec(c, obj, where, "min", 3, -JL_SCENE_BIG, JL_SCENE_BIG, lo));
    TRY(jl_vec(c, obj, where, "max", 3, -JL_SCENE_BIG, JL_SCENE_BIG, hi));
    TRY(jl_int(c, obj, where, "seed", 0, 4294967295L, &seed));
    TRY(jl_common(c, s, obj, where, &b));
    if ((r > 0) == (rr[0] > 0))
      return jl_error_set(err, JL_ERR_INPUT, "%s: %s: give exactly one of radius and radius_range",
                          c->path, where);
    if (r > 0) rr[0] = rr[1] = r;
    if (rr[1] < rr[0])
      return jl_error_set(err, JL_ERR_INPUT, "%s: %s.radius_range: second below first", c->path, where);
    TRY(jl_scene_gen_sphere_pile(s, &b, (int)count, rr[0], rr[1], lo, hi, (uint64_t)seed, err));
  } else if (strcmp(type, "brick_wall") == 0 || strcmp(type, "box_pyramid") == 0 ||
             strcmp(type, "box_stack") == 0) {
    int wall = type[1] == 'r', pyr = type[4] == 'p';
    static const char *const wkeys[] = {"type", "rows", "columns", "layers", "half_extents", "gap",
                                        "origin", COMMON_KEYS, NULL};
    static const char *const pkeys[] = {"type", "rows", "half_extents", "gap", "origin", COMMON_KEYS, NULL};
    static const char *const skeys[] = {"type", "count", "half_extents", "gap", "origin", COMMON_KEYS, NULL};
    TRY(jl_keys_check(c, obj, where, wall ? wkeys : pyr ? pkeys : skeys));
    long rows = 0, cols = 1, layers = 1, count = 0;
    if (wall || pyr) TRY(jl_need(c, obj, where, "rows"));
    if (wall) TRY(jl_need(c, obj, where, "columns"));
    if (!wall && !pyr) TRY(jl_need(c, obj, where, "count"));
    TRY(jl_need(c, obj, where, "half_extents"));
    TRY(jl_int(c, obj, where, "rows", 1, 100000, &rows));
    TRY(jl_int(c, obj, where, "columns", 1, 100000, &cols));
    TRY(jl_int(c, obj, where, "layers", 1, 100000, &layers));
    TRY(jl_int(c, obj, where, "count", 1, JL_SCENE_BODIES_MAX, &count));
    TRY(jl_vec(c, obj, where, "half_extents", 3, JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, he));
    TRY(jl_num(c, obj, where, "gap", 0.0, JL_SCENE_BIG, &gap));
    TRY(jl_vec(c, obj, where, "origin", 3, -JL_SCENE_BIG, JL_SCENE_BIG, origin));
    TRY(jl_common(c, s, obj, where, &b));
    double total = wall ? (double)rows * cols * layers : pyr ? 0.5 * (double)rows * (rows + 1) : (double)count;
    if (total + s->bodies.count > JL_SCENE_BODIES_MAX)
      return jl_error_set(err, JL_ERR_INPUT, "%s: %s: more than %d bodies", c->path, where,
                          JL_SCENE_BODIES_MAX);
    if (wall) TRY(jl_scene_gen_brick_wall(s, &b, (int)rows, (int)cols, (int)layers, he, gap, origin, err));
    else if (pyr) TRY(jl_scene_gen_box_pyramid(s, &b, (int)rows, he, gap, origin, err));
    else TRY(jl_scene_gen_box_stack(s, &b, (int)count, he, gap, origin, err));
  } else if (strcmp(type, "box_ring") == 0) {
    static const char *const keys[] = {"type", "count", "radius", "half_extents", "origin", COMMON_KEYS, NULL};
    TRY(jl_keys_check(c, obj, where, keys));
    TRY(jl_need(c, obj, where, "count"));
    TRY(jl_need(c, obj, where, "radius"));
    TRY(jl_need(c, obj, where, "half_extents"));
    long count = 0;
    double r = 0;
    TRY(jl_int(c, obj, where, "count", 1, 1000000, &count));
    TRY(jl_num(c, obj, where, "radius", JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, &r));
    TRY(jl_vec(c, obj, where, "half_extents", 3, JL_SCENE_LENGTH_MIN, JL_SCENE_BIG, he));
    TRY(jl_vec(c, obj, where, "origin", 3, -JL_SCENE_BIG, JL_SCENE_BIG, origin));
    TRY(jl_common(c, s, obj, where, &b));
    TRY(jl_scene_gen_box_ring(s, &b, (int)count, r, he, origin, err));
  } else if (strcmp(type, "container") == 0) {
    static const char *const keys[] = {"type", "min", "max", "material", NULL};
    TRY(jl_keys_check(c, obj, where, keys));
    TRY(jl_need(c, obj, where, "min"));
    TRY(jl_need(c, obj, where, "max"));
    double lo[3], hi[3];
    TRY(jl_vec(c, obj, where, "min", 3, -JL_SCENE_BIG, JL_SCENE_BIG, lo));
    TRY(jl_vec(c, obj, where, "max", 3, -JL_SCENE_BIG, JL_SCENE_BIG, hi));
    TRY(jl_material_ref(c, s, obj, where, &b.material));
    if (!(hi[0] > lo[0] && hi[1] > lo[1]))
      return jl_error_set(err, JL_ERR_INPUT, "%s: %s: max must exceed min in x and y", c->path, where);
    /* floor and four walls; the open top is max z (not used) */
    double pts[5][3] = {{lo[0], lo[1], lo[2]}, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], lo[2]},
                        {lo[0], lo[1], lo[2]}, {hi[0], hi[1], lo[2]}};
    double nrm[5][3] = {{0, 0, 1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}};
    for (int w = 0; w < 5; ++w) {
      int k = jl_scene_add_plane(s, pts[w], nrm[w], b.material, err);
      if (k < 0) return -k;
    }
  } else {
    char key[JL_KEY_MAX];
    jl_key(key, where, "type");
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: %s: expected sphere_grid, sphere_pile, brick_wall, box_pyramid, "
                        "box_stack, box_ring or container, got \"%.32s\"", c->path, key, type);
  }
  return JL_OK;
}

static int jl_law(const jl_ctx *c, const cJSON *obj, const char *where, double *mu, double *en,
                  double *et) {
  TRY(jl_num(c, obj, where, "mu", 0.0, JL_SCENE_MU_MAX, mu));
  TRY(jl_num(c, obj, where, "restitution", 0.0, 1.0, en));
  TRY(jl_num(c, obj, where, "tangential_restitution", 0.0, 1.0, et));
  return JL_OK;
}

static int jl_solver(const jl_ctx *c, jl_scene *s, const cJSON *obj) {
  static const char *const keys[] = {"method", "alpha", "tol_abs", "tol_rel", "max_iterations",
                                     "warm_start", "matrix_free", "order", NULL};
  if (!cJSON_IsObject(obj)) return jl_bad(c, "solver", "must be an object");
  TRY(jl_keys_check(c, obj, "solver", keys));
  const char *m = NULL, *order = NULL;
  TRY(jl_str(c, obj, "solver", "method", &m));
  if (m) {
    jl_solver_kind kind;
    if (jl_solver_kind_parse(m, &kind))
      return jl_error_set(c->err, JL_ERR_INPUT,
                          "%s: solver.method: expected \"jor\", \"sor\" or \"apgd\", got \"%.32s\"",
                          c->path, m);
    /* the method's default alpha (JOR: the seed's stable value); alpha overrides */
    jl_prox_opts_set_kind(&s->solver, kind);
  }
  TRY(jl_num(c, obj, "solver", "alpha", 1e-6, 2.0, &s->solver.alpha));
  TRY(jl_num(c, obj, "solver", "tol_abs", 0.0, 1.0, &s->solver.tol_abs));
  TRY(jl_num(c, obj, "solver", "tol_rel", 0.0, 1.0, &s->solver.tol_rel));
  long it = s->solver.max_iter;
  TRY(jl_int(c, obj, "solver", "max_iterations", 1, JL_SCENE_ITERATIONS_MAX, &it));
  s->solver.max_iter = (int)it;
  TRY(jl_bool(c, obj, "solver", "warm_start", &s->solver.warm_start));
  const cJSON *mf = jl_get(obj, "matrix_free");
  if (mf && cJSON_IsString(mf) && strcmp(mf->valuestring, "auto") == 0)
    s->solver.matrix_free = JL_MATRIX_FREE_AUTO;
  else if (mf && !cJSON_IsBool(mf))
    return jl_bad(c, "solver.matrix_free", "must be true, false or \"auto\"");
  else
    TRY(jl_bool(c, obj, "solver", "matrix_free", &s->solver.matrix_free));
  TRY(jl_str(c, obj, "solver", "order", &order));
  if (order) {
    if (strcmp(order, "coloured") == 0) s->solver.sor_order = JL_SOR_COLOURED;
    else if (strcmp(order, "sequential") == 0) s->solver.sor_order = JL_SOR_SEQUENTIAL;
    else
      return jl_error_set(c->err, JL_ERR_INPUT,
                          "%s: solver.order: expected \"coloured\" or \"sequential\", got \"%.32s\"",
                          c->path, order);
  }
  return JL_OK;
}

static int jl_scene_parse(const jl_ctx *c, jl_scene *s, const cJSON *root) {
  static const char *const keys[] = {"name", "description", "gravity", "dt", "steps", "duration",
                                     "contact_tolerance", "solver", "materials", "contact", "pairs",
                                     "bodies", "generators", NULL};
  if (!cJSON_IsObject(root)) return jl_error_set(c->err, JL_ERR_INPUT, "%s: must hold a JSON object", c->path);
  TRY(jl_keys_check(c, root, "", keys));
  const char *name = NULL, *desc = NULL;
  TRY(jl_str(c, root, "", "name", &name));
  TRY(jl_str(c, root, "", "description", &desc));
  if (name) {
    if (strlen(name) >= sizeof s->name || !name[0]) return jl_bad(c, "name", "must hold 1..127 characters");
    snprintf(s->name, sizeof s->name, "%s", name);
  }
  TRY(jl_vec(c, root, "", "gravity", 3, -JL_SCENE_GRAVITY_MAX, JL_SCENE_GRAVITY_MAX, s->gravity));
  TRY(jl_need(c, root, "", "dt"));
  TRY(jl_num(c, root, "", "dt", JL_SCENE_DT_MIN, JL_SCENE_DT_MAX, &s->dt));
  if (jl_get(root, "steps") && jl_get(root, "duration"))
    return jl_bad(c, "steps", "give steps or duration, not both");
  long steps = s->steps;
  TRY(jl_int(c, root, "", "steps", 1, JL_SCENE_STEPS_MAX, &steps));
  double duration = -1;
  TRY(jl_num(c, root, "", "duration", 1e-12, 1e9, &duration));
  if (duration > 0) {
    double n = ceil(duration / s->dt - 1e-9);
    if (n > (double)JL_SCENE_STEPS_MAX) return jl_bad(c, "duration", "more than 1e9 steps");
    steps = n < 1 ? 1 : (long)n;
  }
  s->steps = steps;
  TRY(jl_num(c, root, "", "contact_tolerance", 0.0, 1.0, &s->contact_tol));
  const cJSON *solver = jl_get(root, "solver");
  if (solver) TRY(jl_solver(c, s, solver));
  /* default pair law first: new materials copy it */
  const cJSON *contact = jl_get(root, "contact");
  if (contact) {
    static const char *const lk[] = {"mu", "restitution", "tangential_restitution", NULL};
    if (!cJSON_IsObject(contact)) return jl_bad(c, "contact", "must be an object");
    TRY(jl_keys_check(c, contact, "contact", lk));
    double mu = s->mu[0], en = s->eps_n[0], et = s->eps_t[0];
    TRY(jl_law(c, contact, "contact", &mu, &en, &et));
    jl_scene_set_pair(s, 0, 0, mu, en, et);
  }
  const cJSON *mats = jl_get(root, "materials");
  if (mats) {
    if (!cJSON_IsArray(mats)) return jl_bad(c, "materials", "must be an array");
    int i = 0;
    for (const cJSON *m = mats->child; m; m = m->next, ++i) {
      char where[JL_KEY_MAX];
      snprintf(where, sizeof where, "materials[%d]", i);
      static const char *const mk[] = {"name", "density", NULL};
      if (!cJSON_IsObject(m)) return jl_bad(c, where, "must be an object");
      TRY(jl_keys_check(c, m, where, mk));
      TRY(jl_need(c, m, where, "name"));
      const char *mn = NULL;
      double density = 1000.0;
      TRY(jl_str(c, m, where, "name", &mn));
      TRY(jl_num(c, m, where, "density", JL_SCENE_DENSITY_MIN, JL_SCENE_BIG, &density));
      char key[JL_KEY_MAX];
      jl_key(key, where, "name");
      if (!mn[0] || strlen(mn) >= sizeof s->materials[0].name) return jl_bad(c, key, "must hold 1..63 characters");
      int found = jl_scene_find_material(s, mn);
      if (found > 0) return jl_bad(c, key, "duplicate material");
      if (found == 0) {
        s->materials[0].density = density;
      } else {
        jl_error e2 = {0};
        if (jl_scene_add_material(s, mn, density, &e2) < 0) return jl_bad(c, key, e2.msg);
      }
    }
  }
  const cJSON *pairs = jl_get(root, "pairs");
  if (pairs) {
    if (!cJSON_IsArray(pairs)) return jl_bad(c, "pairs", "must be an array");
    int i = 0;
    for (const cJSON *pr = pairs->child; pr; pr = pr->next, ++i) {
      char where[JL_KEY_MAX], key[JL_KEY_MAX];
      snprintf(where, sizeof where, "pairs[%d]", i);
      static const char *const pk[] = {"materials", "mu", "restitution", "tangential_restitution", NULL};
      if (!cJSON_IsObject(pr)) return jl_bad(c, where, "must be an object");
      TRY(jl_keys_check(c, pr, where, pk));
      TRY(jl_need(c, pr, where, "materials"));
      const cJSON *ms = jl_get(pr, "materials");
      jl_key(key, where, "materials");
      if (!cJSON_IsArray(ms) || cJSON_GetArraySize(ms) != 2 || !cJSON_IsString(ms->child) ||
          !cJSON_IsString(ms->child->next))
        return jl_bad(c, key, "must be an array of two material names");
      int m1 = jl_scene_find_material(s, ms->child->valuestring);
      int m2 = jl_scene_find_material(s, ms->child->next->valuestring);
      if (m1 < 0 || m2 < 0)
        return jl_error_set(c->err, JL_ERR_INPUT, "%s: %s: unknown material \"%.64s\"", c->path, key,
                            m1 < 0 ? ms->child->valuestring : ms->child->next->valuestring);
      int at = m1 * JL_MATERIALS_MAX + m2;
      double mu = s->mu[at], en = s->eps_n[at], et = s->eps_t[at];
      TRY(jl_law(c, pr, where, &mu, &en, &et));
      jl_scene_set_pair(s, m1, m2, mu, en, et);
    }
  }
  const cJSON *bodies = jl_get(root, "bodies");
  if (bodies) {
    if (!cJSON_IsArray(bodies)) return jl_bad(c, "bodies", "must be an array");
    int i = 0;
    for (const cJSON *bo = bodies->child; bo; bo = bo->next, ++i) {
      char where[JL_KEY_MAX];
      snprintf(where, sizeof where, "bodies[%d]", i);
      if (!cJSON_IsObject(bo)) return jl_bad(c, where, "must be an object");
      TRY(jl_body(c, s, bo, where));
    }
  }
  const cJSON *gens = jl_get(root, "generators");
  if (gens) {
    if (!cJSON_IsArray(gens)) return jl_bad(c, "generators", "must be an array");
    int i = 0;
    for (const cJSON *g = gens->child; g; g = g->next, ++i) {
      char where[JL_KEY_MAX];
      snprintf(where, sizeof where, "generators[%d]", i);
      if (!cJSON_IsObject(g)) return jl_bad(c, where, "must be an object");
      int before = s->bodies.count;
      int rc = jl_generator(c, s, g, where);
      if (rc) {
        /* generator helpers report without the file: add it */
        if (!strstr(c->err->msg, c->path)) {
          char msg[JL_ERROR_MSG_MAX];
          snprintf(msg, sizeof msg, "%s", c->err->msg);
          jl_error_set(c->err, rc, "%s: %s: %s", c->path, where, msg);
        }
        return rc;
      }
      (void)before;
    }
  }
  int dynamic = 0;
  for (int k = 0; k < s->bodies.count; ++k) dynamic += !s->bodies.is_static[k];
  if (dynamic == 0) return jl_bad(c, "bodies", "the scene has no dynamic body");
  return JL_OK;
}

int jl_scene_load(jl_scene *s, const char *path, jl_error *err) {
  int rc = jl_scene_init(s, err);
  if (rc) return rc;
  cJSON *root = NULL;
  if ((rc = jl_json_load_file(path, &root, err))) return rc;
  jl_ctx c = {path, err};
  rc = jl_scene_parse(&c, s, root);
  cJSON_Delete(root);
  return rc;
}
