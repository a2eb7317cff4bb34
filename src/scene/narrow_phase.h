/* Narrow phase: exact contact geometry of two shapes, pure functions on
 * plain data (pose and size in, up to JL_MAX_MANIFOLD points out), with no
 * allocation and no host-only calls, so the CUDA narrow-phase kernel can
 * include this header as the CPU path does (JL_HD).
 *
 * Conventions (contact.h): one unit normal per manifold, from a to b; per
 * point the signed gap along it (< 0: penetration) and the middle of the two
 * closest surface points; only points with gap < margin are kept. Feature
 * ids (< 1100) name what touches, so a contact keeps its key across steps:
 *   sphere/sphere, sphere/plane, sphere/box: 0
 *   box/plane: the box corner (bit 0: +x, bit 1: +y, bit 2: +z)
 *   box/box, face case: reference face (0..5 faces of a, 6..11 faces of b;
 *     face = 2 axis + (normal along -axis)) * 76 + point id. When the kept
 *     points lie in distinct quadrants around the centre of the clipped
 *     polygon (in the reference face's axes), the point id is 72 + quadrant
 *     (bit 0: +u, bit 1: +v): stable while the overlap stays a rectangle,
 *     as in stacks, where an incident corner sitting on a reference edge
 *     flips between clipped and not clipped. Otherwise it is the clipped
 *     vertex: an incident box corner (0..7) or 8 + 4 edge + side, the
 *     crossing of a box edge (0..11) or of a reference side (12..15) with
 *     reference side plane 0..3.
 *   box/box, edge-edge case: 912 + 12 edge of a + edge of b (edge = 4 axis +
 *     signs of the two other axes, lower axis in bit 0). */
#ifndef JL_NARROW_PHASE_H
#define JL_NARROW_PHASE_H

#include <math.h>

#include "contact.h"
#include "hd.h"
#include "math3d.h"
#include "rigid_body.h"

#define JL_NP_FN JL_HD static inline

/* Box/box: the face of b is chosen over the face of a only when it separates
 * by this much more, an edge axis over the faces likewise (relative to the
 * smallest half extent), so resting boxes keep their face contact. */
#define JL_BOX_FACE_TOL 1e-3
#define JL_BOX_EDGE_TOL 5e-3
/* Cross products of nearly parallel edges give no axis. */
#define JL_BOX_PARALLEL_EPS 1e-9
/* Feature ids per reference face, and the first edge-edge id. */
#define JL_FEATURES_PER_FACE 76
#define JL_FEATURE_QUADRANT 72
#define JL_FEATURE_EDGE_EDGE (12 * JL_FEATURES_PER_FACE)

typedef struct jl_shape_pose {
  int shape;               /* jl_shape */
  jl_vec3 pos;
  jl_quat quat;
  jl_vec3 size;            /* as jl_bodies.size */
} jl_shape_pose;

typedef struct jl_manifold {
  int count;
  jl_vec3 normal;          /* unit, from a to b */
  jl_vec3 point[JL_MAX_MANIFOLD];
  double gap[JL_MAX_MANIFOLD];
  int feature[JL_MAX_MANIFOLD];
} jl_manifold;

JL_NP_FN void jl_np_add(jl_manifold *m, jl_vec3 point, double gap, int feature) {
  m->point[m->count] = point;
  m->gap[m->count] = gap;
  m->feature[m->count] = feature;
  m->count++;
}

JL_NP_FN double jl_np_comp(jl_vec3 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : v.z); }

JL_NP_FN int jl_np_sphere_sphere(jl_vec3 ca, double ra, jl_vec3 cb, double rb, double margin,
                                 jl_manifold *m) {
  m->count = 0;
  jl_vec3 d = jl_v3_sub(cb, ca);
  double dist = jl_v3_len(d);
  double gap = dist - ra - rb;
  if (!(gap < margin)) return 0;
  /* Coincident centres: any direction is as good; take +z. */
  jl_vec3 n = dist > 0.0 ? jl_v3_scale(d, 1.0 / dist) : jl_v3(0.0, 0.0, 1.0);
  m->normal = n;
  jl_np_add(m, jl_v3_add(ca, jl_v3_scale(n, ra + 0.5 * gap)), gap, 0);
  return 1;
}

