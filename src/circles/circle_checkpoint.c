#include "circle_checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circle_batch.h"
#include "circle_search.h"
#include "file_util.h"

/* Written in the host's byte order; a file from a host of the other order
 * shows this word reversed and is refused. */
#define JL_CHECKPOINT_ORDER 0x01020304u

/* The fixed part before the arrays. */
typedef struct jl_ck_header {
  char magic[8];
  uint32_t order, version;
  uint32_t n, count, elite_count, mode;
  uint64_t seed;
} jl_ck_header;

/* One pass over the file's fields in order: writes them (out), reads them
 * (in) or only counts the bytes (neither). Saving, loading and the size
 * check share it, so the three cannot disagree on the layout. */
typedef struct jl_ck_cursor {
  unsigned char *out;
  const unsigned char *in;
  size_t off;
} jl_ck_cursor;

static void jl_ck_field(jl_ck_cursor *c, void *p, size_t bytes) {
  if (c->out) memcpy(c->out + c->off, p, bytes);
  else if (c->in) memcpy(p, c->in + c->off, bytes);
  c->off += bytes;
}

static void jl_ck_walk(jl_ck_cursor *c, jl_ck_header *h, jl_circle_checkpoint *ck) {
  const size_t n = h->n, k = h->count, nc = n * k;
  jl_circle_batch *b = &ck->batch;
  jl_ck_field(c, h, sizeof *h);
  int64_t round = ck->round;
  int32_t first = ck->first, pad = 0;
  jl_ck_field(c, &round, sizeof round);
  jl_ck_field(c, &ck->restarts, 8);
  jl_ck_field(c, &ck->adoptions, 8);
  jl_ck_field(c, &ck->crossovers, 8);
  jl_ck_field(c, &ck->migrations, 8);
  jl_ck_field(c, &ck->elite_offers, 8);
  jl_ck_field(c, &ck->elite_crowded, 8);
  jl_ck_field(c, &ck->step_budget, 8);
  jl_ck_field(c, &first, 4);
  jl_ck_field(c, &pad, 4);
  jl_ck_field(c, &ck->elapsed_s, 8);
  jl_ck_field(c, &ck->t_best, 8);
  jl_ck_field(c, &ck->polish_iter_s, 8);
  jl_ck_field(c, &ck->launch_s, 8);
  jl_ck_field(c, &ck->polish_s, 8);
  jl_ck_field(c, &ck->best.R, 8);
  jl_ck_field(c, ck->host_rng.ctr, 16);
  jl_ck_field(c, ck->host_rng.key, 8);
  jl_ck_field(c, ck->host_rng.out, 16);
  jl_ck_field(c, &ck->host_rng.idx, 4);
  jl_ck_field(c, &pad, 4);
  ck->round = (long)round;
  ck->first = first;
  jl_ck_field(c, b->r, 8 * n);
  jl_ck_field(c, b->R, 8 * k);
  jl_ck_field(c, b->R_rec, 8 * k);
  jl_ck_field(c, b->Rt, 8 * k);
  jl_ck_field(c, ck->polished_R, 8 * k);
  jl_ck_field(c, b->rng_offset, 8 * k);
  jl_ck_field(c, b->steps, 8 * k);
  jl_ck_field(c, b->trials_done, 8 * k);
  jl_ck_field(c, b->accepted, 8 * k);
  jl_ck_field(c, b->stuck, 4 * k);
  jl_ck_field(c, b->need_start, k);
  unsigned char zeros[8] = {0};
  jl_ck_field(c, zeros, (8 - (5 * k) % 8) % 8);  /* the doubles below stay aligned */
  jl_ck_field(c, b->x, 8 * nc);
  jl_ck_field(c, b->y, 8 * nc);
  jl_ck_field(c, b->wx, 8 * nc);
  jl_ck_field(c, b->wy, 8 * nc);
  jl_ck_field(c, ck->best.x, 8 * n);
  jl_ck_field(c, ck->best.y, 8 * n);
  for (uint32_t e = 0; e < h->elite_count; ++e) {
    jl_circle_packing *pk = ck->elite ? &ck->elite[e] : NULL;
    jl_ck_field(c, pk ? &pk->R : NULL, 8);
    jl_ck_field(c, pk ? pk->x : NULL, 8 * n);
    jl_ck_field(c, pk ? pk->y : NULL, 8 * n);
  }
}

static size_t jl_ck_size(const jl_ck_header *h) {
  jl_ck_header hh = *h;
  jl_circle_checkpoint none;
  memset(&none, 0, sizeof none);
  jl_ck_cursor c = {0};
  jl_ck_walk(&c, &hh, &none);
  return c.off;
}

