/* Trunk volume: as many 200 x 100 x 50 mm blocks (one liter each, DIN 70020 /
 * ISO 3832) as fit into a closed mesh, in any position and orientation. The
 * count is the volume in liters. */
#ifndef JOSTLE_TRUNK_H
#define JOSTLE_TRUNK_H

#include <jostle/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jl_trunk_options {
  double time_s;           /* the whole run's time (default 60) */
  uint64_t seed;           /* default 1 */
  const char *device;      /* "auto" (default), "cpu" or "cuda" */
  int threads;             /* host threads (0: all the process may use) */
  const char *units;       /* the mesh's length unit: "mm" (default), "cm", "m" or "in" */
  jl_progress_fn progress; /* or NULL: about once a second, on the calling thread (the
                            * run goes on a thread of its own); best: blocks so far, work:
                            * annealing moves. Non-zero stops the run as *stop does. */
  void *progress_ctx;
  volatile sig_atomic_t *stop; /* set it (from a signal handler or another thread) to stop
                            * within about a second: the best legal packing so far is
                            * returned with JL_OK and JL_STOPPED_BY_SIGNAL; 0 blocks when
                            * it is set before the first fill ends (or before the call) */
} jl_trunk_options;

typedef struct jl_trunk_result {
  int count;               /* blocks = liters */
  double *centre;          /* 3 * count, mm, in the mesh's frame */
  double *quat;            /* 4 * count, unit quaternions (w, x, y, z): a block's axes
                            * (200, 100, 50 mm along x, y, z) turned into the mesh's frame */
  double mesh_volume_l;    /* the mesh's volume, liters */
  double reachable_l;      /* the part of it some single block can cover, liters */
  int upper_bound;         /* floor of the smaller of the two */
  int baseline;            /* the grid baseline's count (one orientation, one lattice) */
  double max_penetration_mm; /* the exact check: deepest block into the surface */
  double max_overlap_mm;   /* the exact check: deepest block into another */
  double time_s;
  jl_stop_reason stopped_by;
  char device_name[128];
} jl_trunk_result;

JL_API void jl_trunk_options_default(jl_trunk_options *o);

/* Packs blocks into the mesh at path (STL, OBJ, PLY, glTF, 3MF, ... through
 * assimp; closed and free of self-intersection, repaired and checked as the
 * CLI does). res holds a legal packing on JL_OK; free it with
 * jl_trunk_result_free (on another status it is left empty). Bad options or
 * a bad mesh give JL_ERR_INPUT with a message naming the field or file.
 * Nothing is printed and no file is written. */
JL_API int jl_trunk_volume(const char *mesh_path, const jl_trunk_options *o, jl_trunk_result *res,
                           jl_error *err);

/* The same for a mesh given as arrays, in options' units: n_vertices * 3
 * coordinates (finite) and n_triangles * 3 vertex indices (0 to
 * n_vertices - 1), at least 4 of each, outward or inward (it is oriented).
 * The arrays are copied; messages name "vertices[i]", "triangles[i]",
 * "n_vertices" or "n_triangles", and "triangles:" for the surface. */
JL_API int jl_trunk_volume_triangles(const double *vertices, int n_vertices, const int *triangles,
                                     int n_triangles, const jl_trunk_options *o,
                                     jl_trunk_result *res, jl_error *err);

JL_API void jl_trunk_result_free(jl_trunk_result *res);

/* What jl_trunk_verify_file found: a trunk result checked against its mesh. */
typedef struct jl_trunk_verify_report {
  int legal;               /* every block inside the mesh, clear of the triangles and the others */
  int count;               /* blocks */
  double block[3];         /* the block's size, mm */
  char mesh[4096];         /* the mesh as the result names it */
  double mesh_volume_mm3;
  char why[256];           /* the check's summary line */
} jl_trunk_verify_report;

/* Reloads a trunk result's mesh, validates it and tests every block (docs/
 * formats.md). JL_OK when the check ran (legal or not: rep says). */
JL_API int jl_trunk_verify_file(const char *path, jl_trunk_verify_report *rep, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