/* Sphere a against the half-space b (point p, unit outward normal np). */
JL_NP_FN int jl_np_sphere_plane(jl_vec3 c, double r, jl_vec3 p, jl_vec3 np, double margin,
                                jl_manifold *m) {
  m->count = 0;
  double gap = jl_v3_dot(np, jl_v3_sub(c, p)) - r;
  if (!(gap < margin)) return 0;
  m->normal = jl_v3_scale(np, -1.0);
  jl_np_add(m, jl_v3_sub(c, jl_v3_scale(np, r + 0.5 * gap)), gap, 0);
  return 1;
}

/* Sphere a against box b. */
JL_NP_FN int jl_np_sphere_box(jl_vec3 c, double r, jl_vec3 pb, jl_quat qb, jl_vec3 hb,
                              double margin, jl_manifold *m) {
  m->count = 0;
  jl_vec3 ax[3];
  jl_quat_to_axes(qb, ax);
  jl_vec3 rel = jl_v3_sub(c, pb);
  double h[3] = {hb.x, hb.y, hb.z};
  double loc[3], q[3];
  int inside = 1;
  for (int k = 0; k < 3; ++k) {
    loc[k] = jl_v3_dot(rel, ax[k]);
    q[k] = fmin(fmax(loc[k], -h[k]), h[k]);
    if (q[k] != loc[k]) inside = 0;
  }
  jl_vec3 nw;              /* outward from the box towards the sphere centre */
  double gap;
  if (!inside) {
    double d[3] = {loc[0] - q[0], loc[1] - q[1], loc[2] - q[2]};
    double dist = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    gap = dist - r;
    if (!(gap < margin)) return 0;
    nw = jl_v3_normalize(jl_v3_add(jl_v3_add(jl_v3_scale(ax[0], d[0]), jl_v3_scale(ax[1], d[1])),
                                   jl_v3_scale(ax[2], d[2])));
  } else {
    /* Centre inside: push out through the nearest face. */
    int k = 0;
    double depth = h[0] - fabs(loc[0]);
    for (int j = 1; j < 3; ++j) {
      double dj = h[j] - fabs(loc[j]);
      if (dj < depth) {
        depth = dj;
        k = j;
      }
    }
    double s = loc[k] >= 0.0 ? 1.0 : -1.0;
    q[k] = s * h[k];
    gap = -(depth + r);
    nw = jl_v3_scale(ax[k], s);
  }
  jl_vec3 on_box = jl_v3_add(pb, jl_v3_add(jl_v3_add(jl_v3_scale(ax[0], q[0]), jl_v3_scale(ax[1], q[1])),
                                            jl_v3_scale(ax[2], q[2])));
  jl_vec3 on_sphere = jl_v3_sub(c, jl_v3_scale(nw, r));
  m->normal = jl_v3_scale(nw, -1.0);
  jl_np_add(m, jl_v3_scale(jl_v3_add(on_box, on_sphere), 0.5), gap, 0);
  return 1;
}

JL_NP_FN jl_vec3 jl_np_box_corner(jl_vec3 p, const jl_vec3 ax[3], const double h[3], int corner) {
  double sx = (corner & 1) ? h[0] : -h[0];
  double sy = (corner & 2) ? h[1] : -h[1];
  double sz = (corner & 4) ? h[2] : -h[2];
  return jl_v3_add(p, jl_v3_add(jl_v3_add(jl_v3_scale(ax[0], sx), jl_v3_scale(ax[1], sy)),
                                jl_v3_scale(ax[2], sz)));
}

