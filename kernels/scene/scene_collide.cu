// Collision detection of the scene step on the device: broad phase by a
// uniform grid, one cell per small body (grid_pairs.h), its entries sorted
// by their cells' buckets (CUB radix sort), candidate pairs by
// count + scan + write, sorted by (a, b) like the CPU's (broad_phase.h);
// narrow phase one thread per pair calling src/scene/narrow_phase.h, contacts by
// count + scan + write in pair order, so they equal jl_collide's (the device
// step keeps only the closed ones: jl_collide_opts); with boxes the count
// also stages each pair's points and a gather writes them, so each manifold
// is computed once (jl_np_staged). Only counts and a few
// grid numbers cross to the host: the broad phase's summaries, grid and
// number of cell entries in one copy (jl_bp_head), then the numbers of
// pairs and contacts, each sizing the next buffers, and the write pass's
// fault flag (the device step reads that at its end). A step that keeps its
// pair list reads one copy: the check with the contacts' count (jl_np_same).
#include <cmath>
#include <climits>
#include <cstring>

#include <cub/cub.cuh>

#include "scene_arena.cuh"

#include "broad_math.h"
#include "grid_pairs.h"
#include "collide.h"
#include "narrow_phase.h"
#include "scene_gpu.h"
#include "step_math.h"

struct jl_bp_summary {
  double sum;              // sum of the dynamic bodies' largest box edges
  long long dyn;           // dynamic bodies
  long long bad;           // first body with a non-finite box, or LLONG_MAX
  double lo[3], hi[3];     // bounds of the grid bodies
  double reach[3];         // the one-cell bodies' largest box edge per axis
  long long grid, spans;   // grid bodies; those in several cells (JL_GP_SPAN)
  long long large, planes; // bodies kept out of the grid
  double cell;             // JL_BP_CELL: the cell edge from sum and dyn
};

// What the host reads of the broad phase before the pairs, in one copy: both
// summaries, the grid and the number of (cell, body) entries. The
// summaries' partials follow it in g->summary.
struct jl_bp_head {
  jl_bp_summary cell, bounds;  // the JL_BP_CELL and JL_BP_BOUNDS passes (below)
  jl_grid grid;                // jl_gp_grid_params of the two, on the device
  int grid_ok;                 // finite boxes, a dynamic body and grid bodies: a grid
  long long entries;           // (cell, body) entries of the grid bodies
};

struct jl_gbodies {        // read-only view of the body arrays
  int n;
  const uint8_t *shape, *is_static;
  const double *size, *pos, *quat;
};

static jl_gbodies jl_view(const jl_scene_gpu *g) {
  jl_gbodies v = {g->nb, jl_dp<uint8_t>(g->shape), jl_dp<uint8_t>(g->is_static),
                  jl_dp<double>(g->size), jl_dp<double>(g->pos), jl_dp<double>(g->quat)};
  return v;
}

__global__ void jl_bp_aabb_kernel(jl_gbodies b, double margin, double *aabb, uint8_t *kind) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b.n) return;
  if (b.shape[i] == JL_SHAPE_PLANE) {
    kind[i] = JL_GP_PLANE;
    return;
  }
  jl_bm_aabb(b.shape, b.size, b.pos, b.quat, i, margin, aabb + 6 * (size_t)i);
}

// A kept pair list's boxes: each box widened by its skin (jl_gp_skin: the
// share of the JL_BP_CELL summary's cell edge, and its way ahead at its
// speed; planes have no box).
__global__ void jl_bp_widen_kernel(jl_gbodies b, const double *vel, const double *omega,
                                   const double *aabb, const jl_bp_head *h, double share,
                                   double ahead_s, double *fat) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b.n || b.shape[i] == JL_SHAPE_PLANE) return;
  jl_gp_fatten(b.shape, vel, omega, i, aabb + 6 * (size_t)i, share, h->cell.cell, ahead_s,
               fat + 6 * (size_t)i);
}

// Raises *escaped when a box has left its widened one (or is not finite).
__global__ void jl_bp_inside_kernel(jl_gbodies b, const double *aabb, const double *fat,
                                    int *escaped) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b.n || b.shape[i] == JL_SHAPE_PLANE) return;
  if (!jl_gp_inside(aabb + 6 * (size_t)i, fat + 6 * (size_t)i)) *escaped = 1;
}

// The broad phase's two summaries by a multi-block reduction: at most
// JL_SCENE_REDUCE_PARTIALS blocks each reduce a grid stride of the bodies
// into a partial, and one block joins the partials. Fixed strides and trees,
// so a device gives the same bits every run (the sum of edges may differ
// from the CPU's sequential sum in its last bits; it only sizes the cells,
// and the pairs come out sorted whatever the cells). One block over a
// million boxes was latency-bound: 1.4 and 1.8 ms of a 12 ms collide.
// Pass JL_BP_CELL: the cell edge's inputs (sum of the dynamic bodies'
// longest edges, their count, the first body with a non-finite box) and the
// edge itself, which the classification reads on the device; pass
// JL_BP_BOUNDS: the bounds and count of the grid bodies and the counts of
// large bodies and planes, then the grid itself (the CPU's loop,
// jl_gp_grid_params: exact operations and IEEE division, so its bits), which
// the count pass reads; none when a box is not finite, no body is dynamic or
// no body is in the grid (the host then stops or skips the grid).
enum { JL_BP_CELL = 0, JL_BP_BOUNDS = 1 };

static __device__ void jl_bp_summary_empty(jl_bp_summary *s) {
  s->sum = 0.0;
  s->dyn = 0;
  s->bad = LLONG_MAX;
  for (int k = 0; k < 3; ++k) {
    s->lo[k] = INFINITY;
    s->hi[k] = -INFINITY;
    s->reach[k] = 0.0;
  }
  s->grid = 0;
  s->spans = 0;
  s->large = 0;
  s->planes = 0;
  s->cell = 0.0;
}

static __device__ void jl_bp_summary_merge(jl_bp_summary *a, const jl_bp_summary *b) {
  a->sum += b->sum;
  a->dyn += b->dyn;
  if (b->bad < a->bad) a->bad = b->bad;
  for (int k = 0; k < 3; ++k) {
    a->lo[k] = fmin(a->lo[k], b->lo[k]);
    a->hi[k] = fmax(a->hi[k], b->hi[k]);
    a->reach[k] = fmax(a->reach[k], b->reach[k]);
  }
  a->grid += b->grid;
  a->spans += b->spans;
  a->large += b->large;
  a->planes += b->planes;
}

