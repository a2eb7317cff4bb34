/* jostle circles: the circle packing job from the command line. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jostle/jostle.h>

#include "cli.h"

static const char *const jl_circles_help =
  "usage: jostle circles (--n N | --problem FILE | --equal N) [options]\n"
  "\n"
  "Packs circles into the smallest enclosing circle by contact simulation:\n"
  "fixed-container walks (tabu search over swaps and jumps, each move\n"
  "relaxed) and Monte Carlo trials with compression, on many candidates at\n"
  "once (CUDA: one thread block each), polished by a local NLP solve\n"
  "(NLopt SLSQP) and checked with exact geometry.\n"
  "\n"
  "instance (one of):\n"
  "  --n N             contest instance: radii 1..N (problems/circles/zimmermann-NN.json)\n"
  "  --problem FILE    a problem file (docs/formats.md)\n"
  "  --equal N         N unit circles\n"
  "\n"
  "search:\n"
  "  --time SECONDS    stop after this long (default 60)\n"
  "  --target R        stop once the enclosing radius is <= R\n"
  "  --rounds K        stop after K launches (deterministic for a seed)\n"
  "  --seed S          random seed (default 1); same seed, same moves on CPU and GPU\n"
  "  --mode MODE       population (default), trials, instances\n"
  "  --batch B         candidates per launch (default: whole waves, about 16 per GPU SM,\n"
  "                    8 per CPU thread)\n"
  "  --trials T        exactly T trials per candidate per launch (default: trials\n"
  "                    until 2000000/n relaxation steps are spent; under --time\n"
  "                    fewer when the step rate says a launch would outlast 0.8 s)\n"
  "  --stuck K         trials (or walk steps) without a new record before a restart\n"
  "                    (default 4000 for 20..63 circles, else max(100, 10 n))\n"
  "  --stuck-behind K  the same for a candidate whose record lies above the\n"
  "                    median of the population's records (default: as --stuck)\n"
  "  --behind-adopt P  population: share of the restarts due by --stuck-behind\n"
  "                    alone that adopt (default: as --adopt)\n"
  "  --band B          record-to-record travel: a candidate keeps a trial up to B\n"
  "                    (relative) above its record (default 3e-4); candidate c uses\n"
  "                    B (10/3)^(c mod L)\n"
  "  --band-levels L   rungs of that ladder of bands (default 2)\n"
  "  --elite K         population: restarts adopt one of the K best polished\n"
  "                    packings, one per family (at most 256; default 8 from 256\n"
  "                    candidates, as on a GPU, else 4)\n"
  "  --crowding D      population: elite packings whose shapes (circles'\n"
  "                    distances from the centre over R) differ by less than D\n"
  "                    (area-weighted mean) are one family (default 0.02 from 256\n"
  "                    candidates, else 0: only equal R)\n"
  "  --adopt P         population: share of restarts that adopt (default 0.5);\n"
  "                    the rest start from a random packing\n"
  "  --cross P         population: share of restarts that start from a child of\n"
  "                    two elite packings, each side of a random cut from one\n"
  "                    (default 0; taken from the random starts)\n"
  "  --polish P        CUDA: beside (default: on the host threads while the next\n"
  "                    launch runs) or after (each launch, the device waiting)\n"
  "  --adopt-by A      population: which elite packing an adopter takes: uniform\n"
  "                    (default: drawn alike) or spread (the one the fewest\n"
  "                    candidates are near, by shape)\n"
  "  --walk K          one candidate in K walks at a fixed container below its\n"
  "                    record (tabu search over swaps and jumps, default 1: all);\n"
  "                    0: none, only the seed's trials\n"
  "  --aim P           share of the walk's jumps that move a circle drawn by its\n"
  "                    overlap (default 0.5); the rest move any circle alike\n"
  "  --walk-k K        neighbours a walk step relaxes before it moves to the\n"
  "                    best (default 8 below 64 circles, 16 from 64; at most 256)\n"
  "  --tenure T        walk steps a moved circle may not move again (default 4)\n"
  "  --walk-reset R    walk steps without a new lowest energy before the walk\n"
  "                    begins again from the record (default 400 for 20..63\n"
  "                    circles, else 50)\n"
  "  --probe P         keep (default), restart or off: also relax a walk state of a\n"
  "                    new lowest energy just below the record, where a basin\n"
  "                    nearer than the walk's container is legal; the walk keeps\n"
  "                    going after a record found so, or restarts below it\n"
  "  --area-weighted   split contact moves by area instead of half and half\n"
  "  --resume FILE     start from a packing (.json result or Packomania .txt)\n"
  "  --checkpoint FILE write the search's whole state to FILE every minute and\n"
  "                    when the run stops (not under several MPI ranks)\n"
  "  --continue FILE   go on from a checkpoint, with its seed, mode and batch: --time\n"
  "                    and --rounds count from the first run's start, so a run in\n"
  "                    parts gives what one run gives (with --rounds, the same bits)\n"
  "  --device D        cpu, cuda or auto (default auto)\n"
  "  --threads T       CPU threads (default: all cores, shared by the ranks on a node)\n"
  "  --migrate S       under mpirun: the ranks exchange their best packings every S\n"
  "                    seconds (default n/10, within 2..30); with --rounds every S\n"
  "                    rounds (default 5), waiting for each other: the same bits per seed\n"
  "\n"
  "output:\n"
  "  --out FILE.json   result (default NAME.json here, NAME the instance's name made\n"
  "                    a safe file name); a picture FILE.svg and Packomania text\n"
  "                    FILE.txt are written beside it\n"
  "  --svg FILE        picture path\n"
  "  --txt FILE        Packomania text path (index x y, container radius 1)\n"
  "  --quiet           no progress line\n"
  "\n"
  "Outputs are checked before the search (two naming one file, a folder that\n"
  "cannot be written: refused) and renamed into place together at the end.\n"
  "Ctrl-C (SIGINT) or SIGTERM stops after the current round and writes the best packing.\n";

/* The signal handler's only link to the search: a flag it polls between rounds. */
static volatile sig_atomic_t jl_stop_flag = 0;

