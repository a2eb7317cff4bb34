/* Surface samples and the uniform grid they are sorted into (seed 5.3.2). */
#include "surface_grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double jl_surface_default_spacing(const jl_block_size *b) {
  double m = fmin(b->x, fmin(b->y, b->z));
  return m / JL_SPACING_DIVISOR;
}

static double jl_dist3(const double *a, const double *b) {
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

static int jl_tri_subdiv(const jl_mesh *m, int t, double spacing) {
  const int *v = m->triangles + 3 * t;
  const double *a = m->vertices + 3 * v[0], *b = m->vertices + 3 * v[1], *c = m->vertices + 3 * v[2];
  double e = fmax(jl_dist3(a, b), fmax(jl_dist3(b, c), jl_dist3(c, a)));
  double n = ceil(e / spacing);
  return n < 1.0 ? 1 : (int)n;
}

/* The row sampling of a triangle: rows parallel to its longest edge at
 * most JL_SAMPLE_ROW_GAP * spacing apart, points on each row at most
 * JL_SAMPLE_ROW_STEP * spacing apart. A point between two rows lies within
 * the lower row's span, at most a row gap above it, so within
 * sqrt(0.45^2 + 0.3^2) = 0.54 spacing of a sample (the lattice: spacing /
 * sqrt 3 = 0.58). */
#define JL_SAMPLE_ROW_GAP 0.3
#define JL_SAMPLE_ROW_STEP 0.9

typedef struct jl_samples {
  double *p;
  size_t n, cap;
} jl_samples;

static int jl_samples_push(jl_samples *s, const double *q, jl_error *err) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 4096;
    if (cap > JL_SAMPLE_MAX) cap = JL_SAMPLE_MAX;
    if (s->n >= cap)
      return jl_error_set(err, JL_ERR_INPUT, "the spacing gives more than %d surface samples", JL_SAMPLE_MAX);
    double *p = realloc(s->p, cap * 3 * sizeof *p);
    if (!p) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %zu samples", cap);
    s->p = p;
    s->cap = cap;
  }
  memcpy(s->p + 3 * s->n, q, 3 * sizeof *q);
  s->n++;
  return JL_OK;
}

/* Rows of triangle (a, b, c) with ab its longest edge: how many rows (m + 1)
 * and samples it takes; with s != NULL the samples are also pushed. */
static int jl_tri_rows(const double *a, const double *b, const double *c, double spacing, jl_samples *s,
                       double *count, jl_error *err) {
  double ab[3], ac[3];
  for (int d = 0; d < 3; ++d) {
    ab[d] = b[d] - a[d];
    ac[d] = c[d] - a[d];
  }
  double L = sqrt(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]);
  double cx = ab[1] * ac[2] - ab[2] * ac[1], cy = ab[2] * ac[0] - ab[0] * ac[2], cz = ab[0] * ac[1] - ab[1] * ac[0];
  double h = L > 0.0 ? sqrt(cx * cx + cy * cy + cz * cz) / L : 0.0;
  double m = fmax(1.0, ceil(h / (JL_SAMPLE_ROW_GAP * spacing)));
  *count = 0.0;
  for (double j = 0.0; j <= m; j += 1.0) {
    double t = j / m, len = L * (1.0 - t);
    double k = fmax(1.0, ceil(len / (JL_SAMPLE_ROW_STEP * spacing)));
    if (j == m) k = 0.0;  /* the apex: one point */
    *count += k + 1.0;
    if (!s) continue;
    for (double i = 0.0; i <= k; i += 1.0) {
      double u = k > 0.0 ? i / k : 0.0, q[3];
      for (int d = 0; d < 3; ++d) {
        double p0 = a[d] + t * (c[d] - a[d]), p1 = b[d] + t * (c[d] - b[d]);
        q[d] = p0 + u * (p1 - p0);
      }
      int rc = jl_samples_push(s, q, err);
      if (rc) return rc;
    }
  }
  return JL_OK;
}

