#include "stop_flag.h"
#include "trunk_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_batch.h"
#include "block_relax.h"
#include "device.h"
#include "mesh.h"
#include "rng.h"
#include "surface_grid.h"
#include "timer.h"
#include "trunk_voxels.h"
#include "trunk_check.h"
#include "trunk_legalize.h"

/* Temperature schedule (energy in blocks): hot enough at first that a
 * deletion (+1) is taken one time in five, cold at the end. */
#define JL_T_START 0.6
#define JL_T_END 0.03
/* Chains run at staggered temperatures: chain c at T * (1 + (c % 4) / 2). */
#define JL_T_SPREAD 4
/* A chain this many blocks behind the best adopts the best packing; any
 * chain does so with this probability per launch. */
#define JL_ADOPT_LAG 2
#define JL_ADOPT_P 0.05
/* Chains whose best state is checked exactly per launch, at most. */
#define JL_CHECKS_PER_ROUND 4
/* Seconds one legalization of a chain's state may take: about a launch,
 * so the host's work does not starve the device. */
#define JL_LEGALIZE_S 1.0
/* Blocks within this many degrees of an axis-aligned orientation are
 * turned onto it before a chain's state is legalized (the chains' moves
 * jitter blocks by up to about 6 degrees). */
#define JL_STRAIGHTEN_DEG 10.0
/* Launch length aimed at by timed runs, seconds, and the most moves per
 * chain per launch. */
#define JL_ROUND_S 1.0
#define JL_ITERS_MAX 256
/* Default distance kept from the samples, as a share of the spacing: 0.
 * An edge lying along a row of samples can cut through the surface by up
 * to half the row spacing; a skin of half the spacing kept every exact
 * check clean (none of 21 failed in a 1000 x 500 x 400 cuboid), but it made
 * every fill flush with two opposite walls illegal to the relaxation (the
 * sedan's rows of twelve 100 mm blocks across 1200 mm needed 1205 mm), so
 * no chain could hold one block more legally. Wall cuts are legalized
 * against the exact triangles instead (trunk_legalize.c). */
#define JL_POINT_SKIN_SHARE 0.0
/* Gap fill voxels: the smallest block edge over this (2.5 mm for the DIN
 * block), so a gap holds a block when it is at most two voxels wider. */
#define JL_GAP_VOXELS_PER_EDGE 20
/* Pocket map voxels: the smallest block edge over this (5 mm for the DIN
 * block): a pocket's core, at least half that edge from anything, is then
 * several voxels across. */
#define JL_POCKET_VOXELS_PER_EDGE 10
/* Pocket map voxels at most: with its distance, label and queue maps 13
 * bytes each, about 100 MB (the sedan needs 4.4e6 voxels of 5 mm); a
 * larger trunk gets coarser voxels, which only find fewer pockets. */
#define JL_POCKET_MAX_VOXELS 8e6
/* Share of the time left that a pocket insertion may take: the chains get
 * the rest. */
#define JL_POCKET_SHARE 0.5
/* Gap fill passes over the start while they still add blocks, at most. */
#define JL_GAP_ROUNDS 3
/* Voxels of the gap map at most: its four byte maps then take 256 MB (the
 * sedan needs 3.5e7 voxels of 2.5 mm); a larger trunk gets coarser voxels,
 * which only find fewer gaps. */
#define JL_GAP_MAX_VOXELS 6.4e7
/* Blocks slid between polls of the time limit and the stop flag. */
#define JL_GAP_POLL 64

_Static_assert(JL_TRUNK_MOVE_KINDS == JL_BMOVE_COUNT, "a name for every move kind");
const char *const jl_trunk_move_names[JL_TRUNK_MOVE_KINDS] = {
    [JL_BMOVE_INSERT] = "insert", [JL_BMOVE_DELETE] = "delete", [JL_BMOVE_SHIFT] = "shift",
    [JL_BMOVE_SHAKE] = "shake",   [JL_BMOVE_TURN] = "turn",     [JL_BMOVE_SETTLE] = "settle",
    [JL_BMOVE_PUSH] = "push"};

void jl_trunk_search_config_default(jl_trunk_search_config *c) {
  memset(c, 0, sizeof *c);
  c->seed = 1;
  c->device = "auto";
  c->point_skin = -1.0;
  c->p_turn = c->p_settle = c->p_push = -1.0;
  c->block.x = JL_BLOCK_DIN_X;
  c->block.y = JL_BLOCK_DIN_Y;
  c->block.z = JL_BLOCK_DIN_Z;
}

static double jl_signed_volume(const jl_mesh *m) {
  double v = 0.0;
  for (int t = 0; t < m->n_triangles; ++t) {
    const double *a = m->vertices + 3 * m->triangles[3 * t];
    const double *b = m->vertices + 3 * m->triangles[3 * t + 1];
    const double *c = m->vertices + 3 * m->triangles[3 * t + 2];
    v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
         a[2] * (b[0] * c[1] - b[1] * c[0]);
  }
  return v / 6.0;
}

static int jl_out_of_time(double deadline, const volatile sig_atomic_t *stop) {
  return jl_stop_requested(stop) || (deadline > 0.0 && jl_time_now() >= deadline);
}

/* Legalizes pk (more blocks than best) against the exact triangles
 * (trunk_legalize.c) within JL_LEGALIZE_S; when it comes out legal and
 * passes check it becomes the new best (*improved). */
