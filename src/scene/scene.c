/* Scenes in code: materials, bodies with mass properties, generators, energy.
 * The scene file reader is scene_io.c. */
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "rng.h"

static double jl_rng_u01(jl_rng *r) {
  uint32_t a = jl_rng_u32(r);
  return jl_u01_from_u32(a, jl_rng_u32(r));
}

int jl_scene_init(jl_scene *s, jl_error *err) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "scene");
  s->gravity[2] = JL_SCENE_GRAVITY_Z;
  s->dt = JL_SCENE_DT_DEFAULT;
  s->steps = 1000;
  s->contact_tol = 1e-6;
  jl_prox_opts_default(&s->solver);
  int rc = jl_bodies_init(&s->bodies, 16, err);
  if (rc) return rc;
  snprintf(s->materials[0].name, sizeof s->materials[0].name, "default");
  s->materials[0].density = 1000.0;
  s->n_materials = 1;
  jl_scene_set_pair(s, 0, 0, JL_SCENE_MU_DEFAULT, 0.0, 0.0);
  return JL_OK;
}

void jl_scene_free(jl_scene *s) {
  if (!s) return;
  jl_bodies_free(&s->bodies);
}

void jl_scene_set_pair(jl_scene *s, int m1, int m2, double mu, double eps_n, double eps_t) {
  int a = m1 * JL_MATERIALS_MAX + m2, b = m2 * JL_MATERIALS_MAX + m1;
  s->mu[a] = s->mu[b] = mu;
  s->eps_n[a] = s->eps_n[b] = eps_n;
  s->eps_t[a] = s->eps_t[b] = eps_t;
}

int jl_scene_find_material(const jl_scene *s, const char *name) {
  for (int m = 0; m < s->n_materials; ++m)
    if (strcmp(s->materials[m].name, name) == 0) return m;
  return -1;
}

int jl_scene_add_material(jl_scene *s, const char *name, double density, jl_error *err) {
  if (s->n_materials >= JL_MATERIALS_MAX)
    return -jl_error_set(err, JL_ERR_INPUT, "at most %d materials", JL_MATERIALS_MAX);
  if (strlen(name) >= sizeof s->materials[0].name)
    return -jl_error_set(err, JL_ERR_INPUT, "material name longer than %zu characters",
                         sizeof s->materials[0].name - 1);
  int m = s->n_materials++;
  snprintf(s->materials[m].name, sizeof s->materials[m].name, "%s", name);
  s->materials[m].density = density;
  /* new pairs start from the default material's pair law */
  for (int o = 0; o < s->n_materials; ++o)
    jl_scene_set_pair(s, m, o, s->mu[0], s->eps_n[0], s->eps_t[0]);
  return m;
}

void jl_body_spec_default(jl_body_spec *spec) {
  memset(spec, 0, sizeof *spec);
  spec->shape = JL_SHAPE_SPHERE;
  spec->size[0] = spec->size[1] = spec->size[2] = 0.5;
  spec->quat[0] = 1.0;
}

