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
  int fills_complete;      /* 0: the time or a stop cut the fills short below the upper
                            * bound: count is what they reached, not the trunk's volume */
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

/* ---- The whole job, as `jostle trunk` runs it ---------------------------
 * jl_trunk_measure runs a mesh or a problem file with every option of the
 * command line, passes its notices and progress lines to a log callback,
 * can join an MPI job (one search per rank), and returns the facts the
 * command prints; the jl_trunk_outcome_write_* functions write its files. */

/* Result files hold at most this many blocks for jl_trunk_verify and resume. */
#define JL_TRUNK_MAX_BLOCKS 100000
/* jl_trunk_config.max_blocks at most: block counts are ints, and 1e7 blocks
 * already take gigabytes in the fills and the search. */
#define JL_TRUNK_MAX_BLOCKS_CEIL 10000000L

/* jl_trunk_config.moves: each share and their sum at most this (the chains'
 * other moves, insert, delete and shake, take 0.3; shifts keep some). */
#define JL_TRUNK_MOVES_MAX 0.7

/* Notices and progress lines go to a jl_log_fn (common.h): one line, without
 * "jostle: " and without a newline, on the calling thread. */

/* What messages call the settings (refusals, notices): the CLI passes its
 * options' names ("--units"), the defaults are the config's fields. */
typedef struct jl_trunk_names {
  const char *units, *max_blocks, *time, *device;
} jl_trunk_names;

/* What a run knows before any work: the problem and, under MPI, the rank. */
typedef struct jl_trunk_start {
  const char *name;        /* the problem's name (a mesh file's name without folder and extension) */
  const char *mesh;        /* the mesh file as opened */
  int rank, size;          /* this MPI rank and the ranks (0 and 1: one search) */
} jl_trunk_start;

typedef struct jl_trunk_config {
  const char *input;       /* a mesh file, or a trunk problem file (a name ending in .json) */
  const char *units;       /* the mesh's unit "mm", "cm", "m" or "in"; NULL: the problem's (mm) */
  double block[3];         /* block edges, mm; zeros: the problem's (200 x 100 x 50) */
  double time_s;           /* the whole run (default 60) */
  uint64_t seed;           /* default 1 (MPI: rank 0's; the others mix in their rank) */
  const char *device;      /* "auto" (default), "cpu" or "cuda" */
  int threads;             /* host threads (0: all; MPI: the rank's share of the node) */
  double spacing;          /* surface sample spacing, mm (0: fine enough for the block) */
  double cell;             /* surface grid cell, mm (default 20) */
  double moves[3];         /* turn, settle and push shares of the search's moves, each and
                            * their sum at most JL_TRUNK_MOVES_MAX (< 0: 0) */
  long max_blocks;         /* refuse a mesh that could hold more (default JL_TRUNK_MAX_BLOCKS,
                            * at most JL_TRUNK_MAX_BLOCKS_CEIL) */
  int no_reach;            /* 1: the reachable volume is not measured */
  const char *resume;      /* a trunk result to start from when it beats the fills, or NULL */
  jl_trunk_names names;
  jl_log_fn log;     /* NULL: silent */
  void *log_ctx;
  int progress_live;       /* 1: progress lines to draw in place (a terminal): one per
                            * step of the fills and one every 0.2 s; 0: one every 5 s
                            * and one at each better packing */
  jl_progress_fn progress; /* or NULL: at each fill's end and each launch of the search */
  void *progress_ctx;
  volatile sig_atomic_t *stop; /* or NULL: set it to stop any phase with the best legal packing */
  /* Called once the problem is read, before any work (MPI: on every rank);
   * a status other than JL_OK ends the run with it (and err). NULL: none. */
  int (*ready)(void *ctx, const jl_trunk_start *start, jl_error *err);
  void *ready_ctx;
  int mpi;                 /* 1: join the MPI job when an MPI launcher (mpirun, srun)
                            * started this process: one search per rank, each its own
                            * seed and device slot, exchanging their best packings;
                            * rank 0's outcome holds the best. The job is left when
                            * the call returns, so a process makes one such call. */
  double migrate_s;        /* MPI: seconds between exchanges (0: 10) */
} jl_trunk_config;

JL_API void jl_trunk_config_default(jl_trunk_config *c);

