#include "stop_flag.h"
#include "trunk_reach.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "timer.h"
#include "math3d.h"
#include "mesh.h"
#include "trunk_tilt.h"

/* Block edges in voxels: an edge within this share of a whole number of
 * voxels spans that many (200 mm at 2.5 mm voxels is 80, not 81). */
#define JL_REACH_RUN_EPS 1e-6

void jl_reach_config_default(jl_reach_config *c) {
  memset(c, 0, sizeof *c);
  c->block = (jl_block_size){JL_BLOCK_DIN_X, JL_BLOCK_DIN_Y, JL_BLOCK_DIN_Z};
}

static void jl_reach_turn(int axis, double deg, double rows[3][3]) {
  double a = deg * (JL_PI / 180.0), c = cos(a), s = sin(a);
  int u = (axis + 1) % 3, w = (axis + 2) % 3;
  memset(rows, 0, 9 * sizeof(double));
  rows[axis][axis] = 1.0;
  rows[u][u] = c;
  rows[u][w] = s;
  rows[w][u] = -s;
  rows[w][w] = c;
}

int jl_reach_frames(const jl_mesh *mesh, int tilts, int faces, double deadline, const volatile sig_atomic_t *stop,
                    jl_reach_frame *frames, int cap, int *n, int *n_faces, jl_error *err) {
  *n = 0;
  *n_faces = 0;
  if (cap < 1) return jl_error_set(err, JL_ERR_INPUT, "reachable volume: no room for frames");
  memset(&frames[0], 0, sizeof frames[0]);
  for (int d = 0; d < 3; ++d) frames[0].rows[d][d] = 1.0;
  frames[0].kind = JL_REACH_FRAME_AXES;
  *n = 1;
  if (faces) {
    jl_tilt_plane planes[JL_TILT_MAX_PLANES];
    int np = 0, cut = 0;
    jl_trunk_limits lim = {deadline, stop, 0.0};
    int rc = jl_trunk_tilt_planes_until(mesh, JL_TILT_MIN_AREA_FRAC, planes, JL_TILT_MAX_PLANES, &np, &lim, &cut,
                                        err);
    if (rc) return rc;  /* cut short: no face frames (np = 0) */
    for (int p = 0; p < np && *n < cap; ++p) {
      jl_reach_frame *f = &frames[(*n)++];
      memset(f, 0, sizeof *f);
      jl_trunk_tilt_frame(planes[p].n, f->rows);
      f->kind = JL_REACH_FRAME_FACE;
      (*n_faces)++;
    }
  }
  if (tilts) {
    static const double angles[JL_REACH_N_TILT_ANGLES] = JL_REACH_TILT_ANGLES;
    static const int axes[3] = {1, 0, 2};  /* about y first: seat backs and rear walls slope in x */
    for (int a = 0; a < JL_REACH_N_TILT_ANGLES; ++a)
      for (int q = 0; q < 3 && *n < cap; ++q) {
        jl_reach_frame *f = &frames[(*n)++];
        memset(f, 0, sizeof *f);
        jl_reach_turn(axes[q], angles[a], f->rows);
        f->kind = JL_REACH_FRAME_TILT;
        f->axis = axes[q];
        f->angle_deg = angles[a];
      }
  }
  return JL_OK;
}

static int jl_reach_is_identity(const double rows[3][3]) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      if (rows[r][c] != (r == c ? 1.0 : 0.0)) return 0;
  return 1;
}

static void jl_reach_world_grid(const jl_voxel_map *m, jl_reach_grid *g) {
  memset(g, 0, sizeof *g);
  for (int d = 0; d < 3; ++d) {
    g->rows[d][d] = 1.0;
    g->origin[d] = m->origin[d];
    g->dim[d] = m->dim[d];
  }
  g->v = m->v;
  g->words = jl_reach_row_words(g->dim[0]);
  g->n_words = (size_t)g->words * (size_t)g->dim[1] * (size_t)g->dim[2];
}

