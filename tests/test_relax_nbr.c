/* Neighbour lists (Verlet lists with a skin) against all pairs on the CPU
 * twin: relaxation steps, energies and whole launches give the same bits,
 * on random packings (radii 1..n and equal) and on constructed ones with
 * exact contacts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "circle_batch.h"
#include "circle_search.h"
#include "rng.h"

/* One candidate's workspace, with neighbour lists or without. */
typedef struct nbr_ws {
  jl_relax_ws w;
  jl_relax_params p;
  double *mem, *nbmem;
} nbr_ws;

static void nbr_ws_init(nbr_ws *s, const double *r, int n, int lists) {
  memset(s, 0, sizeof *s);
  jl_relax_params_default(&s->p, r, n, 1);
  s->p.nbr = lists;
  s->mem = calloc(JL_RELAX_WS_DOUBLES(n), sizeof(double));
  s->nbmem = calloc(JL_NBR_DOUBLES(n), sizeof(double));
  assert_non_null(s->mem);
  assert_non_null(s->nbmem);
  jl_relax_ws_bind(&s->w, s->mem, n);
  jl_relax_ws_bind_nbr(&s->w, lists ? s->nbmem : NULL, n, s->p.nbr_skin);
  memcpy(s->w.r, r, sizeof(double) * (size_t)n);
  if (lists) assert_non_null(s->w.nb);
  else assert_null(s->w.nb);
}

static void nbr_ws_free(nbr_ws *s) {
  free(s->mem);
  free(s->nbmem);
}

/* Every pair that touches now is in the lists (or its circle has too many
 * neighbours and takes all pairs), each list ascending: the invariant the
 * same bits rest on. Lists that are stale are made current first. */
static void assert_lists_cover(nbr_ws *s) {
  jl_relax_ws *w = &s->w;
  int n = s->p.n;
  jl_nbr_refresh(w, &s->p);
  for (int i = 0; i < n; ++i) {
    int cnt = w->nbc[i];
    if (cnt > JL_NBR_CAP) continue;
    for (int k = 1; k < cnt; ++k)
      assert_true(w->nb[JL_NBR_AT(n, i, k - 1)] < w->nb[JL_NBR_AT(n, i, k)]);
    for (int j = 0, k = 0; j < n; ++j) {
      while (k < cnt && w->nb[JL_NBR_AT(n, i, k)] < j) ++k;
      double ddx = w->x[i] - w->x[j], ddy = w->y[i] - w->y[j], sum = w->r[i] + w->r[j];
      if (j != i && ddx * ddx + ddy * ddy < sum * sum)
        assert_true(k < cnt && w->nb[JL_NBR_AT(n, i, k)] == j);
    }
  }
}

/* Centres uniform in a square a little smaller than the circles' total area
 * (so they overlap), from the given stream. */
static void random_centres(double *x, double *y, const double *r, int n, uint64_t seed) {
  jl_rng g;
  jl_rng_init(&g, seed, 0, 0);
  double area = 0.0;
  for (int i = 0; i < n; ++i) area += r[i] * r[i];
  jl_rng_square(&g, 0.9 * sqrt(area), n, x, y);
}

/* Exactly `steps` steps of the given method in a container Rc (no early
 * end), as jostle bench relax runs them. */
static void run_steps(nbr_ws *s, int relax, double Rc, int steps) {
  jl_relax_params q = s->p;
  q.relax = relax;
  q.tol = -1.0;
  q.stall_ratio = INFINITY;
  assert_int_equal(jl_relax_run(&s->w, &q, Rc, steps), 0);
}

static void assert_same_packing(const nbr_ws *a, const nbr_ws *b) {
  size_t bytes = sizeof(double) * (size_t)a->p.n;
  assert_memory_equal(a->w.x, b->w.x, bytes);
  assert_memory_equal(a->w.y, b->w.y, bytes);
  assert_true(a->w.steps == b->w.steps);
}

/* The same packing relaxed with lists and with all pairs: free (circles
 * travel far, the lists are rebuilt many times), then FIRE and Jacobi in a
 * container too small for the circles. Same bits after every phase, the
 * lists cover every touching pair, and the energies from the lists are the
 * recomputed ones. */