static int jl_try_legalize(const jl_trunk_geom *geom, jl_block_packing *pk, jl_block_packing *alt,
                           jl_trunk_check_fn check, void *ctx, jl_block_packing *best,
                           jl_trunk_run_info *info, double deadline,
                           const volatile sig_atomic_t *stop, int *improved, jl_error *err) {
  double t = jl_time_now(), until = t + JL_LEGALIZE_S;
  if (deadline > 0.0 && deadline < until) until = deadline;
  jl_trunk_limits lim = {until, stop, 0.0};
  jl_legalize_info li;
  info->legalize_tried++;
  /* first with the blocks the chain turned a little turned back straight,
   * then (time left) as the chain left them */
  int rc = jl_block_packing_copy(alt, pk, err);
  if (rc) return rc;
  int turned = jl_trunk_straighten(&geom->block, pk, 0, JL_STRAIGHTEN_DEG);
  rc = jl_trunk_legalize(geom, pk, best->count, 0, &lim, &li, err);
  if (rc == JL_OK && !li.legal && turned > 0 && !li.cut) {
    info->legalize_dropped += li.dropped_outside + li.dropped_stuck;
    if ((rc = jl_block_packing_copy(pk, alt, err)) == JL_OK)
      rc = jl_trunk_legalize(geom, pk, best->count, 0, &lim, &li, err);
  }
  info->legalize_time_s += jl_time_now() - t;
  if (rc) return rc;
  info->legalize_dropped += li.dropped_outside + li.dropped_stuck;
  if (!li.legal || pk->count <= best->count) return JL_OK;
  double worst = 0.0;
  info->checks++;
  if (!check(ctx, pk, &worst)) {
    if (isnan(worst)) info->checks--;
    else info->checks_failed++;
    return JL_OK;
  }
  info->legalize_legal++;
  *improved = 1;
  return jl_block_packing_copy(best, pk, err);
}

/* Checks chains whose best state beats the global best, best first; the
 * first that passes becomes the new best. A chain that fails goes back to
 * recording from the global best count, and its state is legalized (geom
 * not NULL). Without a new best, the chain whose current state holds the
 * most blocks above the best is legalized too. Past the deadline (> 0) or
 * a signal only the first is checked. */
static int jl_take_best(jl_block_batch *b, jl_trunk_check_fn check, void *ctx,
                        const jl_trunk_geom *geom, jl_block_packing *best, jl_block_packing *tmp,
                        jl_block_packing *alt,
                        jl_trunk_run_info *info, double deadline, const volatile sig_atomic_t *stop,
                        int *improved, jl_error *err) {
  *improved = 0;
  int rc;
  for (int k = 0; k < JL_CHECKS_PER_ROUND; ++k) {
    if (k > 0 && jl_out_of_time(deadline, stop)) return JL_OK;
    int cb = -1;
    for (int c = 0; c < b->count; ++c)
      if (b->best_n[c] > best->count && (cb < 0 || b->best_n[c] > b->best_n[cb])) cb = c;
    if (cb < 0) break;
    if ((rc = jl_block_batch_get_best(b, cb, tmp, err))) return rc;
    double worst = 0.0;
    info->checks++;
    if (check(ctx, tmp, &worst)) {
      if ((rc = jl_block_packing_copy(best, tmp, err))) return rc;
      *improved = 1;
      return JL_OK;
    }
    if (isnan(worst)) {  /* the check's limits stopped it: the run is ending */
      info->checks--;
      return JL_OK;
    }
    info->checks_failed++;
    b->best_n[cb] = best->count;
    if (geom && !jl_out_of_time(deadline, stop)) {
      if ((rc = jl_try_legalize(geom, tmp, alt, check, ctx, best, info, deadline, stop, improved,
                                err)))
        return rc;
      if (*improved) return JL_OK;
    }
  }
  if (!geom || jl_out_of_time(deadline, stop)) return JL_OK;
  int cn = -1;
  for (int c = 0; c < b->count; ++c)
    if (b->n[c] > best->count && isfinite(b->energy[c]) &&
        (cn < 0 || b->n[c] > b->n[cn] || (b->n[c] == b->n[cn] && b->energy[c] < b->energy[cn])))
      cn = c;
  if (cn < 0) return JL_OK;
  if ((rc = jl_block_batch_get(b, cn, tmp, err))) return rc;
  return jl_try_legalize(geom, tmp, alt, check, ctx, best, info, deadline, stop, improved, err);
}

/* ---- gap fill: axis-aligned blocks into the free voxels of the trunk ---- */

/* Voxels within this share of a voxel count as touching, not crossing. */
#define JL_GAP_EPS 1e-6


/* The gap fill's map is the inner voxel map (trunk_voxels.h). */
typedef jl_voxel_map jl_gap_map;

static size_t jl_gap_idx(const jl_gap_map *m, int i, int j, int k) { return jl_voxel_idx(m, i, j, k); }

/* World extents (full edges) of a block of half edges h turned by q. */
static void jl_gap_extent(const double h[3], jl_quat q, jl_vec3 ax[3], double ext[3]) {
  jl_quat_to_axes(q, ax);
  for (int d = 0; d < 3; ++d) {
    double a0 = d == 0 ? ax[0].x : d == 1 ? ax[0].y : ax[0].z;
    double a1 = d == 0 ? ax[1].x : d == 1 ? ax[1].y : ax[1].z;
    double a2 = d == 0 ? ax[2].x : d == 1 ? ax[2].y : ax[2].z;
    ext[d] = fabs(a0) * h[0] + fabs(a1) * h[1] + fabs(a2) * h[2];
  }
}

/* Voxel range [lo, hi] of the voxels whose interior a block meets along
 * each axis, from its world extents; 1 when the block is axis-aligned (its
 * voxels are then exactly that range). */
static int jl_gap_block_range(const jl_gap_map *m, const double h[3], const double *c,
                              const double *qa, jl_vec3 ax[3], double ext[3], int lo[3],
                              int hi[3]) {
  jl_quat q = jl_quat_normalize((jl_quat){qa[0], qa[1], qa[2], qa[3]});
  jl_gap_extent(h, q, ax, ext);
  int aligned = 1;
  for (int a = 0; a < 3; ++a)
    aligned &= fmax(fabs(ax[a].x), fmax(fabs(ax[a].y), fabs(ax[a].z))) > 1.0 - 1e-9;
  for (int d = 0; d < 3; ++d) {
    lo[d] = (int)floor((c[d] - ext[d] - m->origin[d]) / m->v + JL_GAP_EPS);
    hi[d] = (int)ceil((c[d] + ext[d] - m->origin[d]) / m->v - JL_GAP_EPS) - 1;
    if (lo[d] < 0) lo[d] = 0;
    if (hi[d] > m->dim[d] - 1) hi[d] = m->dim[d] - 1;
  }
  return aligned;
}

