#include "mesh.h"

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "file_util.h"
#include "mesh_repair.h"
#include "mesh_scan.h"

/* Relative sizes, against the bounding box diagonal or a triangle's longest
 * edge: below this a triangle has no area and two triangles do not cross. */
#define JL_MESH_AREA_EPS 1e-12
#define JL_MESH_TOUCH_EPS 1e-9
#define JL_MESH_PI 3.14159265358979323846L

double jl_units_scale(const char *units) {
  if (!units) return 0.0;
  if (strcmp(units, "mm") == 0) return 1.0;
  if (strcmp(units, "cm") == 0) return 10.0;
  if (strcmp(units, "m") == 0) return 1000.0;
  if (strcmp(units, "in") == 0) return 25.4;
  return 0.0;
}

void jl_mesh_free(jl_mesh *m) {
  if (!m) return;
  free(m->vertices);
  free(m->triangles);
  memset(m, 0, sizeof *m);
}

int jl_mesh_from_arrays(jl_mesh *m, const double *vertices, int n_vertices, const int *triangles,
                        int n_triangles, jl_error *err) {
  memset(m, 0, sizeof *m);
  m->vertices = malloc((size_t)(n_vertices > 0 ? n_vertices : 1) * 3 * sizeof *m->vertices);
  m->triangles = malloc((size_t)(n_triangles > 0 ? n_triangles : 1) * 3 * sizeof *m->triangles);
  if (!m->vertices || !m->triangles) {
    jl_mesh_free(m);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for a mesh of %d triangles", n_triangles);
  }
  if (n_vertices > 0) memcpy(m->vertices, vertices, (size_t)n_vertices * 3 * sizeof *vertices);
  if (n_triangles > 0) memcpy(m->triangles, triangles, (size_t)n_triangles * 3 * sizeof *triangles);
  m->n_vertices = n_vertices;
  m->n_triangles = n_triangles;
  return JL_OK;
}

/* ---- reading ---- */

typedef struct jl_weld_item {
  double p[3];
  int index;
} jl_weld_item;

static int jl_cmp_vertex(const void *a, const void *b) {
  const jl_weld_item *x = a, *y = b;
  for (int k = 0; k < 3; ++k)
    if (x->p[k] != y->p[k]) return x->p[k] < y->p[k] ? -1 : 1;
  return x->index - y->index;
}

/* Merges vertices with identical coordinates (across the file's meshes too),
 * so triangles share edges by index. */
static int jl_weld(jl_mesh *m, jl_error *err) {
  int n = m->n_vertices;
  jl_weld_item *it = malloc((size_t)(n > 0 ? n : 1) * sizeof *it);
  int *map = malloc((size_t)(n > 0 ? n : 1) * sizeof *map);
  double *nv = malloc((size_t)(n > 0 ? n : 1) * 3 * sizeof *nv);
  if (!it || !map || !nv) {
    free(it); free(map); free(nv);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory welding %d vertices", n);
  }
  for (int i = 0; i < n; ++i) {
    memcpy(it[i].p, m->vertices + 3 * i, sizeof it[i].p);
    it[i].index = i;
  }
  qsort(it, (size_t)n, sizeof *it, jl_cmp_vertex);
  int u = -1;
  for (int i = 0; i < n; ++i) {
    if (u < 0 || it[i].p[0] != nv[3 * u] || it[i].p[1] != nv[3 * u + 1] ||
        it[i].p[2] != nv[3 * u + 2]) {
      ++u;
      memcpy(nv + 3 * u, it[i].p, sizeof it[i].p);
    }
    map[it[i].index] = u;
  }
  for (int i = 0; i < 3 * m->n_triangles; ++i) m->triangles[i] = map[m->triangles[i]];
  free(m->vertices);
  m->vertices = nv;
  m->n_vertices = u + 1;
  free(it);
  free(map);
  return JL_OK;
}

/* The file as a whole, before assimp sees it: a regular file of at most
 * JL_FILE_MAX_BYTES whose declared counts fit it (jl_mesh_scan). */
static int jl_mesh_precheck(const char *path, jl_error *err) {
  char *data = NULL;
  size_t len = 0;
  int rc = jl_file_read_all(path, &data, &len, err);
  if (rc) return rc;
  if (len == 0) rc = jl_error_set(err, JL_ERR_INPUT, "%s: empty file (no triangles)", path);
  else rc = jl_mesh_scan(path, data, len, err);
  free(data);
  return rc;
}

/* What assimp hands back, checked before use (both as read and after the
 * post-processing): counts within the limits, arrays present, every face
 * with an index (assimp's triangulation asserts on an empty face) and every
 * index below its mesh's vertex count. */
