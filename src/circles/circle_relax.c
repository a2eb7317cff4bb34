/* CPU twin of kernels/circles/circle_relax.cu and the dispatch between the two. */
#include "circle_batch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "stop_flag.h"
#include "timer.h"

int jl_circle_cut_check(jl_circle_cut *c) {
  if (__atomic_load_n(&c->flag, __ATOMIC_RELAXED)) return 1;
  if (jl_stop_requested(c->stop) || (c->at > 0.0 && jl_time_now() >= c->at)) {
    __atomic_store_n(&c->flag, 1, __ATOMIC_RELAXED);
    return 1;
  }
  return 0;
}

int jl_circle_batch_alloc(jl_circle_batch *b, int n, int count, const double *r_sorted,
                          jl_error *err) {
  memset(b, 0, sizeof *b);
  if (n < 2 || count < 1)
    return jl_error_set(err, JL_ERR_INPUT, "a batch needs n >= 2 circles and >= 1 candidate");
  size_t nc = (size_t)n * (size_t)count;
  b->n = n;
  b->count = count;
  b->r = malloc(sizeof(double) * (size_t)n);
  b->x = calloc(nc, sizeof(double));
  b->y = calloc(nc, sizeof(double));
  b->R = calloc((size_t)count, sizeof(double));
  b->R_rec = calloc((size_t)count, sizeof(double));
  b->need_start = calloc((size_t)count, 1);
  b->stuck = calloc((size_t)count, sizeof(uint32_t));
  b->rng_offset = calloc((size_t)count, sizeof(uint64_t));
  b->steps = calloc((size_t)count, sizeof(uint64_t));
  b->trials_done = calloc((size_t)count, sizeof(uint64_t));
  b->accepted = calloc((size_t)count, sizeof(uint64_t));
  b->wx = calloc(nc, sizeof(double));
  b->wy = calloc(nc, sizeof(double));
  b->Rt = calloc((size_t)count, sizeof(double));
  if (!b->r || !b->x || !b->y || !b->R || !b->R_rec || !b->need_start || !b->stuck || !b->rng_offset ||
      !b->steps || !b->trials_done || !b->accepted || !b->wx || !b->wy || !b->Rt) {
    jl_circle_batch_free(b);
    return jl_error_set(err, JL_ERR_NOMEM, "out of memory for %d candidates of %d circles",
                        count, n);
  }
  memcpy(b->r, r_sorted, sizeof(double) * (size_t)n);
  return JL_OK;
}

void jl_circle_batch_free(jl_circle_batch *b) {
  free(b->r); free(b->x); free(b->y); free(b->R); free(b->R_rec); free(b->need_start); free(b->stuck);
  free(b->rng_offset); free(b->steps); free(b->trials_done); free(b->accepted);
  free(b->wx); free(b->wy); free(b->Rt);
  memset(b, 0, sizeof *b);
}

void jl_circle_batch_copy(jl_circle_batch *dst, const jl_circle_batch *src) {
  size_t k = (size_t)src->count, nc = (size_t)src->n * k;
  memcpy(dst->x, src->x, sizeof(double) * nc);
  memcpy(dst->y, src->y, sizeof(double) * nc);
  memcpy(dst->wx, src->wx, sizeof(double) * nc);
  memcpy(dst->wy, src->wy, sizeof(double) * nc);
  memcpy(dst->R, src->R, sizeof(double) * k);
  memcpy(dst->R_rec, src->R_rec, sizeof(double) * k);
  memcpy(dst->Rt, src->Rt, sizeof(double) * k);
  memcpy(dst->need_start, src->need_start, k);
  memcpy(dst->stuck, src->stuck, sizeof(uint32_t) * k);
  memcpy(dst->rng_offset, src->rng_offset, sizeof(uint64_t) * k);
  memcpy(dst->steps, src->steps, sizeof(uint64_t) * k);
  memcpy(dst->trials_done, src->trials_done, sizeof(uint64_t) * k);
  memcpy(dst->accepted, src->accepted, sizeof(uint64_t) * k);
}

typedef struct jl_cpu_job {
  const jl_relax_params *p;
  jl_circle_batch *b;
  int first;               /* candidates are taken from here on, cyclically */
  atomic_int next;
  atomic_int failed;       /* a thread had no workspace */
} jl_cpu_job;

/* One thread of jl_parallel_run: candidates from the shared counter. */
static void jl_cpu_worker(void *ctx, int t, int nt) {
  (void)t, (void)nt;
  jl_cpu_job *job = ctx;
  int n = job->p->n;
  double *mem = malloc(sizeof(double) * JL_RELAX_WS_DOUBLES(n));
  double *nbmem = job->p->nbr ? malloc(sizeof(double) * JL_NBR_DOUBLES(n)) : NULL;
  if (!mem || (job->p->nbr && !nbmem)) {
    free(mem);
    free(nbmem);
    atomic_store(&job->failed, 1);
    return;
  }
  jl_relax_ws ws;
  /* Each thread runs at least one candidate; once the launch is cut it
   * takes no other, and those left keep their state (need_start too). */
  for (int done = 0;; ++done) {
    if (done > 0 && job->b->cut && jl_circle_cut_check(job->b->cut)) break;
    int k = atomic_fetch_add(&job->next, 1);
    if (k >= job->b->count) break;
    jl_relax_candidate(&ws, mem, nbmem, job->p, *job->b, (job->first + k) % job->b->count);
  }
  free(mem);
  free(nbmem);
}

