/* The trunk surface as point samples sorted into a uniform grid (seed
 * 004, 5.3.2): points ordered by cell index x + d1 (y + d2 z), with the
 * start index and count of every cell, plus an inside mask per cell that
 * the search uses to place new blocks. Built on the CPU, or on the GPU with
 * a CUB radix sort (kernels/trunk/surface_grid.cu) giving the same arrays. */
#ifndef JL_SURFACE_GRID_H
#define JL_SURFACE_GRID_H

#include <stdint.h>

#include "error.h"
#include "trunk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default cell edge, mm (seed 5.3.2: 20 mm balanced the cells looked at
 * against the points in them). */
#define JL_GRID_CELL_DEFAULT 20.0
/* Default sample spacing: the smallest block edge over this. */
#define JL_SPACING_DIVISOR 10.0

typedef struct jl_surface_grid {
  int n_points;
  double *px, *py, *pz;    /* n_points samples, sorted by cell (stable) */
  int *point_id;           /* sorted position -> index in the unsorted samples */
  double origin[3];        /* corner of cell (0, 0, 0) */
  double cell;             /* cell edge, mm */
  int dim[3];              /* cells along x, y, z */
  int n_cells;
  int *cell_start;         /* n_cells: first sorted point of each cell */
  int *cell_count;         /* n_cells: points in each cell */
  double *cell_lo, *cell_hi; /* 3 * n_cells: bounding box of each cell's points
                              (lo > hi for an empty cell) */
  uint8_t *inside;         /* n_cells: 1 when the cell centre is inside the surface */
  int n_inside;
  int *inside_cells;       /* n_inside cell indices, ascending */
} jl_surface_grid;

/* The default spacing for a block: its smallest edge / JL_SPACING_DIVISOR
 * (5 mm for 200 x 100 x 50; docs/design.md, "Sampling rule"). */
double jl_surface_default_spacing(const jl_block_size *b);

/* Most surface samples a mesh may take. */
#define JL_SAMPLE_MAX 200000000

/* Samples every triangle so that every point of it lies within spacing /
 * sqrt 3 of a sample: on a barycentric lattice of n = ceil(longest edge /
 * spacing) subdivisions, (n+1)(n+2)/2 samples, or, for a thin triangle whose
 * lattice would hold far more points than its area needs (CAD fillets and
 * end caps), at the corners and midpoints of a longest-edge bisection down to
 * edges of at most spacing. Shared edges are sampled by both triangles.
 * *pts (3 * *n doubles) is malloc'ed. */
int jl_surface_sample(const jl_mesh *m, double spacing, double **pts, int *n, jl_error *err);

/* Grid layout from the points: origin at their AABB minimum less half a
 * cell, dims covering the AABB plus half a cell. */
int jl_surface_grid_layout(jl_surface_grid *g, const double *pts, int n, double cell,
                           jl_error *err);
/* Cell of a point under the layout (clamped into the grid). */
int jl_surface_grid_cell_of(const jl_surface_grid *g, double x, double y, double z);

/* CPU build: layout, a stable counting sort by cell, start and count. */
int jl_surface_grid_build(jl_surface_grid *g, const double *pts, int n, double cell,
                          jl_error *err);
/* GPU build (CUB radix sort on the device); the same arrays as the CPU build. */
int jl_surface_grid_build_cuda(jl_surface_grid *g, const double *pts, int n, double cell,
                               jl_error *err);
/* Marks cells whose centre lies inside the closed mesh (ray parity along +x
 * per (y, z) column of cell centres). */
int jl_surface_grid_mark_inside(jl_surface_grid *g, const jl_mesh *m, jl_error *err);
void jl_surface_grid_free(jl_surface_grid *g);

/* A closed box mesh [lo, hi] (12 triangles, normals out), for tests and the
 * benchmark. vertices/triangles are malloc'ed; free with jl_cuboid_mesh_free. */
int jl_cuboid_mesh(jl_mesh *m, const double lo[3], const double hi[3], jl_error *err);
void jl_cuboid_mesh_free(jl_mesh *m);

#ifdef JL_HAVE_CUDA
/* kernels/trunk/surface_grid.cu: keys and the radix sort; fills the sorted point
 * ids and cell start/count on the host. */
int jl_cuda_grid_sort(const double *pts, int n, const double origin[3], double cell,
                      const int dim[3], int *point_id, int *cell_start, int *cell_count,
                      char *msg, int msg_len);
#endif

#ifdef __cplusplus
}
#endif

#endif
