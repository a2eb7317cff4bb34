/* Contact relaxation, compression and the search against analytic answers
 * and published records, on the CPU twin. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "circle_batch.h"
#include "circle_cross.h"
#include "circle_search.h"
#include "circles.h"
#include "timer.h"

typedef struct ws_mem {
  jl_relax_ws ws;
  double mem[JL_RELAX_WS_DOUBLES(8)];
} ws_mem;

static void ws_setup(ws_mem *m, jl_relax_params *p, const double *r, int n) {
  memset(m, 0, sizeof *m);
  jl_relax_params_default(p, r, n, 1);
  jl_relax_ws_bind(&m->ws, m->mem, n);
  for (int i = 0; i < n; ++i) m->ws.r[i] = r[i];
  jl_rng_init(&m->ws.rng, 1, 0, 0);
}

/* Seed eq. 4.5: one step separates a single overlapping pair exactly. */
static void test_pair_separates_in_one_step(void **state) {
  (void)state;
  double r[2] = {1.0, 1.0};
  ws_mem m;
  jl_relax_params p;
  ws_setup(&m, &p, r, 2);
  p.relax = JL_RELAX_JACOBI;
  m.ws.x[0] = 0.0; m.ws.y[0] = 0.0;
  m.ws.x[1] = 0.6; m.ws.y[1] = 0.8;  /* distance 1, overlap 1 */
  assert_int_equal(jl_relax_run(&m.ws, &p, INFINITY, 1), 0);
  double d = hypot(m.ws.x[1] - m.ws.x[0], m.ws.y[1] - m.ws.y[0]);
  assert_true(fabs(d - 2.0) < 1e-15);
  assert_true(fabs(m.ws.x[0] + 0.3) < 1e-15 && fabs(m.ws.y[0] + 0.4) < 1e-15);
  assert_int_equal(jl_relax_run(&m.ws, &p, INFINITY, 1), 1);
}

/* Area-weighted split: the circle of radius 1 takes 4/5 of the overlap
 * against the circle of radius 2. */
static void test_area_weighted_split(void **state) {
  (void)state;
  double r[2] = {1.0, 2.0};
  ws_mem m;
  jl_relax_params p;
  ws_setup(&m, &p, r, 2);
  p.relax = JL_RELAX_JACOBI;
  p.area_weighted = 1;
  m.ws.x[0] = 0.0; m.ws.x[1] = 2.0;  /* overlap 1 */
  jl_relax_run(&m.ws, &p, INFINITY, 1);
  assert_true(fabs(m.ws.x[0] + 0.8) < 1e-15);
  assert_true(fabs(m.ws.x[1] - 2.2) < 1e-15);
}

/* A circle outside the container moves back onto its rim. */
static void test_container_pull(void **state) {
  (void)state;
  double r[2] = {1.0, 1.0};
  ws_mem m;
  jl_relax_params p;
  ws_setup(&m, &p, r, 2);
  p.relax = JL_RELAX_JACOBI;
  m.ws.x[0] = 6.0; m.ws.y[0] = 8.0;  /* |c| = 10 */
  m.ws.x[1] = -3.0;
  jl_relax_run(&m.ws, &p, 5.0, 1);
  assert_true(fabs(hypot(m.ws.x[0], m.ws.y[0]) - 4.0) < 1e-14);
  assert_true(fabs(m.ws.x[1] + 3.0) < 1e-15);
}

/* Compression of two unit circles: the seed's Jacobi relaxation stalls a
 * little above the jam (the NLopt polish removes the rest); FIRE gets into
 * it. */
static void test_compress_two_circles(void **state) {
  (void)state;
  double r[2] = {1.0, 1.0};
  for (int relax = JL_RELAX_JACOBI; relax <= JL_RELAX_FIRE; ++relax) {
    ws_mem m;
    jl_relax_params p;
    ws_setup(&m, &p, r, 2);
    p.relax = relax;
    m.ws.x[0] = -5.0; m.ws.x[1] = 4.0; m.ws.y[1] = 1.0;
    jl_relax_compress(&m.ws, &p);
    assert_true(m.ws.R >= 2.0 - 1e-8);
    assert_true(m.ws.R < 2.0 * (1.0 + (relax == JL_RELAX_FIRE ? 1e-4 : 1e-2)));
  }
}

