/* Measures a trunk mesh in liters (200 x 100 x 50 mm blocks, DIN 70020 /
 * ISO 3832); only the public API and pkg-config:
 *
 *   cc trunk_volume.c $(pkg-config --cflags --libs jostle) -o trunk_volume
 *   ./trunk_volume trunk.stl 20     # 20 seconds; Ctrl-C stops with the best so far */
#define _POSIX_C_SOURCE 200809L
#include <jostle/jostle.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop_flag = 0;

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: trunk_volume MESH [SECONDS]\n");
    return 2;
  }
  jl_trunk_options opt;
  jl_trunk_options_default(&opt);
  opt.time_s = argc > 2 ? atof(argv[2]) : 20.0;
  opt.stop = &stop_flag;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);

  jl_trunk_result res;
  jl_error err = {0};
  if (jl_trunk_volume(argv[1], &opt, &res, &err) != JL_OK) {
    fprintf(stderr, "trunk_volume: %s\n", err.msg);
    return err.code;
  }
  printf("%d blocks = %d L (mesh %.3f L, bound %d)\n", res.count, res.count, res.mesh_volume_l, res.upper_bound);
  printf("baseline %d (grid), reachable %.3f L, deepest into the surface %.3g mm, into another block %.3g mm, "
         "%.1f s on %s\n", res.baseline, res.reachable_l, res.max_penetration_mm, res.max_overlap_mm, res.time_s,
         res.device_name);
  jl_trunk_result_free(&res);
  return 0;
}
