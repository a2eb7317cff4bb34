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

/* The instance the packing must match: the options' (given), else the
 * built-in one the result's stored name says; *have is 0 when neither. */
static int jl_verify_instance(long n, long equal, const char *problem, const char *stored_name,
                              jl_circle_problem *inst, int *have, jl_error *err) {
  int rc = JL_OK;
  memset(inst, 0, sizeof *inst);
  if (n > 0) rc = jl_circle_problem_zimmermann(inst, (int)n, err);
  else if (equal > 0) rc = jl_circle_problem_equal(inst, (int)equal, err);
  else if (problem) rc = jl_circle_problem_load(inst, problem, err);
  else if (stored_name) rc = jl_circle_problem_builtin(inst, stored_name, err);
  *have = rc == JL_OK && inst->n > 0;
  return rc;
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
  double tol = JL_LEGAL_REL_TOL;
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
    jl_error_set(&err, JL_ERR_INPUT, "give only one of --n, --problem and --equal");
    return jl_cli_fail(&err);
  }
  if (optind != argc - 1) {
    jl_error_set(&err, JL_ERR_INPUT, "verify needs exactly one FILE (see jostle verify --help)");
    return jl_cli_fail(&err);
  }
  const char *path = argv[optind];
  char kind[32];
  jl_result_kind(path, kind, sizeof kind);
  if (strcmp(kind, "trunk") == 0) {
    if (given || tol_given) {
      jl_error_set(&err, JL_ERR_INPUT,
                   "%s: a trunk result is checked against its mesh: --n, --problem, --equal and "
                   "--tol apply to circle results", path);
      return jl_cli_fail(&err);
    }
    return jl_cli_verify_trunk(path);
  }
  if (kind[0] && strcmp(kind, "circles") != 0) {
    char shown[32];
    jl_verify_kind_text(kind, shown, sizeof shown);
    jl_error_set(&err, JL_ERR_INPUT,
                 "%s: kind: verify checks \"circles\" and \"trunk\" results, this one is \"%s\"",
                 path, shown);
    return jl_cli_fail(&err);
  }
  jl_circle_problem prob = {0}, inst = {0};
  jl_circle_packing pk = {0};
  size_t len = strlen(path);
  int status = 0, have_inst = 0;
  if (len >= 4 && strcmp(path + len - 4, ".txt") == 0) {
    if (!given)
      rc = jl_error_set(&err, JL_ERR_INPUT,
                        "%s: Packomania text has no radii: give --n, --problem or --equal", path);
    if (rc == JL_OK) rc = jl_verify_instance(n, equal, problem, NULL, &inst, &have_inst, &err);
    if (rc == JL_OK) rc = jl_circle_read_packomania(path, &inst, &pk, &err);
  } else {
    rc = jl_circle_result_read_json(path, &pk, &prob, &err);
    if (rc == JL_OK) rc = jl_verify_instance(n, equal, problem, prob.name, &inst, &have_inst, &err);
  }
  if (rc != JL_OK) {
    status = jl_cli_fail(&err);
    goto done;
  }
  /* A packing of other circles is no packing of the instance, however legal. */
  if (have_inst && jl_circle_check_instance(&pk, &inst, path, JL_ERR_NOT_LEGAL, &err) != JL_OK) {
    size_t skip = strncmp(err.msg, path, len) == 0 && strncmp(err.msg + len, ": ", 2) == 0 ? len + 2 : 0;
    printf("%s: NOT legal: %s\n", path, err.msg + skip);
    status = 1;
    goto done;
  }
  jl_circle_check chk;
  jl_circle_check_packing(&pk, tol, &chk);
  printf("%s: %s: %d circles, R = %.15Lf, max overlap %.3Le (circles %d, %d), max excess %.3Le\n",
         path, chk.legal ? "legal" : "NOT legal", pk.n, chk.R, chk.max_overlap, chk.overlap_i,
         chk.overlap_j, chk.max_excess);
  double record = have_inst ? inst.best_known_R : prob.best_known_R;
  if (record > 0)
    printf("%s: record %.10f, gap %+.3e\n", path, record, (double)(chk.R / record - 1.0L));
  status = chk.legal ? 0 : 1;
done:
  jl_circle_packing_free(&pk);
  jl_circle_problem_free(&prob);
  jl_circle_problem_free(&inst);
  return status;
}
