/* Trajectory recording and .glb export. The file is written here, not by
 * assimp's exporter: that grows its one buffer by the exact size of each
 * accessor, copying the whole buffer each time, so 8,000 bodies x 31 frames
 * took 67 s (quadratic in the bodies); this takes a fraction of a second. */
#include "trajectory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_util.h"
#include "math3d.h"

/* UV sphere resolution: enough to see rolling, cheap for many bodies. */
#define JL_SPHERE_SLICES 16
#define JL_SPHERE_STACKS 8
/* Planes: a quad this many times the scene's extent, and this thin. */
#define JL_PLANE_EXTENT_FACTOR 3.0
#define JL_PLANE_MIN_SIZE 10.0

int jl_trajectory_init(jl_trajectory *t, const jl_bodies *bodies, jl_error *err) {
  memset(t, 0, sizeof *t);
  int n = bodies->count;
  t->body_count = n;
  size_t nn = n > 0 ? (size_t)n : 1;
  t->shape = malloc(nn);
  t->is_static = malloc(nn);
  t->size = malloc(3 * nn * sizeof(double));
  t->pos0 = malloc(3 * nn * sizeof(double));
  t->quat0 = malloc(4 * nn * sizeof(double));
  t->dynamic = malloc(nn * sizeof(int));
  if (!t->shape || !t->is_static || !t->size || !t->pos0 || !t->quat0 || !t->dynamic) {
    jl_trajectory_free(t);
    return jl_error_set(err, JL_ERR_NOMEM, "trajectory: out of memory for %d bodies", n);
  }
  if (n > 0) {
    memcpy(t->shape, bodies->shape, (size_t)n);
    memcpy(t->is_static, bodies->is_static, (size_t)n);
    memcpy(t->size, bodies->size, 3 * (size_t)n * sizeof(double));
    memcpy(t->pos0, bodies->pos, 3 * (size_t)n * sizeof(double));
    memcpy(t->quat0, bodies->quat, 4 * (size_t)n * sizeof(double));
  }
  for (int i = 0; i < n; ++i)
    if (!bodies->is_static[i] && bodies->shape[i] != JL_SHAPE_PLANE) t->dynamic[t->dynamic_count++] = i;
  return JL_OK;
}

void jl_trajectory_free(jl_trajectory *t) {
  if (!t) return;
  free(t->shape);
  free(t->is_static);
  free(t->size);
  free(t->pos0);
  free(t->quat0);
  free(t->dynamic);
  free(t->time);
  free(t->pos);
  free(t->quat);
  memset(t, 0, sizeof *t);
}

int jl_trajectory_add_frame(jl_trajectory *t, const jl_bodies *bodies, double time, jl_error *err) {
  if (bodies->count != t->body_count)
    return jl_error_set(err, JL_ERR_INTERNAL, "trajectory: body count changed (%d, was %d)",
                        bodies->count, t->body_count);
  if (t->frame_count > 0 && !(time > t->time[t->frame_count - 1]))
    return jl_error_set(err, JL_ERR_INTERNAL, "trajectory: frame times must increase");
  if (t->frame_count == t->frame_cap) {
    int cap = t->frame_cap ? 2 * t->frame_cap : 16;
    size_t d = t->dynamic_count > 0 ? (size_t)t->dynamic_count : 1;
    double *tm = realloc(t->time, (size_t)cap * sizeof *tm);
    if (tm) t->time = tm;
    float *p = realloc(t->pos, 3 * d * (size_t)cap * sizeof *p);
    if (p) t->pos = p;
    float *q = realloc(t->quat, 4 * d * (size_t)cap * sizeof *q);
    if (q) t->quat = q;
    if (!tm || !p || !q)
      return jl_error_set(err, JL_ERR_NOMEM, "trajectory: out of memory for %d frames", cap);
    t->frame_cap = cap;
  }
  int f = t->frame_count++;
  t->time[f] = time;
  size_t d = (size_t)t->dynamic_count;
  for (size_t k = 0; k < d; ++k) {
    int i = t->dynamic[k];
    for (int c = 0; c < 3; ++c) t->pos[3 * (d * f + k) + c] = (float)bodies->pos[3 * i + c];
    for (int c = 0; c < 4; ++c) t->quat[4 * (d * f + k) + c] = (float)bodies->quat[4 * i + c];
  }
  return JL_OK;
}

