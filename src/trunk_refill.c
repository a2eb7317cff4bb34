#include "trunk_refill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "mesh.h"
#include "timer.h"
#include "trunk_baseline.h"
#include "trunk_search.h"
#include "trunk_slabs.h"
#include "trunk_tilt.h"
#include "trunk_voxels.h"

/* Waste map voxels: the shortest block edge over this (10 mm for the DIN
 * block); it only ranks regions, so coarse is enough. */
#define JL_REFILL_VOXELS_PER_EDGE 5
/* Waste map voxels at most (a larger trunk gets coarser voxels). */
#define JL_REFILL_MAX_VOXELS 4e6
/* Column boxes are spans x spans of these multiples of the longest block
 * edge (400, 600, 800 mm for the DIN block), placed every half longest
 * edge: large enough for a fill to lay its own rows and layers, small
 * enough that a refill takes a fraction of a whole fill. */
static const int jl_refill_spans[] = {2, 3, 4};
/* A column box sharing more than this share of its floor area with a
 * chosen one is not chosen. */
#define JL_REFILL_OVERLAP 0.5
/* A box is grown once by the blocks that meet it, by at most this share of
 * the longest block edge per side, so most of the removed blocks' space
 * lies inside it; grown until stable, the boxes of a layered packing
 * cascade to the whole trunk (a 400 mm box in compact-m grew to 750 mm). */
#define JL_REFILL_GROW 1
#define JL_REFILL_GROW_SHARE 0.5
/* A refill this many blocks short of what it removed, or level with it, is
 * handed to the gap fill and the pocket insertion on the whole packing
 * (the new arrangement may leave room next to the region), each within
 * this share of the time left. */
#define JL_REFILL_NEAR (-1)
#define JL_REFILL_GAP_SHARE 0.25

static double jl_refill_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

typedef struct jl_refill_box {
  double lo[2], hi[2];     /* x and y in the working frame; z: the whole height */
  double waste;            /* free volume, mm^3 */
  double share;            /* free / interior of the box */
  int face;                /* 1: around a sloped face */
} jl_refill_box;

/* Working-frame bounds of block i of p. */
static void jl_refill_block_bounds(const jl_block_size *b, const jl_block_packing *p, int i, double lo[3],
                                   double hi[3]) {
  jl_obb o;
  jl_obb_from_block(b, p->centre + 3 * i, p->quat + 4 * i, &o);
  jl_obb_bounds(&o, lo, hi);
}

/* Blocks of p in the frame f (centre R c, orientation q_f^-1 q). */
static int jl_refill_to_frame(const jl_trunk_frame *f, const jl_block_packing *p, jl_block_packing *out,
                              jl_error *err) {
  out->count = 0;
  int rc = jl_block_packing_reserve(out, p->count, err);
  jl_quat qi = jl_quat_conj((jl_quat){f->q[0], f->q[1], f->q[2], f->q[3]});
  for (int i = 0; i < p->count && rc == JL_OK; ++i) {
    double c[3];
    for (int r = 0; r < 3; ++r) c[r] = jl_refill_dot(f->R[r], p->centre + 3 * i);
    const double *q = p->quat + 4 * i;
    jl_quat qw = jl_quat_normalize(jl_quat_mul(qi, (jl_quat){q[0], q[1], q[2], q[3]}));
    double qq[4] = {qw.w, qw.x, qw.y, qw.z};
    rc = jl_block_packing_push(out, c, qq, err);
  }
  return rc;
}

static int jl_refill_box_cmp(const void *a, const void *b) {
  const jl_refill_box *x = a, *y = b;
  if (x->share != y->share) return x->share > y->share ? -1 : 1;
  if (x->waste != y->waste) return x->waste > y->waste ? -1 : 1;
  for (int d = 0; d < 2; ++d) {
    if (x->lo[d] != y->lo[d]) return x->lo[d] < y->lo[d] ? -1 : 1;
    if (x->hi[d] != y->hi[d]) return x->hi[d] < y->hi[d] ? -1 : 1;
  }
  return 0;
}