/* Counts a block in occ on the voxels whose interior it meets (turned
 * blocks: separating axes of the voxel's 3 and the block's 3, a superset). */
static void jl_gap_mark_block(const jl_gap_map *m, uint8_t *occ, const double h[3], const double *c,
                              const double *qa) {
  jl_vec3 ax[3];
  double ext[3];
  int r0[3], r1[3];
  int aligned = jl_gap_block_range(m, h, c, qa, ax, ext, r0, r1);
  double v = m->v, hv = 0.5 * v, eps = JL_GAP_EPS * v;
  for (int k = r0[2]; k <= r1[2]; ++k)
    for (int j = r0[1]; j <= r1[1]; ++j)
      for (int i = r0[0]; i <= r1[0]; ++i) {
        int apart = 0;
        if (!aligned) {
          double d[3] = {m->origin[0] + (i + 0.5) * v - c[0], m->origin[1] + (j + 0.5) * v - c[1],
                         m->origin[2] + (k + 0.5) * v - c[2]};
          for (int a = 0; a < 3 && !apart; ++a) {
            double L[3] = {ax[a].x, ax[a].y, ax[a].z};
            double pr = L[0] * d[0] + L[1] * d[1] + L[2] * d[2];
            double r = hv * (fabs(L[0]) + fabs(L[1]) + fabs(L[2]));
            apart = fabs(pr) >= h[a] + r - eps;
          }
        }
        if (!apart) occ[jl_gap_idx(m, i, j, k)]++;
      }
}

static void jl_gap_mark_all(const jl_gap_map *m, uint8_t *occ, const double h[3],
                            const jl_block_packing *p) {
  memset(occ, 0, m->n);
  for (int b = 0; b < p->count; ++b) jl_gap_mark_block(m, occ, h, p->centre + 3 * b, p->quat + 4 * b);
}

/* f[i] &= f[i + s along axis], 0 where that leaves the grid. Inner loops
 * run over contiguous memory. */
static void jl_gap_and_shift(uint8_t *f, const int dim[3], int axis, int s) {
  size_t nx = (size_t)dim[0], ny = (size_t)dim[1], nz = (size_t)dim[2], us = (size_t)s;
  if (axis == 0) {
    for (size_t r = 0; r < ny * nz; ++r) {
      uint8_t *row = f + r * nx;
      size_t lim = us < nx ? nx - us : 0;
      for (size_t i = 0; i < lim; ++i) row[i] &= row[i + us];
      memset(row + lim, 0, nx - lim);
    }
  } else if (axis == 1) {
    for (size_t k = 0; k < nz; ++k) {
      uint8_t *pl = f + nx * ny * k;
      size_t lim = us < ny ? ny - us : 0;
      for (size_t j = 0; j < lim; ++j) {
        uint8_t *row = pl + nx * j, *nxt = pl + nx * (j + us);
        for (size_t i = 0; i < nx; ++i) row[i] &= nxt[i];
      }
      memset(pl + nx * lim, 0, nx * (ny - lim));
    }
  } else {
    size_t plane = nx * ny, lim = us < nz ? nz - us : 0;
    for (size_t k = 0; k < lim; ++k) {
      uint8_t *pl = f + plane * k, *nxt = f + plane * (k + us);
      for (size_t i = 0; i < plane; ++i) pl[i] &= nxt[i];
    }
    memset(f + plane * lim, 0, plane * (nz - lim));
  }
}

/* In place along one axis: a voxel stays 1 when it and the next len - 1
 * voxels along the axis are 1 (runs doubled: log2(len) + 1 passes). */
static void jl_gap_erode(uint8_t *f, const int dim[3], int axis, int len) {
  int have = 1;
  while (2 * have <= len) {
    jl_gap_and_shift(f, dim, axis, have);
    have *= 2;
  }
  if (len > have) jl_gap_and_shift(f, dim, axis, len - have);
}

typedef struct jl_gap_key {
  double key;
  int b;
} jl_gap_key;

/* By key, then by block index: the order of a stable sort. */
static int jl_gap_cmp_key(const void *x, const void *y) {
  const jl_gap_key *a = x, *c = y;
  if (a->key != c->key) return a->key < c->key ? -1 : 1;
  return (a->b > c->b) - (a->b < c->b);
}

/* Slides the axis-aligned blocks along one axis (sign -1 or +1) voxel by
 * voxel while the voxels they move into are free, nearest the far wall
 * first, so free space gathers at the other end. Keeps occ current; stops
 * (blocks slid so far stay slid) when lim is reached. */
static int jl_gap_compact(const jl_gap_map *m, uint8_t *occ, const double h[3], jl_block_packing *p,
                          int axis, int sign, const jl_trunk_limits *lim, jl_error *err) {
  int n = p->count;
  jl_gap_key *ord = malloc((size_t)(n > 0 ? n : 1) * sizeof *ord);
  if (!ord) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for compaction");
  for (int b = 0; b < n; ++b) ord[b] = (jl_gap_key){-sign * p->centre[3 * b + axis], b};
  qsort(ord, (size_t)n, sizeof *ord, jl_gap_cmp_key);
  int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
  for (int t = 0; t < n; ++t) {
    if (t % JL_GAP_POLL == 0 && jl_trunk_limits_hit(lim, 0.0)) break;
    int b = ord[t].b;
    double *c = p->centre + 3 * b;
    jl_vec3 ax[3];
    double ext[3];
    int lo[3], hi[3];
    if (!jl_gap_block_range(m, h, c, p->quat + 4 * b, ax, ext, lo, hi)) continue;
    for (;;) {
      int lead = sign > 0 ? hi[axis] + 1 : lo[axis] - 1;
      int trail = sign > 0 ? lo[axis] : hi[axis];
      if (lead < 0 || lead >= m->dim[axis]) break;
      int ok = 1;
      int idx[3];
      idx[axis] = lead;
      for (int u = lo[o1]; u <= hi[o1] && ok; ++u)
        for (int w = lo[o2]; w <= hi[o2] && ok; ++w) {
          idx[o1] = u; idx[o2] = w;
          size_t id = jl_gap_idx(m, idx[0], idx[1], idx[2]);
          ok = m->free[id] && !occ[id];
        }
      if (!ok) break;
      for (int u = lo[o1]; u <= hi[o1]; ++u)
        for (int w = lo[o2]; w <= hi[o2]; ++w) {
          idx[o1] = u; idx[o2] = w;
          idx[axis] = lead;
          occ[jl_gap_idx(m, idx[0], idx[1], idx[2])]++;
          idx[axis] = trail;
          occ[jl_gap_idx(m, idx[0], idx[1], idx[2])]--;
        }
      lo[axis] += sign;
      hi[axis] += sign;
      c[axis] += sign * m->v;
    }
  }
  free(ord);
  return JL_OK;
}

