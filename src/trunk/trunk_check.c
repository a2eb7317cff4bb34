#include "stop_flag.h"
#include "trunk_check.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "mesh.h"
#include "timer.h"

/* Plain comparisons: the libm fmin/fmax calls (NaN rules) cost a tenth of the baseline. */
static inline double jl_min(double a, double b) { return a < b ? a : b; }
static inline double jl_max(double a, double b) { return a > b ? a : b; }

static double jl_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void jl_sub(const double *a, const double *b, double *o) {
  o[0] = a[0] - b[0];
  o[1] = a[1] - b[1];
  o[2] = a[2] - b[2];
}
static void jl_cross(const double *a, const double *b, double *o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

int jl_trunk_limits_hit(const jl_trunk_limits *lim, double since) {
  if (!lim || !(jl_stop_requested(lim->stop) || lim->deadline > 0.0)) return 0;
  double now = jl_time_now();
  if (now < since + lim->grace) return 0;
  return jl_stop_requested(lim->stop) || (lim->deadline > 0.0 && now >= lim->deadline);
}

int jl_trunk_geom_init(jl_trunk_geom *g, const jl_mesh *m, jl_block_size block, jl_error *err) {
  memset(g, 0, sizeof *g);
  g->mesh = m;
  g->block = block;
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  g->diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                 (hi[2] - lo[2]) * (hi[2] - lo[2]));
  g->tol = JL_TRUNK_REL_TOL * g->diag;
  return jl_bvh_build(&g->bvh, m->vertices, m->triangles, m->n_triangles, err);
}

void jl_trunk_geom_free(jl_trunk_geom *g) {
  if (!g) return;
  jl_bvh_free(&g->bvh);
  memset(g, 0, sizeof *g);
}

void jl_obb_from_block(const jl_block_size *b, const double centre[3], const double quat[4],
                       jl_obb *o) {
  jl_quat q = {quat[0], quat[1], quat[2], quat[3]};
  double l = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  if (l > 0) q = jl_quat_normalize(q);
  else q = jl_quat_identity();
  jl_vec3 ax[3];
  jl_quat_to_axes(q, ax);
  for (int k = 0; k < 3; ++k) {
    o->c[k] = centre[k];
    o->ax[k][0] = ax[k].x;
    o->ax[k][1] = ax[k].y;
    o->ax[k][2] = ax[k].z;
  }
  o->h[0] = 0.5 * b->x;
  o->h[1] = 0.5 * b->y;
  o->h[2] = 0.5 * b->z;
}

void jl_obb_bounds(const jl_obb *o, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; ++k) {
    double r = o->h[0] * fabs(o->ax[0][k]) + o->h[1] * fabs(o->ax[1][k]) + o->h[2] * fabs(o->ax[2][k]);
    lo[k] = o->c[k] - r;
    hi[k] = o->c[k] + r;
  }
}

/* ---- box / triangle: 13 separating axes in the box's frame ---- */

/* Overlap of the triangle (local coordinates v) with the box [-h, h] along
 * the axis a (any length; zero-length axes carry no information); *side
 * gets +1 when the box clears it moving along +a, -1 along -a. */
static int jl_axis_overlap(const double v[3][3], const double h[3], const double a[3], double *ov,
                           int *side) {
  double l = sqrt(jl_dot(a, a));
  if (!(l > 0)) return 0;
  double p0 = jl_dot(v[0], a), p1 = jl_dot(v[1], a), p2 = jl_dot(v[2], a);
  double r = h[0] * fabs(a[0]) + h[1] * fabs(a[1]) + h[2] * fabs(a[2]);
  double lo = jl_min(p0, jl_min(p1, p2)), hi = jl_max(p0, jl_max(p1, p2));
  *side = hi + r < r - lo ? 1 : -1;
  *ov = jl_min(hi + r, r - lo) / l;
  return 1;
}

/* 13 separating axes in the box's frame. The winning axis (box-local,
 * unnormalised) and its side are kept only when push is wanted: the
 * exact check and the fills only need the depth. */
