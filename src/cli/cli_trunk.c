/* jostle trunk: trunk volume in liters from a mesh, and verify for trunk
 * results, over the public API (jl_trunk_measure, jl_trunk_verify). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jostle/jostle.h>

#include "cli.h"

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
  double block[3];         /* zeros: the problem's */
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
      return jl_cli_error_set(err, JL_ERR_INPUT, "--moves: expected three shares T,S,P in [0, %g], got '%s'",
                                JL_TRUNK_MOVES_MAX, s);
    out[k] = v;
    sum += v;
    p = end + 1;
  }
  if (sum > JL_TRUNK_MOVES_MAX)
    return jl_cli_error_set(err, JL_ERR_INPUT, "--moves: the shares sum to %g, more than %g", sum,
                              JL_TRUNK_MOVES_MAX);
  return JL_OK;
}

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
      if (jl_trunk_units_scale(optarg) == 0.0)
        rc = jl_cli_error_set(err, JL_ERR_INPUT, "--units: expected mm, cm, m or in, got '%s'", optarg);
      a->units = optarg;
      break;
    case OPT_BLOCK: rc = jl_trunk_block_parse("--block", optarg, a->block, err); break;
    case OPT_SPACING: rc = jl_cli_double("--spacing", optarg, 1e-3, 1e6, &a->spacing, err); break;
    case OPT_CELL: rc = jl_cli_double("--cell", optarg, 1e-3, 1e6, &a->cell, err); break;
    case OPT_MAX_BLOCKS:
      rc = jl_cli_int("--max-blocks", optarg, 1, JL_TRUNK_MAX_BLOCKS_CEIL, &a->max_blocks, err);
      break;
    case OPT_TIME:
      rc = jl_cli_double("--time", optarg, 0.0, 1e9, &a->time_s, err);
      if (!rc && !(a->time_s > 0)) rc = jl_cli_error_set(err, JL_ERR_INPUT, "--time: must be > 0");
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
    return jl_cli_error_set(err, JL_ERR_INPUT, "%s",
                              optind < argc ? "give exactly one MESH or PROBLEM.json"
                                            : "give a MESH or PROBLEM.json (see jostle trunk --help)");
  a->input = argv[optind];
  return jl_cli_out_json("--out", a->out, err);
}

static int jl_ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The command's side of a run: its outputs, and where its lines go. */
typedef struct jl_trunk_cli {
  const jl_trunk_args *a;
  int root;                /* rank 0 (or one search): prints and writes */
  int tty;                 /* stderr is a terminal: progress lines drawn in place */
  int drawn;               /* a progress line is on screen that needs ending */
  char stem[JL_CLI_STEM_MAX + 1], def_out[JL_CLI_STEM_MAX + 8];
  char glb[JL_CLI_PATH_MAX], svg[JL_CLI_PATH_MAX];
  const char *out;
  jl_cli_outputs outs;
} jl_trunk_cli;

/* The run's lines on stderr: rank 0 prints notices, steps (not with
 * --quiet) and progress lines (not with --quiet); the others only errors. */