// Merges the block's s[] into s[0] by a fixed tree (blockDim a power of two).
static __device__ void jl_bp_summary_tree(jl_bp_summary *s) {
  int t = threadIdx.x;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (t < h) jl_bp_summary_merge(&s[t], &s[t + h]);
    __syncthreads();
  }
}

__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_bp_summary_partial_kernel(
    jl_gbodies b, const double *aabb, const uint8_t *kind, int pass, jl_bp_summary *part) {
  __shared__ jl_bp_summary s[JL_SCENE_BLOCK];
  jl_bp_summary m;
  jl_bp_summary_empty(&m);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < b.n;
       i += (long long)gridDim.x * blockDim.x) {
    const double *x = aabb + 6 * (size_t)i;
    if (pass == JL_BP_BOUNDS) {
      if (kind[i] == JL_GP_LARGE) m.large++;
      if (kind[i] == JL_GP_PLANE) m.planes++;
      if (!jl_gp_in_grid(kind[i])) continue;
      for (int k = 0; k < 3; ++k) {
        m.lo[k] = fmin(m.lo[k], x[k]);
        m.hi[k] = fmax(m.hi[k], x[3 + k]);
        if (kind[i] == JL_GP_GRID) m.reach[k] = fmax(m.reach[k], x[3 + k] - x[k]);
      }
      m.grid++;
      m.spans += kind[i] == JL_GP_SPAN;
      continue;
    }
    if (b.shape[i] == JL_SHAPE_PLANE) continue;
    int finite = 1;
    for (int k = 0; k < 6; ++k)
      if (!isfinite(x[k])) finite = 0;
    if (!finite) {
      if (i < m.bad) m.bad = i;
      continue;
    }
    if (!b.is_static[i]) {
      m.sum += jl_bm_longest_edge(x);
      m.dyn++;
    }
  }
  s[threadIdx.x] = m;
  jl_bp_summary_tree(s);
  if (threadIdx.x == 0) part[blockIdx.x] = s[0];
}

__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_bp_summary_join_kernel(
    int parts, const jl_bp_summary *part, int pass, jl_bp_head *h) {
  __shared__ jl_bp_summary s[JL_SCENE_BLOCK];
  jl_bp_summary m;
  jl_bp_summary_empty(&m);
  for (int i = threadIdx.x; i < parts; i += blockDim.x) jl_bp_summary_merge(&m, &part[i]);
  s[threadIdx.x] = m;
  jl_bp_summary_tree(s);
  if (threadIdx.x != 0) return;
  if (pass == JL_BP_CELL) {  // the mean longest edge (IEEE division: the CPU's bits)
    double cell = s[0].dyn > 0 ? s[0].sum / (double)s[0].dyn : 0.0;
    s[0].cell = cell > 0.0 ? cell : 1.0;
    h->cell = s[0];
    return;
  }
  h->bounds = s[0];
  jl_grid gr = {};
  int ok = h->cell.bad == LLONG_MAX && h->cell.dyn > 0 && s[0].grid > 0;
  if (ok) jl_gp_grid_params(h->cell.cell, s[0].lo, s[0].hi, &gr);
  h->grid = gr;
  h->grid_ok = ok;
}

// One summary pass into h (partials in part[0 .. JL_SCENE_REDUCE_PARTIALS)).
static int jl_bp_summarize(jl_gbodies b, const double *aabb, const uint8_t *kind, int pass,
                           jl_bp_head *h, jl_bp_summary *part, char *msg, int msg_len) {
  int parts = jl_scene_blocks(b.n);
  if (parts > JL_SCENE_REDUCE_PARTIALS) parts = JL_SCENE_REDUCE_PARTIALS;
  jl_bp_summary_partial_kernel<<<parts, JL_SCENE_BLOCK>>>(b, aabb, kind, pass, part);
  JL_CUDA_TRY(cudaGetLastError());
  jl_bp_summary_join_kernel<<<1, JL_SCENE_BLOCK>>>(parts, part, pass, h);
  JL_CUDA_TRY(cudaGetLastError());
  return 0;
}

// The lists of large bodies and planes from one flag word per body: large
// in the low 32 bits, plane in the high ones, so one exclusive scan gives
// both offsets (each count stays below 2^31: no carry crosses).
#define JL_BP_FLAG_PLANE (1LL << 32)

// Grid (one cell or spanning) or large (planes are marked already) by the cell edge of the
// JL_BP_CELL summary, and each body's list flag.
__global__ void jl_bp_classify_kernel(jl_gbodies b, const double *aabb, const jl_bp_head *h,
                                      uint8_t *kind, long long *flag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > b.n) return;
  if (i == b.n) {          // the extra slot of the exclusive scan
    flag[i] = 0;
    return;
  }
  if (b.shape[i] == JL_SHAPE_PLANE) {
    flag[i] = JL_BP_FLAG_PLANE;
    return;
  }
  const double *x = aabb + 6 * (size_t)i;
  int large = jl_gp_kind(x, h->cell.cell) == JL_GP_LARGE;
  kind[i] = (uint8_t)(large ? JL_GP_LARGE : jl_gp_grid_kind(x, h->cell.cell));
  flag[i] = large;
}

__global__ void jl_bp_lists_kernel(int n, const long long *flag, const long long *scan,
                                   int *large, int *planes) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !flag[i]) return;
  if (flag[i] == JL_BP_FLAG_PLANE) planes[(int)(scan[i] >> 32)] = i;
  else large[(int)(uint32_t)scan[i]] = i;
}

// Cell range and entries of each grid body in the grid of the head (none
// without a grid): one for a one-cell body, every cell for a spanning one.
__global__ void jl_bp_count_cells_kernel(int n, const double *aabb, const uint8_t *kind,
                                         const jl_bp_head *h, int *cell_range,
                                         long long *count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  long long c = 0;
  if (i < n && h->grid_ok && jl_gp_in_grid(kind[i])) {
    jl_grid gr = h->grid;
    c = jl_gp_cells(&gr, aabb + 6 * (size_t)i, cell_range + 6 * (size_t)i);
    if (kind[i] == JL_GP_GRID) c = 1;
  }
  count[i] = c;
}