static double jl_box_tri_sat(const jl_obb *o, const double *const p[3], double push[3]) {
  double v[3][3];
  for (int i = 0; i < 3; ++i) {
    double d[3];
    jl_sub(p[i], o->c, d);
    for (int k = 0; k < 3; ++k) v[i][k] = jl_dot(d, o->ax[k]);
  }
  double depth = DBL_MAX, ov, best[3] = {0, 0, 0};
  int side = 1, bside = 1;
  for (int k = 0; k < 3; ++k) {  /* the box's face normals */
    double lo = jl_min(v[0][k], jl_min(v[1][k], v[2][k])), hi = jl_max(v[0][k], jl_max(v[1][k], v[2][k]));
    double d = jl_min(hi + o->h[k], o->h[k] - lo);
    if (d < depth) {
      depth = d;
      if (push) {
        best[0] = best[1] = best[2] = 0.0;
        best[k] = 1.0;
        bside = hi + o->h[k] < o->h[k] - lo ? 1 : -1;
      }
    }
    if (depth <= 0) return depth;
  }
  double e[3][3];
  for (int i = 0; i < 3; ++i) jl_sub(v[(i + 1) % 3], v[i], e[i]);
  double n[3];
  jl_cross(e[0], e[1], n);
  if (jl_axis_overlap(v, o->h, n, &ov, &side) && ov < depth) {
    depth = ov;
    if (push) { memcpy(best, n, sizeof best); bside = side; }
  }
  for (int i = 0; i < 3 && depth > 0; ++i)
    for (int k = 0; k < 3; ++k) {
      double u[3] = {0, 0, 0}, a[3];
      u[k] = 1.0;
      jl_cross(u, e[i], a);
      /* a near-parallel pair gives a tiny axis; scale the threshold by the edge */
      if (jl_dot(a, a) <= 1e-24 * jl_dot(e[i], e[i])) continue;
      if (jl_axis_overlap(v, o->h, a, &ov, &side) && ov < depth) {
        depth = ov;
        if (push) { memcpy(best, a, sizeof best); bside = side; }
      }
    }
  if (push) {  /* the winning axis in the trunk's frame, unit, on the clearing side */
    double w[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k)
      for (int d = 0; d < 3; ++d) w[d] += best[k] * o->ax[k][d];
    double l = sqrt(jl_dot(w, w));
    for (int d = 0; d < 3; ++d) push[d] = l > 0 ? bside * w[d] / l : 0.0;
  }
  return depth;
}

static double jl_box_tri_depth(const jl_obb *o, const double *const p[3]) {
  return jl_box_tri_sat(o, p, NULL);
}

double jl_box_tri_contact(const jl_obb *o, const double *const p[3], double push[3]) {
  return jl_box_tri_sat(o, p, push);
}

typedef struct jl_surface_ctx {
  const jl_trunk_geom *g;
  const jl_obb *o;
  int stop;
  double depth;
  int tri;
  double sum;              /* of the positive depths */
} jl_surface_ctx;

static int jl_surface_visit(void *vctx, int t) {
  jl_surface_ctx *c = vctx;
  const jl_mesh *m = c->g->mesh;
  const double *p[3];
  for (int i = 0; i < 3; ++i) p[i] = m->vertices + 3 * m->triangles[3 * t + i];
  double d = jl_box_tri_depth(c->o, p);
  if (d > c->depth) {
    c->depth = d;
    c->tri = t;
  }
  if (d > 0) c->sum += d;
  return c->stop && c->depth > c->g->tol;
}

double jl_trunk_box_surface_depth(const jl_trunk_geom *g, const jl_obb *o, int stop_at_tol, int *tri) {
  double lo[3], hi[3];
  jl_obb_bounds(o, lo, hi);
  for (int k = 0; k < 3; ++k) {
    lo[k] -= g->tol;
    hi[k] += g->tol;
  }
  jl_surface_ctx c = {g, o, stop_at_tol, -DBL_MAX, -1, 0.0};
  jl_bvh_query_box(&g->bvh, lo, hi, jl_surface_visit, &c);
  if (tri) *tri = c.tri;
  return c.tri < 0 ? 0.0 : c.depth;
}

double jl_trunk_box_surface_sum(const jl_trunk_geom *g, const jl_obb *o) {
  double lo[3], hi[3];
  jl_obb_bounds(o, lo, hi);
  jl_surface_ctx c = {g, o, 0, -DBL_MAX, -1, 0.0};
  jl_bvh_query_box(&g->bvh, lo, hi, jl_surface_visit, &c);
  return c.sum;
}

double jl_trunk_box_surface_contact(const jl_trunk_geom *g, const jl_obb *o, int *tri, double push[3]) {
  int t = -1;
  double d = jl_trunk_box_surface_depth(g, o, 0, &t);
  if (tri) *tri = t;
  push[0] = push[1] = push[2] = 0.0;
  if (t < 0) return 0.0;
  const jl_mesh *m = g->mesh;
  const double *p[3];
  for (int i = 0; i < 3; ++i) p[i] = m->vertices + 3 * m->triangles[3 * t + i];
  jl_box_tri_contact(o, p, push);
  return d;
}

/* ---- box / box: 15 separating axes ---- */

