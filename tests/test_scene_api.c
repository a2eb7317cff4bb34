/* The public scenes API (include/jostle/scene.h) against known answers:
 *   - free fall without contact: Moreau's midpoint step moves a body by
 *     dt v + dt^2 g / 2 per step, exact for constant acceleration, so after
 *     n steps x = x0 + v0 t + g t^2 / 2 and v = v0 + g t up to rounding;
 *   - a box resting on a plane stays put;
 *   - a box sliding on a plane with friction mu decelerates at mu g and
 *     stops after v0^2 / (2 mu g) (the scheme's Coulomb impulse is exact
 *     while it slides);
 *   - a scene file gives the bits of jl_scene_runner driven directly;
 *   - a run for files (open with overrides, start with records, advance,
 *     finish, the writers) gives the runner's per-step bits, totals that
 *     are those steps' and files that hold them; time limit and stop flag
 *     say what stopped it;
 *   - bad input gives JL_ERR_INPUT with a message naming the field.
 * Device "auto": the CPU here, the CUDA device where there is one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <jostle/scene.h>

#include "device.h"
#include "scene.h"
#include "scene_runner.h"

#define MAX_BODIES 8

static jl_scene_sim *make(const jl_scene_settings *s, const jl_scene_body *b, int n) {
  jl_scene_options o;
  jl_scene_options_default(&o);
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  int rc = jl_scene_sim_create(s, b, n, &o, &sim, &err);
  if (rc != JL_OK) fprintf(stderr, "create: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
  assert_non_null(sim);
  assert_int_equal(jl_scene_sim_body_count(sim), n);
  return sim;
}

static void step(jl_scene_sim *sim, long steps) {
  jl_error err = {0};
  int rc = jl_scene_sim_step(sim, steps, &err);
  if (rc != JL_OK) fprintf(stderr, "step: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
}

static void state(jl_scene_sim *sim, double *pos, double *vel) {
  jl_error err = {0};
  assert_int_equal(jl_scene_sim_positions(sim, pos, &err), JL_OK);
  assert_int_equal(jl_scene_sim_velocities(sim, vel, &err), JL_OK);
}

static jl_scene_body ground(void) {
  jl_scene_body p = {0};
  p.shape = JL_SCENE_PLANE;
  p.size[2] = 1.0;
  return p;
}

/* A plane far below (body 0: planes keep their number) and a spinning
 * sphere and a tilted box thrown upwards: 0.5 s without contact. */
static void test_free_fall(void **st) {
  (void)st;
  jl_scene_settings s;
  jl_scene_settings_default(&s);
  s.gravity[0] = 0.5; /* not along an axis */
  jl_scene_body b[3] = {ground(), {0}, {0}};
  b[0].position[2] = -100.0;
  b[1].shape = JL_SCENE_SPHERE;
  b[1].size[0] = 0.2;
  b[1].density = 500.0;
  const double x0[3] = {1.0, -2.0, 3.0}, v0[3] = {0.7, -0.3, 4.0};
  memcpy(b[1].position, x0, sizeof x0);
  memcpy(b[1].velocity, v0, sizeof v0);
  b[1].angular_velocity[0] = 3.0;
  b[2] = b[1];
  b[2].shape = JL_SCENE_BOX;
  b[2].size[1] = b[2].size[2] = 0.1;
  b[2].position[0] += 5.0;
  b[2].orientation[0] = 0.9;
  b[2].orientation[3] = 0.3;
  jl_scene_sim *sim = make(&s, b, 3);
  assert_true(jl_scene_sim_dt(sim) == 1e-3);
  const long n = 500;
  step(sim, n);
  assert_int_equal(jl_scene_sim_steps_done(sim), n);
  const double t = jl_scene_sim_time(sim);
  assert_true(fabs(t - 0.5) < 1e-12);
  double pos[3 * 3], vel[3 * 3];
  state(sim, pos, vel);
  for (int k = 1; k <= 2; ++k)
    for (int d = 0; d < 3; ++d) {
      double x = x0[d] + (k == 2 && d == 0 ? 5.0 : 0.0) + v0[d] * t + 0.5 * s.gravity[d] * t * t;
      double v = v0[d] + s.gravity[d] * t;
      assert_true(fabs(pos[3 * k + d] - x) < 1e-12);
      assert_true(fabs(vel[3 * k + d] - v) < 1e-12);
    }
  /* the plane has not moved */
  assert_true(pos[2] == -100.0 && vel[2] == 0.0);
  /* the sphere turned about x at 3 rad/s for 0.5 s: q = (cos 0.75, sin 0.75, 0, 0), up to
   * the first-order quaternion update's 1e-7 */
  double q[4 * 3];
  jl_error err = {0};
  assert_int_equal(jl_scene_sim_orientations(sim, q, &err), JL_OK);
  assert_true(q[0] == 1.0 && q[1] == 0.0);
  assert_true(fabs(q[4] - cos(0.75)) < 1e-6 && fabs(q[5] - sin(0.75)) < 1e-6);
  double w[3 * 3];
  assert_int_equal(jl_scene_sim_angular_velocities(sim, w, &err), JL_OK);
  assert_true(fabs(w[3] - 3.0) < 1e-12 && fabs(w[4]) < 1e-12 && fabs(w[5]) < 1e-12);
  jl_scene_sim_free(sim);
}