/* Box a against the half-space b: the (up to 4) deepest corners. */
JL_NP_FN int jl_np_box_plane(jl_vec3 pa, jl_quat qa, jl_vec3 ha, jl_vec3 p, jl_vec3 np,
                             double margin, jl_manifold *m) {
  m->count = 0;
  jl_vec3 ax[3];
  jl_quat_to_axes(qa, ax);
  double h[3] = {ha.x, ha.y, ha.z};
  double s[8];
  jl_vec3 corner[8];
  int taken[8];
  for (int i = 0; i < 8; ++i) {
    corner[i] = jl_np_box_corner(pa, ax, h, i);
    s[i] = jl_v3_dot(np, jl_v3_sub(corner[i], p));
    taken[i] = !(s[i] < margin);
  }
  m->normal = jl_v3_scale(np, -1.0);
  /* Deepest first, ties to the lower corner index. */
  for (int k = 0; k < JL_MAX_MANIFOLD; ++k) {
    int best = -1;
    for (int i = 0; i < 8; ++i)
      if (!taken[i] && (best < 0 || s[i] < s[best])) best = i;
    if (best < 0) break;
    taken[best] = 1;
    jl_np_add(m, jl_v3_sub(corner[best], jl_v3_scale(np, 0.5 * s[best])), s[best], best);
  }
  return m->count;
}

/* Box edge id: 4 axis + signs of the other two axes (lower axis in bit 0). */
JL_NP_FN int jl_np_edge_id(int axis, const int sign[3]) {
  int lo = axis == 0 ? 1 : 0, hi = axis == 2 ? 1 : 2;
  return 4 * axis + (sign[lo] > 0 ? 1 : 0) + (sign[hi] > 0 ? 2 : 0);
}

/* One vertex of the polygon being clipped, in reference-face coordinates. */
typedef struct jl_clip_vertex {
  double x, y, z;
  int id;                  /* feature id of the vertex */
  int edge;                /* id of the edge leaving it: box edge 0..11, side 12..15 */
} jl_clip_vertex;

/* Sutherland-Hodgman: keep the part with sign * coord <= ext (coord: x when
 * axis == 0, else y). */
JL_NP_FN int jl_np_clip(const jl_clip_vertex *in, int n, int axis, double sign, double ext,
                        int side, jl_clip_vertex *out) {
  int count = 0;
  for (int i = 0; i < n; ++i) {
    jl_clip_vertex p = in[i], q = in[(i + 1) % n];
    double dp = sign * (axis == 0 ? p.x : p.y) - ext;
    double dq = sign * (axis == 0 ? q.x : q.y) - ext;
    if (dp <= 0.0) out[count++] = p;
    if ((dp <= 0.0) != (dq <= 0.0)) {
      double t = dp / (dp - dq);
      jl_clip_vertex v;
      v.x = p.x + t * (q.x - p.x);
      v.y = p.y + t * (q.y - p.y);
      v.z = p.z + t * (q.z - p.z);
      /* Land exactly on the side plane, so clipped points sit at the corners. */
      if (axis == 0)
        v.x = sign * ext;
      else
        v.y = sign * ext;
      v.id = 8 + 4 * p.edge + side;
      v.edge = dp <= 0.0 ? 12 + side : p.edge;
      out[count++] = v;
    }
  }
  return count;
}

JL_NP_FN double jl_np_cross2(const jl_clip_vertex *o, const jl_clip_vertex *a,
                             const jl_clip_vertex *b) {
  return (a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x - o->x);
}

/* More than 4 clipped points: keep the deepest, the farthest from it, and
 * the two spanning the largest areas on either side of that line. */