/* 15 axes; with push, the unit axis of least overlap, pointing the way b
 * clears a (a clears b the opposite way). */
static double jl_obb_sat(const jl_obb *a, const jl_obb *b, double push[3]) {
  /* one order for a pair, so depth(a, b) == depth(b, a) to the last bit */
  double flip = 1.0;
  if (memcmp(a, b, sizeof *a) > 0) {
    const jl_obb *t = a;
    a = b;
    b = t;
    flip = -1.0;
  }
  double d[3];
  jl_sub(b->c, a->c, d);
  double axes[15][3];
  int n = 0;
  for (int i = 0; i < 3; ++i) memcpy(axes[n++], a->ax[i], sizeof axes[0]);
  for (int i = 0; i < 3; ++i) memcpy(axes[n++], b->ax[i], sizeof axes[0]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) jl_cross(a->ax[i], b->ax[j], axes[n++]);
  double depth = DBL_MAX;
  for (int k = 0; k < n; ++k) {
    double l = sqrt(jl_dot(axes[k], axes[k]));
    if (l < 1e-9) continue;  /* parallel edges: the face axes decide */
    double u[3] = {axes[k][0] / l, axes[k][1] / l, axes[k][2] / l};
    double ra = 0, rb = 0;
    for (int i = 0; i < 3; ++i) {
      ra += a->h[i] * fabs(jl_dot(a->ax[i], u));
      rb += b->h[i] * fabs(jl_dot(b->ax[i], u));
    }
    double du = jl_dot(d, u), ov = ra + rb - fabs(du);
    if (ov < depth && push) {
      double s = (du >= 0 ? 1.0 : -1.0) * flip;
      for (int i = 0; i < 3; ++i) push[i] = s * u[i];
    }
    depth = fmin(depth, ov);
    if (depth <= 0) return depth;
  }
  return depth;
}

double jl_obb_overlap_depth(const jl_obb *a, const jl_obb *b) { return jl_obb_sat(a, b, NULL); }

double jl_obb_contact(const jl_obb *a, const jl_obb *b, double push[3]) { return jl_obb_sat(a, b, push); }

/* ---- inside / outside ---- */

double jl_mesh_winding_number(const jl_mesh *m, const double p[3]) {
  long double sum = 0.0L;
  for (int t = 0; t < m->n_triangles; ++t) {
    double a[3], b[3], c[3], bc[3];
    jl_sub(m->vertices + 3 * m->triangles[3 * t], p, a);
    jl_sub(m->vertices + 3 * m->triangles[3 * t + 1], p, b);
    jl_sub(m->vertices + 3 * m->triangles[3 * t + 2], p, c);
    double la = sqrt(jl_dot(a, a)), lb = sqrt(jl_dot(b, b)), lc = sqrt(jl_dot(c, c));
    jl_cross(b, c, bc);
    double num = jl_dot(a, bc);
    double den = la * lb * lc + jl_dot(a, b) * lc + jl_dot(b, c) * la + jl_dot(c, a) * lb;
    sum += 2.0 * atan2(num, den);  /* solid angle (Van Oosterom and Strackee) */
  }
  return (double)(sum / (4.0L * JL_PI));
}

typedef struct jl_ray_ctx {
  const jl_mesh *m;
  const double *o, *d;
  int crossings;
  int grazing;
} jl_ray_ctx;

static int jl_ray_visit(void *vctx, int t) {
  jl_ray_ctx *c = vctx;
  const double *v0 = c->m->vertices + 3 * c->m->triangles[3 * t];
  const double *v1 = c->m->vertices + 3 * c->m->triangles[3 * t + 1];
  const double *v2 = c->m->vertices + 3 * c->m->triangles[3 * t + 2];
  double e1[3], e2[3], pv[3], tv[3], qv[3];
  jl_sub(v1, v0, e1);
  jl_sub(v2, v0, e2);
  jl_cross(c->d, e2, pv);
  double det = jl_dot(e1, pv);
  double scale = sqrt(jl_dot(e1, e1) * jl_dot(e2, e2));
  if (fabs(det) <= 1e-12 * scale) {
    /* the ray runs along the triangle's plane: only a problem when in it */
    jl_sub(c->o, v0, tv);
    double n[3];
    jl_cross(e1, e2, n);
    if (fabs(jl_dot(tv, n)) <= 1e-9 * sqrt(jl_dot(n, n)) * sqrt(scale)) c->grazing = 1;
    return c->grazing;
  }
  jl_sub(c->o, v0, tv);
  double u = jl_dot(tv, pv) / det;
  jl_cross(tv, e1, qv);
  double v = jl_dot(c->d, qv) / det;
  double t_hit = jl_dot(e2, qv) / det;
  const double eps = 1e-9;
  if (u < -eps || v < -eps || u + v > 1 + eps) return 0;
  if (t_hit < 0) return 0;
  if (u < eps || v < eps || u + v > 1 - eps) {
    c->grazing = 1;  /* through an edge or corner: parity would be ambiguous */
    return 1;
  }
  c->crossings++;
  return 0;
}

