/* Trunk meshes: read through assimp, scaled to millimetres, and validated
 * before any work (closed, consistently oriented outward, no
 * self-intersection, no non-finite coordinates). */
#ifndef JL_MESH_H
#define JL_MESH_H

#include "trunk.h"

/* What validation found and fixed. */
typedef struct jl_mesh_report {
  int input_triangles;     /* triangles read from the file */
  int triangles;           /* triangles kept */
  int degenerate_dropped;  /* repeated vertices or zero area */
  int components;          /* connected pieces of the surface */
  int cavities;            /* pieces inside another piece: obstacles, facing inward */
  int flipped_triangles;   /* triangles turned to make the orientation consistent and outward */
  /* Repairs within repair_tol (jl_mesh_validate_repair; all 0 without): */
  double repair_tol;       /* mm */
  int welded_vertices;     /* vertices merged into one closer than repair_tol */
  int doubled_removed;     /* triangles removed in pairs on the same three vertices */
  int slivers_removed;     /* triangles lower than repair_tol, removed by edge flips */
  int overlaps_accepted;   /* pairs of triangles crossing by at most repair_tol */
  double max_overlap;      /* the deepest of those, mm */
  double volume;           /* signed volume, mm^3 (> 0 after validation) */
  double lo[3], hi[3];     /* bounding box, mm */
} jl_mesh_report;

/* Repair tolerance of jl_mesh_load, relative to the bounding box diagonal
 * (16 um in a 1.6 m trunk): above the rounding of coordinates written to 6
 * significant digits in vehicle coordinates (5 um at 1 to 10 m), far below
 * anything a block notices. */
#define JL_MESH_REPAIR_TOL 1e-5

/* Largest |coordinate| of a mesh vertex in mm (10 km): trunks are metres
 * across, and far beyond this a misplaced vertex makes its triangles look
 * degenerate next to the rest (a vertex at 1e30 would read as a hole). */
#define JL_MESH_COORD_MAX_MM 1e7

/* "mm", "cm", "m", "in" -> millimetres per unit; 0 when unknown. */
double jl_units_scale(const char *units);

/* Reads every triangle of every mesh in the file (node transforms applied),
 * scales by scale (mm per file unit), welds identical vertices and
 * validates with repairs within JL_MESH_REPAIR_TOL (jl_mesh_validate_repair).
 * Before assimp reads it the file must be a regular file within
 * JL_FILE_MAX_BYTES whose declared counts fit it and the limits
 * (jl_mesh_scan); what assimp returns is checked (face indices, counts,
 * finite coordinates within JL_MESH_COORD_MAX_MM). Errors name the file. */
int jl_mesh_load(jl_mesh *m, const char *path, double scale, jl_mesh_report *rep, jl_error *err);

/* The same from arrays (3 * n_vertices coordinates in the mesh's unit,
 * 3 * n_triangles vertex indices): counts within the limits, every index a
 * vertex, every coordinate finite and within range, then scaled, welded
 * and validated with repairs as jl_mesh_load does. Errors start with name. */
int jl_mesh_load_arrays(jl_mesh *m, const double *vertices, int n_vertices, const int *triangles,
                        int n_triangles, double scale, const char *name, jl_mesh_report *rep,
                        jl_error *err);

/* Copies arrays into a mesh (tests, generated shapes); no validation. */
int jl_mesh_from_arrays(jl_mesh *m, const double *vertices, int n_vertices, const int *triangles,
                        int n_triangles, jl_error *err);

/* In place: drops degenerate triangles, requires a closed 2-manifold surface
 * (every edge shared by exactly two triangles), orients each connected
 * component consistently, outward (a component nested inside an odd number
 * of others bounds a cavity and faces inward), and rejects self-intersection.
 * name prefixes the error messages (the file). No repairs: the same as
 * jl_mesh_validate_repair with repair_tol_rel 0. */
int jl_mesh_validate(jl_mesh *m, const char *name, jl_mesh_report *rep, jl_error *err);

/* jl_mesh_validate with repairs within tol = repair_tol_rel x the bounding
 * box diagonal (mesh_repair.h), each counted in rep: vertices closer than
 * tol are welded, pairs of triangles on the same three vertices facing
 * opposite ways removed, a zero-area triangle kept where dropping it would
 * open the surface, triangles lower than tol removed by edge flips (after
 * the orientation), and pairs of triangles crossing by at most tol
 * accepted. A crossing deeper than tol is refused, naming both triangles
 * (their index in the input, from 0), a point of the crossing and its
 * depth. */
int jl_mesh_validate_repair(jl_mesh *m, const char *name, double repair_tol_rel, jl_mesh_report *rep,
                            jl_error *err);

/* Signed volume by the divergence theorem (positive when normals point out). */
double jl_mesh_volume(const jl_mesh *m);
void jl_mesh_bounds(const jl_mesh *m, double lo[3], double hi[3]);
/* Index of a pair of triangles that cross each other, or -1 in *a when none. */
int jl_mesh_find_self_intersection(const jl_mesh *m, int *a, int *b, jl_error *err);

/* A crossing of two triangles deeper than a tolerance (jl_mesh_find_crossing). */
typedef struct jl_mesh_crossing {
  int a, b;                /* the triangles, -1 when none crosses deeper than the tolerance */
  double depth;            /* mm: the smallest move that separates them */
  double at[3];            /* a point of the crossing */
  int accepted;            /* pairs crossing by at most the tolerance */
  double max_accepted;     /* the deepest of those, mm */
} jl_mesh_crossing;

/* Pairs of triangles that cross by more than 1e-9 x the bounding box
 * diagonal (a touch is no crossing): by at most tol (mm) they are counted
 * and passed over; the first deeper one ends the search. */
int jl_mesh_find_crossing(const jl_mesh *m, double tol, jl_mesh_crossing *x, jl_error *err);
void jl_mesh_free(jl_mesh *m);

#endif