int jl_circle_checkpoint_save(const char *path, const jl_circle_checkpoint *ck, jl_error *err) {
  jl_ck_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, JL_CHECKPOINT_MAGIC, 8);
  h.order = JL_CHECKPOINT_ORDER;
  h.version = JL_CHECKPOINT_VERSION;
  h.n = (uint32_t)ck->batch.n;
  h.count = (uint32_t)ck->batch.count;
  h.elite_count = (uint32_t)ck->elite_count;
  h.mode = (uint32_t)ck->mode;
  h.seed = ck->seed;
  size_t size = jl_ck_size(&h);
  unsigned char *buf = malloc(size);
  if (!buf) return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for the checkpoint", path);
  jl_circle_checkpoint copy = *ck;  /* the walk writes its scalars back */
  jl_ck_cursor c = {.out = buf};
  jl_ck_walk(&c, &h, &copy);
  int rc = jl_file_write_atomic(path, buf, size, err);
  free(buf);
  return rc;
}

void jl_circle_checkpoint_free(jl_circle_checkpoint *ck) {
  if (ck->owned) {
    jl_circle_batch_free(&ck->batch);
    free(ck->polished_R);
    jl_circle_packing_free(&ck->best);
    for (int e = 0; ck->elite && e < ck->elite_count; ++e) jl_circle_packing_free(&ck->elite[e]);
    free(ck->elite);
  }
  memset(ck, 0, sizeof *ck);
}

static int jl_ck_finite(const double *v, size_t len) {
  for (size_t i = 0; i < len; ++i)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* A packing the file claims legal with radius R: legal it must be, and R
 * its own (recomputed from the centres). */
static int jl_ck_packing_ok(jl_circle_packing *pk, const jl_circle_problem *prob,
                            const char *path, const char *what, jl_error *err) {
  double R = pk->R;
  for (int i = 0; i < pk->n; ++i) pk->r[i] = prob->radii[i];
  if (!jl_ck_finite(pk->x, (size_t)pk->n) || !jl_ck_finite(pk->y, (size_t)pk->n))
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: a centre is not a finite number", path, what);
  jl_circle_packing_update_R(pk);
  if (pk->R != R)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: R %.17g is not its circles' (%.17g)", path, what,
                        R, pk->R);
  jl_circle_check chk;
  jl_circle_check_packing(pk, JL_LEGAL_REL_TOL, &chk);
  if (!chk.legal) return jl_error_set(err, JL_ERR_INPUT, "%s: %s: not a legal packing", path, what);
  return JL_OK;
}