int jl_trunk_point_inside(const jl_trunk_geom *g, const double p[3]) {
  /* First a short ray: towards the nearest side of the bounding box, tilted
   * off the axis by irrational-looking amounts so it rarely runs along a mesh
   * edge or face made by hand or CAD; it passes few BVH nodes. */
  const jl_bvh_node *root = &g->bvh.nodes[0];
  int best = 0;
  double best_d = INFINITY;
  for (int k = 0; k < 3; ++k) {
    double dl = p[k] - root->lo[k], dh = root->hi[k] - p[k];
    if (dl < best_d) { best_d = dl; best = 2 * k; }
    if (dh < best_d) { best_d = dh; best = 2 * k + 1; }
  }
  double d0[3] = {0.0, 0.0, 0.0};
  int ax = best / 2;
  d0[ax] = best & 1 ? 1.0 : -1.0;
  d0[(ax + 1) % 3] = 0.0131557;
  d0[(ax + 2) % 3] = -0.0217643;
  double l = sqrt(jl_dot(d0, d0));
  for (int k = 0; k < 3; ++k) d0[k] /= l;
  jl_ray_ctx c0 = {g->mesh, p, d0, 0, 0};
  jl_bvh_query_ray(&g->bvh, p, d0, jl_ray_visit, &c0);
  if (!c0.grazing) return c0.crossings & 1;
  /* Then directions with no simple ratio between components. */
  static const double dirs[4][3] = {
    {0.5773502691896258, 0.6172133998483676, 0.5345224838248488},
    {-0.4242640687119285, 0.7071067811865476, -0.5656854249492380},
    {0.2672612419124244, -0.5345224838248488, 0.8017837257372732},
    {-0.7071067811865476, -0.3162277660168379, 0.6324555320336759},
  };
  for (int k = 0; k < 4; ++k) {
    jl_ray_ctx c = {g->mesh, p, dirs[k], 0, 0};
    jl_bvh_query_ray(&g->bvh, p, dirs[k], jl_ray_visit, &c);
    if (!c.grazing) return c.crossings & 1;
  }
  return jl_mesh_winding_number(g->mesh, p) > 0.5;
}

/* ---- segment / surface: blocks on one side ---- */

/* Margins of the segment/triangle test, far above rounding: a near miss
 * counts as a hit, which only costs a winding number. */
#define JL_SEG_PLANE_EPS 1e-9
#define JL_SEG_BARY_EPS 1e-7

typedef struct jl_seg_ctx {
  const jl_mesh *m;
  const double *p, *q;
} jl_seg_ctx;

/* 1 when the segment p q may meet triangle t (near misses included). */
static int jl_seg_visit(void *vctx, int t) {
  const jl_seg_ctx *c = vctx;
  const double *a = c->m->vertices + 3 * c->m->triangles[3 * t];
  const double *b = c->m->vertices + 3 * c->m->triangles[3 * t + 1];
  const double *v = c->m->vertices + 3 * c->m->triangles[3 * t + 2];
  double e1[3], e2[3], n[3], pa[3], qa[3];
  jl_sub(b, a, e1);
  jl_sub(v, a, e2);
  jl_cross(e1, e2, n);
  jl_sub(c->p, a, pa);
  jl_sub(c->q, a, qa);
  double ln = sqrt(jl_dot(n, n));
  double m = JL_SEG_PLANE_EPS * ln * (sqrt(jl_dot(pa, pa)) + sqrt(jl_dot(qa, qa)));
  double sp = jl_dot(n, pa), sq = jl_dot(n, qa);
  if ((sp > m && sq > m) || (sp < -m && sq < -m)) return 0;  /* both ends on one side */
  if (!(fabs(sp - sq) > 2.0 * m)) return 1;  /* along the plane, close to it (or NaN) */
  double s = sp / (sp - sq), x[3];
  for (int k = 0; k < 3; ++k) x[k] = c->p[k] + s * (c->q[k] - c->p[k]);
  /* barycentric coordinates of the crossing point */
  double n2 = ln * ln, xa[3], xb[3], xc[3], w[3], cr[3];
  jl_sub(x, a, xa);
  jl_sub(x, b, xb);
  jl_sub(x, v, xc);
  double eb[3], ec[3];
  jl_sub(v, b, eb);
  jl_sub(a, v, ec);
  jl_cross(eb, xb, cr);
  w[0] = jl_dot(n, cr) / n2;
  jl_cross(ec, xc, cr);
  w[1] = jl_dot(n, cr) / n2;
  jl_cross(e1, xa, cr);
  w[2] = jl_dot(n, cr) / n2;
  return w[0] >= -JL_SEG_BARY_EPS && w[1] >= -JL_SEG_BARY_EPS && w[2] >= -JL_SEG_BARY_EPS;
}