static int jl_mesh_check_scene(const struct aiScene *sc, const char *path, long *nv, long *nt,
                               jl_error *err) {
  *nv = *nt = 0;
  if (sc->mNumMeshes > 0 && !sc->mMeshes)
    return jl_error_set(err, JL_ERR_INPUT, "%s: cannot read the mesh: no mesh data", path);
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) {
    const struct aiMesh *am = sc->mMeshes[i];
    if (!am || (am->mNumVertices && !am->mVertices) || (am->mNumFaces && !am->mFaces))
      return jl_error_set(err, JL_ERR_INPUT, "%s: cannot read the mesh: mesh %u has no data", path, i);
    *nv += am->mNumVertices;
    for (unsigned f = 0; f < am->mNumFaces; ++f) {
      const struct aiFace *fc = &am->mFaces[f];
      if (fc->mNumIndices == 0 || !fc->mIndices)
        return jl_error_set(err, JL_ERR_INPUT, "%s: cannot read the mesh: face %u has no indices", path, f);
      for (unsigned k = 0; k < fc->mNumIndices; ++k)
        if (fc->mIndices[k] >= am->mNumVertices)
          return jl_error_set(err, JL_ERR_INPUT,
                              "%s: face %u refers to vertex %u, the mesh has %u vertices", path, f,
                              fc->mIndices[k], am->mNumVertices);
      *nt += fc->mNumIndices == 3;
    }
    if (*nv > JL_MESH_VERTICES_MAX || *nt > JL_MESH_TRIANGLES_MAX)
      return jl_error_set(err, JL_ERR_INPUT, "%s: too large: more than %ld triangles or %ld vertices",
                          path, JL_MESH_TRIANGLES_MAX, JL_MESH_VERTICES_MAX);
  }
  return JL_OK;
}

/* A finite coordinate within JL_MESH_COORD_MAX_MM once scaled to mm. */
static int jl_mesh_check_point(const double p[3], int v, double scale, const char *path, jl_error *err) {
  for (int k = 0; k < 3; ++k) {
    if (!isfinite(p[k]))
      return jl_error_set(err, JL_ERR_INPUT, "%s: vertex %d has a non-finite coordinate (%g %g %g)",
                          path, v, p[0], p[1], p[2]);
    if (!(fabs(p[k] * scale) < JL_MESH_COORD_MAX_MM))
      return jl_error_set(err, JL_ERR_INPUT,
                          "%s: vertex %d has a coordinate out of range (%g): |coordinate| must be below "
                          "%g in the file's units (%g mm, 10 km; see --units)",
                          path, v, p[k], JL_MESH_COORD_MAX_MM / scale, JL_MESH_COORD_MAX_MM);
  }
  return JL_OK;
}

int jl_mesh_load(jl_mesh *m, const char *path, double scale, jl_mesh_report *rep, jl_error *err) {
  memset(m, 0, sizeof *m);
  if (!(scale > 0) || !isfinite(scale))
    return jl_error_set(err, JL_ERR_INPUT, "%s: the unit scale must be a finite number > 0", path);
  int rc = jl_mesh_precheck(path, err);
  if (rc) return rc;
  /* Read as is, checked, then read again post-processed: a face index past
   * the vertices is reported instead of followed by the processing steps
   * (assimp's ValidateDataStructure runs before them too). */
  const struct aiScene *sc = aiImportFile(path, 0);
  if (!sc) {
    return jl_error_set(err, JL_ERR_INPUT, "%s: cannot read the mesh: %s", path,
                        aiGetErrorString());
  }
  long nv = 0, nt = 0;
  rc = jl_mesh_check_scene(sc, path, &nv, &nt, err);
  if (rc) {
    aiReleaseImport(sc);
    return rc;
  }
  /* Not aiApplyPostProcessing on this scene: when a step fails, assimp 5.2.5
   * frees the scene and then releases it again (an empty ASCII STL crashed). */
  aiReleaseImport(sc);
  sc = aiImportFile(path, aiProcess_ValidateDataStructure | aiProcess_Triangulate |
                            aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices |
                            aiProcess_SortByPType);
  if (!sc)
    return jl_error_set(err, JL_ERR_INPUT, "%s: cannot read the mesh: %s", path, aiGetErrorString());
  rc = jl_mesh_check_scene(sc, path, &nv, &nt, err);
  if (!rc && nt == 0) rc = jl_error_set(err, JL_ERR_INPUT, "%s: no triangles in the file", path);
  if (rc) {
    aiReleaseImport(sc);
    return rc;
  }
  m->vertices = malloc((size_t)nv * 3 * sizeof *m->vertices);
  m->triangles = malloc((size_t)nt * 3 * sizeof *m->triangles);
  if (!m->vertices || !m->triangles) {
    aiReleaseImport(sc);
    jl_mesh_free(m);
    return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for %ld triangles", path, nt);
  }
  int base = 0, t = 0;
  for (unsigned i = 0; i < sc->mNumMeshes && !rc; ++i) {
    const struct aiMesh *am = sc->mMeshes[i];
    for (unsigned v = 0; v < am->mNumVertices && !rc; ++v) {
      double p[3] = {am->mVertices[v].x, am->mVertices[v].y, am->mVertices[v].z};
      rc = jl_mesh_check_point(p, base + (int)v, scale, path, err);
      for (int k = 0; k < 3; ++k) m->vertices[3 * (base + v) + k] = p[k] * scale;
    }
    for (unsigned f = 0; f < am->mNumFaces && !rc; ++f) {
      const struct aiFace *fc = &am->mFaces[f];
      if (fc->mNumIndices != 3) continue;
      for (int k = 0; k < 3; ++k) m->triangles[3 * t + k] = base + (int)fc->mIndices[k];
      ++t;
    }
    base += (int)am->mNumVertices;
  }
  aiReleaseImport(sc);
  if (rc) {
    jl_mesh_free(m);
    return rc;
  }
  m->n_vertices = (int)nv;
  m->n_triangles = (int)nt;
  rc = jl_weld(m, err);
  if (!rc) rc = jl_mesh_validate_repair(m, path, JL_MESH_REPAIR_TOL, rep, err);
  if (rc) jl_mesh_free(m);
  return rc;
}

