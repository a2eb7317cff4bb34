/* Trajectory recording and .glb export through assimp's C API. The aiScene
 * is built here with malloc and freed here; assimp copies it before export. */
#include "trajectory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <assimp/cexport.h>
#include <assimp/scene.h>

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

static void jl_set_name(struct aiString *s, const char *name) {
  size_t n = strlen(name);
  if (n >= sizeof s->data) n = sizeof s->data - 1;
  s->length = (ai_uint32)n;
  memcpy(s->data, name, n);
  s->data[n] = '\0';
}

static struct aiMesh *jl_mesh_alloc(unsigned nv, unsigned nf, const char *name) {
  struct aiMesh *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->mPrimitiveTypes = aiPrimitiveType_TRIANGLE;
  m->mNumVertices = nv;
  m->mNumFaces = nf;
  m->mVertices = calloc(nv, sizeof *m->mVertices);
  m->mNormals = calloc(nv, sizeof *m->mNormals);
  m->mFaces = calloc(nf, sizeof *m->mFaces);
  unsigned *idx = calloc(3 * (size_t)nf, sizeof *idx);
  if (!m->mVertices || !m->mNormals || !m->mFaces || !idx) {
    free(m->mVertices);
    free(m->mNormals);
    free(m->mFaces);
    free(idx);
    free(m);
    return NULL;
  }
  for (unsigned f = 0; f < nf; ++f) {
    m->mFaces[f].mNumIndices = 3;
    m->mFaces[f].mIndices = idx + 3 * f;
  }
  jl_set_name(&m->mName, name);
  return m;
}

static void jl_mesh_free(struct aiMesh *m) {
  if (!m) return;
  if (m->mFaces) free(m->mFaces[0].mIndices);
  free(m->mFaces);
  free(m->mVertices);
  free(m->mNormals);
  free(m);
}

static void jl_tri(struct aiMesh *m, unsigned f, unsigned a, unsigned b, unsigned c) {
  m->mFaces[f].mIndices[0] = a;
  m->mFaces[f].mIndices[1] = b;
  m->mFaces[f].mIndices[2] = c;
}

static struct aiMesh *jl_sphere_mesh(double r, const char *name) {
  const int S = JL_SPHERE_SLICES, T = JL_SPHERE_STACKS;
  unsigned nv = (unsigned)((S + 1) * (T + 1)), nf = (unsigned)(2 * S * T);
  struct aiMesh *m = jl_mesh_alloc(nv, nf, name);
  if (!m) return NULL;
  for (int i = 0; i <= T; ++i) {
    double th = JL_PI * i / T;
    for (int j = 0; j <= S; ++j) {
      double ph = 2.0 * JL_PI * j / S;
      unsigned v = (unsigned)(i * (S + 1) + j);
      double nx = sin(th) * cos(ph), ny = sin(th) * sin(ph), nz = cos(th);
      m->mNormals[v].x = (ai_real)nx;
      m->mNormals[v].y = (ai_real)ny;
      m->mNormals[v].z = (ai_real)nz;
      m->mVertices[v].x = (ai_real)(r * nx);
      m->mVertices[v].y = (ai_real)(r * ny);
      m->mVertices[v].z = (ai_real)(r * nz);
    }
  }
  unsigned f = 0;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < S; ++j) {
      unsigned a = (unsigned)(i * (S + 1) + j), b = a + (unsigned)(S + 1);
      jl_tri(m, f++, a, b, a + 1);
      jl_tri(m, f++, a + 1, b, b + 1);
    }
  return m;
}

/* Box: 4 vertices per face so each face has its own normal. */
static struct aiMesh *jl_box_mesh(const double h[3], const char *name) {
  struct aiMesh *m = jl_mesh_alloc(24, 12, name);
  if (!m) return NULL;
  unsigned v = 0, f = 0;
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
        m->mVertices[v + k].x = (ai_real)p[0];
        m->mVertices[v + k].y = (ai_real)p[1];
        m->mVertices[v + k].z = (ai_real)p[2];
        m->mNormals[v + k].x = (ai_real)n[0];
        m->mNormals[v + k].y = (ai_real)n[1];
        m->mNormals[v + k].z = (ai_real)n[2];
      }
      jl_tri(m, f++, v, v + 1, v + 2);
      jl_tri(m, f++, v, v + 2, v + 3);
      v += 4;
    }
  return m;
}

/* A square of edge e in the local xy plane, thin along z, seen from both
 * sides. */
