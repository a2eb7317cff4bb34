/* CPU twin of kernels/trunk/block_relax.cu, the batch storage and the dispatch
 * between the two. */
#include "block_batch.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"

/* Blocks are inflated by this much (mm) per side in the contact tests and
 * count as legal when no inflated depth exceeds JL_BLOCK_TOL: the real
 * blocks then keep a gap of at least 2 skin - tol, so an exact check with
 * no tolerance agrees with the samples on block/block contacts. */
#define JL_BLOCK_SKIN 1e-3
#define JL_BLOCK_TOL 5e-4

void jl_block_params_default(jl_block_params *p, const jl_block_size *size, uint64_t seed) {
  memset(p, 0, sizeof *p);
  double h[3] = {0.5 * size->x, 0.5 * size->y, 0.5 * size->z};
  double I[3];
  jl_block_inertia(h, 1.0, I);
  for (int d = 0; d < 3; ++d) {
    p->h[d] = h[d] + JL_BLOCK_SKIN;
    p->inv_inertia[d] = 1.0 / I[d];
  }
  p->inv_mass = 1.0;
  p->radius = sqrt(p->h[0] * p->h[0] + p->h[1] * p->h[1] + p->h[2] * p->h[2]);
  p->tol = JL_BLOCK_TOL;
  p->gain = 1.0;
  p->max_steps = 24;
  p->iters = 16;
  p->p_insert = 0.15;
  p->p_delete = 0.05;
  p->p_shake = 0.10;
  p->p_copy = 0.5;
  p->p_axis = 0.7;
  double hmin = fmin(h[0], fmin(h[1], h[2]));
  p->shift_step = 0.4 * hmin;
  p->shift_angle = 0.05;
  p->shake_radius = 2.5 * p->radius;
  p->shake_step = 0.2 * hmin;
  /* turn, settle and push: off until measured on a device (0 keeps the
   * chains' moves as they were, bit for bit) */
  p->p_turn = 0.0;
  p->p_settle = 0.0;
  p->p_push = 0.0;
  p->settle_step = 0.2 * hmin;
  p->push_step = 0.4 * hmin;
  p->face_reach = p->radius;
  /* a pair overlapping by d counts d at each block: 0.5 per mm of it, as
   * when the deepest contact alone was charged 0.5 per mm */
  p->penalty = 0.25;
  p->seed = seed;
}

jl_grid_view jl_grid_view_host(const jl_surface_grid *g) {
  jl_grid_view v;
  memset(&v, 0, sizeof v);
  v.px = g->px; v.py = g->py; v.pz = g->pz;
  v.cell_start = g->cell_start;
  v.cell_count = g->cell_count;
  v.cell_lo = g->cell_lo;
  v.cell_hi = g->cell_hi;
  v.inside = g->inside;
  v.inside_cells = g->inside_cells;
  v.n_inside = g->n_inside;
  for (int d = 0; d < 3; ++d) {
    v.origin[d] = g->origin[d];
    v.dim[d] = g->dim[d];
  }
  v.cell = g->cell;
  return v;
}

int jl_block_batch_alloc(jl_block_batch *b, int count, int cap, jl_error *err) {
  memset(b, 0, sizeof *b);
  if (count < 1 || cap < 1)
    return jl_error_set(err, JL_ERR_INPUT, "a block batch needs >= 1 candidate and >= 1 slot");
  size_t nc = (size_t)count * (size_t)cap, k = (size_t)count;
  b->count = count;
  b->cap = cap;
  double **arr[14] = {&b->cx, &b->cy, &b->cz, &b->qw, &b->qx, &b->qy, &b->qz,
                      &b->bx, &b->by, &b->bz, &b->bqw, &b->bqx, &b->bqy, &b->bqz};
  int ok = 1;
  for (int a = 0; a < 14; ++a) ok &= (*arr[a] = calloc(nc, sizeof(double))) != NULL;
  ok &= (b->n = calloc(k, sizeof(int))) != NULL;
  ok &= (b->best_n = calloc(k, sizeof(int))) != NULL;
  ok &= (b->temp = calloc(k, sizeof(double))) != NULL;
  ok &= (b->energy = calloc(k, sizeof(double))) != NULL;
  ok &= (b->worst = calloc(k, sizeof(double))) != NULL;
  ok &= (b->moves = calloc(k, sizeof(uint64_t))) != NULL;
  ok &= (b->steps = calloc(k, sizeof(uint64_t))) != NULL;
  ok &= (b->accepted = calloc(k, sizeof(uint64_t))) != NULL;
  ok &= (b->kind_moves = calloc(k * JL_BMOVE_COUNT, sizeof(uint64_t))) != NULL;
  ok &= (b->kind_accepted = calloc(k * JL_BMOVE_COUNT, sizeof(uint64_t))) != NULL;
  if (!ok) {
    jl_block_batch_free(b);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d candidates of %d blocks", count,
                        cap);
  }
  for (int c = 0; c < count; ++c)
    for (int i = 0; i < cap; ++i) {
      b->qw[(size_t)c * cap + i] = 1.0;
      b->bqw[(size_t)c * cap + i] = 1.0;
    }
  return JL_OK;
}