/* What jl_mesh_load does after assimp, for arrays: counts within the
 * limits, every index a vertex, finite coordinates within range. */
int jl_mesh_load_arrays(jl_mesh *m, const double *vertices, int n_vertices, const int *triangles,
                        int n_triangles, double scale, const char *name, jl_mesh_report *rep,
                        jl_error *err) {
  memset(m, 0, sizeof *m);
  if (!(scale > 0) || !isfinite(scale))
    return jl_error_set(err, JL_ERR_INPUT, "%s: the unit scale must be a finite number > 0", name);
  if (!vertices || !triangles || n_vertices < 3 || n_triangles < 1)
    return jl_error_set(err, JL_ERR_INPUT, "%s: no triangles given", name);
  if (n_vertices > JL_MESH_VERTICES_MAX || n_triangles > JL_MESH_TRIANGLES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "%s: too large: more than %ld triangles or %ld vertices",
                        name, JL_MESH_TRIANGLES_MAX, JL_MESH_VERTICES_MAX);
  for (long i = 0; i < 3L * n_triangles; ++i)
    if (triangles[i] < 0 || triangles[i] >= n_vertices)
      return jl_error_set(err, JL_ERR_INPUT, "%s: triangle %ld refers to vertex %d, the mesh has %d vertices",
                          name, i / 3, triangles[i], n_vertices);
  for (int v = 0; v < n_vertices; ++v) {
    int rc = jl_mesh_check_point(vertices + 3 * v, v, scale, name, err);
    if (rc) return rc;
  }
  int rc = jl_mesh_from_arrays(m, vertices, n_vertices, triangles, n_triangles, err);
  if (rc) return rc;
  for (long i = 0; i < 3L * n_vertices; ++i) m->vertices[i] *= scale;
  rc = jl_weld(m, err);
  if (!rc) rc = jl_mesh_validate_repair(m, name, JL_MESH_REPAIR_TOL, rep, err);
  if (rc) jl_mesh_free(m);
  return rc;
}

/* ---- measures ---- */

double jl_mesh_volume(const jl_mesh *m) {
  /* Sum of tetrahedra from the bounding box centre, to keep the terms small. */
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  double c[3] = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};
  long double vol = 0.0L;
  for (int t = 0; t < m->n_triangles; ++t) {
    const int *tr = m->triangles + 3 * t;
    double a[3], b[3], d[3];
    for (int k = 0; k < 3; ++k) {
      a[k] = m->vertices[3 * tr[0] + k] - c[k];
      b[k] = m->vertices[3 * tr[1] + k] - c[k];
      d[k] = m->vertices[3 * tr[2] + k] - c[k];
    }
    vol += (long double)a[0] * ((long double)b[1] * d[2] - (long double)b[2] * d[1]) -
           (long double)a[1] * ((long double)b[0] * d[2] - (long double)b[2] * d[0]) +
           (long double)a[2] * ((long double)b[0] * d[1] - (long double)b[1] * d[0]);
  }
  return (double)(vol / 6.0L);
}

void jl_mesh_bounds(const jl_mesh *m, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; ++k) {
    lo[k] = m->n_vertices ? DBL_MAX : 0.0;
    hi[k] = m->n_vertices ? -DBL_MAX : 0.0;
  }
  for (int v = 0; v < m->n_vertices; ++v)
    for (int k = 0; k < 3; ++k) {
      double x = m->vertices[3 * v + k];
      if (x < lo[k]) lo[k] = x;
      if (x > hi[k]) hi[k] = x;
    }
}

/* ---- validation ---- */

typedef struct jl_half_edge {
  int lo, hi;              /* vertex indices, lo < hi */
  int tri, forward;        /* forward: the triangle runs lo -> hi */
} jl_half_edge;

static int jl_cmp_edge(const void *a, const void *b) {
  const jl_half_edge *p = a, *q = b;
  if (p->lo != q->lo) return p->lo < q->lo ? -1 : 1;
  if (p->hi != q->hi) return p->hi < q->hi ? -1 : 1;
  return p->tri < q->tri ? -1 : p->tri > q->tri;
}