size_t jl_reach_world_words(const jl_voxel_map *m) {
  return (size_t)jl_reach_row_words(m->dim[0]) * (size_t)m->dim[1] * (size_t)m->dim[2];
}

void jl_reach_pack(const jl_voxel_map *m, uint64_t *bits) {
  int nx = m->dim[0], words = jl_reach_row_words(nx);
  size_t rows = (size_t)m->dim[1] * (size_t)m->dim[2];
  memset(bits, 0, rows * (size_t)words * sizeof *bits);
  for (size_t r = 0; r < rows; ++r)
    for (int i = 0; i < nx; ++i)
      if (m->free[r * (size_t)nx + (size_t)i]) bits[r * (size_t)words + (size_t)(i >> 6)] |= (uint64_t)1 << (i & 63);
}

/* The frame-coordinate bounding box of a world box. */
static void jl_reach_turned_box(const double rows[3][3], const double box[2][3], double lo[3], double hi[3]) {
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
  for (int c = 0; c < 8; ++c) {
    double p[3];
    for (int d = 0; d < 3; ++d) p[d] = box[(c >> d) & 1][d];
    for (int r = 0; r < 3; ++r) {
      double q = rows[r][0] * p[0] + rows[r][1] * p[1] + rows[r][2] * p[2];
      lo[r] = fmin(lo[r], q);
      hi[r] = fmax(hi[r], q);
    }
  }
}

void jl_reach_frame_grid(const jl_voxel_map *m, const jl_reach_frame *f, const double box[2][3],
                         jl_reach_grid *g) {
  if (jl_reach_is_identity(f->rows)) {
    jl_reach_world_grid(m, g);
    return;
  }
  memset(g, 0, sizeof *g);
  memcpy(g->rows, f->rows, sizeof g->rows);
  g->v = m->v;
  double whole[2][3], lo[3], hi[3], clo[3], chi[3];
  for (int d = 0; d < 3; ++d) {
    whole[0][d] = m->origin[d];
    whole[1][d] = m->origin[d] + m->dim[d] * m->v;
  }
  jl_reach_turned_box(f->rows, (const double(*)[3])whole, lo, hi);
  if (box) {  /* a part: on the whole's lattice, so it opens to the same voxels */
    jl_reach_turned_box(f->rows, box, clo, chi);
    for (int d = 0; d < 3; ++d) {
      lo[d] += floor(fmax(0.0, clo[d] - lo[d]) / g->v) * g->v;
      hi[d] = fmin(hi[d], chi[d]);
    }
  }
  for (int d = 0; d < 3; ++d) {
    g->origin[d] = lo[d];
    g->dim[d] = (int)ceil((hi[d] - lo[d]) / g->v) + 1;
  }
  g->words = jl_reach_row_words(g->dim[0]);
  g->n_words = (size_t)g->words * (size_t)g->dim[1] * (size_t)g->dim[2];
}

/* Distinct assignments of the block's edges (in voxels) to the frame's
 * axes: 6 for three different edges. */
static int jl_reach_perms(jl_block_size b, double v, int s[6][3]) {
  int e[3] = {(int)ceil(b.x / v - JL_REACH_RUN_EPS), (int)ceil(b.y / v - JL_REACH_RUN_EPS),
              (int)ceil(b.z / v - JL_REACH_RUN_EPS)};
  static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int n = 0;
  for (int p = 0; p < 6; ++p) {
    int t[3] = {e[perm[p][0]], e[perm[p][1]], e[perm[p][2]]}, dup = 0;
    for (int q = 0; q < n && !dup; ++q) dup = s[q][0] == t[0] && s[q][1] == t[1] && s[q][2] == t[2];
    if (dup) continue;
    memcpy(s[n++], t, sizeof t);
  }
  return n;
}

/* ---- the CPU twin: each pass split over threads by rows of x ---- */

