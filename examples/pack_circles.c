/* Packs circles of radii 1..n (the contest instance) and prints R against
 * the record; only the public API and pkg-config:
 *
 *   cc pack_circles.c $(pkg-config --cflags --libs jostle) -o pack_circles
 *   ./pack_circles 10 5        # n = 10 circles, 5 seconds */
#include <jostle/jostle.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  jl_circles_options opt;
  jl_circles_options_default(&opt);
  opt.time_s = argc > 2 ? atof(argv[2]) : 5.0;
  opt.target_R = jl_circles_record(n) * (1 + 1e-9);  /* stop at the record */
  double *radii = malloc((size_t)(n > 0 ? n : 1) * sizeof *radii);
  if (!radii) return 1;
  for (int i = 0; i < n; ++i) radii[i] = i + 1;

  jl_circles_result res;
  jl_error err = {0};
  if (jl_circles_pack(radii, n, &opt, &res, &err) != JL_OK) {
    fprintf(stderr, "pack_circles: %s\n", err.msg);
    free(radii);
    return err.code;
  }
  printf("jostle %s: %d circles in R = %.10f (record %.10f) on %s\n", jl_version(), res.n, res.R,
         res.best_known_R, res.device_name);
  for (int i = 0; i < res.n; ++i) printf("%3d  r %6.2f  at (%12.6f, %12.6f)\n", i, res.r[i], res.x[i], res.y[i]);
  jl_circles_result_free(&res);
  free(radii);
  return 0;
}