int jl_circle_checkpoint_load(const char *path, const jl_circle_problem *prob,
                              jl_circle_checkpoint *ck, jl_error *err) {
  memset(ck, 0, sizeof *ck);
  char *data = NULL;
  size_t len = 0;
  int rc = jl_file_read_all(path, &data, &len, err);
  if (rc != JL_OK) return rc;
  jl_ck_header h;
  if (len < sizeof h) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: not a jostle checkpoint (%zu bytes)", path, len);
    goto fail;
  }
  memcpy(&h, data, sizeof h);
  if (memcmp(h.magic, JL_CHECKPOINT_MAGIC, 8) != 0) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: not a jostle checkpoint (no %s at its start)", path,
                      JL_CHECKPOINT_MAGIC);
    goto fail;
  }
  if (h.order != JL_CHECKPOINT_ORDER || h.version != JL_CHECKPOINT_VERSION) {
    rc = jl_error_set(err, JL_ERR_INPUT,
                      "%s: checkpoint version or byte order this build does not read (version %u)",
                      path, h.version);
    goto fail;
  }
  if ((int)h.n != prob->n || h.n < 2) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: n: the checkpoint holds %u circles, the instance %s %d",
                      path, h.n, prob->name, prob->n);
    goto fail;
  }
  if (h.count < 1 || h.count > JL_CHECKPOINT_MAX_BATCH || h.elite_count > JL_ELITE_MAX ||
      h.mode > JL_MODE_INSTANCES) {
    rc = jl_error_set(err, JL_ERR_INPUT,
                      "%s: header: candidates %u (1..%d), elite %u (0..%d), mode %u (0..%d)", path,
                      h.count, JL_CHECKPOINT_MAX_BATCH, h.elite_count, JL_ELITE_MAX, h.mode,
                      (int)JL_MODE_INSTANCES);
    goto fail;
  }
  /* the size the header implies, before any allocation it would drive */
  size_t want = jl_ck_size(&h);
  if (len != want) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: %zu bytes, its header says %zu (cut short or padded)",
                      path, len, want);
    goto fail;
  }
  const int n = (int)h.n, count = (int)h.count;
  ck->owned = 1;
  ck->path = path;
  ck->seed = h.seed;
  ck->mode = (int)h.mode;
  ck->elite_count = (int)h.elite_count;
  double *r_file = calloc((size_t)n, sizeof(double));  /* read over below */
  rc = r_file ? jl_circle_batch_alloc(&ck->batch, n, count, r_file, err)
              : jl_error_set(err, JL_ERR_NOMEM, "out of memory");
  free(r_file);
  if (rc != JL_OK) goto fail;
  ck->polished_R = calloc((size_t)count, sizeof(double));
  ck->elite = calloc((size_t)(ck->elite_count > 0 ? ck->elite_count : 1), sizeof *ck->elite);
  if (!ck->polished_R || !ck->elite) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if ((rc = jl_circle_packing_init(&ck->best, n, err)) != JL_OK) goto fail;
  for (int e = 0; e < ck->elite_count; ++e)
    if ((rc = jl_circle_packing_init(&ck->elite[e], n, err)) != JL_OK) goto fail;
  jl_ck_cursor c = {.in = (const unsigned char *)data};
  jl_ck_walk(&c, &h, ck);
  free(data);
  data = NULL;

  /* the radii, before the packings that use them: the batch's, ascending */
  jl_circle_sorted s = {0};
  if ((rc = jl_circle_sorted_init(&s, prob, err)) != JL_OK) goto fail;
  int same = memcmp(s.r, ck->batch.r, sizeof(double) * (size_t)n) == 0;
  jl_circle_sorted_free(&s);
  if (!same) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: radii: not those of the instance %s", path, prob->name);
    goto fail;
  }
  const jl_circle_batch *b = &ck->batch;
  size_t nc = (size_t)n * (size_t)count;
  if (!jl_ck_finite(b->x, nc) || !jl_ck_finite(b->y, nc) || !jl_ck_finite(b->wx, nc) ||
      !jl_ck_finite(b->wy, nc) || !jl_ck_finite(b->R, (size_t)count) ||
      !jl_ck_finite(b->R_rec, (size_t)count) || !jl_ck_finite(b->Rt, (size_t)count) ||
      !jl_ck_finite(ck->polished_R, (size_t)count)) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: candidates: a number that is not finite", path);
    goto fail;
  }
  for (int k = 0; k < count; ++k)
    if (b->need_start[k] > JL_START_PLACED || b->R[k] < 0.0 || b->R_rec[k] < 0.0 || b->Rt[k] < 0.0) {
      rc = jl_error_set(err, JL_ERR_INPUT,
                        "%s: candidate %d: need_start must be 0, 1 or 2 and R, R_rec, Rt >= 0", path, k);
      goto fail;
    }
  if (!(ck->elapsed_s >= 0.0) || !isfinite(ck->elapsed_s) || !isfinite(ck->t_best) ||
      !(ck->polish_iter_s >= 0.0) || !isfinite(ck->polish_iter_s) || !(ck->launch_s >= 0.0) ||
      !isfinite(ck->launch_s) || !(ck->polish_s >= 0.0) || !isfinite(ck->polish_s) || ck->round < 0 ||
      ck->first < 0 || ck->first >= count || ck->host_rng.idx > 4 || !(ck->best.R >= 0.0)) {
    rc = jl_error_set(err, JL_ERR_INPUT,
                      "%s: run: elapsed, best, launch or polish time, rounds, first candidate or host "
                      "stream out of range",
                      path);
    goto fail;
  }
  if (ck->best.R > 0.0 && (rc = jl_ck_packing_ok(&ck->best, prob, path, "best", err)) != JL_OK)
    goto fail;
  if (ck->best.R == 0.0) {
    for (int i = 0; i < n; ++i) ck->best.r[i] = prob->radii[i];
  }
  for (int e = 0; e < ck->elite_count; ++e) {
    char what[32];
    snprintf(what, sizeof what, "elite[%d]", e);
    if ((rc = jl_ck_packing_ok(&ck->elite[e], prob, path, what, err)) != JL_OK) goto fail;
    if (e > 0 && ck->elite[e].R < ck->elite[e - 1].R) {
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: elite: R must ascend", path);
      goto fail;
    }
  }
  return JL_OK;
fail:
  free(data);
  jl_circle_checkpoint_free(ck);
  return rc;
}