typedef struct jl_reach_job {
  int op;                  /* JL_REACH_OP_* */
  const uint64_t *in;      /* pass, union: input; cover, back: the source map */
  uint64_t *out;
  const uint64_t *mask;    /* back: only where mask is set */
  const uint32_t *sat;     /* cover: the source's prefix counts (jl_reach_sat) */
  int dim[3], words;       /* the grid written */
  jl_reach_pass pass;
  jl_reach_xform xf;
} jl_reach_job;

enum { JL_REACH_OP_PASS = 0, JL_REACH_OP_UNION = 1, JL_REACH_OP_COVER = 2, JL_REACH_OP_BACK = 3 };

/* Prefix counts of the world's set voxels: sat[(i, j, k)] over (nx + 1)
 * (ny + 1) (nz + 1) corners counts the set voxels below i, j and k. */
static uint32_t *jl_reach_sat(const jl_voxel_map *m) {
  size_t ax = (size_t)m->dim[0] + 1, ay = (size_t)m->dim[1] + 1, az = (size_t)m->dim[2] + 1;
  uint32_t *s = calloc(ax * ay * az, sizeof *s);
  if (!s) return NULL;
  for (size_t k = 1; k < az; ++k)
    for (size_t j = 1; j < ay; ++j)
      for (size_t i = 1; i < ax; ++i) {
        size_t q = i + ax * (j + ay * k);
        s[q] = m->free[(i - 1) + (size_t)m->dim[0] * ((j - 1) + (size_t)m->dim[1] * (k - 1))] + s[q - 1] +
               s[q - ax] - s[q - ax - 1] + s[q - ax * ay] - s[q - ax * ay - 1] - s[q - ax * ay - ax] +
               s[q - ax * ay - ax - 1];
      }
  return s;
}

/* Set voxels of the source in [lo, hi] (inclusive, within the grid). */
static uint32_t jl_reach_sat_count(const uint32_t *s, const int dim[3], const int lo[3], const int hi[3]) {
  size_t ax = (size_t)dim[0] + 1, ay = (size_t)dim[1] + 1;
  size_t x0 = (size_t)lo[0], x1 = (size_t)hi[0] + 1, y0 = (size_t)lo[1], y1 = (size_t)hi[1] + 1;
  size_t z0 = (size_t)lo[2], z1 = (size_t)hi[2] + 1;
#define JL_SAT(x, y, z) s[(x) + ax * ((y) + ay * (z))]
  return JL_SAT(x1, y1, z1) - JL_SAT(x0, y1, z1) - JL_SAT(x1, y0, z1) - JL_SAT(x1, y1, z0) + JL_SAT(x0, y0, z1) +
         JL_SAT(x0, y1, z0) + JL_SAT(x1, y0, z0) - JL_SAT(x0, y0, z0);
#undef JL_SAT
}

/* Voxels of a row whose covers jl_reach_cover_word_sat answers at once
 * where it can. */
#define JL_REACH_CHUNK 32

/* jl_reach_cover_word, answered for a chunk of voxels of the word at once
 * where the source box around all their boxes is empty (0) or full and
 * inside the grid (every voxel's box then holds a set voxel): the same
 * bits, most chunks of a frame without a cover per voxel. */
static uint64_t jl_reach_cover_word_sat(const jl_reach_xform *x, const uint64_t *src, const uint32_t *sat, int nx,
                                        int w, int j, int k) {
  uint64_t out = 0;
  for (int c0 = 64 * w; c0 < nx && c0 < 64 * w + 64; c0 += JL_REACH_CHUNK) {
    int c1 = nx - 1 < c0 + JL_REACH_CHUNK - 1 ? nx - 1 : c0 + JL_REACH_CHUNK - 1;
    int lo[3], hi[3], inside = 1, empty = 0;
    long long box = 1;
    for (int d = 0; d < 3 && !empty; ++d) {
      double rest = x->b[d] + x->a[3 * d + 1] * (double)j + x->a[3 * d + 2] * (double)k;
      double u0 = rest + x->a[3 * d] * (double)c0, u1 = rest + x->a[3 * d] * (double)c1;
      /* widened past any rounding of the per-voxel u */
      double l = floor(fmin(u0, u1) - x->r[d] - 1e-6), h = ceil(fmax(u0, u1) + x->r[d] + 1e-6) - 1.0;
      if (l < 0.0) { l = 0.0; inside = 0; }
      if (h > (double)(x->dim[d] - 1)) { h = (double)(x->dim[d] - 1); inside = 0; }
      empty = l > h;
      lo[d] = (int)l;
      hi[d] = (int)h;
      box *= hi[d] - lo[d] + 1;
    }
    if (empty) continue;
    uint32_t n = jl_reach_sat_count(sat, x->dim, lo, hi);
    if (n == 0) continue;
    if (inside && (long long)n == box) {
      for (int i = c0; i <= c1; ++i) out |= (uint64_t)1 << (i & 63);
      continue;
    }
    for (int i = c0; i <= c1; ++i)
      if (jl_reach_cover(x, src, i, j, k)) out |= (uint64_t)1 << (i & 63);
  }
  return out;
}

