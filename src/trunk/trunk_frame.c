#include "trunk_frame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "mesh.h"
#include "trunk_baseline.h"

/* Mean-shift steps at most per window (each a pass over the faces); a
 * planar floor converges in one, a curved one in a few. */
#define JL_FRAME_SHIFT_ITERS 64

static double jl_frame_rad(double deg) { return deg * (JL_PI / 180.0); }
static double jl_frame_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void jl_frame_cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
static int jl_frame_normalize(double v[3]) {
  double l = sqrt(jl_frame_dot(v, v));
  if (!(l > 0.0)) return 0;
  for (int k = 0; k < 3; ++k) v[k] /= l;
  return 1;
}

/* Unit normals and areas of the faces in one list. */
typedef struct jl_frame_faces {
  int n;
  double *nrm;             /* 3 n */
  double *area;            /* n */
} jl_frame_faces;

/* Mean shift of a unit normal: est becomes the area-weighted mean of the
 * normals within the angle whose cosine is cosr, until it stops moving.
 * Returns the area of the last window (0: it held no normal; est kept). */
static double jl_frame_shift_normal(const jl_frame_faces *f, double cosr, double est[3]) {
  double area = 0.0;
  for (int it = 0; it < JL_FRAME_SHIFT_ITERS; ++it) {
    double s[3] = {0.0, 0.0, 0.0};
    area = 0.0;
    for (int i = 0; i < f->n; ++i) {
      const double *n = f->nrm + 3 * i;
      if (jl_frame_dot(n, est) < cosr) continue;
      for (int k = 0; k < 3; ++k) s[k] += f->area[i] * n[k];
      area += f->area[i];
    }
    if (!jl_frame_normalize(s)) return 0.0;
    int same = s[0] == est[0] && s[1] == est[1] && s[2] == est[2];
    memcpy(est, s, sizeof s);
    if (same) break;
  }
  return area;
}

/* d wrapped into [-pi/4, pi/4]: directions modulo a right angle. */
static double jl_frame_wrap(double d) { return d - 0.5 * JL_PI * round(d / (0.5 * JL_PI)); }

/* Mean shift of a folded angle (period 90 degrees), as above. */
static double jl_frame_shift_angle(const double *phi, const double *area, int n, double r, double *est) {
  double a = 0.0;
  for (int it = 0; it < JL_FRAME_SHIFT_ITERS; ++it) {
    double s = 0.0;
    a = 0.0;
    for (int i = 0; i < n; ++i) {
      double d = jl_frame_wrap(phi[i] - *est);
      if (fabs(d) > r) continue;
      s += area[i] * d;
      a += area[i];
    }
    if (!(a > 0.0)) return 0.0;
    double next = jl_frame_wrap(*est + s / a);
    int same = next == *est;
    *est = next;
    if (same) break;
  }
  return a;
}

/* The floor's outward normal (pointing down) from the faces within
 * JL_FRAME_FLOOR_DEG of -z: the heaviest 3 x 3 window of a histogram over
 * (n_x, n_y) seeds the mean shift. Returns the deciding area (0: none). */
static double jl_frame_floor(const jl_frame_faces *all, jl_frame_faces *cand, double floor_n[3]) {
  double cmin = cos(jl_frame_rad(JL_FRAME_FLOOR_DEG)), s = sin(jl_frame_rad(JL_FRAME_FLOOR_DEG));
  double w = jl_frame_rad(JL_FRAME_CLUSTER_DEG);
  cand->n = 0;
  for (int i = 0; i < all->n; ++i) {
    const double *n = all->nrm + 3 * i;
    if (-n[2] < cmin || !(all->area[i] > 0.0)) continue;
    memcpy(cand->nrm + 3 * cand->n, n, 3 * sizeof *n);
    cand->area[cand->n++] = all->area[i];
  }
  floor_n[0] = floor_n[1] = 0.0;
  floor_n[2] = -1.0;
  if (cand->n == 0) return 0.0;
  int nb = (int)ceil(2.0 * s / w) + 1;
  double *bin = calloc((size_t)nb * nb * 4, sizeof *bin);  /* area, then the area-weighted normal */
  if (!bin) return -1.0;
  for (int i = 0; i < cand->n; ++i) {
    const double *n = cand->nrm + 3 * i;
    int ix = (int)floor((n[0] + s) / w), iy = (int)floor((n[1] + s) / w);
    ix = ix < 0 ? 0 : ix >= nb ? nb - 1 : ix;
    iy = iy < 0 ? 0 : iy >= nb ? nb - 1 : iy;
    double *b = bin + 4 * ((size_t)iy * nb + ix);
    b[0] += cand->area[i];
    for (int k = 0; k < 3; ++k) b[1 + k] += cand->area[i] * n[k];
  }
  double best = -1.0, seed[3] = {0.0, 0.0, -1.0};
  for (int iy = 0; iy < nb; ++iy)
    for (int ix = 0; ix < nb; ++ix) {
      double a = 0.0, sum[3] = {0.0, 0.0, 0.0};
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int x = ix + dx, y = iy + dy;
          if (x < 0 || y < 0 || x >= nb || y >= nb) continue;
          const double *b = bin + 4 * ((size_t)y * nb + x);
          a += b[0];
          for (int k = 0; k < 3; ++k) sum[k] += b[1 + k];
        }
      if (a > best && jl_frame_normalize(sum)) {  /* ties: the first window */
        best = a;
        memcpy(seed, sum, sizeof seed);
      }
    }
  free(bin);
  if (jl_frame_shift_normal(cand, cos(w), seed) <= 0.0) return 0.0;
  double est[3];
  memcpy(est, seed, sizeof est);
  double area = jl_frame_shift_normal(cand, cos(jl_frame_rad(JL_FRAME_FINE_DEG)), est);
  if (area <= 0.0) return 0.0;
  /* the planar floor's own faces alone (the window at FINE_DEG may still
   * hold fillet facets, which tilt the mean by 1e-4 degrees: enough to lift
   * a whole layer of blocks off the far end of a 1 m floor) */
  double exact[3];
  memcpy(exact, est, sizeof exact);
  if (jl_frame_shift_normal(cand, cos(jl_frame_rad(JL_FRAME_EXACT_DEG)), exact) > 0.0)
    memcpy(est, exact, sizeof est);
  memcpy(floor_n, est, sizeof est);
  return area;
}

