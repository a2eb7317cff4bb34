#include "trunk_voxels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "timer.h"
#include "trunk_check.h"

/* Rays nudged off the voxel centre lines (in units of the ray spacing) so
 * that none runs along a mesh edge lying in a plane of voxel centres. */
#define JL_VOXEL_RAY_DY 3.0e-7
#define JL_VOXEL_RAY_DZ 7.0e-7
/* Triangles between polls of the deadline and the stop flag. */
#define JL_VOXEL_POLL 16
/* A voxel whose rays are inside for all but this share of their length
 * counts as wholly inside (the sum of its pieces is rounded). */
#define JL_VOXEL_FULL_TOL 1e-9


/* Projections of the three points on axis L against a box of half edge
 * hv centred at the origin: 1 when they are apart (touching counts). */
static int jl_vox_sep(const double L[3], const double a[3], const double b[3], const double c[3],
                      double hv, double eps) {
  double l2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
  if (l2 < 1e-24) return 0;
  double pa = L[0] * a[0] + L[1] * a[1] + L[2] * a[2];
  double pb = L[0] * b[0] + L[1] * b[1] + L[2] * b[2];
  double pc = L[0] * c[0] + L[1] * c[1] + L[2] * c[2];
  double lo = fmin(pa, fmin(pb, pc)), hi = fmax(pa, fmax(pb, pc));
  double r = hv * (fabs(L[0]) + fabs(L[1]) + fabs(L[2]));
  double e = eps * sqrt(l2);
  return lo >= r - e || hi <= -r + e;
}

/* Triangle against a cube (13 separating axes, Akenine-Moeller). */
static int jl_vox_tri_cube(const double *ta, const double *tb, const double *tc, const double ctr[3],
                           double hv, double eps) {
  double a[3], b[3], c[3], e[3][3];
  for (int d = 0; d < 3; ++d) { a[d] = ta[d] - ctr[d]; b[d] = tb[d] - ctr[d]; c[d] = tc[d] - ctr[d]; }
  for (int d = 0; d < 3; ++d) { e[0][d] = b[d] - a[d]; e[1][d] = c[d] - b[d]; e[2][d] = a[d] - c[d]; }
  for (int d = 0; d < 3; ++d) {
    double L[3] = {0.0, 0.0, 0.0};
    L[d] = 1.0;
    if (jl_vox_sep(L, a, b, c, hv, eps)) return 0;
  }
  double nrm[3] = {e[0][1] * e[1][2] - e[0][2] * e[1][1], e[0][2] * e[1][0] - e[0][0] * e[1][2],
                   e[0][0] * e[1][1] - e[0][1] * e[1][0]};
  if (jl_vox_sep(nrm, a, b, c, hv, eps)) return 0;
  for (int d = 0; d < 3; ++d)
    for (int k = 0; k < 3; ++k) {
      double u[3] = {0.0, 0.0, 0.0};
      u[d] = 1.0;
      double L[3] = {u[1] * e[k][2] - u[2] * e[k][1], u[2] * e[k][0] - u[0] * e[k][2],
                     u[0] * e[k][1] - u[1] * e[k][0]};
      if (jl_vox_sep(L, a, b, c, hv, eps)) return 0;
    }
  return 1;
}

static int jl_vox_cmp_double(const void *a, const void *b) {
  double u = *(const double *)a, w = *(const double *)b;
  return (u > w) - (u < w);
}

/* Rays along +x through a slab of voxel layers [k0, k1), w = v / sub apart:
 * centred, sub x sub per voxel column, ray (J, K) at y = origin + (J + 1/2 +
 * dy) w, z likewise; or on the corners of those sub-cells, J + dy instead
 * of J + 1/2 + dy, sub + 1 along each edge of a column (shared with the
 * next). The x of every crossing with the surface, sorted per ray. */
typedef struct jl_vox_rays {
  int nj, K0, nk;          /* rays along y; first ray along z; rays along z */
  size_t *start;           /* nk * nj + 1 */
  double *x;
} jl_vox_rays;

static void jl_vox_rays_free(jl_vox_rays *r) {
  free(r->start);
  free(r->x);
  memset(r, 0, sizeof *r);
}

/* Two passes over the triangles (count, then fill) so each ray's crossings
 * lie in one array; *cut = 1 when the limits stopped it. */
