#include "islands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef JL_HAVE_MPI
#include <mpi.h>
#endif

/* The variables MPI launchers set in every rank: Open MPI's mpirun, the PMI
 * of MPICH's hydra and of Slurm's srun, and PMIx. */
static int jl_islands_env_size(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
  for (size_t k = 0; k < sizeof vars / sizeof vars[0]; ++k) {
    const char *v = getenv(vars[k]);
    if (v && *v) return atoi(v);
  }
  /* srun with PMIx sets the rank but not always the size */
  if (getenv("PMIX_RANK")) return 2;
  return 0;
}

int jl_islands_init(jl_islands *isl, jl_error *err) {
  memset(isl, 0, sizeof *isl);
  isl->size = 1;
  isl->local_size = 1;
  int launched = jl_islands_env_size();
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

/* Every rank's slot (send, slot_bytes) into isl->slots, rank order. */
static int jl_islands_allgather(jl_islands *isl, const unsigned char *send, jl_error *err) {
#ifdef JL_HAVE_MPI
  if (isl->mpi && isl->size > 1) {
    int rc = MPI_Allgather(send, (int)isl->slot_bytes, MPI_BYTE, isl->slots, (int)isl->slot_bytes,
                           MPI_BYTE, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return jl_error_set(err, JL_ERR_DEVICE, "MPI_Allgather of the migration failed (code %d)", rc);
    return JL_OK;
  }
#endif
  (void)err;
  memcpy(isl->slots, send, isl->slot_bytes);
  return JL_OK;
}

/* A slot: this header, then up to JL_ISLANDS_OFFER packings (R, x[n], y[n]). */
typedef struct jl_slot_head {
  int32_t want, failed, count, pad;
  uint64_t trials, relax_steps;
  char msg[JL_ISLANDS_MSG];
} jl_slot_head;

int jl_islands_circles_begin(jl_islands *isl, const jl_circle_problem *prob, jl_error *err) {
  isl->prob = prob;
  isl->slot_bytes = sizeof(jl_slot_head) + (size_t)JL_ISLANDS_OFFER * (1 + 2 * (size_t)prob->n) * sizeof(double);
  isl->slots = calloc((size_t)isl->size + 1, isl->slot_bytes);  /* + 1: this rank's send slot */
  isl->incoming_cap = (isl->size - 1) * JL_ISLANDS_OFFER;
  isl->incoming = isl->incoming_cap > 0 ? calloc((size_t)isl->incoming_cap, sizeof *isl->incoming) : NULL;
  if (!isl->slots || (isl->incoming_cap > 0 && !isl->incoming))
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the islands' exchange");
  for (int k = 0; k < isl->incoming_cap; ++k) {
    int rc = jl_circle_packing_init(&isl->incoming[k], prob->n, err);
    if (rc != JL_OK) return rc;
  }
  return JL_OK;
}

int jl_islands_circle_migrate(void *ctx, jl_circle_migration *m, jl_error *err) {
  jl_islands *isl = ctx;
  const int n = isl->prob->n;
  unsigned char *send = isl->slots + (size_t)isl->size * isl->slot_bytes;
  jl_slot_head h;
  memset(&h, 0, sizeof h);
  h.want = m->want_stop;
  h.failed = isl->failed;
  h.count = m->offer_count < JL_ISLANDS_OFFER ? m->offer_count : JL_ISLANDS_OFFER;
  h.trials = m->trials;
  h.relax_steps = m->relax_steps;
  snprintf(h.msg, sizeof h.msg, "%s", isl->failed_msg);
  memcpy(send, &h, sizeof h);
  double *d = (double *)(send + sizeof h);
  for (int k = 0; k < h.count; ++k) {
    const jl_circle_packing *pk = &m->offer[k];
    *d++ = pk->R;
    memcpy(d, pk->x, (size_t)n * sizeof(double));
    d += n;
    memcpy(d, pk->y, (size_t)n * sizeof(double));
    d += n;
  }
  int rc = jl_islands_allgather(isl, send, err);
  if (rc != JL_OK) return rc;
  m->incoming = isl->incoming;
  m->incoming_count = 0;
  m->stop = 0;
  int alive = 0;
  for (int r = 0; r < isl->size; ++r) {
    const unsigned char *slot = isl->slots + (size_t)r * isl->slot_bytes;
    jl_slot_head rh;
    memcpy(&rh, slot, sizeof rh);
    if (!rh.failed) alive++;
    if (rh.want && !m->stop) m->stop = rh.want;  /* the lowest rank's reason */
    if (r == isl->rank) continue;
    const double *q = (const double *)(slot + sizeof rh);
    for (int k = 0; k < rh.count && k < JL_ISLANDS_OFFER && m->incoming_count < isl->incoming_cap; ++k) {
      jl_circle_packing *pk = &isl->incoming[m->incoming_count++];
      pk->R = *q++;
      memcpy(pk->x, q, (size_t)n * sizeof(double));
      q += n;
      memcpy(pk->y, q, (size_t)n * sizeof(double));
      q += n;
      memcpy(pk->r, isl->prob->radii, (size_t)n * sizeof(double));
    }
  }
  if (alive == 0 && !m->stop) m->stop = JL_STOP_SIGNAL + 1;  /* nobody left to search */
  return JL_OK;
}

int jl_islands_circles_idle(jl_islands *isl, const char *msg, jl_circle_packing *best,
                            jl_error *err) {
  isl->failed = 1;
  snprintf(isl->failed_msg, sizeof isl->failed_msg, "%s", msg);
  best->R = 0.0;
  for (;;) {
    jl_circle_migration m = {0};
    int rc = jl_islands_circle_migrate(isl, &m, err);
    if (rc != JL_OK) return rc;
    for (int k = 0; k < m.incoming_count; ++k) {
      const jl_circle_packing *pk = &m.incoming[k];
      jl_circle_check chk;
      jl_circle_check_packing(pk, JL_LEGAL_REL_TOL, &chk);
      if (chk.legal && (best->R == 0.0 || pk->R < best->R)) {
        rc = jl_circle_packing_copy(best, pk, err);
        if (rc != JL_OK) return rc;
      }
    }
    if (m.stop) return JL_OK;
  }
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
  (void)err;
  if (all) all[0] = *mine;
  return JL_OK;
}

/* ---- trunks: one packing per rank, up to cap blocks (centre, quaternion) ---- */

int jl_islands_trunk_begin(jl_islands *isl, int cap, jl_error *err) {
  isl->cap = cap;
  isl->slot_bytes = sizeof(jl_slot_head) + (size_t)cap * 7 * sizeof(double);
  isl->slots = calloc((size_t)isl->size + 1, isl->slot_bytes);
  isl->blocks_in = calloc((size_t)isl->size, sizeof *isl->blocks_in);
  if (!isl->slots || !isl->blocks_in)
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the islands' exchange");
  for (int k = 0; k < isl->size; ++k) {
    int rc = jl_block_packing_init(&isl->blocks_in[k], cap, err);
    if (rc != JL_OK) return rc;
  }
  return JL_OK;
}

/* Sends p (may be NULL: nothing) and want; fills blocks_in[] with the other
 * ranks' packings (count 0: none) and returns the verdict in *stop. */
static int jl_islands_trunk_exchange(jl_islands *isl, const jl_block_packing *p, int want,
                                     int *stop, int *n_in, jl_error *err) {
  unsigned char *send = isl->slots + (size_t)isl->size * isl->slot_bytes;
  jl_slot_head h;
  memset(&h, 0, sizeof h);
  h.want = want;
  h.failed = isl->failed;
  h.count = p ? (p->count < isl->cap ? p->count : isl->cap) : 0;
  snprintf(h.msg, sizeof h.msg, "%s", isl->failed_msg);
  memcpy(send, &h, sizeof h);
  double *d = (double *)(send + sizeof h);
  for (int i = 0; i < h.count; ++i) {
    memcpy(d, p->centre + 3 * i, 3 * sizeof(double));
    memcpy(d + 3, p->quat + 4 * i, 4 * sizeof(double));
    d += 7;
  }
  int rc = jl_islands_allgather(isl, send, err);
  if (rc != JL_OK) return rc;
  *stop = 0;
  *n_in = 0;
  int alive = 0;
  for (int r = 0; r < isl->size; ++r) {
    const unsigned char *slot = isl->slots + (size_t)r * isl->slot_bytes;
    jl_slot_head rh;
    memcpy(&rh, slot, sizeof rh);
    if (!rh.failed) alive++;
    if (rh.want && !*stop) *stop = rh.want;
    if (r == isl->rank || rh.count <= 0) continue;
    jl_block_packing *q = &isl->blocks_in[(*n_in)++];
    const double *e = (const double *)(slot + sizeof rh);
    q->count = rh.count < isl->cap ? rh.count : isl->cap;
    for (int i = 0; i < q->count; ++i) {
      memcpy(q->centre + 3 * i, e, 3 * sizeof(double));
      memcpy(q->quat + 4 * i, e + 3, 4 * sizeof(double));
      e += 7;
    }
  }
  if (alive == 0 && !*stop) *stop = JL_TRUNK_STOP_SIGNAL + 1;
  return JL_OK;
}

int jl_islands_trunk_migrate(void *ctx, jl_trunk_migration *m, jl_error *err) {
  jl_islands *isl = ctx;
  int n_in = 0;
  int rc = jl_islands_trunk_exchange(isl, m->offer, m->want_stop, &m->stop, &n_in, err);
  m->incoming = isl->blocks_in;
  m->incoming_count = n_in;
  return rc;
}

int jl_islands_trunk_until_stop(jl_islands *isl, int want, jl_error *err) {
  for (;;) {
    int stop = 0, n_in = 0;
    int rc = jl_islands_trunk_exchange(isl, NULL, want, &stop, &n_in, err);
    if (rc != JL_OK || stop) return rc;
  }
}

int jl_islands_trunk_collect(jl_islands *isl, jl_block_packing *best, jl_trunk_check_fn check,
                             void *check_ctx, int *from_rank, jl_error *err) {
  int stop = 0, n_in = 0;
  *from_rank = isl->rank;
  int rc = jl_islands_trunk_exchange(isl, best, 1, &stop, &n_in, err);
  if (rc != JL_OK || isl->rank != 0) return rc;
  /* rank order: of equal counts the lowest rank's */
  int k = 0;
  for (int r = 0; r < isl->size; ++r) {
    const unsigned char *slot = isl->slots + (size_t)r * isl->slot_bytes;
    jl_slot_head rh;
    memcpy(&rh, slot, sizeof rh);
    if (r == isl->rank || rh.count <= 0) continue;
    const jl_block_packing *q = &isl->blocks_in[k++];
    double worst = 0.0;
    if (q->count > best->count && check(check_ctx, q, &worst)) {
      if ((rc = jl_block_packing_copy(best, q, err)) != JL_OK) return rc;
      *from_rank = r;
    }
  }
  return JL_OK;
}
