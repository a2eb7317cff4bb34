/* Scenes for the twin and GPU tests of the scene pipeline: a cluster of
 * overlapping spheres and rotated boxes (every shape pair, face and edge
 * contacts), resting on a plane and on a large static box (kept out of the
 * grid), with a wall plane and static spheres (static pairs excluded). */
#ifndef JL_SCENE_FIXTURES_H
#define JL_SCENE_FIXTURES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "contact_setup.h"
#include "integrate.h"
#include "setup_math.h"
#include "scene.h"

static inline double fx_uniform(uint64_t *s) {
  /* splitmix64: a fixed sequence, the same on every machine */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* side^3 dynamic bodies on a jittered lattice of spacing 0.9 (spheres r 0.5
 * and boxes of half extents 0.4, 0.3, 0.35 alternating, random orientations
 * and velocities); returns 0 or -1. */
static inline int fx_mixed_scene(jl_scene *s, int side, uint64_t seed, int with_planes, int with_large) {
  jl_error err = {0};
  if (jl_scene_init(s, &err) != JL_OK) return -1;
  jl_body_spec b;
  jl_body_spec_default(&b);
  uint64_t r = seed;
  if (with_planes) {
    double p0[3] = {0, 0, 0}, nz[3] = {0, 0, 1};
    if (jl_scene_add_plane(s, p0, nz, 0, &err) < 0) return -1;
    double p1[3] = {-0.3, 0, 0}, nx[3] = {1, 0, 0};
    if (jl_scene_add_plane(s, p1, nx, 0, &err) < 0) return -1;
  }
  if (with_large) {
    b.shape = JL_SHAPE_BOX;
    b.is_static = 1;
    b.size[0] = 30.0;
    b.size[1] = 30.0;
    b.size[2] = 0.5;
    b.pos[0] = 5.0;
    b.pos[1] = 5.0;
    b.pos[2] = -0.45;
    if (jl_scene_add_body(s, &b, &err) < 0) return -1;
    /* static spheres touching the large box: static pairs, never reported */
    for (int k = 0; k < 3; ++k) {
      jl_body_spec_default(&b);
      b.is_static = 1;
      b.size[0] = 0.5;
      b.pos[0] = 0.9 * side + 0.6 * k;
      b.pos[1] = 0.2;
      b.pos[2] = 0.3;
      if (jl_scene_add_body(s, &b, &err) < 0) return -1;
    }
  }
  for (int x = 0; x < side; ++x)
    for (int y = 0; y < side; ++y)
      for (int z = 0; z < side; ++z) {
        jl_body_spec_default(&b);
        int box = (x + y + z) & 1;
        b.shape = box ? JL_SHAPE_BOX : JL_SHAPE_SPHERE;
        if (box) {
          b.size[0] = 0.4;
          b.size[1] = 0.3;
          b.size[2] = 0.35;
        } else {
          b.size[0] = 0.5;
        }
        b.mass = 0.5 + fx_uniform(&r);
        b.pos[0] = 0.9 * x + 0.1 * (fx_uniform(&r) - 0.5);
        b.pos[1] = 0.9 * y + 0.1 * (fx_uniform(&r) - 0.5);
        b.pos[2] = 0.35 + 0.9 * z + 0.1 * (fx_uniform(&r) - 0.5);
        double q[4];
        for (int k = 0; k < 4; ++k) q[k] = fx_uniform(&r) - 0.5;
        if ((x + 2 * y + 3 * z) % 5 == 0) { /* some boxes axis-aligned: face contacts */
          q[0] = 1.0;
          q[1] = q[2] = q[3] = 0.0;
        }
        for (int k = 0; k < 4; ++k) b.quat[k] = q[k];
        for (int k = 0; k < 3; ++k) {
          b.vel[k] = fx_uniform(&r) - 0.5;
          b.omega[k] = 4.0 * (fx_uniform(&r) - 0.5);
        }
        if (jl_scene_add_body(s, &b, &err) < 0) return -1;
      }
  return 0;
}

/* count bodies at random in a cube of edge 8 from x0 along x: spheres of
 * radii 0.1..1 (mostly small), every tenth a turned box up to 1.8 long, every
 * seventeenth static. The device broad phase puts the small ones in one cell
 * and the large ones in several (grid_pairs.h); returns 0 or -1. */
static inline int fx_cluster(jl_scene *s, int count, double x0, uint64_t seed) {
  jl_error err = {0};
  uint64_t r = seed;
  for (int k = 0; k < count; ++k) {
    jl_body_spec b;
    jl_body_spec_default(&b);
    double u[6];
    for (int j = 0; j < 6; ++j) u[j] = fx_uniform(&r);
    if (k % 10 == 9) {
      b.shape = JL_SHAPE_BOX;
      b.size[0] = 0.3 + 1.5 * u[3];
      b.size[1] = 0.2 + 0.4 * u[4];
      b.size[2] = 0.2 + 0.4 * u[5];
      double h = 0.5 * (u[4] + u[5]), c = cos(h), sn = sin(h);
      b.quat[0] = c;
      b.quat[1] = 0.6 * sn;
      b.quat[2] = 0.8 * sn;
      b.quat[3] = 0.0;
    } else {
      b.size[0] = 0.1 + 0.9 * u[3] * u[3];
    }
    b.pos[0] = x0 + 8.0 * u[0];
    b.pos[1] = 8.0 * u[1];
    b.pos[2] = 8.0 * u[2];
    b.is_static = k % 17 == 3;
    if (jl_scene_add_body(s, &b, &err) < 0) return -1;
  }
  return 0;
}

/* A ground plane and fx_cluster's 700 bodies (seed 5) from the origin. */
static inline int fx_cluster_scene(jl_scene *s) {
  jl_error err = {0};
  if (jl_scene_init(s, &err) != JL_OK) return -1;
  double p0[3] = {0, 0, 0}, nz[3] = {0, 0, 1};
  if (jl_scene_add_plane(s, p0, nz, 0, &err) < 0) return -1;
  return fx_cluster(s, 700, 0.0, 5);
}
/* The contact problem of contacts c (laws from the scene's materials, the
 * free velocity from integrate.h), as the stepper builds it; 0 or -1. */
static inline int fx_problem(const jl_scene *s, const jl_contacts *c, jl_contact_problem *p, double *law,
                      double *dv) {
  jl_error err = {0};
  int n = c->count;
  jl_integrate_free_velocity(&s->bodies, s->gravity, s->dt, dv);
  double *mu = law, *en = law + n, *et = law + 2 * n;
  for (int i = 0; i < n; ++i) {
    int m = s->bodies.material[c->body_a[i]] * JL_MATERIALS_MAX + s->bodies.material[c->body_b[i]];
    mu[i] = s->mu[m];
    en[i] = s->eps_n[m];
    et[i] = s->eps_t[m];
  }
  jl_contact_law cl = {mu, en, et};
  return jl_contact_setup(p, &s->bodies, c, &cl, dv, 0, 1, &err) == JL_OK ? 0 : -1;
}

/* The twin's problem (setup_twin.c) for the same contacts; 0 or -1. */
static inline int fx_gpu_problem(const jl_scene *s, const jl_contacts *c, jl_contact_problem *p,
                                 double *dv, int build_g) {
  jl_error err = {0};
  jl_integrate_free_velocity(&s->bodies, s->gravity, s->dt, dv);
  return jl_setup_twin(p, &s->bodies, c, s->mu, s->eps_n, s->eps_t, JL_MATERIALS_MAX, dv, build_g,
                       &err) == JL_OK ? 0 : -1;
}

static inline double fx_rel(double x, double y) {
  double d = x > y ? x - y : y - x, m = (x > 0 ? x : -x) + (y > 0 ? y : -y);
  return d == 0.0 ? 0.0 : d / (m > 1e-300 ? m : 1e-300);
}

/* The reference problem against the twin's, through the fields both layouts
 * have: -1 when the structure differs (bodies, frames, body CSR, G's
 * pattern: these must be equal), else the largest relative difference of c,
 * mu, diag and G's blocks (0 when bit for bit). */
static inline double fx_problem_diff(const jl_contact_problem *r, const jl_contact_problem *t, int g) {
  if (r->n != t->n || r->nbodies != t->nbodies) return -1.0;
  size_t n = (size_t)r->n, nb = (size_t)r->nbodies;
  if (memcmp(r->ka, t->ka, n * sizeof(int)) || memcmp(r->kb, t->kb, n * sizeof(int)) ||
      memcmp(r->frame, t->frame, 9 * n * sizeof(double)) ||
      memcmp(r->body_ptr, t->body_ptr, (nb + 1) * sizeof(int)) ||
      memcmp(r->body_contact, t->body_contact, (size_t)r->body_ptr[nb] * sizeof(int)))
    return -1.0;
  double worst = 0.0, d;
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k)
      if ((d = fx_rel(r->c[3 * i + k], t->c[3 * i + k])) > worst) worst = d;
    for (int k = 0; k < 2; ++k)
      if ((d = fx_rel(r->diag[2 * i + k], t->diag[2 * i + k])) > worst) worst = d;
    if ((d = fx_rel(r->mu[i], t->mu[i])) > worst) worst = d;
  }
  if (!g) return worst;
  if (!r->has_g || !t->has_g || r->nnz != t->nnz ||
      memcmp(r->rowptr, t->rowptr, (n + 1) * sizeof(int)) ||
      memcmp(r->col, t->col, (size_t)r->nnz * sizeof(int)))
    return -1.0;
  for (size_t e = 0; e < 9 * (size_t)r->nnz; ++e) {
    /* relative to the block's diagonal scale: off-diagonal entries can cancel to ~0 */
    double scale = fabs(r->blocks[e - e % 9]) + fabs(r->blocks[e - e % 9 + 4]) + 1e-300;
    double x = r->blocks[e], y = t->blocks[e];
    if ((d = (x > y ? x - y : y - x) / scale) > worst) worst = d;
  }
  return worst;
}