/* Three unit circles jam at R = 1 + 2/sqrt(3), the only local optimum:
 * FIRE compression from a random start lands on it to 1e-4, where Jacobi
 * stalls about 1% above it. */
static void test_fire_compress_three_circles(void **state) {
  (void)state;
  double r[3] = {1.0, 1.0, 1.0};
  const double R3 = 1.0 + 2.0 / sqrt(3.0);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ws_mem m;
    jl_relax_params p;
    ws_setup(&m, &p, r, 3);
    jl_rng_init(&m.ws.rng, seed, 0, 0);
    assert_int_equal(p.relax, JL_RELAX_FIRE);
    jl_relax_start(&m.ws, &p, 0);
    assert_true(m.ws.R >= R3 * (1.0 - 1e-12));
    assert_true(m.ws.R < R3 * (1.0 + 1e-4));
  }
}

/* The fixed-order block sum adds every entry once, for any length. */
static void test_block_sum3(void **state) {
  (void)state;
  for (int n = 1; n <= 37; ++n) {
    double a[37], b[37], c[37];
    for (int i = 0; i < n; ++i) { a[i] = i + 1; b[i] = 1.0; c[i] = -(double)i; }
    jl_block_sum3(a, b, c, n);
    assert_true(a[0] == n * (n + 1) / 2.0);
    assert_true(b[0] == n);
    assert_true(c[0] == -(n * (n - 1) / 2.0));
  }
}

/* The workspace's packing (radii r) passes the exact check, with the R it claims. */
static void assert_ws_legal(const ws_mem *m, const double *r, int n) {
  jl_circle_packing pk;
  assert_int_equal(jl_circle_packing_init(&pk, n, NULL), JL_OK);
  for (int i = 0; i < n; ++i) { pk.x[i] = m->ws.x[i]; pk.y[i] = m->ws.y[i]; pk.r[i] = r[i]; }
  jl_circle_packing_update_R(&pk);
  jl_circle_check chk;
  jl_circle_check_packing(&pk, 1e-8, &chk);
  assert_true(chk.legal);
  assert_true(fabs((double)chk.R - m->ws.R) < 1e-12 * m->ws.R);
  jl_circle_packing_free(&pk);
}

/* A random start is legal after relaxation and scaling. */
static void test_start_is_legal(void **state) {
  (void)state;
  double r[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ws_mem m;
  jl_relax_params p;
  ws_setup(&m, &p, r, 8);
  jl_relax_start(&m.ws, &p, 0);
  assert_ws_legal(&m, r, 8);
}

/* ---- cut-and-splice children (jl_circle_cross_child) ---- */

/* A packing of radii r (problem order: the reverse of sorted) at centres
 * drawn from seed, and the sorted view of its problem. */
static void cross_fixture(const double *r, int n, uint64_t seed, jl_circle_packing *pk,
                          jl_circle_problem *prob, jl_circle_sorted *s) {
  assert_int_equal(jl_circle_packing_init(pk, n, NULL), JL_OK);
  jl_rng g;
  jl_rng_init(&g, seed, 0, 0);
  jl_rng_square(&g, 10.0, n, pk->x, pk->y);
  for (int i = 0; i < n; ++i) pk->r[i] = r[i];
  jl_circle_packing_update_R(pk);
  if (prob) {
    assert_int_equal(jl_circle_problem_init(prob, n, NULL), JL_OK);
    for (int i = 0; i < n; ++i) prob->radii[i] = r[i];
    assert_int_equal(jl_circle_sorted_init(s, prob, NULL), JL_OK);
  }
}

/* The child of a packing and itself is the packing, bit for bit (the turn
 * is the identity, each circle lies on one side of the cut); of a packing
 * and a turned, mirrored copy of it, the packing to rounding. */
static void test_cross_child_of_copies(void **state) {
  (void)state;
  enum { N = 9 };
  double r[N] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  jl_circle_packing a, b;
  jl_circle_problem prob;
  jl_circle_sorted s;
  cross_fixture(r, N, 3, &a, &prob, &s);
  cross_fixture(r, N, 3, &b, NULL, NULL);
  double tmp[JL_CROSS_TMP_DOUBLES(N)], x[N], y[N];
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    jl_rng g;
    jl_rng_init(&g, seed, 0, 0);
    jl_circle_cross_child(&a, &a, &s, &g, tmp, x, y);
    for (int k = 0; k < N; ++k) {
      assert_true(x[k] == a.x[s.orig[k]]);
      assert_true(y[k] == a.y[s.orig[k]]);
    }
  }
  double c = cos(2.1), sn = sin(2.1);
  for (int i = 0; i < N; ++i) {
    double px = a.x[i], py = -a.y[i];
    b.x[i] = c * px - sn * py;
    b.y[i] = sn * px + c * py;
  }
  jl_circle_packing_update_R(&b);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    jl_rng g;
    jl_rng_init(&g, seed, 0, 0);
    jl_circle_cross_child(&a, &b, &s, &g, tmp, x, y);
    for (int k = 0; k < N; ++k) {
      assert_true(fabs(x[k] - a.x[s.orig[k]]) < 1e-12 * a.R);
      assert_true(fabs(y[k] - a.y[s.orig[k]]) < 1e-12 * a.R);
    }
  }
  jl_circle_packing_free(&a);
  jl_circle_packing_free(&b);
  jl_circle_sorted_free(&s);
  jl_circle_problem_free(&prob);
}

