#include "trunk_legalize.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "math3d.h"
#include "timer.h"
#include "trunk_baseline.h"

/* Wall pushes per block per sweep: a block in a corner meets up to three
 * walls, each push may uncover the next. */
#define JL_LEGALIZE_WALL_PUSHES 6
/* Sweeps at most, over all rounds: a packing that still oscillates after
 * this many is given up (the perturbed sedan fills took at most 800). */
#define JL_LEGALIZE_MAX_SWEEPS (64 * JL_LEGALIZE_SWEEPS)
/* Blocks between polls of the limits. */
#define JL_LEGALIZE_POLL 16

typedef struct jl_lg_state {
  const jl_trunk_geom *g;
  jl_block_packing *p;
  jl_obb *box;
  double *viol;            /* deepest violation seen for the block this sweep */
  uint8_t *act, *next, *moved;
  jl_cell_ref *cells;
  double cell, rad;
} jl_lg_state;

static void jl_lg_move(jl_lg_state *s, int i, const double dir[3], double amount) {
  for (int d = 0; d < 3; ++d) {
    s->box[i].c[d] += amount * dir[d];
    s->p->centre[3 * i + d] = s->box[i].c[d];
  }
  s->moved[i] = 1;
}

static void jl_cell_refs(jl_lg_state *s) {
  int n = s->p->count;
  for (int i = 0; i < n; ++i) {
    s->cells[i].id = i;
    for (int d = 0; d < 3; ++d) s->cells[i].key[d] = (int64_t)floor(s->box[i].c[d] / s->cell);
  }
  qsort(s->cells, (size_t)n, sizeof *s->cells, jl_cell_ref_cmp);
}

/* Block i: out of the walls, then every overlapping block pushed apart
 * from it. */
static void jl_lg_block(jl_lg_state *s, int i) {
  const jl_trunk_geom *g = s->g;
  /* push what is deeper than half the tolerance to a quarter of it: what
   * is left passes the check, and no gaps build up along a row */
  double tol = JL_LEGALIZE_PUSH_AT * g->tol, keep = JL_LEGALIZE_LEAVE * g->tol;
  for (int t = 0; t < JL_LEGALIZE_WALL_PUSHES; ++t) {
    double push[3];
    int tri = -1;
    double d = jl_trunk_box_surface_contact(g, &s->box[i], &tri, push);
    if (tri < 0 || d <= tol) break;
    s->viol[i] = fmax(s->viol[i], d);
    jl_lg_move(s, i, push, d - keep);
    s->next[i] = 1;
  }
  int n = s->p->count;
  int64_t key[3];
  for (int d = 0; d < 3; ++d) key[d] = (int64_t)floor(s->box[i].c[d] / s->cell);
  double r2 = 4.0 * s->rad * s->rad;
  for (int nb = 0; nb < 27; ++nb) {
    int64_t k[3] = {key[0] + nb / 9 - 1, key[1] + nb / 3 % 3 - 1, key[2] + nb % 3 - 1};
    for (int e = jl_cell_ref_find(s->cells, n, k); e < n && memcmp(s->cells[e].key, k, sizeof k) == 0; ++e) {
      int j = s->cells[e].id;
      if (j == i) continue;
      double dc[3];
      for (int d = 0; d < 3; ++d) dc[d] = s->box[j].c[d] - s->box[i].c[d];
      if (dc[0] * dc[0] + dc[1] * dc[1] + dc[2] * dc[2] >= r2) continue;
      double push[3], back[3];
      double d = jl_obb_contact(&s->box[i], &s->box[j], push);
      if (d <= tol) continue;
      for (int a = 0; a < 3; ++a) back[a] = -push[a];
      double amount = 0.5 * (d - keep);
      jl_lg_move(s, i, back, amount);
      jl_lg_move(s, j, push, amount);
      s->viol[i] = fmax(s->viol[i], d);
      s->viol[j] = fmax(s->viol[j], d);
      s->next[i] = s->next[j] = 1;
    }
  }
}

static void jl_lg_remove(jl_lg_state *s, int i) {
  jl_block_packing *p = s->p;
  int tail = p->count - i - 1;
  memmove(p->centre + 3 * i, p->centre + 3 * (i + 1), sizeof(double) * 3 * (size_t)tail);
  memmove(p->quat + 4 * i, p->quat + 4 * (i + 1), sizeof(double) * 4 * (size_t)tail);
  memmove(s->box + i, s->box + i + 1, sizeof *s->box * (size_t)tail);
  memmove(s->viol + i, s->viol + i + 1, sizeof(double) * (size_t)tail);
  memmove(s->act + i, s->act + i + 1, (size_t)tail);
  memmove(s->next + i, s->next + i + 1, (size_t)tail);
  memmove(s->moved + i, s->moved + i + 1, (size_t)tail);
  p->count--;
}