/* ---- meshes ---- */

/* A triangle mesh as it goes into the file: float positions and normals. */
typedef struct jl_tmesh {
  char name[64];
  int nv, nf;
  float *v, *n;            /* 3 per vertex */
  uint32_t *idx;           /* 3 per face */
} jl_tmesh;

static int jl_tmesh_alloc(jl_tmesh *m, int nv, int nf, const char *name) {
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", name);
  m->nv = nv;
  m->nf = nf;
  m->v = calloc(3 * (size_t)nv, sizeof *m->v);
  m->n = calloc(3 * (size_t)nv, sizeof *m->n);
  m->idx = calloc(3 * (size_t)nf, sizeof *m->idx);
  return m->v && m->n && m->idx ? 0 : -1;
}

static void jl_tmesh_free(jl_tmesh *m) {
  free(m->v);
  free(m->n);
  free(m->idx);
  memset(m, 0, sizeof *m);
}

static void jl_tvert(jl_tmesh *m, int v, const double p[3], const double n[3]) {
  for (int k = 0; k < 3; ++k) {
    m->v[3 * v + k] = (float)p[k];
    m->n[3 * v + k] = (float)n[k];
  }
}

static void jl_tri(jl_tmesh *m, int f, int a, int b, int c) {
  m->idx[3 * f] = (uint32_t)a;
  m->idx[3 * f + 1] = (uint32_t)b;
  m->idx[3 * f + 2] = (uint32_t)c;
}

static int jl_sphere_mesh(jl_tmesh *m, double r, const char *name) {
  const int S = JL_SPHERE_SLICES, T = JL_SPHERE_STACKS;
  if (jl_tmesh_alloc(m, (S + 1) * (T + 1), 2 * S * T, name)) return -1;
  for (int i = 0; i <= T; ++i) {
    double th = JL_PI * i / T;
    for (int j = 0; j <= S; ++j) {
      double ph = 2.0 * JL_PI * j / S;
      double n[3] = {sin(th) * cos(ph), sin(th) * sin(ph), cos(th)}, p[3] = {r * n[0], r * n[1], r * n[2]};
      jl_tvert(m, i * (S + 1) + j, p, n);
    }
  }
  int f = 0;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < S; ++j) {
      int a = i * (S + 1) + j, b = a + S + 1;
      jl_tri(m, f++, a, b, a + 1);
      jl_tri(m, f++, a + 1, b, b + 1);
    }
  return 0;
}

/* Box: 4 vertices per face so each face has its own normal. */
static int jl_box_mesh(jl_tmesh *m, const double h[3], const char *name) {
  if (jl_tmesh_alloc(m, 24, 12, name)) return -1;
  int v = 0, f = 0;
  for (int axis = 0; axis < 3; ++axis)
    for (int s = -1; s <= 1; s += 2) {
      int u = (axis + 1) % 3, w = (axis + 2) % 3;
      /* corners in counter-clockwise order seen from outside */
      double cu[4] = {-1, 1, 1, -1}, cw[4] = {-1, -1, 1, 1};
      for (int k = 0; k < 4; ++k) {
        double p[3], n[3] = {0, 0, 0};
        p[axis] = s * h[axis];
        p[u] = cu[k] * h[u];
        p[w] = (s > 0 ? cw[k] : -cw[k]) * h[w];
        n[axis] = s;
        jl_tvert(m, v + k, p, n);
      }
      jl_tri(m, f++, v, v + 1, v + 2);
      jl_tri(m, f++, v, v + 2, v + 3);
      v += 4;
    }
  return 0;
}

/* A square of edge e in the local xy plane, thin along z, seen from both
 * sides. */