static double jl_refill_shared_area(const jl_refill_box *a, const jl_refill_box *b) {
  double s = 1.0;
  for (int d = 0; d < 2; ++d) s *= fmax(0.0, fmin(a->hi[d], b->hi[d]) - fmax(a->lo[d], b->lo[d]));
  return s;
}

/* The regions: boxes around the large sloped faces of m, then column boxes
 * ranked by the share of their interior that p leaves free (the free-voxel
 * map, blocks marked by their bounding boxes), each sharing at most
 * JL_REFILL_OVERLAP of its floor with one chosen before. */
static int jl_refill_regions(const jl_mesh *m, const jl_block_size *bs, const jl_block_packing *p, int threads,
                             const jl_trunk_limits *lim, jl_refill_box *out, int *n_out, jl_error *err) {
  *n_out = 0;
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  double shortest = fmin(bs->x, fmin(bs->y, bs->z)), longest = fmax(bs->x, fmax(bs->y, bs->z));
  int n = 0;
  /* sloped faces: their triangles' bounds, half a longest edge wider */
  jl_tilt_plane planes[JL_TILT_MAX_PLANES];
  int np = 0, cut = 0;
  int rc = jl_trunk_tilt_planes_until(m, JL_TILT_MIN_AREA_FRAC, planes, JL_TILT_MAX_PLANES, &np, lim, &cut, err);
  if (rc != JL_OK) return rc;
  double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                     (hi[2] - lo[2]) * (hi[2] - lo[2]));
  for (int k = 0; k < np && k < JL_TILT_MAX_PLANES && n < JL_REFILL_MAX_REGIONS; ++k) {
    jl_refill_box b = {{INFINITY, INFINITY}, {-INFINITY, -INFINITY}, 0.0, 0.0, 1};
    for (int t = 0; t < m->n_triangles; ++t) {
      const double *v[3];
      for (int c = 0; c < 3; ++c) v[c] = m->vertices + 3 * m->triangles[3 * t + c];
      double u[3], w[3], nn[3];
      for (int c = 0; c < 3; ++c) {
        u[c] = v[1][c] - v[0][c];
        w[c] = v[2][c] - v[0][c];
      }
      nn[0] = u[1] * w[2] - u[2] * w[1];
      nn[1] = u[2] * w[0] - u[0] * w[2];
      nn[2] = u[0] * w[1] - u[1] * w[0];
      double l = sqrt(jl_refill_dot(nn, nn));
      if (!(l > 0.0) || jl_refill_dot(nn, planes[k].n) < 0.999 * l ||
          fabs(jl_refill_dot(planes[k].n, v[0]) - planes[k].d) > 1e-6 * diag)
        continue;
      for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 2; ++d) {
          b.lo[d] = fmin(b.lo[d], v[c][d]);
          b.hi[d] = fmax(b.hi[d], v[c][d]);
        }
    }
    if (!(b.lo[0] <= b.hi[0])) continue;
    for (int d = 0; d < 2; ++d) {
      b.lo[d] = fmax(lo[d], b.lo[d] - 0.5 * longest);
      b.hi[d] = fmin(hi[d], b.hi[d] + 0.5 * longest);
    }
    out[n++] = b;
  }
  int nfaces = n;
  n = 0;
  /* the waste map: free voxels per column */
  double v = shortest / JL_REFILL_VOXELS_PER_EDGE;
  jl_voxel_map map;
  memset(&map, 0, sizeof map);
  cut = 0;
  rc = jl_voxel_map_build(&map, m, v, JL_REFILL_MAX_VOXELS, JL_VOXEL_INNER, threads, lim->deadline, lim->stop,
                          &cut, err);
  if (rc != JL_OK || cut) {  /* no map: the faces' boxes alone */
    free(map.free);
    *n_out = nfaces;
    return rc;
  }
  v = map.v;
  int nx = map.dim[0], ny = map.dim[1], nz = map.dim[2];
  size_t ncol = (size_t)(nx + 1) * (size_t)(ny + 1);
  double *sfree = calloc(ncol, sizeof *sfree), *sin = calloc(ncol, sizeof *sin);
  uint8_t *occ = calloc(map.n, 1);
  jl_refill_box *all = NULL;
  if (!sfree || !sin || !occ) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the refill's waste map");
    goto done;
  }
  for (int i = 0; i < p->count; ++i) {
    double blo[3], bhi[3];
    int r0[3], r1[3];
    jl_refill_block_bounds(bs, p, i, blo, bhi);
    for (int d = 0; d < 3; ++d) {
      r0[d] = (int)floor((blo[d] - map.origin[d]) / v);
      r1[d] = (int)ceil((bhi[d] - map.origin[d]) / v) - 1;
      if (r0[d] < 0) r0[d] = 0;
      if (r1[d] > map.dim[d] - 1) r1[d] = map.dim[d] - 1;
    }
    for (int k = r0[2]; k <= r1[2]; ++k)
      for (int j = r0[1]; j <= r1[1]; ++j)
        for (int a = r0[0]; a <= r1[0]; ++a) occ[jl_voxel_idx(&map, a, j, k)] = 1;
  }
  /* 2D prefix sums of the free and interior voxels of each column */
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      double f = 0.0, in = 0.0;
      for (int k = 0; k < nz; ++k) {
        size_t id = jl_voxel_idx(&map, i, j, k);
        in += map.free[id] != 0;
        f += map.free[id] && !occ[id];
      }
      size_t c = (size_t)(i + 1) + (size_t)(nx + 1) * (size_t)(j + 1);
      sfree[c] = f + sfree[c - 1] + sfree[c - (size_t)(nx + 1)] - sfree[c - (size_t)(nx + 1) - 1];
      sin[c] = in + sin[c - 1] + sin[c - (size_t)(nx + 1)] - sin[c - (size_t)(nx + 1) - 1];
    }
  int ns = (int)(sizeof jl_refill_spans / sizeof jl_refill_spans[0]);
  double step = 0.5 * longest, bvol = bs->x * bs->y * bs->z;
  size_t cap = 64, na = 0;
  all = malloc(cap * sizeof *all);
  if (!all) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the refill's regions");
    goto done;
  }
  size_t W = (size_t)(nx + 1);
  for (int fi = 0; fi < nfaces; ++fi) {  /* the faces' boxes, scored like the others */
    jl_refill_box bx = out[fi];
    int c0[2], c1[2];
    for (int d = 0; d < 2; ++d) {
      int lim_d = d ? ny : nx;
      c0[d] = (int)floor((bx.lo[d] - map.origin[d]) / v + 0.5);
      c1[d] = (int)floor((bx.hi[d] - map.origin[d]) / v + 0.5);
      c0[d] = c0[d] < 0 ? 0 : c0[d] > lim_d ? lim_d : c0[d];
      c1[d] = c1[d] < 0 ? 0 : c1[d] > lim_d ? lim_d : c1[d];
    }
    double f = sfree[(size_t)c1[0] + W * (size_t)c1[1]] - sfree[(size_t)c0[0] + W * (size_t)c1[1]] -
               sfree[(size_t)c1[0] + W * (size_t)c0[1]] + sfree[(size_t)c0[0] + W * (size_t)c0[1]];
    double in = sin[(size_t)c1[0] + W * (size_t)c1[1]] - sin[(size_t)c0[0] + W * (size_t)c1[1]] -
                sin[(size_t)c1[0] + W * (size_t)c0[1]] + sin[(size_t)c0[0] + W * (size_t)c0[1]];
    bx.waste = f * v * v * v;
    bx.share = in > 0.0 ? f / in : 0.0;
    all[na++] = bx;  /* na <= JL_TILT_MAX_PLANES < cap */
  }
  for (int sx = 0; sx < ns; ++sx)
    for (int sy = 0; sy < ns; ++sy) {
      double w[2] = {jl_refill_spans[sx] * longest, jl_refill_spans[sy] * longest};
      int cnt[2];
      for (int d = 0; d < 2; ++d) {
        double room = hi[d] - lo[d] - w[d];
        cnt[d] = room <= 0.0 ? 1 : (int)ceil(room / step - 1e-9) + 1;
      }
      for (int a = 0; a < cnt[0]; ++a)
        for (int b = 0; b < cnt[1]; ++b) {
          jl_refill_box bx = {{0, 0}, {0, 0}, 0.0, 0.0, 0};
          int idx[2] = {a, b}, c0[2], c1[2];
          for (int d = 0; d < 2; ++d) {
            double room = hi[d] - lo[d] - w[d];
            bx.lo[d] = room <= 0.0 ? lo[d] : fmin(lo[d] + idx[d] * step, hi[d] - w[d]);
            bx.hi[d] = room <= 0.0 ? hi[d] : bx.lo[d] + w[d];
            c0[d] = (int)floor((bx.lo[d] - map.origin[d]) / v + 0.5);
            c1[d] = (int)floor((bx.hi[d] - map.origin[d]) / v + 0.5);
            int lim_d = d ? ny : nx;
            if (c0[d] < 0) c0[d] = 0;
            if (c1[d] > lim_d) c1[d] = lim_d;
          }
          size_t i11 = (size_t)c1[0] + W * (size_t)c1[1], i01 = (size_t)c0[0] + W * (size_t)c1[1];
          size_t i10 = (size_t)c1[0] + W * (size_t)c0[1], i00 = (size_t)c0[0] + W * (size_t)c0[1];
          double f = sfree[i11] - sfree[i01] - sfree[i10] + sfree[i00];
          double in = sin[i11] - sin[i01] - sin[i10] + sin[i00];
          bx.waste = f * v * v * v;
          if (bx.waste < bvol || !(in > 0.0)) continue;  /* not a block's worth free */
          bx.share = f / in;
          if (na == cap) {
            jl_refill_box *g = realloc(all, 2 * cap * sizeof *all);
            if (!g) {
              rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the refill's regions");
              goto done;
            }
            all = g;
            cap *= 2;
          }
          all[na++] = bx;
        }
    }
  qsort(all, na, sizeof *all, jl_refill_box_cmp);
  for (size_t a = 0; a < na && n < JL_REFILL_MAX_REGIONS; ++a) {
    double area = (all[a].hi[0] - all[a].lo[0]) * (all[a].hi[1] - all[a].lo[1]);
    int ok = 1;
    for (int c = 0; c < n && ok; ++c)
      if (all[a].face == out[c].face && jl_refill_shared_area(&all[a], &out[c]) > JL_REFILL_OVERLAP * area) ok = 0;
    if (ok) out[n++] = all[a];
  }
