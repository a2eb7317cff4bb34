/* Exact legality of a block packing in a trunk, with the mesh's triangles
 * rather than samples: no block crosses the surface (13-axis triangle/box
 * separating axes over a BVH), every block lies inside (winding number of
 * its centre), and no two blocks overlap (15-axis box/box separating axes
 * after a bounding-sphere sieve). Touching is legal: a violation must be
 * deeper than the tolerance. */
#ifndef JL_TRUNK_CHECK_H
#define JL_TRUNK_CHECK_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>

#include "bvh.h"
#include "trunk.h"

/* Tolerance relative to the mesh's bounding box diagonal (1e-7: 0.1 um in a 1 m trunk). */
#define JL_TRUNK_REL_TOL 1e-7

/* Seconds that work cut short by a limit may still spend making what it
 * found usable: a fill placing its plan and checking it, one exact check of
 * the search. Short enough that --time and Ctrl-C still end a run within
 * about a second; long enough for any check of up to JL_TRUNK_MAX_BLOCKS
 * blocks on a mesh of ordinary size. */
#define JL_TRUNK_FINISH_S 0.5

/* When long work gives up: once *stop (may be NULL; set by SIGINT/SIGTERM)
 * is set or jl_time_now() reaches deadline (> 0), but not before grace
 * seconds from the start of the work. Zeros: never. */
typedef struct jl_trunk_limits {
  double deadline;
  const volatile sig_atomic_t *stop;
  double grace;
} jl_trunk_limits;

/* 1 when work that started at jl_time_now() == since must give up; lim may be NULL. */
int jl_trunk_limits_hit(const jl_trunk_limits *lim, double since);

/* An entry of a uniform grid of blocks: its cell and what it stands for
 * (a block, a group). Sorted by jl_cell_ref_cmp (cell, then id), a cell's
 * entries are one run that jl_cell_ref_find locates (n when absent). */
typedef struct jl_cell_ref {
  int64_t key[3];
  int id;
} jl_cell_ref;

int jl_cell_ref_cmp(const void *a, const void *b);
int jl_cell_ref_find(const jl_cell_ref *c, int n, const int64_t key[3]);

/* A mesh prepared for checks; also the ctx of jl_trunk_check. */
typedef struct jl_trunk_geom {
  const jl_mesh *mesh;     /* borrowed */
  jl_bvh bvh;
  jl_block_size block;
  double diag;             /* bounding box diagonal, mm */
  double tol;              /* mm: JL_TRUNK_REL_TOL * diag unless set otherwise */
  jl_trunk_limits lim;     /* jl_trunk_check's limits (zeros after init: none) */
} jl_trunk_geom;

/* An oriented box: centre, unit axes (rows), half extents. */
typedef struct jl_obb {
  double c[3];
  double ax[3][3];
  double h[3];
} jl_obb;

int jl_trunk_geom_init(jl_trunk_geom *g, const jl_mesh *m, jl_block_size block, jl_error *err);
void jl_trunk_geom_free(jl_trunk_geom *g);

/* Block i of a packing as a box (the quaternion is normalised). */
void jl_obb_from_block(const jl_block_size *b, const double centre[3], const double quat[4],
                       jl_obb *o);
void jl_obb_bounds(const jl_obb *o, double lo[3], double hi[3]);

/* Deepest separating-axis overlap of the box with any triangle (<= 0 when
 * it touches none; the triangle in *tri, -1 when none). With stop_at_tol the
 * search ends at the first triangle deeper than g->tol. */
double jl_trunk_box_surface_depth(const jl_trunk_geom *g, const jl_obb *o, int stop_at_tol, int *tri);
/* Sum of the box's positive separating-axis overlaps with the triangles:
 * 0 when it crosses none, and growing with every wall it crosses (a
 * smoother measure than the deepest one for placing a block). */
double jl_trunk_box_surface_sum(const jl_trunk_geom *g, const jl_obb *o);
/* Overlap of two boxes along their best separating axis (<= 0 when apart). */
double jl_obb_overlap_depth(const jl_obb *a, const jl_obb *b);
/* The same with the direction of least overlap, for pushing boxes apart
 * (trunk_legalize.c): push gets the unit axis along which moving b by the
 * returned depth clears a (a clears b moving the opposite way). */