int jl_scene_add_body(jl_scene *s, const jl_body_spec *spec, jl_error *err) {
  jl_bodies *b = &s->bodies;
  if (b->count >= JL_SCENE_BODIES_MAX)
    return -jl_error_set(err, JL_ERR_INPUT, "more than %d bodies", JL_SCENE_BODIES_MAX);
  if (spec->material < 0 || spec->material >= s->n_materials)
    return -jl_error_set(err, JL_ERR_INPUT, "material index %d out of range", spec->material);
  if (b->count == b->capacity) {
    int rc = jl_bodies_reserve(b, b->capacity * 2 + 16, err);
    if (rc) return -rc;
  }
  int k = b->count;
  const double *sz = spec->size;
  int is_static = spec->is_static || spec->shape == JL_SHAPE_PLANE;
  double volume = 0.0, i1 = 0, i2 = 0, i3 = 0; /* inertia per unit mass */
  if (spec->shape == JL_SHAPE_SPHERE) {
    if (!(sz[0] > 0)) return -jl_error_set(err, JL_ERR_INPUT, "sphere radius must be > 0");
    volume = 4.0 / 3.0 * JL_PI * sz[0] * sz[0] * sz[0];
    i1 = i2 = i3 = 0.4 * sz[0] * sz[0];
  } else if (spec->shape == JL_SHAPE_BOX) {
    if (!(sz[0] > 0 && sz[1] > 0 && sz[2] > 0))
      return -jl_error_set(err, JL_ERR_INPUT, "box half extents must be > 0");
    volume = 8.0 * sz[0] * sz[1] * sz[2];
    i1 = (sz[1] * sz[1] + sz[2] * sz[2]) / 3.0;
    i2 = (sz[0] * sz[0] + sz[2] * sz[2]) / 3.0;
    i3 = (sz[0] * sz[0] + sz[1] * sz[1]) / 3.0;
  } else if (spec->shape == JL_SHAPE_PLANE) {
    double l = sqrt(sz[0] * sz[0] + sz[1] * sz[1] + sz[2] * sz[2]);
    if (!(l > 0)) return -jl_error_set(err, JL_ERR_INPUT, "plane normal must not be zero");
  } else {
    return -jl_error_set(err, JL_ERR_INPUT, "unknown shape %d", (int)spec->shape);
  }
  double mass = 0.0;
  if (!is_static) {
    double density = spec->density > 0 ? spec->density : s->materials[spec->material].density;
    mass = spec->mass > 0 ? spec->mass : density * volume;
    if (!(mass > 0) || !isfinite(mass))
      return -jl_error_set(err, JL_ERR_INPUT, "a dynamic body needs a mass > 0 (got %g)", mass);
  }
  b->shape[k] = (uint8_t)spec->shape;
  b->is_static[k] = (uint8_t)is_static;
  b->material[k] = spec->material;
  if (spec->shape == JL_SHAPE_PLANE) {
    double l = sqrt(sz[0] * sz[0] + sz[1] * sz[1] + sz[2] * sz[2]);
    for (int d = 0; d < 3; ++d) b->size[3 * k + d] = sz[d] / l;
  } else {
    for (int d = 0; d < 3; ++d) b->size[3 * k + d] = sz[d];
  }
  jl_quat q = {spec->quat[0], spec->quat[1], spec->quat[2], spec->quat[3]};
  double ql = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  if (!(ql > 0)) return -jl_error_set(err, JL_ERR_INPUT, "orientation quaternion must not be zero");
  q = jl_quat_normalize(q);
  b->quat[4 * k] = q.w; b->quat[4 * k + 1] = q.x; b->quat[4 * k + 2] = q.y; b->quat[4 * k + 3] = q.z;
  for (int d = 0; d < 3; ++d) {
    b->pos[3 * k + d] = spec->pos[d];
    b->vel[3 * k + d] = is_static ? 0.0 : spec->vel[d];
    b->omega[3 * k + d] = is_static ? 0.0 : spec->omega[d];
  }
  b->inv_mass[k] = is_static ? 0.0 : 1.0 / mass;
  b->inv_inertia[3 * k] = is_static ? 0.0 : 1.0 / (mass * i1);
  b->inv_inertia[3 * k + 1] = is_static ? 0.0 : 1.0 / (mass * i2);
  b->inv_inertia[3 * k + 2] = is_static ? 0.0 : 1.0 / (mass * i3);
  b->count++;
  return k;
}

int jl_scene_add_plane(jl_scene *s, const double point[3], const double normal[3], int material,
                       jl_error *err) {
  jl_body_spec p;
  jl_body_spec_default(&p);
  p.shape = JL_SHAPE_PLANE;
  p.is_static = 1;
  p.material = material;
  for (int d = 0; d < 3; ++d) {
    p.pos[d] = point[d];
    p.size[d] = normal[d];
  }
  return jl_scene_add_body(s, &p, err);
}