static int jl_vox_rays_build(jl_vox_rays *r, const jl_voxel_map *m, const jl_mesh *mesh, int sub,
                             int corners, int k0, int k1, const jl_trunk_limits *lim, int *cut) {
  memset(r, 0, sizeof *r);
  double w = m->v / sub;
  const double oy = (corners ? 0.0 : 0.5) + JL_VOXEL_RAY_DY, oz = (corners ? 0.0 : 0.5) + JL_VOXEL_RAY_DZ;
  r->nj = m->dim[1] * sub + corners;
  r->K0 = k0 * sub;
  r->nk = (k1 - k0) * sub + corners;
  size_t nrays = (size_t)r->nj * (size_t)r->nk;
  r->start = calloc(nrays + 1, sizeof *r->start);
  if (!r->start) return JL_ERR_NOMEM;
  size_t *fill = NULL;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      size_t total = 0;
      for (size_t q = 0; q < nrays; ++q) {
        size_t c = r->start[q];
        r->start[q] = total;
        total += c;
      }
      r->start[nrays] = total;
      r->x = malloc((total > 0 ? total : 1) * sizeof *r->x);
      fill = malloc((nrays > 0 ? nrays : 1) * sizeof *fill);
      if (!r->x || !fill) {
        free(fill);
        return JL_ERR_NOMEM;
      }
      memcpy(fill, r->start, nrays * sizeof *fill);
    }
    for (int t = 0; t < mesh->n_triangles; ++t) {
      if (t % JL_VOXEL_POLL == 0 && jl_trunk_limits_hit(lim, 0.0)) {
        *cut = 1;
        free(fill);
        return JL_OK;
      }
      const int *tv = mesh->triangles + 3 * t;
      const double *a = mesh->vertices + 3 * tv[0], *b = mesh->vertices + 3 * tv[1],
                   *c = mesh->vertices + 3 * tv[2];
      double det = (b[1] - a[1]) * (c[2] - a[2]) - (c[1] - a[1]) * (b[2] - a[2]);
      if (det == 0.0) continue;
      double zlo = fmin(a[2], fmin(b[2], c[2])), zhi = fmax(a[2], fmax(b[2], c[2]));
      double ylo = fmin(a[1], fmin(b[1], c[1])), yhi = fmax(a[1], fmax(b[1], c[1]));
      int j0 = (int)ceil((ylo - m->origin[1]) / w - oy), j1 = (int)floor((yhi - m->origin[1]) / w - oy);
      int kk0 = (int)ceil((zlo - m->origin[2]) / w - oz), kk1 = (int)floor((zhi - m->origin[2]) / w - oz);
      if (j0 < 0) j0 = 0;
      if (j1 > r->nj - 1) j1 = r->nj - 1;
      if (kk0 < r->K0) kk0 = r->K0;
      if (kk1 > r->K0 + r->nk - 1) kk1 = r->K0 + r->nk - 1;
      for (int k = kk0; k <= kk1; ++k)
        for (int j = j0; j <= j1; ++j) {
          double y = m->origin[1] + (j + oy) * w, z = m->origin[2] + (k + oz) * w;
          double u = ((y - a[1]) * (c[2] - a[2]) - (c[1] - a[1]) * (z - a[2])) / det;
          double s = ((b[1] - a[1]) * (z - a[2]) - (y - a[1]) * (b[2] - a[2])) / det;
          if (u < 0.0 || s < 0.0 || u + s > 1.0) continue;
          size_t q = (size_t)(k - r->K0) * (size_t)r->nj + (size_t)j;
          if (pass == 0) r->start[q]++;
          else r->x[fill[q]++] = a[0] + u * (b[0] - a[0]) + s * (c[0] - a[0]);
        }
    }
  }
  free(fill);
  for (size_t q = 0; q < nrays; ++q)
    if (r->start[q + 1] - r->start[q] > 1)
      qsort(r->x + r->start[q], r->start[q + 1] - r->start[q], sizeof(double), jl_vox_cmp_double);
  return JL_OK;
}