static void lists_match_all_pairs(const double *r, int n, uint64_t seed) {
  nbr_ws a, b;
  nbr_ws_init(&a, r, n, 0);
  nbr_ws_init(&b, r, n, 1);
  random_centres(a.w.x, a.w.y, r, n, seed);
  memcpy(b.w.x, a.w.x, sizeof(double) * (size_t)n);
  memcpy(b.w.y, a.w.y, sizeof(double) * (size_t)n);

  /* energies of the overlapping start: from the lists = all pairs */
  double Rc0 = 0.8 * jl_relax_enclosing(&a.w, n);
  jl_nbr_refresh(&b.w, &b.p);
  for (int i = 0; i < n; ++i) {
    double ea = jl_circle_energy(&a.w, n, i, Rc0), eb = jl_circle_energy(&b.w, n, i, Rc0);
    assert_memory_equal(&ea, &eb, sizeof ea);
  }
  double Ea = jl_relax_energy(&a.w, &a.p, Rc0), Eb = jl_relax_energy(&b.w, &b.p, Rc0);
  assert_memory_equal(&Ea, &Eb, sizeof Ea);
  assert_true(Ea > 0.0);

  run_steps(&a, JL_RELAX_FIRE, INFINITY, 150);
  run_steps(&b, JL_RELAX_FIRE, INFINITY, 150);
  assert_same_packing(&a, &b);
  assert_true(b.w.nb_builds > 2);  /* the lists did go stale and were rebuilt */
  assert_lists_cover(&b);

  /* a container at density 0.9, more than circles reach: overlaps remain */
  double area = 0.0;
  for (int i = 0; i < n; ++i) area += r[i] * r[i];
  double Rc = sqrt(area / 0.9);
  run_steps(&a, JL_RELAX_FIRE, Rc, 200);
  run_steps(&b, JL_RELAX_FIRE, Rc, 200);
  assert_same_packing(&a, &b);
  assert_lists_cover(&b);
  run_steps(&a, JL_RELAX_JACOBI, Rc, 50);
  run_steps(&b, JL_RELAX_JACOBI, Rc, 50);
  assert_same_packing(&a, &b);

  /* the walk's energies at a jammed packing: a few small overlaps */
  for (int i = 0; i < n; ++i) {
    double ea = jl_circle_energy(&a.w, n, i, Rc);
    jl_nbr_refresh(&b.w, &b.p);
    double eb = jl_circle_energy(&b.w, n, i, Rc);
    assert_memory_equal(&ea, &eb, sizeof ea);
  }
  Ea = jl_relax_energy(&a.w, &a.p, Rc);
  Eb = jl_relax_energy(&b.w, &b.p, Rc);
  assert_memory_equal(&Ea, &Eb, sizeof Ea);
  assert_true(Ea > 0.0);
  nbr_ws_free(&a);
  nbr_ws_free(&b);
}

static void radii_1_to_n(double *r, int n) {
  for (int i = 0; i < n; ++i) r[i] = i + 1;
}

static void radii_equal(double *r, int n) {
  for (int i = 0; i < n; ++i) r[i] = 1.0;
}

static void test_random_1_to_n(void **state) {
  (void)state;
  static double r[1000];
  const int ns[3] = {50, 300, 1000};
  for (int k = 0; k < 3; ++k) {
    radii_1_to_n(r, ns[k]);
    lists_match_all_pairs(r, ns[k], 100 + (uint64_t)k);
  }
}

static void test_random_equal(void **state) {
  (void)state;
  static double r[1000];
  const int ns[3] = {50, 300, 1000};
  for (int k = 0; k < 3; ++k) {
    radii_equal(r, ns[k]);
    lists_match_all_pairs(r, ns[k], 200 + (uint64_t)k);
  }
}

/* Constructed packings with exact contacts: unit circles on a square
 * lattice of spacing exactly 2 (every neighbour pair touches, d^2 = 4 =
 * (r_i + r_j)^2, no overlap) and of spacing 2 - 2^-20 (overlaps of exactly
 * 2^-20), squeezed by a container just inside the lattice. */
static void test_constructed_lattice(void **state) {
  (void)state;
  enum { K = 20, N = K * K };
  static double r[N];
  radii_equal(r, N);
  const double spacing[2] = {2.0, 2.0 - ldexp(1.0, -20)};
  for (int t = 0; t < 2; ++t) {
    nbr_ws a, b;
    nbr_ws_init(&a, r, N, 0);
    nbr_ws_init(&b, r, N, 1);
    for (int i = 0; i < N; ++i) {
      double x = (i % K - (K - 1) / 2.0) * spacing[t], y = (i / K - (K - 1) / 2.0) * spacing[t];
      a.w.x[i] = b.w.x[i] = x;
      a.w.y[i] = b.w.y[i] = y;
    }
    jl_nbr_refresh(&b.w, &b.p);
    /* an inner circle lists its 4 lattice neighbours, which touch it
     * exactly, and the 4 diagonal ones when they lie within the skin */
    int inner = K + 1;
    double diag = sqrt(2.0) * spacing[t];
    assert_int_equal(b.w.nbc[inner], diag < 2.0 + b.p.nbr_skin ? 8 : 4);
    for (int i = 0; i < N; ++i) {
      double ea = jl_circle_energy(&a.w, N, i, INFINITY), eb = jl_circle_energy(&b.w, N, i, INFINITY);
      assert_memory_equal(&ea, &eb, sizeof ea);
      if (t == 0) assert_true(ea == 0.0);  /* touching is not overlapping */
    }
    double Rc = 0.99 * jl_relax_enclosing(&a.w, N);
    run_steps(&a, JL_RELAX_FIRE, Rc, 300);
    run_steps(&b, JL_RELAX_FIRE, Rc, 300);
    assert_same_packing(&a, &b);
    assert_lists_cover(&b);
    nbr_ws_free(&a);
    nbr_ws_free(&b);
  }
}