static void jl_on_signal(int sig) {
  (void)sig;
  jl_stop_flag = 1;
}

static void jl_install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = jl_on_signal;
  sa.sa_flags = SA_RESETHAND;  /* a second Ctrl-C kills at once */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

enum {
  OPT_N = 1000, OPT_PROBLEM, OPT_EQUAL, OPT_TIME, OPT_TARGET, OPT_ROUNDS, OPT_SEED, OPT_MODE,
  OPT_BATCH, OPT_TRIALS, OPT_STUCK, OPT_STUCK_BEHIND, OPT_BEHIND_ADOPT, OPT_BAND, OPT_BAND_LEVELS, OPT_ELITE, OPT_CROWDING, OPT_ADOPT, OPT_CROSS, OPT_ADOPT_BY, OPT_POLISH, OPT_WALK, OPT_AIM, OPT_WALK_K, OPT_TENURE, OPT_WALK_RESET, OPT_PROBE, OPT_AREA, OPT_RESUME, OPT_CHECKPOINT, OPT_CONTINUE, OPT_DEVICE, OPT_THREADS, OPT_MIGRATE, OPT_OUT,
  OPT_SVG, OPT_TXT, OPT_QUIET, OPT_HELP
};

static const struct option jl_circles_opts[] = {
  {"n", required_argument, NULL, OPT_N},
  {"problem", required_argument, NULL, OPT_PROBLEM},
  {"equal", required_argument, NULL, OPT_EQUAL},
  {"time", required_argument, NULL, OPT_TIME},
  {"target", required_argument, NULL, OPT_TARGET},
  {"rounds", required_argument, NULL, OPT_ROUNDS},
  {"seed", required_argument, NULL, OPT_SEED},
  {"mode", required_argument, NULL, OPT_MODE},
  {"batch", required_argument, NULL, OPT_BATCH},
  {"trials", required_argument, NULL, OPT_TRIALS},
  {"stuck", required_argument, NULL, OPT_STUCK},
  {"stuck-behind", required_argument, NULL, OPT_STUCK_BEHIND},
  {"behind-adopt", required_argument, NULL, OPT_BEHIND_ADOPT},
  {"band", required_argument, NULL, OPT_BAND},
  {"band-levels", required_argument, NULL, OPT_BAND_LEVELS},
  {"elite", required_argument, NULL, OPT_ELITE},
  {"crowding", required_argument, NULL, OPT_CROWDING},
  {"adopt", required_argument, NULL, OPT_ADOPT},
  {"cross", required_argument, NULL, OPT_CROSS},
  {"adopt-by", required_argument, NULL, OPT_ADOPT_BY},
  {"polish", required_argument, NULL, OPT_POLISH},
  {"walk", required_argument, NULL, OPT_WALK},
  {"aim", required_argument, NULL, OPT_AIM},
  {"walk-k", required_argument, NULL, OPT_WALK_K},
  {"tenure", required_argument, NULL, OPT_TENURE},
  {"walk-reset", required_argument, NULL, OPT_WALK_RESET},
  {"probe", required_argument, NULL, OPT_PROBE},
  {"area-weighted", no_argument, NULL, OPT_AREA},
  {"resume", required_argument, NULL, OPT_RESUME},
  {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
  {"continue", required_argument, NULL, OPT_CONTINUE},
  {"device", required_argument, NULL, OPT_DEVICE},
  {"threads", required_argument, NULL, OPT_THREADS},
  {"migrate", required_argument, NULL, OPT_MIGRATE},
  {"out", required_argument, NULL, OPT_OUT},
  {"svg", required_argument, NULL, OPT_SVG},
  {"txt", required_argument, NULL, OPT_TXT},
  {"quiet", no_argument, NULL, OPT_QUIET},
  {"help", no_argument, NULL, OPT_HELP},
  {NULL, 0, NULL, 0},
};

typedef struct jl_circles_args {
  long n, equal, threads;
  const char *problem, *resume, *device, *out, *svg, *txt;
  jl_circles_options search;
  int time_given, quiet;
  const char *fixed_by_checkpoint; /* --seed, --batch or --mode when given: --continue takes them */
} jl_circles_args;

static int jl_circles_parse(int argc, char **argv, jl_circles_args *a, int *help, jl_error *err) {
  memset(a, 0, sizeof *a);
  jl_circles_options_default(&a->search);
  a->search.time_s = 60.0;
  a->device = "auto";
  *help = 0;
  optind = 1;
  int c = -1, rc = JL_OK;
  long v;
  jl_cli_opts o = {.opts = jl_circles_opts, .cmd = "circles"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc, argv, err)) > 0) {
    switch (c) {
    case OPT_N: rc = jl_cli_int("--n", optarg, 1, JL_CIRCLES_MAX, &a->n, err); break;
    case OPT_PROBLEM: a->problem = optarg; break;
    case OPT_EQUAL: rc = jl_cli_int("--equal", optarg, 1, JL_CIRCLES_MAX, &a->equal, err); break;
    case OPT_TIME:
      rc = jl_cli_double("--time", optarg, 0.0, 1e9, &a->search.time_s, err);
      a->time_given = 1;
      break;
    case OPT_TARGET: rc = jl_cli_double("--target", optarg, 1e-300, 1e300, &a->search.target_R, err); break;
    case OPT_ROUNDS:
      rc = jl_cli_int("--rounds", optarg, 1, 1000000000L, &v, err);
      a->search.rounds = v;
      break;
    case OPT_SEED:
      rc = jl_cli_u64("--seed", optarg, &a->search.seed, err);
      a->fixed_by_checkpoint = "--seed";
      break;
    case OPT_MODE:
      a->fixed_by_checkpoint = "--mode";
      if (jl_circles_mode_parse(optarg, &a->search.mode, NULL) != JL_OK)
        rc = jl_cli_error_set(err, JL_ERR_INPUT,
                              "--mode: expected population, trials or instances, got '%s'", optarg);
      break;
    case OPT_BATCH:
      a->fixed_by_checkpoint = "--batch";
      rc = jl_cli_int("--batch", optarg, 1, 1000000, &v, err);
      a->search.batch = (int)v;
      break;
    case OPT_TRIALS:
      rc = jl_cli_int("--trials", optarg, 1, 1000000, &v, err);
      a->search.trials = (int)v;
      break;
    case OPT_STUCK:
      rc = jl_cli_int("--stuck", optarg, 1, 1000000000L, &v, err);
      a->search.stuck = (int)v;
      break;
    case OPT_STUCK_BEHIND:
      rc = jl_cli_int("--stuck-behind", optarg, 1, 1000000000L, &v, err);
      a->search.stuck_behind = (int)v;
      break;
    case OPT_BAND: rc = jl_cli_double("--band", optarg, 1e-12, 0.1, &a->search.band, err); break;
    case OPT_BAND_LEVELS:
      rc = jl_cli_int("--band-levels", optarg, 1, 16, &v, err);
      a->search.band_levels = (int)v;
      break;
    case OPT_ELITE:
      rc = jl_cli_int("--elite", optarg, 1, JL_CIRCLES_ELITE_MAX, &v, err);
      a->search.elite = (int)v;
      break;
    case OPT_CROWDING:
      rc = jl_cli_double("--crowding", optarg, 0.0, 1.0, &a->search.crowding, err);
      break;
    case OPT_ADOPT: rc = jl_cli_double("--adopt", optarg, 0.0, 1.0, &a->search.adopt, err); break;
    case OPT_BEHIND_ADOPT:
      rc = jl_cli_double("--behind-adopt", optarg, 0.0, 1.0, &a->search.behind_adopt, err);
      break;
    case OPT_CROSS: rc = jl_cli_double("--cross", optarg, 0.0, 1.0, &a->search.cross, err); break;
    case OPT_POLISH:
      if (strcmp(optarg, "beside") == 0) a->search.polish_after = 0;
      else if (strcmp(optarg, "after") == 0) a->search.polish_after = 1;
      else rc = jl_cli_error_set(err, JL_ERR_INPUT, "--polish: expected beside or after, got '%s'", optarg);
      break;
    case OPT_ADOPT_BY:
      if (strcmp(optarg, "uniform") == 0) a->search.adopt_spread = 0;
      else if (strcmp(optarg, "spread") == 0) a->search.adopt_spread = 1;
      else rc = jl_cli_error_set(err, JL_ERR_INPUT, "--adopt-by: expected uniform or spread, got '%s'", optarg);
      break;
    case OPT_WALK:
      rc = jl_cli_int("--walk", optarg, 0, 1000000, &v, err);
      a->search.walk = (int)v;
      break;
    case OPT_AIM: rc = jl_cli_double("--aim", optarg, 0.0, 1.0, &a->search.aim, err); break;
    case OPT_WALK_K:
      rc = jl_cli_int("--walk-k", optarg, 1, JL_CIRCLES_WALK_K_MAX, &v, err);
      a->search.walk_k = (int)v;
      break;
    case OPT_TENURE:
      rc = jl_cli_int("--tenure", optarg, 1, 1000000, &v, err);
      a->search.tenure = (int)v;
      break;
    case OPT_WALK_RESET:
      rc = jl_cli_int("--walk-reset", optarg, 1, 1000000000, &v, err);
      a->search.walk_reset = (int)v;
      break;
    case OPT_PROBE:
      if (jl_circles_probe_parse(optarg, &a->search.probe, NULL) != JL_OK)
        rc = jl_cli_error_set(err, JL_ERR_INPUT, "--probe: expected off, restart or keep, got '%s'",
                              optarg);
      break;
    case OPT_AREA: a->search.area_weighted = 1; break;
    case OPT_RESUME: a->resume = optarg; break;
    case OPT_CHECKPOINT: a->search.checkpoint = optarg; break;
    case OPT_CONTINUE: a->search.continue_from = optarg; break;
    case OPT_DEVICE: a->device = optarg; break;
    case OPT_THREADS: rc = jl_cli_int("--threads", optarg, 1, 256, &a->threads, err); break;
    case OPT_MIGRATE: rc = jl_cli_double("--migrate", optarg, 0.01, 1e6, &a->search.migrate_s, err); break;
    case OPT_OUT: a->out = optarg; break;
    case OPT_SVG: a->svg = optarg; break;
    case OPT_TXT: a->txt = optarg; break;
    case OPT_QUIET: a->quiet = 1; break;
    case OPT_HELP: *help = 1; return JL_OK;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err->code;
  if (rc != JL_OK) return rc;
  if (optind < argc)
    return jl_cli_error_set(err, JL_ERR_INPUT, "unexpected argument '%s'", argv[optind]);
  if (a->time_given && a->search.time_s <= 0.0)
    return jl_cli_error_set(err, JL_ERR_INPUT, "--time: must be > 0");
  if (a->search.rounds > 0 && !a->time_given) a->search.time_s = 0.0;
  if (a->search.continue_from && (a->fixed_by_checkpoint || a->resume))
    return jl_cli_error_set(err, JL_ERR_INPUT,
                            "%s: not with --continue (the run goes on with the checkpoint's seed, "
                            "mode, batch and packings)",
                            a->resume ? "--resume" : a->fixed_by_checkpoint);
  a->search.threads = (int)a->threads;
  return jl_cli_out_json("--out", a->out, err);
}

/* The instance: --n, --problem, --equal, or the problem stored in a resumed result. */
static int jl_circles_problem_of(const jl_circles_args *a, jl_circles_problem *prob,
                                 jl_circles_packing *resume, int *have_resume, jl_error *err) {
  int given = (a->n > 0) + (a->problem != NULL) + (a->equal > 0);
  if (given > 1)
    return jl_cli_error_set(err, JL_ERR_INPUT, "give only one of --n, --problem and --equal");
  int rc = JL_OK;
  memset(prob, 0, sizeof *prob);
  if (a->n > 0) rc = jl_circles_problem_contest(prob, (int)a->n, err);
  else if (a->equal > 0) rc = jl_circles_problem_equal(prob, (int)a->equal, err);
  else if (a->problem) rc = jl_circles_problem_load(prob, a->problem, err);
  if (rc != JL_OK) return rc;
  *have_resume = 0;
  if (a->resume) {
    size_t len = strlen(a->resume);
    if (given == 0 && len >= 4 && strcmp(a->resume + len - 4, ".txt") == 0)
      return jl_cli_error_set(err, JL_ERR_INPUT,
                              "%s: Packomania text has no radii: give --n, --problem or --equal",
                              a->resume);
    /* with no instance given, the result's stored problem fills prob */
    if ((rc = jl_circles_resume_load(a->resume, prob, resume, err)) != JL_OK) return rc;
    *have_resume = 1;
    return JL_OK;
  }
  if (given == 0)
    return jl_cli_error_set(err, JL_ERR_INPUT,
                            "choose an instance: --n N, --problem FILE or --equal N (see --help)");
  return JL_OK;
}

/* Prints the run's facts line: the device, or every rank's. */
static void jl_circles_print_where(const jl_circles_run *run) {
  const jl_circles_run_info *info = &run->info;
  if (info->ranks <= 1 || !info->rank_info) {
    printf("%s\n", run->device_name);
    return;
  }
  printf("%d ranks (%llu migrations):", info->ranks, (unsigned long long)info->migrations);
  for (int r = 0; r < info->ranks; ++r) {
    const jl_rank_info *ri = &info->rank_info[r];
    printf("%s %s", r ? ";" : "", ri->device_name);
    if (ri->cuda_device >= 0) printf(" (CUDA device %d)", ri->cuda_device);
    if (ri->failed) printf(" failed");
  }
  printf("\n");
}

/* The run's ready hook: the rank that writes checks the outputs before any work. */
typedef struct jl_circles_ready {
  const jl_cli_outputs *outs;
  const char *inputs[2];
} jl_circles_ready;

static int jl_circles_on_ready(void *ctx, int rank, jl_error *err) {
  const jl_circles_ready *r = ctx;
  return rank == 0 ? jl_cli_outputs_check(r->outs, r->inputs, 2, err) : JL_OK;
}

int jl_cli_circles(int argc, char **argv) {
  jl_error err = {0};
  jl_circles_args a;
  int help = 0;
  if (jl_circles_parse(argc, argv, &a, &help, &err) != JL_OK) return jl_cli_fail(&err);
  if (help) {
    fputs(jl_circles_help, stdout);
    return 0;
  }
  jl_circles_problem prob = {0};
  jl_circles_packing resume = {0};
  jl_circles_run run;
  memset(&run, 0, sizeof run);
  int have_resume = 0, status = 0;
  if (jl_circles_problem_of(&a, &prob, &resume, &have_resume, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  /* The outputs, checked (by the run's ready hook, on the rank that writes)
   * before any work: the default names come from the instance's name, kept
   * to a safe file name in the current folder. */
  char stem[JL_CLI_STEM_MAX + 1], def_out[JL_CLI_STEM_MAX + 8], svg[JL_CLI_PATH_MAX], txt[JL_CLI_PATH_MAX];
  jl_cli_outputs outs = {0};
  jl_cli_default_stem(prob.name, "circles", stem, sizeof stem);
  snprintf(def_out, sizeof def_out, "%s.json", stem);
  const char *out = a.out ? a.out : def_out;
  if (a.svg) snprintf(svg, sizeof svg, "%s", a.svg); else jl_cli_sibling(out, ".svg", svg, sizeof svg);
  if (a.txt) snprintf(txt, sizeof txt, "%s", a.txt); else jl_cli_sibling(out, ".txt", txt, sizeof txt);
  jl_cli_outputs_add(&outs, a.out ? "--out" : "the result", out);
  jl_cli_outputs_add(&outs, a.svg ? "--svg" : "the picture", svg);
  jl_cli_outputs_add(&outs, a.txt ? "--txt" : "the text", txt);
  /* checked with the others, written by the search (atomically) */
  jl_cli_outputs_add(&outs, "--checkpoint", a.search.checkpoint);
  jl_circles_ready ready = {&outs, {a.problem, a.resume}};

  jl_cli_log log;
  jl_cli_log_init(&log, a.quiet);
  a.search.device = a.device;
  a.search.resume = have_resume ? &resume : NULL;
  a.search.stop = &jl_stop_flag;
  a.search.log = jl_cli_log_line;
  a.search.log_ctx = &log;
  a.search.progress_lines = !a.quiet;
  a.search.progress_period_s = jl_cli_log_period(&log);
  a.search.islands = 1;
  a.search.ready = jl_circles_on_ready;
  a.search.ready_ctx = &ready;
  jl_install_signals();
  int rc = jl_circles_run_search(&prob, &a.search, &run, &err);
  jl_cli_log_end(&log);
  if (rc != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  /* a failed rank said so (through the log); the others went on */
  if (run.failed) status = run.failure.code == JL_ERR_INPUT ? 2 : 1;
  if (!run.writes) goto done;
  const char *t_out = jl_cli_outputs_stage(&outs, 0, &err), *t_svg = NULL, *t_txt = NULL;
  if (!t_out || !(t_svg = jl_cli_outputs_stage(&outs, 1, &err)) ||
      !(t_txt = jl_cli_outputs_stage(&outs, 2, &err)) ||
      jl_circles_run_write(&prob, &run, t_out, t_svg, t_txt, &err) != JL_OK ||
      jl_cli_outputs_commit(&outs, &err) != JL_OK) {
    jl_cli_outputs_discard(&outs);
    status = jl_cli_fail(&err);
    goto done;
  }
  static const char *const stop_names[] = {"time", "target", "signal", "rounds"};
  const jl_circles_run_info *info = &run.info;
  printf("%s: R = %.12f", prob.name, run.best.R);
  if (prob.best_known_R > 0)
    printf("  (record %.10f, gap %+.2e)", prob.best_known_R, run.best.R / prob.best_known_R - 1.0);
  printf("  legal (max overlap %.2Le)\n", run.check.max_overlap > 0 ? run.check.max_overlap : 0.0L);
  printf("stopped by %s after %.1f s (best at %.1f s), %llu trials, %llu relaxation steps on ",
         stop_names[info->stopped_by], info->time_s, info->time_to_best_s,
         (unsigned long long)info->trials, (unsigned long long)info->relax_steps);
  jl_circles_print_where(&run);
  printf("wrote %s, %s, %s\n", out, svg, txt);
done:
  jl_circles_run_free(&run);
  jl_circles_packing_free(&resume);
  jl_circles_problem_free(&prob);
  return status;
}
