/* jostle scene: run a rigid-body scene file on the CPU reference path or on a
 * CUDA device, over the public API (jostle/scene.h). */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jostle/jostle.h>

#include "cli.h"

static const char *const jl_scene_help =
  "usage: jostle scene SCENE.json [options]\n"
  "\n"
  "Runs a rigid-body scene (docs/formats.md) with Moreau's midpoint time\n"
  "stepping: contacts at the mid-point, Coulomb friction and Newton impacts\n"
  "solved per step by a prox iteration (SOR, JOR or APGD, see the scene's\n"
  "solver).\n"
  "\n"
  "  --steps N          run N steps (default: the scene's steps or duration)\n"
  "  --time SECONDS     stop after this long (from the start of the command; the\n"
  "                     step under way ends its solve early): the steps done are\n"
  "                     written, stopped_by \"time\" (default: no limit)\n"
  "  --solver S         jor, sor or apgd: override the scene's method (alpha, if\n"
  "                     the scene gives none, is then 0.35 for jor, 1 for sor\n"
  "                     and 0.15 for apgd, JOR with Nesterov's momentum)\n"
  "  --max-iter K       override the scene's iteration cap\n"
  "  --matrix-free      per-body velocity changes instead of the Delassus matrix\n"
  "  --assembled        the assembled Delassus matrix G (default: the scene's\n"
  "                     choice, \"auto\": matrix-free when G is dense)\n"
  "  --device D         cpu, cuda or auto (default auto: CUDA when a device is\n"
  "                     present, else the CPU). On CUDA the whole step runs on\n"
  "                     the device (the scene's method, matrix-free);\n"
  "                     bodies come back only for outputs. Exit status 4 when\n"
  "                     cuda is asked for and no device is present.\n"
  "  --threads T        CPU threads (default: all cores)\n"
  "  --body-order O     auto, spatial or given: step the bodies along a Z-order\n"
  "                     curve through their centres (neighbours share cache\n"
  "                     lines) or as the file numbers them; auto: spatial from\n"
  "                     4096 bodies up. Outputs use the file's numbering. JOR\n"
  "                     and APGD differ only by the order of additions; SOR\n"
  "                     also sweeps the contacts in another order. The\n"
  "                     spatial order is renewed once the bodies have\n"
  "                     travelled 2 sizes on average (run.reorders).\n"
  "  --out FILE.json    result summary and final state (default NAME.json here,\n"
  "                     NAME the scene's name made a safe file name)\n"
  "  --csv FILE.csv     one line per step: step,time,kinetic,potential,contacts,\n"
  "                     iterations,residual,max_penetration\n"
  "  --glb FILE.glb     animated trajectory (glTF binary), one node per body\n"
  "  --glb-every K      a frame every K steps (default: about 30 frames per second)\n"
  "  --fclib FILE.hdf5  export one step's contact problem (G, c, mu) to FCLib\n"
  "                     (on CUDA assembled on the host from the device's state\n"
  "                     at that step)\n"
  "  --fclib-step K     the step to export (default: the last one run)\n"
  "  --quiet            no first line, no progress line\n"
  "\n"
  "Ctrl-C (SIGINT) or SIGTERM ends the current step's solve early, stops after\n"
  "that step and writes what was computed so far. A solve that diverges until\n"
  "a body's state is no longer finite ends the run there, its outputs written\n"
  "(stopped_by \"diverged\", exit status 1). Exit status 2 on bad input\n"
  "(nothing is written).\n";

static volatile sig_atomic_t jl_scene_stop = 0;

static void jl_scene_on_signal(int sig) {
  (void)sig;
  jl_scene_stop = 1;
}

enum {
  OPT_STEPS = 1000, OPT_SOLVER, OPT_MAXIT, OPT_MF, OPT_ASM, OPT_DEVICE, OPT_THREADS, OPT_ORDER, OPT_OUT, OPT_CSV,
  OPT_GLB, OPT_GLB_EVERY, OPT_FCLIB, OPT_FCLIB_STEP, OPT_QUIET, OPT_HELP, OPT_TIME
};