static int jl_add_at(jl_scene *s, const jl_body_spec *proto, jl_shape shape, const double size[3],
                     double x, double y, double z, jl_error *err) {
  jl_body_spec b = *proto;
  b.shape = shape;
  b.size[0] = size[0];
  b.size[1] = size[1];
  b.size[2] = size[2];
  b.pos[0] = x;
  b.pos[1] = y;
  b.pos[2] = z;
  int k = jl_scene_add_body(s, &b, err);
  return k < 0 ? -k : JL_OK;
}

int jl_scene_gen_sphere_grid(jl_scene *s, const jl_body_spec *proto, double radius,
                             const int counts[3], double spacing, const double origin[3],
                             jl_error *err) {
  double sz[3] = {radius, radius, radius};
  for (int z = 0; z < counts[2]; ++z)
    for (int y = 0; y < counts[1]; ++y)
      for (int x = 0; x < counts[0]; ++x) {
        int rc = jl_add_at(s, proto, JL_SHAPE_SPHERE, sz, origin[0] + x * spacing,
                           origin[1] + y * spacing, origin[2] + z * spacing, err);
        if (rc) return rc;
      }
  return JL_OK;
}

/* Random placement on a grid of cells one diameter wide: each sphere takes a
 * random free cell and a random offset that keeps it inside the cell, so no
 * overlap test is needed and the pile is reproducible from the seed. */
int jl_scene_gen_sphere_pile(jl_scene *s, const jl_body_spec *proto, int count, double r_min,
                             double r_max, const double lo[3], const double hi[3], uint64_t seed,
                             jl_error *err) {
  if (!(r_min > 0 && r_max >= r_min))
    return jl_error_set(err, JL_ERR_INPUT, "sphere_pile: need 0 < radius_min <= radius_max");
  double cell = 2.0 * r_max * 1.0001;
  long nc[3];
  long cells = 1;
  for (int d = 0; d < 3; ++d) {
    nc[d] = (long)floor((hi[d] - lo[d]) / cell);
    if (nc[d] < 1) nc[d] = 0;
    cells *= nc[d];
  }
  if (cells < count)
    return jl_error_set(err, JL_ERR_INPUT,
                        "sphere_pile: %d spheres of radius %g do not fit the box (room for %ld)",
                        count, r_max, cells);
  /* a random subset of the cells: partial Fisher-Yates over the cell indices */
  long *idx = malloc(sizeof(long) * (size_t)cells);
  if (!idx) return jl_error_set(err, JL_ERR_NOMEM, "sphere_pile: out of memory");
  for (long i = 0; i < cells; ++i) idx[i] = i;
  jl_rng rng;
  jl_rng_init(&rng, seed, 0, 0);
  for (long i = 0; i < count; ++i) {
    long j = i + (long)(jl_rng_u01(&rng) * (double)(cells - i));
    if (j >= cells) j = cells - 1;
    long t = idx[i]; idx[i] = idx[j]; idx[j] = t;
  }
  int rc = JL_OK;
  for (long i = 0; i < count && rc == JL_OK; ++i) {
    long c = idx[i];
    long cx = c % nc[0], cy = (c / nc[0]) % nc[1], cz = c / (nc[0] * nc[1]);
    double r = r_min + (r_max - r_min) * jl_rng_u01(&rng);
    double room = 0.5 * cell - r;
    double p[3];
    long cc[3] = {cx, cy, cz};
    for (int d = 0; d < 3; ++d)
      p[d] = lo[d] + (cc[d] + 0.5) * cell + room * (2.0 * jl_rng_u01(&rng) - 1.0);
    double sz[3] = {r, r, r};
    rc = jl_add_at(s, proto, JL_SHAPE_SPHERE, sz, p[0], p[1], p[2], err);
  }
  free(idx);
  return rc;
}

