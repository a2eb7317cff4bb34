#include "trunk_pockets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "timer.h"
#include "trunk_baseline.h"
#include "trunk_legalize.h"

/* Wall frames are also tried turned this much both ways about the wall's
 * normal: a wedge along a curved wall or between a wall and a row of
 * blocks rarely runs along the pocket's principal axis exactly. */
#define JL_POCKET_TURN_DEG 15.0
/* A frame whose box has more than this share of its sample points in
 * occupied voxels is not legalized: the pushes would have to move blocks
 * by more than the legalization's sweeps clear. */
#define JL_POCKET_BLOCKED 0.25
/* Sample points per box edge for that share. */
#define JL_POCKET_SAMPLES 8
/* Seconds one insertion's legalization may take (a few sweeps over the
 * neighbourhood and one exact check; milliseconds for a few hundred
 * blocks). */
#define JL_POCKET_TRY_S 0.5
/* The placement search (compass search over the block's three
 * translations and three turns about its own axes, on the summed overlap
 * with the walls and the blocks near it) starts with these steps and
 * halves them down to the last. */
#define JL_POCKET_STEP_MM 8.0
#define JL_POCKET_STEP_MIN_MM 0.125
#define JL_POCKET_STEP_DEG 4.0
/* A placement still overlapping by more than this (mm, summed) after the
 * search is not legalized: the blocks around would have to give way by
 * more than the legalization's pushes clear. */
#define JL_POCKET_PUSH_MM 6.0
/* Frames per pocket at most: 2 principal, 4 wall frames x 3 turns. */
#define JL_POCKET_FRAMES 14
/* Pockets whose core holds fewer voxels than this are noise. */
#define JL_POCKET_MIN_VOXELS 2

/* ---- squared Euclidean distance transform (Felzenszwalb and Huttenlocher
 * 2012), voxel units, to the nearest occupied voxel (outside the map
 * counts as occupied) ---- */

/* One line f[0..n) in place; virtual zeros at -1 and n. Scratch: v (n + 2
 * ints), z (n + 3 doubles), d (n doubles). */
static void jl_edt_line(float *f, int n, int *v, double *z, double *d) {
  int k = 0;
  v[0] = -1;
  z[0] = -INFINITY;
  z[1] = INFINITY;
  for (int q = 0; q <= n; ++q) {
    double fq = q < n ? (double)f[q] : 0.0;
    if (isinf(fq)) continue;
    double s;
    for (;;) {
      int p = v[k];
      double fp = p < 0 || p >= n ? 0.0 : (double)f[p];
      s = ((fq + (double)q * q) - (fp + (double)p * p)) / (2.0 * (q - p));
      if (s <= z[k] && k > 0) { --k; continue; }
      break;
    }
    ++k;
    v[k] = q;
    z[k] = s;
    z[k + 1] = INFINITY;
  }
  k = 0;
  for (int q = 0; q < n; ++q) {
    while (z[k + 1] < q) ++k;
    int p = v[k];
    double fp = p < 0 || p >= n ? 0.0 : (double)f[p];
    d[q] = (double)(q - p) * (q - p) + fp;
  }
  for (int q = 0; q < n; ++q) f[q] = (float)d[q];
}

/* Polled every row of lines (the EDT) or every JL_POCKET_POLL voxels (the
 * cores): on a map of 8 million voxels in a ThreadSanitizer build the two
 * took 5 and 12 s, past the deadline they had been given. */
#define JL_POCKET_POLL 65536