static int jl_plane_mesh(jl_tmesh *m, double e, const char *name) {
  if (jl_tmesh_alloc(m, 8, 4, name)) return -1;
  double c[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (int side = 0; side < 2; ++side)
    for (int k = 0; k < 4; ++k) {
      double p[3] = {0.5 * e * c[k][0], 0.5 * e * c[k][1], side == 0 ? 0.0 : -1e-3 * e};
      double n[3] = {0.0, 0.0, side == 0 ? 1.0 : -1.0};
      jl_tvert(m, 4 * side + k, p, n);
    }
  jl_tri(m, 0, 0, 1, 2);
  jl_tri(m, 1, 0, 2, 3);
  jl_tri(m, 2, 4, 6, 5);
  jl_tri(m, 3, 4, 7, 6);
  return 0;
}

/* Rotation taking +z to the unit vector n. */
static jl_quat jl_quat_z_to(jl_vec3 n) {
  jl_vec3 z = jl_v3(0, 0, 1);
  double c = jl_v3_dot(z, n);
  if (c < -1.0 + 1e-12) return jl_quat_axis_angle(jl_v3(1, 0, 0), JL_PI);
  jl_vec3 a = jl_v3_cross(z, n);
  jl_quat q = {1.0 + c, a.x, a.y, a.z};
  return jl_quat_normalize(q);
}

/* ---- the file: binary glTF 2.0 ---- */

/* The binary chunk, grown by doubling, each piece 4-byte aligned. */
typedef struct jl_bin {
  uint8_t *data;
  size_t len, cap;
  int failed;
} jl_bin;

/* Appends n bytes (NULL: zeros) and returns their offset. */
static size_t jl_bin_add(jl_bin *b, const void *src, size_t n) {
  size_t at = b->len, need = at + ((n + 3) & ~(size_t)3);
  if (b->failed) return 0;
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
      b->failed = 1;
      return 0;
    }
    b->data = d;
    b->cap = cap;
  }
  if (src) memcpy(b->data + at, src, n);
  else memset(b->data + at, 0, n);
  memset(b->data + at + n, 0, need - at - n);
  b->len = need;
  return at;
}

/* glTF component types and targets (glTF 2.0, 3.6). */
#define JL_GL_FLOAT 5126
#define JL_GL_UNSIGNED_INT 5125
#define JL_GL_ARRAY_BUFFER 34962
#define JL_GL_ELEMENT_ARRAY_BUFFER 34963

/* The JSON's bufferViews and accessors, built as text beside the chunk. */
typedef struct jl_gltf {
  jl_bin bin;
  jl_buf views, accessors;
  int n_views, n_accessors;
} jl_gltf;

static int jl_gltf_view(jl_gltf *g, size_t offset, size_t length, int target) {
  jl_buf_printf(&g->views, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu", g->n_views ? "," : "",
                offset, length);
  if (target) jl_buf_printf(&g->views, ",\"target\":%d", target);
  jl_buf_printf(&g->views, "}");
  return g->n_views++;
}

/* An accessor of count elements of type ("SCALAR", "VEC3", ...) at byte
 * offset of view; min and max (comps numbers each) when given. */
static int jl_gltf_accessor(jl_gltf *g, int view, size_t offset, int ctype, int count, const char *type,
                            int comps, const float *min, const float *max) {
  jl_buf_printf(&g->accessors, "%s{\"bufferView\":%d,\"byteOffset\":%zu,\"componentType\":%d,\"count\":%d,"
                "\"type\":\"%s\"", g->n_accessors ? "," : "", view, offset, ctype, count, type);
  if (min && max) {
    for (int w = 0; w < 2; ++w) {
      const float *v = w ? max : min;
      jl_buf_printf(&g->accessors, ",\"%s\":[", w ? "max" : "min");
      for (int k = 0; k < comps; ++k) jl_buf_printf(&g->accessors, "%s%.9g", k ? "," : "", (double)v[k]);
      jl_buf_printf(&g->accessors, "]");
    }
  }
  jl_buf_printf(&g->accessors, "}");
  return g->n_accessors++;
}