/* 1 when the segment p q may meet the surface; 0 only when it surely
 * does not, so p and q have the same winding number (it changes only
 * across the surface). */
static int jl_segment_meets_surface(const jl_trunk_geom *g, const double p[3], const double q[3]) {
  double lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = jl_min(p[k], q[k]) - g->tol;
    hi[k] = jl_max(p[k], q[k]) + g->tol;
  }
  jl_seg_ctx c = {g->mesh, p, q};
  return jl_bvh_query_box(&g->bvh, lo, hi, jl_seg_visit, &c);
}

/* Closest point on triangle abc to p (Ericson, Real-Time Collision Detection 5.1.5). */
static double jl_point_tri_dist2(const double *p, const double *a, const double *b, const double *c) {
  double ab[3], ac[3], ap[3], x[3];
  jl_sub(b, a, ab);
  jl_sub(c, a, ac);
  jl_sub(p, a, ap);
  double d1 = jl_dot(ab, ap), d2 = jl_dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) { memcpy(x, a, sizeof x); goto done; }
  double bp[3];
  jl_sub(p, b, bp);
  double d3 = jl_dot(ab, bp), d4 = jl_dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) { memcpy(x, b, sizeof x); goto done; }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    double v = d1 / (d1 - d3);
    for (int k = 0; k < 3; ++k) x[k] = a[k] + v * ab[k];
    goto done;
  }
  double cp[3];
  jl_sub(p, c, cp);
  double d5 = jl_dot(ab, cp), d6 = jl_dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) { memcpy(x, c, sizeof x); goto done; }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    double w = d2 / (d2 - d6);
    for (int k = 0; k < 3; ++k) x[k] = a[k] + w * ac[k];
    goto done;
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    for (int k = 0; k < 3; ++k) x[k] = b[k] + w * (c[k] - b[k]);
    goto done;
  }
  {
    double den = 1.0 / (va + vb + vc), v = vb * den, w = vc * den;
    for (int k = 0; k < 3; ++k) x[k] = a[k] + ab[k] * v + ac[k] * w;
  }
done:;
  double d[3];
  jl_sub(p, x, d);
  return jl_dot(d, d);
}

typedef struct jl_nearest_ctx {
  const jl_mesh *m;
  const double *p;
  double d2;
  int tri;
} jl_nearest_ctx;

static int jl_nearest_visit(void *vctx, int t) {
  jl_nearest_ctx *c = vctx;
  const int *tr = c->m->triangles + 3 * t;
  double d = jl_point_tri_dist2(c->p, c->m->vertices + 3 * tr[0], c->m->vertices + 3 * tr[1],
                                c->m->vertices + 3 * tr[2]);
  if (d < c->d2) {
    c->d2 = d;
    c->tri = t;
  }
  return 0;
}

double jl_trunk_nearest_triangle(const jl_trunk_geom *g, const double p[3], double radius, int *tri,
                                 double normal[3]) {
  double lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = p[k] - radius;
    hi[k] = p[k] + radius;
  }
  jl_nearest_ctx c = {g->mesh, p, radius * radius, -1};
  jl_bvh_query_box(&g->bvh, lo, hi, jl_nearest_visit, &c);
  *tri = c.tri;
  normal[0] = normal[1] = normal[2] = 0.0;
  if (c.tri < 0) return INFINITY;
  const int *tr = g->mesh->triangles + 3 * c.tri;
  const double *a = g->mesh->vertices + 3 * tr[0];
  double e1[3], e2[3];
  jl_sub(g->mesh->vertices + 3 * tr[1], a, e1);
  jl_sub(g->mesh->vertices + 3 * tr[2], a, e2);
  jl_cross(e1, e2, normal);
  double l = sqrt(jl_dot(normal, normal));
  for (int k = 0; k < 3; ++k) normal[k] = l > 0 ? normal[k] / l : 0.0;
  return sqrt(c.d2);
}