done:
  *n_out = n;
  free(all);
  free(sfree);
  free(sin);
  free(occ);
  free(map.free);
  return rc;
}

/* Best of the layered fill and both slab fills (in zones) of the part g
 * into best (tmp: scratch). */
static int jl_refill_fill_part(const jl_trunk_geom *g, int threads, double deadline,
                               const volatile sig_atomic_t *stop, jl_block_packing *best, jl_block_packing *tmp,
                               jl_error *err) {
  jl_baseline_info bi;
  best->count = 0;
  int rc = jl_trunk_baseline_until(g, threads, 0, deadline, stop, best, &bi, err);
  for (int ax = 0; ax < 2 && rc == JL_OK; ++ax) {
    jl_slab_info si;
    tmp->count = 0;
    rc = jl_trunk_slab_fill(g, ax, 1, 0.0, threads, deadline, stop, tmp, &si, err);
    if (rc == JL_ERR_INPUT) {  /* too large for the slab fill's cache: the layered fill's */
      if (err) memset(err, 0, sizeof *err);
      rc = JL_OK;
      continue;
    }
    if (rc == JL_OK && tmp->count > best->count) rc = jl_block_packing_copy(best, tmp, err);
  }
  return rc;
}

/* The trunk m clipped to the column over box (x, y; faces outside m's
 * bounds are not cut). *ok = 0 when a cut was not clean or nothing is left. */
