/* jostle trunk: trunk volume in liters from a mesh, and verify for trunk results. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "device.h"
#include "islands.h"
#include "log.h"
#include "mesh.h"
#include "timer.h"
#include "trunk_io.h"
#include "trunk_run.h"

/* The signal handler's only link to the search: a flag it polls between launches. */
static volatile sig_atomic_t jl_trunk_stop_flag = 0;

static void jl_trunk_on_signal(int sig) {
  (void)sig;
  jl_trunk_stop_flag = 1;
}

static void jl_trunk_install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = jl_trunk_on_signal;
  sa.sa_flags = SA_RESETHAND;  /* a second Ctrl-C kills at once */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static const char *const jl_trunk_help =
  "usage: jostle trunk MESH|PROBLEM.json [options]\n"
  "\n"
  "Measures a car trunk the way DIN 70020 / ISO 3832 do: as many blocks of\n"
  "200 x 100 x 50 mm (1 liter each) as fit, in any position and orientation.\n"
  "The mesh (STL, OBJ, PLY, glTF, 3MF, ... through assimp) must be a closed,\n"
  "non-self-intersecting surface; inverted orientation is fixed and reported.\n"
  "Every packing written has passed an exact check against the triangles.\n"
  "\n"
  "input:\n"
  "  MESH              a mesh file, or a trunk problem file (docs/formats.md)\n"
  "  --units U         mm (default), cm, m or in: the mesh's length unit\n"
  "  --block LxWxH     block edges in mm (default 200x100x50)\n"
  "  --max-blocks N    refuse a mesh that could hold more than N blocks (default\n"
  "                    100000: a 100 m^3 trunk; larger ones are nearly always a\n"
  "                    mesh in other units than --units says)\n"
  "\n"
  "search:\n"
  "  --spacing MM      surface sample spacing (default: fine enough that no block\n"
  "                    can straddle the surface between samples)\n"
  "  --cell MM         surface grid cell size (default 20)\n"
  "  --time SECONDS    time limit of the whole run (default 60): the fills\n"
  "                    (grid baseline, layered, slab and tilted fills, in the\n"
  "                    mesh's frame and the floor's) stop at 40% of it, the\n"
  "                    gap fill and search get the rest\n"
  "  --seed S          random seed (default 1)\n"
  "  --resume FILE     start from a trunk result (.json) when it beats the fills\n"
  "  --device D        cpu, cuda or auto (default auto)\n"
  "  --threads T       CPU threads (default: all cores, shared by the ranks on a node)\n"
  "  --migrate S       under mpirun: the ranks exchange their best packings every S\n"
  "                    seconds of the search (default 10)\n"
  "  --moves T,S,P     shares of the chains' turn (flush against the nearest\n"
  "                    face), settle (down and toward the nearest wall) and\n"
  "                    push (a column or row toward its nearer wall) moves,\n"
  "                    each in [0, 0.7], summing to at most 0.7 (default 0,0,0)\n"
  "  --no-reach        do not measure the reachable volume (the part of the\n"
  "                    interior some block can reach; by default it takes up\n"
  "                    to a tenth of --time before the fills)\n"
  "\n"
  "Ctrl-C (SIGINT) or SIGTERM stops any phase and writes the best legal\n"
  "packing found so far.\n"
  "\n"
  "output:\n"
  "  --out FILE.json   result (default NAME.json here, NAME made a safe file name);\n"
  "                    a glTF scene FILE.glb and a picture FILE.svg (top, side,\n"
  "                    rear views) are written beside it\n"
  "  --quiet           no progress lines\n";

enum {
  OPT_UNITS = 1000, OPT_BLOCK, OPT_SPACING, OPT_CELL, OPT_TIME, OPT_SEED, OPT_DEVICE,
  OPT_THREADS, OPT_OUT, OPT_RESUME, OPT_QUIET, OPT_HELP, OPT_MAX_BLOCKS, OPT_NO_REACH, OPT_MIGRATE,
  OPT_MOVES
};