static void jl_sub3(const double *a, const double *b, double *o) {
  o[0] = a[0] - b[0];
  o[1] = a[1] - b[1];
  o[2] = a[2] - b[2];
}
static void jl_cross3(const double *a, const double *b, double *o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}
static double jl_dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static int jl_zero_area(const jl_mesh *m, const int *tr) {
  const double *a = m->vertices + 3 * tr[0], *b = m->vertices + 3 * tr[1], *c = m->vertices + 3 * tr[2];
  double e0[3], e1[3], e2[3], n[3];
  jl_sub3(b, a, e0);
  jl_sub3(c, a, e1);
  jl_sub3(c, b, e2);
  jl_cross3(e0, e1, n);
  double l = fmax(jl_dot3(e0, e0), fmax(jl_dot3(e1, e1), jl_dot3(e2, e2)));
  return sqrt(jl_dot3(n, n)) <= JL_MESH_AREA_EPS * l;
}

/* Triangles with no area whose removal would leave one of their edges with
 * a single triangle: with repairs they stay, to be flipped away as slivers
 * (a vertex on its neighbour's edge, as rounding leaves it). */
static int jl_needed_zero_area(const jl_mesh *m, char *need, jl_error *err) {
  int n = m->n_triangles, ne = 0;
  jl_half_edge *e = malloc((size_t)(3 * n > 0 ? 3 * n : 1) * sizeof *e);
  if (!e) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d edges", 3 * n);
  for (int t = 0; t < n; ++t) {
    const int *tr = m->triangles + 3 * t;
    need[t] = 0;
    if (tr[0] == tr[1] || tr[1] == tr[2] || tr[0] == tr[2]) continue;
    for (int k = 0; k < 3; ++k) {
      int a = tr[k], b = tr[(k + 1) % 3];
      e[ne++] = (jl_half_edge){a < b ? a : b, a < b ? b : a, t, a < b};
    }
  }
  qsort(e, (size_t)ne, sizeof *e, jl_cmp_edge);
  for (int i = 0; i < ne;) {
    int j = i + 1;
    while (j < ne && e[j].lo == e[i].lo && e[j].hi == e[i].hi) ++j;
    if (j - i == 2)
      for (int s = i; s < j; ++s) need[e[s].tri] = 1;
    i = j;
  }
  for (int t = 0; t < n; ++t)
    if (need[t]) need[t] = (char)jl_zero_area(m, m->triangles + 3 * t);
  free(e);
  return JL_OK;
}

/* Drops triangles with a repeated vertex or no area (but those in need, if
 * given); orig (may be NULL) follows the triangles. */
static int jl_drop_degenerate(jl_mesh *m, int *orig, const char *need) {
  int kept = 0;
  for (int t = 0; t < m->n_triangles; ++t) {
    const int *tr = m->triangles + 3 * t;
    int bad = tr[0] == tr[1] || tr[1] == tr[2] || tr[0] == tr[2];
    if (!bad && !(need && need[t])) bad = jl_zero_area(m, tr);
    if (!bad) {
      memmove(m->triangles + 3 * kept, tr, 3 * sizeof *tr);
      if (orig) orig[kept] = orig[t];
      ++kept;
    }
  }
  int dropped = m->n_triangles - kept;
  m->n_triangles = kept;
  return dropped;
}

/* Neighbour across each edge and whether it runs the shared edge the same
 * way (then one of the two must be flipped). */
static int jl_adjacency(const jl_mesh *m, const char *name, int *nbr, char *same, jl_error *err) {
  int ne = 3 * m->n_triangles;
  jl_half_edge *e = malloc((size_t)ne * sizeof *e);
  if (!e) return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for %d edges", name, ne);
  for (int t = 0; t < m->n_triangles; ++t)
    for (int k = 0; k < 3; ++k) {
      int a = m->triangles[3 * t + k], b = m->triangles[3 * t + (k + 1) % 3];
      jl_half_edge *h = &e[3 * t + k];
      h->lo = a < b ? a : b;
      h->hi = a < b ? b : a;
      h->tri = t;
      h->forward = a < b;
    }
  qsort(e, (size_t)ne, sizeof *e, jl_cmp_edge);
  int open = 0, multi = 0, first_bad = -1, rc = JL_OK;
  for (int i = 0; i < ne;) {
    int j = i + 1;
    while (j < ne && e[j].lo == e[i].lo && e[j].hi == e[i].hi) ++j;
    if (j - i == 2) {
      for (int s = 0; s < 2; ++s) {
        const jl_half_edge *h = &e[i + s], *o = &e[i + 1 - s];
        const int *tr = m->triangles + 3 * h->tri;
        for (int k = 0; k < 3; ++k) {
          int a = tr[k], b = tr[(k + 1) % 3];
          if ((a == h->lo && b == h->hi) || (a == h->hi && b == h->lo)) {
            nbr[3 * h->tri + k] = o->tri;
            same[3 * h->tri + k] = (char)(h->forward == o->forward);
          }
        }
      }
    } else {
      if (j - i == 1) ++open;
      else ++multi;
      if (first_bad < 0) first_bad = i;
    }
    i = j;
  }
  if (open || multi) {
    const double *p = m->vertices + 3 * e[first_bad].lo, *q = m->vertices + 3 * e[first_bad].hi;
    if (open)
      rc = jl_error_set(err, JL_ERR_INPUT,
                        "%s: open surface: %d edge(s) belong to only one triangle, e.g. "
                        "(%g, %g, %g)-(%g, %g, %g); a trunk must be closed",
                        name, open, p[0], p[1], p[2], q[0], q[1], q[2]);
    else
      rc = jl_error_set(err, JL_ERR_INPUT,
                        "%s: not a 2-manifold: %d edge(s) belong to more than two triangles, e.g. "
                        "(%g, %g, %g)-(%g, %g, %g)",
                        name, multi, p[0], p[1], p[2], q[0], q[1], q[2]);
  }
  free(e);
  return rc;
}

