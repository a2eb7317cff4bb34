/* The reachable volume of a trunk: the part of its interior that some
 * legally placed block can cover, the union of all blocks that fit. It is
 * the morphological opening of the interior by the block, taken over a set
 * of orientations: the 6 axis-aligned ones, the frames of the mesh's large
 * sloped faces (as the tilted fill uses them) and fixed tilts about each
 * axis. Each orientation frame gets a voxel grid aligned with it, so the
 * turned box is a box of whole voxels there and its erosion and dilation
 * are runs along the grid's axes (run doubling: log2 of the run length
 * passes per axis). The interior is the outer voxel map (every voxel
 * holding some of it), moved into each frame's grid and the opening back
 * by covering boxes, so a block that fits is never lost on the way: the
 * result is an upper bound on what blocks in these orientations can cover
 * (docs/design.md, "Reachable volume"). The work runs on the CPU twin or
 * on CUDA (kernels/trunk/trunk_reach.cu), with the per-voxel arithmetic shared in
 * reach_math.h: both give the same voxels. */
#ifndef JL_TRUNK_REACH_H
#define JL_TRUNK_REACH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "reach_math.h"
#include "trunk.h"
#include "trunk_voxels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Voxel edge: the smallest block edge over this, on the CPU and on CUDA. */
#define JL_REACH_VOXELS_PER_EDGE_CPU 10
#define JL_REACH_VOXELS_PER_EDGE_CUDA 20
/* World voxels at most (coarser voxels above): the CPU twin's passes take
 * about 0.1 s per orientation frame per 5e6 voxels on one thread. */
#define JL_REACH_MAX_VOXELS_CPU 1.6e7
#define JL_REACH_MAX_VOXELS_CUDA 6.4e7
/* Rays per voxel edge measuring how much of a voxel the surface cuts is inside. */
#define JL_REACH_PART_RAYS 4
/* Fixed tilts: turns about each axis by these angles (degrees); 90 degrees
 * apart give the same boxes, so these cover the quarter turn in 15 degree steps. */
#define JL_REACH_TILT_ANGLES {45.0, 30.0, -30.0, 15.0, -15.0}
#define JL_REACH_N_TILT_ANGLES 5
#define JL_REACH_MAX_FRAMES 32
/* Share of the run's time left that `jostle trunk` gives the measure (it
 * runs before the fills; frames not opened by then are left out). */
#define JL_REACH_TIME_SHARE 0.1

enum { JL_REACH_FRAME_AXES = 0, JL_REACH_FRAME_FACE = 1, JL_REACH_FRAME_TILT = 2 };

/* An orientation frame: blocks with their edges along its axes (the rows
 * of rows, in world coordinates), in any of the 6 ways. */
typedef struct jl_reach_frame {
  double rows[3][3];
  int kind;                /* JL_REACH_FRAME_* */
  int axis;                /* tilts: turned about x (0), y (1) or z (2) */
  double angle_deg;        /* tilts */
} jl_reach_frame;

/* The frames in the order they are opened: the axes, the large sloped
 * faces (jl_trunk_tilt_planes, largest first; none when the deadline (> 0)
 * or *stop cut their search short), then with tilts the fixed tilts (45
 * degrees about y, x, z, then 30, -30, 15, -15). */
int jl_reach_frames(const jl_mesh *mesh, int tilts, int faces, double deadline, const volatile sig_atomic_t *stop,
                    jl_reach_frame *frames, int cap, int *n, int *n_faces, jl_error *err);

/* The grid of a frame covering the part box (mm, [lo, hi]; NULL: all) of
 * the world map m, same voxel edge; the identity frame's is m's. */
void jl_reach_frame_grid(const jl_voxel_map *m, const jl_reach_frame *f, const double box[2][3],
                         jl_reach_grid *g);

/* The world map as bits (reach_math.h's layout): jl_reach_world_words(m)
 * words, padding bits 0. */