/* The wall direction: angle in [-pi/4, pi/4] from x0 towards y0 (both
 * horizontal for up) of the heaviest cluster of the near-vertical faces'
 * horizontal directions folded modulo 90 degrees. Returns the deciding
 * area (0: none; *alpha = 0). */
static double jl_frame_walls(const jl_frame_faces *all, const double up[3], const double x0[3],
                             const double y0[3], double *phi, double *area, double *alpha) {
  double smax = sin(jl_frame_rad(JL_FRAME_WALL_DEG)), w = jl_frame_rad(JL_FRAME_CLUSTER_DEG);
  int n = 0;
  for (int i = 0; i < all->n; ++i) {
    const double *nr = all->nrm + 3 * i;
    if (fabs(jl_frame_dot(nr, up)) > smax || !(all->area[i] > 0.0)) continue;
    phi[n] = jl_frame_wrap(atan2(jl_frame_dot(nr, y0), jl_frame_dot(nr, x0)));
    area[n++] = all->area[i];
  }
  *alpha = 0.0;
  if (n == 0) return 0.0;
  int nb = (int)floor(0.5 * JL_PI / w + 0.5);
  double bw = 0.5 * JL_PI / nb;
  double *bin = calloc((size_t)nb, sizeof *bin);
  if (!bin) return -1.0;
  for (int i = 0; i < n; ++i) {
    int b = (int)floor((phi[i] + 0.25 * JL_PI) / bw);
    bin[((b % nb) + nb) % nb] += area[i];
  }
  double best = -1.0;
  int bb = 0;
  for (int b = 0; b < nb; ++b) {
    double a = bin[(b + nb - 1) % nb] + bin[b] + bin[(b + 1) % nb];
    if (a > best) {
      best = a;
      bb = b;
    }
  }
  free(bin);
  double est = jl_frame_wrap(-0.25 * JL_PI + (bb + 0.5) * bw);
  if (jl_frame_shift_angle(phi, area, n, 1.5 * bw, &est) <= 0.0) return 0.0;
  double a = jl_frame_shift_angle(phi, area, n, jl_frame_rad(JL_FRAME_FINE_DEG), &est);
  if (a <= 0.0) return 0.0;
  double exact = est;
  if (jl_frame_shift_angle(phi, area, n, jl_frame_rad(JL_FRAME_EXACT_DEG), &exact) > 0.0) est = exact;
  *alpha = est;
  return a;
}