static const struct option jl_trunk_opts[] = {
  {"units", required_argument, NULL, OPT_UNITS},
  {"block", required_argument, NULL, OPT_BLOCK},
  {"max-blocks", required_argument, NULL, OPT_MAX_BLOCKS},
  {"spacing", required_argument, NULL, OPT_SPACING},
  {"cell", required_argument, NULL, OPT_CELL},
  {"time", required_argument, NULL, OPT_TIME},
  {"seed", required_argument, NULL, OPT_SEED},
  {"device", required_argument, NULL, OPT_DEVICE},
  {"threads", required_argument, NULL, OPT_THREADS},
  {"out", required_argument, NULL, OPT_OUT},
  {"resume", required_argument, NULL, OPT_RESUME},
  {"quiet", no_argument, NULL, OPT_QUIET},
  {"no-reach", no_argument, NULL, OPT_NO_REACH},
  {"migrate", required_argument, NULL, OPT_MIGRATE},
  {"moves", required_argument, NULL, OPT_MOVES},
  {"help", no_argument, NULL, OPT_HELP},
  {NULL, 0, NULL, 0},
};

typedef struct jl_trunk_args {
  const char *input, *units, *device, *out, *resume;
  jl_block_size block;
  int block_given;
  double spacing;          /* 0: the search's default */
  double cell;
  double time_s;
  uint64_t seed;
  long threads;
  double migrate_s;
  long max_blocks;
  int quiet;
  int no_reach;
  double moves[3];         /* --moves: turn, settle, push shares; < 0: the default */
} jl_trunk_args;

/* The chains' other moves (insert, delete, shake) take 0.3 of them; the
 * added ones share at most the rest, and shifts keep some. */
#define JL_TRUNK_MOVES_MAX 0.7

/* --moves T,S,P: three shares, each and their sum in [0, JL_TRUNK_MOVES_MAX]. */
static int jl_trunk_moves_parse(const char *s, double out[3], jl_error *err) {
  const char *p = s;
  double sum = 0.0;
  for (int k = 0; k < 3; ++k) {
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno || !(v >= 0.0 && v <= JL_TRUNK_MOVES_MAX) ||
        *end != (k < 2 ? ',' : '\0'))
      return jl_error_set(err, JL_ERR_INPUT,
                          "--moves: expected three shares T,S,P in [0, %g], got '%s'",
                          JL_TRUNK_MOVES_MAX, s);
    out[k] = v;
    sum += v;
    p = end + 1;
  }
  if (sum > JL_TRUNK_MOVES_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "--moves: the shares sum to %g, more than %g", sum,
                        JL_TRUNK_MOVES_MAX);
  return JL_OK;
}

/* --max-blocks at most: block counts are ints, and 1e7 blocks already take
 * gigabytes in the fills and the search. */
#define JL_TRUNK_MAX_BLOCKS_CEIL 10000000L

