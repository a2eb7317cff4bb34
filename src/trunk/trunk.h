/* The trunk job: types shared by its subsystems.
 *
 *   mesh.c            reads a trunk mesh (assimp), validates and orients it  -> jl_mesh
 *   trunk_check.c     exact legality of a block packing against the mesh     (BVH, SAT, winding)
 *   trunk_baseline.c  grid baseline (one lattice) and layered fill, axis-aligned -> jl_block_packing
 *   surface_grid.c    surface samples sorted into a uniform grid              -> jl_surface_grid
 *   block_relax.h     per-candidate block contact relaxation (CPU twin and CUDA kernel)
 *   trunk_search.c    the annealing driver over a batch of candidates, the gap fill
 *   trunk_legalize.c  chain states made legal against the exact triangles (pushes, drops)
 *   trunk_pockets.c   turned blocks into the free pockets of the voxel map
 *   trunk_voxels.c    voxel maps of the interior (the gap fill's, the pockets', the reachable volume's)
 *   trunk_reach.c     the reachable volume: openings by the block (CPU twin and CUDA kernel)
 *   trunk_io.c        result JSON, .glb scene, orthographic views
 *
 * Units are millimetres throughout; meshes in other units are scaled on load. */
#ifndef JL_TRUNK_H
#define JL_TRUNK_H

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A closed, consistently oriented triangle surface: every triangle's
 * vertices run counter-clockwise seen from outside (normals point out). */
typedef struct jl_mesh {
  int n_vertices;
  int n_triangles;
  double *vertices;        /* 3 * n_vertices: x, y, z in mm */
  int *triangles;          /* 3 * n_triangles: vertex indices */
} jl_mesh;

/* Full edge lengths of the measuring block, mm (DIN 70020 / ISO 3832: 200 x 100 x 50). */
typedef struct jl_block_size {
  double x, y, z;
} jl_block_size;

#define JL_BLOCK_DIN_X 200.0
#define JL_BLOCK_DIN_Y 100.0
#define JL_BLOCK_DIN_Z 50.0

/* Block edges, mm: at least 0.01 (a trunk's tolerance is 1e-7 of its
 * diagonal, up to 3.5 mm for the largest mesh the readers take, and the
 * fills step by an eighth of the shortest edge) and at most 1e7 (10 km,
 * the readers' coordinate limit). The longest edge at most 1000 times the
 * shortest: the tilted fill tries a band for every multiple of the
 * shortest edge up to the longest and the slab fill cuts at a quarter of
 * the shortest, so the ratio bounds their work (the DIN block's is 4). */
#define JL_BLOCK_EDGE_MIN 0.01
#define JL_BLOCK_EDGE_MAX 1e7
#define JL_BLOCK_ASPECT_MAX 1000.0

/* Blocks placed in a trunk: centre and unit quaternion (w, x, y, z) that
 * rotates the block's frame (edges along x, y, z) into the trunk's. */
typedef struct jl_block_packing {
  int count;
  int capacity;
  double *centre;          /* 3 * capacity */
  double *quat;            /* 4 * capacity */
} jl_block_packing;

/* Most blocks a trunk run packs or a trunk result file may hold: 100,000
 * liter blocks is a 100 m^3 trunk, far past any car, and checking that many
 * stays within seconds. */
#ifndef JL_TRUNK_MAX_BLOCKS
#define JL_TRUNK_MAX_BLOCKS 100000
#endif

/* block_packing.c */
int jl_block_packing_init(jl_block_packing *p, int capacity, jl_error *err);
int jl_block_packing_reserve(jl_block_packing *p, int capacity, jl_error *err);
int jl_block_packing_push(jl_block_packing *p, const double centre[3], const double quat[4],
                          jl_error *err);
int jl_block_packing_copy(jl_block_packing *dst, const jl_block_packing *src, jl_error *err);
void jl_block_packing_free(jl_block_packing *p);

/* An exact legality check the search calls before it accepts a new best
 * packing (trunk_check.c provides one; tests may pass their own). Returns 1
 * when legal, 0 when not, and fills *worst (mm of the worst violation, 0 when legal). */
typedef int (*jl_trunk_check_fn)(void *ctx, const jl_block_packing *p, double *worst);

#ifdef __cplusplus
}
#endif

#endif