static struct aiMesh *jl_plane_mesh(double e, const char *name) {
  struct aiMesh *m = jl_mesh_alloc(8, 4, name);
  if (!m) return NULL;
  double c[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (int side = 0; side < 2; ++side)
    for (int k = 0; k < 4; ++k) {
      unsigned v = (unsigned)(4 * side + k);
      m->mVertices[v].x = (ai_real)(0.5 * e * c[k][0]);
      m->mVertices[v].y = (ai_real)(0.5 * e * c[k][1]);
      m->mVertices[v].z = (ai_real)(side == 0 ? 0.0 : -1e-3 * e);
      m->mNormals[v].z = (ai_real)(side == 0 ? 1.0 : -1.0);
    }
  jl_tri(m, 0, 0, 1, 2);
  jl_tri(m, 1, 0, 2, 3);
  jl_tri(m, 2, 4, 6, 5);
  jl_tri(m, 3, 4, 7, 6);
  return m;
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

static void jl_set_transform(struct aiMatrix4x4 *M, jl_vec3 p, jl_quat q) {
  jl_vec3 ax[3];
  jl_quat_to_axes(q, ax);
  M->a1 = (ai_real)ax[0].x; M->a2 = (ai_real)ax[1].x; M->a3 = (ai_real)ax[2].x; M->a4 = (ai_real)p.x;
  M->b1 = (ai_real)ax[0].y; M->b2 = (ai_real)ax[1].y; M->b3 = (ai_real)ax[2].y; M->b4 = (ai_real)p.y;
  M->c1 = (ai_real)ax[0].z; M->c2 = (ai_real)ax[1].z; M->c3 = (ai_real)ax[2].z; M->c4 = (ai_real)p.z;
  M->d1 = 0; M->d2 = 0; M->d3 = 0; M->d4 = 1;
}

/* ---- the scene ---- */

typedef struct jl_glb_build {
  struct aiScene scene;
  struct aiNode root;
  struct aiNode *nodes;
  struct aiNode **children;
  unsigned *mesh_of;       /* per body */
  struct aiMesh **meshes;
  struct aiMaterial material;
  struct aiMaterial *materials[1];
  struct aiAnimation anim;
  struct aiAnimation *anims[1];
  struct aiNodeAnim *channels;
  struct aiNodeAnim **channel_ptrs;
  struct aiVectorKey *pkeys;
  struct aiQuatKey *rkeys;
} jl_glb_build;

static void jl_glb_free(jl_glb_build *g) {
  for (unsigned i = 0; i < g->scene.mNumMeshes; ++i) jl_mesh_free(g->meshes[i]);
  free(g->meshes);
  free(g->nodes);
  free(g->children);
  free(g->mesh_of);
  free(g->channels);
  free(g->channel_ptrs);
  free(g->pkeys);
  free(g->rkeys);
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

int jl_trajectory_write_glb(const jl_trajectory *t, const char *path, jl_error *err) {
  int n = t->body_count;
  if (n == 0) return jl_error_set(err, JL_ERR_INPUT, "trajectory: no bodies to write");
  jl_glb_build g;
  memset(&g, 0, sizeof g);
  int rc = JL_OK;
  g.nodes = calloc((size_t)n, sizeof *g.nodes);
  g.children = calloc((size_t)n, sizeof *g.children);
  g.mesh_of = calloc((size_t)n, sizeof *g.mesh_of);
  g.meshes = calloc((size_t)n, sizeof *g.meshes);
  jl_size_ref *refs = calloc((size_t)n, sizeof *refs);
  if (!g.nodes || !g.children || !g.mesh_of || !g.meshes || !refs) {
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
  int nm = 0;
  for (int i = 0; i < n; ++i) refs[i] = (jl_size_ref){i, t};
  qsort(refs, (size_t)n, sizeof *refs, jl_cmp_size);
  char name[64];
  for (int r = 0; r < n; ++r) {
    int i = refs[r].body;
    if (t->shape[i] != JL_SHAPE_PLANE && r > 0 && jl_same_size(t, i, refs[r - 1].body)) {
      g.mesh_of[i] = g.mesh_of[refs[r - 1].body];
      continue;
    }
    struct aiMesh *m = NULL;
    if (t->shape[i] == JL_SHAPE_SPHERE) {
      snprintf(name, sizeof name, "sphere_%d", nm);
      m = jl_sphere_mesh(t->size[3 * i], name);
    } else if (t->shape[i] == JL_SHAPE_BOX) {
      snprintf(name, sizeof name, "box_%d", nm);
      m = jl_box_mesh(t->size + 3 * i, name);
    } else {
      snprintf(name, sizeof name, "plane_%d", nm);
      m = jl_plane_mesh(plane_size, name);
    }
    if (!m) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "trajectory: out of memory for meshes");
      goto done;
    }
    g.meshes[nm] = m;
    g.mesh_of[i] = (unsigned)nm;
    nm++;
    g.scene.mNumMeshes = (unsigned)nm;
  }

  /* Nodes: one per body, under the root, with its pose at init. */
  jl_set_name(&g.root.mName, "jostle_scene");
  jl_set_transform(&g.root.mTransformation, jl_v3(0, 0, 0), jl_quat_identity());
  for (int i = 0; i < n; ++i) {
    struct aiNode *nd = &g.nodes[i];
    snprintf(name, sizeof name, "body_%d", i);
    jl_set_name(&nd->mName, name);
    jl_vec3 p = jl_v3(t->pos0[3 * i], t->pos0[3 * i + 1], t->pos0[3 * i + 2]);
    jl_quat q;
    if (t->shape[i] == JL_SHAPE_PLANE) {
      q = jl_quat_z_to(jl_v3_normalize(jl_v3(t->size[3 * i], t->size[3 * i + 1], t->size[3 * i + 2])));
    } else {
      q.w = t->quat0[4 * i];
      q.x = t->quat0[4 * i + 1];
      q.y = t->quat0[4 * i + 2];
      q.z = t->quat0[4 * i + 3];
    }
    jl_set_transform(&nd->mTransformation, p, q);
    nd->mParent = &g.root;
    nd->mNumMeshes = 1;
    nd->mMeshes = &g.mesh_of[i];
    g.children[i] = nd;
  }
  g.root.mNumChildren = (unsigned)n;
  g.root.mChildren = g.children;

  g.materials[0] = &g.material;
  g.scene.mRootNode = &g.root;
  g.scene.mMeshes = g.meshes;
  g.scene.mNumMaterials = 1;
  g.scene.mMaterials = g.materials;

  /* Animation: a translation and a rotation key per frame per dynamic body. */
  int d = t->dynamic_count, F = t->frame_count;
  if (d > 0 && F > 0) {
    g.channels = calloc((size_t)d, sizeof *g.channels);
    g.channel_ptrs = calloc((size_t)d, sizeof *g.channel_ptrs);
    g.pkeys = calloc((size_t)d * (size_t)F, sizeof *g.pkeys);
    g.rkeys = calloc((size_t)d * (size_t)F, sizeof *g.rkeys);
    if (!g.channels || !g.channel_ptrs || !g.pkeys || !g.rkeys) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "trajectory: out of memory for %d x %d keys", d, F);
      goto done;
    }
    for (int k = 0; k < d; ++k) {
      struct aiNodeAnim *ch = &g.channels[k];
      ch->mNodeName = g.nodes[t->dynamic[k]].mName;
      ch->mNumPositionKeys = (unsigned)F;
      ch->mNumRotationKeys = (unsigned)F;
      ch->mPositionKeys = g.pkeys + (size_t)k * F;
      ch->mRotationKeys = g.rkeys + (size_t)k * F;
      for (int f = 0; f < F; ++f) {
        size_t s = (size_t)d * f + k;
        /* times in seconds: one tick per second */
        ch->mPositionKeys[f].mTime = t->time[f];
        ch->mPositionKeys[f].mValue.x = t->pos[3 * s];
        ch->mPositionKeys[f].mValue.y = t->pos[3 * s + 1];
        ch->mPositionKeys[f].mValue.z = t->pos[3 * s + 2];
        ch->mRotationKeys[f].mTime = t->time[f];
        ch->mRotationKeys[f].mValue.w = t->quat[4 * s];
        ch->mRotationKeys[f].mValue.x = t->quat[4 * s + 1];
        ch->mRotationKeys[f].mValue.y = t->quat[4 * s + 2];
        ch->mRotationKeys[f].mValue.z = t->quat[4 * s + 3];
      }
      g.channel_ptrs[k] = ch;
    }
    jl_set_name(&g.anim.mName, "trajectory");
    g.anim.mTicksPerSecond = 1.0;
    g.anim.mDuration = t->time[F - 1];
    g.anim.mNumChannels = (unsigned)d;
    g.anim.mChannels = g.channel_ptrs;
    g.anims[0] = &g.anim;
    g.scene.mNumAnimations = 1;
    g.scene.mAnimations = g.anims;
  }

  const struct aiExportDataBlob *blob = aiExportSceneToBlob(&g.scene, "glb2", 0);
  if (!blob) {
    rc = jl_error_set(err, JL_ERR_IO, "%s: assimp could not export the trajectory as glb", path);
    goto done;
  }
  rc = jl_file_write_atomic(path, blob->data, blob->size, err);
  aiReleaseExportBlob(blob);

done:
  free(refs);
  jl_glb_free(&g);
  return rc;
}
