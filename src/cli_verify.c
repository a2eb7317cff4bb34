/* jostle verify: an independent legality check in long double. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "circles.h"
#include "cli.h"
#include "trunk_io.h"

static const char *const jl_verify_help =
  "usage: jostle verify FILE [--n N | --problem FILE | --equal N] [--tol REL]\n"
  "\n"
  "Checks a circle packing with exact geometry in long double: the largest\n"
  "pairwise overlap, the largest excess over the container, and R. FILE is a\n"
  "jostle result (.json) or Packomania text (.txt, which needs the instance).\n"
  "Exit status 0 when legal (overlap and excess <= REL * R, default 1e-10),\n"
  "1 when not, 2 on bad input.\n"
  "\n"
  "A trunk result (kind \"trunk\") is checked against its mesh instead: the\n"
  "mesh is reloaded and validated, and every block is tested against the\n"
  "triangles, for being inside, and against the other blocks (tolerance 1e-7\n"
  "of the mesh's bounding box diagonal; the circle options do not apply).\n";

int jl_cli_verify(int argc, char **argv) {
  static const struct option opts[] = {
    {"n", required_argument, NULL, 'n'},  {"problem", required_argument, NULL, 'p'},
    {"equal", required_argument, NULL, 'e'}, {"tol", required_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  long n = 0, equal = 0;
  double tol = JL_LEGAL_REL_TOL;
  const char *problem = NULL;
  int c, rc = JL_OK;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1 && rc == JL_OK) {
    switch (c) {
    case 'n': rc = jl_cli_int("--n", optarg, 1, 100000, &n, &err); break;
    case 'e': rc = jl_cli_int("--equal", optarg, 1, 100000, &equal, &err); break;
    case 'p': problem = optarg; break;
    case 't': rc = jl_cli_double("--tol", optarg, 0.0, 1.0, &tol, &err); break;
    case 'h': fputs(jl_verify_help, stdout); return 0;
    default:
      rc = jl_error_set(&err, JL_ERR_INPUT, "unknown option '%s' (see jostle verify --help)",
                        argv[optind - 1]);
    }
  }
  if (rc != JL_OK) return jl_cli_fail(&err);
  if (optind != argc - 1) {
    jl_error_set(&err, JL_ERR_INPUT, "verify needs exactly one FILE (see jostle verify --help)");
    return jl_cli_fail(&err);
  }
  const char *path = argv[optind];
  char kind[16];
  jl_result_kind(path, kind, sizeof kind);
  if (strcmp(kind, "trunk") == 0) return jl_cli_verify_trunk(path);
  jl_circle_problem prob = {0};
  jl_circle_packing pk = {0};
  size_t len = strlen(path);
  int status = 0;
  if (len >= 4 && strcmp(path + len - 4, ".txt") == 0) {
    if (n > 0) rc = jl_circle_problem_zimmermann(&prob, (int)n, &err);
    else if (equal > 0) rc = jl_circle_problem_equal(&prob, (int)equal, &err);
    else if (problem) rc = jl_circle_problem_load(&prob, problem, &err);
    else rc = jl_error_set(&err, JL_ERR_INPUT,
                           "%s: Packomania text has no radii: give --n, --problem or --equal", path);
    if (rc == JL_OK) rc = jl_circle_read_packomania(path, &prob, &pk, &err);
  } else {
    rc = jl_circle_result_read_json(path, &pk, &prob, &err);
  }
  if (rc != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  jl_circle_check chk;
  jl_circle_check_packing(&pk, tol, &chk);
  printf("%s: %s: %d circles, R = %.15Lf, max overlap %.3Le (circles %d, %d), max excess %.3Le\n",
         path, chk.legal ? "legal" : "NOT legal", pk.n, chk.R, chk.max_overlap, chk.overlap_i,
         chk.overlap_j, chk.max_excess);
  if (prob.best_known_R > 0)
    printf("%s: record %.10f, gap %+.3e\n", path, prob.best_known_R,
           (double)(chk.R / prob.best_known_R - 1.0L));
  status = chk.legal ? 0 : 1;
done:
  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&prob);
  return status;
}
