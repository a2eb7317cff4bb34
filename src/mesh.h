/* Trunk meshes: read through assimp, scaled to millimetres, and validated
 * before any work (closed, consistently oriented outward, no
 * self-intersection, no non-finite coordinates). */
#ifndef JL_MESH_H
#define JL_MESH_H

#include "trunk.h"

/* What validation found and fixed. */
typedef struct jl_mesh_report {
  int input_triangles;     /* triangles read from the file */
  int degenerate_dropped;  /* repeated vertices or zero area */
  int components;          /* connected pieces of the surface */
  int cavities;            /* pieces inside another piece: obstacles, facing inward */
  int flipped_triangles;   /* triangles turned to make the orientation consistent and outward */
  double volume;           /* signed volume, mm^3 (> 0 after validation) */
  double lo[3], hi[3];     /* bounding box, mm */
} jl_mesh_report;

/* Largest |coordinate| of a mesh vertex in mm (10 km): trunks are metres
 * across, and far beyond this a misplaced vertex makes its triangles look
 * degenerate next to the rest (a vertex at 1e30 would read as a hole). */
#define JL_MESH_COORD_MAX_MM 1e7

/* "mm", "cm", "m", "in" -> millimetres per unit; 0 when unknown. */
double jl_units_scale(const char *units);

/* Reads every triangle of every mesh in the file (node transforms applied),
 * scales by scale (mm per file unit), welds identical vertices and
 * validates (jl_mesh_validate). Before assimp reads it the file must be a
 * regular file within JL_FILE_MAX_BYTES whose declared counts fit it and
 * the limits (jl_mesh_scan); what assimp returns is checked (face indices,
 * counts, finite coordinates within JL_MESH_COORD_MAX_MM). Errors name the
 * file. */
int jl_mesh_load(jl_mesh *m, const char *path, double scale, jl_mesh_report *rep, jl_error *err);

/* Copies arrays into a mesh (tests, generated shapes); no validation. */
int jl_mesh_from_arrays(jl_mesh *m, const double *vertices, int n_vertices, const int *triangles,
                        int n_triangles, jl_error *err);

/* In place: drops degenerate triangles, requires a closed 2-manifold surface
 * (every edge shared by exactly two triangles), orients each connected
 * component consistently, outward (a component nested inside an odd number
 * of others bounds a cavity and faces inward), and rejects self-intersection.
 * name prefixes the error messages (the file). */
int jl_mesh_validate(jl_mesh *m, const char *name, jl_mesh_report *rep, jl_error *err);

/* Signed volume by the divergence theorem (positive when normals point out). */
double jl_mesh_volume(const jl_mesh *m);
void jl_mesh_bounds(const jl_mesh *m, double lo[3], double hi[3]);
/* Index of a pair of triangles that cross each other, or -1 in *a when none. */
int jl_mesh_find_self_intersection(const jl_mesh *m, int *a, int *b, jl_error *err);
void jl_mesh_free(jl_mesh *m);

#endif
