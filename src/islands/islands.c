#include "islands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef JL_HAVE_MPI
#include <mpi.h>
#endif

/* The variables MPI launchers set in every rank: Open MPI's mpirun, the PMI
 * of MPICH's hydra and of Slurm's srun, and PMIx. */
int jl_islands_launched(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
  for (size_t k = 0; k < sizeof vars / sizeof vars[0]; ++k) {
    const char *v = getenv(vars[k]);
    if (v && *v) return atoi(v);
  }
  /* srun with PMIx sets the rank but not always the size */
  if (getenv("PMIX_RANK")) return 2;
  return 0;
}

int jl_launcher_ranks(void) { return jl_islands_launched(); }

int jl_islands_threads(const jl_islands *isl, int *bound) {
  if (bound) *bound = 0;
  if (isl->size <= 1 && !isl->mpi) return 0;
  int share = jl_cpu_count_online() / (isl->local_size > 0 ? isl->local_size : 1);
  if (share < 1) share = 1;
  int allowed = jl_cpu_count();
  if (allowed < share) {
    if (bound) *bound = 1;
    return allowed;
  }
  return share;
}

int jl_islands_init(jl_islands *isl, jl_error *err) {
  memset(isl, 0, sizeof *isl);
  isl->size = 1;
  isl->local_size = 1;
  int launched = jl_islands_launched();
#ifdef JL_HAVE_MPI
  if (launched >= 1) {
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      return jl_error_set(err, JL_ERR_DEVICE, "MPI_Init_thread failed");
    isl->mpi = 1;
    /* errors come back as codes, so a rank reports them instead of aborting the job */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &isl->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &isl->size);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, isl->rank, MPI_INFO_NULL,
                            &node) == MPI_SUCCESS) {
      MPI_Comm_rank(node, &isl->local_rank);
      MPI_Comm_size(node, &isl->local_size);
      MPI_Comm_free(&node);
    }
  }
#else
  if (launched > 1)
    return jl_error_set(err, JL_ERR_INPUT,
                        "started by an MPI launcher with %d ranks, but this jostle was built "
                        "without MPI (meson -Dmpi=enabled, libopenmpi-dev): the ranks would "
                        "run alone and write the same files",
                        launched);
#endif
  return JL_OK;
}

void jl_islands_free(jl_islands *isl) {
#ifdef JL_HAVE_MPI
  /* a run that ends on an error may leave an exchange in flight */
  if (isl->in_flight && isl->request) MPI_Wait((MPI_Request *)isl->request, MPI_STATUS_IGNORE);
#endif
  isl->in_flight = 0;
  free(isl->request);
  isl->request = NULL;
  if (isl->blocks_in)
    for (int k = 0; k < isl->size; ++k) jl_block_packing_free(&isl->blocks_in[k]);
  free(isl->blocks_in);
  isl->blocks_in = NULL;
  if (isl->incoming)
    for (int k = 0; k < isl->incoming_cap; ++k) jl_circle_packing_free(&isl->incoming[k]);
  free(isl->incoming);
  free(isl->slots);
  isl->incoming = NULL;
  isl->slots = NULL;
  isl->incoming_cap = 0;
}

void jl_islands_finalize(jl_islands *isl) {
  jl_islands_free(isl);
#ifdef JL_HAVE_MPI
  if (isl->mpi) MPI_Finalize();
#endif
  isl->mpi = 0;
}

uint64_t jl_islands_seed(uint64_t seed, int rank) {
  if (rank == 0) return seed;
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)rank;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double jl_islands_migrate_default(int n) {
  double s = n / 10.0;
  return s < JL_ISLANDS_MIGRATE_MIN_S ? JL_ISLANDS_MIGRATE_MIN_S
         : s > JL_ISLANDS_MIGRATE_MAX_S ? JL_ISLANDS_MIGRATE_MAX_S : s;
}