__global__ void jl_bp_fill_kernel(int n, const uint8_t *kind, jl_grid gr, jl_gp_table t,
                                  const int *cell_range, const long long *start, uint64_t *keys,
                                  int *vals, int *entry_body, uint64_t *entry_cell) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !jl_gp_in_grid(kind[i])) return;
  jl_gp_fill_table(&gr, t, kind[i], cell_range + 6 * (size_t)i, i, start[i], keys, vals,
                   entry_body, entry_cell);
}

// The sorted entries' bodies and (a hashed table) cells.
__global__ void jl_bp_sorted_kernel(long long m, const int *vals, const int *entry_body,
                                    const uint64_t *entry_cell, int *sorted_body,
                                    uint64_t *sorted_cell) {
  long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= m) return;
  int en = vals[e];
  sorted_body[e] = entry_body[en];
  if (entry_cell) sorted_cell[e] = entry_cell[en];
}

// Each bucket's first sorted entry (and the end after the last bucket).
__global__ void jl_bp_bucket_start_kernel(long long buckets, const uint64_t *keys, int m,
                                          int *bucket_start) {
  long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k > buckets) return;
  bucket_start[k] = jl_gp_lower_bound(keys, m, (uint64_t)k);
}

__global__ void jl_bp_pair_count_kernel(jl_gp_view w, long long *count) {
  int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u > w.n) return;
  count[u] = u < w.n ? jl_gp_partners(&w, u, nullptr) : 0;
}

__global__ void jl_bp_pair_write_kernel(jl_gp_view w, const long long *start, uint64_t *pairs) {
  int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= w.n) return;
  jl_gp_partners(&w, u, pairs + start[u]);
}

__device__ static inline jl_shape_pose jl_pose(const jl_gbodies &b, int i) {
  jl_shape_pose p;
  p.shape = b.shape[i];
  p.pos = jl_v3(b.pos[3 * i], b.pos[3 * i + 1], b.pos[3 * i + 2]);
  p.quat.w = b.quat[4 * i];
  p.quat.x = b.quat[4 * i + 1];
  p.quat.y = b.quat[4 * i + 2];
  p.quat.z = b.quat[4 * i + 3];
  p.size = jl_v3(b.size[3 * i], b.size[3 * i + 1], b.size[3 * i + 2]);
  return p;
}

struct jl_np_out {
  int *a, *b;
  double *point, *normal, *gap;
  uint64_t *key;
  int *fault;
};

// A sphere's or a plane's pose: the round shapes never read the orientation.
__device__ static inline jl_shape_pose jl_pose_round(const jl_gbodies &b, int i) {
  jl_shape_pose p;
  p.shape = b.shape[i];
  p.pos = jl_v3(b.pos[3 * i], b.pos[3 * i + 1], b.pos[3 * i + 2]);
  p.quat.w = 1.0;
  p.quat.x = p.quat.y = p.quat.z = 0.0;
  p.size = jl_v3(b.size[3 * i], b.size[3 * i + 1], b.size[3 * i + 2]);
  return p;
}

// Most points of a pair's manifold: a constant loop bound, so a round
// scene's manifold is indexed by constants and stays in registers.
template <bool kRound>
__device__ constexpr int jl_np_points() {
  return kRound ? 1 : JL_MAX_MANIFOLD;
}

// Pair (u, v), u < v, as collide.c does it: static body as b, else the lower
// index as a. kRound: a scene without boxes (jl_narrow_collide_round, the
// same points: at most one per pair).
template <bool kRound>
__device__ static int jl_np_pair(const jl_gbodies &b, int u, int v, double margin,
                                 jl_manifold *m, int *a_out, int *b_out) {
  int a = u, bb = v;
  if (b.is_static[u] && !b.is_static[v]) {
    a = v;
    bb = u;
  }
  *a_out = a;
  *b_out = bb;
  if (kRound) {
    jl_shape_pose sa = jl_pose_round(b, a), sb = jl_pose_round(b, bb);
    return jl_narrow_collide_round(&sa, &sb, margin, m);
  }
  jl_shape_pose sa = jl_pose(b, a), sb = jl_pose(b, bb);
  return jl_narrow_collide(&sa, &sb, margin, m);
}

// Which of a pair's points the collide keeps: all, or the closed ones
// (the device step: Moreau's index set, step_math.h).
struct jl_np_filter {
  int closed_only;
  double closed_tol;
};

__device__ static inline int jl_np_keeps(const jl_gbodies &b, jl_np_filter f, double gap, int a,
                                         int bb) {
  return !f.closed_only || jl_st_closed(gap, a, bb, b.is_static, f.closed_tol);
}

// A kept list's pair that the boxes of now (live: NULL for a list built
// from them) no longer give: no contacts, as if it were not listed.
__device__ static inline int jl_np_dead(const jl_gbodies &b, const double *live, double margin,
                                        int u, int v) {
  return live && !jl_gp_live(b.shape, b.is_static, b.pos, b.size, live, margin, u, v);
}

__device__ static inline void jl_np_store(const jl_np_out &o, long long c, int a, int bb,
                                          jl_vec3 point, jl_vec3 normal, double gap,
                                          uint64_t key) {
  o.a[c] = a;
  o.b[c] = bb;
  o.point[3 * c] = point.x;
  o.point[3 * c + 1] = point.y;
  o.point[3 * c + 2] = point.z;
  o.normal[3 * c] = normal.x;
  o.normal[3 * c + 1] = normal.y;
  o.normal[3 * c + 2] = normal.z;
  o.gap[c] = gap;
  o.key[c] = key;
}

// What the host reads after the count pass, in one copy: the number of
// contacts, whether any pair's count differs from the last (diff) and, on
// a step that counts a kept list before knowing it stands, whether a box
// left its widened one (escaped).
struct jl_np_same {
  long long total;
  int diff;
  int escaped;
};

