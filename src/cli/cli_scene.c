/* jostle scene: run a rigid-body scene file on the CPU reference path or on a
 * CUDA device (scene_runner.h). */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "device.h"
#include "fclib_export.h"
#include "file_util.h"
#include "log.h"
#include "progress.h"
#include "scene.h"
#include "scene_runner.h"
#include "scene_step.h"
#include "timer.h"
#include "trajectory.h"

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
  "                     also sweeps the contacts in another order.\n"
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
  "that step and writes what was computed so far. Exit status 2 on bad input\n"
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
  const char *scene, *solver, *device, *out, *csv, *glb, *fclib;
  jl_solver_kind kind;     /* --solver, parsed */
  jl_body_order order;     /* --body-order, parsed */
  long steps, max_iter, threads, glb_every, fclib_step;
  double time_s;           /* --time; 0: no limit */
  int matrix_free, quiet;
} jl_scene_args;

static int jl_scene_parse_args(int argc, char **argv, jl_scene_args *a, int *help, jl_error *err) {
  memset(a, 0, sizeof *a);
  a->device = "auto";
  *help = 0;
  optind = 1;
  int c = -1, rc = JL_OK;
  jl_cli_opts o = {.opts = jl_scene_opts, .cmd = "scene"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc, argv, err)) > 0) {
    switch (c) {
    case OPT_STEPS: rc = jl_cli_int("--steps", optarg, 1, JL_SCENE_STEPS_MAX, &a->steps, err); break;
    case OPT_TIME:
      rc = jl_cli_double("--time", optarg, 0.0, 1e9, &a->time_s, err);
      if (!rc && !(a->time_s > 0)) rc = jl_error_set(err, JL_ERR_INPUT, "--time: must be > 0");
      break;
    case OPT_SOLVER:
      a->solver = optarg;
      if (jl_solver_kind_parse(optarg, &a->kind))
        rc = jl_error_set(err, JL_ERR_INPUT, "--solver: expected jor, sor or apgd, got '%s'", optarg);
      break;
    case OPT_MAXIT: rc = jl_cli_int("--max-iter", optarg, 1, 100000000L, &a->max_iter, err); break;
    case OPT_MF:
    case OPT_ASM:
      if (a->matrix_free)
        rc = jl_error_set(err, JL_ERR_INPUT, "--matrix-free and --assembled: give one of them");
      a->matrix_free = c == OPT_MF ? 1 : 2;
      break;
    case OPT_DEVICE: a->device = optarg; break;
    case OPT_THREADS: rc = jl_cli_int("--threads", optarg, 1, 256, &a->threads, err); break;
    case OPT_ORDER:
      if (jl_body_order_parse(optarg, &a->order))
        rc = jl_error_set(err, JL_ERR_INPUT, "--body-order: expected auto, spatial or given, got '%s'",
                          optarg);
      break;
    case OPT_OUT: a->out = optarg; break;
    case OPT_CSV: a->csv = optarg; break;
    case OPT_GLB: a->glb = optarg; break;
    case OPT_GLB_EVERY: rc = jl_cli_int("--glb-every", optarg, 1, 100000000L, &a->glb_every, err); break;
    case OPT_FCLIB: a->fclib = optarg; break;
    case OPT_FCLIB_STEP: rc = jl_cli_int("--fclib-step", optarg, 1, JL_SCENE_STEPS_MAX, &a->fclib_step, err); break;
    case OPT_QUIET: a->quiet = 1; break;
    case OPT_HELP: *help = 1; return JL_OK;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err->code;
  if (rc != JL_OK) return rc;
  if (optind >= argc) return jl_error_set(err, JL_ERR_INPUT, "give a scene file (see jostle scene --help)");
  a->scene = argv[optind++];
  if (optind < argc) return jl_error_set(err, JL_ERR_INPUT, "unexpected argument '%s'", argv[optind]);
  if (a->fclib_step && !a->fclib) return jl_error_set(err, JL_ERR_INPUT, "--fclib-step needs --fclib");
  if (a->fclib && !jl_fclib_available())
    return jl_error_set(err, JL_ERR_INPUT,
                        "--fclib %s: this jostle was built without FCLib (libfclib-dev), so it cannot export",
                        a->fclib);
  if (a->glb_every && !a->glb) return jl_error_set(err, JL_ERR_INPUT, "--glb-every needs --glb");
  return jl_cli_out_json("--out", a->out, err);
}

/* Per-run totals for the summary. */
typedef struct jl_scene_totals {
  long steps;
  double contacts_sum, iterations_sum;
  int contacts_max, iterations_max;
  long not_converged, restarts;
  double residual_max, penetration_max;
  double displacement_max; /* farthest any dynamic body ended from where it started */
  long diverged_step;      /* first step whose penetration exceeded the largest moving body, 0: none */
  double wall_s;
  double first_s;          /* the first step alone (arena growth, graph instantiation) */
} jl_scene_totals;

/* %.6g, or null when not finite (JSON has no inf or nan: a scene that blew up). */
static const char *jl_fmt_or_null(char *out, size_t cap, double v) {
  if (isfinite(v)) snprintf(out, cap, "%.6g", v);
  else snprintf(out, cap, "null");
  return out;
}

static int jl_write_result(const char *path, const char *scene_path, const jl_scene *s,
                           const jl_device *dev, const jl_scene_totals *t, long steps_wanted,
                           const char *stopped_by, int ordered, const double e0[2],
                           jl_error *err) {
  jl_buf b = {0};
  const jl_prox_opts *o = &s->solver;
  const jl_bodies *bo = &s->bodies;
  int dynamic = 0;
  for (int k = 0; k < bo->count; ++k) dynamic += !bo->is_static[k];
  double ke, pe;
  jl_scene_energy(s, &ke, &pe);
  jl_buf_printf(&b, "{\n  \"format\": \"jostle-result\",\n  \"kind\": \"scene\",\n  \"version\": 1,\n");
  char g0[32], g1[32], g2[32], g3[32], g4[32], g5[32], g6[32];
  /* names and paths are data: escaped, never copied raw into the JSON */
  jl_buf_printf(&b, "  \"scene\": {\"name\": ");
  jl_buf_json_string(&b, s->name);
  jl_buf_printf(&b, ", \"file\": ");
  jl_buf_json_string(&b, scene_path);
  jl_buf_printf(&b, ", \"bodies\": %d, \"dynamic_bodies\": %d, \"dt\": %s, \"steps_requested\": %ld},\n",
                bo->count, dynamic, jl_fmt_json_double(g1, sizeof g1, s->dt), steps_wanted);
  jl_buf_printf(&b, "  \"solver\": {\"method\": \"%s\", \"alpha\": %s, \"tol_abs\": %s, "
                "\"tol_rel\": %s, \"max_iterations\": %d, \"warm_start\": %s, "
                "\"matrix_free\": %s, \"order\": \"%s\"},\n",
                jl_solver_kind_name(o->kind), jl_fmt_json_double(g1, sizeof g1, o->alpha), jl_fmt_json_double(g2, sizeof g2, o->tol_abs),
                jl_fmt_json_double(g3, sizeof g3, o->tol_rel),
                o->max_iter, o->warm_start ? "true" : "false",
                o->matrix_free < 0 ? "\"auto\"" : o->matrix_free ? "true" : "false",
                o->sor_order == JL_SOR_SEQUENTIAL ? "sequential" : "coloured");
  jl_buf_printf(&b, "  \"run\": {\"device\": ");
  jl_buf_json_string(&b, dev->name);
  jl_buf_printf(&b, ", \"device_kind\": \"%s\", \"threads\": %d, "
                "\"steps\": %ld, \"time\": %s, \"wall_s\": %.6g, \"ms_per_step\": %.6g, "
                "\"ms_first_step\": %s, \"ms_per_step_after_first\": %s, "
                "\"body_order\": \"%s\", \"stopped_by\": \"%s\"},\n",
                jl_device_kind_name(dev->kind), dev->threads, t->steps, jl_fmt_json_double(g4, sizeof g4, t->steps * s->dt), t->wall_s,
                t->steps ? 1e3 * t->wall_s / t->steps : 0.0,
                t->steps > 0 ? jl_fmt_or_null(g5, sizeof g5, 1e3 * t->first_s) : "null",
                t->steps > 1 ? jl_fmt_or_null(g6, sizeof g6, 1e3 * (t->wall_s - t->first_s) / (double)(t->steps - 1)) : "null",
                jl_body_order_name(ordered ? JL_BODY_ORDER_SPATIAL : JL_BODY_ORDER_GIVEN), stopped_by);
  double ns = t->steps > 0 ? (double)t->steps : 1.0;
  char dstep[32] = "null";
  if (t->diverged_step > 0) snprintf(dstep, sizeof dstep, "%ld", t->diverged_step);
  jl_buf_printf(&b, "  \"summary\": {\"contacts_mean\": %.6g, \"contacts_max\": %d, "
                "\"iterations_mean\": %.6g, \"iterations_max\": %d, \"steps_not_converged\": %ld, "
                "\"restarts\": %ld, \"residual_max\": %s, \"max_penetration\": %s, "
                "\"max_displacement\": %s, \"diverged_step\": %s, "
                "\"energy_initial\": {\"kinetic\": %s, \"potential\": %s}, "
                "\"energy_final\": {\"kinetic\": %s, \"potential\": %s}},\n",
                t->contacts_sum / ns, t->contacts_max, t->iterations_sum / ns, t->iterations_max,
                t->not_converged, t->restarts, jl_fmt_or_null(g0, sizeof g0, t->residual_max),
                jl_fmt_or_null(g5, sizeof g5, t->penetration_max),
                jl_fmt_or_null(g6, sizeof g6, t->displacement_max), dstep,
                jl_fmt_json_double(g1, sizeof g1, e0[0]),
                jl_fmt_json_double(g2, sizeof g2, e0[1]), jl_fmt_json_double(g3, sizeof g3, ke), jl_fmt_json_double(g4, sizeof g4, pe));
  jl_buf_printf(&b, "  \"bodies\": [\n");
  static const char *const shapes[] = {"sphere", "box", "plane"};
  for (int k = 0; k < bo->count; ++k) {
    jl_buf_printf(&b, "    {\"shape\": \"%s\", \"static\": %s, \"position\": ", shapes[bo->shape[k]],
                  bo->is_static[k] ? "true" : "false");
    jl_buf_json_vec(&b, bo->pos + 3 * (size_t)k, 3);
    jl_buf_printf(&b, ", \"orientation\": ");
    jl_buf_json_vec(&b, bo->quat + 4 * (size_t)k, 4);
    jl_buf_printf(&b, ", \"velocity\": ");
    jl_buf_json_vec(&b, bo->vel + 3 * (size_t)k, 3);
    jl_buf_printf(&b, ", \"angular_velocity\": ");
    jl_buf_json_vec(&b, bo->omega + 3 * (size_t)k, 3);
    jl_buf_printf(&b, "}%s\n", k + 1 < bo->count ? "," : "");
  }
  jl_buf_printf(&b, "  ]\n}\n");
  int rc = b.failed ? jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory building the file", path)
                    : jl_file_write_atomic(path, b.data, b.len, err);
  jl_buf_free(&b);
  return rc;
}

static void jl_csv_row(jl_buf *csv, long step, double time, double ke, double pe, int contacts,
                       int iterations, double residual, double pen) {
  jl_buf_printf(csv, "%ld,%.9g,%.12g,%.12g,%d,%d,%.6g,%.6g\n", step, time, ke, pe, contacts,
                iterations, residual, pen);
}

int jl_cli_scene(int argc, char **argv) {
  double t_start = jl_time_now();
  jl_error err = {0};
  jl_scene_args a;
  int help = 0;
  if (jl_scene_parse_args(argc, argv, &a, &help, &err) != JL_OK) return jl_cli_fail(&err);
  if (help) {
    fputs(jl_scene_help, stdout);
    return 0;
  }
  /* the device first: --device cuda without one fails before a large scene is read */
  jl_device dev;
  int notice = 0;
  if (jl_device_select(&dev, a.device, (int)a.threads, &notice, &err) != JL_OK)
    return jl_cli_fail(&err);
  jl_scene s;
  int status = 0;
  jl_scene_runner run;
  memset(&run, 0, sizeof run);
  int have_run = 0;
  jl_trajectory traj;
  memset(&traj, 0, sizeof traj);
  int have_traj = 0;
  jl_buf csv = {0};
  double *pos0 = NULL;
  if (jl_scene_load(&s, a.scene, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    jl_scene_free(&s);
    return status;
  }
  if (a.solver) jl_prox_opts_set_kind(&s.solver, a.kind);
  if (a.max_iter) s.solver.max_iter = (int)a.max_iter;
  if (a.matrix_free) s.solver.matrix_free = a.matrix_free == 1;
  s.body_order = a.order;
  /* a signal or --time ends the solve under way (CPU; on CUDA after its step) */
  double deadline = a.time_s > 0 ? t_start + a.time_s : 0.0;
  s.solver.stop = &jl_scene_stop;
  s.solver.deadline = deadline;
  long steps = a.steps ? a.steps : s.steps;
  /* outputs checked before any work; the default name in the current folder */
  char stem[JL_CLI_STEM_MAX + 1], def_out[JL_CLI_STEM_MAX + 8];
  jl_cli_default_stem(s.name, "scene", stem, sizeof stem);
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
    jl_error_set(&err, JL_ERR_INPUT, "--fclib-step %ld: the run has only %ld steps", a.fclib_step,
                 steps);
    status = jl_cli_fail(&err);
    goto done;
  }
  int on_gpu = dev.kind == JL_DEVICE_CUDA;
  if (on_gpu && a.matrix_free == 2) {
    jl_error_set(&err, JL_ERR_INPUT,
                 "--assembled: the device step is matrix-free; use --device cpu for G");
    status = jl_cli_fail(&err);
    goto done;
  }
  jl_log log = {stderr, a.quiet ? JL_LOG_NOTICE : JL_LOG_INFO};
  if (notice)
    jl_log_printf(&log, JL_LOG_NOTICE, "no CUDA device found, running on the CPU (%d thread%s)",
                  dev.threads, dev.threads == 1 ? "" : "s");
  have_run = 1; /* jl_scene_runner_free also undoes a failed init */
  if (jl_scene_runner_init(&run, &s, &dev, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  int dynamic = 0;
  for (int k = 0; k < s.bodies.count; ++k) dynamic += !s.bodies.is_static[k];
  jl_log_printf(&log, JL_LOG_INFO, "%s, %d bodies (%d dynamic), dt %g, %ld steps, %s%s, %s", s.name,
                s.bodies.count, dynamic, s.dt, steps, jl_solver_kind_upper(s.solver.kind),
                s.solver.matrix_free < 0 ? "" : s.solver.matrix_free ? " matrix-free" : " assembled G",
                dev.name);
  if (run.perm)
    jl_log_printf(&log, JL_LOG_INFO,
                  "bodies stepped along a Z-order curve (--body-order); outputs keep the file's numbering");
  long glb_every = a.glb_every;
  if (a.glb) {
    if (!glb_every) {
      glb_every = (long)floor(1.0 / (30.0 * s.dt) + 0.5);
      if (glb_every < 1) glb_every = 1;
    }
    if (jl_trajectory_init(&traj, &s.bodies, &err) != JL_OK ||
        jl_trajectory_add_frame(&traj, &s.bodies, 0.0, &err) != JL_OK) {
      status = jl_cli_fail(&err);
      goto done;
    }
    have_traj = 1;
  }
  double e0[2];
  jl_scene_energy(&s, &e0[0], &e0[1]);
  pos0 = malloc(3 * sizeof(double) * (size_t)(s.bodies.count > 0 ? s.bodies.count : 1));
  if (!pos0) {
    jl_error_set(&err, JL_ERR_NOMEM, "out of memory for %d bodies", s.bodies.count);
    status = jl_cli_fail(&err);
    goto done;
  }
  memcpy(pos0, s.bodies.pos, 3 * sizeof(double) * (size_t)s.bodies.count);
  if (a.csv) {
    jl_buf_printf(&csv, "step,time,kinetic,potential,contacts,iterations,residual,max_penetration\n");
    jl_csv_row(&csv, 0, 0.0, e0[0], e0[1], 0, 0, 0.0, 0.0);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = jl_scene_on_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  jl_progress pr;
  jl_progress_init(&pr, stderr, !a.quiet);
  jl_scene_totals tot;
  memset(&tot, 0, sizeof tot);
  long fclib_step = a.fclib_step ? a.fclib_step : steps;
  int fclib_done = 0;
  /* A penetration deeper than the largest moving body is no contact any more:
   * the solve has diverged. Said once, the run goes on (the steps were asked). */
  double body_extent = 0.0;
  for (int k = 0; k < s.bodies.count; ++k) {
    if (s.bodies.is_static[k]) continue;
    const double *z = s.bodies.size + 3 * (size_t)k;
    double e = s.bodies.shape[k] == JL_SHAPE_SPHERE ? 2.0 * z[0]
                                                    : 2.0 * sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
    if (e > body_extent) body_extent = e;
  }
  int diverged_said = 0;
  double t0 = jl_time_now();
  jl_scene_run_stats ss;
  memset(&ss, 0, sizeof ss);
  int by_time = 0;
  for (long i = 0; i < steps && !jl_scene_stop; ++i) {
    if (deadline > 0.0 && jl_time_now() >= deadline) {
      by_time = 1;
      break;
    }
    const jl_contact_problem *prob = NULL;
    int rc = a.fclib && run.step + 1 == fclib_step
               ? jl_scene_runner_step_problem(&run, &ss, &prob, &err)
               : jl_scene_runner_step(&run, &ss, &err);
    /* energies: on the device only for what shows them (a reduction, two numbers back) */
    double ke = NAN, pe = NAN;
    if (rc == JL_OK && (a.csv || !on_gpu)) rc = jl_scene_runner_energy(&run, &ke, &pe, &err);
    if (rc != JL_OK) {
      jl_progress_end(&pr);
      status = jl_cli_fail(&err);
      goto done;
    }
    if (!diverged_said && body_extent > 0.0 &&
        (!isfinite(ss.max_penetration) || ss.max_penetration > body_extent)) {
      jl_progress_end(&pr);
      jl_log_printf(&log, JL_LOG_NOTICE,
                    "warning: step %ld: max penetration %.3g m, more than the largest moving body "
                    "(%.3g m): the %s solve has diverged (%d iterations, residual %.3g) and the "
                    "motion from here is not physical; try %sa smaller alpha (the scene's "
                    "solver.alpha, now %g) or more iterations (--max-iter)",
                    ss.step, ss.max_penetration, body_extent, jl_solver_kind_upper(s.solver.kind),
                    ss.iterations, ss.residual,
                    s.solver.kind == JL_SOLVER_SOR ? "" : "--solver sor, ", s.solver.alpha);
      diverged_said = 1;
      tot.diverged_step = ss.step;
    }
    tot.steps++;
    tot.contacts_sum += ss.contacts;
    tot.iterations_sum += ss.iterations;
    if (ss.contacts > tot.contacts_max) tot.contacts_max = ss.contacts;
    if (ss.iterations > tot.iterations_max) tot.iterations_max = ss.iterations;
    tot.not_converged += !ss.converged && ss.contacts > 0;
    tot.restarts += ss.restarts;
    if (isnan(ss.residual) || isnan(tot.residual_max)) tot.residual_max = NAN;
    else if (ss.residual > tot.residual_max) tot.residual_max = ss.residual;
    if (ss.max_penetration > tot.penetration_max) tot.penetration_max = ss.max_penetration;
    if (a.csv)
      jl_csv_row(&csv, ss.step, ss.time, ke, pe, ss.contacts, ss.iterations, ss.residual,
                 ss.max_penetration);
    if (have_traj && (ss.step % glb_every == 0 || i + 1 == steps) &&
        (jl_scene_runner_fetch(&run, &err) != JL_OK ||
         jl_trajectory_add_frame(&traj, &s.bodies, ss.time, &err) != JL_OK)) {
      jl_progress_end(&pr);
      status = jl_cli_fail(&err);
      goto done;
    }
    if (prob) {
      jl_fc_problem fp = {prob->n, prob->rowptr, prob->col, prob->blocks, prob->c, prob->mu};
      char title[256], desc[256];
      snprintf(title, sizeof title, "jostle %s step %ld", s.name, ss.step);
      snprintf(desc, sizeof desc, "%d contacts, Delassus G and free term c of Moreau's midpoint step, dt %g",
               prob->n, s.dt);
      const char *t_fc = jl_cli_outputs_stage(&outs, slot[OUT_FCLIB], &err);
      if (!t_fc || jl_fclib_write_local(&fp, t_fc, title, desc, &err) != JL_OK) {
        jl_progress_end(&pr);
        status = jl_cli_fail(&err);
        goto done;
      }
      fclib_done = 1;
    }
    if (tot.steps == 1) {
      /* the first step's one-off costs, apart: the device's queue drained */
      if (jl_scene_runner_sync(&run, &err) != JL_OK) {
        jl_progress_end(&pr);
        status = jl_cli_fail(&err);
        goto done;
      }
      tot.first_s = jl_time_now() - t0;
    }
    double now = jl_time_now();
    tot.wall_s = now - t0;
    if (isnan(ke))
      jl_progress_update(&pr, now, 0,
                         "%s: step %ld/%ld  t %.4g s  contacts %d  it %d  pen %.2e  %.3g ms/step",
                         s.name, ss.step, steps, ss.time, ss.contacts, ss.iterations,
                         ss.max_penetration, 1e3 * tot.wall_s / tot.steps);
    else
      jl_progress_update(&pr, now, 0,
                         "%s: step %ld/%ld  t %.4g s  contacts %d  it %d  res %.2e  pen %.2e  E %.6g  %.3g ms/step",
                         s.name, ss.step, steps, ss.time, ss.contacts, ss.iterations, ss.residual,
                         ss.max_penetration, ke + pe, 1e3 * tot.wall_s / tot.steps);
  }
  /* the time of the steps (the device's queue drained), then the final state */
  if (jl_scene_runner_sync(&run, &err) != JL_OK) {
    jl_progress_end(&pr);
    status = jl_cli_fail(&err);
    goto done;
  }
  tot.wall_s = jl_time_now() - t0;
  jl_progress_end(&pr);
  if (jl_scene_runner_fetch(&run, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  for (int k = 0; k < s.bodies.count; ++k) {
    if (s.bodies.is_static[k]) continue;
    double d2 = 0.0;
    for (int d = 0; d < 3; ++d) {
      double dx = s.bodies.pos[3 * k + d] - pos0[3 * k + d];
      d2 += dx * dx;
    }
    if (sqrt(d2) > tot.displacement_max) tot.displacement_max = sqrt(d2);
  }
  int by_signal = jl_scene_stop != 0;
  const char *stopped_by = by_signal ? "signal" : by_time ? "time" : "steps";
  const char *t_out = jl_cli_outputs_stage(&outs, slot[OUT_JSON], &err), *t_csv = NULL, *t_glb = NULL;
  if (!t_out ||
      jl_write_result(t_out, a.scene, &s, &dev, &tot, steps, stopped_by, run.perm != NULL, e0, &err) != JL_OK ||
      (a.csv && (!(t_csv = jl_cli_outputs_stage(&outs, slot[OUT_CSV], &err)) ||
                 (csv.failed ? jl_error_set(&err, JL_ERR_NOMEM, "%s: out of memory", a.csv)
                             : jl_file_write_atomic(t_csv, csv.data, csv.len, &err)) != JL_OK)) ||
      (have_traj && (!(t_glb = jl_cli_outputs_stage(&outs, slot[OUT_GLB], &err)) ||
                     jl_trajectory_write_glb(&traj, t_glb, &err) != JL_OK)) ||
      jl_cli_outputs_commit(&outs, &err) != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  printf("%s: %ld steps (t = %.6g s) in %.3g s, %.3g ms/step on %s\n", s.name, tot.steps,
         tot.steps * s.dt, tot.wall_s, tot.steps ? 1e3 * tot.wall_s / tot.steps : 0.0, dev.name);
  printf("contacts %.1f mean (max %d), iterations %.1f mean (max %d), %ld steps not converged, "
         "max penetration %.3g\n", tot.contacts_sum / (tot.steps ? tot.steps : 1), tot.contacts_max,
         tot.iterations_sum / (tot.steps ? tot.steps : 1), tot.iterations_max, tot.not_converged,
         tot.penetration_max);
  if (by_signal || by_time) printf("stopped by %s after %ld of %ld steps\n", stopped_by, tot.steps, steps);
  printf("wrote %s", out);
  if (a.csv) printf(", %s", a.csv);
  if (have_traj) printf(", %s", a.glb);
  if (fclib_done) printf(", %s (step %ld)", a.fclib, fclib_step);
  printf("\n");
  if (a.fclib && !fclib_done)
    fprintf(stderr, "jostle: --fclib: step %ld was not reached, nothing exported\n", fclib_step);
done:
  jl_cli_outputs_discard(&outs);  /* the staged files of a run that failed */
  free(pos0);
  jl_buf_free(&csv);
  if (have_traj) jl_trajectory_free(&traj);
  if (have_run) jl_scene_runner_free(&run);
  jl_scene_free(&s);
  return status;
}