double jl_mesh_distance(const jl_mesh *m, const double p[3]) {
  double best = DBL_MAX;
  for (int t = 0; t < m->n_triangles; ++t) {
    const int *tr = m->triangles + 3 * t;
    double d = jl_point_tri_dist2(p, m->vertices + 3 * tr[0], m->vertices + 3 * tr[1],
                                  m->vertices + 3 * tr[2]);
    if (d < best) best = d;
  }
  return sqrt(best);
}

/* ---- the whole packing ---- */

/* Blocks (or grid cells of blocks) between polls of the limits: each costs microseconds. */
#define JL_CHECK_POLL 16

/* Identical blocks (same box to the bit) are checked once: a file of
 * 100,000 copies of one block costs one box, not 5e9 pairs. */
typedef struct jl_block_group {
  int first, second;       /* the two smallest indices (second -1: one block) */
  int size;
} jl_block_group;

typedef struct jl_box_ref {
  const jl_obb *box;
  int i;
} jl_box_ref;

static int jl_cmp_box(const void *a, const void *b) {
  const jl_box_ref *p = a, *q = b;
  int c = memcmp(p->box, q->box, sizeof *p->box);
  return c ? c : (p->i > q->i) - (p->i < q->i);
}

static int jl_cmp_group(const void *a, const void *b) {
  const jl_block_group *p = a, *q = b;
  return (p->first > q->first) - (p->first < q->first);
}

/* Groups of identical boxes, ordered by their first block. */
static int jl_block_groups(const jl_obb *box, int n, jl_block_group *groups) {
  jl_box_ref *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof *ref);
  if (!ref) return -1;
  for (int i = 0; i < n; ++i) ref[i] = (jl_box_ref){&box[i], i};
  qsort(ref, (size_t)n, sizeof *ref, jl_cmp_box);
  int ng = 0;
  for (int k = 0; k < n; ++k) {
    if (k > 0 && memcmp(ref[k].box, ref[k - 1].box, sizeof *ref[k].box) == 0) {
      jl_block_group *g = &groups[ng - 1];
      if (g->size++ == 1) g->second = ref[k].i;
      continue;
    }
    groups[ng++] = (jl_block_group){ref[k].i, -1, 1};
  }
  free(ref);
  qsort(groups, (size_t)ng, sizeof *groups, jl_cmp_group);
  return ng;
}

/* The deepest block/block overlap, the first pair in (i, j) order among equals. */
static void jl_overlap_offer(jl_trunk_report *r, double ov, int i, int j) {
  int lo = i < j ? i : j, hi = i < j ? j : i;
  if (ov > r->max_overlap_depth ||
      (ov == r->max_overlap_depth && (lo < r->overlap_i || (lo == r->overlap_i && hi < r->overlap_j)))) {
    r->max_overlap_depth = ov;
    r->overlap_i = lo;
    r->overlap_j = hi;
  }
}

/* Grid cells per axis at most: coordinates far apart widen the cells rather
 * than overflow the keys (2^40 cells of 0.2 m span 2e11 m). */
#define JL_BLOCK_CELLS_MAX 1099511627776.0

int jl_cell_ref_cmp(const void *a, const void *b) {
  const jl_cell_ref *p = a, *q = b;
  for (int k = 0; k < 3; ++k)
    if (p->key[k] != q->key[k]) return p->key[k] < q->key[k] ? -1 : 1;
  return (p->id > q->id) - (p->id < q->id);
}