// Also splits the sorted pair keys (min << 32 | max) into pa, pb (the
// write pass and jl_cuda_scene_get_pairs read those; pairs NULL: a kept
// list, split when it was built). The extra thread (p == m_pairs) ends the
// counts with 0 for the exclusive scan and clears the write pass's fault
// flag (no launches of their own). diff (a kept list's step after a step
// that counted it; else NULL): raised when a pair counts other than what
// count[p] holds from that step. stage.a (else NULL): each kept point also
// into the pair's own slots p * JL_MAX_MANIFOLD + w, for jl_np_gather_kernel.
template <bool kRound>
__global__ void jl_np_count_kernel(jl_gbodies b, int m_pairs, const uint64_t *pairs, int *pa,
                                   int *pb, const double *live, double margin, jl_np_filter f,
                                   jl_np_out stage, long long *count, int *fault, int *diff) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p > m_pairs) return;
  if (p == m_pairs) {
    count[p] = 0;
    *fault = 0;
    return;
  }
  int u, v;
  if (pairs) {
    u = (int)(pairs[p] >> 32);
    v = (int)(uint32_t)pairs[p];
    pa[p] = u;
    pb[p] = v;
  } else {
    u = pa[p];
    v = pb[p];
  }
  long long kept = 0;
  if (!jl_np_dead(b, live, margin, u, v)) {
    jl_manifold m;
    int a, bb;
    int cnt = jl_np_pair<kRound>(b, u, v, margin, &m, &a, &bb);
    for (int k = 0; k < jl_np_points<kRound>() && k < cnt; ++k) {
      if (!jl_np_keeps(b, f, m.gap[k], a, bb)) continue;
      if (stage.a)
        jl_np_store(stage, (long long)p * JL_MAX_MANIFOLD + kept, a, bb, m.point[k], m.normal,
                    m.gap[k], JL_CONTACT_KEY(u, v, (unsigned)m.feature[k]));
      ++kept;
    }
  }
  if (diff && count[p] != kept) *diff = 1;
  count[p] = kept;
}

// The staged contacts to their places (start: the counts' exclusive scan),
// a thread per slot. Only the first room of them: a gather launched before
// the host has read the total writes what the buffers hold, and runs again
// once they have grown (the slots stay as they are until the next count).
__global__ void jl_np_gather_kernel(int m_pairs, const long long *count, const long long *start,
                                    jl_np_out s, jl_np_out o, long long room) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (long long)m_pairs * JL_MAX_MANIFOLD) return;
  int p = (int)(t / JL_MAX_MANIFOLD), k = (int)(t % JL_MAX_MANIFOLD);
  if (k >= count[p]) return;
  long long c = start[p] + k;
  if (c >= room) return;
  const double *pt = s.point + 3 * t, *nm = s.normal + 3 * t;
  jl_np_store(o, c, s.a[t], s.b[t], jl_v3(pt[0], pt[1], pt[2]), jl_v3(nm[0], nm[1], nm[2]),
              s.gap[t], s.key[t]);
}

template <bool kRound>
__global__ void jl_np_write_kernel(jl_gbodies b, int m_pairs, const int *pa, const int *pb,
                                   const double *live, double margin, jl_np_filter f,
                                   const long long *start, jl_np_out o) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= m_pairs) return;
  jl_manifold m;
  int a = pa[p], bb = pb[p], cnt = 0;
  if (!jl_np_dead(b, live, margin, pa[p], pb[p]))
    cnt = jl_np_pair<kRound>(b, pa[p], pb[p], margin, &m, &a, &bb);
  long long c = start[p], room = start[p + 1] - c, w = 0;
  for (int k = 0; k < jl_np_points<kRound>() && k < cnt; ++k) {
    if (!jl_np_keeps(b, f, m.gap[k], a, bb)) continue;
    if (w < room)
      jl_np_store(o, c + w, a, bb, m.point[k], m.normal, m.gap[k],
                  JL_CONTACT_KEY(pa[p], pb[p], (unsigned)m.feature[k]));
    ++w;
  }
  // The count pass made room for exactly w (same inputs, same code). If it
  // did not, flag it, and fill the slots left with this pair's bodies, so
  // that a caller reading the flag later never indexes out of range.
  if (w != room) {
    atomicExch(o.fault, 1);
    for (; w < room; ++w)
      jl_np_store(o, c + w, a, bb, jl_v3(0.0, 0.0, 0.0), jl_v3(0.0, 0.0, 1.0), 0.0,
                  JL_CONTACT_KEY(pa[p], pb[p], 0u));
  }
}

// Exclusive scan of count[0..n] (count[n] == 0), the total copied to *total
// (a round trip: only where it sizes what comes next; NULL: not copied).
static int jl_scan_ll(jl_scene_gpu *g, long long *count, long long *start, long long n,
                      long long *total, char *msg, int msg_len) {
  if (n + 1 > INT_MAX) {
    snprintf(msg, (size_t)msg_len, "scan of %lld items is too long", n + 1);
    return -1;
  }
  int items = (int)(n + 1);
  JL_CUB(cub::DeviceScan::ExclusiveSum(d_temp, tb, count, start, items));
  if (total) JL_CUDA_TRY(cudaMemcpy(total, start + n, sizeof(long long), cudaMemcpyDeviceToHost));
  return 0;
}

// Bytes of one staged contact (contact.h's fields) and the most a stage
// may take: a longer list of boxes runs the count and write passes.
#define JL_NP_SLOT_BYTES (2 * sizeof(int) + 7 * sizeof(double) + sizeof(uint64_t))
#define JL_NP_STAGE_MAX_BYTES ((size_t)256 << 20)

// Whether the narrow phase over m pairs is staged: boxes, whose manifolds
// cost the most, computed once; round shapes' second pass costs less than
// moving their slots would.
static bool jl_np_staged(const jl_scene_gpu *g, bool round, long long m) {
  return g->staged_narrow && !round &&
         (size_t)m * JL_MAX_MANIFOLD * JL_NP_SLOT_BYTES <= JL_NP_STAGE_MAX_BYTES;
}

// Bytes per contact of contact.h's fields, in jl_np_out's order (a, b,
// point, normal, gap, key).
static const size_t jl_np_field_bytes[6] = {sizeof(int),        sizeof(int),    3 * sizeof(double),
                                            3 * sizeof(double), sizeof(double), sizeof(uint64_t)};