double jl_obb_contact(const jl_obb *a, const jl_obb *b, double push[3]);
/* Separating-axis overlap of a box and the triangle p[0..2] (13 axes, <= 0
 * when apart) and in push the unit direction (trunk frame) along which
 * moving the box by that much clears the triangle. */
double jl_box_tri_contact(const jl_obb *o, const double *const p[3], double push[3]);
/* The deepest triangle the box meets (in *tri, -1 when none) with its
 * overlap (returned, 0 when none) and push direction (jl_box_tri_contact). */
double jl_trunk_box_surface_contact(const jl_trunk_geom *g, const jl_obb *o, int *tri, double push[3]);
/* Generalised winding number of the closed surface around p (1 inside, 0 outside). */
double jl_mesh_winding_number(const jl_mesh *m, const double p[3]);
/* Ray parity over the BVH, retried along other rays when one grazes an edge. */
int jl_trunk_point_inside(const jl_trunk_geom *g, const double p[3]);
/* Distance from p to the nearest point of the surface. */
double jl_mesh_distance(const jl_mesh *m, const double p[3]);
/* The triangle nearest to p within radius (BVH; *tri -1 and INFINITY when
 * none): its distance (returned) and unit outward normal. */
double jl_trunk_nearest_triangle(const jl_trunk_geom *g, const double p[3], double radius, int *tri,
                                 double normal[3]);

typedef enum jl_violation {
  JL_VIOLATION_NONE = 0,
  JL_VIOLATION_SURFACE = 1,  /* a block crosses the trunk surface */
  JL_VIOLATION_OUTSIDE = 2,  /* a block lies outside the trunk */
  JL_VIOLATION_OVERLAP = 3   /* two blocks overlap */
} jl_violation;

typedef struct jl_trunk_report {
  int legal;
  int count;
  double tol;              /* mm */
  double max_surface_depth;  /* mm, deepest block/triangle overlap (<= 0: none) */
  int surface_block, surface_triangle;
  int outside_blocks;      /* blocks whose centre lies outside */
  int outside_block;       /* the one farthest outside, -1 when none */
  double outside_distance; /* its centre's distance to the surface, mm */
  double max_overlap_depth;  /* mm, deepest block/block overlap (<= 0: none) */
  int overlap_i, overlap_j;
  jl_violation worst_kind;
  double worst;            /* mm of the worst violation, 0 when legal */
  int complete;            /* 0: the limits stopped the check (legal is then 0) */
} jl_trunk_report;

int jl_trunk_check_packing(const jl_trunk_geom *g, const jl_block_packing *p, jl_trunk_report *r,
                           jl_error *err);
/* The same, giving up (r->complete = 0, r->legal = 0) when lim (may be NULL) is hit. */
int jl_trunk_check_packing_until(const jl_trunk_geom *g, const jl_block_packing *p,
                                 const jl_trunk_limits *lim, jl_trunk_report *r, jl_error *err);
const char *jl_violation_name(jl_violation v);
/* One line naming the worst violation ("legal" and the largest depths when legal). */
void jl_trunk_report_describe(const jl_trunk_report *r, char *out, size_t cap);
/* The exact check of a packing a fill built: JL_ERR_INTERNAL naming the fill
 * (what) and the worst violation when it is not legal. When lim (may be
 * NULL) stops the check first, *cut (may be NULL) is set and p is kept
 * unchecked: the fills place only blocks that passed the box and inside
 * tests, and the run checks what it writes to the end. */
int jl_trunk_require_legal(const jl_trunk_geom *g, const jl_block_packing *p, const char *what,
                           const jl_trunk_limits *lim, int *cut, jl_error *err);

/* jl_trunk_check_fn for the search: ctx is a jl_trunk_geom, checked within
 * its lim (a check the limits stop is not legal, *worst NaN). */
int jl_trunk_check(void *ctx, const jl_block_packing *p, double *worst);

#endif