static int jl_trunk_parse(int argc, char **argv, jl_trunk_args *a, int *help, jl_error *err) {
  memset(a, 0, sizeof *a);
  a->device = "auto";
  a->cell = 20.0;
  a->max_blocks = JL_TRUNK_MAX_BLOCKS;
  a->time_s = 60.0;
  a->seed = 1;
  a->moves[0] = a->moves[1] = a->moves[2] = -1.0;
  *help = 0;
  optind = 1;
  int c = -1, rc = JL_OK;
  jl_cli_opts o = {.opts = jl_trunk_opts, .cmd = "trunk"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc, argv, err)) > 0) {
    switch (c) {
    case OPT_UNITS:
      if (jl_units_scale(optarg) == 0.0)
        rc = jl_error_set(err, JL_ERR_INPUT, "--units: expected mm, cm, m or in, got '%s'", optarg);
      a->units = optarg;
      break;
    case OPT_BLOCK:
      rc = jl_block_size_parse("--block", optarg, &a->block, err);
      a->block_given = 1;
      break;
    case OPT_SPACING: rc = jl_cli_double("--spacing", optarg, 1e-3, 1e6, &a->spacing, err); break;
    case OPT_CELL: rc = jl_cli_double("--cell", optarg, 1e-3, 1e6, &a->cell, err); break;
    case OPT_MAX_BLOCKS:
      rc = jl_cli_int("--max-blocks", optarg, 1, JL_TRUNK_MAX_BLOCKS_CEIL, &a->max_blocks, err);
      break;
    case OPT_TIME:
      rc = jl_cli_double("--time", optarg, 0.0, 1e9, &a->time_s, err);
      if (!rc && !(a->time_s > 0)) rc = jl_error_set(err, JL_ERR_INPUT, "--time: must be > 0");
      break;
    case OPT_SEED: rc = jl_cli_u64("--seed", optarg, &a->seed, err); break;
    case OPT_DEVICE: a->device = optarg; break;
    case OPT_THREADS: rc = jl_cli_int("--threads", optarg, 1, 256, &a->threads, err); break;
    case OPT_MIGRATE: rc = jl_cli_double("--migrate", optarg, 0.01, 1e6, &a->migrate_s, err); break;
    case OPT_OUT: a->out = optarg; break;
    case OPT_RESUME: a->resume = optarg; break;
    case OPT_QUIET: a->quiet = 1; break;
    case OPT_NO_REACH: a->no_reach = 1; break;
    case OPT_MOVES: rc = jl_trunk_moves_parse(optarg, a->moves, err); break;
    case OPT_HELP: *help = 1; return JL_OK;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err->code;
  if (rc != JL_OK) return rc;
  if (optind != argc - 1)
    return jl_error_set(err, JL_ERR_INPUT, optind < argc ? "give exactly one MESH or PROBLEM.json"
                                                         : "give a MESH or PROBLEM.json (see jostle trunk --help)");
  a->input = argv[optind];
  return jl_cli_out_json("--out", a->out, err);
}

static int jl_ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int jl_cli_trunk(int argc, char **argv) {
  jl_error err = {0};
  jl_trunk_args a;
  int help = 0;
  if (jl_trunk_parse(argc, argv, &a, &help, &err) != JL_OK) return jl_cli_fail(&err);
  if (help) {
    fputs(jl_trunk_help, stdout);
    return 0;
  }
  double t0 = jl_time_now();
  jl_islands isl;
  if (jl_islands_init(&isl, &err) != JL_OK) return jl_cli_fail(&err);
  const int root = isl.rank == 0;
  int ran = 0;  /* jl_trunk_run settles the ranks' agreement itself */
  jl_trunk_problem prob;
  jl_trunk_run_result res;
  memset(&res, 0, sizeof res);
  int status = 0, is_problem = jl_ends_with(a.input, ".json");
  if (is_problem) {
    if (jl_trunk_problem_load(&prob, a.input, &err) != JL_OK) goto fail;
  } else {
    jl_trunk_problem_from_mesh(&prob, a.input);
  }
  if (a.units) {
    snprintf(prob.units, sizeof prob.units, "%s", a.units);
    prob.scale = jl_units_scale(a.units);
  }
  if (a.block_given) prob.block = a.block;
  /* outputs checked before any work; default names in the current folder */
  char stem[JL_CLI_STEM_MAX + 1], def_out[JL_CLI_STEM_MAX + 8], glb[JL_TRUNK_PATH_MAX], svg[JL_TRUNK_PATH_MAX];
  jl_cli_default_stem(prob.name, "trunk", stem, sizeof stem);
  snprintf(def_out, sizeof def_out, "%s.json", stem);
  const char *out = a.out ? a.out : def_out;
  jl_cli_sibling(out, ".glb", glb, sizeof glb);
  jl_cli_sibling(out, ".svg", svg, sizeof svg);
  jl_cli_outputs outs = {0};
  jl_cli_outputs_add(&outs, a.out ? "--out" : "the result", out);
  jl_cli_outputs_add(&outs, "the scene", glb);
  jl_cli_outputs_add(&outs, "the views", svg);
  const char *ins[3] = {prob.mesh, is_problem ? a.input : NULL, a.resume};
  if (root && jl_cli_outputs_check(&outs, ins, 3, &err) != JL_OK) goto fail;
  jl_device dev;
  int notice = 0;
  /* the ranks on a node share its cores unless --threads says otherwise */
  int pinned = 0;
  if (a.threads <= 0) a.threads = jl_islands_threads(&isl, &pinned);
  if (jl_device_select_slot(&dev, a.device, (int)a.threads, isl.local_rank, &notice, &err) != JL_OK)
    goto fail;
  if (!root) a.quiet = 1;
  jl_log log = {stderr, !root ? JL_LOG_ERROR : a.quiet ? JL_LOG_NOTICE : JL_LOG_INFO};
  if (pinned) jl_log_printf(&log, JL_LOG_NOTICE, JL_ISLANDS_BOUND_NOTE, dev.threads, jl_cpu_count_online());
  if (isl.size > 1)
    jl_log_printf(&log, JL_LOG_INFO, "%s: %d MPI ranks (rank 0: %s), each its own seed, migrations every %g s",
                  prob.name, isl.size, dev.name, a.migrate_s > 0 ? a.migrate_s : JL_ISLANDS_TRUNK_MIGRATE_S);
  if (notice)
    jl_log_printf(&log, JL_LOG_NOTICE, "no CUDA device found, running on the CPU (%d thread%s)", dev.threads,
                  dev.threads == 1 ? "" : "s");

  /* SIGINT and SIGTERM stop any phase of the run, keeping the best legal
   * packing so far */
  jl_trunk_stop_flag = 0;
  jl_trunk_install_signals();
  jl_trunk_islands seams;
  jl_islands_trunk_seams(&isl, a.migrate_s, &seams);
  jl_trunk_run_config rc;
  jl_trunk_run_config_default(&rc);
  rc.problem = &prob;
  rc.dev = &dev;
  rc.device = a.device;
  rc.threads = (int)a.threads;
  rc.t0 = t0;
  rc.time_s = a.time_s;
  rc.seed = jl_islands_seed(a.seed, isl.rank);
  rc.spacing = a.spacing;
  rc.cell = a.cell;
  memcpy(rc.moves, a.moves, sizeof rc.moves);
  rc.max_blocks = a.max_blocks;
  rc.no_reach = a.no_reach;
  rc.resume = a.resume;
  rc.log = &log;
  rc.progress_lines = !a.quiet;
  rc.stop = &jl_trunk_stop_flag;
  rc.islands = isl.size > 1 ? &seams : NULL;
  ran = 1;
  if (jl_trunk_run(&rc, &res, &err) != JL_OK) goto fail;
  if (res.rank_failed) status = res.rank_code == JL_ERR_INPUT ? 2 : 1;
  if (!res.root) goto done;

  const jl_block_packing *best = &res.best;
  const jl_mesh_report *rep = &res.mesh_report;
  const jl_trunk_run_info *si = &res.search;
  const jl_trunk_fill_report *fills = &res.fills;
  const jl_reach_info *reach = &res.reach;
  const jl_grid_info *gi = &res.grid;
  const jl_baseline_info *base = &res.layered;
  long bound = res.bound;
  jl_trunk_summary sum = {&prob, best, rep, &res.check, gi->count, bound, a.seed,
                          jl_device_kind_name(dev.kind), dev.name, res.source, res.time_s, res.time_to_best_s,
                          gi->time_s, res.stopped_by, res.ran_search ? si : NULL, gi->complete, res.start,
                          {fills->fills[0].slab[0], fills->fills[0].slab[1]}, base->count, base->time_s,
                          base->complete, fills->fills[0].tilt, fills, reach->measured ? reach : NULL,
                          isl.size, si->migrations, res.ranks};
  double bvol = prob.block.x * prob.block.y * prob.block.z;
  char title[512];
  snprintf(title, sizeof title, "%s: %d blocks = %.4g L (mesh %.1f L, bound %ld, baseline %d (grid), layered fill %d)",
           prob.name, best->count, best->count * bvol / 1e6, rep->volume / 1e6, bound, gi->count, base->count);
  const char *t_out = jl_cli_outputs_stage(&outs, 0, &err), *t_glb = NULL, *t_svg = NULL;
  if (!t_out || !(t_glb = jl_cli_outputs_stage(&outs, 1, &err)) ||
      !(t_svg = jl_cli_outputs_stage(&outs, 2, &err)) ||
      jl_trunk_summary_write_json(t_out, &sum, &err) != JL_OK ||
      jl_trunk_write_glb(t_glb, &res.mesh, &prob.block, best, &err) != JL_OK ||
      jl_trunk_write_svg(t_svg, &res.mesh, &prob.block, best, title, &err) != JL_OK ||
      jl_cli_outputs_commit(&outs, &err) != JL_OK) {
    jl_cli_outputs_discard(&outs);
    goto fail;
  }
  if (best->count > JL_TRUNK_MAX_BLOCKS)  /* only with --max-blocks raised */
    jl_log_printf(&log, JL_LOG_NOTICE, "%s: %s holds %d blocks; verify and --resume read at most %d",
                  prob.name, out, best->count, JL_TRUNK_MAX_BLOCKS);
  char why[256];
  jl_trunk_report_describe(&res.check, why, sizeof why);
  char frames[160] = "";
  if (fills->fills[1].ran)
    snprintf(frames, sizeof frames, ", fills %d in the mesh's frame and %d in the floor's (turned %.2f deg)",
             fills->fills[0].count, fills->fills[1].count, jl_trunk_angle_deg(fills->frame.angle));
  char reached[96] = "", of_reach[48] = "";
  if (reach->measured) {
    snprintf(reached, sizeof reached, ", reachable %.3f L (bound %ld)", reach->volume_mm3 / 1e6, reach->bound);
    if (reach->volume_mm3 > 0.0)
      snprintf(of_reach, sizeof of_reach, ", %.1f%% of reachable", 100.0 * best->count * bvol / reach->volume_mm3);
  }
  printf("%s: %d blocks = %.4g L  (mesh %.3f L, upper bound %ld%s, baseline %d (grid), layered fill %d%s, "
         "fill %.1f%%%s)  %s\n", prob.name, best->count, best->count * bvol / 1e6, rep->volume / 1e6, bound, reached,
         gi->count, base->count, frames, 100.0 * best->count * bvol / rep->volume, of_reach, why);
  printf("stopped by %s after %.1f s (best from %s at %.1f s), %d blocks by gap fill, %d turned into "
         "pockets, %d of %d chain states legalized, %llu moves, "
         "%llu relaxation steps, %d exact checks (%d failed) on %s\n",
         res.stopped_by, res.time_s, res.source, res.time_to_best_s, si->gap_added, si->pocket_added,
         si->legalize_legal, si->legalize_tried, (unsigned long long)si->moves,
         (unsigned long long)si->relax_steps, si->checks, si->checks_failed,
         si->device_name[0] ? si->device_name : dev.name);
  if (isl.size > 1) {
    printf("%d ranks (%llu migrations):", isl.size, (unsigned long long)si->migrations);
    for (int r = 0; r < isl.size; ++r) {
      printf("%s %s", r ? ";" : "", res.ranks[r].device_name);
      if (res.ranks[r].cuda_device >= 0) printf(" (CUDA device %d)", res.ranks[r].cuda_device);
      printf(" %.0f blocks%s", res.ranks[r].best, res.ranks[r].failed ? " (failed)" : "");
    }
    printf("\n");
  }
  printf("wrote %s, %s, %s\n", out, glb, svg);
  goto done;
fail:
  status = jl_cli_fail(&err);
  /* the other ranks wait for this one's word before the search */
  if (!ran) jl_islands_all_ok(&isl, 0);
done:
  jl_trunk_run_result_free(&res);
  jl_islands_finalize(&isl);
  return status;
}

int jl_cli_verify_trunk(const char *path) {
  jl_error err = {0};
  jl_trunk_problem prob;
  jl_block_packing pk = {0};
  jl_mesh mesh = {0};
  jl_trunk_geom geom;
  memset(&geom, 0, sizeof geom);
  jl_mesh_report rep;
  jl_trunk_report chk;
  int status = 0;
  if (jl_trunk_result_read_json(path, &prob, &pk, &err) != JL_OK ||
      jl_mesh_load(&mesh, prob.mesh, prob.scale, &rep, &err) != JL_OK ||
      jl_trunk_geom_init(&geom, &mesh, prob.block, &err) != JL_OK ||
      jl_trunk_check_packing(&geom, &pk, &chk, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  char why[256];
  jl_trunk_report_describe(&chk, why, sizeof why);
  double bvol = prob.block.x * prob.block.y * prob.block.z;
  printf("%s: %s: %d blocks of %gx%gx%g mm = %.4g L in %s (mesh %.3f L, fill %.1f%%)\n", path,
         chk.legal ? "legal" : "NOT legal", pk.count, prob.block.x, prob.block.y, prob.block.z,
         pk.count * bvol / 1e6, prob.mesh, rep.volume / 1e6, 100.0 * pk.count * bvol / rep.volume);
  printf("%s: %s\n", path, why);
  status = chk.legal ? 0 : 1;
done:
  jl_trunk_geom_free(&geom);
  jl_mesh_free(&mesh);
  jl_block_packing_free(&pk);
  return status;
}