// The contact buffers' fields (c_*), or the stage's (n_*), in that order.
static void jl_np_fields(jl_scene_gpu *g, bool stage, jl_dbuf *f[6]) {
  jl_dbuf *c[6] = {&g->c_a, &g->c_b, &g->c_point, &g->c_normal, &g->c_gap, &g->c_key};
  jl_dbuf *n[6] = {&g->n_a, &g->n_b, &g->n_point, &g->n_normal, &g->n_gap, &g->n_key};
  for (int m = 0; m < 6; ++m) f[m] = stage ? n[m] : c[m];
}

// The view of the buffers f (fault: the write pass's flag, or NULL).
static jl_np_out jl_np_view(jl_dbuf *const f[6], int *fault) {
  return {jl_dp<int>(*f[0]),    jl_dp<int>(*f[1]),    jl_dp<double>(*f[2]),
          jl_dp<double>(*f[3]), jl_dp<double>(*f[4]), jl_dp<uint64_t>(*f[5]), fault};
}

// Room for k contacts in the contact buffers or the stage (stage).
static int jl_np_reserve(jl_scene_gpu *g, bool stage, size_t k, char *msg, int msg_len) {
  jl_dbuf *f[6];
  jl_np_fields(g, stage, f);
  for (int m = 0; m < 6; ++m)
    if (jl_dbuf_reserve(g, f[m], k * jl_np_field_bytes[m],
                        stage ? "staged contacts" : "contacts", msg, msg_len))
      return -1;
  return 0;
}

// The slots of m pairs, into s.
static int jl_np_stage_reserve(jl_scene_gpu *g, long long m, jl_np_out *s, char *msg,
                               int msg_len) {
  if (jl_np_reserve(g, true, (size_t)m * JL_MAX_MANIFOLD, msg, msg_len)) return -1;
  jl_dbuf *f[6];
  jl_np_fields(g, true, f);
  *s = jl_np_view(f, nullptr);
  return 0;
}

// The contacts the contact buffers hold room for as they are.
static long long jl_np_room(jl_scene_gpu *g) {
  jl_dbuf *f[6];
  jl_np_fields(g, false, f);
  size_t r = SIZE_MAX;
  for (int m = 0; m < 6; ++m)
    if (f[m]->cap / jl_np_field_bytes[m] < r) r = f[m]->cap / jl_np_field_bytes[m];
  return (long long)r;
}

static jl_np_out jl_np_contacts(jl_scene_gpu *g) {
  jl_dbuf *f[6];
  jl_np_fields(g, false, f);
  return jl_np_view(f, jl_dp<int>(g->fault));
}

static int jl_np_gather(jl_scene_gpu *g, int m, const jl_np_out &stage, long long room,
                        char *msg, int msg_len) {
  long long slots = (long long)m * JL_MAX_MANIFOLD;
  jl_np_gather_kernel<<<jl_scene_blocks(slots), JL_SCENE_BLOCK>>>(
      m, jl_dp<long long>(g->np_count), jl_dp<long long>(g->np_start), stage, jl_np_contacts(g),
      room);
  JL_CUDA_TRY(cudaGetLastError());
  return 0;
}

// The narrow phase's count pass over the m pairs (stage: NULL, or its
// slots too), its scan, and the total copied beside the diff flag in same_d
// (diff: NULL, or compare the counts with the step before's), for the host
// to read in one copy.
static int jl_np_count(jl_scene_gpu *g, const jl_gbodies &b, int m, const uint64_t *sorted_pairs,
                       int *pa, int *pb, const double *live, double margin, jl_np_filter f,
                       bool round, const jl_np_out *stage, int *diff, jl_np_same *same_d,
                       char *msg, int msg_len) {
  long long *ccount = jl_dp<long long>(g->np_count), *cstart = jl_dp<long long>(g->np_start);
  auto count_kernel = round ? jl_np_count_kernel<true> : jl_np_count_kernel<false>;
  jl_np_out none = {};
  count_kernel<<<jl_scene_blocks((long long)m + 1), JL_SCENE_BLOCK>>>(
      b, m, sorted_pairs, pa, pb, live, margin, f, stage ? *stage : none, ccount,
      jl_dp<int>(g->fault), diff);
  JL_CUDA_TRY(cudaGetLastError());
  if (jl_scan_ll(g, ccount, cstart, m, nullptr, msg, msg_len)) return -1;
  JL_CUDA_TRY(cudaMemcpyAsync(&same_d->total, cstart + m, sizeof(long long),
                              cudaMemcpyDeviceToDevice, 0));
  return 0;
}