static double jl_tri_volume6(const jl_mesh *m, int t, const double c[3]) {
  const int *tr = m->triangles + 3 * t;
  double a[3], b[3], d[3], n[3];
  jl_sub3(m->vertices + 3 * tr[0], c, a);
  jl_sub3(m->vertices + 3 * tr[1], c, b);
  jl_sub3(m->vertices + 3 * tr[2], c, d);
  jl_cross3(b, d, n);
  return jl_dot3(a, n);
}

/* Solid angle of triangle t seen from p, signed by its (possibly flipped) orientation. */
static double jl_solid_angle(const jl_mesh *m, int t, const double *p, int flipped) {
  double a[3], b[3], c[3], bc[3];
  jl_sub3(m->vertices + 3 * m->triangles[3 * t], p, a);
  jl_sub3(m->vertices + 3 * m->triangles[3 * t + (flipped ? 2 : 1)], p, b);
  jl_sub3(m->vertices + 3 * m->triangles[3 * t + (flipped ? 1 : 2)], p, c);
  double la = sqrt(jl_dot3(a, a)), lb = sqrt(jl_dot3(b, b)), lc = sqrt(jl_dot3(c, c));
  jl_cross3(b, c, bc);
  return 2.0 * atan2(jl_dot3(a, bc), la * lb * lc + jl_dot3(a, b) * lc + jl_dot3(b, c) * la +
                                       jl_dot3(c, a) * lb);
}

/* A piece inside an odd number of other pieces bounds a cavity (an obstacle
 * within the trunk): it must face into the obstacle, so it is turned to
 * enclose negative volume. Nesting is read from the winding number of one
 * of its vertices around each other piece (pieces do not cross). */
static int jl_orient_nested(const jl_mesh *m, const char *name, const int *comp, int nc, char *flip,
                            int *cavities, jl_error *err) {
  int n = m->n_triangles;
  int *first = malloc((size_t)nc * sizeof *first);
  char *invert = calloc((size_t)nc, 1);
  long double *w = malloc((size_t)nc * sizeof *w);
  if (!first || !invert || !w) {
    free(first); free(invert); free(w);
    return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", name);
  }
  for (int c = 0; c < nc; ++c) first[c] = -1;
  for (int t = 0; t < n; ++t)
    if (first[comp[t]] < 0) first[comp[t]] = t;
  for (int c = 0; c < nc; ++c) {
    const double *p = m->vertices + 3 * m->triangles[3 * first[c]];
    for (int d = 0; d < nc; ++d) w[d] = 0.0L;
    for (int t = 0; t < n; ++t)
      if (comp[t] != c) w[comp[t]] += jl_solid_angle(m, t, p, flip[t]);
    int depth = 0;
    for (int d = 0; d < nc; ++d) depth += d != c && w[d] > 2.0L * JL_MESH_PI;  /* winding > 1/2 */
    invert[c] = (char)(depth & 1);
    *cavities += depth & 1;
  }
  for (int t = 0; t < n; ++t) flip[t] ^= invert[comp[t]];
  free(first); free(invert); free(w);
  return JL_OK;
}

/* Breadth-first over each component: neighbours get the flip that makes
 * shared edges run opposite ways; then a component enclosing negative
 * volume is turned inside out. */
static int jl_orient(jl_mesh *m, const char *name, const int *nbr, const char *same, const int *orig,
                     jl_mesh_report *rep, jl_error *err) {
  int n = m->n_triangles;
  int *comp = malloc((size_t)n * sizeof *comp), *queue = malloc((size_t)n * sizeof *queue);
  char *flip = calloc((size_t)n, 1);
  if (!comp || !queue || !flip) {
    free(comp); free(queue); free(flip);
    return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", name);
  }
  for (int i = 0; i < n; ++i) comp[i] = -1;
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  double c[3] = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};
  int nc = 0, rc = JL_OK;
  for (int s = 0; s < n && !rc; ++s) {
    if (comp[s] >= 0) continue;
    int head = 0, tail = 0;
    queue[tail++] = s;
    comp[s] = nc;
    long double vol = 0.0L;
    while (head < tail && !rc) {
      int t = queue[head++];
      vol += flip[t] ? -jl_tri_volume6(m, t, c) : jl_tri_volume6(m, t, c);
      for (int k = 0; k < 3; ++k) {
        int u = nbr[3 * t + k];
        char want = (char)(flip[t] ^ same[3 * t + k]);
        if (comp[u] < 0) {
          comp[u] = nc;
          flip[u] = want;
          queue[tail++] = u;
        } else if (flip[u] != want) {
          const double *p = m->vertices + 3 * m->triangles[3 * t];
          rc = jl_error_set(err, JL_ERR_INPUT,
                            "%s: the surface cannot be oriented consistently (triangles %d and %d, "
                            "near %g, %g, %g)",
                            name, orig ? orig[t] : t, orig ? orig[u] : u, p[0], p[1], p[2]);
        }
      }
    }
    if (!rc && vol < 0)
      for (int i = 0; i < tail; ++i) flip[queue[i]] ^= 1;
    ++nc;
  }
  int cavities = 0;
  if (!rc && nc > 1) rc = jl_orient_nested(m, name, comp, nc, flip, &cavities, err);
  int flipped = 0;
  if (!rc)
    for (int t = 0; t < n; ++t)
      if (flip[t]) {
        int *tr = m->triangles + 3 * t;
        int x = tr[1];
        tr[1] = tr[2];
        tr[2] = x;
        ++flipped;
      }
  if (rep) {
    rep->components = nc;
    rep->cavities = cavities;
    rep->flipped_triangles = flipped;
  }
  free(comp); free(queue); free(flip);
  return rc;
}