typedef struct jl_vox_job {
  jl_voxel_map *m;
  const jl_mesh *mesh;
  int rule, sub;
  jl_trunk_limits lim;
  int rc[JL_MAX_THREADS], cut[JL_MAX_THREADS];
  /* parts */
  jl_voxel_part *parts[JL_MAX_THREADS];
  size_t nparts[JL_MAX_THREADS];
} jl_vox_job;

/* One slab of z layers: centres by ray parity, then the voxels the
 * surface passes through. */
static void jl_vox_build_slab(void *ctx, int t, int nt) {
  jl_vox_job *job = ctx;
  jl_voxel_map *m = job->m;
  const jl_mesh *mesh = job->mesh;
  long lo, hi;
  jl_parallel_chunk(m->dim[2], t, nt, &lo, &hi);
  int k0 = (int)lo, k1 = (int)hi, nx = m->dim[0], ny = m->dim[1];
  if (k0 >= k1) return;
  jl_vox_rays r;
  int *cut = &job->cut[t];
  int rc = jl_vox_rays_build(&r, m, mesh, 1, 0, k0, k1, &job->lim, cut);
  if (rc || *cut) {
    job->rc[t] = rc;
    jl_vox_rays_free(&r);
    return;
  }
  double v = m->v;
  for (int k = k0; k < k1; ++k) {
    if (jl_trunk_limits_hit(&job->lim, 0.0)) {
      *cut = 1;
      break;
    }
    for (int j = 0; j < ny; ++j) {
      size_t q = (size_t)(k - k0) * (size_t)ny + (size_t)j;
      const double *xs = r.x + r.start[q];
      size_t xn = r.start[q + 1] - r.start[q], before = 0;
      for (int i = 0; i < nx; ++i) {
        double x = m->origin[0] + (i + 0.5) * v;
        while (before < xn && xs[before] < x) before++;
        m->free[jl_voxel_idx(m, i, j, k)] = (uint8_t)(before & 1);
      }
    }
  }
  jl_vox_rays_free(&r);
  /* voxels the surface passes through: not free (inner), JL_VOXEL_CUT (outer) */
  double hv = 0.5 * v, eps = JL_VOXEL_EPS * v;
  uint8_t through = job->rule == JL_VOXEL_OUTER ? JL_VOXEL_CUT : 0;
  for (int t3 = 0; t3 < mesh->n_triangles && !*cut; ++t3) {
    if (t3 % JL_VOXEL_POLL == 0 && jl_trunk_limits_hit(&job->lim, 0.0)) {
      *cut = 1;
      break;
    }
    const int *tv = mesh->triangles + 3 * t3;
    const double *a = mesh->vertices + 3 * tv[0], *b = mesh->vertices + 3 * tv[1],
                 *c = mesh->vertices + 3 * tv[2];
    int r0[3], r1[3];
    for (int d = 0; d < 3; ++d) {
      double tl = fmin(a[d], fmin(b[d], c[d])), th = fmax(a[d], fmax(b[d], c[d]));
      r0[d] = (int)floor((tl - m->origin[d]) / v) - 1;
      r1[d] = (int)floor((th - m->origin[d]) / v) + 1;
      if (r0[d] < 0) r0[d] = 0;
      if (r1[d] > m->dim[d] - 1) r1[d] = m->dim[d] - 1;
    }
    if (r0[2] < k0) r0[2] = k0;
    if (r1[2] > k1 - 1) r1[2] = k1 - 1;
    for (int k = r0[2]; k <= r1[2]; ++k)
      for (int j = r0[1]; j <= r1[1]; ++j)
        for (int i = r0[0]; i <= r1[0]; ++i) {
          size_t id = jl_voxel_idx(m, i, j, k);
          if (m->free[id] == through) continue;
          double ctr[3] = {m->origin[0] + (i + 0.5) * v, m->origin[1] + (j + 0.5) * v,
                           m->origin[2] + (k + 0.5) * v};
          if (jl_vox_tri_cube(a, b, c, ctr, hv, eps)) m->free[id] = through;
        }
  }
}

static int jl_vox_finish(jl_vox_job *job, int nt, int *cut, jl_error *err) {
  int rc = JL_OK;
  for (int t = 0; t < nt; ++t) {
    if (job->rc[t]) rc = job->rc[t];
    if (job->cut[t]) *cut = 1;
  }
  if (rc) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the voxel map (%zu voxels)", job->m->n);
  return JL_OK;
}