/* A box standing on the ground (gap 0) for 1 s. */
static void test_box_rests(void **st) {
  (void)st;
  jl_scene_body b[2] = {ground(), {0}};
  b[1].shape = JL_SCENE_BOX;
  b[1].size[0] = 0.2;
  b[1].size[1] = 0.3;
  b[1].size[2] = 0.1;
  b[1].position[0] = 0.4;
  b[1].position[2] = 0.1;
  b[1].density = 700.0;
  jl_scene_sim *sim = make(NULL, b, 2);
  step(sim, 1000);
  double pos[6], vel[6];
  state(sim, pos, vel);
  for (int d = 0; d < 3; ++d) {
    assert_true(fabs(pos[3 + d] - b[1].position[d]) < 1e-6);
    assert_true(fabs(vel[3 + d]) < 1e-6);
  }
  jl_scene_sim_free(sim);
}

/* A flat box sliding along x at v0 on the ground with friction mu: v(t) =
 * v0 - mu g t until it stops at t = v0 / (mu g), after v0^2 / (2 mu g). A
 * box, not a sphere: friction would make a sphere roll. */
static void test_box_slides(void **st) {
  (void)st;
  jl_scene_settings s;
  jl_scene_settings_default(&s);
  s.friction = 0.3;
  const double v0 = 2.0, g = -s.gravity[2], a = s.friction * g;
  jl_scene_body b[2] = {ground(), {0}};
  b[1].shape = JL_SCENE_BOX;
  b[1].size[0] = 0.2;
  b[1].size[1] = 0.2;
  b[1].size[2] = 0.05;
  b[1].position[2] = 0.05;
  b[1].velocity[0] = v0;
  b[1].density = 1000.0;
  jl_scene_sim *sim = make(&s, b, 2);
  double pos[6], vel[6];
  step(sim, 300);
  state(sim, pos, vel);
  double t = jl_scene_sim_time(sim);
  assert_true(fabs(vel[3] - (v0 - a * t)) < 1e-6);
  assert_true(fabs(pos[3] - (v0 * t - 0.5 * a * t * t)) < 1e-5);
  step(sim, 700); /* t = 1 s, past the stop at 0.68 s */
  state(sim, pos, vel);
  double stop = v0 * v0 / (2.0 * a);
  assert_true(fabs(pos[3] - stop) < 1e-5); /* the last step, mu g dt^2 = 3e-6, at most */
  assert_true(fabs(vel[3]) < 1e-6);
  assert_true(fabs(pos[4]) < 1e-9 && fabs(pos[5] - 0.05) < 1e-4);
  jl_scene_sim_free(sim);
}

/* problems/scenes/NAME (JL_SCENE_DIR: the folder, as meson gives it). */
static void scene_file(char *path, size_t cap, const char *name) {
  const char *dir = getenv("JL_SCENE_DIR");
  snprintf(path, cap, "%s/%s", dir ? dir : "problems/scenes", name);
}

static void demo_path(char *path, size_t cap) { scene_file(path, cap, "demo-drop.json"); }

/* problems/scenes/demo-drop.json through the API and through jl_scene_runner
 * on the same device: the same bits after 100 steps. */
