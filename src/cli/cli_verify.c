/* jostle verify: an independent legality check in long double. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jostle/jostle.h>

#include "cli.h"

static const char *const jl_verify_help =
  "usage: jostle verify FILE [--n N | --problem FILE | --equal N] [--tol REL]\n"
  "\n"
  "Checks a circle packing with exact geometry in long double: the largest\n"
  "pairwise overlap, the largest excess over the container, and R. FILE is a\n"
  "jostle result (.json) or Packomania text (.txt, which needs the instance).\n"
  "The radii must be the instance's: the one --n, --problem or --equal gives,\n"
  "else the built-in one a result's problem.name says (zimmermann-NN,\n"
  "equal-N); other results are checked with the radii they hold.\n"
  "Exit status 0 when legal (overlap and excess <= REL * R, default 1e-10),\n"
  "1 when not (or other radii), 2 on bad input.\n"
  "\n"
  "A trunk result (kind \"trunk\") is checked against its mesh instead: the\n"
  "mesh is reloaded and validated, and every block is tested against the\n"
  "triangles, for being inside, and against the other blocks (tolerance 1e-7\n"
  "of the mesh's bounding box diagonal; the circle options are refused).\n"
  "Other results (a scene's) are not packings: verify refuses them.\n";

/* The instance --n, --problem or --equal gives (one at most). */
static int jl_verify_instance(long n, long equal, const char *problem, jl_circles_problem *inst,
                              jl_error *err) {
  memset(inst, 0, sizeof *inst);
  if (n > 0) return jl_circles_problem_contest(inst, (int)n, err);
  if (equal > 0) return jl_circles_problem_equal(inst, (int)equal, err);
  if (problem) return jl_circles_problem_load(inst, problem, err);
  return JL_OK;
}

/* A trunk result against its mesh: 0 legal, 1 not, else the failure's status. */
static int jl_verify_trunk(const char *path) {
  jl_error err = {0};
  jl_trunk_verdict rep;
  if (jl_trunk_verify(path, &rep, &err) != JL_OK) return jl_cli_fail(&err);
  double bvol = rep.block[0] * rep.block[1] * rep.block[2];
  printf("%s: %s: %d blocks of %gx%gx%g mm = %.4g L in %s (mesh %.3f L, fill %.1f%%)\n", path,
         rep.legal ? "legal" : "NOT legal", rep.count, rep.block[0], rep.block[1], rep.block[2],
         rep.count * bvol / 1e6, rep.mesh, rep.mesh_volume_mm3 / 1e6,
         100.0 * rep.count * bvol / rep.mesh_volume_mm3);
  printf("%s: %s\n", path, rep.why);
  return rep.legal ? 0 : 1;
}

/* A kind for the terminal: printable ASCII only. */
static void jl_verify_kind_text(const char *kind, char *out, size_t cap) {
  size_t k = 0;
  for (; kind[k] && k + 1 < cap; ++k) out[k] = kind[k] >= 0x20 && kind[k] < 0x7f ? kind[k] : '?';
  out[k] = '\0';
}

int jl_cli_verify(int argc, char **argv) {
  static const struct option opts[] = {
    {"n", required_argument, NULL, 'n'},  {"problem", required_argument, NULL, 'p'},
    {"equal", required_argument, NULL, 'e'}, {"tol", required_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
  };
  jl_error err = {0};
  long n = 0, equal = 0;
  double tol = JL_CIRCLES_LEGAL_TOL;
  const char *problem = NULL;
  int c = -1, rc = JL_OK, tol_given = 0;
  jl_cli_opts o = {.opts = opts, .cmd = "verify"};
  optind = 1;
  while (rc == JL_OK && (c = jl_cli_next(&o, argc, argv, &err)) > 0) {
    switch (c) {
    case 'n': rc = jl_cli_int("--n", optarg, 1, 100000, &n, &err); break;
    case 'e': rc = jl_cli_int("--equal", optarg, 1, 100000, &equal, &err); break;
    case 'p': problem = optarg; break;
    case 't':
      rc = jl_cli_double("--tol", optarg, 0.0, 1.0, &tol, &err);
      tol_given = 1;
      break;
    case 'h': fputs(jl_verify_help, stdout); return 0;
    default: break;
    }
  }
  if (rc == JL_OK && c == 0) rc = err.code;
  if (rc != JL_OK) return jl_cli_fail(&err);
  int given = (n > 0) + (equal > 0) + (problem != NULL);
  if (given > 1) {
    jl_cli_error_set(&err, JL_ERR_INPUT, "give only one of --n, --problem and --equal");
    return jl_cli_fail(&err);
  }
  if (optind != argc - 1) {
    jl_cli_error_set(&err, JL_ERR_INPUT, "verify needs exactly one FILE (see jostle verify --help)");
    return jl_cli_fail(&err);
  }
  const char *path = argv[optind];
  char kind[32];
  jl_result_kind(path, kind, sizeof kind);
  if (strcmp(kind, "trunk") == 0) {
    if (given || tol_given) {
      jl_cli_error_set(&err, JL_ERR_INPUT,
                   "%s: a trunk result is checked against its mesh: --n, --problem, --equal and "
                   "--tol apply to circle results", path);
      return jl_cli_fail(&err);
    }
    return jl_verify_trunk(path);
  }
  if (kind[0] && strcmp(kind, "circles") != 0) {
    char shown[32];
    jl_verify_kind_text(kind, shown, sizeof shown);
    jl_cli_error_set(&err, JL_ERR_INPUT,
                 "%s: kind: verify checks \"circles\" and \"trunk\" results, this one is \"%s\"",
                 path, shown);
    return jl_cli_fail(&err);
  }
  jl_circles_problem inst = {0};
  jl_circles_verify_report rep;
  size_t len = strlen(path);
  int status = 0;
  if (!given && len >= 4 && strcmp(path + len - 4, ".txt") == 0)
    rc = jl_cli_error_set(&err, JL_ERR_INPUT,
                          "%s: Packomania text has no radii: give --n, --problem or --equal", path);
  if (rc == JL_OK) rc = jl_verify_instance(n, equal, problem, &inst, &err);
  if (rc == JL_OK) rc = jl_circles_verify_file(path, given ? &inst : NULL, tol, &rep, &err);
  if (rc != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  /* A packing of other circles is no packing of the instance, however legal. */
  if (!rep.same_radii) {
    printf("%s: NOT legal: %s\n", path, rep.why);
    status = 1;
    goto done;
  }
  const jl_circles_check *chk = &rep.check;
  printf("%s: %s: %d circles, R = %.15Lf, max overlap %.3Le (circles %d, %d), max excess %.3Le\n",
         path, chk->legal ? "legal" : "NOT legal", rep.n, chk->R, chk->max_overlap, chk->overlap_i,
         chk->overlap_j, chk->max_excess);
  if (rep.record > 0)
    printf("%s: record %.10f, gap %+.3e\n", path, rep.record, (double)(chk->R / rep.record - 1.0L));
  status = chk->legal ? 0 : 1;
done:
  jl_circles_problem_free(&inst);
  return status;
}