int jl_cell_ref_find(const jl_cell_ref *c, int n, const int64_t key[3]) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    jl_cell_ref probe = {{key[0], key[1], key[2]}, -1};
    if (jl_cell_ref_cmp(&c[mid], &probe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && memcmp(c[lo].key, key, sizeof c[lo].key) == 0 ? lo : n;
}

/* Pairs whose bounding spheres meet (centres within 2 rad), found through a
 * uniform grid of cells 2 rad wide over the groups' centres: a cell and its
 * 13 neighbours after it, so each pair of cells once. */
static int jl_overlap_pairs(const jl_obb *box, const jl_block_group *gr, int ng, double rad,
                            const jl_trunk_limits *lim, double since, jl_trunk_report *r) {
  for (int k = 0; k < ng; ++k)  /* copies of one block overlap each other */
    if (gr[k].size > 1) {
      const jl_obb *a = &box[gr[k].first];
      jl_overlap_offer(r, jl_obb_overlap_depth(a, a), gr[k].first, gr[k].second);
    }
  if (ng < 2) return JL_OK;
  jl_cell_ref *c = malloc((size_t)ng * sizeof *c);
  if (!c) return JL_ERR_NOMEM;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int k = 0; k < ng; ++k)
    for (int d = 0; d < 3; ++d) {
      lo[d] = jl_min(lo[d], box[gr[k].first].c[d]);
      hi[d] = jl_max(hi[d], box[gr[k].first].c[d]);
    }
  /* a hair over 2 rad: rounding cannot put two centres 2 rad apart two cells apart */
  double cell = 2.0 * rad * (1.0 + 1e-9);
  for (int d = 0; d < 3; ++d)  /* divided first: hi - lo may overflow */
    cell = jl_max(cell, hi[d] / JL_BLOCK_CELLS_MAX - lo[d] / JL_BLOCK_CELLS_MAX);
  for (int k = 0; k < ng; ++k) {
    c[k].id = k;
    for (int d = 0; d < 3; ++d)
      c[k].key[d] = (int64_t)floor(box[gr[k].first].c[d] / cell - lo[d] / cell);
  }
  qsort(c, (size_t)ng, sizeof *c, jl_cell_ref_cmp);
  for (int s = 0, cells = 0; s < ng; ++cells) {
    if (cells % JL_CHECK_POLL == 0 && jl_trunk_limits_hit(lim, since)) {  /* the caller's limits */
      r->complete = 0;
      break;
    }
    int e = s + 1;
    while (e < ng && memcmp(c[e].key, c[s].key, sizeof c[s].key) == 0) ++e;
    for (int nb = 13; nb < 27; ++nb) {  /* offsets (0,0,0) and the 13 after it */
      int64_t key[3] = {c[s].key[0] + nb / 9 - 1, c[s].key[1] + nb / 3 % 3 - 1, c[s].key[2] + nb % 3 - 1};
      int t0 = nb == 13 ? s : jl_cell_ref_find(c, ng, key);
      for (int p = s; p < e; ++p)
        for (int t = nb == 13 ? p + 1 : t0; t < ng && memcmp(c[t].key, key, sizeof key) == 0; ++t) {
          const jl_block_group *ga = &gr[c[p].id], *gb = &gr[c[t].id];
          const jl_obb *a = &box[ga->first], *b = &box[gb->first];
          double d[3];
          jl_sub(a->c, b->c, d);
          if (jl_dot(d, d) > 4 * rad * rad) continue;
          jl_overlap_offer(r, jl_obb_overlap_depth(a, b), ga->first, gb->first);
        }
    }
    s = e;
  }
  free(c);
  return JL_OK;
}

const char *jl_violation_name(jl_violation v) {
  switch (v) {
    case JL_VIOLATION_SURFACE: return "surface";
    case JL_VIOLATION_OUTSIDE: return "outside";
    case JL_VIOLATION_OVERLAP: return "overlap";
    default: return "none";
  }
}

int jl_trunk_check_packing(const jl_trunk_geom *g, const jl_block_packing *p, jl_trunk_report *r,
                           jl_error *err) {
  return jl_trunk_check_packing_until(g, p, NULL, r, err);
}