static void jl_reach_rows(const jl_reach_job *jb) {
  int ny = jb->dim[1], nz = jb->dim[2], words = jb->words;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) {
      size_t base = jl_reach_widx(words, ny, 0, j, k);
      uint64_t *out = jb->out + base;
      switch (jb->op) {
      case JL_REACH_OP_PASS:
        for (int w = 0; w < words; ++w) out[w] = jl_reach_step_word(jb->in, jb->dim, words, w, j, k, jb->pass);
        break;
      case JL_REACH_OP_UNION:
        for (int w = 0; w < words; ++w) out[w] |= jb->in[base + (size_t)w];
        break;
      case JL_REACH_OP_COVER:
        for (int w = 0; w < words; ++w) out[w] = jl_reach_cover_word_sat(&jb->xf, jb->in, jb->sat, jb->dim[0], w, j, k);
        break;
      case JL_REACH_OP_BACK:
        for (int w = 0; w < words; ++w)
          out[w] = jl_reach_back_word(&jb->xf, jb->in, jb->mask[base + (size_t)w], out[w], w, j, k);
        break;
      }
    }
}

/* Frames run in parallel, each on one thread: a pass over a bit map is
 * far shorter than starting threads for it on a busy machine. */
static void jl_reach_run_job(jl_reach_job *jb) { jl_reach_rows(jb); }

typedef struct jl_reach_limits {
  double deadline;
  const volatile sig_atomic_t *stop;
} jl_reach_limits;

static int jl_reach_out_of_time(const jl_reach_limits *l) {
  return jl_stop_requested(l->stop) || (l->deadline > 0.0 && jl_time_now() >= l->deadline);
}

static void jl_reach_job_grid(jl_reach_job *jb, const jl_reach_grid *g) {
  memcpy(jb->dim, g->dim, sizeof jb->dim);
  jb->words = g->words;
}

/* One frame on the CPU: the frame's map (the world map for the identity),
 * then per perm its passes from that map, ORed into uni, then uni moved
 * back into reach. 0 when the limits cut it (reach untouched). */