int jl_circle_batch_run_cpu(const jl_relax_params *p, jl_circle_batch *b, int threads,
                            jl_error *err) {
  return jl_circle_batch_run_cpu_cut(p, b, threads, 0, err);
}

int jl_circle_batch_run_cpu_cut(const jl_relax_params *p, jl_circle_batch *b, int threads,
                                int first, jl_error *err) {
  if (p->n != b->n) return jl_error_set(err, JL_ERR_INTERNAL, "batch and parameters disagree on n");
  if (threads < 1) threads = 1;
  if (threads > b->count) threads = b->count;
  jl_cpu_job job = {.p = p, .b = b, .first = first >= 0 ? first % b->count : 0};
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  jl_parallel_run(threads, jl_cpu_worker, &job);
  if (atomic_load(&job.failed)) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for relaxation workspace");
  return JL_OK;
}

int jl_circle_auto_batch(const jl_device *dev, int n, int per_thread) {
#ifdef JL_HAVE_CUDA
  if (dev->kind == JL_DEVICE_CUDA) {
    int sms = dev->sm_count > 0 ? dev->sm_count : 80, resident = 0;
    char msg[256] = "";
    if (jl_cuda_circles_resident(n, &resident, msg, sizeof msg) != 0 || resident < 1)
      return sms * JL_CIRCLE_BATCH_PER_SM;
    /* whole waves of resident blocks, about JL_CIRCLE_BATCH_PER_SM per SM:
     * a partial last wave leaves SMs idle while it runs */
    int waves = (JL_CIRCLE_BATCH_PER_SM + resident / 2) / resident;
    return sms * resident * (waves > 0 ? waves : 1);
  }
#else
  (void)n;
#endif
  return dev->threads * per_thread;
}

int jl_circle_nbr_auto(const jl_device *dev, int n) {
  if (n > JL_NBR_MAX_N) return 0;
  return n >= (dev->kind == JL_DEVICE_CUDA ? JL_NBR_MIN_N_CUDA : JL_NBR_MIN_N_CPU);
}

void jl_circle_layout_describe(const jl_device *dev, int n, int count, char *out, size_t cap) {
  const char *contacts = jl_circle_nbr_auto(dev, n) ? "neighbour lists" : "all pairs";
#ifdef JL_HAVE_CUDA
  if (dev->kind == JL_DEVICE_CUDA) {
    snprintf(out, cap, "%d candidates, one block of %d threads each, contacts from %s", count,
             jl_cuda_circles_threads(n), contacts);
    return;
  }
#endif
  snprintf(out, cap, "%d candidates on %d thread%s, contacts from %s", count, dev->threads,
           dev->threads == 1 ? "" : "s", contacts);
}

int jl_circle_engine_init(jl_circle_engine *e, const jl_device *dev, int n, int count,
                          jl_error *err) {
  memset(e, 0, sizeof *e);
  e->dev = *dev;
#ifdef JL_HAVE_CUDA
  if (dev->kind == JL_DEVICE_CUDA) {
    jl_cuda_circles *ctx = NULL;
    char msg[256] = "";
    if (jl_cuda_circles_create(&ctx, n, count, msg, sizeof msg) != 0)
      return jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
    e->cuda = ctx;
  }
#else
  (void)n; (void)count;
  if (dev->kind == JL_DEVICE_CUDA)
    return jl_error_set(err, JL_ERR_DEVICE, "this jostle was built without CUDA");
#endif
  return JL_OK;
}

int jl_circle_engine_run(jl_circle_engine *e, const jl_relax_params *p, jl_circle_batch *b,
                         jl_error *err) {
  jl_circle_cut cut = {0, e->cut_at, e->stop};
#ifdef JL_HAVE_CUDA
  if (e->dev.kind == JL_DEVICE_CUDA) {
    char msg[256] = "";
    if (jl_cuda_circles_run(e->cuda, p, b, &cut, msg, sizeof msg) != 0)
      return jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
    return JL_OK;
  }
#endif
  b->cut = &cut;
  /* A cut launch runs only the first candidates in the order; the next
   * launch starts where this one began its last, so every candidate gets
   * its turn when launches are cut (large n on few threads). */
  int rc = jl_circle_batch_run_cpu_cut(p, b, e->dev.threads, e->first, err);
  b->cut = NULL;
  e->first = (e->first + e->dev.threads) % b->count;
  return rc;
}

void jl_circle_engine_free(jl_circle_engine *e) {
#ifdef JL_HAVE_CUDA
  if (e->cuda) jl_cuda_circles_destroy(e->cuda);
#endif
  e->cuda = NULL;
}