void jl_trunk_frame_from_angles(double yaw, double pitch, double roll, double R[3][3]) {
  double cy = cos(yaw), sy = sin(yaw), cp = cos(pitch), sp = sin(pitch), cr = cos(roll), sr = sin(roll);
  /* M = Rz Ry Rx; R = M^T */
  double M[3][3] = {{cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr},
                    {sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr},
                    {-sp, cp * sr, cp * cr}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R[i][j] = M[j][i];
}

int jl_trunk_frame_detect(const jl_mesh *m, const jl_block_size *block, jl_trunk_frame *f, jl_error *err) {
  memset(f, 0, sizeof *f);
  size_t nt = (size_t)(m->n_triangles > 0 ? m->n_triangles : 1);
  jl_frame_faces all = {0, malloc(3 * nt * sizeof(double)), malloc(nt * sizeof(double))};
  jl_frame_faces cand = {0, malloc(3 * nt * sizeof(double)), malloc(nt * sizeof(double))};
  double *phi = malloc(nt * sizeof *phi), *wa = malloc(nt * sizeof *wa);
  int rc = JL_OK;
  if (!all.nrm || !all.area || !cand.nrm || !cand.area || !phi || !wa) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory finding the floor's frame");
    goto done;
  }
  for (int t = 0; t < m->n_triangles; ++t) {
    const double *a = m->vertices + 3 * m->triangles[3 * t], *b = m->vertices + 3 * m->triangles[3 * t + 1],
                 *c = m->vertices + 3 * m->triangles[3 * t + 2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]}, n[3];
    jl_frame_cross(u, v, n);
    double l = sqrt(jl_frame_dot(n, n));
    f->surface_area += 0.5 * l;
    if (!jl_frame_normalize(n)) continue;
    memcpy(all.nrm + 3 * all.n, n, sizeof n);
    all.area[all.n++] = 0.5 * l;
  }
  double floor_n[3];
  f->floor_area = jl_frame_floor(&all, &cand, floor_n);
  double up[3] = {-floor_n[0], -floor_n[1], -floor_n[2]};
  /* x0: the mesh's x laid into the floor; y0 = up x x0 */
  double x0[3] = {1.0 - up[0] * up[0], -up[0] * up[1], -up[0] * up[2]}, y0[3];
  jl_frame_normalize(x0);  /* up is within JL_FRAME_FLOOR_DEG of z: x0 is not zero */
  jl_frame_cross(up, x0, y0);
  double alpha = 0.0;
  f->wall_area = jl_frame_walls(&all, up, x0, y0, phi, wa, &alpha);
  if (f->floor_area < 0.0 || f->wall_area < 0.0) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory finding the floor's frame");
    goto done;
  }
  double ca = cos(alpha), sa = sin(alpha), e1[3], e2[3];
  for (int k = 0; k < 3; ++k) e1[k] = ca * x0[k] + sa * y0[k];
  jl_frame_cross(up, e1, e2);
  double R[3][3];
  for (int k = 0; k < 3; ++k) {
    R[0][k] = e1[k];
    R[1][k] = e2[k];
    R[2][k] = up[k];
  }
  memcpy(f->R, R, sizeof R);
  jl_quat_from_axes(R, f->q);  /* columns of R^T: the frame's axes in the mesh */
  double qv = sqrt(f->q[1] * f->q[1] + f->q[2] * f->q[2] + f->q[3] * f->q[3]);
  f->angle = 2.0 * atan2(qv, fabs(f->q[0]));
  /* R^T = M = Rz(yaw) Ry(pitch) Rx(roll): M[i][j] = R[j][i] */
  f->pitch = atan2(-f->R[0][2], hypot(f->R[1][2], f->R[2][2]));
  f->roll = atan2(f->R[1][2], f->R[2][2]);
  f->yaw = atan2(f->R[0][1], f->R[0][0]);
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  for (int v = 0; v < m->n_vertices; ++v) {
    double p[3], d2 = 0.0;
    for (int k = 0; k < 3; ++k) p[k] = m->vertices[3 * v + k] - 0.5 * (lo[k] + hi[k]);
    for (int r = 0; r < 3; ++r) {
      double d = jl_frame_dot(f->R[r], p) - p[r];
      d2 += d * d;
    }
    f->shift = fmax(f->shift, sqrt(d2));
  }
  double shortest = fmin(block->x, fmin(block->y, block->z));
  f->turned = f->shift > JL_FRAME_MIN_SHIFT * shortest;
done:
  free(all.nrm); free(all.area); free(cand.nrm); free(cand.area); free(phi); free(wa);
  return rc;
}

int jl_trunk_frame_turn_mesh(const jl_mesh *m, const jl_trunk_frame *f, jl_mesh *out, jl_error *err) {
  int rc = jl_mesh_from_arrays(out, m->vertices, m->n_vertices, m->triangles, m->n_triangles, err);
  if (rc != JL_OK) return rc;
  for (int v = 0; v < out->n_vertices; ++v) {
    double *x = out->vertices + 3 * v, y[3];
    for (int r = 0; r < 3; ++r) y[r] = jl_frame_dot(f->R[r], x);
    memcpy(x, y, sizeof y);
  }
  return JL_OK;
}

int jl_trunk_frame_packing_back(const jl_trunk_frame *f, const jl_block_packing *in, jl_block_packing *out,
                                jl_error *err) {
  out->count = 0;
  int rc = jl_block_packing_reserve(out, in->count, err);
  jl_quat qf = {f->q[0], f->q[1], f->q[2], f->q[3]};
  for (int i = 0; i < in->count && rc == JL_OK; ++i) {
    const double *c = in->centre + 3 * i, *q = in->quat + 4 * i;
    double w[3];
    for (int e = 0; e < 3; ++e) w[e] = f->R[0][e] * c[0] + f->R[1][e] * c[1] + f->R[2][e] * c[2];
    jl_quat qb = {q[0], q[1], q[2], q[3]};
    jl_quat qw = jl_quat_normalize(jl_quat_mul(qf, qb));
    double qq[4] = {qw.w, qw.x, qw.y, qw.z};
    rc = jl_block_packing_push(out, w, qq, err);
  }
  return rc;
}
