/* Per-voxel arithmetic of the reachable volume (trunk_reach.c), written
 * once for the CPU twin (trunk_reach.c) and the CUDA kernels
 * (kernels/trunk/trunk_reach.cu): moving a voxel map between two grids turned
 * against each other, and one pass of run doubling along an axis, one
 * 64-voxel word at a time. Maps are bits: voxel (i, j, k) is bit i % 64 of
 * word i / 64 + W (j + ny k), each row of x padded to W = ceil(nx / 64)
 * words whose padding bits stay 0. Index arithmetic is exact; the only
 * floating point is jl_reach_cover's affine map, evaluated in one order
 * without contraction in both builds, so they give the same voxels. */
#ifndef JL_REACH_MATH_H
#define JL_REACH_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "hd.h"

/* A voxel grid in a frame turned against the world: frame coordinates p' =
 * R p (rows of R: the frame's axes in world coordinates); voxel (i, j, k)
 * spans origin + [i, i + 1] v along the frame's x, and so on. */
typedef struct jl_reach_grid {
  double rows[3][3];
  double origin[3];
  double v;
  int dim[3];
  int words;               /* per row of x: ceil(dim[0] / 64) */
  size_t n_words;          /* words * dim[1] * dim[2] */
} jl_reach_grid;

JL_HD static inline int jl_reach_row_words(int nx) { return (nx + 63) / 64; }

/* Word w of row (j, k). */
JL_HD static inline size_t jl_reach_widx(int words, int ny, int w, int j, int k) {
  return (size_t)w + (size_t)words * ((size_t)j + (size_t)ny * (size_t)k);
}

/* The bits of word w of a row of nx voxels that are voxels (not padding). */
JL_HD static inline uint64_t jl_reach_row_mask(int nx, int w) {
  int left = nx - 64 * w;
  return left >= 64 ? ~(uint64_t)0 : left <= 0 ? 0 : (((uint64_t)1 << left) - 1);
}

/* Voxel (i, j, k) of a destination grid in a source grid's index space
 * (source voxel m spans [m, m + 1] along each axis): its centre at u = b + A
 * (i, j, k), its bounding box u -/+ r. */
typedef struct jl_reach_xform {
  double a[9];             /* row-major */
  double b[3];
  double r[3];
  int dim[3];              /* the source grid's */
  int words;               /* the source grid's words per row */
} jl_reach_xform;

/* Widening of each half width r, in source voxels: rounding in u may only
 * add source voxels, never drop one. */
#define JL_REACH_COVER_MARGIN 1e-9

/* The map from grid dst to grid src (host side, computed once per frame and
 * handed to both builds). */
static inline void jl_reach_xform_make(const jl_reach_grid *dst, const jl_reach_grid *src,
                                       jl_reach_xform *x) {
  /* M = R_src R_dst^T takes dst frame coordinates to src frame coordinates */
  double m[3][3], c0[3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      m[r][c] = src->rows[r][0] * dst->rows[c][0] + src->rows[r][1] * dst->rows[c][1] +
                src->rows[r][2] * dst->rows[c][2];
  for (int d = 0; d < 3; ++d) c0[d] = dst->origin[d] + 0.5 * dst->v;  /* voxel (0, 0, 0)'s centre */
  for (int r = 0; r < 3; ++r) {
    double w = m[r][0] * c0[0] + m[r][1] * c0[1] + m[r][2] * c0[2];
    x->b[r] = (w - src->origin[r]) / src->v;
    double s = 0.0;
    for (int c = 0; c < 3; ++c) {
      x->a[3 * r + c] = m[r][c] * dst->v / src->v;
      s += fabs(x->a[3 * r + c]);
    }
    x->r[r] = 0.5 * s + JL_REACH_COVER_MARGIN;
    x->dim[r] = src->dim[r];
  }
  x->words = src->words;
}

/* floor and ceil of |x| < 2^62, exact, inline in both builds (libm's
 * floor is a call on x86-64 without SSE4.1). */
JL_HD static inline double jl_reach_floor(double x) {
  double t = (double)(long long)x;
  return t > x ? t - 1.0 : t;
}

JL_HD static inline double jl_reach_ceil(double x) {
  double t = (double)(long long)x;
  return t < x ? t + 1.0 : t;
}

/* 1 when some set voxel of src shares an interior point with voxel (i, j,
 * k) of the destination grid, or lies within its bounding box: the source
 * voxels [floor(u - r), ceil(u + r) - 1] along each axis hold every point of
 * the destination voxel's interior. A superset, as the bound needs. */
JL_HD static inline int jl_reach_cover(const jl_reach_xform *x, const uint64_t *src, int i, int j, int k) {
  int lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    double u = x->b[d] + x->a[3 * d] * (double)i + x->a[3 * d + 1] * (double)j + x->a[3 * d + 2] * (double)k;
    double l = jl_reach_floor(u - x->r[d]), h = jl_reach_ceil(u + x->r[d]) - 1.0;
    if (l < 0.0) l = 0.0;
    if (h > (double)(x->dim[d] - 1)) h = (double)(x->dim[d] - 1);
    if (l > h) return 0;
    lo[d] = (int)l;
    hi[d] = (int)h;
  }
  /* bits lo[0]..hi[0] of each row: in one word or two */
  int w0 = lo[0] >> 6, w1 = hi[0] >> 6;
  uint64_t m0, m1;
  if (w0 == w1) {
    int nb = hi[0] - lo[0] + 1;
    m0 = (nb >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nb) - 1)) << (lo[0] & 63);
    m1 = 0;
  } else {
    m0 = ~(uint64_t)0 << (lo[0] & 63);
    m1 = ((uint64_t)2 << (hi[0] & 63)) - 1;  /* bits 0..hi & 63 (63: all, by wrap-around) */
  }
  for (int c = lo[2]; c <= hi[2]; ++c)
    for (int b = lo[1]; b <= hi[1]; ++b) {
      size_t q = jl_reach_widx(x->words, x->dim[1], w0, b, c);
      if (src[q] & m0) return 1;
      if (w1 != w0) {
        for (int w = w0 + 1; w < w1; ++w)
          if (src[q + (size_t)(w - w0)]) return 1;
        if (src[q + (size_t)(w1 - w0)] & m1) return 1;
      }
    }
  return 0;
}

