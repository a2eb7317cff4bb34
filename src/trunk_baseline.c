#include "trunk_baseline.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "timer.h"

void jl_quat_from_axes(const double col[3][3], double q[4]) {
  /* m[r][c] = col[c][r]; Shepperd's method picks the largest diagonal term. */
  double m00 = col[0][0], m11 = col[1][1], m22 = col[2][2];
  double tr = m00 + m11 + m22;
  double w, x, y, z;
  if (tr > 0) {
    double s = 2.0 * sqrt(tr + 1.0);
    w = 0.25 * s;
    x = (col[1][2] - col[2][1]) / s;
    y = (col[2][0] - col[0][2]) / s;
    z = (col[0][1] - col[1][0]) / s;
  } else if (m00 > m11 && m00 > m22) {
    double s = 2.0 * sqrt(1.0 + m00 - m11 - m22);
    w = (col[1][2] - col[2][1]) / s;
    x = 0.25 * s;
    y = (col[1][0] + col[0][1]) / s;
    z = (col[2][0] + col[0][2]) / s;
  } else if (m11 > m22) {
    double s = 2.0 * sqrt(1.0 + m11 - m00 - m22);
    w = (col[2][0] - col[0][2]) / s;
    x = (col[1][0] + col[0][1]) / s;
    y = 0.25 * s;
    z = (col[2][1] + col[1][2]) / s;
  } else {
    double s = 2.0 * sqrt(1.0 + m22 - m00 - m11);
    w = (col[0][1] - col[1][0]) / s;
    x = (col[2][0] + col[0][2]) / s;
    y = (col[2][1] + col[1][2]) / s;
    z = 0.25 * s;
  }
  if (w < 0) { w = -w; x = -x; y = -y; z = -z; }
  double l = sqrt(w * w + x * x + y * y + z * z);
  q[0] = w / l;
  q[1] = x / l;
  q[2] = y / l;
  q[3] = z / l;
}

/* Orientation with block edge e[0] along world x, e[1] along y, e[2] along z. */
static void jl_perm_quat(const int e[3], double q[4]) {
  double col[3][3] = {{0}};
  for (int w = 0; w < 3; ++w) col[e[w]][w] = 1.0;  /* body axis e[w] -> world axis w */
  double det = col[0][0] * (col[1][1] * col[2][2] - col[1][2] * col[2][1]) -
               col[0][1] * (col[1][0] * col[2][2] - col[1][2] * col[2][0]) +
               col[0][2] * (col[1][0] * col[2][1] - col[1][1] * col[2][0]);
  if (det < 0)  /* a box is symmetric: reverse one body axis to make a rotation */
    for (int k = 0; k < 3; ++k) col[e[2]][k] = -col[e[2]][k];
  jl_quat_from_axes(col, q);
}

typedef struct jl_layer_choice {
  int count;
  int swap;                /* 0: horizontal edges (a, b) along (x, y); 1: (b, a) */
  double ox, oy;
} jl_layer_choice;

typedef struct jl_baseline_job {
  int vertical, k;
  int count, layers;
  jl_layer_choice *layer;  /* per layer */
  int n_layers;
  double z0;
  long long tested;
} jl_baseline_job;

typedef struct jl_baseline_shared {
  const jl_trunk_geom *g;
  double lo[3], hi[3];
  int offsets;
  jl_baseline_job *jobs;
  int n_jobs;
  atomic_int next;
  int failed;
} jl_baseline_shared;

static double jl_edge(const jl_block_size *b, int e) { return e == 0 ? b->x : e == 1 ? b->y : b->z; }

/* Blocks of one layer at one horizontal offset and orientation that pass. */
static int jl_layer_count(const jl_baseline_shared *s, const int e[3], double z, double ox,
                          double oy, long long *tested, jl_block_packing *out) {
  const jl_trunk_geom *g = s->g;
  double dx = jl_edge(&g->block, e[0]), dy = jl_edge(&g->block, e[1]), dz = jl_edge(&g->block, e[2]);
  double q[4];
  jl_perm_quat(e, q);
  jl_obb o;
  int count = 0;
  int nx = (int)floor((s->hi[0] + g->tol - s->lo[0] - ox) / dx);
  int ny = (int)floor((s->hi[1] + g->tol - s->lo[1] - oy) / dy);
  for (int i = 0; i < nx; ++i)
    for (int k = 0; k < ny; ++k) {
      double c[3] = {s->lo[0] + ox + i * dx + 0.5 * dx, s->lo[1] + oy + k * dy + 0.5 * dy, z + 0.5 * dz};
      jl_obb_from_block(&g->block, c, q, &o);
      ++*tested;
      if (jl_trunk_box_surface_depth(g, &o, 1, NULL) > g->tol) continue;
      if (!jl_trunk_point_inside(g, c)) continue;
      ++count;
      if (out && jl_block_packing_push(out, c, q, NULL) != JL_OK) return -1;
    }
  return count;
}

static void jl_layer_edges(int vertical, int swap, int e[3]) {
  int a = (vertical + 1) % 3, b = (vertical + 2) % 3;
  if (a > b) { int t = a; a = b; b = t; }
  e[0] = swap ? b : a;
  e[1] = swap ? a : b;
  e[2] = vertical;
}