static int jl_refill_clip(const jl_mesh *m, const double mlo[3], const double mhi[3], const jl_refill_box *box,
                          jl_mesh *out, int *ok, jl_error *err) {
  *ok = 0;
  memset(out, 0, sizeof *out);
  jl_mesh cur = {0};
  int rc = jl_mesh_from_arrays(&cur, m->vertices, m->n_vertices, m->triangles, m->n_triangles, err);
  if (rc != JL_OK) return rc;
  for (int f = 0; f < 4; ++f) {
    int d = f / 2, upper = f % 2;
    double at = upper ? box->hi[d] : box->lo[d];
    if (upper ? at >= mhi[d] : at <= mlo[d]) continue;
    double n[3] = {0, 0, 0};
    n[d] = 1.0;
    jl_mesh next = {0};
    int cok = 0;
    rc = jl_trunk_tilt_cut(&cur, n, at, !upper, &next, &cok, err);
    jl_mesh_free(&cur);
    if (rc != JL_OK) return rc;
    if (!cok || next.n_triangles == 0) {
      jl_mesh_free(&next);
      return JL_OK;
    }
    cur = next;
  }
  *out = cur;
  *ok = 1;
  return JL_OK;
}

/* Blocks of p (bounds lo, hi: 3 per block) crossing the plane x_d = at
 * within the box's range along the other horizontal axis. */