int jl_islands_all_ok(jl_islands *isl, int ok) {
#ifdef JL_HAVE_MPI
  if (isl->mpi && isl->size > 1) {
    int all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD) != MPI_SUCCESS) return 0;
    return all;
  }
#else
  (void)isl;
#endif
  return ok;
}

/* ---- the exchange: one allgather of fixed-size slots, started and polled ---- */

/* A slot: this header, then the job's packings. */
typedef struct jl_slot_head {
  int32_t want, failed, count, pad;
  char msg[JL_ISLANDS_MSG];
} jl_slot_head;

static unsigned char *jl_islands_send(jl_islands *isl) {
  return isl->slots + (size_t)isl->size * isl->slot_bytes;
}

static int jl_islands_alloc(jl_islands *isl, size_t slot_bytes, jl_error *err) {
  isl->slot_bytes = slot_bytes;
  isl->slots = calloc((size_t)isl->size + 1, slot_bytes);
#ifdef JL_HAVE_MPI
  isl->request = calloc(1, sizeof(MPI_Request));
#else
  isl->request = calloc(1, 1);
#endif
  if (!isl->slots || !isl->request)
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the islands' exchange");
  return JL_OK;
}

static void jl_islands_head(jl_islands *isl, int want, int count) {
  jl_slot_head h;
  memset(&h, 0, sizeof h);
  h.want = want;
  h.failed = isl->failed;
  h.count = count;
  snprintf(h.msg, sizeof h.msg, "%s", isl->failed_msg);
  memcpy(jl_islands_send(isl), &h, sizeof h);
}

static jl_slot_head jl_islands_head_of(const jl_islands *isl, int r) {
  jl_slot_head h;
  memcpy(&h, isl->slots + (size_t)r * isl->slot_bytes, sizeof h);
  return h;
}

/* Starts the allgather of the send slot (packed by the caller). */
static int jl_islands_start(jl_islands *isl, jl_error *err) {
#ifdef JL_HAVE_MPI
  if (isl->mpi && isl->size > 1) {
    int rc = MPI_Iallgather(jl_islands_send(isl), (int)isl->slot_bytes, MPI_BYTE, isl->slots,
                            (int)isl->slot_bytes, MPI_BYTE, MPI_COMM_WORLD,
                            (MPI_Request *)isl->request);
    if (rc != MPI_SUCCESS)
      return jl_error_set(err, JL_ERR_DEVICE, "MPI_Iallgather of the migration failed (code %d)", rc);
    isl->in_flight = 1;
    return JL_OK;
  }
#endif
  (void)err;
  memcpy(isl->slots, jl_islands_send(isl), isl->slot_bytes);
  isl->in_flight = 1;
  return JL_OK;
}

