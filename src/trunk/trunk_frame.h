/* The floor's frame: CAD meshes come in vehicle coordinates, which may be
 * pitched, rolled or turned by a few degrees against the trunk's own floor
 * and walls, and then every axis-aligned fill loses a stair of blocks along
 * the floor and each wall. The floor is the largest cluster of down-facing
 * triangle normals (area-weighted, within JL_FRAME_FLOOR_DEG of -z), the wall
 * direction the largest cluster of the horizontal directions of the
 * near-vertical faces (area-weighted, folded modulo 90 degrees, since walls
 * meet at right angles and a block fills either); together they give the
 * rotation R from the mesh's frame into the trunk's. The CLI fills the trunk
 * in both frames and turns the better packing back (docs/design.md). */
#ifndef JL_TRUNK_FRAME_H
#define JL_TRUNK_FRAME_H

#include "trunk.h"

/* Floor faces: outward normal within this of -z (a floor pitched or rolled
 * by up to this many degrees is found; a sloped seat back faces up or
 * sideways and never counts). */
#define JL_FRAME_FLOOR_DEG 15.0
/* Wall faces: normal within this of horizontal (of the floor found). */
#define JL_FRAME_WALL_DEG 15.0
/* Cluster width: normals are binned at this width, the heaviest 3 x 3 bins
 * (3 bins for the walls) seed a mean shift over the normals within this
 * angle, which ends with a pass at JL_FRAME_FINE_DEG so that the faces of a
 * planar floor or wall alone decide, not a fillet or a curved wall's facets
 * next to it. */
#define JL_FRAME_CLUSTER_DEG 2.0
#define JL_FRAME_FINE_DEG 0.25
/* A last pass within this: a planar face's facets agree to about 1e-4
 * degrees (vertices stored as 32-bit floats in vehicle coordinates), the
 * facets of a fillet beside it differ by more. */
#define JL_FRAME_EXACT_DEG 0.01
/* The frames differ when R moves some vertex (about the bounding box
 * centre) by more than this fraction of the block's shortest edge: below
 * it (0.05 mm for the DIN block) a second fill would place the same blocks. */
#define JL_FRAME_MIN_SHIFT 1e-3

typedef struct jl_trunk_frame {
  double R[3][3];          /* rows: the trunk frame's x, y, z axes in mesh coordinates (p' = R p) */
  double q[4];             /* unit quaternion (w, x, y, z) of R^T: a block turned by q' in the
                              trunk frame is turned by q (x) q' in the mesh */
  double yaw, pitch, roll; /* radians: R^T = Rz(yaw) Ry(pitch) Rx(roll), the mesh's attitude */
  double angle;            /* radians: the rotation angle of R */
  double shift;            /* mm: the largest distance R moves a vertex about the box centre */
  double floor_area;       /* mm^2 of the floor faces that decided (0: none found, up stays z) */
  double wall_area;        /* mm^2 of the wall faces that decided (0: none found, x stays the
                              mesh's x turned into the floor) */
  double surface_area;     /* mm^2 of the whole surface */
  int turned;              /* 1 when shift exceeds JL_FRAME_MIN_SHIFT of the shortest block edge */
} jl_trunk_frame;

/* Finds the floor's frame of m (outward normals, as jl_mesh_validate
 * leaves them). Linear in the triangles (a few passes each). */
int jl_trunk_frame_detect(const jl_mesh *m, const jl_block_size *block, jl_trunk_frame *f, jl_error *err);

/* Rotation matrix rows (p' = R p) of the mesh attitude yaw, pitch, roll
 * (radians): R^T = Rz(yaw) Ry(pitch) Rx(roll). */
void jl_trunk_frame_from_angles(double yaw, double pitch, double roll, double R[3][3]);

/* out = m with every vertex turned into the frame (p' = R p); triangles
 * copied. out is freed with jl_mesh_free. */
int jl_trunk_frame_turn_mesh(const jl_mesh *m, const jl_trunk_frame *f, jl_mesh *out, jl_error *err);

/* out (initialised by the caller) = the packing in, given in the trunk
 * frame, turned back into the mesh's: centre R^T c', orientation q (x) q'. */
int jl_trunk_frame_packing_back(const jl_trunk_frame *f, const jl_block_packing *in, jl_block_packing *out,
                                jl_error *err);

/* What the fills did in one frame (counts 0 when a fill did not run). */
typedef struct jl_frame_fills {
  int ran;                 /* 1 when this frame's fills ran */
  int count;               /* the best of its fills */
  const char *best;        /* which: "grid", "layered", "slabs_x", "slabs_y", "tilt" (NULL: none) */
  int grid, layered, slab[2], tilt;  /* blocks of each fill (slab[0]: cuts across x) */
  double grid_s, layered_s, slab_s[2], tilt_s;  /* seconds of each */
  double found_s;          /* seconds from the start of the run when count was reached */
  int tilt_ran;            /* the tilted fill ran in this frame */
  int complete;            /* 0: a deadline or the stop flag cut one of its fills short */
  int rejected;            /* 1: its packing, turned back, failed the exact check (not kept) */
} jl_frame_fills;

/* The fills of a run, for the result: the mesh's frame ([0]) and the
 * floor's ([1], when it is turned and time was left). */
typedef struct jl_trunk_fill_report {
  jl_trunk_frame frame;
  jl_frame_fills fills[2];
  int winner;              /* the frame of the best fill (0 or 1) */
  double budget_s;         /* seconds the fills could take (their share of --time) */
  double time_s;           /* seconds they took */
} jl_trunk_fill_report;

#endif