static int jl_edt(const jl_voxel_map *m, float *dist, const jl_trunk_limits *lim, double since,
                  int *cut, jl_error *err) {
  *cut = 0;
  int dmax = m->dim[0] > m->dim[1] ? m->dim[0] : m->dim[1];
  if (m->dim[2] > dmax) dmax = m->dim[2];
  int *v = malloc((size_t)(dmax + 2) * sizeof *v);
  double *z = malloc((size_t)(dmax + 3) * sizeof *z), *d = malloc((size_t)dmax * sizeof *d);
  float *line = malloc((size_t)dmax * sizeof *line);
  if (!v || !z || !d || !line) {
    free(v); free(z); free(d); free(line);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the pocket distance map");
  }
  for (size_t i = 0; i < m->n; ++i) dist[i] = m->free[i] ? INFINITY : 0.0f;
  size_t stride[3] = {1, (size_t)m->dim[0], (size_t)m->dim[0] * (size_t)m->dim[1]};
  for (int a = 0; a < 3; ++a) {
    int b = (a + 1) % 3, c = (a + 2) % 3;
    for (int j = 0; j < m->dim[b]; ++j) {
      if (jl_trunk_limits_hit(lim, since)) {
        *cut = 1;
        goto out;
      }
      for (int k = 0; k < m->dim[c]; ++k) {
        size_t base = (size_t)j * stride[b] + (size_t)k * stride[c];
        for (int i = 0; i < m->dim[a]; ++i) line[i] = dist[base + (size_t)i * stride[a]];
        jl_edt_line(line, m->dim[a], v, z, d);
        for (int i = 0; i < m->dim[a]; ++i) dist[base + (size_t)i * stride[a]] = line[i];
      }
    }
  }
out:
  free(v); free(z); free(d); free(line);
  return JL_OK;
}

/* ---- pockets: connected cores, their spread ---- */

typedef struct jl_pocket {
  int count;
  double sum[3], sq[6];    /* voxel index sums: x, y, z; xx, xy, xz, yy, yz, zz */
  size_t seed;             /* a voxel of the core */
  double mean[3];          /* mm */
  double axis[3][3];       /* principal axes, largest spread first */
  double centre[3];        /* the core voxel nearest the mean, mm */
} jl_pocket;

static int jl_pocket_cmp(const void *a, const void *b) {
  const jl_pocket *p = a, *q = b;
  if (p->count != q->count) return p->count > q->count ? -1 : 1;
  return (p->seed > q->seed) - (p->seed < q->seed);
}

/* Eigenvectors of a symmetric 3 x 3 matrix by Jacobi rotations, sorted by
 * eigenvalue, largest first (rows of vec). */
static void jl_sym3_eigen(const double a_in[3][3], double vec[3][3]) {
  double a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  memcpy(a, a_in, sizeof a);
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
    if (off < 1e-15 * (fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]) + 1e-300)) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        if (a[p][q] == 0.0) continue;
        double th = 0.5 * (a[q][q] - a[p][p]) / a[p][q];
        double t = (th >= 0 ? 1.0 : -1.0) / (fabs(th) + sqrt(th * th + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < 3; ++k) {  /* a = J^T a J */
          double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) {
          double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
  }
  int ord[3] = {0, 1, 2};
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (a[ord[j]][ord[j]] > a[ord[i]][ord[i]]) {
        int t = ord[i];
        ord[i] = ord[j];
        ord[j] = t;
      }
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) vec[i][k] = v[k][ord[i]];
}

static void jl_voxel_centre(const jl_voxel_map *m, size_t id, double c[3]) {
  size_t i = id % (size_t)m->dim[0], j = (id / (size_t)m->dim[0]) % (size_t)m->dim[1];
  size_t k = id / ((size_t)m->dim[0] * (size_t)m->dim[1]);
  c[0] = m->origin[0] + ((double)i + 0.5) * m->v;
  c[1] = m->origin[1] + ((double)j + 0.5) * m->v;
  c[2] = m->origin[2] + ((double)k + 0.5) * m->v;
}

/* The face neighbours of voxel id = (ix, iy, iz) inside the map: their
 * indices in nb, how many. */
static int jl_pocket_neighbours(const jl_voxel_map *m, size_t id, int ix, int iy, int iz, size_t nb[6]) {
  size_t nx = (size_t)m->dim[0], nxy = nx * (size_t)m->dim[1];
  int cnt = 0;
  if (ix > 0) nb[cnt++] = id - 1;
  if (ix + 1 < m->dim[0]) nb[cnt++] = id + 1;
  if (iy > 0) nb[cnt++] = id - nx;
  if (iy + 1 < m->dim[1]) nb[cnt++] = id + nx;
  if (iz > 0) nb[cnt++] = id - nxy;
  if (iz + 1 < m->dim[2]) nb[cnt++] = id + nxy;
  return cnt;
}