/* Largest difference of two arrays relative to the larger one's max |x|. */
static inline double fx_array_diff(const double *x, const double *y, size_t n) {
  double worst = 0.0, scale = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double d = x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
    if (d > worst) worst = d;
    if (fabs(x[i]) > scale) scale = fabs(x[i]);
  }
  return worst == 0.0 ? 0.0 : worst / (scale > 0.0 ? scale : 1.0);
}

/* 8 x 8 x 8 equal spheres filling a box cell by cell in random order
 * (sphere_pile), neighbours within 0.2 mm so contacts close from the first
 * step, on a ground plane: the benchmark pile in small. JOR, 50 iterations.
 * Returns 0 or -1. */
#define FX_SMALL_PILE_CONTACTS (3 * 8 * 8 * 7 + 8 * 8) /* face neighbours and the ground */
static inline int fx_small_pile(jl_scene *s, jl_body_order order) {
  jl_error err = {0};
  if (jl_scene_init(s, &err) != JL_OK) return -1;
  s->dt = 0.01;
  s->contact_tol = 2e-4;
  jl_prox_opts_set_kind(&s->solver, JL_SOLVER_JOR);
  s->solver.max_iter = 50;
  s->solver.tol_abs = s->solver.tol_rel = 0;
  s->body_order = order;
  const double o[3] = {0, 0, 0}, up[3] = {0, 0, 1};
  if (jl_scene_add_plane(s, o, up, 0, &err) < 0) return -1;
  jl_body_spec b;
  jl_body_spec_default(&b);
  const double lo[3] = {0, 0, 0}, hi[3] = {8.0009, 8.0009, 8.0009};
  return jl_scene_gen_sphere_pile(s, &b, 512, 0.5, 0.5, lo, hi, 3, &err) == JL_OK ? 0 : -1;
}