int jl_voxel_map_build(jl_voxel_map *m, const jl_mesh *mesh, double v, double max_voxels, int rule,
                       int threads, double deadline, const volatile sig_atomic_t *stop, int *cut,
                       jl_error *err) {
  memset(m, 0, sizeof *m);
  *cut = 0;
  if (!(v > 0.0) || !isfinite(v)) return jl_error_set(err, JL_ERR_INPUT, "voxel map: voxel edge %g mm", v);
  if (mesh->n_vertices < 1) return jl_error_set(err, JL_ERR_INPUT, "voxel map: empty mesh");
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < mesh->n_vertices; ++i)
    for (int d = 0; d < 3; ++d) {
      lo[d] = fmin(lo[d], mesh->vertices[3 * i + d]);
      hi[d] = fmax(hi[d], mesh->vertices[3 * i + d]);
    }
  for (;;) {  /* coarser voxels until the map fits max_voxels */
    double cells = 1.0;
    for (int d = 0; d < 3; ++d) cells *= ceil((hi[d] - lo[d]) / v) + 1.0;
    if (cells <= max_voxels || !isfinite(cells)) break;
    v *= 1.0001 * cbrt(cells / max_voxels);
  }
  m->v = v;
  m->n = 1;
  for (int d = 0; d < 3; ++d) {
    m->origin[d] = lo[d];
    m->dim[d] = (int)ceil((hi[d] - lo[d]) / v) + 1;
    m->n *= (size_t)m->dim[d];
  }
  m->free = calloc(m->n, 1);
  if (!m->free) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the voxel map (%zu voxels)", m->n);
  jl_vox_job *job = calloc(1, sizeof *job);
  if (!job) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the voxel map");
  job->m = m;
  job->mesh = mesh;
  job->rule = rule;
  job->lim = (jl_trunk_limits){deadline, stop, 0.0};
  int nt = jl_parallel_threads(threads, m->dim[2], 4);
  jl_parallel_run(nt, jl_vox_build_slab, job);
  int rc = jl_vox_finish(job, nt, cut, err);
  free(job);
  return rc;
}

void jl_voxel_map_free(jl_voxel_map *m) {
  free(m->free);
  memset(m, 0, sizeof *m);
}

/* The inside length of [lo, hi] along a ray with crossings xs (inside
 * from each crossing to the next; past an odd last one to xend), the
 * crossings before *e skipped (lo only grows between calls). */
static double jl_vox_ray_inside(const double *xs, size_t xn, size_t *e, double lo, double hi, double xend) {
  while (*e < xn && (*e + 1 < xn ? xs[*e + 1] : xend) <= lo) *e += 2;
  double len = 0.0;
  for (size_t f = *e; f < xn && xs[f] < hi; f += 2) {
    double p = xs[f] > lo ? xs[f] : lo, q = f + 1 < xn ? xs[f + 1] : xend;
    if (q > hi) q = hi;
    if (q > p) len += q - p;
  }
  return len;
}

/* One slab of z layers: for the voxels the surface passes through
 * (JL_VOXEL_CUT), the rays on the corners of their column's sub x sub
 * cells give the inside length; each cell counts the largest of its four
 * corners' (an upper bound wherever one plane cuts the cell's prism: the
 * length is then monotone across the cell). Those short of wholly inside
 * are listed; the other free voxels are wholly inside. */