/* 1 when the limits are hit, looked at once every JL_POCKET_POLL calls
 * (work counts them). */
static int jl_pocket_poll(size_t *work, const jl_trunk_limits *lim, double since) {
  if (++*work < JL_POCKET_POLL) return 0;
  *work = 0;
  return jl_trunk_limits_hit(lim, since);
}

/* The largest connected (6-neighbour) cores of voxels at least r2 (squared
 * voxels) from occupied space; up to JL_POCKETS_MAX in out, largest first
 * (none when cut: the limits were hit). */
static int jl_find_pockets(const jl_voxel_map *m, const float *dist, double r2, jl_pocket *out,
                           int *n_out, const jl_trunk_limits *lim, double since, int *cut,
                           jl_error *err) {
  *n_out = 0;
  *cut = 0;
  int32_t *label = malloc(m->n * sizeof *label);
  uint32_t *queue = malloc(m->n * sizeof *queue);  /* n < 2^32: JL_POCKET_MAX_VOXELS */
  int cap = 64, np = 0;
  jl_pocket *all = malloc((size_t)cap * sizeof *all);
  if (!label || !queue || !all) {
    free(label); free(queue); free(all);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the pockets");
  }
  for (size_t i = 0; i < m->n; ++i) label[i] = -1;
  size_t nx = (size_t)m->dim[0], nxy = nx * (size_t)m->dim[1];
  size_t work = 0;  /* voxels looked at since the last poll */
  for (size_t s = 0; s < m->n; ++s) {
    if ((*cut = jl_pocket_poll(&work, lim, since))) goto done;
    if (label[s] >= 0 || !((double)dist[s] >= r2)) continue;
    if (np == cap) {
      jl_pocket *grown = realloc(all, (size_t)(2 * cap) * sizeof *all);
      if (!grown) {
        free(label); free(queue); free(all);
        return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the pockets");
      }
      all = grown;
      cap *= 2;
    }
    jl_pocket *pk = &all[np];
    memset(pk, 0, sizeof *pk);
    pk->seed = s;
    size_t head = 0, tail = 0;
    queue[tail++] = (uint32_t)s;
    label[s] = np;
    while (head < tail) {
      if ((*cut = jl_pocket_poll(&work, lim, since))) goto done;
      size_t id = queue[head++];
      double x = (double)(id % nx), y = (double)((id / nx) % (size_t)m->dim[1]), z = (double)(id / nxy);
      pk->count++;
      pk->sum[0] += x; pk->sum[1] += y; pk->sum[2] += z;
      pk->sq[0] += x * x; pk->sq[1] += x * y; pk->sq[2] += x * z;
      pk->sq[3] += y * y; pk->sq[4] += y * z; pk->sq[5] += z * z;
      int ix = (int)x, iy = (int)y, iz = (int)z;
      size_t nb[6];
      int cnt = jl_pocket_neighbours(m, id, ix, iy, iz, nb);
      for (int t = 0; t < cnt; ++t)
        if (label[nb[t]] < 0 && (double)dist[nb[t]] >= r2) {
          label[nb[t]] = np;
          queue[tail++] = (uint32_t)nb[t];
        }
    }
    np++;
  }
  qsort(all, (size_t)np, sizeof *all, jl_pocket_cmp);
  int keep = 0;
  for (int p = 0; p < np && keep < JL_POCKETS_MAX; ++p) {
    jl_pocket *pk = &all[p];
    if (pk->count < JL_POCKET_MIN_VOXELS) break;
    double n = pk->count, mu[3] = {pk->sum[0] / n, pk->sum[1] / n, pk->sum[2] / n};
    double cov[3][3] = {
        {pk->sq[0] / n - mu[0] * mu[0], pk->sq[1] / n - mu[0] * mu[1], pk->sq[2] / n - mu[0] * mu[2]},
        {0, pk->sq[3] / n - mu[1] * mu[1], pk->sq[4] / n - mu[1] * mu[2]},
        {0, 0, pk->sq[5] / n - mu[2] * mu[2]}};
    cov[1][0] = cov[0][1];
    cov[2][0] = cov[0][2];
    cov[2][1] = cov[1][2];
    jl_sym3_eigen(cov, pk->axis);
    for (int d = 0; d < 3; ++d) pk->mean[d] = m->origin[d] + (mu[d] + 0.5) * m->v;
    /* the core voxel nearest the mean: a bent core's mean may lie outside it */
    int lab = label[pk->seed];
    double best = INFINITY;
    size_t head = 0, tail = 0;
    queue[tail++] = (uint32_t)pk->seed;
    label[pk->seed] = -2 - lab;  /* visited again */
    while (head < tail) {
      if ((*cut = jl_pocket_poll(&work, lim, since))) goto done;
      size_t id = queue[head++];
      double c[3];
      jl_voxel_centre(m, id, c);
      double d2 = 0.0;
      for (int d = 0; d < 3; ++d) d2 += (c[d] - pk->mean[d]) * (c[d] - pk->mean[d]);
      if (d2 < best) {
        best = d2;
        memcpy(pk->centre, c, sizeof c);
      }
      int ix = (int)(id % nx), iy = (int)((id / nx) % (size_t)m->dim[1]), iz = (int)(id / nxy);
      size_t nb[6];
      int cnt = jl_pocket_neighbours(m, id, ix, iy, iz, nb);
      for (int t = 0; t < cnt; ++t)
        if (label[nb[t]] == lab) {
          label[nb[t]] = -2 - lab;
          queue[tail++] = (uint32_t)nb[t];
        }
    }
    out[keep++] = *pk;
  }
  *n_out = keep;
done:
  free(label);
  free(queue);
  free(all);
  return JL_OK;
}