/* Small reference-like scenes for the SOR tests, on a ground plane, SOR
 * (alpha 1, tol 1e-7, 200 iterations, warm start): which 0 a box pyramid of
 * `rows` rows, 1 a brick wall of `rows` rows and `cols` columns, 2 a pile
 * of touching spheres (5 x 5 x 4) whose odd layers sit off the hollows so
 * they roll, 3 the same pile 20 x 20 x 5 (colours large enough for their own
 * launch). Returns 0 or -1. */
static inline int fx_sor_scene(jl_scene *s, int which, int rows, int cols) {
  jl_error err = {0};
  if (jl_scene_init(s, &err) != JL_OK) return -1;
  s->dt = 0.01;
  jl_scene_set_pair(s, 0, 0, 0.6, 0.0, 0.0);
  s->solver.kind = JL_SOLVER_SOR;
  s->solver.alpha = 1.0;
  s->solver.tol_abs = s->solver.tol_rel = 1e-7;
  s->solver.max_iter = 200;
  s->solver.warm_start = 1;
  double p0[3] = {0, 0, 0}, up[3] = {0, 0, 1}, origin[3] = {0, 0, 0};
  if (jl_scene_add_plane(s, p0, up, 0, &err) < 0) return -1;
  jl_body_spec proto;
  jl_body_spec_default(&proto);
  if (which == 0) {
    double he[3] = {0.5, 0.5, 0.5};
    return jl_scene_gen_box_pyramid(s, &proto, rows, he, 0.01, origin, &err) == JL_OK ? 0 : -1;
  }
  if (which == 1) {
    double he[3] = {0.2, 0.1, 0.1};
    return jl_scene_gen_brick_wall(s, &proto, rows, cols, 2, he, 0.001, origin, &err) == JL_OK
               ? 0 : -1;
  }
  int counts[3] = {5, 5, 4};
  if (which == 3) {
    counts[0] = counts[1] = 20;
    counts[2] = 5;
  }
  double o[3] = {0.0, 0.0, 0.2};
  if (jl_scene_gen_sphere_grid(s, &proto, 0.2, counts, 0.4, o, &err) != JL_OK) return -1;
  for (int k = 0; k < s->bodies.count; ++k) {
    if (s->bodies.is_static[k]) continue;
    int layer = (int)((s->bodies.pos[3 * k + 2] - 0.2) / 0.4 + 0.5);
    s->bodies.pos[3 * k] += 0.07 * (layer % 2);
    s->bodies.pos[3 * k + 1] += 0.05 * (layer % 2);
  }
  return 0;
}

#endif