void jl_block_batch_free(jl_block_batch *b) {
  free(b->cx); free(b->cy); free(b->cz); free(b->qw); free(b->qx); free(b->qy); free(b->qz);
  free(b->bx); free(b->by); free(b->bz); free(b->bqw); free(b->bqx); free(b->bqy); free(b->bqz);
  free(b->n); free(b->best_n); free(b->temp); free(b->energy); free(b->worst);
  free(b->moves); free(b->steps); free(b->accepted);
  free(b->kind_moves); free(b->kind_accepted);
  memset(b, 0, sizeof *b);
}

int jl_block_batch_set(jl_block_batch *b, int c, const jl_block_packing *pk, jl_error *err) {
  if (pk->count > b->cap)
    return jl_error_set(err, JL_ERR_INPUT, "%d blocks do not fit a batch of %d slots", pk->count,
                        b->cap);
  size_t off = (size_t)c * (size_t)b->cap;
  for (int i = 0; i < pk->count; ++i) {
    b->cx[off + i] = pk->centre[3 * i];
    b->cy[off + i] = pk->centre[3 * i + 1];
    b->cz[off + i] = pk->centre[3 * i + 2];
    b->qw[off + i] = pk->quat[4 * i];
    b->qx[off + i] = pk->quat[4 * i + 1];
    b->qy[off + i] = pk->quat[4 * i + 2];
    b->qz[off + i] = pk->quat[4 * i + 3];
  }
  b->n[c] = pk->count;
  return JL_OK;
}

static int jl_batch_export(const double *x, const double *y, const double *z, const double *qw,
                           const double *qx, const double *qy, const double *qz, int n,
                           jl_block_packing *pk, jl_error *err) {
  int rc = jl_block_packing_reserve(pk, n > 0 ? n : 1, err);
  if (rc) return rc;
  for (int i = 0; i < n; ++i) {
    pk->centre[3 * i] = x[i];
    pk->centre[3 * i + 1] = y[i];
    pk->centre[3 * i + 2] = z[i];
    pk->quat[4 * i] = qw[i];
    pk->quat[4 * i + 1] = qx[i];
    pk->quat[4 * i + 2] = qy[i];
    pk->quat[4 * i + 3] = qz[i];
  }
  pk->count = n;
  return JL_OK;
}

int jl_block_batch_get(const jl_block_batch *b, int c, jl_block_packing *pk, jl_error *err) {
  size_t o = (size_t)c * (size_t)b->cap;
  return jl_batch_export(b->cx + o, b->cy + o, b->cz + o, b->qw + o, b->qx + o, b->qy + o,
                         b->qz + o, b->n[c], pk, err);
}

int jl_block_batch_get_best(const jl_block_batch *b, int c, jl_block_packing *pk, jl_error *err) {
  size_t o = (size_t)c * (size_t)b->cap;
  return jl_batch_export(b->bx + o, b->by + o, b->bz + o, b->bqw + o, b->bqx + o, b->bqy + o,
                         b->bqz + o, b->best_n[c], pk, err);
}

