/* Trunk job files: the problem file (read), the result JSON (written
 * atomically, read back by verify and --resume), a .glb scene (assimp
 * export) and an SVG with top, side and rear views. */
#ifndef JL_TRUNK_IO_H
#define JL_TRUNK_IO_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "mesh.h"
#include "trunk_check.h"
#include "trunk_frame.h"
#include "trunk_reach.h"
#include "trunk_search.h"

#define JL_TRUNK_NAME_MAX 128
#define JL_TRUNK_PATH_MAX 4096

typedef struct jl_trunk_problem {
  char name[JL_TRUNK_NAME_MAX];
  char mesh[JL_TRUNK_PATH_MAX];   /* as opened: relative to the working folder, or absolute */
  char units[8];                  /* "mm", "cm", "m", "in" */
  double scale;                   /* mm per mesh unit */
  jl_block_size block;            /* mm */
} jl_trunk_problem;

/* Defaults: units mm, DIN block, name from the mesh file name. */
void jl_trunk_problem_from_mesh(jl_trunk_problem *p, const char *mesh_path);
/* A problem file (docs/formats.md): its mesh path is relative to the file's folder. */
int jl_trunk_problem_load(jl_trunk_problem *p, const char *path, jl_error *err);
/* "LxWxH" in mm, each finite and > 0. */
int jl_block_size_parse(const char *opt, const char *s, jl_block_size *b, jl_error *err);

/* What the result file says of a run (trunk_run.h gathers it). */
typedef struct jl_trunk_summary {
  const jl_trunk_problem *problem;
  const jl_block_packing *blocks;
  const jl_mesh_report *mesh;     /* what validation found */
  const jl_trunk_report *check;   /* the exact check of blocks */
  int baseline_count;             /* the grid fill (the baseline) */
  long upper_bound;
  uint64_t seed;
  const char *device;             /* "cpu" or "cuda" */
  const char *device_name;
  const char *search;             /* where the packing comes from: "grid", "layered", "slabs_x", ... */
  double time_s, time_to_best_s, baseline_time_s;  /* baseline: the grid fill */
  const char *stopped_by;         /* "baseline", "time", "signal", ... */
  const jl_trunk_run_info *search_info; /* what the annealing search did; NULL when none ran */
  int baseline_complete;          /* 0: --time or a signal cut the grid fill short */
  const char *start;              /* the search's start: "grid", "layered", "slabs_x", "slabs_y", "tilt", "resume" (NULL: not written) */
  int slab_count[2];              /* slab fills across x and y (0 when not run or cut short) */
  int layered_count;              /* the layered fill; < 0: not written */
  double layered_time_s;
  int layered_complete;
  int tilt_count;                 /* the tilted fill (0 when not run, no sloped face or no split could win) */
  const jl_trunk_fill_report *fills; /* the fills in both frames, their budget and times (NULL: not written) */
  int fills_complete;             /* with fills: 0 when they were cut short below the bound */
  const jl_reach_info *reach;     /* the reachable volume; NULL when not measured */
  int ranks;                      /* islands: MPI ranks (1: one search) */
  uint64_t migrations;            /* islands: exchanges with the other ranks */
  const jl_rank_info *rank_info;  /* ranks entries, or NULL */
} jl_trunk_summary;

int jl_trunk_summary_write_json(const char *path, const jl_trunk_summary *r, jl_error *err);
/* Reads a trunk result: problem (mesh path resolved: as written, else
 * relative to the result's folder) and blocks (quaternions must be unit). */
int jl_trunk_result_read_json(const char *path, jl_trunk_problem *prob, jl_block_packing *blocks,
                              jl_error *err);
/* jl_result_kind (a result file's "kind") is public: include/jostle/common.h */

/* glTF binary: the trunk (translucent) and one box node per block, in metres, y up. */
int jl_trunk_write_glb(const char *path, const jl_mesh *m, const jl_block_size *b,
                       const jl_block_packing *p, jl_error *err);
/* Top, side and rear orthographic views: trunk edges (creases and outline) and blocks. */
int jl_trunk_write_svg(const char *path, const jl_mesh *m, const jl_block_size *b,
                       const jl_block_packing *p, const char *title, jl_error *err);

#endif
