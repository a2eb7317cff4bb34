/* Collision detection on one thread team: broad phase, then the narrow
 * phase over the sorted candidate pairs, each member on a contiguous run of
 * pairs into its own buffer; the buffers are joined in member order, so the
 * output is the sequential one whatever the thread count. */
#include "collide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grid_pairs.h"
#include "narrow_phase.h"
#include "parallel.h"
#include "team.h"

typedef struct jl_collide_job {
  const jl_bodies *bodies;
  jl_broad_phase *bp;
  jl_contacts *local;      /* per member */
  jl_contacts *out;
  double margin;
  jl_error *err;
  int rc;                  /* tid 0's verdict, read by all after a barrier */
  int failed[JL_MAX_THREADS];
  int base[JL_MAX_THREADS]; /* where each member's contacts go */
} jl_collide_job;

/* The narrow phase over member t's run of the candidate pairs, into its own buffer. */
static void jl_collide_chunk(jl_collide_job *j, int t, int nt) {
  const jl_bodies *bodies = j->bodies;
  jl_contacts *out = &j->local[t];
  out->count = 0;
  j->failed[t] = 0;
  long lo, hi;
  jl_parallel_chunk(j->bp->pair_count, t, nt, &lo, &hi);
  /* a kept list: only the pairs the broad phase's tests pass on the boxes of now */
  const double *live = j->bp->keep_skin > 0.0 ? j->bp->box_now : NULL;
  for (long p = lo; p < hi; ++p) {
    int u = j->bp->pair_a[p], v = j->bp->pair_b[p];
    if (live && !jl_gp_live(bodies->shape, bodies->is_static, bodies->pos, bodies->size, live,
                            j->margin, u, v))
      continue;
    /* Static body as b; otherwise the lower index is a. */
    int a = u, b = v;
    if (bodies->is_static[u] && !bodies->is_static[v]) {
      a = v;
      b = u;
    }
    jl_shape_pose pa = jl_body_pose(bodies, a), pb = jl_body_pose(bodies, b);
    jl_manifold m;
    if (jl_narrow_collide(&pa, &pb, j->margin, &m) == 0) continue;
    if (out->count + m.count > out->capacity) {
      int cap = out->capacity * 2;
      if (cap < out->count + m.count) cap = out->count + m.count;
      if (jl_contacts_reserve(out, cap, NULL) != JL_OK) {
        j->failed[t] = 1;
        return;
      }
    }
    for (int k = 0; k < m.count; ++k) {
      int c = out->count++;
      out->body_a[c] = a;
      out->body_b[c] = b;
      out->point[3 * c] = m.point[k].x;
      out->point[3 * c + 1] = m.point[k].y;
      out->point[3 * c + 2] = m.point[k].z;
      out->normal[3 * c] = m.normal.x;
      out->normal[3 * c + 1] = m.normal.y;
      out->normal[3 * c + 2] = m.normal.z;
      out->gap[c] = m.gap[k];
      out->key[c] = JL_CONTACT_KEY(u, v, (unsigned)m.feature[k]);
    }
  }
}

/* tid 0: where each member's contacts go, room for them all. */
static int jl_collide_offsets(jl_collide_job *j, int nt) {
  long total = 0;
  for (int t = 0; t < nt; ++t) {
    if (j->failed[t]) return jl_error_set(j->err, JL_ERR_NOMEM, "collide: out of memory for contacts");
    j->base[t] = (int)total;
    total += j->local[t].count;
    if (total > 0x7fffffffL) return jl_error_set(j->err, JL_ERR_NOMEM, "collide: too many contacts");
  }
  int rc = jl_contacts_reserve(j->out, (int)total, j->err);
  if (rc != JL_OK) return rc;
  j->out->count = (int)total;
  return JL_OK;
}

/* Broad phase, narrow phase, and each member's contacts copied to their
 * place: one team, barriers between. */
static void jl_collide_team(void *ctx, int tid, jl_team *team) {
  jl_collide_job *j = ctx;
  int nt = team->size;
  int rc = jl_broad_phase_team(j->bp, tid, team, tid == 0 ? j->err : NULL);
  if (rc != JL_OK) {
    if (tid == 0) j->rc = rc;
    return;
  }
  if (j->bp->pair_count == 0) return;
  jl_collide_chunk(j, tid, nt);
  jl_team_sync(team);
  if (tid == 0) j->rc = jl_collide_offsets(j, nt);
  jl_team_sync(team);
  if (j->rc != JL_OK) return;
  const jl_contacts *l = &j->local[tid];
  jl_contacts *out = j->out;
  size_t c = (size_t)l->count, o = (size_t)j->base[tid];
  if (c == 0) return;
  memcpy(out->body_a + o, l->body_a, c * sizeof(int));
  memcpy(out->body_b + o, l->body_b, c * sizeof(int));
  memcpy(out->point + 3 * o, l->point, 3 * c * sizeof(double));
  memcpy(out->normal + 3 * o, l->normal, 3 * c * sizeof(double));
  memcpy(out->gap + o, l->gap, c * sizeof(double));
  memcpy(out->key + o, l->key, c * sizeof(uint64_t));
}

int jl_collide(const jl_bodies *bodies, double margin, int threads, jl_broad_phase *bp,
               jl_contacts *out, jl_error *err) {
  out->count = 0;
  if (bodies->count > JL_MAX_BODIES_KEYED)
    return jl_error_set(err, JL_ERR_INPUT, "too many bodies for contact keys: %d (at most %d)",
                        bodies->count, JL_MAX_BODIES_KEYED);
  int nt = jl_broad_phase_threads(threads, bodies->count);
  int rc = jl_broad_phase_prepare(bodies, margin, nt, bp, err);
  if (rc != JL_OK) return rc;
  if (bp->contact_local_count < nt) {
    jl_contacts *q = realloc(bp->contact_local, (size_t)nt * sizeof *q);
    if (!q) return jl_error_set(err, JL_ERR_NOMEM, "collide: out of memory");
    bp->contact_local = q;
    for (int t = bp->contact_local_count; t < nt; ++t) {
      if (jl_contacts_init(&q[t], 1024, err) != JL_OK) {
        bp->contact_local_count = t;
        return err ? err->code : JL_ERR_NOMEM;
      }
    }
    bp->contact_local_count = nt;
  }
  jl_collide_job job = {.bodies = bodies, .bp = bp, .local = bp->contact_local, .out = out,
                        .margin = margin, .err = err, .rc = JL_OK};
  rc = jl_team_pool_run(bp->pool, nt, jl_collide_team, &job, err);
  if (rc == JL_OK) rc = job.rc;
  if (rc != JL_OK) out->count = 0;
  return rc;
}