static void jl_vox_parts_slab(void *ctx, int t, int nt) {
  jl_vox_job *job = ctx;
  const jl_voxel_map *m = job->m;
  long lo, hi;
  jl_parallel_chunk(m->dim[2], t, nt, &lo, &hi);
  int k0 = (int)lo, k1 = (int)hi, nx = m->dim[0], ny = m->dim[1], sub = job->sub;
  if (k0 >= k1) return;
  jl_vox_rays r;
  memset(&r, 0, sizeof r);
  int *cut = &job->cut[t];
  int nc = (sub + 1) * (sub + 1);
  int *cells = malloc((size_t)nx * sizeof *cells);
  double *len = malloc((size_t)nc * (size_t)nx * sizeof *len);
  size_t cap = 0, n = 0;
  jl_voxel_part *out = NULL;
  int rc = cells && len ? jl_vox_rays_build(&r, m, job->mesh, sub, 1, k0, k1, &job->lim, cut) : JL_ERR_NOMEM;
  double v = m->v, x0 = m->origin[0], xend = m->origin[0] + nx * v, full = v * sub * sub;
  for (int k = k0; k < k1 && !rc && !*cut; ++k) {
    if (jl_trunk_limits_hit(&job->lim, 0.0)) {
      *cut = 1;
      break;
    }
    for (int j = 0; j < ny && !rc; ++j) {
      int ns = 0;
      const uint8_t *row = m->free + jl_voxel_idx(m, 0, j, k);
      for (int i = 0; i < nx; ++i)
        if (row[i] == JL_VOXEL_CUT) cells[ns++] = i;
      if (ns == 0) continue;
      for (int a = 0; a <= sub; ++a)
        for (int b = 0; b <= sub; ++b) {
          size_t q = (size_t)((k - k0) * sub + a) * (size_t)r.nj + (size_t)(j * sub + b), e = 0;
          const double *xs = r.x + r.start[q];
          size_t xn = r.start[q + 1] - r.start[q];
          double *l = len + (size_t)(a * (sub + 1) + b) * (size_t)ns;
          for (int c = 0; c < ns; ++c)
            l[c] = jl_vox_ray_inside(xs, xn, &e, x0 + cells[c] * v, x0 + (cells[c] + 1) * v, xend);
        }
      for (int c = 0; c < ns; ++c) {
        double acc = 0.0;
        for (int a = 0; a < sub; ++a)
          for (int b = 0; b < sub; ++b) {
            const double *c00 = len + (size_t)(a * (sub + 1) + b) * (size_t)ns + c;
            const double *c10 = c00 + (size_t)(sub + 1) * (size_t)ns;
            double p0 = c00[0] > c00[ns] ? c00[0] : c00[ns], p1 = c10[0] > c10[ns] ? c10[0] : c10[ns];
            acc += p0 > p1 ? p0 : p1;
          }
        if (acc >= full * (1.0 - JL_VOXEL_FULL_TOL)) continue;
        if (n == cap) {
          size_t ncap = cap ? 2 * cap : 1024;
          jl_voxel_part *np = realloc(out, ncap * sizeof *np);
          if (!np) {
            rc = JL_ERR_NOMEM;
            break;
          }
          out = np;
          cap = ncap;
        }
        out[n++] = (jl_voxel_part){jl_voxel_idx(m, cells[c], j, k), acc / full};
      }
    }
  }
  jl_vox_rays_free(&r);
  free(cells);
  free(len);
  job->rc[t] = rc;
  job->parts[t] = out;
  job->nparts[t] = n;
}

int jl_voxel_map_parts(const jl_voxel_map *m, const jl_mesh *mesh, int sub, int threads,
                       double deadline, const volatile sig_atomic_t *stop, jl_voxel_part **parts,
                       size_t *n, int *cut, jl_error *err) {
  *parts = NULL;
  *n = 0;
  *cut = 0;
  if (sub < 1) return jl_error_set(err, JL_ERR_INPUT, "voxel parts: %d rays per voxel edge", sub);
  jl_vox_job *job = calloc(1, sizeof *job);
  if (!job) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the voxel parts");
  job->m = (jl_voxel_map *)m;  /* read only here */
  job->mesh = mesh;
  job->sub = sub;
  job->lim = (jl_trunk_limits){deadline, stop, 0.0};
  int nt = jl_parallel_threads(threads, m->dim[2], 4);
  jl_parallel_run(nt, jl_vox_parts_slab, job);
  int rc = jl_vox_finish(job, nt, cut, err);
  size_t total = 0;
  for (int t = 0; t < nt; ++t) total += job->nparts[t];
  if (!rc && !*cut) {
    *parts = malloc((total > 0 ? total : 1) * sizeof **parts);
    if (!*parts) rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the voxel parts");
    for (int t = 0; t < nt && *parts; ++t) {  /* slabs in z order: ascending indices */
      if (job->nparts[t]) memcpy(*parts + *n, job->parts[t], job->nparts[t] * sizeof **parts);
      *n += job->nparts[t];
    }
  }
  for (int t = 0; t < nt; ++t) free(job->parts[t]);
  free(job);
  return rc;
}