/* Word w of row (j, k) of a destination grid (nx voxels a row) moved from src. */
JL_HD static inline uint64_t jl_reach_cover_word(const jl_reach_xform *x, const uint64_t *src, int nx, int w,
                                                int j, int k) {
  uint64_t out = 0;
  int end = nx - 64 * w < 64 ? nx - 64 * w : 64;
  for (int b = 0; b < end; ++b)
    if (jl_reach_cover(x, src, 64 * w + b, j, k)) out |= (uint64_t)1 << b;
  return out;
}

/* As jl_reach_cover_word, but only for the bits set in want (and not in have). */
JL_HD static inline uint64_t jl_reach_back_word(const jl_reach_xform *x, const uint64_t *src, uint64_t want,
                                               uint64_t have, int w, int j, int k) {
  uint64_t todo = want & ~have, out = have;
  for (int b = 0; b < 64; ++b)
    if ((todo >> b & 1) && jl_reach_cover(x, src, 64 * w + b, j, k)) out |= (uint64_t)1 << b;
  return out;
}

/* One pass of an opening: axis, shift, erosion (0) or dilation (1). */
typedef struct jl_reach_pass {
  int axis, shift, dilate;
} jl_reach_pass;

/* Word w of row (j, k) after one pass of run doubling (dim: voxels along
 * x, y, z; words: per row):
 *   erosion:  voxel t = in[t] & in[t + shift]   (0 past the end of the grid)
 *   dilation: voxel t = in[t] | in[t - shift]   (nothing before its start)
 * Passes with shifts 1, 2, 4, ..., h and then s - h (h the largest power of
 * two <= s) turn f into its erosion by a run of s voxels, AND over [t, t + s),
 * or into its dilation by that run, OR over (t - s, t]. */
JL_HD static inline uint64_t jl_reach_step_word(const uint64_t *in, const int dim[3], int words, int w, int j,
                                               int k, jl_reach_pass ps) {
  size_t q = jl_reach_widx(words, dim[1], w, j, k);
  uint64_t x = in[q], o;
  if (ps.axis == 0) {
    /* the row's bits moved by shift: toward lower indices for erosion (bit t
     * gets t + shift), higher for dilation (bit t gets t - shift) */
    int qw = ps.shift >> 6, r = ps.shift & 63;
    size_t row = q - (size_t)w;
    if (!ps.dilate) {
      int a = w + qw, b = a + 1;
      uint64_t lo = a < words ? in[row + (size_t)a] : 0, hi = b < words ? in[row + (size_t)b] : 0;
      o = r ? (lo >> r) | (hi << (64 - r)) : lo;
      return x & o;
    }
    int a = w - qw, b = a - 1;
    uint64_t lo = a >= 0 ? in[row + (size_t)a] : 0, hi = b >= 0 ? in[row + (size_t)b] : 0;
    o = r ? (lo << r) | (hi >> (64 - r)) : lo;
    return (x | o) & jl_reach_row_mask(dim[0], w);
  }
  int t = ps.axis == 1 ? j : k, len = dim[ps.axis];
  size_t off = (size_t)ps.shift * (ps.axis == 1 ? (size_t)words : (size_t)words * (size_t)dim[1]);
  if (!ps.dilate) return t + ps.shift < len ? x & in[q + off] : 0;
  return t >= ps.shift ? x | in[q - off] : x;
}

/* Most passes of one opening: 6 runs, each at most 31 doublings plus one. */
#define JL_REACH_MAX_PASSES 192

/* The passes that open a map by a box of s[0] x s[1] x s[2] voxels:
 * erosion along x, y, z, then dilation along z, y, x. Returns the count. */
static inline int jl_reach_plan(const int s[3], jl_reach_pass *out) {
  int n = 0;
  for (int half = 0; half < 2; ++half)
    for (int q = 0; q < 3; ++q) {
      int axis = half ? 2 - q : q, have = 1;
      while (2 * have <= s[axis]) {
        out[n++] = (jl_reach_pass){axis, have, half};
        have *= 2;
      }
      if (s[axis] > have) out[n++] = (jl_reach_pass){axis, s[axis] - have, half};
    }
  return n;
}

#endif
