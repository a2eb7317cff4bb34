/* Drops a sphere from 1 m onto a ground plane and steps one second, or runs
 * a scene file for one second; prints where the bodies are. Only the public
 * API and pkg-config:
 *
 *   cc scene_drop.c $(pkg-config --cflags --libs jostle) -lm -o scene_drop
 *   ./scene_drop                 # the sphere, against the analytic answer
 *   ./scene_drop SCENE.json      # a scene file */
#include <jostle/jostle.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  jl_scene_options opt;
  jl_scene_options_default(&opt);
  opt.device = "cpu";  /* the same answer on every machine */
  jl_scene_settings set;
  jl_scene_settings_default(&set);
  const double r = 0.1, h = 1.0, g = -set.gravity[2];

  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  int rc;
  if (argc > 1) {
    rc = jl_scene_sim_load(argv[1], &opt, &sim, &err);
  } else {
    jl_scene_body bodies[2] = {{0}};
    bodies[0].shape = JL_SCENE_PLANE;      /* the ground z = 0, normal +z */
    bodies[0].size[2] = 1.0;
    bodies[1].shape = JL_SCENE_SPHERE;     /* its lowest point 1 m up */
    bodies[1].size[0] = r;
    bodies[1].position[2] = h + r;
    bodies[1].density = 1000.0;
    rc = jl_scene_sim_create(&set, bodies, 2, &opt, &sim, &err);
  }
  if (rc != JL_OK) {
    fprintf(stderr, "scene_drop: %s\n", err.msg);
    return rc;
  }
  long steps = lround(1.0 / jl_scene_sim_dt(sim));  /* one second */
  if ((rc = jl_scene_sim_step(sim, steps, &err)) != JL_OK) goto fail;

  int n = jl_scene_sim_body_count(sim);
  double *pos = malloc(3 * sizeof(double) * (size_t)n), *vel = malloc(3 * sizeof(double) * (size_t)n);
  if (!pos || !vel) {
    free(pos);
    free(vel);
    jl_scene_sim_free(sim);
    return 5;
  }
  if ((rc = jl_scene_sim_positions(sim, pos, &err)) != JL_OK ||
      (rc = jl_scene_sim_velocities(sim, vel, &err)) != JL_OK) {
    free(pos);
    free(vel);
    goto fail;
  }
  printf("jostle %s: %d bodies, %ld steps, t = %.6f s on %s\n", jl_version(), n,
         jl_scene_sim_steps_done(sim), jl_scene_sim_time(sim), jl_scene_sim_device_name(sim));
  if (argc > 1) {
    for (int k = 0; k < n; ++k)
      printf("%3d  at (%10.6f, %10.6f, %10.6f)\n", k, pos[3 * k], pos[3 * k + 1], pos[3 * k + 2]);
  } else {
    /* It falls freely to the ground (t = sqrt(2 h / g)) at v = sqrt(2 g h)
     * and, with restitution 0, rests there: centre at r. The midpoint
     * scheme closes the contact at a step's mid-point and then cancels the
     * normal velocity, so the sphere rests up to one step's fall, v dt,
     * below r (it keeps that penetration: no position correction). */
    double t_hit = sqrt(2.0 * h / g), v_hit = sqrt(2.0 * g * h);
    printf("sphere: height %.6f m (expected %.6f to %.6f: lands at t = %.4f s at %.4f m/s and "
           "rests), velocity %.6f m/s\n",
           pos[3 * 1 + 2], r - v_hit * jl_scene_sim_dt(sim), r, t_hit, v_hit, vel[3 * 1 + 2]);
  }
  free(pos);
  free(vel);
  jl_scene_sim_free(sim);
  return 0;
fail:
  fprintf(stderr, "scene_drop: %s\n", err.msg);
  jl_scene_sim_free(sim);
  return rc;
}