int jl_scene_collide(jl_scene_gpu *g, double margin, const jl_collide_opts *o,
                     jl_gpu_collide_stats *st, char *msg, int msg_len) {
  int n = g->nb;
  memset(st, 0, sizeof *st);
  g->pairs = 0;
  g->kept_last = 0;
  g->contacts_same = 0;
  g->contacts = 0;
  if (!(margin >= 0.0) || !std::isfinite(margin)) {
    snprintf(msg, (size_t)msg_len, "collision margin must be finite and >= 0 (got %g)", margin);
    return -1;
  }
  if (n > JL_MAX_BODIES_KEYED) {
    snprintf(msg, (size_t)msg_len, "too many bodies for contact keys: %d (at most %d)", n,
             JL_MAX_BODIES_KEYED);
    return -1;
  }
  if (n == 0) return 0;
  size_t nn = (size_t)n + 1;
  JL_RESERVE(aabb, 6 * (size_t)n * sizeof(double), "body boxes");
  if (o && o->keep_pairs) {
    JL_RESERVE(aabb_fat, 6 * (size_t)n * sizeof(double), "widened body boxes");
  }
  JL_RESERVE(kind, nn, "body kinds");
  JL_RESERVE(cell_range, 6 * (size_t)n * sizeof(int), "cell ranges");
  JL_RESERVE(entry_count, nn * sizeof(long long), "cell counts");
  JL_RESERVE(entry_start, nn * sizeof(long long), "cell offsets");
  JL_RESERVE(flag, nn * sizeof(long long), "body flags");
  JL_RESERVE(flag_scan, nn * sizeof(long long), "body flag scans");
  JL_RESERVE(planes, nn * sizeof(int), "plane list");
  JL_RESERVE(large, nn * sizeof(int), "large body list");
  JL_RESERVE(pair_count, nn * sizeof(long long), "pair counts");
  JL_RESERVE(pair_start, nn * sizeof(long long), "pair offsets");
  JL_RESERVE(summary, sizeof(jl_bp_head) + JL_SCENE_REDUCE_PARTIALS * sizeof(jl_bp_summary),
             "broad-phase summary");
  JL_RESERVE(fault, sizeof(int), "fault flag");
  JL_RESERVE(np_same, sizeof(jl_np_same), "contact count");
  jl_gbodies b = jl_view(g);
  double *aabb = jl_dp<double>(g->aabb);
  uint8_t *kind = jl_dp<uint8_t>(g->kind);
  jl_bp_head *head_d = jl_dp<jl_bp_head>(g->summary), head;
  jl_bp_summary *part = (jl_bp_summary *)(head_d + 1);
  long long *ecount = jl_dp<long long>(g->entry_count), *estart = jl_dp<long long>(g->entry_start);
  const bool keep = o && o->keep_pairs && g->pair_skin > 0.0;
  int *pa = jl_dp<int>(g->pair_a), *pb = jl_dp<int>(g->pair_b);
  const uint64_t *sorted_pairs = nullptr;  // a list built here: its sorted keys

  // The boxes of now. A kept list stands while every box lies inside its
  // widened one: a flag copied back with the narrow count, instead of the
  // broad phase.
  jl_bp_aabb_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(b, margin, aabb, kind);
  JL_CUDA_TRY(cudaGetLastError());
  // The narrow phase's filter and its count's flags (below).
  jl_np_filter f = {o && o->closed_only, o ? o->closed_tol : 0.0};
  const bool round = g->round_only && g->round_narrow;
  jl_np_same *same_d = jl_dp<jl_np_same>(g->np_same), same = {0, 0, 0};
  bool kept = false, counted = false;
  // staged: the count pass also stages the contacts (jl_np_staged), of
  // which the first `gathered` are in place already
  bool staged = false;
  jl_np_out stage = {};
  long long gathered = 0;
  if (keep && g->kept_ok && g->kept_margin == margin) {
    // Most steps keep the list, so its contacts are counted before the
    // check is read: the flag, the total and whether the counts changed
    // come back in one copy (a round trip fewer; a list that does not
    // stand is counted again below).
    // A staged list is gathered before the copy too, into the room the
    // contact buffers have: most steps then need nothing after it.
    const bool compare = g->counts_id == g->list_id;
    JL_CUDA_TRY(cudaMemsetAsync(same_d, 0, sizeof(jl_np_same), 0));
    jl_bp_inside_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(b, aabb, jl_dp<double>(g->aabb_fat),
                                                                 &same_d->escaped);
    JL_CUDA_TRY(cudaGetLastError());
    const int mk = g->kept_pairs;
    staged = mk > 0 && jl_np_staged(g, round, mk);
    if (staged && jl_np_stage_reserve(g, mk, &stage, msg, msg_len)) return -1;
    if (mk > 0 && jl_np_count(g, b, mk, nullptr, pa, pb, aabb, margin, f, round,
                              staged ? &stage : nullptr, compare ? &same_d->diff : nullptr,
                              same_d, msg, msg_len))
      return -1;
    long long room = staged ? jl_np_room(g) : 0;
    if (room > 0 && jl_np_gather(g, mk, stage, room, msg, msg_len)) return -1;
    JL_CUDA_TRY(cudaMemcpy(&same, same_d, sizeof same, cudaMemcpyDeviceToHost));
    jl_scene_mark(g, "pairs: kept check, narrow count");
    kept = counted = !same.escaped;
    if (kept) gathered = room;
    g->counts_id = kept ? g->list_id : -1;
    g->contacts_same = kept && compare && !same.diff;
  }
  g->kept_ok = 0;
  long long np = 0;
  if (kept) {
    np = g->kept_pairs;
    st->kept = 1;
    g->kept_last = 1;
    g->kept_ok = 1;
  } else {
    // Cell edge, kinds (of the widened boxes for a kept list), the lists of
    // large bodies and planes, the grid and the cell counts of the grid
    // bodies, all on the device; then one copy of the head. A non-finite
    // box or no dynamic body ends the collide there (the kernels before only
    // wrote the arena's scratch).
    if (jl_bp_summarize(b, aabb, kind, JL_BP_CELL, head_d, part, msg, msg_len)) return -1;
    const double *bx = aabb;  // the boxes the list is built from
    if (keep) {
      double *fat = jl_dp<double>(g->aabb_fat);
      jl_bp_widen_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(
          b, jl_dp<double>(g->vel), jl_dp<double>(g->omega), aabb, head_d, g->pair_skin,
          o->keep_ahead_s, fat);
      JL_CUDA_TRY(cudaGetLastError());
      bx = fat;
    }
    jl_scene_mark(g, "broad: boxes, cell edge");
    long long *flag = jl_dp<long long>(g->flag), *flag_scan = jl_dp<long long>(g->flag_scan);
    jl_bp_classify_kernel<<<jl_scene_blocks(nn), JL_SCENE_BLOCK>>>(b, bx, head_d, kind, flag);
    JL_CUDA_TRY(cudaGetLastError());
    if (jl_scan_ll(g, flag, flag_scan, n, nullptr, msg, msg_len)) return -1;
    jl_bp_lists_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(n, flag, flag_scan,
                                                               jl_dp<int>(g->large),
                                                               jl_dp<int>(g->planes));
    JL_CUDA_TRY(cudaGetLastError());
    jl_scene_mark(g, "broad: kinds, lists");
    if (jl_bp_summarize(b, bx, kind, JL_BP_BOUNDS, head_d, part, msg, msg_len)) return -1;
    jl_bp_count_cells_kernel<<<jl_scene_blocks(nn), JL_SCENE_BLOCK>>>(
        n, bx, kind, head_d, jl_dp<int>(g->cell_range), ecount);
    JL_CUDA_TRY(cudaGetLastError());
    if (jl_scan_ll(g, ecount, estart, n, nullptr, msg, msg_len)) return -1;
    JL_CUDA_TRY(cudaMemcpyAsync(&head_d->entries, estart + n, sizeof(long long),
                                cudaMemcpyDeviceToDevice, 0));
    jl_scene_mark(g, "broad: bounds, cell counts");
    JL_CUDA_TRY(cudaMemcpy(&head, head_d, sizeof head, cudaMemcpyDeviceToHost));
    jl_scene_mark(g, "broad: head copy");
    if (head.cell.bad != LLONG_MAX) {
      snprintf(msg, (size_t)msg_len, "body %lld: position or size is not finite", head.cell.bad);
      return -1;
    }
    if (head.cell.dyn == 0) return 0;  // only static bodies: nothing can touch
    int n_large = (int)head.bounds.large, n_planes = (int)head.bounds.planes;
    st->large = n_large;
    st->planes = n_planes;

    jl_gp_view w = {};
    w.n = n;
    w.is_static = b.is_static;
    w.pos = b.pos;
    w.size = b.size;
    // planes: a widened box comes no nearer than the box inside it; twice
    // the least skin more keeps rounding from dropping a pair (grid_twin.c alike)
    w.margin = keep ? margin + 2.0 * g->pair_skin * head.cell.cell : margin;
    w.aabb = bx;
    w.kind = kind;
    w.large = jl_dp<int>(g->large);
    w.planes = jl_dp<int>(g->planes);
    w.n_large = n_large;
    w.n_planes = n_planes;
    w.cell_range = jl_dp<int>(g->cell_range);

    if (head.grid_ok) {  // grid bodies (head.bounds.grid > 0)
      jl_grid gr = head.grid;
      st->cell = gr.cell;
      long long m = head.entries;
      if (m >= INT_MAX) {
        snprintf(msg, (size_t)msg_len, "broad phase: too many grid entries (%lld)", m);
        return -1;
      }
      st->entries = m;
      st->spans = (int)head.bounds.spans;
      jl_gp_table t = jl_gp_table_for(&gr, m);
      st->hashed = t.hash_bits > 0;
      size_t me = (size_t)m + 1;
      JL_RESERVE(keys, me * sizeof(uint64_t), "cell keys");
      JL_RESERVE(keys_alt, me * sizeof(uint64_t), "cell keys");
      JL_RESERVE(vals, me * sizeof(int), "cell entries");
      JL_RESERVE(vals_alt, me * sizeof(int), "cell entries");
      JL_RESERVE(entry_body, me * sizeof(int), "cell entries");
      JL_RESERVE(sorted_body, me * sizeof(int), "cell entries");
      if (t.hash_bits) {
        JL_RESERVE(entry_cell, me * sizeof(uint64_t), "cell entries");
        JL_RESERVE(sorted_cell, me * sizeof(uint64_t), "cell entries");
      }
      JL_RESERVE(bucket_start, ((size_t)t.buckets + 1) * sizeof(int), "cell table");
      uint64_t *ecell = t.hash_bits ? jl_dp<uint64_t>(g->entry_cell) : nullptr;
      jl_bp_fill_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(
          n, kind, gr, t, jl_dp<int>(g->cell_range), estart, jl_dp<uint64_t>(g->keys),
          jl_dp<int>(g->vals), jl_dp<int>(g->entry_body), ecell);
      JL_CUDA_TRY(cudaGetLastError());
      jl_scene_mark(g, "broad: cell entries");
      int key_bits = t.hash_bits ? t.hash_bits : jl_scene_key_bits(t.buckets);
      cub::DoubleBuffer<uint64_t> dk(jl_dp<uint64_t>(g->keys), jl_dp<uint64_t>(g->keys_alt));
      cub::DoubleBuffer<int> dvv(jl_dp<int>(g->vals), jl_dp<int>(g->vals_alt));
      int mi = (int)m;
      JL_CUB(cub::DeviceRadixSort::SortPairs(d_temp, tb, dk, dvv, mi, 0, key_bits));
      jl_scene_mark(g, "broad: cell sort");
      const uint64_t *skeys = dk.Current();
      jl_bp_sorted_kernel<<<jl_scene_blocks(m), JL_SCENE_BLOCK>>>(
          m, dvv.Current(), jl_dp<int>(g->entry_body), ecell, jl_dp<int>(g->sorted_body),
          t.hash_bits ? jl_dp<uint64_t>(g->sorted_cell) : nullptr);
      JL_CUDA_TRY(cudaGetLastError());
      jl_bp_bucket_start_kernel<<<jl_scene_blocks(t.buckets + 1), JL_SCENE_BLOCK>>>(
          t.buckets, skeys, mi, jl_dp<int>(g->bucket_start));
      JL_CUDA_TRY(cudaGetLastError());
      jl_scene_mark(g, "broad: cell table");
      w.grid = gr;
      w.table = t;
      for (int k = 0; k < 3; ++k) w.reach[k] = head.bounds.reach[k];
      w.bucket_start = jl_dp<int>(g->bucket_start);
      w.sorted_body = jl_dp<int>(g->sorted_body);
      w.sorted_cell = t.hash_bits ? jl_dp<uint64_t>(g->sorted_cell) : nullptr;
    } else {
      w.bucket_start = nullptr;  // no grid bodies: partners come from the lists only
      w.sorted_body = nullptr;
      w.sorted_cell = nullptr;
    }

    // Candidate pairs: count, scan, write, then sort by (a, b).
    long long *pcount = jl_dp<long long>(g->pair_count), *pstart = jl_dp<long long>(g->pair_start);
    jl_bp_pair_count_kernel<<<jl_scene_blocks(nn), JL_SCENE_BLOCK>>>(w, pcount);
    JL_CUDA_TRY(cudaGetLastError());
    if (jl_scan_ll(g, pcount, pstart, n, &np, msg, msg_len)) return -1;
    jl_scene_mark(g, "pairs: count, copy");
    if (np >= INT_MAX) {
      snprintf(msg, (size_t)msg_len, "broad phase: too many pairs (%lld)", np);
      return -1;
    }
    if (keep) {
      g->kept_ok = 1;
      g->kept_pairs = (int)np;
      g->kept_margin = margin;
      g->list_id++;
    }
    st->pairs = (int)np;
    if (np == 0) return 0;
    size_t mp = (size_t)np + 1;
    JL_RESERVE(pair_key, mp * sizeof(uint64_t), "candidate pairs");
    JL_RESERVE(pair_key_alt, mp * sizeof(uint64_t), "candidate pairs");
    JL_RESERVE(pair_a, mp * sizeof(int), "candidate pairs");
    JL_RESERVE(pair_b, mp * sizeof(int), "candidate pairs");
    JL_RESERVE(np_count, mp * sizeof(long long), "contact counts");
    JL_RESERVE(np_start, mp * sizeof(long long), "contact offsets");
    jl_bp_pair_write_kernel<<<jl_scene_blocks(n), JL_SCENE_BLOCK>>>(w, pstart,
                                                                    jl_dp<uint64_t>(g->pair_key));
    JL_CUDA_TRY(cudaGetLastError());
    cub::DoubleBuffer<uint64_t> dp(jl_dp<uint64_t>(g->pair_key), jl_dp<uint64_t>(g->pair_key_alt));
    int npi = (int)np;
    int pbits = 32 + jl_scene_key_bits(n);
    jl_scene_mark(g, "pairs: write");
    JL_CUB(cub::DeviceRadixSort::SortKeys(d_temp, tb, dp, npi, 0, pbits));
    jl_scene_mark(g, "pairs: sort");
    sorted_pairs = dp.Current();
    pa = jl_dp<int>(g->pair_a);  // grown above
    pb = jl_dp<int>(g->pair_b);
  }
  st->pairs = (int)np;
  if (np == 0) return 0;
  int npi = (int)np;
  g->pairs = npi;
  const double *live = keep ? aabb : nullptr;

  // Narrow phase: count (done above for a list that stands), scan, write
  // (only the closed contacts if asked).
  int *fault_d = jl_dp<int>(g->fault);
  long long *cstart = jl_dp<long long>(g->np_start);
  if (!counted) {  // a new list: nothing to compare its counts with
    g->counts_id = keep ? g->list_id : -1;
    g->contacts_same = 0;
    staged = jl_np_staged(g, round, npi);
    if (staged && jl_np_stage_reserve(g, npi, &stage, msg, msg_len)) return -1;
    if (jl_np_count(g, b, npi, sorted_pairs, pa, pb, live, margin, f, round,
                    staged ? &stage : nullptr, nullptr, same_d, msg, msg_len))
      return -1;
    JL_CUDA_TRY(cudaMemcpy(&same, same_d, sizeof same, cudaMemcpyDeviceToHost));
    jl_scene_mark(g, "narrow: count, copy");
  }
  long long nc = same.total;
  if (nc >= INT_MAX) {
    snprintf(msg, (size_t)msg_len, "collide: too many contacts (%lld)", nc);
    return -1;
  }
  st->contacts = (int)nc;
  if (nc == 0) return 0;
  if (jl_np_reserve(g, false, (size_t)nc, msg, msg_len)) return -1;
  if (staged) {
    // what the gather ahead of the copy left out (the buffers grew since:
    // their contents are new, so all of it)
    if (nc > gathered && jl_np_gather(g, npi, stage, nc, msg, msg_len)) return -1;
  } else {
    auto write_kernel = round ? jl_np_write_kernel<true> : jl_np_write_kernel<false>;
    write_kernel<<<jl_scene_blocks(np), JL_SCENE_BLOCK>>>(b, npi, pa, pb, live, margin, f,
                                                          cstart, jl_np_contacts(g));
    JL_CUDA_TRY(cudaGetLastError());
  }
  jl_scene_mark(g, "narrow: write");
  g->contacts = (int)nc;
  if (o && o->defer_fault) return 0;
  int fault = 0;
  JL_CUDA_TRY(cudaMemcpy(&fault, fault_d, sizeof(int), cudaMemcpyDeviceToHost));
  if (fault) {
    g->contacts = 0;
    snprintf(msg, (size_t)msg_len, "%s", JL_NP_FAULT_MSG);
    return -1;
  }
  return 0;
}