/* A mesh's data into the chunk; its POSITION, NORMAL and index accessors in acc. */
static void jl_gltf_mesh(jl_gltf *g, const jl_tmesh *m, int acc[3]) {
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int v = 0; v < m->nv; ++v)
    for (int k = 0; k < 3; ++k) {
      lo[k] = fminf(lo[k], m->v[3 * v + k]);
      hi[k] = fmaxf(hi[k], m->v[3 * v + k]);
    }
  size_t vb = 3 * sizeof(float) * (size_t)m->nv, ib = 3 * sizeof(uint32_t) * (size_t)m->nf;
  int pv = jl_gltf_view(g, jl_bin_add(&g->bin, m->v, vb), vb, JL_GL_ARRAY_BUFFER);
  int nv = jl_gltf_view(g, jl_bin_add(&g->bin, m->n, vb), vb, JL_GL_ARRAY_BUFFER);
  int iv = jl_gltf_view(g, jl_bin_add(&g->bin, m->idx, ib), ib, JL_GL_ELEMENT_ARRAY_BUFFER);
  acc[0] = jl_gltf_accessor(g, pv, 0, JL_GL_FLOAT, m->nv, "VEC3", 3, lo, hi);
  acc[1] = jl_gltf_accessor(g, nv, 0, JL_GL_FLOAT, m->nv, "VEC3", 0, NULL, NULL);
  acc[2] = jl_gltf_accessor(g, iv, 0, JL_GL_UNSIGNED_INT, 3 * m->nf, "SCALAR", 0, NULL, NULL);
}

/* Same mesh for the same shape and size (exact match; scenes repeat sizes). */
static int jl_same_size(const jl_trajectory *t, int i, int j) {
  return t->shape[i] == t->shape[j] && memcmp(t->size + 3 * i, t->size + 3 * j, 3 * sizeof(double)) == 0;
}

typedef struct jl_size_ref {
  int body;
  const jl_trajectory *t;
} jl_size_ref;

static int jl_cmp_size(const void *a, const void *b) {
  const jl_size_ref *x = a, *y = b;
  const jl_trajectory *t = x->t;
  if (t->shape[x->body] != t->shape[y->body]) return t->shape[x->body] < t->shape[y->body] ? -1 : 1;
  for (int k = 0; k < 3; ++k) {
    double u = t->size[3 * x->body + k], v = t->size[3 * y->body + k];
    if (u != v) return u < v ? -1 : 1;
  }
  return x->body < y->body ? -1 : x->body > y->body;
}

/* The chunk header: length and type (glTF 2.0, 4.4.3). */
static void jl_put_u32(uint8_t *p, uint32_t v) {
  for (int k = 0; k < 4; ++k) p[k] = (uint8_t)(v >> (8 * k));
}