int jl_block_demo_packing(jl_block_packing *pk, const double lo[3], const double hi[3],
                          const jl_block_size *size, int count, double shift, double angle,
                          uint64_t seed, jl_error *err) {
  double e[3] = {size->x, size->y, size->z};
  int k[3];
  for (int d = 0; d < 3; ++d) {
    k[d] = (int)floor((hi[d] - lo[d]) / e[d]);
    if (k[d] < 0) k[d] = 0;
  }
  int rc = jl_block_packing_reserve(pk, count > 0 ? count : 1, err);
  if (rc) return rc;
  pk->count = 0;
  jl_rng rng;
  jl_rng_init(&rng, seed, 7, 0);
  for (int iz = 0; iz < k[2]; ++iz)
    for (int iy = 0; iy < k[1]; ++iy)
      for (int ix = 0; ix < k[0]; ++ix) {
        if (pk->count >= count) return JL_OK;
        double u[6];
        for (int t = 0; t < 6; ++t) u[t] = 2.0 * jl_u01_from_u32(jl_rng_u32(&rng), jl_rng_u32(&rng)) - 1.0;
        double c[3] = {lo[0] + (ix + 0.5) * e[0] + shift * u[0], lo[1] + (iy + 0.5) * e[1] + shift * u[1],
                       lo[2] + (iz + 0.5) * e[2] + shift * u[2]};
        jl_quat q = jl_quat_turn(jl_quat_identity(), jl_v3(angle * u[3], angle * u[4], angle * u[5]));
        double qq[4] = {q.w, q.x, q.y, q.z};
        if ((rc = jl_block_packing_push(pk, c, qq, err))) return rc;
      }
  return JL_OK;
}

typedef struct jl_block_job {
  const jl_block_params *p;
  jl_block_batch *b;
  atomic_int next;
  atomic_int failed;       /* a thread had no workspace */
} jl_block_job;

/* One thread of jl_parallel_run: candidates from the shared counter. */
static void jl_block_worker(void *ctx, int t, int nt) {
  (void)t, (void)nt;
  jl_block_job *job = ctx;
  double *mem = malloc(sizeof(double) * JL_BR_WS_DOUBLES(job->b->cap));
  if (!mem) {
    atomic_store(&job->failed, 1);
    return;
  }
  jl_br_ws ws;
  for (;;) {
    int c = atomic_fetch_add(&job->next, 1);
    if (c >= job->b->count) break;
    jl_block_candidate(&ws, mem, job->p, *job->b, c);
  }
  free(mem);
}

int jl_block_batch_run_cpu(const jl_block_params *p, jl_block_batch *b, int threads,
                           jl_error *err) {
  if (threads < 1) threads = 1;
  if (threads > b->count) threads = b->count;
  jl_block_job job = {.p = p, .b = b};
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  jl_parallel_run(threads, jl_block_worker, &job);
  if (atomic_load(&job.failed)) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for relaxation workspace");
  return JL_OK;
}

int jl_block_engine_init(jl_block_engine *e, const jl_device *dev, const jl_surface_grid *g,
                         int count, int cap, jl_error *err) {
  memset(e, 0, sizeof *e);
  e->dev = *dev;
  e->grid = jl_grid_view_host(g);
#ifdef JL_HAVE_CUDA
  if (dev->kind == JL_DEVICE_CUDA) {
    jl_cuda_blocks *ctx = NULL;
    char msg[256] = "";
    if (jl_cuda_blocks_create(&ctx, g, count, cap, msg, sizeof msg) != 0) {
      jl_cuda_blocks_destroy(ctx);
      return jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
    }
    e->cuda = ctx;
  }
#else
  (void)count; (void)cap;
  if (dev->kind == JL_DEVICE_CUDA)
    return jl_error_set(err, JL_ERR_DEVICE, "this jostle was built without CUDA");
#endif
  return JL_OK;
}

int jl_block_engine_run(jl_block_engine *e, const jl_block_params *p, jl_block_batch *b,
                        jl_error *err) {
#ifdef JL_HAVE_CUDA
  if (e->dev.kind == JL_DEVICE_CUDA) {
    char msg[256] = "";
    if (jl_cuda_blocks_run(e->cuda, p, b, msg, sizeof msg) != 0)
      return jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
    return JL_OK;
  }
#endif
  jl_block_params q = *p;
  q.grid = e->grid;
  return jl_block_batch_run_cpu(&q, b, e->dev.threads, err);
}

void jl_block_engine_free(jl_block_engine *e) {
#ifdef JL_HAVE_CUDA
  if (e->cuda) jl_cuda_blocks_destroy(e->cuda);
#endif
  e->cuda = NULL;
}