/* ---- self-intersection ---- */

/* Projects a triangle on an axis. */
static void jl_project(const double *const p[3], const double *ax, double *lo, double *hi) {
  double a = jl_dot3(p[0], ax), b = jl_dot3(p[1], ax), c = jl_dot3(p[2], ax);
  *lo = fmin(a, fmin(b, c));
  *hi = fmax(a, fmax(b, c));
}

/* Separating axes of two triangles: both normals, the nine edge crosses and
 * the six in-plane edge normals (for coplanar pairs). The depth of their
 * crossing is the smallest overlap over the axes (the shortest move that
 * separates them); 0 when some axis shows a gap or an overlap no deeper
 * than eps. */
static double jl_tri_tri_depth(const double *const p[3], const double *const q[3], double eps) {
  double ep[3][3], eq[3][3], np[3], nq[3];
  for (int i = 0; i < 3; ++i) {
    jl_sub3(p[(i + 1) % 3], p[i], ep[i]);
    jl_sub3(q[(i + 1) % 3], q[i], eq[i]);
  }
  jl_cross3(ep[0], ep[1], np);
  jl_cross3(eq[0], eq[1], nq);
  double axes[17][3];
  int na = 0;
  memcpy(axes[na++], np, sizeof np);
  memcpy(axes[na++], nq, sizeof nq);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) jl_cross3(ep[i], eq[j], axes[na++]);
    jl_cross3(np, ep[i], axes[na++]);
    jl_cross3(nq, eq[i], axes[na++]);
  }
  double depth = DBL_MAX;
  for (int a = 0; a < na; ++a) {
    double l = sqrt(jl_dot3(axes[a], axes[a]));
    if (!(l > 1e-300)) continue;
    double ax[3] = {axes[a][0] / l, axes[a][1] / l, axes[a][2] / l};
    double plo, phi, qlo, qhi;
    jl_project(p, ax, &plo, &phi);
    jl_project(q, ax, &qlo, &qhi);
    double o = fmin(phi - qlo, qhi - plo);
    if (!(o > eps)) return 0.0;
    depth = fmin(depth, o);
  }
  return depth < DBL_MAX ? depth : 0.0;
}

/* How deep segment s0-s1 passes through the inside of triangle p: the least
 * of its ends' distances from the plane and the crossing point's distances
 * inside the edges; 0 when not deeper than eps (a pass near the rim).
 * x: the crossing point. */
static double jl_seg_tri_depth(const double *s0, const double *s1, const double *const p[3], double eps,
                               double *x) {
  double e0[3], e1[3], n[3];
  jl_sub3(p[1], p[0], e0);
  jl_sub3(p[2], p[0], e1);
  jl_cross3(e0, e1, n);
  double ln = sqrt(jl_dot3(n, n));
  if (!(ln > 0)) return 0.0;
  double w0[3], w1[3];
  jl_sub3(s0, p[0], w0);
  jl_sub3(s1, p[0], w1);
  double d0 = jl_dot3(w0, n) / ln, d1 = jl_dot3(w1, n) / ln;
  if (!((d0 > eps && d1 < -eps) || (d0 < -eps && d1 > eps))) return 0.0;
  double depth = fmin(fabs(d0), fabs(d1));
  double t = d0 / (d0 - d1);
  for (int k = 0; k < 3; ++k) x[k] = s0[k] + t * (s1[k] - s0[k]);
  for (int i = 0; i < 3; ++i) {
    double e[3], w[3], c[3];
    jl_sub3(p[(i + 1) % 3], p[i], e);
    jl_sub3(x, p[i], w);
    jl_cross3(e, w, c);
    /* distance of x from edge i, signed inward */
    double inside = jl_dot3(c, n) / ln / sqrt(jl_dot3(e, e));
    if (!(inside > eps)) return 0.0;
    depth = fmin(depth, inside);
  }
  return depth;
}

/* A point where two crossing triangles meet: the mean of the points where an
 * edge of one passes through the other (no margin); the centroid of p when
 * none does (a coplanar overlap). */