static void test_load_is_the_runner(void **st) {
  (void)st;
  char path[1024];
  demo_path(path, sizeof path);
  jl_scene_options o;
  jl_scene_options_default(&o);
  o.threads = 2;
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  int rc = jl_scene_sim_load(path, &o, &sim, &err);
  if (rc) fprintf(stderr, "load: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
  step(sim, 60);
  step(sim, 40);
  assert_int_equal(jl_scene_sim_steps_done(sim), 100);

  jl_scene s;
  assert_int_equal(jl_scene_load(&s, path, &err), JL_OK);
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "auto", 2, NULL, &err), JL_OK);
  assert_string_equal(jl_scene_sim_device_name(sim), dev.name);
  jl_scene_runner r;
  assert_int_equal(jl_scene_runner_init(&r, &s, &dev, &err), JL_OK);
  for (int i = 0; i < 100; ++i) {
    jl_scene_run_stats ss;
    assert_int_equal(jl_scene_runner_step(&r, &ss, &err), JL_OK);
  }
  assert_int_equal(jl_scene_runner_fetch(&r, &err), JL_OK);
  int n = jl_scene_sim_body_count(sim);
  assert_int_equal(n, s.bodies.count);
  assert_int_equal(n, 22); /* 4 bodies (the plane first) and a grid of 18 */
  assert_true(jl_scene_sim_time(sim) == r.time);
  double *x = malloc(4 * sizeof(double) * (size_t)n);
  assert_non_null(x);
  assert_int_equal(jl_scene_sim_positions(sim, x, &err), JL_OK);
  assert_memory_equal(x, s.bodies.pos, 3 * sizeof(double) * (size_t)n);
  assert_int_equal(jl_scene_sim_orientations(sim, x, &err), JL_OK);
  assert_memory_equal(x, s.bodies.quat, 4 * sizeof(double) * (size_t)n);
  assert_int_equal(jl_scene_sim_velocities(sim, x, &err), JL_OK);
  assert_memory_equal(x, s.bodies.vel, 3 * sizeof(double) * (size_t)n);
  assert_int_equal(jl_scene_sim_angular_velocities(sim, x, &err), JL_OK);
  assert_memory_equal(x, s.bodies.omega, 3 * sizeof(double) * (size_t)n);
  /* the bodies have moved: the sphere thrown at -1 m/s along x */
  assert_true(s.bodies.pos[3 * 3] < 0.9 - 0.1);
  free(x);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
  jl_scene_sim_free(sim);
}

