/* jostle bench scene: where a time step spends its time. Runs a scene's
 * first steps on CUDA (a device sync at the end of each stage) or on the
 * CPU path with stage timing on and prints one JSON line: ms per step in total and per
 * stage (integrate, collide, setup, colour, solve, finish), contacts and
 * iterations per step. The untimed first step (arena growth, graph
 * instantiation) is left out. The measuring is the library's
 * (jl_bench_scene); this file parses and prints. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int jl_cli_bench_scene(int argc, char **argv);

static const char *const jl_bench_scene_help =
  "usage: jostle bench scene SCENE.json [--steps N] [--solver jor|sor|apgd] [--max-iter K]\n"
  "                          [--check-every C] [--no-persistent] [--persistent-plan K]\n"
  "                          [--streamed | --no-streamed] [--general-narrow] [--two-pass-narrow]\n"
  "                          [--soa-copy] [--pair-skin S]\n"
  "                          [--body-order auto|spatial|given] [--device cuda|cpu|auto]\n"
  "                          [--threads T] [--marks]\n"
  "\n"
  "Runs 1 + N steps (default N = 10) of the scene on the CUDA device (the\n"
  "default) or the CPU path and prints one JSON line: ms per step (the last N),\n"
  "and per stage of the step (integrate, collide, setup, colour, solve, finish;\n"
  "the device is synchronised at each stage's end), mean contacts and\n"
  "iterations. On the CPU (--threads T, default all cores) solve_wait is the\n"
  "part of the solve a thread spent waiting at the team's barriers (the mean\n"
  "over the team).\n"
  "--no-persistent: JOR and APGD solves by the per-iteration kernels even\n"
  "when the problem fits one cooperative launch (persistent_solves says how\n"
  "many solves ran in one launch, persistent_cache what the last kept in\n"
  "shared memory: contacts+du2, contacts+du1, du2, contacts, du1 or none).\n"
  "--persistent-plan K: keep plan K of that list (0 to 5) or, when its grid\n"
  "does not fit one wave, run the per-iteration kernels (default: the first\n"
  "plan that fits).\n"
  "--streamed / --no-streamed: larger JOR and APGD solves always / never by\n"
  "the streamed kernels (constants by field, du from the update's terms; by\n"
  "default from 200,000 contacts up).\n"
  "--general-narrow: a scene without boxes through the general narrow-phase\n"
  "kernels instead of those for round shapes (the same contacts).\n"
  "--two-pass-narrow: boxes' manifolds computed twice, by a count pass and a\n"
  "write pass, instead of once, staged and gathered (the same contacts).\n"
  "--soa-copy: a streamed solve copies its constants by field itself instead\n"
  "of the setup writing them (the same bits).\n"
  "--pair-skin S: the step keeps its pair list while every box stays inside\n"
  "itself widened by S times the mean box edge and its way in 8 steps at its\n"
  "speed (default 0.1; 0: a new list every step); pair_lists counts the timed\n"
  "steps that built one, body_lists those whose setup sorted the contacts by\n"
  "body (a step that kept its pair list and whose pairs each counted the\n"
  "contacts of the step before keeps the body lists too).\n"
  "--body-order: as jostle scene (auto: spatial from 4096 bodies up).\n"
  "--marks (CUDA): also marks_ms_per_step, the step's launch groups in launch\n"
  "order, each timed by CUDA events from the mark before it (kernels, copies\n"
  "and the device's idle gaps while the host waits or launches): they add up\n"
  "to the step's time on the device.\n";

int jl_cli_bench_scene(int argc, char **argv) {
  static const struct option opts[] = {
    {"steps", required_argument, NULL, 'S'},    {"solver", required_argument, NULL, 'v'},
    {"max-iter", required_argument, NULL, 'k'}, {"check-every", required_argument, NULL, 'c'},
    {"no-persistent", no_argument, NULL, 'P'}, {"streamed", no_argument, NULL, 'T'},
    {"persistent-plan", required_argument, NULL, 'L'},
    {"no-streamed", no_argument, NULL, 'N'},    {"body-order", required_argument, NULL, 'o'},
    {"device", required_argument, NULL, 'd'},   {"threads", required_argument, NULL, 't'},
    {"marks", no_argument, NULL, 'm'},         {"help", no_argument, NULL, 'h'},
    {"general-narrow", no_argument, NULL, 'g'}, {"soa-copy", no_argument, NULL, 'y'},
    {"pair-skin", required_argument, NULL, 'K'}, {"two-pass-narrow", no_argument, NULL, 'w'},
    {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  jl_bench_scene_options bo;
  jl_bench_scene_options_default(&bo);
  long steps = bo.steps, max_iter = 0, check_every = bo.check_every, threads = 0, plan = -1;
  const char *solver = NULL, *order = "auto", *device = "cuda";
  int c, rc = JL_OK, persistent = 1, streamed = -1, marks = 0, round_narrow = 1, soa_by_setup = 1;
  int staged_narrow = 1;
  optind = 2;
  c = -1;
  jl_cli_opts o = {.opts = opts, .cmd = "bench scene"};
  while (rc == JL_OK && (c = jl_cli_next(&o, argc, argv, &err)) > 0) {
    switch (c) {
    case 'S': rc = jl_cli_int("--steps", optarg, 1, 1000000, &steps, &err); break;
    case 'k': rc = jl_cli_int("--max-iter", optarg, 1, 100000000L, &max_iter, &err); break;
    case 'c': rc = jl_cli_int("--check-every", optarg, 1, 100000, &check_every, &err); break;
    case 'v':
      if (strcmp(optarg, "jor") != 0 && strcmp(optarg, "sor") != 0 && strcmp(optarg, "apgd") != 0)
        rc = jl_cli_error_set(&err, JL_ERR_INPUT, "--solver: expected jor, sor or apgd, got '%s'",
                              optarg);
      solver = optarg;
      break;
    case 'P': persistent = 0; break;
    case 'L': rc = jl_cli_int("--persistent-plan", optarg, 0, 5, &plan, &err); break;
    case 'T':
    case 'N':
      if (streamed >= 0)
        rc = jl_cli_error_set(&err, JL_ERR_INPUT, "--streamed and --no-streamed: give one of them");
      streamed = c == 'T';
      break;
    case 'o':
      if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "spatial") != 0 &&
          strcmp(optarg, "given") != 0)
        rc = jl_cli_error_set(&err, JL_ERR_INPUT,
                              "--body-order: expected auto, spatial or given, got '%s'", optarg);
      order = optarg;
      break;
    case 'd':
      if (strcmp(optarg, "cuda") != 0 && strcmp(optarg, "cpu") != 0 && strcmp(optarg, "auto") != 0)
        rc = jl_cli_error_set(&err, JL_ERR_INPUT, "--device: expected cuda, cpu or auto, got '%s'",
                              optarg);
      device = optarg;
      break;
    case 't': rc = jl_cli_int("--threads", optarg, 1, 4096, &threads, &err); break;
    case 'm': marks = 1; break;
    case 'g': round_narrow = 0; break;
    case 'w': staged_narrow = 0; break;
    case 'y': soa_by_setup = 0; break;
    case 'K': rc = jl_cli_double("--pair-skin", optarg, 0.0, 10.0, &bo.pair_skin, &err); break;
    case 'h': fputs(jl_bench_scene_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc == JL_OK && optind != argc - 1)
    rc = jl_cli_error_set(&err, JL_ERR_INPUT, "bench scene: expected one SCENE.json");
  if (rc != JL_OK) return jl_cli_fail(&err);
  const char *path = argv[optind];
  bo.steps = steps;
  bo.solver = solver;
  bo.max_iter = (int)max_iter;
  bo.check_every = (int)check_every;
  bo.persistent = persistent;
  bo.persistent_plan = (int)plan;
  bo.streamed = streamed;
  bo.round_narrow = round_narrow;
  bo.staged_narrow = staged_narrow;
  bo.soa_by_setup = soa_by_setup;
  bo.body_order = order;
  bo.device = device;
  bo.threads = (int)threads;
  bo.marks = marks;
  jl_bench_scene_result r;
  if (jl_bench_scene(path, &bo, &r, &err) != JL_OK) return jl_cli_fail(&err);
  printf("{\"bench\": \"scene\", \"scene\": \"%s\", \"device_name\": \"%s\", \"bodies\": %d, "
         "\"body_order\": \"%s\", \"solver\": \"%s\", \"max_iterations\": %d, \"steps\": %ld, "
         "\"ms_per_step\": %.4g, "
         "\"stage_ms_per_step\": {",
         r.name[0] ? r.name : path, r.device_name, r.bodies, r.body_order, r.solver,
         r.max_iterations, steps, r.ms_per_step);
  for (int k = 0; k < JL_BENCH_SCENE_STAGES; ++k)
    printf("%s\"%s\": %.4g", k ? ", " : "", r.stage_name[k], r.stage_ms_per_step[k]);
  printf("}, \"solve_wait_ms_per_step\": %.4g, \"contacts\": %.1f, \"iterations\": %.1f, "
         "\"colours\": %.1f, \"persistent_solves\": %ld, \"persistent_cache\": \"%s\", "
         "\"pair_lists\": %ld, \"body_lists\": %ld",
         r.solve_wait_ms_per_step, r.contacts, r.iterations, r.colours, r.persistent_solves,
         r.persistent_cache, r.pair_lists, r.body_lists);
  if (marks) {
    printf(", \"marks_ms_per_step\": {");
    for (int k = 0; k < r.marks; ++k)
      printf("%s\"%s\": %.4g", k ? ", " : "", r.mark_name[k], r.mark_ms_per_step[k]);
    printf("}");
  }
  printf("}\n");
  return 0;
}