/* One MPI rank's facts (on rank 0). */
typedef struct jl_trunk_rank {
  char device_name[128];
  int cuda_device;         /* -1: the CPU */
  double best;             /* its best packing's blocks */
  int failed;              /* its search failed; the others went on */
} jl_trunk_rank;

/* The run's facts. Pointers stay valid until jl_trunk_outcome_free. On
 * ranks other than 0 only root, rank_failed and rank_code are set. */
typedef struct jl_trunk_outcome {
  int root;                /* 1: this call holds the run's result (rank 0, or one search) */
  int rank_failed;         /* MPI: this rank's search failed and the others went on */
  int rank_code;           /* its status */
  const char *name;        /* the problem's name */
  const char *mesh;        /* the mesh file as opened */
  double block[3];         /* block edges, mm */
  int count;               /* blocks in the best packing (legal by the exact check) */
  const double *centre;    /* 3 * count, mm, in the mesh's frame */
  const double *quat;      /* 4 * count, unit quaternions (w, x, y, z) */
  double mesh_volume_mm3;
  long bound;              /* floor(mesh volume / block volume) */
  int baseline;            /* the grid baseline's blocks (one orientation, one lattice) */
  int layered;             /* the layered fill's blocks */
  int fills_complete;      /* 0: the time or a stop cut the fills short below the upper
                            * bound: count is what they reached, not the trunk's volume */
  int floor_frame;         /* 1: the fills ran in the floor's frame too */
  int fill_mesh_frame, fill_floor_frame; /* the fills' best in each frame */
  double floor_angle_deg;  /* the floor's frame turned from the mesh's */
  int reach_measured;      /* 1: the reachable volume was measured */
  double reach_mm3;
  long reach_bound;        /* blocks the reachable volume could hold */
  const char *stopped_by;  /* "time", "target", "signal", "rounds" or "baseline" */
  const char *source;      /* where the best comes from: a fill, "resume", "anneal" or "rank" */
  double time_s, time_to_best_s;
  uint64_t seed;           /* the seed given */
  int gap_added, pocket_added;   /* the search's blocks by gap fill and turned into pockets */
  int legalize_legal, legalize_tried;
  uint64_t moves, relax_steps;
  int checks, checks_failed;     /* the search's exact checks */
  char device_name[128];   /* where the search ran */
  char check[256];         /* the final exact check in words */
  int ranks;               /* MPI ranks (1: one search) */
  uint64_t migrations;
  const jl_trunk_rank *rank_info; /* ranks entries (rank 0), or NULL */
  struct jl_trunk_job *job; /* what the writers read */
} jl_trunk_outcome;

/* Runs it. On JL_OK out is filled (free it with jl_trunk_outcome_free);
 * on another status it is left empty and err says why: JL_ERR_INPUT with
 * the file, field or setting (by names) for bad input. */
JL_API int jl_trunk_measure(const jl_trunk_config *c, jl_trunk_outcome *out, jl_error *err);
JL_API void jl_trunk_outcome_free(jl_trunk_outcome *out);

/* The outcome's files (rank 0), each written atomically to path: the result
 * JSON (docs/formats.md), a glTF binary scene (the trunk and one box per
 * block, metres, y up) and an SVG of top, side and rear views under title. */
JL_API int jl_trunk_outcome_write_json(const jl_trunk_outcome *out, const char *path, jl_error *err);
JL_API int jl_trunk_outcome_write_glb(const jl_trunk_outcome *out, const char *path, jl_error *err);
JL_API int jl_trunk_outcome_write_svg(const jl_trunk_outcome *out, const char *path, const char *title,
                                      jl_error *err);

/* A trunk result file checked against its mesh. */
typedef struct jl_trunk_verdict {
  int legal;               /* 1: every block inside the surface and apart from the others */
  int count;
  double block[3];         /* mm */
  double mesh_volume_mm3;
  char mesh[4096];         /* the mesh file, as resolved */
  char why[256];           /* the exact check in words */
} jl_trunk_verdict;

/* JL_OK when the check could run (legal or not); bad files give JL_ERR_INPUT. */
JL_API int jl_trunk_verify(const char *result_path, jl_trunk_verdict *v, jl_error *err);

/* mm per unit of "mm", "cm", "m" or "in"; 0 for anything else. */
JL_API double jl_trunk_units_scale(const char *units);

/* "LxWxH" in mm, each finite and > 0, into block; messages start with opt. */
JL_API int jl_trunk_block_parse(const char *opt, const char *s, double block[3], jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