/* ---- frames and placement ---- */

static void jl_v_cross(const double a[3], const double b[3], double o[3]) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

static double jl_v_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static int jl_v_unit(double a[3]) {
  double l = sqrt(jl_v_dot(a, a));
  if (!(l > 1e-9)) return 0;
  for (int d = 0; d < 3; ++d) a[d] /= l;
  return 1;
}

/* v turned by angle about the unit axis n (Rodrigues). */
static void jl_v_turn(const double v[3], const double n[3], double angle, double o[3]) {
  double c = cos(angle), s = sin(angle), nv[3], d = jl_v_dot(n, v);
  jl_v_cross(n, v, nv);
  for (int k = 0; k < 3; ++k) o[k] = v[k] * c + nv[k] * s + n[k] * d * (1.0 - c);
}

typedef struct jl_frame {
  double col[3][3];        /* world directions of the block's x, y and z edges */
  int wall;                /* 1: slid against the wall along col[axis along the normal] */
  int normal_edge;         /* the block edge along the wall's normal */
} jl_frame;

/* Sets the block edges e[0] (longest), e[1], e[2] (shortest) along the
 * directions a, b and a x b; the columns then form a proper rotation. */
static void jl_frame_set(jl_frame *f, const int e[3], const double a[3], const double b[3]) {
  double c[3];
  jl_v_cross(a, b, c);
  memcpy(f->col[e[0]], a, sizeof c);
  memcpy(f->col[e[1]], b, sizeof c);
  memcpy(f->col[e[2]], c, sizeof c);
  /* an odd permutation of the edges mirrors: flip the third */
  double x[3];
  jl_v_cross(f->col[0], f->col[1], x);
  if (jl_v_dot(x, f->col[2]) < 0.0)
    for (int d = 0; d < 3; ++d) f->col[e[2]][d] = -f->col[e[2]][d];
}

/* The frames tried in a pocket: principal axes (two ways), then against
 * the wall with normal n (when has_wall): flat (shortest edge along n) and
 * on its side (middle edge along n), the long edge along the principal
 * axis laid into the wall or across it, each turned about n. */