/* Of two unrelated packings, with equal circles among distinct ones: each
 * circle of the child is one of a's circles of its radius, one of b's
 * (scaled to a's R and turned: the same distance from the centre) or a
 * point of a's container; both parents give circles; the same draws give
 * the same child. */
static void test_cross_child_of_two(void **state) {
  (void)state;
  enum { N = 12 };
  double r[N] = {5, 5, 5, 4, 3, 3, 2, 1, 1, 1, 1, 6};
  jl_circle_packing a, b;
  jl_circle_problem prob;
  jl_circle_sorted s;
  cross_fixture(r, N, 5, &a, &prob, &s);
  cross_fixture(r, N, 6, &b, NULL, NULL);
  double tmp[JL_CROSS_TMP_DOUBLES(N)], x[N], y[N], x2[N], y2[N];
  const double f = a.R / b.R, tol = 1e-12 * a.R;
  int from_a = 0, from_b = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    jl_rng g;
    jl_rng_init(&g, seed, 0, 0);
    jl_circle_cross_child(&a, &b, &s, &g, tmp, x, y);
    jl_rng_init(&g, seed, 0, 0);
    jl_circle_cross_child(&a, &b, &s, &g, tmp, x2, y2);
    assert_memory_equal(x, x2, sizeof x);
    assert_memory_equal(y, y2, sizeof y);
    for (int k = 0; k < N; ++k) {
      double d = hypot(x[k], y[k]);
      int in_a = 0, in_b = 0;
      for (int i = 0; i < N; ++i) {
        if (r[i] != s.r[k]) continue;
        in_a |= fabs(x[k] - a.x[i]) < tol && fabs(y[k] - a.y[i]) < tol;
        in_b |= fabs(d - f * hypot(b.x[i], b.y[i])) < tol;
      }
      from_a += in_a;
      from_b += in_b && !in_a;
      assert_true(in_a || in_b || d <= a.R - s.r[k] + tol);
    }
  }
  assert_true(from_a > 40);
  assert_true(from_b > 40);
  jl_circle_packing_free(&a);
  jl_circle_packing_free(&b);
  jl_circle_sorted_free(&s);
  jl_circle_problem_free(&prob);
}

/* A start from placed, overlapping centres (JL_START_PLACED) ends legal
 * without a random draw, and from a packing already jammed it stays
 * near it (the compression from 5% finds it again). */