int jl_surface_sample(const jl_mesh *m, double spacing, double **pts, int *n, jl_error *err) {
  *pts = NULL;
  *n = 0;
  if (!(spacing > 0.0) || !isfinite(spacing))
    return jl_error_set(err, JL_ERR_INPUT, "sample spacing must be > 0, got %g", spacing);
  if (m->n_triangles < 1) return jl_error_set(err, JL_ERR_INPUT, "the mesh has no triangles");
  jl_samples s = {0};
  int rc = JL_OK;
  for (int t = 0; t < m->n_triangles && rc == JL_OK; ++t) {
    int k = jl_tri_subdiv(m, t, spacing);
    const int *v = m->triangles + 3 * t;
    const double *a = m->vertices + 3 * v[0], *b = m->vertices + 3 * v[1], *c = m->vertices + 3 * v[2];
    /* a thin triangle (CAD fillets, end caps) takes far fewer points in rows */
    double lattice = 0.5 * (double)(k + 1) * (double)(k + 2), rows;
    const double *e[3] = {a, b, c};
    int l = 0;
    double best = -1.0;
    for (int i = 0; i < 3; ++i) {
      double d = jl_dist3(e[i], e[(i + 1) % 3]);
      if (d > best) {
        best = d;
        l = i;
      }
    }
    const double *ra = e[l], *rb = e[(l + 1) % 3], *rc3 = e[(l + 2) % 3];
    jl_tri_rows(ra, rb, rc3, spacing, NULL, &rows, err);
    if (rows < lattice) {
      rc = jl_tri_rows(ra, rb, rc3, spacing, &s, &rows, err);
      continue;
    }
    for (int i = 0; i <= k && rc == JL_OK; ++i)
      for (int j = 0; i + j <= k && rc == JL_OK; ++j) {
        double u = (double)i / k, w = (double)j / k, r = 1.0 - u - w, q[3];
        for (int d = 0; d < 3; ++d) q[d] = r * a[d] + u * b[d] + w * c[d];
        rc = jl_samples_push(&s, q, err);
      }
  }
  if (rc != JL_OK) {
    free(s.p);
    return rc;
  }
  *pts = s.p;
  *n = (int)s.n;
  return JL_OK;
}

int jl_surface_grid_layout(jl_surface_grid *g, const double *pts, int n, double cell,
                           jl_error *err) {
  memset(g, 0, sizeof *g);
  if (n < 1) return jl_error_set(err, JL_ERR_INPUT, "no surface samples");
  if (!(cell > 0.0) || !isfinite(cell))
    return jl_error_set(err, JL_ERR_INPUT, "grid cell must be > 0, got %g", cell);
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      lo[d] = fmin(lo[d], pts[3 * i + d]);
      hi[d] = fmax(hi[d], pts[3 * i + d]);
    }
  long cells = 1;
  for (int d = 0; d < 3; ++d) {
    if (!isfinite(lo[d]) || !isfinite(hi[d]))
      return jl_error_set(err, JL_ERR_INPUT, "surface samples are not finite");
    g->origin[d] = lo[d] - 0.5 * cell;
    double span = (hi[d] + 0.5 * cell - g->origin[d]) / cell;
    g->dim[d] = (int)ceil(span);
    if (g->dim[d] < 1) g->dim[d] = 1;
    cells *= g->dim[d];
    if (cells > 100000000L)
      return jl_error_set(err, JL_ERR_INPUT, "grid of %g mm cells has more than 1e8 cells", cell);
  }
  g->cell = cell;
  g->n_cells = (int)cells;
  g->n_points = n;
  return JL_OK;
}

static int jl_axis_cell(double v, double o, double cell, int dim) {
  double f = floor((v - o) / cell);
  if (!(f >= 0.0)) return 0;  /* also NaN */
  if (f > (double)(dim - 1)) return dim - 1;
  return (int)f;
}

int jl_surface_grid_cell_of(const jl_surface_grid *g, double x, double y, double z) {
  int ix = jl_axis_cell(x, g->origin[0], g->cell, g->dim[0]);
  int iy = jl_axis_cell(y, g->origin[1], g->cell, g->dim[1]);
  int iz = jl_axis_cell(z, g->origin[2], g->cell, g->dim[2]);
  return ix + g->dim[0] * (iy + g->dim[1] * iz);
}

static int jl_grid_alloc(jl_surface_grid *g, jl_error *err) {
  size_t n = (size_t)g->n_points, c = (size_t)g->n_cells;
  g->px = malloc(n * sizeof(double));
  g->py = malloc(n * sizeof(double));
  g->pz = malloc(n * sizeof(double));
  g->point_id = malloc(n * sizeof(int));
  g->cell_start = calloc(c, sizeof(int));
  g->cell_count = calloc(c, sizeof(int));
  g->inside = calloc(c, 1);
  g->cell_lo = malloc(3 * c * sizeof(double));
  g->cell_hi = malloc(3 * c * sizeof(double));
  if (!g->px || !g->py || !g->pz || !g->point_id || !g->cell_start || !g->cell_count || !g->inside ||
      !g->cell_lo || !g->cell_hi) {
    jl_surface_grid_free(g);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the surface grid");
  }
  return JL_OK;
}

/* Sorted coordinates from the ids, and each cell's point bounds (from the
 * sorted arrays, so both builds give the same). */