static void jl_crossing_point(const double *const p[3], const double *const q[3], double at[3]) {
  double sum[3] = {0, 0, 0}, x[3];
  int n = 0;
  for (int s = 0; s < 2; ++s) {
    const double *const *a = s ? q : p, *const *b = s ? p : q;
    for (int i = 0; i < 3; ++i)
      if (jl_seg_tri_depth(a[i], a[(i + 1) % 3], b, 0.0, x) > 0) {
        for (int k = 0; k < 3; ++k) sum[k] += x[k];
        ++n;
      }
  }
  for (int k = 0; k < 3; ++k) at[k] = n ? sum[k] / n : (p[0][k] + p[1][k] + p[2][k]) / 3.0;
}

typedef struct jl_si_ctx {
  const jl_mesh *m;
  int t;
  double eps, tol;
  jl_mesh_crossing *x;
} jl_si_ctx;

static int jl_si_visit(void *vctx, int u) {
  jl_si_ctx *c = vctx;
  if (u <= c->t) return 0;
  const jl_mesh *m = c->m;
  const int *a = m->triangles + 3 * c->t, *b = m->triangles + 3 * u;
  int shared = 0, sa = -1, sb = -1;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (a[i] == b[j]) {
        ++shared;
        sa = i;
        sb = j;
      }
  const double *p[3], *q[3];
  for (int i = 0; i < 3; ++i) {
    p[i] = m->vertices + 3 * a[i];
    q[i] = m->vertices + 3 * b[i];
  }
  double depth = 0.0, at[3] = {0, 0, 0};
  if (shared == 0) {
    depth = jl_tri_tri_depth(p, q, c->eps);
    if (depth > 0) jl_crossing_point(p, q, at);
  } else if (shared == 1) {
    /* They meet at the shared corner; they cross when an edge opposite it
     * pierces the other triangle. */
    double xa[3], xb[3];
    double da = jl_seg_tri_depth(p[(sa + 1) % 3], p[(sa + 2) % 3], q, c->eps, xa);
    double db = jl_seg_tri_depth(q[(sb + 1) % 3], q[(sb + 2) % 3], p, c->eps, xb);
    depth = fmax(da, db);
    if (depth > 0) memcpy(at, da >= db ? xa : xb, sizeof at);
  } else if (shared == 2) {
    /* Across a shared edge they overlap only when folded flat onto each other:
     * the far corner of one in the other's plane, on the same side of the
     * edge; as deep as the lower far corner stands off the edge. */
    int fa = 0, fb = 0;
    for (int i = 0; i < 3; ++i) {
      int in_b = 0;
      for (int j = 0; j < 3; ++j) in_b |= a[i] == b[j];
      if (!in_b) fa = i;
    }
    for (int j = 0; j < 3; ++j) {
      int in_a = 0;
      for (int i = 0; i < 3; ++i) in_a |= b[j] == a[i];
      if (!in_a) fb = j;
    }
    const double *e0 = p[(fa + 1) % 3], *e1 = p[(fa + 2) % 3];
    double e[3], wa[3], wb[3], na[3], nb[3];
    jl_sub3(e1, e0, e);
    jl_sub3(p[fa], e0, wa);
    jl_sub3(q[fb], e0, wb);
    jl_cross3(e, wa, na);
    jl_cross3(e, wb, nb);
    double la = sqrt(jl_dot3(na, na)), lb = sqrt(jl_dot3(nb, nb));
    /* the sine of the fold angle is |na x nb| / (|na| |nb|); flat and same side: dot > 0 */
    double x[3];
    jl_cross3(na, nb, x);
    if (la > 0 && lb > 0 && jl_dot3(na, nb) > 0 && sqrt(jl_dot3(x, x)) <= JL_MESH_AREA_EPS * 1e3 * la * lb) {
      depth = fmin(la, lb) / sqrt(jl_dot3(e, e));
      for (int k = 0; k < 3; ++k) at[k] = 0.5 * (e0[k] + e1[k]);
    }
  }
  if (!(depth > 0)) return 0;
  jl_mesh_crossing *x = c->x;
  if (depth > c->tol) {
    x->b = u;
    x->depth = depth;
    memcpy(x->at, at, sizeof at);
    return 1;
  }
  ++x->accepted;
  x->max_accepted = fmax(x->max_accepted, depth);
  return 0;
}

int jl_mesh_find_crossing(const jl_mesh *m, double tol, jl_mesh_crossing *x, jl_error *err) {
  memset(x, 0, sizeof *x);
  x->a = x->b = -1;
  jl_bvh bvh;
  int rc = jl_bvh_build(&bvh, m->vertices, m->triangles, m->n_triangles, err);
  if (rc) return rc;
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                     (hi[2] - lo[2]) * (hi[2] - lo[2]));
  jl_si_ctx c = {m, 0, JL_MESH_TOUCH_EPS * diag, fmax(tol, 0.0), x};
  for (int t = 0; t < m->n_triangles; ++t) {
    double tlo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, thi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) {
        double v = m->vertices[3 * m->triangles[3 * t + j] + k];
        tlo[k] = fmin(tlo[k], v);
        thi[k] = fmax(thi[k], v);
      }
    c.t = t;
    if (jl_bvh_query_box(&bvh, tlo, thi, jl_si_visit, &c)) {
      x->a = t;
      break;
    }
  }
  jl_bvh_free(&bvh);
  return JL_OK;
}