/* Adds axis-aligned blocks where all their voxels are free, lowest first;
 * each stays only when p with it passes check. */
static int jl_gap_fill_map(const jl_gap_map *m, const uint8_t *occ, uint8_t *mask, uint8_t *tmp,
                           const double h[3], jl_block_packing *p, int max_add,
                           jl_trunk_check_fn check, void *check_ctx, const jl_trunk_limits *lim,
                           int *added, jl_error *err) {
  *added = 0;
  double voxel = m->v;
  int len[6][3];
  jl_quat qo[6];
  memset(mask, 0, m->n);
  for (int o = 0; o < 6; ++o) {
    if (jl_trunk_limits_hit(lim, 0.0)) return JL_OK;
    jl_vec3 ax[3];
    double ext[3];
    qo[o] = jl_axis_orientation(o);
    jl_gap_extent(h, qo[o], ax, ext);
    for (int d = 0; d < 3; ++d) len[o][d] = (int)ceil(2.0 * ext[d] / voxel - 1e-6);
    for (size_t i = 0; i < m->n; ++i) tmp[i] = (uint8_t)(m->free[i] && !occ[i]);
    for (int d = 0; d < 3; ++d) {
      if (jl_trunk_limits_hit(lim, 0.0)) return JL_OK;
      jl_gap_erode(tmp, m->dim, d, len[o][d]);
    }
    for (size_t i = 0; i < m->n; ++i) mask[i] |= (uint8_t)(tmp[i] << o);
  }
  int rc;
  for (size_t id = 0; id < m->n && *added < max_add; ++id) {
    if ((id & 0xFFFFF) == 0 && jl_trunk_limits_hit(lim, 0.0)) return JL_OK;
    if (!mask[id]) continue;
    int i = (int)(id % (size_t)m->dim[0]), j = (int)((id / (size_t)m->dim[0]) % (size_t)m->dim[1]);
    int k = (int)(id / ((size_t)m->dim[0] * (size_t)m->dim[1]));
    for (int o = 0; o < 6 && mask[id]; ++o) {
      if (!(mask[id] >> o & 1)) continue;
      if (jl_trunk_limits_hit(lim, 0.0)) return JL_OK;  /* the blocks added so far passed */
      mask[id] &= (uint8_t) ~(1u << o);
      if (p->count >= p->capacity && (rc = jl_block_packing_reserve(p, 2 * p->capacity + 8, err)))
        return rc;
      int ijk[3] = {i, j, k};
      double *c = p->centre + 3 * p->count, *q = p->quat + 4 * p->count;
      for (int d = 0; d < 3; ++d) c[d] = m->origin[d] + ijk[d] * voxel + 0.5 * len[o][d] * voxel;
      q[0] = qo[o].w; q[1] = qo[o].x; q[2] = qo[o].y; q[3] = qo[o].z;
      p->count++;
      double worst = 0.0;
      if (!check(check_ctx, p, &worst)) { p->count--; continue; }
      (*added)++;
      /* the new block: clear every orientation's corners whose box meets it */
      for (int o2 = 0; o2 < 6; ++o2) {
        int lo[3], hi[3];
        for (int d = 0; d < 3; ++d) {
          lo[d] = ijk[d] - len[o2][d] + 1;
          hi[d] = ijk[d] + len[o][d] - 1;
          if (lo[d] < 0) lo[d] = 0;
          if (hi[d] > m->dim[d] - 1) hi[d] = m->dim[d] - 1;
        }
        for (int kk = lo[2]; kk <= hi[2]; ++kk)
          for (int jj = lo[1]; jj <= hi[1]; ++jj)
            for (int ii = lo[0]; ii <= hi[0]; ++ii)
              mask[jl_gap_idx(m, ii, jj, kk)] &= (uint8_t) ~(1u << o2);
      }
    }
  }
  return JL_OK;
}

/* The free space of the trunk with p in place (the gap map less every
 * voxel a block meets), handed over as a plain voxel map. */
static int jl_gap_free_map(const jl_mesh *mesh, jl_block_size size, double voxel,
                           const jl_block_packing *p, const jl_trunk_limits *lim, jl_voxel_map *out,
                           int *cut, jl_error *err) {
  memset(out, 0, sizeof *out);
  int rc = jl_voxel_map_build(out, mesh, voxel, JL_POCKET_MAX_VOXELS, JL_VOXEL_INNER, 1, lim->deadline,
                              lim->stop, cut, err);
  if (rc || *cut) return rc;
  uint8_t *occ = malloc(out->n);
  if (!occ) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the pocket map");
  double h[3] = {0.5 * size.x, 0.5 * size.y, 0.5 * size.z};
  jl_gap_mark_all(out, occ, h, p);
  for (size_t i = 0; i < out->n; ++i) out->free[i] = (uint8_t)(out->free[i] && !occ[i]);
  free(occ);
  return JL_OK;
}

