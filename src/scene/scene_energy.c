/* CPU twin of kernels/scene/scene_energy.cu (the device's order of additions, see
 * scene_gpu_stats.h) and the host side of the device statistics. */
#include "scene_gpu_stats.h"

#include <stdlib.h>
#include <string.h>

int jl_impulses_reserve(uint64_t **keys, double **imp, int *cap, int m, jl_error *err) {
  if (m > *cap) {
    uint64_t *k = realloc(*keys, (size_t)m * sizeof(uint64_t));
    if (k) *keys = k;
    double *x = realloc(*imp, 3 * (size_t)m * sizeof(double));
    if (x) *imp = x;
    if (!k || !x) return jl_error_set(err, JL_ERR_NOMEM, "impulses: out of memory for %d contacts", m);
    *cap = m;
  }
  return JL_OK;
}

/* One block of the reduction: JL_EN_CHUNK items from base, in the kernel's
 * order (per thread, then the tree). item(k) gives the (ke, pe) of item k. */
typedef void (*jl_en_item_fn)(const void *ctx, long k, double *ke, double *pe);

static void jl_en_block(const void *ctx, jl_en_item_fn item, long n, long block, double *out) {
  double ke[JL_EN_THREADS], pe[JL_EN_THREADS];
  long base = block * JL_EN_CHUNK;
  for (int t = 0; t < JL_EN_THREADS; ++t) {
    double a = 0.0, b = 0.0;
    for (int j = 0; j < JL_EN_PER_THREAD; ++j) {
      long k = base + t + (long)j * JL_EN_THREADS;
      if (k < n) {
        double x, y;
        item(ctx, k, &x, &y);
        a = a + x;
        b = b + y;
      }
    }
    ke[t] = a;
    pe[t] = b;
  }
  for (int s = JL_EN_THREADS / 2; s > 0; s >>= 1)
    for (int t = 0; t < s; ++t) {
      ke[t] = ke[t] + ke[t + s];
      pe[t] = pe[t] + pe[t + s];
    }
  out[2 * block] = ke[0];
  out[2 * block + 1] = pe[0];
}

typedef struct jl_en_bodies_ctx {
  const jl_bodies *b;
  const double *gravity;
} jl_en_bodies_ctx;

static void jl_en_body_item(const void *ctx, long k, double *ke, double *pe) {
  const jl_en_bodies_ctx *c = ctx;
  const jl_bodies *b = c->b;
  jl_en_body(b->is_static, b->pos, b->quat, b->vel, b->omega, b->inv_mass, b->inv_inertia,
             c->gravity, k, ke, pe);
}

static void jl_en_pair_item(const void *ctx, long k, double *ke, double *pe) {
  const double *in = ctx;
  *ke = in[2 * k];
  *pe = in[2 * k + 1];
}

int jl_scene_energy_twin(const jl_bodies *b, const double gravity[3], double *kinetic,
                         double *potential, jl_error *err) {
  *kinetic = *potential = 0.0;
  long n = b->count;
  if (n <= 0) return JL_OK;
  long blocks = jl_en_blocks(n);
  size_t half = 2 * (size_t)blocks;
  double *a = malloc(2 * half * sizeof(double));
  if (!a) return jl_error_set(err, JL_ERR_NOMEM, "energy: out of memory for %ld bodies", n);
  double *bb = a + half, *buf = a;
  jl_en_bodies_ctx ctx = {b, gravity};
  for (long k = 0; k < blocks; ++k) jl_en_block(&ctx, jl_en_body_item, n, k, a);
  long m = blocks;
  while (m > 1) {
    long mb = jl_en_blocks(m);
    for (long k = 0; k < mb; ++k) jl_en_block(a, jl_en_pair_item, m, k, bb);
    double *t = a;
    a = bb;
    bb = t;
    m = mb;
  }
  *kinetic = a[0];
  *potential = a[1];
  free(buf);
  return JL_OK;
}

#ifdef JL_HAVE_CUDA
int jl_cuda_scene_energy(jl_scene_gpu *g, const double gravity[3], jl_gpu_stats_ws *ws,
                         double *kinetic, double *potential, char *msg, int msg_len);