int jl_mesh_find_self_intersection(const jl_mesh *m, int *a, int *b, jl_error *err) {
  jl_mesh_crossing x;
  int rc = jl_mesh_find_crossing(m, 0.0, &x, err);
  *a = x.a;
  *b = x.b;
  return rc;
}

int jl_mesh_validate(jl_mesh *m, const char *name, jl_mesh_report *rep, jl_error *err) {
  return jl_mesh_validate_repair(m, name, 0.0, rep, err);
}

/* Closed 2-manifold, oriented (jl_adjacency, jl_orient). */
static int jl_mesh_orient_all(jl_mesh *m, const char *name, const int *orig, jl_mesh_report *rep,
                              jl_error *err) {
  int *nbr = malloc((size_t)3 * m->n_triangles * sizeof *nbr);
  char *same = malloc((size_t)3 * m->n_triangles);
  int rc = nbr && same ? JL_OK : jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", name);
  if (!rc) rc = jl_adjacency(m, name, nbr, same, err);
  if (!rc) rc = jl_orient(m, name, nbr, same, orig, rep, err);
  free(nbr);
  free(same);
  return rc;
}

int jl_mesh_validate_repair(jl_mesh *m, const char *name, double repair_tol_rel, jl_mesh_report *rep,
                            jl_error *err) {
  jl_mesh_report own;
  if (!rep) rep = &own;
  memset(rep, 0, sizeof *rep);
  rep->input_triangles = m->n_triangles;
  for (int i = 0; i < 3 * m->n_vertices; ++i)
    if (!isfinite(m->vertices[i]))
      return jl_error_set(err, JL_ERR_INPUT, "%s: vertex %d has a non-finite coordinate", name, i / 3);
  for (int i = 0; i < 3 * m->n_triangles; ++i)
    if (m->triangles[i] < 0 || m->triangles[i] >= m->n_vertices)
      return jl_error_set(err, JL_ERR_INPUT, "%s: triangle %d has a bad vertex index", name, i / 3);
  int repair = repair_tol_rel > 0;
  double tol = 0.0;
  if (repair) {
    double lo[3], hi[3];
    jl_mesh_bounds(m, lo, hi);
    tol = repair_tol_rel * sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                (hi[2] - lo[2]) * (hi[2] - lo[2]));
    rep->repair_tol = tol;
  }
  /* orig: each triangle's index in the input, for the messages */
  int n = m->n_triangles;
  int *orig = malloc((size_t)(n > 0 ? n : 1) * sizeof *orig);
  char *need = repair ? malloc((size_t)(n > 0 ? n : 1)) : NULL;
  int rc = orig && (need || !repair) ? JL_OK : jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", name);
  for (int t = 0; t < n && !rc; ++t) orig[t] = t;
  if (!rc && repair) rc = jl_mesh_weld_near(m, tol, &rep->welded_vertices, err);
  if (!rc && repair) rc = jl_mesh_drop_doubled(m, orig, &rep->doubled_removed, err);
  if (!rc && repair) rc = jl_needed_zero_area(m, need, err);
  if (!rc) {
    rep->degenerate_dropped = jl_drop_degenerate(m, orig, need);
    if (m->n_triangles == 0)
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: no triangles with area (%d degenerate dropped)", name,
                        rep->degenerate_dropped);
  }
  if (!rc) rc = jl_mesh_orient_all(m, name, orig, rep, err);
  if (!rc && repair) rc = jl_mesh_flip_slivers(m, tol, &rep->slivers_removed, err);
  jl_mesh_crossing x;
  if (!rc) rc = jl_mesh_find_crossing(m, tol, &x, err);
  if (!rc) {
    rep->overlaps_accepted = x.accepted;
    rep->max_overlap = x.max_accepted;
    if (x.a >= 0)
      rc = jl_error_set(err, JL_ERR_INPUT,
                        "%s: self-intersecting surface: triangles %d and %d (from 0, in input order) "
                        "cross at (%g, %g, %g), %.3g mm deep%s",
                        name, orig[x.a], orig[x.b], x.at[0], x.at[1], x.at[2], x.depth,
                        repair ? ", more than the repair tolerance" : "");
    if (rc && repair && err) {
      size_t len = strlen(err->msg);
      snprintf(err->msg + len, sizeof err->msg - len, " %.3g mm (%g of the bounding box diagonal)", tol,
               repair_tol_rel);
    }
  }
  free(orig);
  free(need);
  if (rc) return rc;
  rep->triangles = m->n_triangles;
  rep->volume = jl_mesh_volume(m);
  jl_mesh_bounds(m, rep->lo, rep->hi);
  if (!(rep->volume > 0))
    return jl_error_set(err, JL_ERR_INPUT, "%s: the surface encloses no volume", name);
  return JL_OK;
}