int jl_trunk_pocket_insert(const jl_trunk_geom *g, double voxel, jl_block_packing *p, int max_add,
                           double time_s, const volatile sig_atomic_t *stop,
                           jl_trunk_check_fn check, void *check_ctx, jl_pocket_info *info,
                           jl_error *err) {
  memset(info, 0, sizeof *info);
  double t0 = jl_time_now();
  jl_trunk_limits lim = {time_s > 0.0 ? t0 + time_s : 0.0, stop, 0.0};
  if (max_add <= 0 || jl_trunk_limits_hit(&lim, 0.0)) return JL_OK;
  jl_block_size size = g->block;
  if (!(voxel > 0.0)) voxel = fmin(size.x, fmin(size.y, size.z)) / JL_POCKET_VOXELS_PER_EDGE;
  double lo[3], hi[3];
  jl_mesh_bounds(g->mesh, lo, hi);
  for (;;) {  /* coarser voxels until the map fits JL_POCKET_MAX_VOXELS */
    double cells = 1.0;
    for (int d = 0; d < 3; ++d) cells *= ceil((hi[d] - lo[d]) / voxel) + 1.0;
    if (cells <= JL_POCKET_MAX_VOXELS || !isfinite(cells)) break;
    voxel *= 1.0001 * cbrt(cells / JL_POCKET_MAX_VOXELS);
  }
  jl_voxel_map map;
  int cut = 0;
  int rc = jl_gap_free_map(g->mesh, size, voxel, p, &lim, &map, &cut, err);
  if (rc == JL_OK && !cut) {
    jl_trunk_limits tl = {lim.deadline, stop, 0.0};
    rc = jl_trunk_pocket_fill(g, &map, p, max_add, check, check_ctx, &tl, info, err);
  }
  free(map.free);
  info->time_s = jl_time_now() - t0;
  return rc;
}

/* Compaction sequences tried by the gap fill, each from the packing as it
 * stands: blocks slid down, then along x and/or y one way or the other
 * (axis * 2 + (sign > 0)), -1 ends. More orders (y before x, no slide
 * down; 26 in all) found nothing more in the sedan at about 3 times the time. */
static const int jl_gap_seqs[][4] = {
    {-1},       {4, -1},       {4, 0, -1},    {4, 1, -1},    {4, 2, -1},
    {4, 3, -1}, {4, 0, 2, -1}, {4, 0, 3, -1}, {4, 1, 2, -1}, {4, 1, 3, -1},
};

int jl_trunk_gap_fill(const jl_mesh *mesh, jl_block_size size, double voxel, jl_block_packing *p,
                      int max_add, double time_s, const volatile sig_atomic_t *stop,
                      jl_trunk_check_fn check, void *check_ctx, int *added, jl_error *err) {
  *added = 0;
  jl_trunk_limits lim = {time_s > 0.0 ? jl_time_now() + time_s : 0.0, stop, 0.0};
  if (jl_trunk_limits_hit(&lim, 0.0)) return JL_OK;
  double h[3] = {0.5 * size.x, 0.5 * size.y, 0.5 * size.z};
  if (!(voxel > 0.0)) voxel = fmin(size.x, fmin(size.y, size.z)) / JL_GAP_VOXELS_PER_EDGE;
  jl_gap_map m;
  memset(&m, 0, sizeof m);
  int cut = 0;
  int rc = jl_voxel_map_build(&m, mesh, voxel, JL_GAP_MAX_VOXELS, JL_VOXEL_INNER, 1, lim.deadline, lim.stop,
                              &cut, err);
  if (rc || cut) {
    free(m.free);
    return rc;
  }
  uint8_t *occ = malloc(m.n), *mask = malloc(m.n), *tmp = malloc(m.n);
  jl_block_packing trial;
  memset(&trial, 0, sizeof trial);
  if (!occ || !mask || !tmp) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the gap map");
    goto done;
  }
  int nseq = (int)(sizeof jl_gap_seqs / sizeof jl_gap_seqs[0]);
  for (int s = 0; s < nseq && *added < max_add && !jl_trunk_limits_hit(&lim, 0.0); ++s) {
    if ((rc = jl_block_packing_copy(&trial, p, err))) goto done;
    jl_gap_mark_all(&m, occ, h, &trial);
    for (int t = 0; t < 4 && jl_gap_seqs[s][t] >= 0 && !jl_trunk_limits_hit(&lim, 0.0); ++t) {
      int a = jl_gap_seqs[s][t];
      if ((rc = jl_gap_compact(&m, occ, h, &trial, a / 2, a % 2 ? 1 : -1, &lim, err))) goto done;
    }
    double worst = 0.0;
    if (jl_trunk_limits_hit(&lim, 0.0)) break;
    if (s > 0 && !check(check_ctx, &trial, &worst)) continue;
    int got = 0;
    if ((rc = jl_gap_fill_map(&m, occ, mask, tmp, h, &trial, max_add - *added, check, check_ctx,
                              &lim, &got, err)))
      goto done;
    if (got > 0) {
      if ((rc = jl_block_packing_copy(p, &trial, err))) goto done;
      *added += got;
    }
  }
  rc = JL_OK;
done:
  jl_block_packing_free(&trial);
  free(occ);
  free(mask);
  free(tmp);
  free(m.free);
  return rc;
}

/* The pocket insertion on best in the time left, then a gap fill when it
 * added blocks (the pushes it made may open room for aligned ones). */
static int jl_search_pockets(const jl_trunk_search_config *cfg, const jl_trunk_geom *geom,
                             jl_block_packing *best, int cap, double deadline,
                             volatile sig_atomic_t *stop, jl_trunk_check_fn check, void *check_ctx,
                             jl_trunk_run_info *info, int *got, jl_error *err) {
  *got = 0;
  double left = deadline > 0.0 ? deadline - jl_time_now() : 0.0;
  if ((deadline > 0.0 && left <= 0.0) || jl_stop_requested(stop) || best->count >= cap) return JL_OK;
  jl_pocket_info pi;
  int rc = jl_trunk_pocket_insert(geom, 0.0, best, cap - best->count, JL_POCKET_SHARE * left, stop,
                                  check, check_ctx, &pi, err);
  info->pocket_tried += pi.tried;
  info->pocket_added += pi.added;
  info->pocket_time_s += pi.time_s;
  *got = pi.added;
  if (rc || pi.added == 0 || cfg->no_gap_fill || best->count >= cap) return rc;
  left = deadline > 0.0 ? deadline - jl_time_now() : 0.0;
  if ((deadline > 0.0 && left <= 0.0) || jl_stop_requested(stop)) return JL_OK;
  int added = 0;
  rc = jl_trunk_gap_fill(geom->mesh, geom->block, 0.0, best, cap - best->count, left, stop, check,
                         check_ctx, &added, err);
  info->gap_added += added;
  *got += added;
  return rc;
}