static int jl_reach_cpu_frame(const jl_reach_grid *wg, const uint64_t *world, const uint32_t *sat,
                              const jl_reach_grid *g,
                              int identity, const jl_reach_xform *to_frame, const jl_reach_xform *to_world,
                              const jl_reach_pass *passes, const int *npasses, int n_perms, uint64_t *buf[4],
                              uint64_t *reach, const jl_reach_limits *lim) {
  jl_reach_job jb;
  memset(&jb, 0, sizeof jb);
  jl_reach_job_grid(&jb, g);
  const uint64_t *free_map = world;
  if (!identity) {
    jb.op = JL_REACH_OP_COVER;
    jb.in = world;
    jb.sat = sat;
    jb.out = buf[0];
    jb.xf = *to_frame;
    jl_reach_run_job(&jb);
    free_map = buf[0];
  }
  uint64_t *uni = buf[3];
  memset(uni, 0, g->n_words * sizeof *uni);
  for (int p = 0; p < n_perms; ++p) {
    const uint64_t *in = free_map;
    uint64_t *pp[2] = {buf[1], buf[2]};
    int cur = 0;
    for (int q = 0; q < npasses[p]; ++q) {
      if (jl_reach_out_of_time(lim)) return 0;
      jb.op = JL_REACH_OP_PASS;
      jb.in = in;
      jb.out = pp[cur];
      jb.pass = passes[p * JL_REACH_MAX_PASSES + q];
      jl_reach_run_job(&jb);
      in = pp[cur];
      cur ^= 1;
    }
    jb.op = JL_REACH_OP_UNION;
    jb.in = in;
    jb.out = uni;
    jl_reach_run_job(&jb);
  }
  jl_reach_job_grid(&jb, wg);
  jb.in = uni;
  jb.out = reach;
  if (identity) {
    jb.op = JL_REACH_OP_UNION;
  } else {
    jb.op = JL_REACH_OP_BACK;
    jb.mask = world;
    jb.xf = *to_world;
  }
  jl_reach_run_job(&jb);
  return 1;
}

/* The frame's grid and, unless it is the identity (returns 1), the maps
 * from the frame's grid into the world's and back. */
static int jl_reach_frame_maps(const jl_voxel_map *world, const jl_reach_grid *wg, const jl_reach_frame *f,
                               const double box[2][3], jl_reach_grid *g, jl_reach_xform *to_frame,
                               jl_reach_xform *to_world) {
  jl_reach_frame_grid(world, f, box, g);
  memset(to_frame, 0, sizeof *to_frame);
  memset(to_world, 0, sizeof *to_world);
  if (jl_reach_is_identity(f->rows)) return 1;
  jl_reach_xform_make(g, wg, to_frame);
  jl_reach_xform_make(wg, g, to_world);
  return 0;
}

typedef struct jl_reach_cpu {
  const jl_voxel_map *world;
  const jl_reach_grid *wg;
  const uint64_t *wbits;
  const uint32_t *sat;
  const jl_reach_frame *frames;
  int n_frames;
  const double (*box)[3];  /* the part of the world the frames need (NULL: all) */
  const jl_reach_pass *passes;
  const int *npasses;
  int n_perms;
  size_t cap;
  const jl_reach_limits *lim;
  atomic_int next, done;
  uint64_t *reach[JL_MAX_THREADS];  /* each thread's union of its frames */
  int failed[JL_MAX_THREADS];
} jl_reach_cpu;

/* Takes frames from the counter until they run out or the limits hit. */
static void jl_reach_cpu_worker(void *ctx, int t, int nt) {
  (void)nt;
  jl_reach_cpu *c = ctx;
  uint64_t *buf[4] = {NULL, NULL, NULL, NULL};
  size_t nw = c->wg->n_words;
  c->reach[t] = calloc(nw, sizeof *c->reach[t]);
  for (int b = 0; b < 4; ++b) buf[b] = malloc(c->cap * sizeof *buf[b]);
  if (!c->reach[t] || !buf[0] || !buf[1] || !buf[2] || !buf[3]) {
    c->failed[t] = 1;
  } else {
    for (;;) {
      int f = atomic_fetch_add(&c->next, 1);
      if (f >= c->n_frames || jl_reach_out_of_time(c->lim)) break;
      jl_reach_grid g;
      jl_reach_xform to_frame, to_world;
      int identity = jl_reach_frame_maps(c->world, c->wg, &c->frames[f], c->box, &g, &to_frame, &to_world);
      if (!jl_reach_cpu_frame(c->wg, c->wbits, c->sat, &g, identity, &to_frame, &to_world, c->passes, c->npasses,
                              c->n_perms, buf, c->reach[t], c->lim))
        break;
      atomic_fetch_add(&c->done, 1);
    }
  }
  for (int b = 0; b < 4; ++b) free(buf[b]);
}