static void jl_grid_gather(jl_surface_grid *g, const double *pts) {
  for (int k = 0; k < g->n_points; ++k) {
    int i = g->point_id[k];
    g->px[k] = pts[3 * i];
    g->py[k] = pts[3 * i + 1];
    g->pz[k] = pts[3 * i + 2];
  }
  for (int c = 0; c < g->n_cells; ++c) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int k = g->cell_start[c]; k < g->cell_start[c] + g->cell_count[c]; ++k) {
      lo[0] = fmin(lo[0], g->px[k]); hi[0] = fmax(hi[0], g->px[k]);
      lo[1] = fmin(lo[1], g->py[k]); hi[1] = fmax(hi[1], g->py[k]);
      lo[2] = fmin(lo[2], g->pz[k]); hi[2] = fmax(hi[2], g->pz[k]);
    }
    for (int d = 0; d < 3; ++d) {
      g->cell_lo[3 * c + d] = lo[d];
      g->cell_hi[3 * c + d] = hi[d];
    }
  }
}

int jl_surface_grid_build(jl_surface_grid *g, const double *pts, int n, double cell,
                          jl_error *err) {
  int rc = jl_surface_grid_layout(g, pts, n, cell, err);
  if (rc) return rc;
  if ((rc = jl_grid_alloc(g, err))) return rc;
  int *key = malloc((size_t)n * sizeof *key);
  if (!key) {
    jl_surface_grid_free(g);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the surface grid");
  }
  for (int i = 0; i < n; ++i) {
    key[i] = jl_surface_grid_cell_of(g, pts[3 * i], pts[3 * i + 1], pts[3 * i + 2]);
    g->cell_count[key[i]]++;
  }
  int run = 0;
  for (int c = 0; c < g->n_cells; ++c) {
    g->cell_start[c] = run;
    run += g->cell_count[c];
  }
  /* stable counting sort: equal cells keep the sampling order (as CUB's
   * radix sort does), so both builds give the same arrays */
  int *fill = malloc((size_t)g->n_cells * sizeof *fill);
  if (!fill) {
    free(key);
    jl_surface_grid_free(g);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the surface grid");
  }
  memcpy(fill, g->cell_start, (size_t)g->n_cells * sizeof *fill);
  for (int i = 0; i < n; ++i) g->point_id[fill[key[i]]++] = i;
  free(fill);
  free(key);
  jl_grid_gather(g, pts);
  return JL_OK;
}

int jl_surface_grid_build_cuda(jl_surface_grid *g, const double *pts, int n, double cell,
                               jl_error *err) {
#ifdef JL_HAVE_CUDA
  int rc = jl_surface_grid_layout(g, pts, n, cell, err);
  if (rc) return rc;
  if ((rc = jl_grid_alloc(g, err))) return rc;
  char msg[256] = "";
  if (jl_cuda_grid_sort(pts, n, g->origin, g->cell, g->dim, g->point_id, g->cell_start,
                        g->cell_count, msg, sizeof msg) != 0) {
    jl_surface_grid_free(g);
    return jl_error_set(err, JL_ERR_DEVICE, "CUDA grid build: %s", msg);
  }
  jl_grid_gather(g, pts);
  return JL_OK;
#else
  (void)g; (void)pts; (void)n; (void)cell;
  return jl_error_set(err, JL_ERR_DEVICE, "this jostle was built without CUDA");
#endif
}

typedef struct jl_crossing_list {
  double *x;
  int n, cap;
} jl_crossing_list;

static int jl_crossing_push(jl_crossing_list *l, double x) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 4;
    double *nx = realloc(l->x, (size_t)cap * sizeof *nx);
    if (!nx) return -1;
    l->x = nx;
    l->cap = cap;
  }
  l->x[l->n++] = x;
  return 0;
}