static void test_start_placed(void **state) {
  (void)state;
  double r[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ws_mem m;
  jl_relax_params p;
  ws_setup(&m, &p, r, 8);
  jl_rng g;
  jl_rng_init(&g, 9, 0, 0);
  jl_rng_square(&g, 6.0, 8, m.ws.x, m.ws.y);
  jl_relax_start(&m.ws, &p, 1);
  assert_int_equal(m.ws.draws, 0);
  assert_ws_legal(&m, r, 8);
  double R1 = m.ws.R;
  jl_relax_start(&m.ws, &p, 1);
  assert_true(m.ws.R < R1 * (1.0 + 1e-3));
}

/* Two batches of count fresh candidates of radii 1..12 (to be started), and
 * parameters for them with the given seed and trials per launch. */
static void two_fresh_batches(jl_circle_batch *a, jl_circle_batch *b, int count, uint64_t seed,
                              int trials, jl_relax_params *p) {
  double r[12];
  for (int i = 0; i < 12; ++i) r[i] = i + 1;
  assert_int_equal(jl_circle_batch_alloc(a, 12, count, r, NULL), JL_OK);
  assert_int_equal(jl_circle_batch_alloc(b, 12, count, r, NULL), JL_OK);
  memset(a->need_start, 1, (size_t)count);
  memset(b->need_start, 1, (size_t)count);
  jl_relax_params_default(p, r, 12, seed);
  p->trials = trials;
}

/* The twin gives the same bits whatever the thread count. */
static void test_batch_threads_agree(void **state) {
  (void)state;
  jl_circle_batch a, b;
  jl_relax_params p;
  two_fresh_batches(&a, &b, 6, 99, 5, &p);
  assert_int_equal(jl_circle_batch_run_cpu(&p, &a, 1, NULL), JL_OK);
  assert_int_equal(jl_circle_batch_run_cpu(&p, &b, 3, NULL), JL_OK);
  assert_memory_equal(a.x, b.x, sizeof(double) * 72);
  assert_memory_equal(a.y, b.y, sizeof(double) * 72);
  assert_memory_equal(a.R, b.R, sizeof(double) * 6);
  assert_memory_equal(a.rng_offset, b.rng_offset, sizeof(uint64_t) * 6);
  for (int c = 0; c < 6; ++c) {
    assert_true(a.steps[c] > 0);
    assert_int_equal(a.trials_done[c], 5);
  }
  jl_circle_batch_free(&a);
  jl_circle_batch_free(&b);
}

/* A batch of count fresh candidates (to be started) of radii 1..n, written
 * to r, and the default parameters for them with the given seed. */
static void fresh_batch(jl_circle_batch *b, double *r, int n, int count, uint64_t seed,
                        jl_relax_params *p) {
  for (int i = 0; i < n; ++i) r[i] = i + 1;
  assert_int_equal(jl_circle_batch_alloc(b, n, count, r, NULL), JL_OK);
  memset(b->need_start, 1, (size_t)count);
  jl_relax_params_default(p, r, n, seed);
}

/* Candidate c of a batch of radii r is legal by the exact check, and its
 * R is the enclosing radius of its circles. */
static void assert_candidate_legal(const jl_circle_batch *b, const double *r, int c) {
  int n = b->n;
  jl_circle_packing pk;
  assert_int_equal(jl_circle_packing_init(&pk, n, NULL), JL_OK);
  for (int i = 0; i < n; ++i) {
    pk.x[i] = b->x[(size_t)c * n + i];
    pk.y[i] = b->y[(size_t)c * n + i];
    pk.r[i] = r[i];
  }
  jl_circle_packing_update_R(&pk);
  jl_circle_check chk;
  jl_circle_check_packing(&pk, 1e-8, &chk);
  assert_true(chk.legal);
  assert_true(fabs(pk.R - b->R[c]) <= 1e-12 * pk.R);
  jl_circle_packing_free(&pk);
}

/* A cut already raised (SIGINT before the launch): each of the 2 threads
 * runs one candidate, from the given first one on, and takes no other; the
 * 6 left keep need_start and their (zero) state; the 2 run end at their
 * first poll with a legal packing. */
static void test_batch_cut_takes_no_more(void **state) {
  (void)state;
  jl_circle_batch a, b;
  jl_relax_params p;
  two_fresh_batches(&a, &b, 8, 7, 2, &p);
  jl_circle_cut cut = {1, 0.0, NULL};
  a.cut = &cut;
  assert_int_equal(jl_circle_batch_run_cpu_cut(&p, &a, 2, 3, NULL), JL_OK);
  double r[12];
  for (int i = 0; i < 12; ++i) r[i] = i + 1;
  for (int c = 0; c < 8; ++c) {
    int run = c == 3 || c == 4;
    assert_int_equal(a.need_start[c], !run);
    if (!run) {
      assert_int_equal(a.steps[c], 0);
      continue;
    }
    assert_int_equal(a.trials_done[c], 0);
    assert_candidate_legal(&a, r, c);
  }
  jl_circle_batch_free(&a);
  jl_circle_batch_free(&b);
}

/* A launch of far more work than its time (a million trials or walk steps
 * per candidate at n = 60) ends soon after its cut with every candidate
 * legal: the walkers' record packings, the others' current ones. */
static void test_batch_cut_at_deadline(void **state) {
  (void)state;
  enum { N = 60, C = 4 };
  double r[N];
  jl_circle_batch b;
  jl_relax_params p;
  fresh_batch(&b, r, N, C, 5, &p);
  p.walk_every = 2;
  p.trials = 1000000;
  double t0 = jl_time_now();
  jl_circle_cut cut = {0, t0 + 0.3, NULL};
  b.cut = &cut;
  assert_int_equal(jl_circle_batch_run_cpu_cut(&p, &b, 2, 0, NULL), JL_OK);
  double took = jl_time_now() - t0;
  assert_true(cut.flag);
  assert_true(took < 3.0);
  int ran = 0;
  for (int c = 0; c < C; ++c) {
    if (b.need_start[c]) continue;
    ran++;
    assert_true(b.trials_done[c] < 1000000);
    assert_candidate_legal(&b, r, c);
  }
  assert_true(ran >= 2);
  jl_circle_batch_free(&b);
}

/* Record-to-record travel: every candidate's record is the smallest R it
 * kept, and it never keeps a packing more than its rung of the band ladder
 * above that record; the trials do move (some are kept). */
static void test_record_to_record(void **state) {
  (void)state;
  enum { N = 10, C = 8 };
  double r[N];
  jl_circle_batch b;
  jl_relax_params p;
  fresh_batch(&b, r, N, C, 5, &p);
  assert_true(p.band_levels >= 2);
  p.trials = 6;
  double rec_prev[C];
  uint64_t kept = 0;
  for (int launch = 0; launch < 4; ++launch) {
    assert_int_equal(jl_circle_batch_run_cpu(&p, &b, 2, NULL), JL_OK);
    for (int c = 0; c < C; ++c) {
      double band = p.accept_worse;
      for (int l = 0; l < c % p.band_levels; ++l) band *= p.band_ratio;
      assert_true(b.R_rec[c] > 0.0);
      assert_true(b.R_rec[c] <= b.R[c]);
      assert_true(b.R[c] < b.R_rec[c] * (1.0 + band));
      if (launch > 0) assert_true(b.R_rec[c] <= rec_prev[c]);
      rec_prev[c] = b.R_rec[c];
      /* the stored packing is the one whose R is reported */
      double m = 0.0;
      for (int i = 0; i < N; ++i)
        m = fmax(m, sqrt(b.x[c * N + i] * b.x[c * N + i] + b.y[c * N + i] * b.y[c * N + i]) + r[i]);
      assert_true(fabs(m - b.R[c]) <= 1e-12 * m);
    }
  }
  for (int c = 0; c < C; ++c) kept += b.accepted[c];
  assert_true(kept > 0);
  jl_circle_batch_free(&b);
}

/* The fixed-container walk: a walker reports only legal packings (its walk's
 * packing, which overlaps, stays in wx, wy), its record is the R it reports,
 * its walk's container sits its rung of the ladder below that record (with
 * the keep probe, below the record it entered at: between the rung and the
 * record), the record never rises, and walks do find legal packings below
 * their records. The other candidates keep the seed's trials. */
static void walk_keeps_legal_record(int probe) {
  enum { N = 10, C = 8 };
  double r[N];
  jl_circle_batch b;
  jl_relax_params p;
  fresh_batch(&b, r, N, C, 11, &p);
  p.walk_every = 2;
  p.trials = 8;
  p.walk_probe = probe;
  double rec_prev[C];
  for (int launch = 0; launch < 4; ++launch) {
    assert_int_equal(jl_circle_batch_run_cpu(&p, &b, 2, NULL), JL_OK);
    for (int c = 0; c < C; ++c) {
      int walker = c % 2 == 1;
      if (launch > 0) assert_true(b.R_rec[c] <= rec_prev[c]);
      rec_prev[c] = b.R_rec[c];
      assert_candidate_legal(&b, r, c);
      if (!walker) {
        assert_true(b.Rt[c] == 0.0);
        continue;
      }
      assert_true(b.R[c] == b.R_rec[c]);
      double s = p.walk_shrink;
      for (int l = 0; l < (c / p.walk_every) % p.walk_levels; ++l) s *= p.walk_ratio;
      if (probe == JL_PROBE_KEEP) {
        assert_true(b.Rt[c] >= b.R_rec[c] * (1.0 - s));
        assert_true(b.Rt[c] < b.R_rec[c]);
      } else {
        assert_true(b.Rt[c] == b.R_rec[c] * (1.0 - s));
      }
    }
  }
  uint64_t found = 0;  /* walks that found a legal packing below their record */
  for (int c = 1; c < C; c += 2) found += b.accepted[c];
  assert_true(found > 0);
  jl_circle_batch_free(&b);
}

static void test_walk_keeps_legal_record(void **state) {
  (void)state;
  walk_keeps_legal_record(JL_PROBE_OFF);
}

static void test_walk_keeps_legal_record_probe_keep(void **state) {
  (void)state;
  walk_keeps_legal_record(JL_PROBE_KEEP);
}

/* The walk's aimed jumps: each circle's overlap energy (a quarter of each
 * pair's squared overlap, half the squared excess over the container) and a
 * draw in proportion to it. */
static void test_walk_aim(void **state) {
  (void)state;
  double r[4] = {1.0, 1.0, 1.0, 1.0};
  ws_mem m;
  jl_relax_params p;
  ws_setup(&m, &p, r, 4);
  jl_relax_ws *w = &m.ws;
  /* 0 and 1 overlap by 0.5; 2 sticks 0.5 out of the container (R 10); 3 is free */
  w->x[0] = 0.0; w->y[0] = 0.0;
  w->x[1] = 1.5; w->y[1] = 0.0;
  w->x[2] = 0.0; w->y[2] = 9.5;
  w->x[3] = 0.0; w->y[3] = -5.0;
  const double want[4] = {0.0625, 0.0625, 0.125, 0.0};
  for (int i = 0; i < 4; ++i) {
    w->ce[i] = jl_circle_energy(w, 4, i, 10.0);
    assert_true(fabs(w->ce[i] - want[i]) < 1e-15);
  }
  assert_true(fabs(jl_relax_energy(w, &p, 10.0) - 0.25) < 1e-15);
  int hits[4] = {0};
  enum { DRAWS = 4000 };
  for (int k = 0; k < DRAWS; ++k) hits[jl_walk_aimed_circle(w, 4, -1)]++;
  assert_int_equal(hits[3], 0);
  /* shares 1/4, 1/4, 1/2; the bounds are over 7 standard deviations wide */
  assert_true(abs(hits[0] - DRAWS / 4) < 200 && abs(hits[1] - DRAWS / 4) < 200);
  assert_true(abs(hits[2] - DRAWS / 2) < 230);
  /* a legal packing has no energy to aim at */
  for (int i = 0; i < 4; ++i) w->ce[i] = 0.0;
  assert_int_equal(jl_walk_aimed_circle(w, 4, 3), 3);
}

/* The walk's probe: three unit circles in their optimal triangle (R* = 1 +
 * 2/sqrt 3), spread by 1e-4, make a record 5.4e-5 above R*, less than the
 * walk's first rung (2e-4), so R* is never legal in the walk's container.
 * A walk state of a new lowest energy (here: lower than a worse basin the
 * walk came from) relaxed just below the record finds R*, whether the walk
 * then begins again below it or keeps its container; without the probe no
 * step does. */
static void walk_probe_case(int probe, int *found, double *R, double *R_rec0, double *Rt0,
                            double *Rt) {
  double r[3] = {1.0, 1.0, 1.0};
  ws_mem m;
  jl_relax_params p;
  ws_setup(&m, &p, r, 3);
  p.walk_every = 1;
  p.walk_probe = probe;
  jl_relax_ws *w = &m.ws;
  const double rc = 2.0 / sqrt(3.0) * (1.0 + 1e-4);
  for (int i = 0; i < 3; ++i) {
    w->sx[i] = rc * cos(2.0 * 3.14159265358979323846 * i / 3.0);
    w->sy[i] = rc * sin(2.0 * 3.14159265358979323846 * i / 3.0);
  }
  w->R = w->R_rec = *R_rec0 = rc + 1.0;
  assert_int_equal(jl_walk_begin(w, &p, 0), 0);  /* R* lies below the record, above Rt */
  assert_true(w->Rt < 1.0 + 2.0 / sqrt(3.0));
  *Rt0 = w->Rt;
  *found = 0;
  for (int k = 0; k < 20 && !*found; ++k) {
    w->E_best = INFINITY;  /* as if the walk came from a worse basin */
    *found = jl_relax_walk_step(w, &p, 0);
  }
  *R = w->R_rec;
  *Rt = w->Rt;
  /* the candidate's packing is the record's */
  assert_true(w->R == w->R_rec);
  jl_circle_packing pk = {3, w->sx, w->sy, r, w->R};
  jl_circle_check chk;
  jl_circle_check_packing(&pk, JL_LEGAL_REL_TOL, &chk);
  assert_true(chk.legal);
}

static void test_walk_probe_finds_nearer_basin(void **state) {
  (void)state;
  const double Rs = 1.0 + 2.0 / sqrt(3.0);
  int found;
  double R, R0, Rt0, Rt;
  walk_probe_case(JL_PROBE_RESTART, &found, &R, &R0, &Rt0, &Rt);
  assert_int_equal(found, 1);
  assert_true(R < R0 * (1.0 - 1e-6) && R >= Rs * (1.0 - 1e-9));
  assert_true(Rt < Rt0);  /* the walk began again below the new record */
  walk_probe_case(JL_PROBE_KEEP, &found, &R, &R0, &Rt0, &Rt);
  assert_int_equal(found, 1);
  assert_true(R < R0 * (1.0 - 1e-6) && R >= Rs * (1.0 - 1e-9));
  assert_true(Rt == Rt0);  /* the walk kept its container */
  walk_probe_case(JL_PROBE_OFF, &found, &R, &R0, &Rt0, &Rt);
  assert_int_equal(found, 0);
  assert_true(R == R0);
}

/* End to end on the CPU (2 threads): the contest instance n reaches its
 * record within 1e-9 (relative), with one candidate in `walk` walking, and
 * the result passes the exact check. */
static void search_reaches_record(int n, int walk) {
  jl_circle_problem prob;
  assert_int_equal(jl_circle_problem_zimmermann(&prob, n, NULL), JL_OK);
  jl_device dev;
  assert_int_equal(jl_device_select(&dev, "cpu", 2, NULL, NULL), JL_OK);
  jl_circle_search_opts o;
  jl_circle_search_opts_default(&o);
  o.walk = walk;
  o.progress = 0;
  o.time_s = 60;
  o.target_R = prob.best_known_R * (1 + 1e-9);
  jl_circle_packing best = {0};
  jl_circle_run_info info;
  jl_error err;
  assert_int_equal(jl_circle_search(&prob, &dev, &o, &best, &info, &err), JL_OK);
  assert_int_equal(info.walk, walk);
  assert_true(best.R <= prob.best_known_R * (1 + 1e-9));
  assert_true(best.R >= prob.best_known_R * (1 - 1e-9));
  jl_circle_check chk;
  jl_circle_check_packing(&best, JL_LEGAL_REL_TOL, &chk);
  assert_true(chk.legal);
  jl_circle_packing_free(&best);
  jl_circle_problem_free(&prob);
}

/* Walkers only (the default): n = 10. */
static void test_walk_search_reaches_record_n10(void **state) {
  (void)state;
  search_reaches_record(10, 1);
}

/* The seed's trials only: n = 5, whose record is in closed form. */
static void test_search_reaches_record_n5(void **state) {
  (void)state;
  search_reaches_record(5, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pair_separates_in_one_step),
    cmocka_unit_test(test_area_weighted_split),
    cmocka_unit_test(test_container_pull),
    cmocka_unit_test(test_compress_two_circles),
    cmocka_unit_test(test_fire_compress_three_circles),
    cmocka_unit_test(test_block_sum3),
    cmocka_unit_test(test_start_is_legal),
    cmocka_unit_test(test_start_placed),
    cmocka_unit_test(test_cross_child_of_copies),
    cmocka_unit_test(test_cross_child_of_two),
    cmocka_unit_test(test_batch_threads_agree),
    cmocka_unit_test(test_batch_cut_takes_no_more),
    cmocka_unit_test(test_batch_cut_at_deadline),
    cmocka_unit_test(test_record_to_record),
    cmocka_unit_test(test_walk_keeps_legal_record),
    cmocka_unit_test(test_walk_keeps_legal_record_probe_keep),
    cmocka_unit_test(test_walk_aim),
    cmocka_unit_test(test_walk_probe_finds_nearer_basin),
    cmocka_unit_test(test_walk_search_reaches_record_n10),
    cmocka_unit_test(test_search_reaches_record_n5),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