JL_NP_FN int jl_np_reduce(const jl_clip_vertex *v, int n, int *pick) {
  int p1 = 0;
  for (int i = 1; i < n; ++i)
    if (v[i].z < v[p1].z) p1 = i;
  int p2 = -1;
  double best = -1.0;
  for (int i = 0; i < n; ++i) {
    if (i == p1) continue;
    double dx = v[i].x - v[p1].x, dy = v[i].y - v[p1].y, d2 = dx * dx + dy * dy;
    if (d2 > best) {
      best = d2;
      p2 = i;
    }
  }
  int p3 = -1, p4 = -1;
  double amax = 0.0, amin = 0.0;
  for (int i = 0; i < n; ++i) {
    if (i == p1 || i == p2) continue;
    double a = jl_np_cross2(&v[p1], &v[p2], &v[i]);
    if (p3 < 0 || a > amax) {
      amax = a;
      p3 = i;
    }
    if (p4 < 0 || a < amin) {
      amin = a;
      p4 = i;
    }
  }
  int count = 0;
  pick[count++] = p1;
  pick[count++] = p2;
  if (p3 >= 0) pick[count++] = p3;
  if (p4 >= 0 && p4 != p3 && amin < 0.0 && amax > 0.0) {
    pick[count++] = p4;
  } else if (p3 >= 0) {
    /* All on one side: the point farthest from the three chosen. */
    double far = -1.0;
    int p = -1;
    for (int i = 0; i < n; ++i) {
      if (i == p1 || i == p2 || i == p3) continue;
      double dmin = 1e300;
      for (int k = 0; k < 3; ++k) {
        double dx = v[i].x - v[pick[k]].x, dy = v[i].y - v[pick[k]].y;
        dmin = fmin(dmin, dx * dx + dy * dy);
      }
      if (dmin > far) {
        far = dmin;
        p = i;
      }
    }
    if (p >= 0) pick[count++] = p;
  }
  return count;
}

/* Closest points of segments c1 + s d1 (|s| <= e1) and c2 + t d2 (|t| <= e2),
 * d1, d2 unit (Ericson, Real-Time Collision Detection 5.1.9). Returns 1 when
 * the closest points of the two lines lie inside both segments. */
JL_NP_FN int jl_np_segments(jl_vec3 c1, jl_vec3 d1, double e1, jl_vec3 c2, jl_vec3 d2, double e2,
                            jl_vec3 *p1, jl_vec3 *p2) {
  jl_vec3 r = jl_v3_sub(c2, c1);
  double b = jl_v3_dot(d1, d2), c = jl_v3_dot(d1, r), f = jl_v3_dot(d2, r);
  double denom = 1.0 - b * b;
  double s = denom > 1e-12 ? (c - b * f) / denom : 0.0;
  int inside = denom > 1e-12 && s >= -e1 && s <= e1;
  s = fmin(fmax(s, -e1), e1);
  double t = b * s - f;
  if (t < -e2 || t > e2) {
    inside = 0;
    t = fmin(fmax(t, -e2), e2);
    s = fmin(fmax(c + b * t, -e1), e1);
  }
  *p1 = jl_v3_add(c1, jl_v3_scale(d1, s));
  *p2 = jl_v3_add(c2, jl_v3_scale(d2, t));
  return inside;
}

/* Box a against box b: separating axes over the 15 axes, then clipping of
 * the incident face against the reference face's side planes (up to 4
 * points), or one point for an edge-edge contact. */