static const struct option jl_scene_opts[] = {
  {"steps", required_argument, NULL, OPT_STEPS},
  {"time", required_argument, NULL, OPT_TIME},
  {"solver", required_argument, NULL, OPT_SOLVER},
  {"max-iter", required_argument, NULL, OPT_MAXIT},
  {"matrix-free", no_argument, NULL, OPT_MF},
  {"assembled", no_argument, NULL, OPT_ASM},
  {"device", required_argument, NULL, OPT_DEVICE},
  {"threads", required_argument, NULL, OPT_THREADS},
  {"body-order", required_argument, NULL, OPT_ORDER},
  {"out", required_argument, NULL, OPT_OUT},
  {"csv", required_argument, NULL, OPT_CSV},
  {"glb", required_argument, NULL, OPT_GLB},
  {"glb-every", required_argument, NULL, OPT_GLB_EVERY},
  {"fclib", required_argument, NULL, OPT_FCLIB},
  {"fclib-step", required_argument, NULL, OPT_FCLIB_STEP},
  {"quiet", no_argument, NULL, OPT_QUIET},
  {"help", no_argument, NULL, OPT_HELP},
  {NULL, 0, NULL, 0},
};

typedef struct jl_scene_args {
  const char *scene, *solver, *device, *order, *out, *csv, *glb, *fclib;
  long steps, max_iter, threads, glb_every, fclib_step;
  double time_s;           /* --time; 0: no limit */
  int matrix_free, quiet;  /* matrix_free: 1 --matrix-free, 2 --assembled */
} jl_scene_args;

static int jl_scene_one_of(const char *s, const char *a, const char *b, const char *c) {
  return strcmp(s, a) == 0 || strcmp(s, b) == 0 || strcmp(s, c) == 0;
}

static int jl_scene_parse_args(int argc, char **argv, jl_scene_args *a, int *help, jl_error *err) {
  memset(a, 0, sizeof *a);
  a->device = "auto";
  *help = 0;
  optind = 1;
  int c = -1, rc = JL_OK;
  jl_cli_opts o = {.opts = jl_scene_opts, .cmd = "scene"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc, argv, err)) > 0) {
    switch (c) {
    case OPT_STEPS: rc = jl_cli_int("--steps", optarg, 1, JL_SCENE_MAX_STEPS, &a->steps, err); break;
    case OPT_TIME:
      rc = jl_cli_double("--time", optarg, 0.0, 1e9, &a->time_s, err);
      if (!rc && !(a->time_s > 0)) rc = jl_cli_error_set(err, JL_ERR_INPUT, "--time: must be > 0");
      break;
    case OPT_SOLVER:
      a->solver = optarg;
      if (!jl_scene_one_of(optarg, "jor", "sor", "apgd"))
        rc = jl_cli_error_set(err, JL_ERR_INPUT, "--solver: expected jor, sor or apgd, got '%s'", optarg);
      break;
    case OPT_MAXIT: rc = jl_cli_int("--max-iter", optarg, 1, 100000000L, &a->max_iter, err); break;
    case OPT_MF:
    case OPT_ASM:
      if (a->matrix_free)
        rc = jl_cli_error_set(err, JL_ERR_INPUT, "--matrix-free and --assembled: give one of them");
      a->matrix_free = c == OPT_MF ? 1 : 2;
      break;
    case OPT_DEVICE: a->device = optarg; break;
    case OPT_THREADS: rc = jl_cli_int("--threads", optarg, 1, 256, &a->threads, err); break;
    case OPT_ORDER:
      a->order = optarg;
      if (!jl_scene_one_of(optarg, "auto", "spatial", "given"))
        rc = jl_cli_error_set(err, JL_ERR_INPUT, "--body-order: expected auto, spatial or given, got '%s'",
                          optarg);
      break;
    case OPT_OUT: a->out = optarg; break;
    case OPT_CSV: a->csv = optarg; break;
    case OPT_GLB: a->glb = optarg; break;
    case OPT_GLB_EVERY: rc = jl_cli_int("--glb-every", optarg, 1, 100000000L, &a->glb_every, err); break;
    case OPT_FCLIB: a->fclib = optarg; break;
    case OPT_FCLIB_STEP: rc = jl_cli_int("--fclib-step", optarg, 1, JL_SCENE_MAX_STEPS, &a->fclib_step, err); break;
    case OPT_QUIET: a->quiet = 1; break;
    case OPT_HELP: *help = 1; return JL_OK;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err->code;
  if (rc != JL_OK) return rc;
  if (optind >= argc) return jl_cli_error_set(err, JL_ERR_INPUT, "give a scene file (see jostle scene --help)");
  a->scene = argv[optind++];
  if (optind < argc) return jl_cli_error_set(err, JL_ERR_INPUT, "unexpected argument '%s'", argv[optind]);
  if (a->fclib_step && !a->fclib) return jl_cli_error_set(err, JL_ERR_INPUT, "--fclib-step needs --fclib");
  if (a->fclib && !jl_scene_fclib_available())
    return jl_cli_error_set(err, JL_ERR_INPUT,
                        "--fclib %s: this jostle was built without FCLib (libfclib-dev), so it cannot export",
                        a->fclib);
  if (a->glb_every && !a->glb) return jl_cli_error_set(err, JL_ERR_INPUT, "--glb-every needs --glb");
  return jl_cli_out_json("--out", a->out, err);
}

/* A message for people on stderr: "jostle: ...". */
static void jl_scene_say(const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 1, 2)))
#endif
  ;