static int jl_reach_cpu_frames(const jl_reach_grid *wg, const jl_voxel_map *world, const uint64_t *wbits,
                               const uint32_t *sat, const jl_reach_frame *frames, int n_frames,
                               const double box[2][3], const jl_reach_pass *passes,
                               const int *npasses, int n_perms, size_t cap, int threads,
                               const jl_reach_limits *lim, uint64_t *reach, int *done, jl_error *err) {
  jl_reach_cpu *c = calloc(1, sizeof *c);
  if (!c) return jl_error_set(err, JL_ERR_NOMEM, "out of memory for the reachable volume");
  *c = (jl_reach_cpu){.world = world, .wg = wg, .wbits = wbits, .sat = sat, .frames = frames,
                      .n_frames = n_frames, .box = box, .passes = passes, .npasses = npasses, .n_perms = n_perms, .cap = cap,
                      .lim = lim};
  atomic_init(&c->next, 0);
  atomic_init(&c->done, 0);
  int nt = jl_parallel_threads(threads, n_frames, 1);
  jl_parallel_run(nt, jl_reach_cpu_worker, c);
  int rc = JL_OK;
  for (int t = 0; t < nt; ++t) {
    if (c->failed[t]) rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the reachable volume (%zu words a frame)", cap);
    if (c->reach[t])
      for (size_t q = 0; q < wg->n_words; ++q) reach[q] |= c->reach[t][q];
    free(c->reach[t]);
  }
  *done = atomic_load(&c->done);
  free(c);
  return rc;
}

/* The world box (mm) the frames after the first need: voxels of world
 * that reach lacks, their bounding box grown by the block's diameter (every
 * block that covers one of them lies within it) and two voxels (the moves
 * between grids), within the map. Opened in this part alone, a frame adds
 * to reach the same voxels as in the whole. */
static void jl_reach_left_box(const jl_voxel_map *m, const jl_reach_grid *wg, const uint64_t *world,
                              const uint64_t *reach, jl_block_size b, double box[2][3]) {
  int lo[3] = {m->dim[0], m->dim[1], m->dim[2]}, hi[3] = {-1, -1, -1};
  for (int k = 0; k < m->dim[2]; ++k)
    for (int j = 0; j < m->dim[1]; ++j)
      for (int w = 0; w < wg->words; ++w) {
        size_t q = jl_reach_widx(wg->words, m->dim[1], w, j, k);
        uint64_t left = world[q] & ~reach[q];
        if (!left) continue;
        int c[3] = {64 * w + __builtin_ctzll(left), j, k}, c1 = 64 * w + 63 - __builtin_clzll(left);
        for (int d = 0; d < 3; ++d) {
          if (c[d] < lo[d]) lo[d] = c[d];
          if ((d == 0 ? c1 : c[d]) > hi[d]) hi[d] = d == 0 ? c1 : c[d];
        }
      }
  double grow = sqrt(b.x * b.x + b.y * b.y + b.z * b.z) + 2.0 * m->v;
  for (int d = 0; d < 3; ++d) {
    double top = m->origin[d] + m->dim[d] * m->v;
    box[0][d] = fmax(m->origin[d], m->origin[d] + lo[d] * m->v - grow);
    box[1][d] = fmin(top, m->origin[d] + (hi[d] + 1) * m->v + grow);
    if (hi[d] < 0) box[0][d] = box[1][d] = m->origin[d];  /* nothing left */
  }
}

/* 1 when reach holds every voxel of world. */
static int jl_reach_all(const uint64_t *world, const uint64_t *reach, size_t n_words) {
  for (size_t q = 0; q < n_words; ++q)
    if (world[q] & ~reach[q]) return 0;
  return 1;
}