JL_NP_FN int jl_np_box_box(jl_vec3 pa, jl_quat qa, jl_vec3 ha, jl_vec3 pb, jl_quat qb, jl_vec3 hb,
                           double margin, jl_manifold *m) {
  m->count = 0;
  jl_vec3 A[3], B[3];
  jl_quat_to_axes(qa, A);
  jl_quat_to_axes(qb, B);
  double hA[3] = {ha.x, ha.y, ha.z}, hB[3] = {hb.x, hb.y, hb.z};
  jl_vec3 d = jl_v3_sub(pb, pa);
  double C[3][3], absC[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      C[i][j] = jl_v3_dot(A[i], B[j]);
      absC[i][j] = fabs(C[i][j]);
    }
  double hmin = hA[0];
  for (int k = 0; k < 3; ++k) {
    hmin = fmin(hmin, hA[k]);
    hmin = fmin(hmin, hB[k]);
  }
  /* Face axes of a, then of b. */
  double sepA = -1e300, sepB = -1e300;
  int axA = 0, axB = 0;
  for (int i = 0; i < 3; ++i) {
    double s = fabs(jl_v3_dot(d, A[i])) -
               (hA[i] + hB[0] * absC[i][0] + hB[1] * absC[i][1] + hB[2] * absC[i][2]);
    if (s > sepA) {
      sepA = s;
      axA = i;
    }
  }
  if (sepA > margin) return 0;
  for (int j = 0; j < 3; ++j) {
    double s = fabs(jl_v3_dot(d, B[j])) -
               (hA[0] * absC[0][j] + hA[1] * absC[1][j] + hA[2] * absC[2][j] + hB[j]);
    if (s > sepB) {
      sepB = s;
      axB = j;
    }
  }
  if (sepB > margin) return 0;
  /* Edge axes. */
  double sepE = -1e300;
  int eI = -1, eJ = -1;
  jl_vec3 axE = jl_v3(0.0, 0.0, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      jl_vec3 L = jl_v3_cross(A[i], B[j]);
      double len = jl_v3_len(L);
      if (len < JL_BOX_PARALLEL_EPS) continue;
      L = jl_v3_scale(L, 1.0 / len);
      double pA = 0.0, pB = 0.0;
      for (int k = 0; k < 3; ++k) {
        pA += hA[k] * fabs(jl_v3_dot(L, A[k]));
        pB += hB[k] * fabs(jl_v3_dot(L, B[k]));
      }
      double s = fabs(jl_v3_dot(d, L)) - pA - pB;
      if (s > margin) return 0;
      if (s > sepE) {
        sepE = s;
        eI = i;
        eJ = j;
        axE = L;
      }
    }

  int ref_b = sepB > sepA + JL_BOX_FACE_TOL * hmin;
  double sepF = ref_b ? sepB : sepA;
  if (eI >= 0 && sepE > sepF + JL_BOX_EDGE_TOL * hmin) {
    /* Edge-edge: one point between the closest points of the two edges,
     * when the edges do cross (seen along the axis); otherwise the faces
     * decide, so every gap is a distance between two surface points. */
    jl_vec3 L = jl_v3_dot(axE, d) < 0.0 ? jl_v3_scale(axE, -1.0) : axE;
    int sa[3], sb[3];
    jl_vec3 ca = pa, cb = pb;
    for (int k = 0; k < 3; ++k) {
      sa[k] = jl_v3_dot(L, A[k]) >= 0.0 ? 1 : -1;
      sb[k] = jl_v3_dot(L, B[k]) >= 0.0 ? -1 : 1;
      if (k != eI) ca = jl_v3_add(ca, jl_v3_scale(A[k], sa[k] * hA[k]));
      if (k != eJ) cb = jl_v3_add(cb, jl_v3_scale(B[k], sb[k] * hB[k]));
    }
    jl_vec3 p1, p2;
    if (jl_np_segments(ca, A[eI], hA[eI], cb, B[eJ], hB[eJ], &p1, &p2)) {
      double gap = jl_v3_dot(L, jl_v3_sub(p2, p1));
      if (!(gap < margin)) return 0;
      m->normal = L;
      jl_np_add(m, jl_v3_scale(jl_v3_add(p1, p2), 0.5), gap,
                JL_FEATURE_EDGE_EDGE + 12 * jl_np_edge_id(eI, sa) + jl_np_edge_id(eJ, sb));
      return 1;
    }
  }

  /* Face case: reference box R (its face k), incident box I. */
  const jl_vec3 *R = ref_b ? B : A, *I = ref_b ? A : B;
  const double *hR = ref_b ? hB : hA, *hI = ref_b ? hA : hB;
  jl_vec3 pR = ref_b ? pb : pa;
  jl_vec3 dRI = ref_b ? jl_v3_scale(d, -1.0) : d;
  int k = ref_b ? axB : axA;
  double sgn = jl_v3_dot(dRI, R[k]) >= 0.0 ? 1.0 : -1.0;
  jl_vec3 n = jl_v3_scale(R[k], sgn);
  int ref_face = (ref_b ? 6 : 0) + 2 * k + (sgn > 0.0 ? 0 : 1);
  jl_vec3 fc = jl_v3_add(pR, jl_v3_scale(n, hR[k]));
  int ku = (k + 1) % 3, kv = (k + 2) % 3;
  jl_vec3 u = R[ku], v = R[kv];
  double hu = hR[ku], hv = hR[kv];

  /* Incident face: the face of I most anti-parallel to n. */
  int j = 0;
  double best = -1.0;
  for (int t = 0; t < 3; ++t) {
    double c = fabs(jl_v3_dot(n, I[t]));
    if (c > best) {
      best = c;
      j = t;
    }
  }
  int sj = jl_v3_dot(n, I[j]) > 0.0 ? -1 : 1;
  int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
  jl_vec3 pI = ref_b ? pa : pb;
  jl_clip_vertex poly[8], tmp[8];
  for (int t = 0; t < 4; ++t) {
    int sign[3];
    sign[j] = sj;
    sign[j1] = (t == 0 || t == 3) ? 1 : -1; /* loop (+,+) (-,+) (-,-) (+,-) */
    sign[j2] = t < 2 ? 1 : -1;
    jl_vec3 w = pI;
    for (int a = 0; a < 3; ++a) w = jl_v3_add(w, jl_v3_scale(I[a], sign[a] * hI[a]));
    jl_vec3 rel = jl_v3_sub(w, fc);
    poly[t].x = jl_v3_dot(rel, u);
    poly[t].y = jl_v3_dot(rel, v);
    poly[t].z = jl_v3_dot(rel, n);
    poly[t].id = (sign[0] > 0 ? 1 : 0) + (sign[1] > 0 ? 2 : 0) + (sign[2] > 0 ? 4 : 0);
    /* The edge to the next vertex runs along j1 (t = 0, 2) or j2 (t = 1, 3). */
    poly[t].edge = jl_np_edge_id((t & 1) ? j2 : j1, sign);
  }
  int count = 4;
  count = jl_np_clip(poly, count, 0, 1.0, hu, 0, tmp);
  count = jl_np_clip(tmp, count, 0, -1.0, hu, 1, poly);
  count = jl_np_clip(poly, count, 1, 1.0, hv, 2, tmp);
  count = jl_np_clip(tmp, count, 1, -1.0, hv, 3, poly);
  /* Keep the points within the margin. */
  int kept = 0;
  for (int t = 0; t < count; ++t)
    if (poly[t].z < margin) tmp[kept++] = poly[t];
  if (kept == 0) return 0;
  int pick[JL_MAX_MANIFOLD];
  int np = kept;
  if (kept > JL_MAX_MANIFOLD) {
    np = jl_np_reduce(tmp, kept, pick);
  } else {
    for (int t = 0; t < kept; ++t) pick[t] = t;
  }
  /* Quadrants around the centre of the whole clipped polygon, so points
   * dropped by the margin do not move it. */
  double cx = 0.0, cy = 0.0;
  for (int t = 0; t < count; ++t) {
    cx += poly[t].x;
    cy += poly[t].y;
  }
  cx /= count;
  cy /= count;
  int quad[JL_MAX_MANIFOLD], seen = 0, distinct = 1;
  for (int t = 0; t < np; ++t) {
    const jl_clip_vertex *c = &tmp[pick[t]];
    quad[t] = (c->x >= cx ? 1 : 0) + (c->y >= cy ? 2 : 0);
    if (seen & (1 << quad[t])) distinct = 0;
    seen |= 1 << quad[t];
  }
  m->normal = ref_b ? jl_v3_scale(n, -1.0) : n;
  for (int t = 0; t < np; ++t) {
    const jl_clip_vertex *c = &tmp[pick[t]];
    jl_vec3 pt = jl_v3_add(fc, jl_v3_add(jl_v3_add(jl_v3_scale(u, c->x), jl_v3_scale(v, c->y)),
                                         jl_v3_scale(n, 0.5 * c->z)));
    int id = distinct ? JL_FEATURE_QUADRANT + quad[t] : c->id;
    jl_np_add(m, pt, c->z, ref_face * JL_FEATURES_PER_FACE + id);
  }
  return m->count;
}