int jl_scene_gen_brick_wall(jl_scene *s, const jl_body_spec *proto, int rows, int columns,
                            int layers, const double he[3], double gap, const double origin[3],
                            jl_error *err) {
  for (int r = 0; r < rows; ++r) {
    double shift = (r % 2) ? he[0] + 0.5 * gap : 0.0;
    int cols = (r % 2) ? columns - 1 : columns;
    for (int l = 0; l < layers; ++l)
      for (int c = 0; c < cols; ++c) {
        double x = origin[0] + he[0] + c * (2.0 * he[0] + gap) + shift;
        double y = origin[1] + he[1] + l * (2.0 * he[1] + gap);
        double z = origin[2] + he[2] + r * 2.0 * he[2];
        int rc = jl_add_at(s, proto, JL_SHAPE_BOX, he, x, y, z, err);
        if (rc) return rc;
      }
  }
  return JL_OK;
}

int jl_scene_gen_box_pyramid(jl_scene *s, const jl_body_spec *proto, int rows, const double he[3],
                             double gap, const double origin[3], jl_error *err) {
  for (int r = 0; r < rows; ++r) {
    int n = rows - r;
    double x0 = origin[0] - (n - 1) * (he[0] + 0.5 * gap);
    for (int c = 0; c < n; ++c) {
      int rc = jl_add_at(s, proto, JL_SHAPE_BOX, he, x0 + c * (2.0 * he[0] + gap), origin[1],
                         origin[2] + he[2] + r * 2.0 * he[2], err);
      if (rc) return rc;
    }
  }
  return JL_OK;
}

int jl_scene_gen_box_stack(jl_scene *s, const jl_body_spec *proto, int count, const double he[3],
                           double gap, const double origin[3], jl_error *err) {
  for (int i = 0; i < count; ++i) {
    int rc = jl_add_at(s, proto, JL_SHAPE_BOX, he, origin[0], origin[1],
                       origin[2] + he[2] + i * (2.0 * he[2] + gap), err);
    if (rc) return rc;
  }
  return JL_OK;
}

int jl_scene_gen_box_ring(jl_scene *s, const jl_body_spec *proto, int count, double radius,
                          const double he[3], const double origin[3], jl_error *err) {
  for (int i = 0; i < count; ++i) {
    double a = 2.0 * JL_PI * i / count;
    jl_body_spec b = *proto;
    b.shape = JL_SHAPE_BOX;
    for (int d = 0; d < 3; ++d) b.size[d] = he[d];
    b.pos[0] = origin[0] + radius * cos(a);
    b.pos[1] = origin[1] + radius * sin(a);
    b.pos[2] = origin[2] + he[2];
    /* body x axis along the radius */
    jl_quat q = jl_quat_axis_angle(jl_v3(0, 0, 1), a);
    b.quat[0] = q.w; b.quat[1] = q.x; b.quat[2] = q.y; b.quat[3] = q.z;
    int k = jl_scene_add_body(s, &b, err);
    if (k < 0) return -k;
  }
  return JL_OK;
}

void jl_scene_energy(const jl_scene *s, double *kinetic, double *potential) {
  const jl_bodies *b = &s->bodies;
  double ke = 0.0, pe = 0.0;
  for (int k = 0; k < b->count; ++k) {
    if (b->is_static[k]) continue;
    double m = 1.0 / b->inv_mass[k];
    const double *v = b->vel + 3 * (size_t)k, *w = b->omega + 3 * (size_t)k, *x = b->pos + 3 * (size_t)k;
    const double *q = b->quat + 4 * (size_t)k, *ii = b->inv_inertia + 3 * (size_t)k;
    jl_quat qq = {q[0], q[1], q[2], q[3]};
    jl_vec3 wl = jl_quat_rotate(jl_quat_conj(qq), jl_v3(w[0], w[1], w[2]));
    ke += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
          0.5 * (wl.x * wl.x / ii[0] + wl.y * wl.y / ii[1] + wl.z * wl.z / ii[2]);
    pe -= m * (s->gravity[0] * x[0] + s->gravity[1] * x[1] + s->gravity[2] * x[2]);
  }
  *kinetic = ke;
  *potential = pe;
}