void jl_cuda_stats_ws_free(jl_gpu_stats_ws *ws);
int jl_cuda_scene_impulse_count(const jl_scene_gpu *g);
int jl_cuda_scene_get_impulses(jl_scene_gpu *g, uint64_t *keys, double *imp, char *msg,
                               int msg_len);
int jl_cuda_scene_set_impulses(jl_scene_gpu *g, const uint64_t *keys, const double *imp, int n,
                               char *msg, int msg_len);

int jl_scene_gpu_energy(jl_scene_gpu *g, const double gravity[3], jl_gpu_stats_ws *ws,
                        double *kinetic, double *potential, jl_error *err) {
  char msg[JL_ERROR_MSG_MAX - 64];
  msg[0] = '\0';
  if (jl_cuda_scene_energy(g, gravity, ws, kinetic, potential, msg, (int)sizeof msg) != 0)
    return jl_error_set(err, strstr(msg, "out of memory") ? JL_ERR_NOMEM : JL_ERR_DEVICE,
                        "energy on the device: %s", msg);
  return JL_OK;
}

void jl_gpu_stats_ws_free(jl_gpu_stats_ws *ws) {
  if (ws) jl_cuda_stats_ws_free(ws);
}

int jl_cuda_scene_sync(jl_scene_gpu *g, char *msg, int msg_len);

int jl_scene_gpu_sync(jl_scene_gpu *g, jl_error *err) {
  char msg[JL_ERROR_MSG_MAX - 64];
  msg[0] = '\0';
  if (jl_cuda_scene_sync(g, msg, (int)sizeof msg) != 0)
    return jl_error_set(err, JL_ERR_DEVICE, "device: %s", msg);
  return JL_OK;
}

int jl_scene_gpu_get_impulses(jl_scene_gpu *g, uint64_t **keys, double **imp, int *cap, int *n,
                              jl_error *err) {
  int m = jl_cuda_scene_impulse_count(g);
  *n = 0;
  int rc = jl_impulses_reserve(keys, imp, cap, m, err);
  if (rc != JL_OK) return rc;
  char msg[JL_ERROR_MSG_MAX - 64];
  msg[0] = '\0';
  if (jl_cuda_scene_get_impulses(g, *keys, *imp, msg, (int)sizeof msg) != 0)
    return jl_error_set(err, JL_ERR_DEVICE, "download impulses: %s", msg);
  *n = m;
  return JL_OK;
}

int jl_scene_gpu_set_impulses(jl_scene_gpu *g, const uint64_t *keys, const double *imp, int n,
                              jl_error *err) {
  char msg[JL_ERROR_MSG_MAX - 64];
  msg[0] = '\0';
  if (jl_cuda_scene_set_impulses(g, keys, imp, n, msg, (int)sizeof msg) != 0)
    return jl_error_set(err, strstr(msg, "out of memory") ? JL_ERR_NOMEM : JL_ERR_DEVICE,
                        "upload impulses: %s", msg);
  return JL_OK;
}

#else /* built without CUDA */

int jl_scene_gpu_energy(jl_scene_gpu *g, const double gravity[3], jl_gpu_stats_ws *ws,
                        double *kinetic, double *potential, jl_error *err) {
  (void)g, (void)gravity, (void)ws;
  *kinetic = *potential = 0.0;
  return jl_error_set(err, JL_ERR_DEVICE, "jostle was built without CUDA");
}

void jl_gpu_stats_ws_free(jl_gpu_stats_ws *ws) { (void)ws; }

int jl_scene_gpu_sync(jl_scene_gpu *g, jl_error *err) {
  (void)g;
  return jl_error_set(err, JL_ERR_DEVICE, "jostle was built without CUDA");
}

int jl_scene_gpu_get_impulses(jl_scene_gpu *g, uint64_t **keys, double **imp, int *cap, int *n,
                              jl_error *err) {
  (void)g, (void)keys, (void)imp, (void)cap;
  *n = 0;
  return jl_error_set(err, JL_ERR_DEVICE, "jostle was built without CUDA");
}

int jl_scene_gpu_set_impulses(jl_scene_gpu *g, const uint64_t *keys, const double *imp, int n,
                              jl_error *err) {
  (void)g, (void)keys, (void)imp, (void)n;
  return jl_error_set(err, JL_ERR_DEVICE, "jostle was built without CUDA");
}
#endif