static int jl_cmp_double(const void *a, const void *b) {
  double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

int jl_surface_grid_mark_inside(jl_surface_grid *g, const jl_mesh *m, jl_error *err) {
  int ny = g->dim[1], nz = g->dim[2], nx = g->dim[0];
  size_t ncol = (size_t)ny * (size_t)nz;
  jl_crossing_list *col = calloc(ncol, sizeof *col);
  if (!col) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the inside mask");
  /* rays a hair off the cell centres, so none runs exactly along an edge */
  const double oy = 0.5 + 3.0e-7, oz = 0.5 + 7.0e-7;
  int rc = JL_OK;
  for (int t = 0; t < m->n_triangles && rc == JL_OK; ++t) {
    const int *v = m->triangles + 3 * t;
    const double *a = m->vertices + 3 * v[0], *b = m->vertices + 3 * v[1], *c = m->vertices + 3 * v[2];
    double ylo = fmin(a[1], fmin(b[1], c[1])), yhi = fmax(a[1], fmax(b[1], c[1]));
    double zlo = fmin(a[2], fmin(b[2], c[2])), zhi = fmax(a[2], fmax(b[2], c[2]));
    int j0 = (int)ceil((ylo - g->origin[1]) / g->cell - oy), j1 = (int)floor((yhi - g->origin[1]) / g->cell - oy);
    int k0 = (int)ceil((zlo - g->origin[2]) / g->cell - oz), k1 = (int)floor((zhi - g->origin[2]) / g->cell - oz);
    if (j0 < 0) j0 = 0;
    if (k0 < 0) k0 = 0;
    if (j1 > ny - 1) j1 = ny - 1;
    if (k1 > nz - 1) k1 = nz - 1;
    double det = (b[1] - a[1]) * (c[2] - a[2]) - (c[1] - a[1]) * (b[2] - a[2]);
    if (det == 0.0) continue;  /* parallel to the rays */
    for (int k = k0; k <= k1 && rc == JL_OK; ++k)
      for (int j = j0; j <= j1; ++j) {
        double y = g->origin[1] + (j + oy) * g->cell, z = g->origin[2] + (k + oz) * g->cell;
        double u = ((y - a[1]) * (c[2] - a[2]) - (c[1] - a[1]) * (z - a[2])) / det;
        double s = ((b[1] - a[1]) * (z - a[2]) - (y - a[1]) * (b[2] - a[2])) / det;
        if (u < 0.0 || s < 0.0 || u + s > 1.0) continue;
        double x = a[0] + u * (b[0] - a[0]) + s * (c[0] - a[0]);
        if (jl_crossing_push(&col[(size_t)k * ny + j], x)) { rc = -1; break; }
      }
  }
  if (rc == JL_OK) {
    int inside = 0;
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j) {
        jl_crossing_list *l = &col[(size_t)k * ny + j];
        if (l->n > 1) qsort(l->x, (size_t)l->n, sizeof(double), jl_cmp_double);
        int before = 0;
        for (int i = 0; i < nx; ++i) {
          double x = g->origin[0] + (i + 0.5) * g->cell;
          while (before < l->n && l->x[before] < x) before++;
          int in = before & 1;
          g->inside[i + nx * (j + ny * k)] = (uint8_t)in;
          inside += in;
        }
      }
    free(g->inside_cells);
    g->inside_cells = malloc((size_t)(inside > 0 ? inside : 1) * sizeof(int));
    if (!g->inside_cells) rc = -1;
    else {
      g->n_inside = 0;
      for (int c = 0; c < g->n_cells; ++c)
        if (g->inside[c]) g->inside_cells[g->n_inside++] = c;
    }
  }
  for (size_t i = 0; i < ncol; ++i) free(col[i].x);
  free(col);
  if (rc != JL_OK) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the inside mask");
  return JL_OK;
}

void jl_surface_grid_free(jl_surface_grid *g) {
  if (!g) return;
  free(g->px); free(g->py); free(g->pz); free(g->point_id);
  free(g->cell_start); free(g->cell_count); free(g->inside); free(g->inside_cells);
  free(g->cell_lo); free(g->cell_hi);
  memset(g, 0, sizeof *g);
}

int jl_cuboid_mesh(jl_mesh *m, const double lo[3], const double hi[3], jl_error *err) {
  memset(m, 0, sizeof *m);
  m->vertices = malloc(24 * sizeof(double));
  m->triangles = malloc(36 * sizeof(int));
  if (!m->vertices || !m->triangles) {
    jl_cuboid_mesh_free(m);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for a box mesh");
  }
  for (int i = 0; i < 8; ++i) {
    m->vertices[3 * i] = (i & 1) ? hi[0] : lo[0];
    m->vertices[3 * i + 1] = (i & 2) ? hi[1] : lo[1];
    m->vertices[3 * i + 2] = (i & 4) ? hi[2] : lo[2];
  }
  /* counter-clockwise seen from outside */
  static const int tri[36] = {0, 2, 3, 0, 3, 1,   4, 5, 7, 4, 7, 6,   0, 1, 5, 0, 5, 4,
                              2, 6, 7, 2, 7, 3,   0, 4, 6, 0, 6, 2,   1, 3, 7, 1, 7, 5};
  memcpy(m->triangles, tri, sizeof tri);
  m->n_vertices = 8;
  m->n_triangles = 12;
  return JL_OK;
}

void jl_cuboid_mesh_free(jl_mesh *m) {
  free(m->vertices);
  free(m->triangles);
  memset(m, 0, sizeof *m);
}