/* *done = 1 once the exchange in flight has completed (wait: block for it). */
static int jl_islands_poll(jl_islands *isl, int wait, int *done, jl_error *err) {
  *done = 1;
#ifdef JL_HAVE_MPI
  if (isl->mpi && isl->size > 1) {
    int rc, flag = 0;
    if (wait) {
      rc = MPI_Wait((MPI_Request *)isl->request, MPI_STATUS_IGNORE);
      flag = 1;
    } else {
      rc = MPI_Test((MPI_Request *)isl->request, &flag, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS)
      return jl_error_set(err, JL_ERR_DEVICE, "the migration's allgather failed (code %d)", rc);
    *done = flag;
  }
#else
  (void)wait;
#endif
  (void)err;
  if (*done) isl->in_flight = 0;
  return JL_OK;
}

/* The verdict of a completed exchange: the lowest rank's stop wish, or stop
 * when every rank has failed. */
static int jl_islands_verdict(const jl_islands *isl) {
  int alive = 0;
  for (int r = 0; r < isl->size; ++r) {
    jl_slot_head h = jl_islands_head_of(isl, r);
    if (h.want) return h.want;
    alive += !h.failed;
  }
  return alive ? 0 : JL_STOP_SIGNAL + 1;
}

/* One hook call, for either job: starts an exchange when due or wanted
 * (pack fills the send slot), and when one completes unpacks it and
 * returns the verdict. A search that wants to stop waits, and starts a new
 * exchange carrying its wish when the one it waited for had none. */
static int jl_islands_run(jl_islands *isl, jl_migration_step *st, void (*pack)(jl_islands *, void *, int),
                          void (*unpack)(jl_islands *, void *), void *arg, jl_error *err) {
  st->started = st->completed = st->stop = 0;
  int due = st->due;
  for (;;) {
    if (!isl->in_flight) {
      if (!due && !st->want_stop) return JL_OK;
      pack(isl, arg, st->want_stop);
      int rc = jl_islands_start(isl, err);
      if (rc != JL_OK) return rc;
      st->started++;
      due = 0;
    }
    int done = 0;
    int rc = jl_islands_poll(isl, st->blocking || st->want_stop, &done, err);
    if (rc != JL_OK || !done) return rc;
    st->completed++;
    unpack(isl, arg);
    st->stop = jl_islands_verdict(isl);
    if (st->stop || !st->want_stop) return JL_OK;
  }
}

/* ---- circles: up to JL_ISLANDS_OFFER packings per rank (R, x[n], y[n]) ---- */

int jl_islands_circles_begin(jl_islands *isl, const jl_circle_problem *prob, jl_error *err) {
  isl->prob = prob;
  int rc = jl_islands_alloc(isl, sizeof(jl_slot_head) + (size_t)JL_ISLANDS_OFFER *
                                                            (1 + 2 * (size_t)prob->n) * sizeof(double),
                            err);
  if (rc != JL_OK) return rc;
  isl->incoming_cap = (isl->size - 1) * JL_ISLANDS_OFFER;
  if (isl->incoming_cap > 0 && !(isl->incoming = calloc((size_t)isl->incoming_cap, sizeof *isl->incoming)))
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the islands' exchange");
  for (int k = 0; k < isl->incoming_cap; ++k)
    if ((rc = jl_circle_packing_init(&isl->incoming[k], prob->n, err)) != JL_OK) return rc;
  return JL_OK;
}

static void jl_islands_circles_pack(jl_islands *isl, void *arg, int want) {
  const jl_circle_migration *m = arg;
  const int n = isl->prob->n;
  int count = m->offer_count < JL_ISLANDS_OFFER ? m->offer_count : JL_ISLANDS_OFFER;
  jl_islands_head(isl, want, count);
  double *d = (double *)(jl_islands_send(isl) + sizeof(jl_slot_head));
  for (int k = 0; k < count; ++k) {
    const jl_circle_packing *pk = &m->offer[k];
    *d++ = pk->R;
    memcpy(d, pk->x, (size_t)n * sizeof(double));
    d += n;
    memcpy(d, pk->y, (size_t)n * sizeof(double));
    d += n;
  }
}

static void jl_islands_circles_unpack(jl_islands *isl, void *arg) {
  jl_circle_migration *m = arg;
  const int n = isl->prob->n;
  m->incoming = isl->incoming;
  m->incoming_count = 0;
  for (int r = 0; r < isl->size; ++r) {
    jl_slot_head h = jl_islands_head_of(isl, r);
    if (r == isl->rank) continue;
    const double *q = (const double *)(isl->slots + (size_t)r * isl->slot_bytes + sizeof h);
    for (int k = 0; k < h.count && k < JL_ISLANDS_OFFER && m->incoming_count < isl->incoming_cap; ++k) {
      jl_circle_packing *pk = &isl->incoming[m->incoming_count++];
      pk->R = *q++;
      memcpy(pk->x, q, (size_t)n * sizeof(double));
      q += n;
      memcpy(pk->y, q, (size_t)n * sizeof(double));
      q += n;
      memcpy(pk->r, isl->prob->radii, (size_t)n * sizeof(double));
    }
  }
}

int jl_islands_circle_migrate(void *ctx, jl_circle_migration *m, jl_error *err) {
  m->incoming_count = 0;
  return jl_islands_run(ctx, &m->step, jl_islands_circles_pack, jl_islands_circles_unpack, m, err);
}

int jl_islands_circles_idle(jl_islands *isl, const char *msg, jl_error *err) {
  isl->failed = 1;
  snprintf(isl->failed_msg, sizeof isl->failed_msg, "%s", msg);
  for (;;) {
    jl_circle_migration m = {.step = {.due = 1, .blocking = 1}};
    int rc = jl_islands_circle_migrate(isl, &m, err);
    if (rc != JL_OK || m.step.stop) return rc;
  }
}

int jl_islands_circles_collect(jl_islands *isl, jl_circle_packing *best, jl_error *err) {
  jl_circle_migration m = {.step = {.want_stop = 1, .blocking = 1}, .offer = best,
                           .offer_count = best->R > 0.0};
  int rc = jl_islands_circle_migrate(isl, &m, err);
  if (rc != JL_OK || isl->rank != 0) return rc;
  for (int k = 0; k < m.incoming_count; ++k) {
    const jl_circle_packing *pk = &m.incoming[k];
    jl_circle_check chk;
    jl_circle_check_packing(pk, JL_LEGAL_REL_TOL, &chk);
    if (chk.legal && (best->R <= 0.0 || pk->R < best->R))
      if ((rc = jl_circle_packing_copy(best, pk, err)) != JL_OK) return rc;
  }
  return JL_OK;
}

/* ---- trunks: one packing per rank, up to cap blocks (centre, quaternion) ---- */

int jl_islands_trunk_begin(jl_islands *isl, int cap, jl_error *err) {
  isl->cap = cap;
  int rc = jl_islands_alloc(isl, sizeof(jl_slot_head) + (size_t)cap * 7 * sizeof(double), err);
  if (rc != JL_OK) return rc;
  if (!(isl->blocks_in = calloc((size_t)isl->size, sizeof *isl->blocks_in)))
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the islands' exchange");
  for (int k = 0; k < isl->size; ++k)
    if ((rc = jl_block_packing_init(&isl->blocks_in[k], cap, err)) != JL_OK) return rc;
  return JL_OK;
}

static void jl_trunk_pack(jl_islands *isl, void *arg, int want) {
  const jl_trunk_migration *m = arg;
  const jl_block_packing *p = m->offer;
  int count = p ? (p->count < isl->cap ? p->count : isl->cap) : 0;
  jl_islands_head(isl, want, count);
  double *d = (double *)(jl_islands_send(isl) + sizeof(jl_slot_head));
  for (int i = 0; i < count; ++i) {
    memcpy(d, p->centre + 3 * i, 3 * sizeof(double));
    memcpy(d + 3, p->quat + 4 * i, 4 * sizeof(double));
    d += 7;
  }
}

static void jl_trunk_unpack(jl_islands *isl, void *arg) {
  jl_trunk_migration *m = arg;
  m->incoming = isl->blocks_in;
  m->incoming_count = 0;
  for (int r = 0; r < isl->size; ++r) {
    jl_slot_head h = jl_islands_head_of(isl, r);
    if (r == isl->rank || h.count <= 0) continue;
    jl_block_packing *q = &isl->blocks_in[m->incoming_count++];
    const double *e = (const double *)(isl->slots + (size_t)r * isl->slot_bytes + sizeof h);
    q->count = h.count < isl->cap ? h.count : isl->cap;
    for (int i = 0; i < q->count; ++i) {
      memcpy(q->centre + 3 * i, e, 3 * sizeof(double));
      memcpy(q->quat + 4 * i, e + 3, 4 * sizeof(double));
      e += 7;
    }
  }
}

int jl_islands_trunk_migrate(void *ctx, jl_trunk_migration *m, jl_error *err) {
  m->incoming_count = 0;
  return jl_islands_run(ctx, &m->step, jl_trunk_pack, jl_trunk_unpack, m, err);
}

int jl_islands_trunk_until_stop(jl_islands *isl, int want, jl_error *err) {
  for (;;) {
    jl_trunk_migration m = {.step = {.due = 1, .want_stop = want, .blocking = 1}};
    int rc = jl_islands_trunk_migrate(isl, &m, err);
    if (rc != JL_OK || m.step.stop) return rc;
  }
}

int jl_islands_trunk_collect(jl_islands *isl, jl_block_packing *best, jl_trunk_check_fn check,
                             void *check_ctx, jl_error *err) {
  jl_trunk_migration m = {.step = {.want_stop = 1, .blocking = 1}, .offer = best};
  int rc = jl_islands_trunk_migrate(isl, &m, err);
  if (rc != JL_OK || isl->rank != 0) return rc;
  /* the incoming packings are in rank order: of equal counts the lowest rank's */
  for (int k = 0; k < m.incoming_count; ++k) {
    const jl_block_packing *q = &m.incoming[k];
    double worst = 0.0;
    if (q->count > best->count && check(check_ctx, q, &worst) &&
        (rc = jl_block_packing_copy(best, q, err)) != JL_OK)
      return rc;
  }
  return JL_OK;
}

int jl_islands_gather(jl_islands *isl, const jl_rank_info *mine, jl_rank_info *all,
                      jl_error *err) {
#ifdef JL_HAVE_MPI
  if (isl->mpi && isl->size > 1) {
    int rc = MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0,
                        MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return jl_error_set(err, JL_ERR_DEVICE, "MPI_Gather of the ranks' facts failed (code %d)", rc);
    return JL_OK;
  }
#endif
  (void)isl;
  (void)err;
  if (all) all[0] = *mine;
  return JL_OK;
}


/* ---- the trunk run's seams (trunk_run.h) ---- */

static int jl_seam_begin(void *ctx, int cap, jl_error *err) {
  return jl_islands_trunk_begin(ctx, cap, err);
}

static int jl_seam_all_ok(void *ctx, int ok) {
  return jl_islands_all_ok(ctx, ok);
}

static void jl_seam_fail(void *ctx, const char *msg) {
  jl_islands *isl = ctx;
  isl->failed = 1;
  snprintf(isl->failed_msg, sizeof isl->failed_msg, "%s", msg);
}

static int jl_seam_until_stop(void *ctx, int want, jl_error *err) {
  return jl_islands_trunk_until_stop(ctx, want, err);
}

static int jl_seam_collect(void *ctx, jl_block_packing *best, jl_trunk_check_fn check, void *check_ctx,
                           jl_error *err) {
  return jl_islands_trunk_collect(ctx, best, check, check_ctx, err);
}

static int jl_seam_gather(void *ctx, const jl_rank_info *mine, jl_rank_info *all, jl_error *err) {
  return jl_islands_gather(ctx, mine, all, err);
}

void jl_islands_trunk_seams(jl_islands *isl, double migrate_s, jl_trunk_islands *s) {
  memset(s, 0, sizeof *s);
  s->ctx = isl;
  s->rank = isl->rank;
  s->size = isl->size;
  s->local_rank = isl->local_rank;
  s->migrate_s = migrate_s > 0 ? migrate_s : JL_ISLANDS_TRUNK_MIGRATE_S;
  s->begin = jl_seam_begin;
  s->all_ok = jl_seam_all_ok;
  s->migrate = jl_islands_trunk_migrate;
  s->fail = jl_seam_fail;
  s->until_stop = jl_seam_until_stop;
  s->collect = jl_seam_collect;
  s->gather = jl_seam_gather;
}