/* Exact checks of incoming packings per migration, at most. */
#define JL_MIGRATE_CHECKS 2

/* The islands' hook after a launch: offers the best when an exchange
 * starts; when one completes, takes a larger packing of another rank as the
 * best when it passes the exact check here (the chains then adopt it as
 * they adopt any new best). */
static int jl_search_migrate(const jl_trunk_search_config *cfg, jl_block_packing *best, int due,
                             int want, jl_trunk_check_fn check, void *check_ctx, int *stop_out,
                             int *started, int *adopted, jl_trunk_run_info *info, jl_error *err) {
  jl_trunk_migration m = {.step = {.due = due, .want_stop = want}, .offer = best};
  int rc = cfg->migrate(cfg->migrate_ctx, &m, err);
  if (rc) return rc;
  info->migrations += (uint64_t)m.step.completed;
  *stop_out = m.step.stop;
  *started = m.step.started;
  *adopted = 0;
  /* largest first, at most JL_MIGRATE_CHECKS of them: with many ranks
   * most send packings larger than this one's, and an exact check costs
   * about a launch (a packing failing here was legal where it came from,
   * so a second one is a rare fallback) */
  int tried[JL_MIGRATE_CHECKS];
  for (int t = 0; t < JL_MIGRATE_CHECKS; ++t) {
    int pick = -1;
    for (int k = 0; k < m.incoming_count; ++k) {
      int seen = 0;
      for (int u = 0; u < t; ++u) seen |= tried[u] == k;
      if (!seen && m.incoming[k].count > best->count &&
          (pick < 0 || m.incoming[k].count > m.incoming[pick].count))
        pick = k;
    }
    if (pick < 0) break;
    tried[t] = pick;
    double worst = 0.0;
    info->checks++;
    if (!check(check_ctx, &m.incoming[pick], &worst)) {
      info->checks_failed++;
      continue;
    }
    if ((rc = jl_block_packing_copy(best, &m.incoming[pick], err))) return rc;
    info->migrate_adopted++;
    *adopted = 1;
    break;
  }
  return JL_OK;
}

int jl_trunk_search_fits(const jl_device *dev, long blocks) {
  return dev->kind != JL_DEVICE_CUDA || blocks <= JL_CUDA_MAX_SLOTS;
}