int jl_trajectory_write_glb(const jl_trajectory *t, const char *path, jl_error *err) {
  int n = t->body_count;
  if (n == 0) return jl_error_set(err, JL_ERR_INPUT, "trajectory: no bodies to write");
  int rc = JL_OK, nm = 0;
  jl_gltf g;
  memset(&g, 0, sizeof g);
  jl_buf js = {0};
  int *mesh_of = calloc((size_t)n, sizeof *mesh_of);
  jl_size_ref *refs = calloc((size_t)n, sizeof *refs);
  jl_tmesh *meshes = calloc((size_t)n, sizeof *meshes);
  uint8_t *file = NULL;
  if (!mesh_of || !refs || !meshes) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "trajectory: out of memory");
    goto done;
  }

  /* Extent of the scene, for the plane quads. */
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; ++i) {
    if (t->shape[i] == JL_SHAPE_PLANE) continue;
    for (int k = 0; k < 3; ++k) {
      lo[k] = fmin(lo[k], t->pos0[3 * i + k]);
      hi[k] = fmax(hi[k], t->pos0[3 * i + k]);
    }
  }
  double extent = 0.0;
  for (int k = 0; k < 3; ++k)
    if (hi[k] > lo[k]) extent = fmax(extent, hi[k] - lo[k]);
  double plane_size = t->plane_size > 0 ? t->plane_size : fmax(JL_PLANE_MIN_SIZE, JL_PLANE_EXTENT_FACTOR * extent);

  /* Meshes: planes each their own, spheres and boxes one per distinct size. */
  for (int i = 0; i < n; ++i) refs[i] = (jl_size_ref){i, t};
  qsort(refs, (size_t)n, sizeof *refs, jl_cmp_size);
  char name[64];
  for (int r = 0; r < n; ++r) {
    int i = refs[r].body;
    if (t->shape[i] != JL_SHAPE_PLANE && r > 0 && jl_same_size(t, i, refs[r - 1].body)) {
      mesh_of[i] = mesh_of[refs[r - 1].body];
      continue;
    }
    int bad;
    if (t->shape[i] == JL_SHAPE_SPHERE) {
      snprintf(name, sizeof name, "sphere_%d", nm);
      bad = jl_sphere_mesh(&meshes[nm], t->size[3 * i], name);
    } else if (t->shape[i] == JL_SHAPE_BOX) {
      snprintf(name, sizeof name, "box_%d", nm);
      bad = jl_box_mesh(&meshes[nm], t->size + 3 * i, name);
    } else {
      snprintf(name, sizeof name, "plane_%d", nm);
      bad = jl_plane_mesh(&meshes[nm], plane_size, name);
    }
    ++nm;
    if (bad) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "trajectory: out of memory for meshes");
      goto done;
    }
    mesh_of[i] = nm - 1;
  }

  jl_buf_printf(&js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"jostle\"},\"scene\":0,"
                "\"scenes\":[{\"nodes\":[0]}],\"materials\":[{\"name\":\"default\","
                "\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.8,0.8,0.8,1],\"metallicFactor\":0,"
                "\"roughnessFactor\":0.8}}],\"meshes\":[");
  for (int k = 0; k < nm; ++k) {
    int acc[3];
    jl_gltf_mesh(&g, &meshes[k], acc);
    jl_buf_printf(&js, "%s{\"name\":\"%s\",\"primitives\":[{\"attributes\":{\"POSITION\":%d,\"NORMAL\":%d},"
                  "\"indices\":%d,\"material\":0}]}", k ? "," : "", meshes[k].name, acc[0], acc[1], acc[2]);
  }

  /* Nodes: the root, then one per body (node i + 1) with its pose at init. */
  jl_buf_printf(&js, "],\"nodes\":[{\"name\":\"jostle_scene\",\"children\":[");
  for (int i = 0; i < n; ++i) jl_buf_printf(&js, "%s%d", i ? "," : "", i + 1);
  jl_buf_printf(&js, "]}");
  for (int i = 0; i < n; ++i) {
    jl_quat q;
    if (t->shape[i] == JL_SHAPE_PLANE) {
      q = jl_quat_z_to(jl_v3_normalize(jl_v3(t->size[3 * i], t->size[3 * i + 1], t->size[3 * i + 2])));
    } else {
      q = jl_quat_normalize((jl_quat){t->quat0[4 * i], t->quat0[4 * i + 1], t->quat0[4 * i + 2],
                                      t->quat0[4 * i + 3]});
    }
    const double *p = t->pos0 + 3 * i;
    jl_buf_printf(&js, ",{\"name\":\"body_%d\",\"mesh\":%d,\"translation\":[%.9g,%.9g,%.9g],"
                  "\"rotation\":[%.9g,%.9g,%.9g,%.9g]}", i, mesh_of[i], (double)(float)p[0],
                  (double)(float)p[1], (double)(float)p[2], (double)(float)q.x, (double)(float)q.y,
                  (double)(float)q.z, (double)(float)q.w);
  }
  jl_buf_printf(&js, "]");

  /* Animation: one time accessor shared by every sampler; per dynamic body
   * a translation and a rotation accessor into two views of all keys. */
  int d = t->dynamic_count, F = t->frame_count;
  if (d > 0 && F > 0) {
    float *tf = malloc((size_t)F * sizeof *tf);
    float *pk = malloc(3 * (size_t)F * sizeof *pk), *rk = malloc(4 * (size_t)F * sizeof *rk);
    if (!tf || !pk || !rk) {
      free(tf); free(pk); free(rk);
      rc = jl_error_set(err, JL_ERR_NOMEM, "trajectory: out of memory for %d x %d keys", d, F);
      goto done;
    }
    for (int f = 0; f < F; ++f) tf[f] = (float)t->time[f];
    size_t tb = (size_t)F * sizeof *tf, pb = 3 * tb, qb = 4 * tb;
    int tv = jl_gltf_view(&g, jl_bin_add(&g.bin, tf, tb), tb, 0);
    int ta = jl_gltf_accessor(&g, tv, 0, JL_GL_FLOAT, F, "SCALAR", 1, &tf[0], &tf[F - 1]);
    size_t p0 = jl_bin_add(&g.bin, NULL, pb * (size_t)d), q0 = jl_bin_add(&g.bin, NULL, qb * (size_t)d);
    int pv = jl_gltf_view(&g, p0, pb * (size_t)d, 0), qv = jl_gltf_view(&g, q0, qb * (size_t)d, 0);
    jl_buf samplers = {0}, channels = {0};
    for (int k = 0; k < d && !g.bin.failed; ++k) {
      for (int f = 0; f < F; ++f) {
        size_t s = (size_t)d * f + k;
        for (int c = 0; c < 3; ++c) pk[3 * f + c] = t->pos[3 * s + c];
        /* glTF's quaternions are (x, y, z, w) */
        for (int c = 0; c < 4; ++c) rk[4 * f + c] = t->quat[4 * s + (c + 1) % 4];
      }
      memcpy(g.bin.data + p0 + pb * (size_t)k, pk, pb);
      memcpy(g.bin.data + q0 + qb * (size_t)k, rk, qb);
      int pa = jl_gltf_accessor(&g, pv, pb * (size_t)k, JL_GL_FLOAT, F, "VEC3", 0, NULL, NULL);
      int qa = jl_gltf_accessor(&g, qv, qb * (size_t)k, JL_GL_FLOAT, F, "VEC4", 0, NULL, NULL);
      jl_buf_printf(&samplers, "%s{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"},"
                    "{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"}", k ? "," : "", ta, pa, ta, qa);
      jl_buf_printf(&channels, "%s{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"translation\"}},"
                    "{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"rotation\"}}", k ? "," : "", 2 * k,
                    t->dynamic[k] + 1, 2 * k + 1, t->dynamic[k] + 1);
    }
    free(tf); free(pk); free(rk);
    jl_buf_printf(&js, ",\"animations\":[{\"name\":\"trajectory\",\"samplers\":[%s],\"channels\":[%s]}]",
                  samplers.data ? samplers.data : "", channels.data ? channels.data : "");
    if (samplers.failed || channels.failed) js.failed = 1;
    jl_buf_free(&samplers);
    jl_buf_free(&channels);
  }
  jl_buf_printf(&js, ",\"accessors\":[%s],\"bufferViews\":[%s],\"buffers\":[{\"byteLength\":%zu}]}",
                g.accessors.data ? g.accessors.data : "", g.views.data ? g.views.data : "", g.bin.len);
  if (js.failed || g.bin.failed || g.views.failed || g.accessors.failed) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory building the trajectory", path);
    goto done;
  }
  /* header, JSON chunk padded with spaces, binary chunk padded with zeros */
  size_t jl = (js.len + 3) & ~(size_t)3, total = 12 + 8 + jl + 8 + g.bin.len;
  if (total > UINT32_MAX) {
    rc = jl_error_set(err, JL_ERR_INPUT,
                      "%s: the trajectory would take %.3g GB, more than a .glb holds (4 GiB): give a "
                      "larger --glb-every", path, (double)total / 1e9);
    goto done;
  }
  file = malloc(total);
  if (!file) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for %zu bytes", path, total);
    goto done;
  }
  memcpy(file, "glTF", 4);
  jl_put_u32(file + 4, 2);
  jl_put_u32(file + 8, (uint32_t)total);
  jl_put_u32(file + 12, (uint32_t)jl);
  memcpy(file + 16, "JSON", 4);
  memcpy(file + 20, js.data, js.len);
  memset(file + 20 + js.len, ' ', jl - js.len);
  jl_put_u32(file + 20 + jl, (uint32_t)g.bin.len);
  memcpy(file + 24 + jl, "BIN\0", 4);
  if (g.bin.len) memcpy(file + 28 + jl, g.bin.data, g.bin.len);
  rc = jl_file_write_atomic(path, file, total, err);

done:
  free(file);
  for (int k = 0; k < nm; ++k) jl_tmesh_free(&meshes[k]);
  free(meshes);
  free(refs);
  free(mesh_of);
  jl_buf_free(&js);
  jl_buf_free(&g.views);
  jl_buf_free(&g.accessors);
  free(g.bin.data);
  return rc;
}