static int jl_refill_crossing(const double *lo, const double *hi, int n, int d, double at, const jl_refill_box *box,
                              double eps) {
  int o = 1 - d, c = 0;
  for (int i = 0; i < n; ++i)
    c += lo[3 * i + d] < at - eps && hi[3 * i + d] > at + eps && lo[3 * i + o] < box->hi[o] - eps &&
         hi[3 * i + o] > box->lo[o] + eps;
  return c;
}

/* Moves each side of box to the block face within reach (mm) that the
 * fewest blocks cross (ties: the nearest), so the box cuts as few blocks as
 * the packing allows: a layered packing has rows and zones whose ends line
 * up. Sides at the trunk's bounds stay. */
static void jl_refill_snap(jl_refill_box *box, const double *lo, const double *hi, int n, const double mlo[3],
                           const double mhi[3], double reach, double eps) {
  for (int pass = 0; pass < 2; ++pass)
    for (int side = 0; side < 4; ++side) {
      int d = side / 2, upper = side % 2;
      double cur = upper ? box->hi[d] : box->lo[d];
      if (upper ? cur >= mhi[d] : cur <= mlo[d]) continue;
      double best = cur;
      int best_c = jl_refill_crossing(lo, hi, n, d, cur, box, eps);
      for (int i = 0; i < 2 * n && best_c > 0; ++i) {
        double at = i < n ? lo[3 * i + d] : hi[3 * (i - n) + d];
        if (fabs(at - cur) > reach || at <= mlo[d] || at >= mhi[d]) continue;
        if (upper ? at <= box->lo[d] + reach : at >= box->hi[d] - reach) continue;  /* keep the box wide */
        int c = jl_refill_crossing(lo, hi, n, d, at, box, eps);
        if (c < best_c || (c == best_c && fabs(at - cur) < fabs(best - cur))) {
          best_c = c;
          best = at;
        }
      }
      if (upper) box->hi[d] = best;
      else box->lo[d] = best;
    }
}