int jl_trunk_search_run(const jl_trunk_search_config *cfg, const jl_mesh *mesh,
                        const jl_block_packing *start, jl_trunk_check_fn check, void *check_ctx,
                        jl_trunk_progress_fn progress, void *progress_ctx,
                        volatile sig_atomic_t *stop, jl_block_packing *best,
                        jl_trunk_run_info *info, jl_error *err) {
  memset(info, 0, sizeof *info);
  /* --time bounds everything from here: setup, gap fills, launches */
  double t_enter = jl_time_now();
  double deadline = cfg->time_s > 0.0 ? t_enter + cfg->time_s : 0.0;
  if (!check) return jl_error_set(err, JL_ERR_INPUT, "the trunk search needs an exact check");
  jl_block_size size = cfg->block;
  if (size.x == 0.0 && size.y == 0.0 && size.z == 0.0)
    size = (jl_block_size){JL_BLOCK_DIN_X, JL_BLOCK_DIN_Y, JL_BLOCK_DIN_Z};
  if (!(size.x > 0.0 && size.y > 0.0 && size.z > 0.0) || !isfinite(size.x + size.y + size.z))
    return jl_error_set(err, JL_ERR_INPUT, "block edges must be > 0, got %gx%gx%g", size.x, size.y,
                        size.z);
  double spacing = cfg->spacing > 0.0 ? cfg->spacing : jl_surface_default_spacing(&size);
  double cell = cfg->cell > 0.0 ? cfg->cell : JL_GRID_CELL_DEFAULT;
  jl_device dev;
  int rc = jl_device_select_slot(&dev, cfg->device ? cfg->device : "auto", cfg->threads,
                                 cfg->device_slot, NULL, err);
  if (rc) return rc;

  double vol = jl_signed_volume(mesh);
  double bvol = size.x * size.y * size.z;
  long ub = (long)floor(vol / bvol);
  int start_n = start ? start->count : 0;
  long cap = ub > start_n ? ub : start_n;
  if (cap < 1) return jl_error_set(err, JL_ERR_INPUT, "the trunk is too small for one block");
  if (dev.kind == JL_DEVICE_CUDA && cap > JL_CUDA_MAX_SLOTS)
    return jl_error_set(err, JL_ERR_INPUT,
                        "the trunk holds up to %ld blocks; the CUDA kernel keeps at most %d",
                        cap, JL_CUDA_MAX_SLOTS);

  double *pts = NULL;
  int npts = 0;
  jl_surface_grid g;
  memset(&g, 0, sizeof g);
  jl_block_batch b;
  memset(&b, 0, sizeof b);
  jl_block_engine eng;
  memset(&eng, 0, sizeof eng);
  jl_block_packing tmp, alt;
  memset(&tmp, 0, sizeof tmp);
  memset(&alt, 0, sizeof alt);
  /* the exact triangles near each block, for legalizing the chains' states */
  jl_trunk_geom geom;
  memset(&geom, 0, sizeof geom);
  int geom_ok = 0;
  if (!cfg->no_legalize || !cfg->no_pockets) {
    if ((rc = jl_trunk_geom_init(&geom, mesh, size, err))) goto done;
    geom_ok = 1;
  }
  /* the start is the first best when it is legal */
  best->count = 0;
  info->start_count = start_n;
  if (start_n > 0) {
    double worst = 0.0;
    info->checks++;
    info->start_legal = check(check_ctx, start, &worst);
    if (info->start_legal) {
      if ((rc = jl_block_packing_copy(best, start, err))) goto done;
    } else {
      info->checks_failed++;
    }
  }
  /* the samples' relaxation rarely finds room in a dense start: fill the
   * free space the start leaves first, exactly */
  double t_gap = jl_time_now(), t_best = 0.0;
  for (int r = 0; r < JL_GAP_ROUNDS && !cfg->no_gap_fill && best->count > 0 && best->count < cap;
       ++r) {
    int added = 0;
    double left = deadline > 0.0 ? deadline - jl_time_now() : 0.0;
    if ((deadline > 0.0 && left <= 0.0) || jl_stop_requested(stop)) break;
    if ((rc = jl_trunk_gap_fill(mesh, size, 0.0, best, (int)cap - best->count, left, stop, check,
                                check_ctx, &added, err)))
      goto done;
    info->gap_added += added;
    if (added == 0) break;
    t_best = jl_time_now() - t_enter;
  }
  info->gap_time_s = jl_time_now() - t_gap;
  /* turned blocks into the pockets the axis-aligned ones leave */
  if (geom_ok && !cfg->no_pockets && best->count > 0 && best->count < cap) {
    int got = 0;
    if ((rc = jl_search_pockets(cfg, &geom, best, (int)cap, deadline, stop, check, check_ctx, info,
                                &got, err)))
      goto done;
    if (got > 0) t_best = jl_time_now() - t_enter;
  }
  /* the launches need samples and a grid (seconds in a debug build): not
   * built when the gap fill spent the time */
  long round = 0;
  int count = 0;
  int stopped_by = JL_TRUNK_STOP_ROUNDS;
  int migrate_stop = 0;  /* the last migration's verdict */
  double next_migration = jl_time_now() + cfg->migrate_s;
  if (jl_stop_requested(stop)) { stopped_by = JL_TRUNK_STOP_SIGNAL; goto finish; }
  if (deadline > 0.0 && jl_time_now() >= deadline) { stopped_by = JL_TRUNK_STOP_TIME; goto finish; }
  if (cfg->target_count > 0 && best->count >= cfg->target_count) { stopped_by = JL_TRUNK_STOP_TARGET; goto finish; }
  if ((rc = jl_surface_sample(mesh, spacing, &pts, &npts, err))) goto done;
  if (dev.kind == JL_DEVICE_CUDA) rc = jl_surface_grid_build_cuda(&g, pts, npts, cell, err);
  else rc = jl_surface_grid_build(&g, pts, npts, cell, err);
  if (rc) goto done;
  if ((rc = jl_surface_grid_mark_inside(&g, mesh, err))) goto done;

  count = cfg->batch > 0 ? cfg->batch
              : dev.kind == JL_DEVICE_CUDA ? (dev.sm_count > 0 ? dev.sm_count : 80) * 16
                                           : dev.threads * 2;
  if ((rc = jl_block_batch_alloc(&b, count, (int)cap, err))) goto done;
  if ((rc = jl_block_engine_init(&eng, &dev, &g, count, (int)cap, err))) goto done;
  if ((rc = jl_block_packing_init(&tmp, (int)cap, err))) goto done;

  jl_block_params p;
  jl_block_params_default(&p, &size, cfg->seed);
  if (cfg->moves_per_round > 0) p.iters = cfg->moves_per_round;
  if (cfg->p_turn >= 0.0) p.p_turn = cfg->p_turn;
  if (cfg->p_settle >= 0.0) p.p_settle = cfg->p_settle;
  if (cfg->p_push >= 0.0) p.p_push = cfg->p_push;
  int adapt = cfg->moves_per_round <= 0 && cfg->time_s > 0.0;
  p.point_skin = cfg->point_skin >= 0.0 ? cfg->point_skin : JL_POINT_SKIN_SHARE * spacing;
  double t0s = cfg->t_start > 0.0 ? cfg->t_start : JL_T_START;
  double t1s = cfg->t_end > 0.0 ? cfg->t_end : JL_T_END;

  const jl_block_packing *from = best->count > 0 ? best : start;
  int from_n = from ? from->count : 0;
  for (int c = 0; c < count; ++c) {
    if (from_n > 0 && (rc = jl_block_batch_set(&b, c, from, err))) goto done;
    b.n[c] = from_n;
    b.best_n[c] = best->count;
  }
  jl_rng host_rng;
  jl_rng_init(&host_rng, cfg->seed, (uint64_t)1 << 62, 0);

  double t0 = t_enter;
  /* Timed launches start with one move per chain (the first launch's cost is
   * unknown: minutes in a sanitizer build) and grow; on the CPU no move
   * starts after the deadline or a signal. */
  if (adapt) p.iters = 1;
  p.deadline = deadline;
  p.stop = stop;
  for (;;) {
    if (jl_stop_requested(stop)) { stopped_by = JL_TRUNK_STOP_SIGNAL; break; }
    if (deadline > 0.0 && jl_time_now() >= deadline) { stopped_by = JL_TRUNK_STOP_TIME; break; }
    if (cfg->target_count > 0 && best->count >= cfg->target_count) { stopped_by = JL_TRUNK_STOP_TARGET; break; }
    double now = jl_time_now() - t0;
    double frac = cfg->time_s > 0.0 ? now / cfg->time_s
                  : cfg->rounds > 0 ? (double)round / (double)cfg->rounds
                                    : (double)(round % 200) / 200.0;
    if (frac > 1.0) frac = 1.0;
    double T = t0s * pow(t1s / t0s, frac);
    for (int c = 0; c < count; ++c) b.temp[c] = T * (1.0 + 0.5 * (double)(c % JL_T_SPREAD));
    double tl = jl_time_now();
    if ((rc = jl_block_engine_run(&eng, &p, &b, err))) goto done;
    tl = jl_time_now() - tl;
    round++;
    /* Timed runs (not reproducible anyway: the temperature follows the
     * clock) size launches to about JL_ROUND_S, so progress, checks and
     * Ctrl-C stay prompt on any device; runs by rounds keep a fixed size. */
    if (adapt && tl > 0.0) {
      double want = p.iters * JL_ROUND_S / tl;
      int it = want < 1.0 ? 1 : want > JL_ITERS_MAX ? JL_ITERS_MAX : (int)want;
      if (it < p.iters / 2) it = p.iters / 2 > 0 ? p.iters / 2 : 1;
      if (it > 2 * p.iters) it = 2 * p.iters;
      /* the device cannot stop a launch: none longer than the time left */
      double left = deadline - jl_time_now(), per_move = tl / p.iters;
      if (dev.kind == JL_DEVICE_CUDA && per_move > 0.0 && it > left / per_move)
        it = left / per_move < 1.0 ? 1 : (int)(left / per_move);
      p.iters = it;
    }
    int improved = 0;
    for (int c = 0; c < count; ++c)
      if (b.n[c] > info->chains_best) info->chains_best = b.n[c];
    if ((rc = jl_take_best(&b, check, check_ctx, geom_ok && !cfg->no_legalize ? &geom : NULL, best,
                           &tmp, &alt, info, deadline,
                           stop, &improved, err)))
      goto done;

    double left = deadline > 0.0 ? deadline - jl_time_now() : 0.0;
    if (improved && !cfg->no_gap_fill && best->count < cap && (deadline <= 0.0 || left > 0.0) &&
        !jl_stop_requested(stop)) {
      /* a new best may leave room a gap fill finds at once (timed runs: in
       * the time left) */
      int added = 0;
      if ((rc = jl_trunk_gap_fill(mesh, size, 0.0, best, (int)cap - best->count, left, stop, check,
                                  check_ctx, &added, err)))
        goto done;
      info->gap_added += added;
      int got = 0;
      if (geom_ok && !cfg->no_pockets &&
          (rc = jl_search_pockets(cfg, &geom, best, (int)cap, deadline, stop, check, check_ctx, info,
                                  &got, err)))
        goto done;
    }
    now = jl_time_now() - t0;
    if (improved) t_best = now;
    jl_trunk_progress pr = {0};
    pr.time_s = now;
    pr.best_count = best->count;
    pr.temperature = T;
    pr.chains_best = info->chains_best;
    pr.legalize_tried = info->legalize_tried;
    pr.legalize_legal = info->legalize_legal;
    for (int c = 0; c < count; ++c) {
      if (b.n[c] > pr.count) pr.count = b.n[c];
      pr.moves += b.moves[c];
      pr.relax_steps += b.steps[c];
    }
    if (progress) progress(progress_ctx, &pr);
    int want = 0;  /* JL_TRUNK_STOP_* + 1 */
    if (cfg->target_count > 0 && best->count >= cfg->target_count) want = JL_TRUNK_STOP_TARGET + 1;
    else if (jl_stop_requested(stop)) want = JL_TRUNK_STOP_SIGNAL + 1;
    else if (cfg->rounds > 0 && round >= cfg->rounds) want = JL_TRUNK_STOP_ROUNDS + 1;
    else if (deadline > 0.0 && jl_time_now() >= deadline) want = JL_TRUNK_STOP_TIME + 1;
    if (cfg->migrate) {
      int adopted = 0, started = 0;
      if ((rc = jl_search_migrate(cfg, best, jl_time_now() >= next_migration, want, check, check_ctx,
                                  &migrate_stop, &started, &adopted, info, err)))
        goto done;
      if (started) next_migration = jl_time_now() + cfg->migrate_s;
      if (adopted) t_best = jl_time_now() - t0;
      want = migrate_stop;
    }
    if (want) { stopped_by = want - 1; break; }
    /* share the best: lagging chains (and a few others) continue from it */
    if (best->count > 0) {
      for (int c = 0; c < count; ++c) {
        double u = jl_u01_from_u32(jl_rng_u32(&host_rng), jl_rng_u32(&host_rng));
        if (b.n[c] <= best->count - JL_ADOPT_LAG || !isfinite(b.energy[c]) || u < JL_ADOPT_P) {
          if ((rc = jl_block_batch_set(&b, c, best, err))) goto done;
          if (b.best_n[c] < best->count) b.best_n[c] = best->count;
        }
      }
    }
  }
finish:
  /* islands: a search leaves only on a migration that stops every rank */
  if (cfg->migrate && !migrate_stop) {
    int adopted = 0, started = 0;
    if ((rc = jl_search_migrate(cfg, best, 0, stopped_by + 1, check, check_ctx, &migrate_stop,
                                &started, &adopted, info, err)))
      goto done;
    if (adopted) t_best = jl_time_now() - t_enter;
  }
  info->best_count = best->count;
  info->time_s = jl_time_now() - t_enter;
  info->time_to_best_s = t_best;
  info->rounds = round;
  for (int c = 0; c < count; ++c) {
    info->moves += b.moves[c];
    info->accepted += b.accepted[c];
    for (int k = 0; k < JL_BMOVE_COUNT; ++k) {
      info->kind_moves[k] += b.kind_moves[(size_t)c * JL_BMOVE_COUNT + k];
      info->kind_accepted[k] += b.kind_accepted[(size_t)c * JL_BMOVE_COUNT + k];
    }
    info->relax_steps += b.steps[c];
  }
  info->n_points = npts;
  info->spacing = spacing;
  info->cell = cell;
  info->batch = count;
  info->stopped_by = stopped_by;
  snprintf(info->device, sizeof info->device, "%s", jl_device_kind_name(dev.kind));
  snprintf(info->device_name, sizeof info->device_name, "%s", dev.name);
  rc = JL_OK;
done:
  jl_trunk_geom_free(&geom);
  jl_block_packing_free(&alt);
  jl_block_packing_free(&tmp);
  jl_block_engine_free(&eng);
  jl_block_batch_free(&b);
  jl_surface_grid_free(&g);
  free(pts);
  return rc;
}