static int jl_pocket_frames(const jl_pocket *pk, const int e[3], int has_wall, const double n[3],
                            jl_frame *out) {
  int k = 0;
  const double *a0 = pk->axis[0], *a1 = pk->axis[1], *a2 = pk->axis[2];
  memset(out, 0, sizeof(jl_frame) * JL_POCKET_FRAMES);
  jl_frame_set(&out[k++], e, a0, a1);
  jl_frame_set(&out[k++], e, a0, a2);
  if (!has_wall) return k;
  double t[3], inward[3] = {-n[0], -n[1], -n[2]};
  double d = jl_v_dot(a0, n);
  for (int i = 0; i < 3; ++i) t[i] = a0[i] - d * n[i];
  if (!jl_v_unit(t)) {  /* the pocket's long axis is the normal: any line in the wall */
    double up[3] = {0, 0, 1};
    jl_v_cross(n, up, t);
    if (!jl_v_unit(t)) {
      double x[3] = {1, 0, 0};
      jl_v_cross(n, x, t);
      jl_v_unit(t);
    }
  }
  double u[3];
  jl_v_cross(inward, t, u);
  /* (edge along n, edge along t, edge along u) */
  const int plan[4][3] = {{e[2], e[0], e[1]}, {e[2], e[1], e[0]}, {e[1], e[0], e[2]}, {e[1], e[2], e[0]}};
  const double turn[3] = {0.0, JL_POCKET_TURN_DEG * JL_PI / 180.0, -JL_POCKET_TURN_DEG * JL_PI / 180.0};
  for (int p = 0; p < 4; ++p)
    for (int r = 0; r < 3; ++r) {
      double tt[3], uu[3];
      jl_v_turn(t, inward, turn[r], tt);
      jl_v_turn(u, inward, turn[r], uu);
      jl_frame *f = &out[k++];
      int ee[3] = {plan[p][1], plan[p][2], plan[p][0]};
      jl_frame_set(f, ee, tt, uu);
      /* jl_frame_set made the third (along n) right-handed: inward or out */
      f->wall = 1;
      f->normal_edge = plan[p][0];
    }
  return k;
}

/* Share of sample points of the box (centre c, frame f, half edges h) in
 * occupied voxels or off the map. */
static double jl_box_blocked(const jl_voxel_map *m, const double c[3], const jl_frame *f,
                             const double h[3]) {
  int bad = 0, all = 0;
  for (int a = 0; a < JL_POCKET_SAMPLES; ++a)
    for (int b = 0; b < JL_POCKET_SAMPLES; ++b)
      for (int g = 0; g < JL_POCKET_SAMPLES; ++g) {
        double s[3] = {(2.0 * a + 1.0) / JL_POCKET_SAMPLES - 1.0, (2.0 * b + 1.0) / JL_POCKET_SAMPLES - 1.0,
                       (2.0 * g + 1.0) / JL_POCKET_SAMPLES - 1.0};
        int idx[3], in = 1;
        for (int d = 0; d < 3 && in; ++d) {
          double x = c[d];
          for (int k = 0; k < 3; ++k) x += s[k] * h[k] * f->col[k][d];
          double fi = floor((x - m->origin[d]) / m->v);
          in = fi >= 0.0 && fi < (double)m->dim[d];
          idx[d] = in ? (int)fi : 0;
        }
        all++;
        if (!in || !m->free[(size_t)idx[0] + (size_t)m->dim[0] * ((size_t)idx[1] + (size_t)m->dim[1] * (size_t)idx[2])])
          bad++;
      }
  return (double)bad / all;
}

/* Marks the voxels whose centre lies within half a voxel diagonal of the
 * box as occupied. */
static void jl_mark_box(jl_voxel_map *m, const jl_obb *o) {
  double lo[3], hi[3], pad = 0.5 * sqrt(3.0) * m->v;
  jl_obb_bounds(o, lo, hi);
  int a[3], b[3];
  for (int d = 0; d < 3; ++d) {
    a[d] = (int)floor((lo[d] - pad - m->origin[d]) / m->v);
    b[d] = (int)floor((hi[d] + pad - m->origin[d]) / m->v);
    if (a[d] < 0) a[d] = 0;
    if (b[d] > m->dim[d] - 1) b[d] = m->dim[d] - 1;
  }
  for (int k = a[2]; k <= b[2]; ++k)
    for (int j = a[1]; j <= b[1]; ++j)
      for (int i = a[0]; i <= b[0]; ++i) {
        double c[3] = {m->origin[0] + (i + 0.5) * m->v, m->origin[1] + (j + 0.5) * m->v,
                       m->origin[2] + (k + 0.5) * m->v}, r[3];
        for (int d = 0; d < 3; ++d) r[d] = c[d] - o->c[d];
        int in = 1;
        for (int t = 0; t < 3 && in; ++t) in = fabs(jl_v_dot(r, o->ax[t])) <= o->h[t] + pad;
        if (in) m->free[(size_t)i + (size_t)m->dim[0] * ((size_t)j + (size_t)m->dim[1] * (size_t)k)] = 0;
      }
}

