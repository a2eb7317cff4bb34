/* jostle bench scene: where a device time step spends its time. Runs a
 * scene's first steps on CUDA with stage timing on (a device sync at the
 * end of each stage) and prints one JSON line: ms per step in total and per
 * stage (integrate, collide, setup, colour, solve, finish), contacts and
 * iterations per step. The untimed first step (arena growth, graph
 * instantiation) is left out. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body_order.h"
#include "cli.h"
#include "device.h"
#include "scene.h"
#include "scene_gpu.h"
#include "timer.h"

int jl_cli_bench_scene(int argc, char **argv);

static const char *const jl_bench_scene_help =
  "usage: jostle bench scene SCENE.json [--steps N] [--solver jor|sor|apgd] [--max-iter K]\n"
  "                          [--check-every C] [--no-persistent] [--streamed | --no-streamed]\n"
  "                          [--body-order auto|spatial|given]\n"
  "\n"
  "Runs 1 + N steps (default N = 10) of the scene on the CUDA device and prints\n"
  "one JSON line: ms per step (the last N), and per stage of the device step\n"
  "(integrate, collide, setup, colour, solve, finish; the device is\n"
  "synchronised at each stage's end), mean contacts and iterations.\n"
  "--no-persistent: JOR and APGD solves by the per-iteration kernels even\n"
  "when the problem fits one cooperative launch (persistent_solves says how\n"
  "many solves ran in one launch). --streamed / --no-streamed: larger JOR and\n"
  "APGD solves always / never by the streamed kernels (constants by field, du\n"
  "from the update's terms; by default from 200,000 contacts up).\n"
  "--body-order: as jostle scene (auto: spatial from 4096 bodies up).\n";

int jl_cli_bench_scene(int argc, char **argv) {
  static const struct option opts[] = {
    {"steps", required_argument, NULL, 'S'},    {"solver", required_argument, NULL, 'v'},
    {"max-iter", required_argument, NULL, 'k'}, {"check-every", required_argument, NULL, 'c'},
    {"no-persistent", no_argument, NULL, 'P'}, {"streamed", no_argument, NULL, 'T'},
    {"no-streamed", no_argument, NULL, 'N'},    {"body-order", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  long steps = 10, max_iter = 0, check_every = 8;
  const char *solver = NULL;
  jl_solver_kind kind = JL_SOLVER_SOR;
  int c, rc = JL_OK, persistent = 1, streamed = -1;
  jl_body_order order = JL_BODY_ORDER_AUTO;
  optind = 2;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench scene"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc, argv, &err)) > 0) {
    switch (c) {
    case 'S': rc = jl_cli_int("--steps", optarg, 1, 1000000, &steps, &err); break;
    case 'k': rc = jl_cli_int("--max-iter", optarg, 1, 100000000L, &max_iter, &err); break;
    case 'c': rc = jl_cli_int("--check-every", optarg, 1, 100000, &check_every, &err); break;
    case 'v':
      if (jl_solver_kind_parse(optarg, &kind))
        rc = jl_error_set(&err, JL_ERR_INPUT, "--solver: expected jor, sor or apgd, got '%s'", optarg);
      solver = optarg;
      break;
    case 'P': persistent = 0; break;
    case 'T':
    case 'N':
      if (streamed >= 0) rc = jl_error_set(&err, JL_ERR_INPUT, "--streamed and --no-streamed: give one of them");
      streamed = c == 'T';
      break;
    case 'o':
      if (jl_body_order_parse(optarg, &order))
        rc = jl_error_set(&err, JL_ERR_INPUT, "--body-order: expected auto, spatial or given, got '%s'",
                          optarg);
      break;
    case 'h': fputs(jl_bench_scene_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc == JL_OK && optind != argc - 1)
    rc = jl_error_set(&err, JL_ERR_INPUT, "bench scene: expected one SCENE.json");
  if (rc != JL_OK) return jl_cli_fail(&err);
  const char *path = argv[optind];

  jl_scene s;
  if (jl_scene_load(&s, path, &err) != JL_OK) {
    jl_scene_free(&s);
    return jl_cli_fail(&err);
  }
  if (solver) jl_prox_opts_set_kind(&s.solver, kind);
  if (max_iter) s.solver.max_iter = (int)max_iter;
  /* the order a run steps the bodies in (scene_runner.h) */
  jl_bodies ordered;
  int *perm = NULL;
  if (jl_bodies_order_copy(&ordered, &s.bodies, order, &perm, &err) != JL_OK) {
    jl_scene_free(&s);
    return jl_cli_fail(&err);
  }
  jl_body_order stepped = perm ? JL_BODY_ORDER_SPATIAL : JL_BODY_ORDER_GIVEN;
  if (perm) {
    jl_bodies_free(&s.bodies);
    s.bodies = ordered;
    free(perm);
  }
  jl_device dev;
  jl_scene_gpu *g = NULL;
  if (jl_device_select(&dev, "cuda", 0, NULL, &err) != JL_OK ||
      jl_scene_gpu_create(&g, &dev, &err) != JL_OK ||
      jl_scene_gpu_set_bodies(g, &s.bodies, &err) != JL_OK) {
    jl_scene_gpu_destroy(g);
    jl_scene_free(&s);
    return jl_cli_fail(&err);
  }
  jl_scene_gpu_set_persistent(g, persistent);
  jl_scene_gpu_set_streamed(g, streamed);
  jl_gpu_step_stats st;
  rc = jl_scene_gpu_step(g, &s, (int)check_every, &st, &err);  /* untimed: growth, graphs */
  jl_scene_gpu_set_timing(g, 1);
  double contacts = 0, iterations = 0, colours = 0;
  double t0 = jl_time_now();
  for (long k = 0; rc == JL_OK && k < steps; ++k) {
    rc = jl_scene_gpu_step(g, &s, (int)check_every, &st, &err);
    contacts += st.contacts;
    iterations += st.iterations;
    colours += st.colours;
  }
  double wall = jl_time_now() - t0;
  double stage[JL_GPU_STAGES];
  jl_scene_gpu_stage_times(g, stage);
  long persistent_solves = jl_scene_gpu_persistent_solves(g);
  jl_scene_gpu_destroy(g);
  if (rc != JL_OK) {
    jl_scene_free(&s);
    return jl_cli_fail(&err);
  }
  printf("{\"bench\": \"scene\", \"scene\": \"%s\", \"device_name\": \"%s\", \"bodies\": %d, "
         "\"body_order\": \"%s\", \"solver\": \"%s\", \"max_iterations\": %d, \"steps\": %ld, "
         "\"ms_per_step\": %.4g, "
         "\"stage_ms_per_step\": {",
         s.name[0] ? s.name : path, dev.name, s.bodies.count,
         jl_body_order_name(stepped), jl_solver_kind_name(s.solver.kind), s.solver.max_iter, steps,
         1e3 * wall / (double)steps);
  for (int k = 0; k < JL_GPU_STAGES; ++k)
    printf("%s\"%s\": %.4g", k ? ", " : "", jl_gpu_stage_name(k), 1e3 * stage[k] / (double)steps);
  printf("}, \"contacts\": %.1f, \"iterations\": %.1f, \"colours\": %.1f, "
         "\"persistent_solves\": %ld}\n",
         contacts / (double)steps, iterations / (double)steps, colours / (double)steps,
         persistent_solves);
  jl_scene_free(&s);
  return 0;
}