/* Two shapes of which neither is a box (sphere/sphere, sphere/plane in
 * either order; plane/plane gives nothing), as jl_narrow_collide gives them:
 * at most one point, feature 0. A device kernel calling only this needs far
 * fewer registers than one that can reach the box paths. */
JL_NP_FN int jl_narrow_collide_round(const jl_shape_pose *a, const jl_shape_pose *b,
                                     double margin, jl_manifold *m) {
  /* No pointer chosen at run time (jl_narrow_collide's order by shape): on
   * the device that would keep both poses in local memory. */
  m->count = 0;
  if (a->shape == JL_SHAPE_SPHERE && b->shape == JL_SHAPE_SPHERE) {
    jl_np_sphere_sphere(a->pos, a->size.x, b->pos, b->size.x, margin, m);
  } else if (a->shape == JL_SHAPE_SPHERE && b->shape == JL_SHAPE_PLANE) {
    jl_np_sphere_plane(a->pos, a->size.x, b->pos, b->size, margin, m);
  } else if (a->shape == JL_SHAPE_PLANE && b->shape == JL_SHAPE_SPHERE) {
    jl_np_sphere_plane(b->pos, b->size.x, a->pos, a->size, margin, m);
    if (m->count > 0) m->normal = jl_v3_scale(m->normal, -1.0);
  }
  return m->count;
}