int jl_trunk_check_packing_until(const jl_trunk_geom *g, const jl_block_packing *p,
                                 const jl_trunk_limits *lim, jl_trunk_report *r, jl_error *err) {
  double since = jl_time_now();
  memset(r, 0, sizeof *r);
  r->complete = 1;
  r->count = p->count;
  r->tol = g->tol;
  r->max_surface_depth = r->max_overlap_depth = -DBL_MAX;
  r->surface_block = r->surface_triangle = r->outside_block = r->overlap_i = r->overlap_j = -1;
  int n = p->count;
  jl_obb *box = malloc((size_t)(n > 0 ? n : 1) * sizeof *box);
  jl_block_group *gr = malloc((size_t)(n > 0 ? n : 1) * sizeof *gr);
  int ng = box && gr ? 0 : -1;
  if (box && gr) {
    for (int i = 0; i < n; ++i) jl_obb_from_block(&g->block, p->centre + 3 * i, p->quat + 4 * i, &box[i]);
    ng = jl_block_groups(box, n, gr);
  }
  if (ng < 0) {
    free(box); free(gr);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory checking %d blocks", n);
  }
  /* Each group as its first block, in block order: the first block with the
   * worst value is reported, as a pass over all blocks would. A block that
   * crosses no triangle lies inside or outside as a whole; its centre is on
   * the same side as the previous such block's when the segment between
   * them meets no triangle (the winding number changes only across the
   * surface), else the winding number decides: one per run of blocks rather
   * than one per block. */
  int prev = -1, prev_in = 0;
  for (int k = 0; k < ng; ++k) {
    if (k % JL_CHECK_POLL == 0 && jl_trunk_limits_hit(lim, since)) {
      r->complete = 0;
      break;
    }
    int i = gr[k].first, tri;
    double d = jl_trunk_box_surface_depth(g, &box[i], 0, &tri);
    if (tri >= 0 && d > r->max_surface_depth) {
      r->max_surface_depth = d;
      r->surface_block = i;
      r->surface_triangle = tri;
    }
    int in = 1;
    if (d <= g->tol) {
      if (prev >= 0 && !jl_segment_meets_surface(g, box[prev].c, box[i].c)) in = prev_in;
      else in = jl_mesh_winding_number(g->mesh, box[i].c) >= 0.5;
      prev = i;
      prev_in = in;
    }
    if (!in) {
      double dist = jl_mesh_distance(g->mesh, box[i].c);
      r->outside_blocks += gr[k].size;
      if (r->outside_block < 0 || dist > r->outside_distance) {
        r->outside_block = i;
        r->outside_distance = dist;
      }
    }
  }
  /* Sieve: boxes whose bounding spheres do not meet cannot overlap. */
  double rad = 0.5 * sqrt(g->block.x * g->block.x + g->block.y * g->block.y + g->block.z * g->block.z);
  int rc = r->complete ? jl_overlap_pairs(box, gr, ng, rad, lim, since, r) : JL_OK;
  free(box);
  free(gr);
  if (rc != JL_OK) return jl_error_set(err, rc, "out of memory checking %d blocks", n);
  if (r->surface_block < 0) r->max_surface_depth = 0.0;
  if (r->overlap_i < 0) r->max_overlap_depth = 0.0;
  r->worst_kind = JL_VIOLATION_NONE;
  r->worst = 0.0;
  if (r->max_surface_depth > g->tol) {
    r->worst_kind = JL_VIOLATION_SURFACE;
    r->worst = r->max_surface_depth;
  }
  if (r->outside_blocks > 0 && r->outside_distance > r->worst) {
    r->worst_kind = JL_VIOLATION_OUTSIDE;
    r->worst = r->outside_distance;
  }
  if (r->max_overlap_depth > g->tol && r->max_overlap_depth > r->worst) {
    r->worst_kind = JL_VIOLATION_OVERLAP;
    r->worst = r->max_overlap_depth;
  }
  r->legal = r->complete && r->worst_kind == JL_VIOLATION_NONE;
  return JL_OK;
}

void jl_trunk_report_describe(const jl_trunk_report *r, char *out, size_t cap) {
  if (!r->complete && r->worst_kind == JL_VIOLATION_NONE) {
    snprintf(out, cap, "not checked: the check was cut short by the time limit or a signal");
    return;
  }
  switch (r->worst_kind) {
    case JL_VIOLATION_SURFACE:
      snprintf(out, cap, "NOT legal: block %d crosses the surface at triangle %d by %.3g mm",
               r->surface_block, r->surface_triangle, r->max_surface_depth);
      break;
    case JL_VIOLATION_OUTSIDE:
      snprintf(out, cap, "NOT legal: %d block(s) outside the trunk, block %d by %.3g mm",
               r->outside_blocks, r->outside_block, r->outside_distance);
      break;
    case JL_VIOLATION_OVERLAP:
      snprintf(out, cap, "NOT legal: blocks %d and %d overlap by %.3g mm", r->overlap_i,
               r->overlap_j, r->max_overlap_depth);
      break;
    default:
      snprintf(out, cap, "legal (max surface penetration %.2e mm, max block overlap %.2e mm, tol %.1e mm)",
               r->max_surface_depth > 0 ? r->max_surface_depth : 0.0,
               r->max_overlap_depth > 0 ? r->max_overlap_depth : 0.0, r->tol);
      break;
  }
}

int jl_trunk_check(void *ctx, const jl_block_packing *p, double *worst) {
  const jl_trunk_geom *g = ctx;
  jl_trunk_report r;
  if (jl_trunk_check_packing_until(g, p, &g->lim, &r, NULL) != JL_OK) {
    if (worst) *worst = INFINITY;
    return 0;
  }
  if (worst) *worst = r.complete ? r.worst : NAN;
  return r.legal;
}

int jl_trunk_require_legal(const jl_trunk_geom *g, const jl_block_packing *p, const char *what,
                           const jl_trunk_limits *lim, int *cut, jl_error *err) {
  jl_trunk_report rep;
  int rc = jl_trunk_check_packing_until(g, p, lim, &rep, err);
  if (rc == JL_OK && !rep.complete) {
    if (cut) *cut = 1;
    return JL_OK;
  }
  if (rc != JL_OK || rep.legal) return rc;
  char why[256];
  jl_trunk_report_describe(&rep, why, sizeof why);
  return jl_error_set(err, JL_ERR_INTERNAL, "internal error: %s failed the exact check: %s", what,
                      why);
}