/* The stop flag, set before a call: no step is taken. */
static void test_stop_flag(void **st) {
  (void)st;
  jl_scene_body b[2] = {ground(), {0}};
  b[1].shape = JL_SCENE_SPHERE;
  b[1].size[0] = 0.5;
  b[1].position[2] = 2.0;
  b[1].density = 1.0;
  volatile sig_atomic_t stop = 0;
  jl_scene_options o;
  jl_scene_options_default(&o);
  o.stop = &stop;
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  assert_int_equal(jl_scene_sim_create(NULL, b, 2, &o, &sim, &err), JL_OK);
  assert_int_equal(jl_scene_sim_step(sim, 5, &err), JL_OK);
  assert_int_equal(jl_scene_sim_steps_done(sim), 5);
  stop = 1;
  assert_int_equal(jl_scene_sim_step(sim, 5, &err), JL_OK);
  assert_int_equal(jl_scene_sim_steps_done(sim), 5);
  jl_scene_sim_free(sim);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* demo-drop with the CLI's overrides against the runner driven directly
 * with the same settings: per-step stats, totals and the files. */
static void test_run_for_files(void **st) {
  (void)st;
  char path[1024];
  demo_path(path, sizeof path);
  jl_scene_options o;
  jl_scene_options_default(&o);
  o.device = "cpu";
  o.threads = 2;
  o.steps = 160;
  o.solver = "jor";
  o.iterations = 30;
  o.matrix_free = 1;
  o.body_order = "given";
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  int rc = jl_scene_sim_open(path, &o, &sim, &err);
  if (rc) fprintf(stderr, "open: %s\n", err.msg);
  assert_int_equal(rc, JL_OK);
  jl_scene_info in;
  jl_scene_sim_info(sim, &in);
  assert_string_equal(in.name, "demo-drop");
  assert_int_equal(in.bodies, 22);
  assert_int_equal(in.dynamic_bodies, 21);
  assert_int_equal(in.steps, 160);
  assert_string_equal(in.solver, "jor");
  assert_int_equal(in.matrix_free, 1);
  assert_int_equal(in.on_cuda, 0);
  assert_int_equal(in.ordered, 0);
  assert_true(in.body_extent > 0.0);
  /* a step is refused before the start */
  jl_scene_step_stats ss;
  assert_int_equal(jl_scene_sim_advance(sim, &ss, &err), JL_ERR_INPUT);
  int fclib = jl_scene_fclib_available();
  jl_scene_record rec;
  jl_scene_record_default(&rec);
  rec.csv = rec.glb = 1;
  rec.glb_every = 7;
  rec.fclib = fclib;
  rec.fclib_step = 150;
  assert_int_equal(jl_scene_sim_start(sim, &rec, &err), JL_OK);
  assert_int_equal(jl_scene_sim_start(sim, &rec, &err), JL_ERR_INPUT);

  jl_scene s;
  assert_int_equal(jl_scene_load(&s, path, &err), JL_OK);
  jl_prox_opts_set_kind(&s.solver, JL_SOLVER_JOR);
  s.solver.max_iter = 30;
  s.solver.matrix_free = 1;
  s.body_order = JL_BODY_ORDER_GIVEN;
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cpu", 2, NULL, &err), JL_OK);
  jl_scene_runner r;
  assert_int_equal(jl_scene_runner_init(&r, &s, &dev, &err), JL_OK);
  char tmp[] = "/tmp/jl_scene_run_XXXXXX";
  int fd = mkstemp(tmp);
  assert_true(fd >= 0);
  close(fd);
  double contacts = 0.0, pen = 0.0;
  int contacts_max = 0;
  for (int i = 1; i <= 160; ++i) {
    jl_scene_run_stats rs;
    assert_int_equal(jl_scene_sim_advance(sim, &ss, &err), JL_OK);
    assert_int_equal(jl_scene_runner_step(&r, &rs, &err), JL_OK);
    double ke, pe;
    assert_int_equal(jl_scene_runner_energy(&r, &ke, &pe, &err), JL_OK);
    assert_int_equal(ss.step, i);
    assert_int_equal(ss.contacts, rs.contacts);
    assert_int_equal(ss.iterations, rs.iterations);
    assert_true(ss.residual == rs.residual);
    assert_true(ss.max_penetration == rs.max_penetration);
    assert_true(ss.kinetic == ke && ss.potential == pe);
    assert_int_equal(ss.diverged, 0);
    assert_int_equal(ss.fclib_ready, fclib && i == 150);
    if (ss.fclib_ready) {
      rc = jl_scene_sim_write_fclib(sim, tmp, &err);
      if (rc) fprintf(stderr, "fclib: %s\n", err.msg);
      assert_int_equal(rc, JL_OK);
      assert_memory_equal(slurp(tmp), "\x89HDF", 4);
    }
    contacts += rs.contacts;
    if (rs.contacts > contacts_max) contacts_max = rs.contacts;
    if (rs.max_penetration > pen) pen = rs.max_penetration;
  }
  assert_true(contacts > 0);
  /* the kept problem is the kept step's only */
  assert_int_equal(jl_scene_sim_write_fclib(sim, tmp, &err), JL_ERR_INPUT);
  jl_scene_summary sum;
  assert_int_equal(jl_scene_sim_finish(sim, &sum, &err), JL_OK);
  assert_int_equal(sum.steps, 160);
  assert_true(sum.contacts_mean == contacts / 160.0);
  assert_int_equal(sum.contacts_max, contacts_max);
  assert_true(sum.penetration_max == pen);
  assert_string_equal(sum.stopped_by, "steps");
  assert_int_equal(sum.fclib_kept, fclib);
  assert_true(sum.time == 160 * in.dt);
  assert_int_equal(jl_scene_sim_advance(sim, &ss, &err), JL_ERR_INPUT);

  assert_int_equal(jl_scene_sim_write_csv(sim, tmp, &err), JL_OK);
  char *csv = slurp(tmp);
  assert_memory_equal(csv, "step,time,kinetic,potential,contacts,iterations,residual,max_penetration\n0,0,", 77);
  int lines = 0;
  for (char *c = csv; *c; ++c) lines += *c == '\n';
  assert_int_equal(lines, 162);
  assert_non_null(strstr(csv, "\n160,0.32,"));
  assert_int_equal(jl_scene_sim_write_glb(sim, tmp, &err), JL_OK);
  assert_memory_equal(slurp(tmp), "glTF", 4);
  assert_int_equal(jl_scene_sim_write_result(sim, tmp, "x/drop.json", &err), JL_OK);
  char *res = slurp(tmp);
  assert_non_null(strstr(res, "\"file\": \"x/drop.json\""));
  assert_non_null(strstr(res, "\"steps_requested\": 160"));
  assert_non_null(strstr(res, "\"method\": \"jor\""));
  assert_non_null(strstr(res, "\"max_iterations\": 30"));
  assert_non_null(strstr(res, "\"steps\": 160, "));
  assert_non_null(strstr(res, "\"stopped_by\": \"steps\""));
  /* the final state: the runner's bodies */
  assert_int_equal(jl_scene_runner_fetch(&r, &err), JL_OK);
  double x[3 * 22];
  assert_int_equal(jl_scene_sim_positions(sim, x, &err), JL_OK);
  assert_memory_equal(x, s.bodies.pos, sizeof x);
  remove(tmp);
  jl_scene_runner_free(&r);
  jl_scene_free(&s);
  jl_scene_sim_free(sim);
}

/* What stopped a run: the time limit (no step starts), the stop flag. */
static void test_run_stopped(void **st) {
  (void)st;
  char path[1024];
  demo_path(path, sizeof path);
  jl_scene_options o;
  jl_scene_options_default(&o);
  o.threads = 2;
  o.time_limit = 1e-9;
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  jl_scene_summary sum;
  assert_int_equal(jl_scene_sim_load(path, &o, &sim, &err), JL_OK);
  assert_int_equal(jl_scene_sim_step(sim, 5, &err), JL_OK);
  assert_int_equal(jl_scene_sim_steps_done(sim), 0);
  assert_int_equal(jl_scene_sim_finish(sim, &sum, &err), JL_OK);
  assert_string_equal(sum.stopped_by, "time");
  assert_int_equal(sum.steps, 0);
  jl_scene_sim_free(sim);

  volatile sig_atomic_t stop = 0;
  o.time_limit = 0.0;
  o.stop = &stop;
  assert_int_equal(jl_scene_sim_load(path, &o, &sim, &err), JL_OK);
  assert_int_equal(jl_scene_sim_step(sim, 3, &err), JL_OK);
  stop = 1;
  assert_int_equal(jl_scene_sim_finish(sim, &sum, &err), JL_OK);
  assert_string_equal(sum.stopped_by, "signal");
  assert_int_equal(sum.steps, 3);
  jl_scene_sim_free(sim);

  /* bad overrides and records name their field */
  const char *field[] = {"options.solver", "options.body_order", "options.steps", "options.matrix_free"};
  for (int k = 0; k < 4; ++k) {
    jl_scene_options_default(&o);
    if (k == 0) o.solver = "gauss";
    if (k == 1) o.body_order = "zig";
    if (k == 2) o.steps = -1;
    if (k == 3) o.matrix_free = 2;
    assert_int_equal(jl_scene_sim_open(path, &o, &sim, &err), JL_ERR_INPUT);
    assert_null(sim);
    assert_non_null(strstr(err.msg, field[k]));
  }
  jl_scene_options_default(&o);
  o.steps = 10;
  assert_int_equal(jl_scene_sim_open(path, &o, &sim, &err), JL_OK);
  jl_scene_record rec;
  jl_scene_record_default(&rec);
  rec.fclib = 1;
  rec.fclib_step = 11;
  assert_int_equal(jl_scene_sim_start(sim, &rec, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "record.fclib"));
  jl_scene_sim_free(sim);
}

typedef struct bad_case {
  const char *msg;         /* a part of the message */
  int code;
} bad_case;

/* Creates with body 1 changed by which; expects code and msg. */
static void expect_bad(const jl_scene_settings *s, const jl_scene_body *b, int n,
                       const jl_scene_options *o, bad_case want) {
  jl_scene_sim *sim = (jl_scene_sim *)&want; /* must come back NULL */
  jl_error err = {0};
  int rc = jl_scene_sim_create(s, b, n, o, &sim, &err);
  if (rc != want.code || !strstr(err.msg, want.msg))
    fprintf(stderr, "expected %d \"%s\", got %d \"%s\"\n", want.code, want.msg, rc, err.msg);
  assert_int_equal(rc, want.code);
  assert_int_equal(err.code, want.code);
  assert_non_null(strstr(err.msg, want.msg));
  assert_null(sim);
}

/* JOR at 100 iterations on the 1000-brick wall diverges (step 64) until
 * the bodies' state is not finite: jl_scene_sim_step returns with the steps
 * done, the run ends as "diverged", and a further step is refused. */
static void test_blow_up_ends_the_run(void **st) {
  (void)st;
  char path[1024];
  scene_file(path, sizeof path, "tasora-wall-1000.json");
  jl_scene_options o;
  jl_scene_options_default(&o);
  o.device = "cpu";
  o.threads = 2;
  o.solver = "jor";
  o.steps = 200;
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  assert_int_equal(jl_scene_sim_load(path, &o, &sim, &err), JL_OK);
  assert_int_equal(jl_scene_sim_step(sim, 200, &err), JL_OK);
  long done = jl_scene_sim_steps_done(sim);
  assert_true(done >= 64 && done < 200);
  int n = jl_scene_sim_body_count(sim), finite = 1;
  double *x = malloc(4 * sizeof(double) * (size_t)n);
  assert_non_null(x);
  int (*get[4])(jl_scene_sim *, double *, jl_error *) = {
    jl_scene_sim_positions, jl_scene_sim_velocities, jl_scene_sim_angular_velocities,
    jl_scene_sim_orientations};
  for (int g = 0; g < 4; ++g) {
    assert_int_equal(get[g](sim, x, &err), JL_OK);
    for (int k = 0; k < (g == 3 ? 4 : 3) * n; ++k) finite &= isfinite(x[k]) != 0;
  }
  assert_false(finite);
  jl_scene_step_stats ss;
  assert_int_equal(jl_scene_sim_advance(sim, &ss, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "not finite"));
  jl_scene_summary sum;
  assert_int_equal(jl_scene_sim_finish(sim, &sum, &err), JL_OK);
  assert_string_equal(sum.stopped_by, "diverged");
  assert_true(sum.diverged_step >= 1 && sum.diverged_step <= done);
  free(x);
  jl_scene_sim_free(sim);
}

static void test_bad_input(void **st) {
  (void)st;
  jl_scene_settings s0;
  jl_scene_settings_default(&s0);
  jl_scene_options o0;
  jl_scene_options_default(&o0);
  jl_scene_body b0[3] = {ground(), {0}, {0}};
  b0[1].shape = JL_SCENE_SPHERE;
  b0[1].size[0] = 0.5;
  b0[1].position[2] = 2.0;
  b0[1].density = 1000.0;
  b0[2] = b0[1];
  b0[2].shape = JL_SCENE_BOX;
  b0[2].size[1] = b0[2].size[2] = 0.5;
  b0[2].position[0] = 3.0;

  jl_scene_body b[3];
#define BODY(k, field, value, text)                                                               \
  do {                                                                                            \
    memcpy(b, b0, sizeof b);                                                                      \
    b[k].field = value;                                                                           \
    expect_bad(&s0, b, 3, &o0, (bad_case){text, JL_ERR_INPUT});                                   \
  } while (0)
  BODY(1, size[0], 0.0, "bodies[1].size[0]: must be > 0");
  BODY(2, size[2], -1.0, "bodies[2].size[2]: must be > 0");
  BODY(2, size[1], 1e13, "bodies[2].size[1]: must be in [1e-09, 1e+12], got 1e+13");
  BODY(1, shape, (jl_scene_shape)7, "bodies[1].shape: expected JL_SCENE_SPHERE");
  BODY(2, position[1], NAN, "bodies[2].position[1]: must be finite");
  BODY(1, velocity[2], INFINITY, "bodies[1].velocity[2]: must be finite");
  BODY(1, angular_velocity[0], -2e12, "bodies[1].angular_velocity[0]: must be in");
  BODY(2, orientation[0], 1e-13, "bodies[2].orientation: too close to the zero quaternion");
  BODY(1, density, -5.0, "bodies[1].density: must be 0 (static) or > 0, got -5");
  BODY(1, density, 1e-12, "bodies[1].density: must be in [1e-09, 1e+12]");
  BODY(0, size[2], 0.0, "bodies[0].size: a plane's normal must not be zero");
  BODY(0, density, 1.0, "bodies[0].density: a plane is static");
#undef BODY
  memcpy(b, b0, sizeof b);
  b[1].density = b[2].density = 0.0;
  expect_bad(&s0, b, 3, &o0, (bad_case){"bodies: no dynamic body", JL_ERR_INPUT});
  expect_bad(&s0, b0, 0, &o0, (bad_case){"bodies: 0 given", JL_ERR_INPUT});
  expect_bad(&s0, NULL, 3, &o0, (bad_case){"bodies: 3 given as NULL", JL_ERR_INPUT});

  jl_scene_settings s;
#define SETTING(field, value, text)                                                               \
  do {                                                                                            \
    s = s0;                                                                                       \
    s.field = value;                                                                              \
    expect_bad(&s, b0, 3, &o0, (bad_case){text, JL_ERR_INPUT});                                   \
  } while (0)
  SETTING(dt, 0.0, "settings.dt: must be > 0, got 0");
  SETTING(dt, 11.0, "settings.dt: must be in [1e-09, 10], got 11");
  SETTING(gravity[1], NAN, "settings.gravity[1]: must be finite");
  SETTING(friction, -0.1, "settings.friction: must be in [0, 1e+06], got -0.1");
  SETTING(restitution, 1.5, "settings.restitution: must be in [0, 1], got 1.5");
  SETTING(solver, "gauss", "settings.solver: expected \"sor\", \"jor\" or \"apgd\", got \"gauss\"");
  SETTING(iterations, -1, "settings.iterations: must be in [0, 100000000], got -1");
#undef SETTING

  jl_scene_options o = o0;
  o.device = "tpu";
  expect_bad(&s0, b0, 3, &o, (bad_case){"options.device: expected \"auto\", \"cpu\" or \"cuda\"", JL_ERR_INPUT});
  o = o0;
  o.threads = -1;
  expect_bad(&s0, b0, 3, &o, (bad_case){"options.threads: must be >= 0", JL_ERR_INPUT});
  if (jl_device_cuda_count() == 0) {
    o = o0;
    o.device = "cuda";
    expect_bad(&s0, b0, 3, &o, (bad_case){"", JL_ERR_DEVICE});
  }

  /* the other solvers and an iteration cap are taken */
  s = s0;
  s.solver = "apgd";
  s.iterations = 50;
  jl_scene_sim *sim = make(&s, b0, 3);
  jl_error err = {0};
  assert_int_equal(jl_scene_sim_step(sim, -1, &err), JL_ERR_INPUT);
  assert_non_null(strstr(err.msg, "steps: must be >= 0"));
  assert_int_equal(jl_scene_sim_positions(sim, NULL, &err), JL_ERR_INPUT);
  step(sim, 0);
  assert_int_equal(jl_scene_sim_steps_done(sim), 0);
  jl_scene_sim_free(sim);
  jl_scene_sim_free(NULL);
}

/* A scene file with a bad field: the file's message, no handle. */
static void test_bad_file(void **st) {
  (void)st;
  char path[] = "/tmp/jl_scene_api_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs("{\"dt\": 0.001, \"bodies\": [{\"shape\": \"sphere\", \"radius\": -1}]}\n", f);
  fclose(f);
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  assert_int_equal(jl_scene_sim_load(path, NULL, &sim, &err), JL_ERR_INPUT);
  assert_null(sim);
  assert_non_null(strstr(err.msg, path));
  assert_non_null(strstr(err.msg, "bodies[0].radius"));
  remove(path);
  assert_int_not_equal(jl_scene_sim_load(path, NULL, &sim, &err), JL_OK);
  assert_null(sim);
  assert_non_null(strstr(err.msg, path));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_free_fall),
    cmocka_unit_test(test_box_rests),
    cmocka_unit_test(test_box_slides),
    cmocka_unit_test(test_load_is_the_runner),
    cmocka_unit_test(test_stop_flag),
    cmocka_unit_test(test_run_for_files),
    cmocka_unit_test(test_run_stopped),
    cmocka_unit_test(test_blow_up_ends_the_run),
    cmocka_unit_test(test_bad_input),
    cmocka_unit_test(test_bad_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
