/* Collision detection: broad phase, then the narrow phase over the sorted
 * candidate pairs, each thread on a contiguous run of pairs into its own
 * buffer; the buffers are joined in thread order, so the output is the
 * sequential one whatever the thread count. */
#include "collide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "narrow_phase.h"
#include "parallel.h"

/* Narrow-phase pairs per thread below which fewer threads are used. */
#define JL_COLLIDE_MIN_PER_THREAD 512

typedef struct jl_collide_job {
  const jl_bodies *bodies;
  const jl_broad_phase *bp;
  jl_contacts *local;
  double margin;
  int *failed;
} jl_collide_job;

static void jl_collide_chunk(void *ctx, int t, int nt) {
  jl_collide_job *j = ctx;
  const jl_bodies *bodies = j->bodies;
  jl_contacts *out = &j->local[t];
  out->count = 0;
  j->failed[t] = 0;
  long lo, hi;
  jl_parallel_chunk(j->bp->pair_count, t, nt, &lo, &hi);
  for (long p = lo; p < hi; ++p) {
    int u = j->bp->pair_a[p], v = j->bp->pair_b[p];
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

int jl_collide(const jl_bodies *bodies, double margin, int threads, jl_broad_phase *bp,
               jl_contacts *out, jl_error *err) {
  out->count = 0;
  if (bodies->count > JL_MAX_BODIES_KEYED)
    return jl_error_set(err, JL_ERR_INPUT, "too many bodies for contact keys: %d (at most %d)",
                        bodies->count, JL_MAX_BODIES_KEYED);
  int rc = jl_broad_phase_run(bodies, margin, threads, bp, err);
  if (rc != JL_OK) return rc;
  if (bp->pair_count == 0) return JL_OK;
  int nt = jl_parallel_threads(threads, bp->pair_count, JL_COLLIDE_MIN_PER_THREAD);
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
  int failed[JL_MAX_THREADS];
  jl_collide_job job = {bodies, bp, bp->contact_local, margin, failed};
  jl_parallel_run(nt, jl_collide_chunk, &job);
  long total = 0;
  for (int t = 0; t < nt; ++t) {
    if (failed[t]) return jl_error_set(err, JL_ERR_NOMEM, "collide: out of memory for contacts");
    total += job.local[t].count;
  }
  if (total > 0x7fffffffL) return jl_error_set(err, JL_ERR_NOMEM, "collide: too many contacts");
  rc = jl_contacts_reserve(out, (int)total, err);
  if (rc != JL_OK) return rc;
  int o = 0;
  for (int t = 0; t < nt; ++t) {
    const jl_contacts *l = &job.local[t];
    size_t c = (size_t)l->count;
    if (c == 0) continue;
    memcpy(out->body_a + o, l->body_a, c * sizeof(int));
    memcpy(out->body_b + o, l->body_b, c * sizeof(int));
    memcpy(out->point + 3 * (size_t)o, l->point, 3 * c * sizeof(double));
    memcpy(out->normal + 3 * (size_t)o, l->normal, 3 * c * sizeof(double));
    memcpy(out->gap + o, l->gap, c * sizeof(double));
    memcpy(out->key + o, l->key, c * sizeof(uint64_t));
    o += l->count;
  }
  out->count = o;
  return JL_OK;
}