/* Scratch of one run. */
typedef struct jl_refill_run {
  const jl_trunk_geom *g;  /* the trunk, mesh frame */
  const jl_trunk_frame *f; /* NULL: working frame = mesh frame */
  int threads;
  double deadline;
  const volatile sig_atomic_t *stop;
  jl_block_packing best, tmp, back, cand;
} jl_refill_run;

static int jl_out_of_time_refill(const jl_refill_run *r) {
  jl_trunk_limits lim = {r->deadline, r->stop, 0.0};
  return jl_trunk_limits_hit(&lim, 0.0);
}

/* Refills the part rm (the trunk clipped to a region, working frame) into
 * r->best: layered and slab fills, the tilted fill, then the layered and
 * slab fills in the frame turned by JL_REFILL_TURN_DEG about x and y.
 * Stops early at ub (the part's volume bound). */
static int jl_refill_part(jl_refill_run *r, const jl_mesh *rm, int face, int beat, int ub, jl_error *err) {
  jl_trunk_geom rg;
  int rc = jl_trunk_geom_init(&rg, rm, r->g->block, err);
  if (rc != JL_OK) return rc;
  rc = jl_refill_fill_part(&rg, r->threads, r->deadline, r->stop, &r->best, &r->tmp, err);
  if (rc == JL_OK && face && r->best.count < ub && !jl_out_of_time_refill(r)) {
    jl_tilt_info ti;
    int to_beat = r->best.count > beat ? r->best.count : beat;
    rc = jl_trunk_tilt_fill(&rg, 3, to_beat, r->threads, r->deadline, r->stop, &r->tmp, &ti, err);
    if (rc == JL_OK && r->tmp.count > r->best.count) rc = jl_block_packing_copy(&r->best, &r->tmp, err);
  }
  jl_trunk_geom_free(&rg);
  static const double turns[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  double a = JL_REFILL_TURN_DEG * (3.14159265358979323846 / 180.0);
  for (int t = 0; t < 4 && rc == JL_OK && r->best.count < ub && !jl_out_of_time_refill(r); ++t) {
    jl_trunk_frame tf;
    memset(&tf, 0, sizeof tf);
    jl_trunk_frame_from_angles(0.0, turns[t][0] * a, turns[t][1] * a, tf.R);
    jl_quat_from_axes(tf.R, tf.q);
    jl_mesh tm = {0};
    if ((rc = jl_trunk_frame_turn_mesh(rm, &tf, &tm, err)) != JL_OK) break;
    if ((rc = jl_trunk_geom_init(&rg, &tm, r->g->block, err)) == JL_OK) {
      rc = jl_refill_fill_part(&rg, r->threads, r->deadline, r->stop, &r->cand, &r->tmp, err);
      jl_trunk_geom_free(&rg);
      if (rc == JL_OK && r->cand.count > r->best.count &&
          (rc = jl_trunk_frame_packing_back(&tf, &r->cand, &r->back, err)) == JL_OK)
        rc = jl_block_packing_copy(&r->best, &r->back, err);
    }
    jl_mesh_free(&tm);
  }
  return rc;
}

int jl_trunk_refill(const jl_trunk_geom *g, const jl_trunk_frame *f, jl_block_packing *p, int threads,
                    double deadline, const volatile sig_atomic_t *stop, jl_trunk_check_fn check, void *check_ctx,
                    jl_refill_info *info, jl_error *err) {
  if (!check) {
    check = jl_trunk_check;
    check_ctx = (void *)g;
  }
  double t0 = jl_time_now();
  memset(info, 0, sizeof *info);
  info->complete = 1;
  const jl_block_size *bs = &g->block;
  double bvol = bs->x * bs->y * bs->z;
  int ub = (int)floor(jl_mesh_volume(g->mesh) / bvol + 1e-9);
  jl_trunk_limits lim = {deadline, stop, 0.0};
  /* the combined packing's exact check may finish past the limits */
  jl_trunk_limits fin = {deadline, stop, JL_TRUNK_FINISH_S};
  if (p->count >= ub) return JL_OK;
  if (f && !f->turned) f = NULL;
  jl_refill_run r;
  memset(&r, 0, sizeof r);
  r.g = g;
  r.f = f;
  r.threads = threads;
  r.deadline = deadline;
  r.stop = stop;
  jl_mesh turned = {0}, rm = {0};
  const jl_mesh *wm = g->mesh;
  jl_block_packing wp = {0};
  jl_refill_box regions[JL_REFILL_MAX_REGIONS];
  int nr = 0;
  uint8_t *keep = NULL;
  double *bl = NULL, *bh = NULL;  /* working-frame bounds of wp's blocks */
  int rc = JL_OK;
  if ((rc = jl_block_packing_init(&wp, p->count + 16, err)) != JL_OK ||
      (rc = jl_block_packing_init(&r.best, 64, err)) != JL_OK || (rc = jl_block_packing_init(&r.tmp, 64, err)) != JL_OK ||
      (rc = jl_block_packing_init(&r.back, 64, err)) != JL_OK || (rc = jl_block_packing_init(&r.cand, 64, err)) != JL_OK)
    goto done;
  if (f) {
    if ((rc = jl_trunk_frame_turn_mesh(g->mesh, f, &turned, err)) != JL_OK) goto done;
    wm = &turned;
    rc = jl_refill_to_frame(f, p, &wp, err);
  } else {
    rc = jl_block_packing_copy(&wp, p, err);
  }
  if (rc != JL_OK) goto done;
  if ((rc = jl_refill_regions(wm, bs, &wp, threads, &lim, regions, &nr, err)) != JL_OK) goto done;
  info->regions = nr;
  double mlo[3], mhi[3];
  jl_mesh_bounds(wm, mlo, mhi);
  double eps = g->tol, longest = fmax(bs->x, fmax(bs->y, bs->z));
  for (int k = 0; k < nr && p->count < ub; ++k) {
    if (jl_trunk_limits_hit(&lim, 0.0)) {
      info->complete = 0;
      break;
    }
    free(keep);
    free(bl);
    keep = malloc((size_t)(wp.count > 0 ? wp.count : 1));
    bl = malloc(6 * (size_t)(wp.count > 0 ? wp.count : 1) * sizeof *bl);
    if (!keep || !bl) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the refill");
      goto done;
    }
    bh = bl + 3 * (size_t)wp.count;
    for (int i = 0; i < wp.count; ++i) jl_refill_block_bounds(bs, &wp, i, bl + 3 * i, bh + 3 * i);
    jl_refill_box box = regions[k];
    jl_refill_snap(&box, bl, bh, wp.count, mlo, mhi, JL_REFILL_GROW_SHARE * longest, eps);
    double glo[2], ghi[2];
    for (int d = 0; d < 2; ++d) {
      glo[d] = fmax(mlo[d], box.lo[d] - JL_REFILL_GROW_SHARE * longest);
      ghi[d] = fmin(mhi[d], box.hi[d] + JL_REFILL_GROW_SHARE * longest);
    }
    /* grown by the blocks that meet it, so their space lies mostly inside */
    for (int round = 0; round <= JL_REFILL_GROW; ++round) {
      int grew = 0;
      for (int i = 0; i < wp.count; ++i) {
        double blo[3], bhi[3];
        jl_refill_block_bounds(bs, &wp, i, blo, bhi);
        int meets = 1;
        for (int d = 0; d < 2; ++d) meets &= blo[d] < box.hi[d] - eps && bhi[d] > box.lo[d] + eps;
        keep[i] = (uint8_t)!meets;
        if (!meets || round == JL_REFILL_GROW) continue;
        for (int d = 0; d < 2; ++d) {
          double a = fmax(glo[d], fmin(box.lo[d], blo[d])), b = fmin(ghi[d], fmax(box.hi[d], bhi[d]));
          grew |= a < box.lo[d] || b > box.hi[d];
          box.lo[d] = a;
          box.hi[d] = b;
        }
      }
      if (!grew && round < JL_REFILL_GROW) {
        round = JL_REFILL_GROW - 1;  /* stable: one more pass sets keep */
      }
    }
    int removed = 0;
    for (int i = 0; i < wp.count; ++i) removed += !keep[i];
    int ok = 0;
    jl_mesh_free(&rm);
    if ((rc = jl_refill_clip(wm, mlo, mhi, &box, &rm, &ok, err)) != JL_OK) goto done;
    if (!ok) {
      info->unclean++;
      continue;
    }
    int ub_r = (int)floor(jl_mesh_volume(&rm) / bvol + 1e-9);
    if (ub_r <= removed) continue;  /* no room for one more */
    info->tried++;
    if ((rc = jl_refill_part(&r, &rm, box.face, removed, ub_r, err)) != JL_OK) goto done;
    info->removed += removed;
    info->refilled += r.best.count;
    int delta = r.best.count - removed;
    if (info->tried == 1 || delta > info->closest) info->closest = delta;
    if (delta < JL_REFILL_NEAR) continue;
    /* the kept blocks as they were, the refill turned back into the mesh */
    r.cand.count = 0;
    for (int i = 0; i < p->count && rc == JL_OK; ++i)
      if (keep[i]) rc = jl_block_packing_push(&r.cand, p->centre + 3 * i, p->quat + 4 * i, err);
    const jl_block_packing *add = &r.best;
    if (rc == JL_OK && f) {
      rc = jl_trunk_frame_packing_back(f, &r.best, &r.back, err);
      add = &r.back;
    }
    for (int i = 0; i < add->count && rc == JL_OK; ++i)
      rc = jl_block_packing_push(&r.cand, add->centre + 3 * i, add->quat + 4 * i, err);
    if (rc != JL_OK) goto done;
    jl_trunk_report rep;
    if ((rc = jl_trunk_check_packing_until(g, &r.cand, &fin, &rep, err)) != JL_OK) goto done;
    if (!rep.complete) {  /* not checked: never kept */
      info->complete = 0;
      break;
    }
    if (!rep.legal) {
      info->rejected++;
      continue;
    }
    if (delta <= 0) {  /* level or short: what the gap fill and the pockets find next to it */
      int added = 0;
      double left = deadline > 0.0 ? deadline - jl_time_now() : 0.0;
      info->near++;
      if ((rc = jl_trunk_gap_fill(g->mesh, *bs, 0.0, &r.cand, ub - r.cand.count, JL_REFILL_GAP_SHARE * left, stop,
                                  check, check_ctx, &added, err)) != JL_OK)
        goto done;
      left = deadline > 0.0 ? deadline - jl_time_now() : 0.0;
      jl_pocket_info pi;
      if (r.cand.count < ub && (deadline <= 0.0 || left > 0.0) &&
          (rc = jl_trunk_pocket_insert(g, 0.0, &r.cand, ub - r.cand.count, JL_REFILL_GAP_SHARE * left, stop,
                                       check, check_ctx, &pi, err)) != JL_OK)
        goto done;
      if (r.cand.count <= p->count) continue;
    }
    info->kept++;
    info->gained += r.cand.count - p->count;
    if ((rc = jl_block_packing_copy(p, &r.cand, err)) != JL_OK) goto done;
    rc = f ? jl_refill_to_frame(f, p, &wp, err) : jl_block_packing_copy(&wp, p, err);
    if (rc != JL_OK) goto done;
  }
done:
  info->time_s = jl_time_now() - t0;
  free(keep);
  free(bl);
  jl_mesh_free(&rm);
  jl_mesh_free(&turned);
  jl_block_packing_free(&wp);
  jl_block_packing_free(&r.best);
  jl_block_packing_free(&r.tmp);
  jl_block_packing_free(&r.back);
  jl_block_packing_free(&r.cand);
  return rc;
}