/* Any two shapes, a and b in the given order (the normal points from a to
 * b); planes are static half-spaces, plane/plane gives nothing. */
JL_NP_FN int jl_narrow_collide(const jl_shape_pose *a, const jl_shape_pose *b, double margin,
                               jl_manifold *m) {
  if (a->shape != JL_SHAPE_BOX && b->shape != JL_SHAPE_BOX)
    return jl_narrow_collide_round(a, b, margin, m);
  m->count = 0;
  int sa = a->shape, sb = b->shape;
  int flip = sa > sb;      /* order: sphere < box < plane */
  const jl_shape_pose *x = flip ? b : a, *y = flip ? a : b;
  int sx = x->shape, sy = y->shape;
  if (sx == JL_SHAPE_SPHERE && sy == JL_SHAPE_BOX)
    jl_np_sphere_box(x->pos, x->size.x, y->pos, y->quat, y->size, margin, m);
  else if (sx == JL_SHAPE_BOX && sy == JL_SHAPE_BOX)
    jl_np_box_box(x->pos, x->quat, x->size, y->pos, y->quat, y->size, margin, m);
  else if (sx == JL_SHAPE_BOX && sy == JL_SHAPE_PLANE)
    jl_np_box_plane(x->pos, x->quat, x->size, y->pos, y->size, margin, m);
  if (flip && m->count > 0) m->normal = jl_v3_scale(m->normal, -1.0);
  return m->count;
}

#ifdef __cplusplus
extern "C" {
#endif
/* narrow_phase.c: the pose of body i from the structure-of-arrays (host). */
jl_shape_pose jl_body_pose(const jl_bodies *bodies, int i);
#ifdef __cplusplus
}
#endif

#endif