int jl_reach_open(const jl_voxel_map *world, const jl_reach_frame *frames, int n_frames,
                  jl_block_size block, int cuda, int threads, double deadline,
                  const volatile sig_atomic_t *stop, uint64_t *reach, int *done, jl_error *err) {
  *done = 0;
  jl_reach_limits lim = {deadline, stop};
  jl_reach_grid wg;
  jl_reach_world_grid(world, &wg);
  memset(reach, 0, wg.n_words * sizeof *reach);
  int s[6][3];
  int n_perms = jl_reach_perms(block, world->v, s);
  jl_reach_pass *passes = malloc((size_t)6 * JL_REACH_MAX_PASSES * sizeof *passes);
  uint64_t *wbits = malloc(wg.n_words * sizeof *wbits);
  uint32_t *sat = NULL;
  double box[2][3];        /* after the first frame: the part of the world the others need */
  int npasses[6];
  int rc = JL_OK;
#ifdef JL_HAVE_CUDA
  jl_cuda_reach *dc = NULL;
  char msg[256] = "";
#endif
  if (!passes || !wbits) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the reachable volume");
    goto done;
  }
  for (int p = 0; p < n_perms; ++p) npasses[p] = jl_reach_plan(s[p], passes + p * JL_REACH_MAX_PASSES);
  jl_reach_pack(world, wbits);
  size_t cap = wg.n_words;
  for (int f = 0; f < n_frames; ++f) {
    jl_reach_grid g;
    jl_reach_frame_grid(world, &frames[f], NULL, &g);
    if (g.n_words > cap) cap = g.n_words;
  }
  if (!cuda) {
    /* the first frame alone: when it reaches every voxel the others can add none */
    rc = jl_reach_cpu_frames(&wg, world, wbits, NULL, frames, n_frames > 0 ? 1 : 0, NULL, passes, npasses,
                             n_perms, cap, threads, &lim, reach, done, err);
    if (rc || *done < 1) goto done;
    if (jl_reach_all(wbits, reach, wg.n_words)) {
      *done = n_frames;
      goto done;
    }
    jl_reach_left_box(world, &wg, wbits, reach, block, box);
    int more = 0;
    if (!(sat = jl_reach_sat(world))) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the reachable volume");
      goto done;
    }
    rc = jl_reach_cpu_frames(&wg, world, wbits, sat, frames + 1, n_frames - 1, (const double(*)[3])box, passes,
                             npasses, n_perms, cap, threads, &lim, reach, &more, err);
    *done += more;
    goto done;
  }
#ifdef JL_HAVE_CUDA
  if (jl_cuda_reach_create(&dc, wbits, world->dim, cap, msg, (int)sizeof msg) != 0) {
    rc = jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
    goto done;
  }
  for (int f = 0; f < n_frames; ++f) {
    if (jl_reach_out_of_time(&lim)) break;
    jl_reach_grid g;
    jl_reach_xform to_frame, to_world;
    int identity = jl_reach_frame_maps(world, &wg, &frames[f], f > 0 ? (const double(*)[3])box : NULL, &g,
                                       &to_frame, &to_world);
    if (jl_cuda_reach_frame(dc, g.dim, identity, &to_frame, &to_world, passes, npasses, n_perms, msg,
                            (int)sizeof msg) != 0) {
      rc = jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
      goto done;
    }
    (*done)++;
    if (f == 0) {  /* as on the CPU: the first frame may leave the others nothing */
      if (jl_cuda_reach_fetch(dc, reach, msg, (int)sizeof msg) != 0) {
        rc = jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
        goto done;
      }
      if (jl_reach_all(wbits, reach, wg.n_words)) {
        *done = n_frames;
        goto done;
      }
      jl_reach_left_box(world, &wg, wbits, reach, block, box);
    }
  }
  if (jl_cuda_reach_fetch(dc, reach, msg, (int)sizeof msg) != 0)
    rc = jl_error_set(err, JL_ERR_DEVICE, "CUDA: %s", msg);
#else
  rc = jl_error_set(err, JL_ERR_DEVICE, "the reachable volume on CUDA: built without CUDA");
#endif
done:
#ifdef JL_HAVE_CUDA
  jl_cuda_reach_destroy(dc);
#endif
  free(passes);
  free(wbits);
  free(sat);
  return rc;
}