static void jl_scene_say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("jostle: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fflush(stderr);
}

static double jl_scene_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The progress line, paced here (0.2 s on a terminal, 5 s otherwise: the
 * library's pace) and drawn by the CLI's log (cli.c). */
typedef struct jl_scene_progress {
  jl_cli_log log;
  double period, last;     /* seconds between lines; the time of the last */
} jl_scene_progress;

static void jl_scene_progress_init(jl_scene_progress *pr, int enabled) {
  jl_cli_log_init(&pr->log, !enabled);
  pr->period = pr->log.tty ? 0.2 : 5.0;
  pr->last = -1e300;
}

static void jl_scene_progress_update(jl_scene_progress *pr, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
static void jl_scene_progress_update(jl_scene_progress *pr, const char *fmt, ...) {
  double now = jl_scene_clock();
  if (!pr->log.progress || now - pr->last < pr->period) return;
  pr->last = now;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  jl_cli_log_line(&pr->log, JL_LOG_PROGRESS, line);
}

/* Ends a line drawn in place, so later output starts on a fresh line. */
static void jl_scene_progress_end(jl_scene_progress *pr) { jl_cli_log_end(&pr->log); }

/* "sor" -> "SOR" */
static const char *jl_scene_upper(const char *s, char *out, size_t cap) {
  size_t i = 0;
  for (; s[i] && i + 1 < cap; ++i) out[i] = (char)toupper((unsigned char)s[i]);
  out[i] = '\0';
  return out;
}

int jl_cli_scene(int argc, char **argv) {
  jl_error err = {0};
  jl_scene_args a;
  int help = 0;
  if (jl_scene_parse_args(argc, argv, &a, &help, &err) != JL_OK) return jl_cli_fail(&err);
  if (help) {
    fputs(jl_scene_help, stdout);
    return 0;
  }
  if (!jl_scene_one_of(a.device, "cpu", "cuda", "auto")) {
    jl_cli_error_set(&err, JL_ERR_INPUT, "--device: expected cpu, cuda or auto, got '%s'", a.device);
    return jl_cli_fail(&err);
  }
  /* the device first (in the open): --device cuda without one fails before a large scene is read */
  jl_scene_options so;
  jl_scene_options_default(&so);
  so.device = a.device;
  so.threads = (int)a.threads;
  so.stop = &jl_scene_stop;  /* a signal or --time ends the solve under way (CPU; on CUDA after its step) */
  so.steps = a.steps;
  so.solver = a.solver;
  so.iterations = (int)a.max_iter;
  so.matrix_free = a.matrix_free == 1 ? 1 : a.matrix_free == 2 ? -1 : 0;
  so.body_order = a.order;
  so.time_limit = a.time_s;
  jl_scene_sim *sim = NULL;
  if (jl_scene_sim_open(a.scene, &so, &sim, &err) != JL_OK) return jl_cli_fail(&err);
  int status = 0;
  jl_scene_info in;
  jl_scene_sim_info(sim, &in);
  long steps = in.steps;
  /* outputs checked before any work; the default name in the current folder */
  char stem[JL_CLI_STEM_MAX + 1], def_out[JL_CLI_STEM_MAX + 8];
  jl_cli_default_stem(in.name, "scene", stem, sizeof stem);
  snprintf(def_out, sizeof def_out, "%s.json", stem);
  const char *out = a.out ? a.out : def_out;
  jl_cli_outputs outs = {0};
  jl_cli_outputs_add(&outs, a.out ? "--out" : "the result", out);
  jl_cli_outputs_add(&outs, "--csv", a.csv);
  jl_cli_outputs_add(&outs, "--glb", a.glb);
  jl_cli_outputs_add(&outs, "--fclib", a.fclib);
  enum { OUT_JSON, OUT_CSV, OUT_GLB, OUT_FCLIB };
  int slot[4] = {0, -1, -1, -1}, k_out = 1;  /* where each asked-for output sits in outs */
  if (a.csv) slot[OUT_CSV] = k_out++;
  if (a.glb) slot[OUT_GLB] = k_out++;
  if (a.fclib) slot[OUT_FCLIB] = k_out++;
  if (jl_cli_outputs_check(&outs, &a.scene, 1, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  if (a.fclib_step > steps) {
    jl_cli_error_set(&err, JL_ERR_INPUT, "--fclib-step %ld: the run has only %ld steps", a.fclib_step,
                 steps);
    status = jl_cli_fail(&err);
    goto done;
  }
  if (in.on_cuda && a.matrix_free == 2) {
    jl_cli_error_set(&err, JL_ERR_INPUT,
                 "--assembled: the device step is matrix-free; use --device cpu for G");
    status = jl_cli_fail(&err);
    goto done;
  }
  if (in.cpu_fallback)
    jl_scene_say("no CUDA device found, running on the CPU (%d thread%s)", in.threads,
                 in.threads == 1 ? "" : "s");
  jl_scene_record rec;
  jl_scene_record_default(&rec);
  rec.csv = a.csv != NULL;
  rec.glb = a.glb != NULL;
  rec.glb_every = a.glb_every;
  rec.fclib = a.fclib != NULL;
  rec.fclib_step = a.fclib_step;
  if (jl_scene_sim_start(sim, &rec, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  jl_scene_sim_info(sim, &in);  /* on the device the step is matrix-free */
  char method[16];
  jl_scene_upper(in.solver, method, sizeof method);
  if (!a.quiet) {
    jl_scene_say("%s, %d bodies (%d dynamic), dt %g, %ld steps, %s%s, %s", in.name, in.bodies,
                 in.dynamic_bodies, in.dt, steps, method,
                 in.matrix_free < 0 ? "" : in.matrix_free ? " matrix-free" : " assembled G", in.device);
    if (in.ordered)
      jl_scene_say("bodies stepped along a Z-order curve, renewed as they travel (--body-order); "
                   "outputs keep the file's numbering");
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = jl_scene_on_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  jl_scene_progress pr;
  jl_scene_progress_init(&pr, !a.quiet);
  jl_scene_step_stats st;
  long diverged_at = 0;
  int failed_run = 0;
  for (long i = 0; i < steps && !jl_scene_stop; ++i) {
    if (jl_scene_sim_out_of_time(sim)) break;
    if (jl_scene_sim_advance(sim, &st, &err) != JL_OK) {
      jl_scene_progress_end(&pr);
      status = jl_cli_fail(&err);
      goto done;
    }
    if (st.diverged) {
      diverged_at = st.step;
      /* said once, the run goes on (the steps were asked) */
      jl_scene_progress_end(&pr);
      jl_scene_say("warning: step %ld: max penetration %.3g m, more than the largest moving body "
                   "(%.3g m): the %s solve has diverged (%d iterations, residual %.3g) and the "
                   "motion from here is not physical; try %sa smaller alpha (the scene's "
                   "solver.alpha, now %g) or more iterations (--max-iter)",
                   st.step, st.max_penetration, in.body_extent, method, st.iterations, st.residual,
                   strcmp(in.solver, "sor") == 0 ? "" : "--solver sor, ", in.alpha);
    }
    if (st.not_finite) {
      /* the run ends here with what it recorded; the exit status says it failed */
      jl_scene_progress_end(&pr);
      jl_scene_say("step %ld: a body's position or velocity is no longer finite (the solve "
                   "diverged at step %ld): the run stops here, its outputs hold the steps done",
                   st.step, diverged_at);
      failed_run = 1;
      break;
    }
    if (st.fclib_ready) {
      const char *t_fc = jl_cli_outputs_stage(&outs, slot[OUT_FCLIB], &err);
      if (!t_fc || jl_scene_sim_write_fclib(sim, t_fc, &err) != JL_OK) {
        jl_scene_progress_end(&pr);
        status = jl_cli_fail(&err);
        goto done;
      }
    }
    double ms = 1e3 * st.wall_s / (double)st.step;
    if (isnan(st.kinetic))
      jl_scene_progress_update(&pr, "%s: step %ld/%ld  t %.4g s  contacts %d  it %d  pen %.2e  %.3g ms/step",
                               in.name, st.step, steps, st.time, st.contacts, st.iterations,
                               st.max_penetration, ms);
    else
      jl_scene_progress_update(&pr,
                               "%s: step %ld/%ld  t %.4g s  contacts %d  it %d  res %.2e  pen %.2e  E %.6g  %.3g ms/step",
                               in.name, st.step, steps, st.time, st.contacts, st.iterations, st.residual,
                               st.max_penetration, st.kinetic + st.potential, ms);
  }
  /* the time of the steps (the device's queue drained), then the final state */
  jl_scene_summary sum;
  int rc = jl_scene_sim_finish(sim, &sum, &err);
  jl_scene_progress_end(&pr);
  if (rc != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  const char *t_out = jl_cli_outputs_stage(&outs, slot[OUT_JSON], &err), *t_csv = NULL, *t_glb = NULL;
  if (!t_out || jl_scene_sim_write_result(sim, t_out, a.scene, &err) != JL_OK ||
      (a.csv && (!(t_csv = jl_cli_outputs_stage(&outs, slot[OUT_CSV], &err)) ||
                 jl_scene_sim_write_csv(sim, t_csv, &err) != JL_OK)) ||
      (a.glb && (!(t_glb = jl_cli_outputs_stage(&outs, slot[OUT_GLB], &err)) ||
                 jl_scene_sim_write_glb(sim, t_glb, &err) != JL_OK)) ||
      jl_cli_outputs_commit(&outs, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  printf("%s: %ld steps (t = %.6g s) in %.3g s, %.3g ms/step on %s\n", in.name, sum.steps,
         sum.time, sum.wall_s, sum.steps ? 1e3 * sum.wall_s / sum.steps : 0.0, in.device);
  printf("contacts %.1f mean (max %d), iterations %.1f mean (max %d), %ld steps not converged, "
         "max penetration %.3g\n", sum.contacts_mean, sum.contacts_max, sum.iterations_mean,
         sum.iterations_max, sum.not_converged, sum.penetration_max);
  if (strcmp(sum.stopped_by, "steps") != 0)
    printf("stopped by %s after %ld of %ld steps\n", sum.stopped_by, sum.steps, steps);
  printf("wrote %s", out);
  if (a.csv) printf(", %s", a.csv);
  if (a.glb) printf(", %s", a.glb);
  if (sum.fclib_kept) printf(", %s (step %ld)", a.fclib, sum.fclib_step);
  printf("\n");
  if (a.fclib && !sum.fclib_kept)
    fprintf(stderr, "jostle: --fclib: step %ld was not reached, nothing exported\n", sum.fclib_step);
  if (failed_run) status = 1;
done:
  jl_cli_outputs_discard(&outs);  /* the staged files of a run that failed */
  jl_scene_sim_free(sim);
  return status;
}