// The host API's collide: every contact within the margin, the fault checked here.
extern "C" int jl_cuda_scene_collide(jl_scene_gpu *g, double margin, jl_gpu_collide_stats *st,
                                     char *msg, int msg_len) {
  return jl_scene_collide(g, margin, nullptr, st, msg, msg_len);
}

extern "C" int jl_cuda_scene_get_pairs(jl_scene_gpu *g, int *pair_a, int *pair_b, char *msg,
                                       int msg_len) {
  if (g->pairs == 0) return 0;
  size_t bytes = (size_t)g->pairs * sizeof(int);
  JL_CUDA_TRY(cudaMemcpy(pair_a, g->pair_a.p, bytes, cudaMemcpyDeviceToHost));
  JL_CUDA_TRY(cudaMemcpy(pair_b, g->pair_b.p, bytes, cudaMemcpyDeviceToHost));
  return 0;
}

// out must have room for g->contacts (the wrapper grows it).
extern "C" int jl_cuda_scene_get_contacts(jl_scene_gpu *g, jl_contacts *out, char *msg,
                                          int msg_len) {
  size_t c = (size_t)g->contacts;
  out->count = g->contacts;
  if (c == 0) return 0;
  cudaMemcpyKind d2h = cudaMemcpyDeviceToHost;
  JL_CUDA_TRY(cudaMemcpy(out->body_a, g->c_a.p, c * sizeof(int), d2h));
  JL_CUDA_TRY(cudaMemcpy(out->body_b, g->c_b.p, c * sizeof(int), d2h));
  JL_CUDA_TRY(cudaMemcpy(out->point, g->c_point.p, 3 * c * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(out->normal, g->c_normal.p, 3 * c * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(out->gap, g->c_gap.p, c * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(out->key, g->c_key.p, c * sizeof(uint64_t), d2h));
  return 0;
}

extern "C" int jl_cuda_scene_contact_count(const jl_scene_gpu *g) { return g->contacts; }

// What the last step kept: its pair list, its body lists (the setup's).
extern "C" void jl_cuda_scene_kept(const jl_scene_gpu *g, int *pairs, int *body_lists) {
  *pairs = g->kept_last;
  *body_lists = g->csr_kept;
}

// A kernel of this file: jl_cuda_kernels_load loads all of them (scene_arena.cu).
extern "C" const void *jl_cuda_scene_collide_code(void) {
  return (const void *)jl_bp_aabb_kernel;
}
