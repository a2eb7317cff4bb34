/* Repairs of a trunk mesh as CAD exports leave it, each changing the surface
 * by at most a tolerance tol (mm; jl_mesh_validate_repair takes it relative
 * to the bounding box diagonal): coordinates rounded to a few digits put
 * vertices a hair apart and turn slivers (triangles far lower than long)
 * over onto their neighbours. Called by the validation in mesh.c, in the
 * order declared here. */
#ifndef JL_MESH_REPAIR_H
#define JL_MESH_REPAIR_H

#include "trunk.h"

/* Most rounds of sliver flips: a flip can leave a new sliver beside it
 * (a fan of nearly collinear vertices), which the next round takes. */
#define JL_MESH_SLIVER_ROUNDS 16

/* Merges each vertex into the nearest earlier kept vertex within tol
 * (visited in index order, so the kept vertices lie more than tol apart and
 * none moves by more than tol), renumbers the triangles and drops the
 * merged vertices. A short edge collapses this way; triangles left with a
 * repeated vertex are for the degenerate drop. *welded: vertices merged. */
int jl_mesh_weld_near(jl_mesh *m, double tol, int *welded, jl_error *err);

/* Removes pairs of triangles on the same three vertices facing opposite
 * ways (a flat pocket that welding closed: it bounds nothing). orig (may
 * be NULL) is compacted with the triangles. *removed: triangles removed. */
int jl_mesh_drop_doubled(jl_mesh *m, int *orig, int *removed, jl_error *err);

/* On a closed, consistently oriented 2-manifold: a triangle whose height
 * over its longest edge AB is below tol (its apex C lies within tol of AB,
 * maybe on the far side, folded over its neighbour ABD) is removed by
 * flipping AB to CD: ABC and ABD become ADC and DBC, which cover ABD and
 * keep the surface closed, manifold and oriented; the surface moves by the
 * sliver's height. A flip is made only when CD is not an edge yet, both new
 * triangles face the way ABD does, and both are higher than the sliver.
 * *flips: slivers removed. */
int jl_mesh_flip_slivers(jl_mesh *m, double tol, int *flips, jl_error *err);

/* Height of triangle t over its longest edge (mm); *edge: that edge's index
 * k, from corner k to corner k + 1. */
double jl_mesh_triangle_height(const jl_mesh *m, int t, int *edge);

#endif