int jl_trunk_legalize(const jl_trunk_geom *g, jl_block_packing *p, int above, int from,
                      const jl_trunk_limits *lim, jl_legalize_info *info, jl_error *err) {
  memset(info, 0, sizeof *info);
  double since = jl_time_now();
  int n = p->count;
  if (n <= above) return JL_OK;
  if (from < 0) from = 0;
  jl_lg_state s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.p = p;
  size_t m = (size_t)(n > 0 ? n : 1);
  s.box = malloc(m * sizeof *s.box);
  s.viol = malloc(m * sizeof *s.viol);
  s.act = calloc(m, 1);
  s.next = calloc(m, 1);
  s.moved = calloc(m, 1);
  s.cells = malloc(m * sizeof *s.cells);
  int rc = JL_OK;
  if (!s.box || !s.viol || !s.act || !s.next || !s.moved || !s.cells) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory legalizing %d blocks", n);
    goto done;
  }
  s.rad = 0.5 * sqrt(g->block.x * g->block.x + g->block.y * g->block.y + g->block.z * g->block.z);
  s.cell = 2.0 * s.rad;
  for (int i = 0; i < n; ++i) {
    jl_obb_from_block(&g->block, p->centre + 3 * i, p->quat + 4 * i, &s.box[i]);
    s.act[i] = i >= from;
  }
  /* a block whose centre is outside cannot be pushed in through the wall */
  for (int i = p->count - 1; i >= from && p->count > above; --i) {
    if (i % JL_LEGALIZE_POLL == 0 && jl_trunk_limits_hit(lim, since)) { info->cut = 1; goto done; }
    const double *c = s.box[i].c;
    if (isfinite(c[0]) && isfinite(c[1]) && isfinite(c[2]) && jl_trunk_point_inside(g, c)) continue;
    jl_lg_remove(&s, i);
    info->dropped_outside++;
  }
  int window = 0;          /* sweeps since the last look at progress */
  double window_max = INFINITY;
  for (int sweep = 0; p->count > above && sweep < JL_LEGALIZE_MAX_SWEEPS; ++sweep) {
    if (jl_trunk_limits_hit(lim, since)) { info->cut = 1; break; }
    n = p->count;
    jl_cell_refs(&s);
    memset(s.next, 0, (size_t)n);
    for (int i = 0; i < n; ++i) s.viol[i] = 0.0;
    int any = 0;
    for (int i = 0; i < n; ++i) {
      if (!s.act[i]) continue;
      if (++any % JL_LEGALIZE_POLL == 0 && jl_trunk_limits_hit(lim, since)) { info->cut = 1; goto done; }
      jl_lg_block(&s, i);
    }
    info->sweeps++;
    int pending = 0;
    for (int i = 0; i < n; ++i) pending |= s.next[i];
    if (!pending) {
      /* nothing left to push among the blocks looked at: the exact check
       * decides, and names what the sweeps did not see */
      jl_trunk_report r;
      info->checks++;
      if ((rc = jl_trunk_check_packing_until(g, p, lim, &r, err))) goto done;
      if (!r.complete) { info->cut = 1; break; }
      if (r.legal) { info->legal = 1; break; }
      if (r.outside_blocks > 0 && r.outside_block >= 0) {
        jl_lg_remove(&s, r.outside_block);
        info->dropped_outside++;
        memset(s.act, 1, (size_t)p->count);
        continue;
      }
      int wake[3] = {r.surface_block, r.overlap_i, r.overlap_j};
      for (int k = 0; k < 3; ++k)
        if (wake[k] >= 0) s.next[wake[k]] = 1;
    }
    memcpy(s.act, s.next, (size_t)n);
    double deepest = 0.0;
    for (int i = 0; i < n; ++i) deepest = fmax(deepest, s.viol[i]);
    if (++window == JL_LEGALIZE_SWEEPS) {
      window = 0;
      if (deepest > JL_LEGALIZE_PROGRESS * window_max) {
        /* no progress: the deepest violator of the last sweep cannot fit */
        int worst = -1;
        for (int i = 0; i < n; ++i)
          if (s.act[i] && (worst < 0 || s.viol[i] > s.viol[worst])) worst = i;
        if (worst < 0 || n - 1 <= above) break;
        jl_lg_remove(&s, worst);
        info->dropped_stuck++;
        deepest = INFINITY;
      }
      window_max = deepest;
    }
  }
done:
  for (int i = 0; i < p->count && s.moved; ++i) info->moved += s.moved[i];
  free(s.box);
  free(s.viol);
  free(s.act);
  free(s.next);
  free(s.moved);
  free(s.cells);
  return rc;
}

int jl_trunk_straighten(const jl_block_size *b, jl_block_packing *p, int from, double max_deg) {
  /* the angle between R and P is at most max_deg when trace(R^T P) >= 1 + 2 cos(max_deg) */
  double min_trace = 1.0 + 2.0 * cos(max_deg * JL_PI / 180.0);
  int turned = 0;
  for (int i = from < 0 ? 0 : from; i < p->count; ++i) {
    jl_obb o;
    jl_obb_from_block(b, p->centre + 3 * i, p->quat + 4 * i, &o);
    double col[3][3] = {{0}};
    int used[3] = {0, 0, 0}, ok = 1;
    double tr = 0.0;
    for (int k = 0; k < 3 && ok; ++k) {  /* body axis k onto its nearest trunk axis */
      int best = -1;
      for (int d = 0; d < 3; ++d)
        if (!used[d] && (best < 0 || fabs(o.ax[k][d]) > fabs(o.ax[k][best]))) best = d;
      used[best] = 1;
      col[k][best] = o.ax[k][best] >= 0.0 ? 1.0 : -1.0;
      tr += fabs(o.ax[k][best]);
    }
    double det = col[0][0] * (col[1][1] * col[2][2] - col[1][2] * col[2][1]) -
                 col[0][1] * (col[1][0] * col[2][2] - col[1][2] * col[2][0]) +
                 col[0][2] * (col[1][0] * col[2][1] - col[1][1] * col[2][0]);
    if (!(tr >= min_trace) || det < 0.0 || tr >= 3.0) continue;  /* far, mirrored, or already aligned */
    jl_quat_from_axes(col, p->quat + 4 * i);
    turned++;
  }
  return turned;
}