/* Summed overlap of box o with the walls and the boxes nb[0..nn). */
static double jl_place_energy(const jl_trunk_geom *g, const jl_obb *o, const jl_obb *nb, int nn) {
  double e = jl_trunk_box_surface_sum(g, o);
  double r2 = 4.0 * (o->h[0] * o->h[0] + o->h[1] * o->h[1] + o->h[2] * o->h[2]);
  for (int k = 0; k < nn; ++k) {
    double dc[3] = {nb[k].c[0] - o->c[0], nb[k].c[1] - o->c[1], nb[k].c[2] - o->c[2]};
    if (jl_v_dot(dc, dc) >= r2) continue;  /* bounding spheres apart */
    double d = jl_obb_overlap_depth(o, &nb[k]);
    if (d > 0) e += d;
  }
  return e;
}

static void jl_obb_set(jl_obb *o, const double c[3], const jl_frame *f, const double h[3]) {
  for (int d = 0; d < 3; ++d) {
    o->c[d] = c[d];
    o->h[d] = h[d];
    for (int k = 0; k < 3; ++k) o->ax[k][d] = f->col[k][d];
  }
}

/* Compass search from (c, f) for a placement of least overlap with the
 * walls and the boxes nb; returns that overlap (<= tol: it fits). */
static double jl_place_search(const jl_trunk_geom *g, double c[3], jl_frame *f, const double h[3],
                              const jl_obb *nb, int nn) {
  jl_obb o;
  jl_obb_set(&o, c, f, h);
  double e = jl_place_energy(g, &o, nb, nn);
  double st = JL_POCKET_STEP_MM, sr = JL_POCKET_STEP_DEG * JL_PI / 180.0;
  while (e > g->tol && st >= JL_POCKET_STEP_MIN_MM) {
    int better = 0;
    for (int mv = 0; mv < 12 && e > g->tol; ++mv) {
      int axis = mv / 2 % 3, sign = mv % 2 ? -1 : 1;
      double c2[3];
      jl_frame f2 = *f;
      memcpy(c2, c, sizeof c2);
      if (mv < 6) {
        for (int d = 0; d < 3; ++d) c2[d] += sign * st * f->col[axis][d];
      } else {
        for (int k = 0; k < 3; ++k)
          if (k != axis) jl_v_turn(f->col[k], f->col[axis], sign * sr, f2.col[k]);
      }
      jl_obb_set(&o, c2, &f2, h);
      double e2 = jl_place_energy(g, &o, nb, nn);
      if (e2 < e) {
        e = e2;
        memcpy(c, c2, sizeof c2);
        *f = f2;
        better = 1;
      }
    }
    if (!better) {
      st *= 0.5;
      sr *= 0.5;
    }
  }
  return e;
}