size_t jl_reach_world_words(const jl_voxel_map *m);
void jl_reach_pack(const jl_voxel_map *m, uint64_t *bits);
static inline int jl_reach_bit(const jl_voxel_map *m, const uint64_t *bits, size_t idx) {
  size_t nx = (size_t)m->dim[0], i = idx % nx, row = idx / nx;
  return (int)(bits[row * (size_t)jl_reach_row_words(m->dim[0]) + (i >> 6)] >> (i & 63) & 1);
}

/* Opens the free voxels of world (the outer map) by the block in each
 * frame and ORs what the openings cover, moved back to the world grid and
 * kept within world's free voxels, into reach (jl_reach_world_words(world)
 * words, zeroed here). cuda: run on the device (JL_ERR_DEVICE without
 * one); else the CPU twin on threads. Stops between frames (the CPU twin
 * also between passes) at deadline (> 0) or once *stop is set; *done gets
 * the frames whose opening is in reach. */
int jl_reach_open(const jl_voxel_map *world, const jl_reach_frame *frames, int n_frames,
                  jl_block_size block, int cuda, int threads, double deadline,
                  const volatile sig_atomic_t *stop, uint64_t *reach, int *done, jl_error *err);

/* Volume (mm^3) of the set voxels of mark (bits), each weighed by its
 * inside share (parts: the free voxels not wholly inside). */
double jl_reach_volume(const jl_voxel_map *m, const uint64_t *mark, const jl_voxel_part *parts,
                       size_t n_parts);

typedef struct jl_reach_config {
  jl_block_size block;
  int cuda;                /* 1: on the CUDA device */
  int threads;             /* CPU threads (0: all cores) */
  double voxel;            /* mm; <= 0: the smallest block edge / JL_REACH_VOXELS_PER_EDGE_* */
  double max_voxels;       /* <= 0: JL_REACH_MAX_VOXELS_* */
  int no_tilts, no_faces;  /* leave out the fixed tilts, the face frames */
  double deadline;         /* jl_time_now() seconds; <= 0: none */
  const volatile sig_atomic_t *stop;
} jl_reach_config;

void jl_reach_config_default(jl_reach_config *c);

typedef struct jl_reach_info {
  double volume_mm3;       /* reachable volume (0 when not measured) */
  double cover_mm3;        /* the outer map measured the same way: the voxels' estimate of the mesh volume */
  long bound;              /* floor(volume / block volume) */
  int measured;            /* 1: at least the axis-aligned frame was opened */
  double voxel;            /* mm */
  int dim[3];
  int frames, frames_done, faces;
  double time_s;
  int complete;            /* every frame opened */
} jl_reach_info;

/* The reachable volume of a closed, outward mesh (jl_mesh_validate): the
 * outer voxel map, the inside share of its voxels the surface cuts, the
 * openings of every frame. Cut short by the limits it reports what the
 * frames opened so far cover (measured 0 when not even the axis-aligned one
 * was). Never above the mesh's volume. */
int jl_trunk_reach(const jl_mesh *mesh, const jl_reach_config *cfg, jl_reach_info *info, jl_error *err);

#ifdef JL_HAVE_CUDA
/* kernels/trunk/trunk_reach.cu: the device side of jl_reach_open. */
typedef struct jl_cuda_reach jl_cuda_reach;
int jl_cuda_reach_create(jl_cuda_reach **c, const uint64_t *world, const int dim[3], size_t frame_cap,
                         char *msg, int msg_len);
/* frame_cap: words of the largest frame's map. One frame: identity (the
 * world grid, no moving) or the maps to and from the frame's grid of fdim
 * voxels; n_perms openings, perm p's passes at
 * passes[p * JL_REACH_MAX_PASSES], npasses[p] of them. */
int jl_cuda_reach_frame(jl_cuda_reach *c, const int fdim[3], int identity, const jl_reach_xform *to_frame,
                        const jl_reach_xform *to_world, const jl_reach_pass *passes, const int *npasses,
                        int n_perms, char *msg, int msg_len);
int jl_cuda_reach_fetch(jl_cuda_reach *c, uint64_t *reach, char *msg, int msg_len);
void jl_cuda_reach_destroy(jl_cuda_reach *c);
#endif

#ifdef __cplusplus
}
#endif

#endif
