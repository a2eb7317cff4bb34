/* A voxel map of a trunk's interior over its bounding box: which voxels
 * are free (two rules, below) and, for the voxels the surface cuts, how much
 * of each lies inside. The gap fill (trunk_search.c) places blocks on the
 * inner map; the reachable volume (trunk_reach.c) opens the outer map. */
#ifndef JL_TRUNK_VOXELS_H
#define JL_TRUNK_VOXELS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "trunk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which voxels are free (1):
 * INNER: the centre is inside and no triangle meets the voxel's interior:
 *        voxels wholly inside, where a block on voxels is surely clear;
 * OUTER: the centre is inside or a triangle meets the interior: every voxel
 *        holding some of the trunk's interior (a cover of it); those a
 *        triangle meets are JL_VOXEL_CUT (2) instead of 1.
 * Touching within JL_VOXEL_EPS of a voxel counts as apart in both. */
enum { JL_VOXEL_INNER = 0, JL_VOXEL_OUTER = 1 };
#define JL_VOXEL_CUT 2

#define JL_VOXEL_EPS 1e-6

typedef struct jl_voxel_map {
  double origin[3];        /* corner of voxel (0, 0, 0): the mesh's bounding box minimum */
  double v;                /* voxel edge, mm */
  int dim[3];
  size_t n;                /* dim[0] * dim[1] * dim[2] */
  uint8_t *free;           /* n: nonzero free, 0 not, by the rule built with */
} jl_voxel_map;

static inline size_t jl_voxel_idx(const jl_voxel_map *m, int i, int j, int k) {
  return (size_t)i + (size_t)m->dim[0] * ((size_t)j + (size_t)m->dim[1] * (size_t)k);
}

/* Builds the map over the mesh's bounding box at voxel edge v (coarser when
 * that would exceed max_voxels). Centres are classified by ray parity along
 * +x per column (rays nudged off the centre lines so none runs along an
 * edge). threads > 1 split the work by slabs of z (the result does not
 * depend on them). Stops with *cut = 1 (map unusable) at deadline (> 0,
 * jl_time_now()) or once *stop (may be NULL) is set. */
int jl_voxel_map_build(jl_voxel_map *m, const jl_mesh *mesh, double v, double max_voxels, int rule,
                       int threads, double deadline, const volatile sig_atomic_t *stop, int *cut,
                       jl_error *err);
void jl_voxel_map_free(jl_voxel_map *m);

/* The inside share of a free voxel that is not wholly inside. */
typedef struct jl_voxel_part {
  size_t idx;
  double inside;           /* in [0, 1) */
} jl_voxel_part;

/* For every voxel of an outer map m that the surface passes through
 * (JL_VOXEL_CUT) whose inside share is below 1: that share, from rays along
 * x on the corners of sub x sub cells per voxel column (exact along each
 * ray; each cell counts the largest length of its four corners, which
 * bounds it from above where one plane cuts the cell's prism), ascending by
 * index into *parts (malloc'ed, *n entries). The other free voxels are
 * wholly inside. Same limits as the build (*cut = 1: nothing returned). */
int jl_voxel_map_parts(const jl_voxel_map *m, const jl_mesh *mesh, int sub, int threads,
                       double deadline, const volatile sig_atomic_t *stop, jl_voxel_part **parts,
                       size_t *n, int *cut, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