double jl_reach_volume(const jl_voxel_map *m, const uint64_t *mark, const jl_voxel_part *parts,
                       size_t n_parts) {
  size_t whole = 0, nw = jl_reach_world_words(m);
  for (size_t q = 0; q < nw; ++q) whole += (size_t)__builtin_popcountll(mark[q]);
  double missing = 0.0;  /* the outside share of the marked voxels the surface cuts */
  for (size_t q = 0; q < n_parts; ++q)
    if (jl_reach_bit(m, mark, parts[q].idx)) missing += 1.0 - parts[q].inside;
  return ((double)whole - missing) * m->v * m->v * m->v;
}

int jl_trunk_reach(const jl_mesh *mesh, const jl_reach_config *cfg, jl_reach_info *info, jl_error *err) {
  memset(info, 0, sizeof *info);
  double t0 = jl_time_now();
  jl_block_size b = cfg->block;
  if (!(b.x > 0.0 && b.y > 0.0 && b.z > 0.0) || !isfinite(b.x + b.y + b.z))
    return jl_error_set(err, JL_ERR_INPUT, "reachable volume: block %gx%gx%g mm", b.x, b.y, b.z);
  double shortest = fmin(b.x, fmin(b.y, b.z));
  double voxel = cfg->voxel > 0.0 ? cfg->voxel
                                  : shortest / (cfg->cuda ? JL_REACH_VOXELS_PER_EDGE_CUDA : JL_REACH_VOXELS_PER_EDGE_CPU);
  double max_voxels = cfg->max_voxels > 0.0 ? cfg->max_voxels
                                            : cfg->cuda ? JL_REACH_MAX_VOXELS_CUDA : JL_REACH_MAX_VOXELS_CPU;
  jl_reach_frame frames[JL_REACH_MAX_FRAMES];
  int n_frames = 0;
  int rc = jl_reach_frames(mesh, !cfg->no_tilts, !cfg->no_faces, cfg->deadline, cfg->stop, frames,
                           JL_REACH_MAX_FRAMES, &n_frames, &info->faces, err);
  if (rc) return rc;
  info->frames = n_frames;
  jl_voxel_map m;
  jl_voxel_part *parts = NULL;
  size_t n_parts = 0;
  uint64_t *reach = NULL, *free_bits = NULL;
  int cut = 0;
  rc = jl_voxel_map_build(&m, mesh, voxel, max_voxels, JL_VOXEL_OUTER, cfg->threads, cfg->deadline, cfg->stop,
                          &cut, err);
  if (!rc && !cut)
    rc = jl_voxel_map_parts(&m, mesh, JL_REACH_PART_RAYS, cfg->threads, cfg->deadline, cfg->stop, &parts,
                            &n_parts, &cut, err);
  info->voxel = m.v;
  memcpy(info->dim, m.dim, sizeof info->dim);
  if (rc || cut) goto done;
  size_t nw = jl_reach_world_words(&m);
  reach = malloc(nw * sizeof *reach);
  free_bits = malloc(nw * sizeof *free_bits);
  if (!reach || !free_bits) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "out of memory for the reachable volume (%zu voxels)", m.n);
    goto done;
  }
  rc = jl_reach_open(&m, frames, n_frames, b, cfg->cuda, cfg->threads, cfg->deadline, cfg->stop, reach,
                     &info->frames_done, err);
  if (rc || info->frames_done < 1) goto done;
  double bvol = b.x * b.y * b.z, vol = jl_mesh_volume(mesh);
  info->measured = 1;
  info->complete = info->frames_done == n_frames;
  jl_reach_pack(&m, free_bits);
  info->cover_mm3 = jl_reach_volume(&m, free_bits, parts, n_parts);
  info->volume_mm3 = fmin(jl_reach_volume(&m, reach, parts, n_parts), vol);
  /* floor with room for rounding: an upper bound may round up, not down */
  info->bound = (long)floor(info->volume_mm3 / bvol * (1.0 + 1e-12));
done:
  info->time_s = jl_time_now() - t0;
  free(reach);
  free(free_bits);
  free(parts);
  jl_voxel_map_free(&m);
  return rc;
}