static void jl_run_job(const jl_baseline_shared *s, jl_baseline_job *j) {
  const jl_trunk_geom *g = s->g;
  double h = jl_edge(&g->block, j->vertical);
  j->z0 = (double)j->k * h / s->offsets;
  int n_layers = (int)floor((s->hi[2] + g->tol - s->lo[2] - j->z0) / h);
  if (n_layers < 0) n_layers = 0;
  j->layer = calloc((size_t)(n_layers > 0 ? n_layers : 1), sizeof *j->layer);
  if (!j->layer) { j->count = -1; return; }
  j->n_layers = n_layers;
  for (int L = 0; L < n_layers; ++L) {
    double z = s->lo[2] + j->z0 + L * h;
    jl_layer_choice best = {0, 0, 0, 0};
    for (int swap = 0; swap < 2; ++swap) {
      int e[3];
      jl_layer_edges(j->vertical, swap, e);
      if (swap && jl_edge(&g->block, e[0]) == jl_edge(&g->block, e[1])) continue;
      double dx = jl_edge(&g->block, e[0]), dy = jl_edge(&g->block, e[1]);
      for (int ix = 0; ix < s->offsets; ++ix)
        for (int iy = 0; iy < s->offsets; ++iy) {
          double ox = ix * dx / s->offsets, oy = iy * dy / s->offsets;
          int c = jl_layer_count(s, e, z, ox, oy, &j->tested, NULL);
          if (c > best.count) {
            best.count = c;
            best.swap = swap;
            best.ox = ox;
            best.oy = oy;
          }
        }
    }
    j->layer[L] = best;
    j->count += best.count;
    j->layers += best.count > 0;
  }
}

static void *jl_baseline_worker(void *arg) {
  jl_baseline_shared *s = arg;
  for (;;) {
    int i = atomic_fetch_add(&s->next, 1);
    if (i >= s->n_jobs) break;
    jl_run_job(s, &s->jobs[i]);
  }
  return NULL;
}

int jl_trunk_baseline(const jl_trunk_geom *g, int threads, int offsets, jl_block_packing *out,
                      jl_baseline_info *info, jl_error *err) {
  double t0 = jl_time_now();
  jl_baseline_shared s;
  memset(&s, 0, sizeof s);
  s.g = g;
  jl_mesh_bounds(g->mesh, s.lo, s.hi);
  s.offsets = offsets > 0 ? offsets : JL_BASELINE_OFFSETS;
  s.n_jobs = 3 * s.offsets;
  s.jobs = calloc((size_t)s.n_jobs, sizeof *s.jobs);
  if (!s.jobs) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the baseline");
  for (int v = 0; v < 3; ++v)
    for (int k = 0; k < s.offsets; ++k) {
      s.jobs[v * s.offsets + k].vertical = v;
      s.jobs[v * s.offsets + k].k = k;
    }
  atomic_init(&s.next, 0);
  if (threads < 1) threads = 1;
  if (threads > s.n_jobs) threads = s.n_jobs;
  pthread_t *tid = malloc((size_t)threads * sizeof *tid);
  int started = 0;
  if (tid)
    for (; started < threads - 1; ++started)
      if (pthread_create(&tid[started], NULL, jl_baseline_worker, &s) != 0) break;
  jl_baseline_worker(&s);
  for (int i = 0; i < started; ++i) pthread_join(tid[i], NULL);
  free(tid);
  /* The first job with the largest count wins, whatever thread ran it. */
  int best = -1, rc = JL_OK;
  long long tested = 0;
  for (int i = 0; i < s.n_jobs; ++i) {
    if (s.jobs[i].count < 0) rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory in the baseline");
    tested += s.jobs[i].tested;
    if (best < 0 || s.jobs[i].count > s.jobs[best].count) best = i;
  }
  out->count = 0;
  if (!rc) {
    const jl_baseline_job *j = &s.jobs[best];
    double h = jl_edge(&g->block, j->vertical);
    for (int L = 0; L < j->n_layers && !rc; ++L) {
      const jl_layer_choice *c = &j->layer[L];
      if (c->count == 0) continue;
      int e[3];
      jl_layer_edges(j->vertical, c->swap, e);
      long long t = 0;
      int got = jl_layer_count(&s, e, s.lo[2] + j->z0 + L * h, c->ox, c->oy, &t, out);
      if (got != c->count) rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory in the baseline");
    }
    if (!rc) {
      jl_trunk_report rep;
      rc = jl_trunk_check_packing(g, out, &rep, err);
      if (!rc && !rep.legal) {
        char why[256];
        jl_trunk_report_describe(&rep, why, sizeof why);
        rc = jl_error_set(err, JL_ERR_INTERNAL, "internal error: the baseline packing failed the exact check: %s", why);
      }
    }
    if (info && !rc) {
      info->count = out->count;
      info->vertical = j->vertical;
      info->z_offset = j->z0;
      info->layers = j->layers;
      info->boxes_tested = tested;
      info->time_s = jl_time_now() - t0;
    }
  }
  for (int i = 0; i < s.n_jobs; ++i) free(s.jobs[i].layer);
  free(s.jobs);
  return rc;
}