int jl_trunk_pocket_fill(const jl_trunk_geom *g, jl_voxel_map *map, jl_block_packing *p,
                         int max_add, jl_trunk_check_fn check, void *ctx,
                         const jl_trunk_limits *lim, jl_pocket_info *info, jl_error *err) {
  double t0 = jl_time_now();
  memset(info, 0, sizeof *info);
  double h[3] = {0.5 * g->block.x, 0.5 * g->block.y, 0.5 * g->block.z};
  int e[3] = {0, 1, 2};  /* block edges, longest first */
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (h[e[j]] > h[e[i]]) {
        int t = e[i];
        e[i] = e[j];
        e[j] = t;
      }
  /* a block holds a ball of its shortest half edge: its centre region is
   * at least that far from anything else (one voxel of slack) */
  double r = h[e[2]] / map->v - 1.0;
  double r2 = r > 0.0 ? r * r : 0.0;
  float *dist = malloc(map->n * sizeof *dist);
  jl_obb *nb = malloc(((size_t)p->count + (size_t)(max_add > 0 ? max_add : 0) + 1) * sizeof *nb);
  jl_pocket *pk = malloc(JL_POCKETS_MAX * sizeof *pk);
  jl_block_packing trial;
  memset(&trial, 0, sizeof trial);
  int rc = JL_OK;
  if (!dist || !pk || !nb) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the pockets (%zu voxels)", map->n);
    goto done;
  }
  int done_all = 0;
  while (info->added < max_add && !done_all) {
    if (jl_trunk_limits_hit(lim, t0)) break;
    int cut = 0, np = 0;
    if ((rc = jl_edt(map, dist, lim, t0, &cut, err)) || cut) goto done;
    if ((rc = jl_find_pockets(map, dist, r2, pk, &np, lim, t0, &cut, err)) || cut) goto done;
    info->pockets += np;
    done_all = 1;
    for (int q = 0; q < np && done_all; ++q) {
      double n[3];
      int tri = -1;
      double radius = 2.0 * sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
      jl_trunk_nearest_triangle(g, pk[q].centre, radius, &tri, n);
      jl_frame fr[JL_POCKET_FRAMES];
      int nf = jl_pocket_frames(&pk[q], e, tri >= 0, n, fr);
      for (int f = 0; f < nf && done_all; ++f) {
        if (jl_trunk_limits_hit(lim, t0)) goto done;
        double c[3];
        memcpy(c, pk[q].centre, sizeof c);
        if (fr[f].wall) {
          /* slide the block against the wall's plane, a margin off it */
          const int *tv = g->mesh->triangles + 3 * tri;
          const double *a = g->mesh->vertices + 3 * tv[0];
          double s = 0.0;
          for (int d = 0; d < 3; ++d) s += n[d] * (c[d] - a[d]);
          double hn = h[fr[f].normal_edge];
          for (int d = 0; d < 3; ++d) c[d] -= (s + hn + JL_LEGALIZE_MARGIN) * n[d];
        }
        if (jl_box_blocked(map, c, &fr[f], h) > JL_POCKET_BLOCKED) continue;
        /* the blocks the search could reach */
        double reach = 2.0 * sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]) + 2.0 * h[e[0]];
        int nn = 0;
        for (int i = 0; i < p->count; ++i) {
          double d2 = 0.0;
          for (int d = 0; d < 3; ++d) d2 += (p->centre[3 * i + d] - c[d]) * (p->centre[3 * i + d] - c[d]);
          if (d2 < reach * reach) jl_obb_from_block(&g->block, p->centre + 3 * i, p->quat + 4 * i, &nb[nn++]);
        }
        double e0 = jl_place_search(g, c, &fr[f], h, nb, nn);
        if (e0 > JL_POCKET_PUSH_MM) continue;
        double q4[4];
        jl_quat_from_axes(fr[f].col, q4);
        if ((rc = jl_block_packing_copy(&trial, p, err))) goto done;
        if ((rc = jl_block_packing_push(&trial, c, q4, err))) goto done;
        double until = jl_time_now() + JL_POCKET_TRY_S;
        jl_trunk_limits tl = {until, lim ? lim->stop : NULL, 0.0};
        if (lim && lim->deadline > 0.0 && lim->deadline < until) tl.deadline = lim->deadline;
        jl_legalize_info li;
        info->tried++;
        if ((rc = jl_trunk_legalize(g, &trial, p->count, p->count, &tl, &li, err))) goto done;
        if (!li.legal) continue;
        double worst = 0.0;
        if (!check(ctx, &trial, &worst)) continue;
        if ((rc = jl_block_packing_copy(p, &trial, err))) goto done;
        info->added++;
        /* the new block, and the blocks it pushed where they went: occupied now */
        for (int i = li.moved > 1 ? 0 : p->count - 1; i < p->count; ++i) {
          jl_obb o;
          jl_obb_from_block(&g->block, p->centre + 3 * i, p->quat + 4 * i, &o);
          jl_mark_box(map, &o);
        }
        done_all = 0;  /* read the map again */
      }
    }
  }
done:
  info->time_s = jl_time_now() - t0;
  jl_block_packing_free(&trial);
  free(dist);
  free(pk);
  free(nb);
  return rc;
}
