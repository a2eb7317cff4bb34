/* jostle: packing by contact simulation on the GPU (and its CPU twin). */
#include <stdio.h>
#include <string.h>

#include <jostle/jostle.h>

#include "cli.h"

static void jl_usage(FILE *f) {
  fprintf(f,
          "usage: jostle <command> [options]\n"
          "\n"
          "commands:\n"
          "  circles   pack circles into the smallest enclosing circle\n"
          "  verify    check a packing with exact geometry (long double)\n"
          "  bench     measure relaxation throughput (CPU twin or CUDA)\n"
          "  version   print the version and the build's devices\n"
          "  trunk     trunk volume in liters from a CAD mesh (DIN 70020 blocks)\n"
          "  scene     rigid-body scene with friction and impacts (CPU reference path)\n"
          "\n"
          "'jostle <command> --help' describes each command.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    jl_usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    jl_usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    printf("jostle %s\n", JL_VERSION);
#ifdef JL_HAVE_CUDA
    printf("built with CUDA kernels (CPU twin always available)\n");
#else
    printf("built without CUDA (CPU twin only)\n");
#endif
    return 0;
  }
  if (strcmp(cmd, "circles") == 0) return jl_cli_circles(argc - 1, argv + 1);
  if (strcmp(cmd, "trunk") == 0) return jl_cli_trunk(argc - 1, argv + 1);
  /* only the searches run as islands: K copies of another command would
   * do the same work K times and write the same files */
  int ranks = jl_launcher_ranks();
  if (ranks > 1 && (strcmp(cmd, "verify") == 0 || strcmp(cmd, "bench") == 0 || strcmp(cmd, "scene") == 0)) {
    fprintf(stderr, "jostle: %s: started by an MPI launcher with %d ranks; only circles and trunk "
                    "run over ranks (islands): run it as one process\n", cmd, ranks);
    return 2;
  }
  if (strcmp(cmd, "verify") == 0) return jl_cli_verify(argc - 1, argv + 1);
  if (strcmp(cmd, "bench") == 0) return jl_cli_bench(argc - 1, argv + 1);
  if (strcmp(cmd, "scene") == 0) return jl_cli_scene(argc - 1, argv + 1);
  fprintf(stderr, "jostle: unknown command '%s'\n\n", cmd);
  jl_usage(stderr);
  return 2;
}