/* A circle with more neighbours than a list holds (a large circle ringed by
 * 48 small ones that all overlap it) takes all pairs; the others keep
 * their lists; the same bits. */
static void test_list_overflow(void **state) {
  (void)state;
  enum { SMALL = 48, N = SMALL + 1 };
  double r[N];
  for (int i = 0; i < SMALL; ++i) r[i] = 0.5;
  r[SMALL] = 10.0;
  nbr_ws a, b;
  nbr_ws_init(&a, r, N, 0);
  nbr_ws_init(&b, r, N, 1);
  for (int i = 0; i < SMALL; ++i) {
    double t = 2.0 * 3.14159265358979323846 * i / SMALL;
    a.w.x[i] = b.w.x[i] = 10.3 * cos(t);
    a.w.y[i] = b.w.y[i] = 10.3 * sin(t);
  }
  a.w.x[SMALL] = b.w.x[SMALL] = 0.01;
  a.w.y[SMALL] = b.w.y[SMALL] = 0.0;
  jl_nbr_refresh(&b.w, &b.p);
  assert_int_equal(b.w.nbc[SMALL], JL_NBR_CAP + 1);
  assert_true(b.w.nbc[0] <= JL_NBR_CAP);
  run_steps(&a, JL_RELAX_FIRE, 11.5, 200);
  run_steps(&b, JL_RELAX_FIRE, 11.5, 200);
  assert_same_packing(&a, &b);
  nbr_ws_free(&a);
  nbr_ws_free(&b);
}

/* Whole launches (random starts, then the trials and the walk, with its
 * aimed jumps from the per-circle energies) with lists and without: every
 * array of the batch the same bits. */
static void launches_match(const double *r, int n, int count, uint64_t budget) {
  jl_circle_batch a, b;
  assert_int_equal(jl_circle_batch_alloc(&a, n, count, r, NULL), JL_OK);
  assert_int_equal(jl_circle_batch_alloc(&b, n, count, r, NULL), JL_OK);
  memset(a.need_start, 1, (size_t)count);
  memset(b.need_start, 1, (size_t)count);
  jl_relax_params p;
  jl_relax_params_default(&p, r, n, 31);
  p.walk_every = 2;
  p.step_budget = budget;
  jl_relax_params q = p;
  p.nbr = 0;
  q.nbr = 1;
  for (int launch = 0; launch < 2; ++launch) {
    assert_int_equal(jl_circle_batch_run_cpu(&p, &a, 2, NULL), JL_OK);
    assert_int_equal(jl_circle_batch_run_cpu(&q, &b, 2, NULL), JL_OK);
  }
  size_t nc = (size_t)n * (size_t)count, k = (size_t)count;
  assert_memory_equal(a.x, b.x, sizeof(double) * nc);
  assert_memory_equal(a.y, b.y, sizeof(double) * nc);
  assert_memory_equal(a.wx, b.wx, sizeof(double) * nc);
  assert_memory_equal(a.wy, b.wy, sizeof(double) * nc);
  assert_memory_equal(a.R, b.R, sizeof(double) * k);
  assert_memory_equal(a.R_rec, b.R_rec, sizeof(double) * k);
  assert_memory_equal(a.Rt, b.Rt, sizeof(double) * k);
  assert_memory_equal(a.steps, b.steps, sizeof(uint64_t) * k);
  assert_memory_equal(a.trials_done, b.trials_done, sizeof(uint64_t) * k);
  assert_memory_equal(a.accepted, b.accepted, sizeof(uint64_t) * k);
  assert_memory_equal(a.stuck, b.stuck, sizeof(uint32_t) * k);
  assert_memory_equal(a.rng_offset, b.rng_offset, sizeof(uint64_t) * k);
  for (int c = 1; c < count; c += 2) assert_true(a.Rt[c] > 0.0);  /* the walkers walked */
  jl_circle_batch_free(&a);
  jl_circle_batch_free(&b);
}

static void test_launches_match(void **state) {
  (void)state;
  static double r[300];
  radii_1_to_n(r, 50);
  launches_match(r, 50, 4, 20000);
  radii_equal(r, 50);
  launches_match(r, 50, 4, 20000);
  radii_1_to_n(r, 300);
  launches_match(r, 300, 2, 3000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_random_1_to_n),
    cmocka_unit_test(test_random_equal),
    cmocka_unit_test(test_constructed_lattice),
    cmocka_unit_test(test_list_overflow),
    cmocka_unit_test(test_launches_match),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