static void jl_trunk_cli_log(void *ctx, int level, const char *line) {
  jl_trunk_cli *c = ctx;
  if (level == JL_LOG_PROGRESS) {
    if (!c->root || c->a->quiet) return;
    if (!*line) {  /* the line drawn in place stays */
      if (c->drawn) fputc('\n', stderr);
      c->drawn = 0;
    } else if (c->tty) {
      fprintf(stderr, "\r\033[K%s", line);
      c->drawn = 1;
    } else {
      fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
    return;
  }
  int max = !c->root ? JL_LOG_ERROR : c->a->quiet ? JL_LOG_NOTICE : JL_LOG_INFO;
  if (level > max) return;
  if (c->drawn) fputs("\r\033[K", stderr);  /* the message takes the progress line's place */
  c->drawn = 0;
  fprintf(stderr, "jostle: %s\n", line);
  fflush(stderr);
}

/* Once the problem is read: the outputs checked before any work (rank 0),
 * default names in the current folder; then Ctrl-C stops the run. */
static int jl_trunk_cli_ready(void *ctx, const jl_trunk_start *st, jl_error *err) {
  jl_trunk_cli *c = ctx;
  const jl_trunk_args *a = c->a;
  c->root = st->rank == 0;
  jl_cli_default_stem(st->name, "trunk", c->stem, sizeof c->stem);
  snprintf(c->def_out, sizeof c->def_out, "%s.json", c->stem);
  c->out = a->out ? a->out : c->def_out;
  jl_cli_sibling(c->out, ".glb", c->glb, sizeof c->glb);
  jl_cli_sibling(c->out, ".svg", c->svg, sizeof c->svg);
  jl_cli_outputs_add(&c->outs, a->out ? "--out" : "the result", c->out);
  jl_cli_outputs_add(&c->outs, "the scene", c->glb);
  jl_cli_outputs_add(&c->outs, "the views", c->svg);
  const char *ins[3] = {st->mesh, jl_ends_with(a->input, ".json") ? a->input : NULL, a->resume};
  if (c->root && jl_cli_outputs_check(&c->outs, ins, 3, err) != JL_OK) return err->code;
  /* SIGINT and SIGTERM stop any phase of the run, keeping the best legal
   * packing so far */
  jl_trunk_stop_flag = 0;
  jl_trunk_install_signals();
  return JL_OK;
}

/* The result, the scene and the views, staged and renamed into place together. */
static int jl_trunk_cli_write(jl_trunk_cli *c, const jl_trunk_outcome *r, jl_error *err) {
  double bvol = r->block[0] * r->block[1] * r->block[2];
  char title[512];
  snprintf(title, sizeof title, "%s: %d blocks = %.4g L (mesh %.1f L, bound %ld, baseline %d (grid), layered fill %d)%s",
           r->name, r->count, r->count * bvol / 1e6, r->mesh_volume_mm3 / 1e6, r->bound, r->baseline, r->layered,
           r->fills_complete ? "" : ": fills cut short, not the volume");
  const char *t_out = jl_cli_outputs_stage(&c->outs, 0, err), *t_glb = NULL, *t_svg = NULL;
  if (!t_out || !(t_glb = jl_cli_outputs_stage(&c->outs, 1, err)) ||
      !(t_svg = jl_cli_outputs_stage(&c->outs, 2, err)) || jl_trunk_outcome_write_json(r, t_out, err) != JL_OK ||
      jl_trunk_outcome_write_glb(r, t_glb, err) != JL_OK || jl_trunk_outcome_write_svg(r, t_svg, title, err) != JL_OK ||
      jl_cli_outputs_commit(&c->outs, err) != JL_OK) {
    jl_cli_outputs_discard(&c->outs);
    return err->code;
  }
  return JL_OK;
}

/* What the run found, on stdout. */
static void jl_trunk_cli_print(jl_trunk_cli *c, const jl_trunk_outcome *r) {
  double bvol = r->block[0] * r->block[1] * r->block[2];
  if (r->count > JL_TRUNK_MAX_BLOCKS) {  /* only with --max-blocks raised */
    char line[JL_CLI_PATH_MAX + 256];
    snprintf(line, sizeof line, "%s: %s holds %d blocks; verify and --resume read at most %d", r->name, c->out,
             r->count, JL_TRUNK_MAX_BLOCKS);
    jl_trunk_cli_log(c, JL_LOG_NOTICE, line);
  }
  char frames[160] = "";
  if (r->floor_frame)
    snprintf(frames, sizeof frames, ", fills %d in the mesh's frame and %d in the floor's (turned %.2f deg)",
             r->fill_mesh_frame, r->fill_floor_frame, r->floor_angle_deg);
  char reached[96] = "", of_reach[48] = "";
  if (r->reach_measured) {
    snprintf(reached, sizeof reached, ", reachable %.3f L (bound %ld)", r->reach_mm3 / 1e6, r->reach_bound);
    if (r->reach_mm3 > 0.0)
      snprintf(of_reach, sizeof of_reach, ", %.1f%% of reachable", 100.0 * r->count * bvol / r->reach_mm3);
  }
  printf("%s: %d blocks = %.4g L  (mesh %.3f L, upper bound %ld%s, baseline %d (grid), layered fill %d%s, "
         "fill %.1f%%%s)  %s\n", r->name, r->count, r->count * bvol / 1e6, r->mesh_volume_mm3 / 1e6, r->bound,
         reached, r->baseline, r->layered, frames, 100.0 * r->count * bvol / r->mesh_volume_mm3, of_reach, r->check);
  if (!r->fills_complete) {
    char line[256];
    char by[64];
    if (strcmp(r->stopped_by, "signal") == 0) snprintf(by, sizeof by, "the stop signal");
    else snprintf(by, sizeof by, "--time %g", c->a->time_s);
    snprintf(line, sizeof line, "%s: %s cut the fills short: %d blocks is what they reached, not the trunk's "
             "volume; give the run more time", r->name, by, r->count);
    jl_trunk_cli_log(c, JL_LOG_NOTICE, line);
  }
  printf("stopped by %s after %.1f s (best from %s at %.1f s), %d blocks by gap fill, %d turned into "
         "pockets, %d of %d chain states legalized, %llu moves, "
         "%llu relaxation steps, %d exact checks (%d failed) on %s\n",
         r->stopped_by, r->time_s, r->source, r->time_to_best_s, r->gap_added, r->pocket_added, r->legalize_legal,
         r->legalize_tried, (unsigned long long)r->moves, (unsigned long long)r->relax_steps, r->checks,
         r->checks_failed, r->device_name);
  if (r->ranks > 1 && r->rank_info) {
    printf("%d ranks (%llu migrations):", r->ranks, (unsigned long long)r->migrations);
    for (int k = 0; k < r->ranks; ++k) {
      printf("%s %s", k ? ";" : "", r->rank_info[k].device_name);
      if (r->rank_info[k].cuda_device >= 0) printf(" (CUDA device %d)", r->rank_info[k].cuda_device);
      printf(" %.0f blocks%s", r->rank_info[k].best, r->rank_info[k].failed ? " (failed)" : "");
    }
    printf("\n");
  }
  printf("wrote %s, %s, %s\n", c->out, c->glb, c->svg);
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
  jl_trunk_cli cli;
  memset(&cli, 0, sizeof cli);
  cli.a = &a;
  cli.root = 1;
  cli.tty = isatty(fileno(stderr));
  jl_trunk_config cfg;
  jl_trunk_config_default(&cfg);
  cfg.input = a.input;
  cfg.units = a.units;
  memcpy(cfg.block, a.block, sizeof cfg.block);
  cfg.time_s = a.time_s;
  cfg.seed = a.seed;
  cfg.device = a.device;
  cfg.threads = (int)a.threads;
  cfg.spacing = a.spacing;
  cfg.cell = a.cell;
  memcpy(cfg.moves, a.moves, sizeof cfg.moves);
  cfg.max_blocks = a.max_blocks;
  cfg.no_reach = a.no_reach;
  cfg.resume = a.resume;
  cfg.names = (jl_trunk_names){"--units", "--max-blocks", "--time", "--device"};
  cfg.log = jl_trunk_cli_log;
  cfg.log_ctx = &cli;
  cfg.progress_live = cli.tty;
  cfg.stop = &jl_trunk_stop_flag;
  cfg.ready = jl_trunk_cli_ready;
  cfg.ready_ctx = &cli;
  cfg.mpi = 1;
  cfg.migrate_s = a.migrate_s;
  jl_trunk_outcome res;
  if (jl_trunk_measure(&cfg, &res, &err) != JL_OK) return jl_cli_fail(&err);
  int status = 0;
  if (res.rank_failed) status = res.rank_code == JL_ERR_INPUT ? 2 : 1;
  if (res.root) {
    if (jl_trunk_cli_write(&cli, &res, &err) != JL_OK)
      status = jl_cli_fail(&err);
    else
      jl_trunk_cli_print(&cli, &res);
  }
  jl_trunk_outcome_free(&res);
  return status;
}
