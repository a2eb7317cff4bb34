/* One candidate packing's work: contact relaxation, compression and Monte
 * Carlo improvement trials (Goetzmann 2007, ch. 3-4). Written once and
 * compiled twice: as the CPU twin (circle_relax.c, one candidate per loop
 * iteration) and as the CUDA kernel (kernels/circles/circle_relax.cu, one thread
 * block per candidate, one thread per circle). JL_FOR runs over circles,
 * JL_SYNC is a block barrier, JL_LEADER is the thread that makes the random
 * choices. All decisions come from max reductions (exact in any order) and
 * the builds disable FMA contraction, so both paths give the same bits. */
#ifndef JL_CIRCLE_RELAX_H
#define JL_CIRCLE_RELAX_H

#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "hd.h"
#include "rng.h"

/* How a legalization attempt moves the circles. */
enum { JL_RELAX_JACOBI = 0, JL_RELAX_FIRE = 1 };

/* FIRE constants (Bitzek et al. 2006, FIRE 2.0 of Guenole et al. 2020). */
#define JL_FIRE_N_DELAY 5
#define JL_FIRE_F_INC 1.1
#define JL_FIRE_F_DEC 0.5
#define JL_FIRE_ALPHA0 0.1
#define JL_FIRE_F_ALPHA 0.99
/* FIRE is not monotone: judge a stall over a longer window than Jacobi. */
#define JL_FIRE_STALL_WINDOW 64

/* The kinds of improvement trial (seed section 4.1.2.2). */
enum { JL_MOVE_SWAP_NEXT = 0, JL_MOVE_SWAP = 1, JL_MOVE_OUTSIDE = 2, JL_MOVE_JUMP = 3,
       JL_MOVE_COUNT = 4 };

/* The walk's probe below the record (jl_walk_probe). */
enum { JL_PROBE_OFF = 0, JL_PROBE_RESTART = 1, JL_PROBE_KEEP = 2 };

/* Settings shared by every candidate of a batch. */
typedef struct jl_relax_params {
  int n;                   /* circles per candidate */
  int relax;               /* JL_RELAX_JACOBI (the seed's) or JL_RELAX_FIRE */
  double fire_dt0, fire_dtmax; /* FIRE time steps (a Jacobi step is dt = 1) */
  int max_steps;           /* relaxation steps per legalization attempt */
  int compress_iters;      /* shrink attempts per compression */
  double stall_ratio;      /* give up when 16 steps shrink the overlap by less */
  int trials;              /* improvement trials per launch (when step_budget is 0) */
  uint64_t step_budget;    /* > 0: trials until this many relaxation steps, so
                              every block of a launch finishes at about the
                              same time instead of waiting for the slowest */
  int area_weighted;       /* split each pair move by area instead of 1/2 : 1/2 */
  double tol;              /* legal when every overlap <= tol (absolute) */
  double delta0;           /* first compression step, relative to R */
  double delta_min;        /* compression ends below this step, relative to R */
  double delta_trial;      /* first compression step after a trial, relative to R */
  double trial_slack;      /* >= 0: a trial relaxes inside R_old (1 + trial_slack),
                              so a hopeless move fails after one short relaxation;
                              < 0: without a container (the seed's) */
  double accept_rel;       /* a trial must shrink R by this fraction to count */
  double p_swap_next;      /* move probabilities; the rest moves a circle outside */
  double p_swap;
  double p_jump;           /* jump: a circle to a random point inside the container
                              (insertion into a vacancy, as tabu searches do) */
  double accept_worse;     /* also keep a trial up to this fraction above the
                              candidate's record (record-to-record travel: a walk
                              over near-equal basins that cannot drift away);
                              0: improvements only */
  int band_levels;         /* candidate c keeps accept_worse * band_ratio^(c % levels):
                              a ladder of bands, so no one width rules the batch */
  double band_ratio;
  int walk_every;          /* > 0: candidate c with c % walk_every == walk_every - 1
                              runs a fixed-container walk (jl_relax_walk_step)
                              instead of trials */
  int walk_k;              /* neighbours a walk step tries */
  double walk_shrink;      /* a walk's container: the record times (1 - walk_shrink
                              * walk_ratio^ladder rung) */
  int walk_levels;         /* rungs of that ladder */
  double walk_ratio;
  int walk_tenure;         /* walk steps a moved circle may not move again */
  int walk_reset;          /* walk steps without a lower energy before the walk
                              starts again from the record */
  double walk_aim;         /* share of the walk's jumps that move a circle drawn
                              in proportion to its overlap energy (the rest draw
                              every circle alike) */
  int walk_probe;          /* JL_PROBE_*: a walk state of a new lowest energy
                              is also relaxed just below the record, where it
                              may be legal though not in Rt (jl_walk_probe) */
  int nbr;                 /* 1: contacts from per-candidate neighbour lists
                              (Verlet lists, jl_nbr_refresh) instead of all pairs;
                              the same bits, cheaper from a size on
                              (jl_circle_nbr_auto chooses by device and n) */
  double nbr_skin;         /* a list holds every j with d < r_i + r_j + nbr_skin;
                              rebuilt once a circle moved JL_NBR_REBUILD of it */
  uint64_t seed;
  int bench_steps;         /* > 0: benchmark launch, exactly this many relaxation
                              steps per candidate in a container 2% tighter
                              than its packing, instead of trials */
} jl_relax_params;

/* When a launch ends early: the host raises flag (at a deadline, or once a
 * signal set *stop) and every candidate ends its launch at its next poll,
 * its packing left as legal as a finished launch leaves it. On the GPU the
 * struct lives in host-mapped memory and the kernel reads only flag. */
typedef struct jl_circle_cut {
  int flag;                /* raised: end the launch */
  double at;               /* jl_time_now() at which to raise it (0: never) */
  volatile sig_atomic_t *stop; /* raise it once this is set (NULL: never) */
} jl_circle_cut;

/* Raises c->flag when its time has come; returns the flag (host code, both
 * paths: the CPU twin polls it, the GPU's host watches the launch with it). */
#ifdef __cplusplus
extern "C"
#endif
int jl_circle_cut_check(jl_circle_cut *c);

/* Pair evaluations between two polls of the cut (about a millisecond of one
 * CPU thread): a step costs n^2 of them (n JL_NBR_CAP with neighbour lists),
 * so small packings poll every few hundred steps and large ones every step
 * or every few. */
#define JL_CUT_POLL_PAIRS 1000000

/* need_start: a candidate's packing is its own (0), or is made first. */
enum { JL_START_NONE = 0, JL_START_RANDOM = 1, JL_START_PLACED = 2 };

/* A batch of candidates, structure of arrays, candidate-major. */
typedef struct jl_circle_batch {
  int n, count;
  double *r;               /* n radii, ascending (shared by all candidates) */
  double *x, *y;           /* count * n centres */
  double *R;               /* count container radii */
  double *R_rec;           /* each candidate's record: its smallest R since its
                              last start or adoption (0: none yet) */
  uint8_t *need_start;     /* before the trials, a start packing: JL_START_RANDOM from random
                              centres, JL_START_PLACED from the overlapping centres in x, y */
  uint32_t *stuck;         /* trials since the record last improved */
  uint64_t *rng_offset;    /* 32-bit draws used by each candidate's Philox stream */
  uint64_t *steps;         /* relaxation steps done, accumulated */
  uint64_t *trials_done;   /* trials done, accumulated */
  uint64_t *accepted;      /* improving trials, accumulated */
  double *wx, *wy;         /* count * n: a walking candidate's overlapping packing */
  double *Rt;              /* count: its walk's container (0: start the walk anew) */
  jl_circle_cut *cut;      /* NULL: the launch runs to its budget */
} jl_circle_batch;

#define JL_RELAX_REDUCE_SLOTS 32
/* Doubles of workspace per candidate: x y dx dy bx by sx sy r, the
 * reduction slots, the FIRE velocities vx vy and its three sum arrays, then
 * the walk's cx cy kx ky tabu (jl_relax_ws_bind). */
#define JL_RELAX_WS_DOUBLES(n) (19 * (size_t)(n) + JL_RELAX_REDUCE_SLOTS)

/* Neighbour lists (p->nbr): entries per circle. A circle with more (a
 * large circle among many small ones) takes all pairs until the next build. */
#define JL_NBR_CAP 32
/* A list is rebuilt once some circle has moved this share of the skin since
 * the build: two circles that were not listed (d >= s + skin) are then still
 * apart (d >= s + skin - 2 moves). 0.45 rather than 0.5 leaves a tenth of
 * the skin against rounding. */
#define JL_NBR_REBUILD 0.45
/* Lists hold circle indices as uint16_t. */
#define JL_NBR_MAX_N 65535
/* Doubles of neighbour-list scratch per candidate (global memory on the GPU,
 * a thread's scratch on the CPU): the positions at the build rx ry, then the
 * list lengths (n) and the lists (n * JL_NBR_CAP) as uint16_t. */
#define JL_NBR_DOUBLES(n) \
  (2 * (size_t)(n) + ((size_t)(n) * (1 + JL_NBR_CAP) * sizeof(uint16_t) + 7) / 8)

#ifdef __CUDACC__
#include <curand_kernel.h>
typedef curandStatePhilox4_32_10_t jl_rng_state;
#define JL_RELAX_FN static __device__ __forceinline__
#define JL_FOR(i, n) for (int i = (int)threadIdx.x; i < (n); i += (int)blockDim.x)
#define JL_SYNC() __syncthreads()
#define JL_LEADER (threadIdx.x == 0)
#define jl_rng_state_init(s, seed, sub, off) curand_init((seed), (sub), (off), (s))
#define jl_rng_state_next(s) curand(s)
/* Any thread may raise a block-wide flag (read after the next barrier). */
#define JL_RAISE(flag) atomicOr((flag), 1)
/* Entry k of circle i's list: by entry, so a warp reading entry k of its
 * circles reads consecutive addresses. */
#define JL_NBR_AT(n, i, k) ((size_t)(k) * (size_t)(n) + (size_t)(i))
#else
typedef jl_rng jl_rng_state;
#define JL_RELAX_FN static inline
#define JL_FOR(i, n) for (int i = 0; i < (n); ++i)
#define JL_SYNC() ((void)0)
#define JL_LEADER 1
#define jl_rng_state_init(s, seed, sub, off) jl_rng_init((s), (seed), (sub), (off))
#define jl_rng_state_next(s) jl_rng_u32(s)
#define JL_RAISE(flag) (*(flag) = 1)
/* by circle: one thread reads one list after another */
#define JL_NBR_AT(n, i, k) ((size_t)(i) * JL_NBR_CAP + (size_t)(k))
#endif

/* One candidate's working state: arrays in shared memory on the GPU (or a
 * thread's scratch on the CPU), scalars shared by the whole block. */
typedef struct jl_relax_ws {
  double *x, *y, *dx, *dy, *bx, *by, *sx, *sy, *r, *red;
  double *vx, *vy, *s0, *s1, *s2;
  double *cx, *cy, *kx, *ky, *tabu; /* the walk: its packing, the best neighbour,
                                       the step until which a circle is tabu */
  double *ce;              /* the walk: each circle's overlap energy at the start
                              of a step (shares bx: compression, its only other
                              user, ends the step) */
  double *rx, *ry;         /* neighbour lists (NULL nb: all pairs): the positions
                              at the last build */
  uint16_t *nbc, *nb;      /* each circle's list length (JL_NBR_CAP + 1: too
                              many, all pairs) and its list, ascending */
  int nb_stale;            /* 1: the lists must be built before their next use */
  uint64_t nb_builds;      /* list builds (tests and measurements) */
  double nb_lim2;          /* squared move since the build that makes them stale */
  jl_rng_state rng;
  uint64_t draws;          /* 32-bit draws taken from rng */
  uint64_t steps;
  double R;
  double R_rec;            /* the candidate's record (smallest R kept) */
  double band;             /* the candidate's accept_worse (its rung of the ladder) */
  int mi, mj;              /* the circles the walk's last move moved */
  double Rt, E, E_best;    /* the walk's container, energy, lowest energy */
  double kE;               /* the best neighbour's energy so far */
  int kmi, kmj;            /* and its moved circles */
  int since, iter;         /* walk steps since E_best fell; walk steps this launch */
  jl_circle_cut *cut_src;  /* the batch's cut (NULL: none) */
  int cut_every;           /* steps between polls (JL_CUT_POLL_PAIRS) */
  int cut_wait;            /* steps until the next poll (leader only) */
  int cut;                 /* 1: the launch was cut; every loop ends */
} jl_relax_ws;

/* The leader polls the cut every cut_every relaxation steps of the launch
 * (counted across calls: most relaxations end within a few dozen steps, and
 * a poll per call would read host memory thousands of times a launch), the
 * first at the launch's first step; the block reads w->cut only after the
 * step's closing barrier, so all threads leave the loop at the same step.
 * Called after the step's reductions. */
JL_RELAX_FN void jl_relax_poll_cut(jl_relax_ws *w) {
  if (!JL_LEADER) return;
  /* volatile: the other threads of the leader's warp must not load w->cut
   * here (nvcc turned the || chain into loads by every lane, which
   * racecheck reports against the leader's store) */
  volatile jl_relax_ws *v = w;
  if (!v->cut_src || v->cut || --v->cut_wait > 0) return;
  v->cut_wait = v->cut_every;
#ifdef __CUDA_ARCH__
  int raised = *(volatile int *)&v->cut_src->flag;
#else
  int raised = jl_circle_cut_check(v->cut_src);
#endif
  /* written once, when raised: no store while the others may read it */
  if (raised) v->cut = 1;
}

/* Max over the block of each thread's v. On the CPU the JL_FOR loop has
 * already covered every circle, so v is the answer. */
JL_RELAX_FN double jl_block_max(double v, double *red) {
#ifdef __CUDA_ARCH__
  for (int o = 16; o > 0; o >>= 1) v = jl_fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = red[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) v = jl_fmax(v, red[w]);
  return v;
#else
  (void)red;
  return v;
#endif
}

JL_RELAX_FN uint32_t jl_ws_draw(jl_relax_ws *w) {
  w->draws++;
  return jl_rng_state_next(&w->rng);
}

JL_RELAX_FN double jl_ws_u01(jl_relax_ws *w) {
  uint32_t a = jl_ws_draw(w);
  uint32_t b = jl_ws_draw(w);
  return jl_u01_from_u32(a, b);
}

/* Fraction of a pair's overlap that circle i takes: 1/2, or by area so the
 * heavier circle moves less (seed eq. 4.4 with rho = r_i^2 / r_j^2). */
JL_HD static inline double jl_pair_share(double ri, double rj, int area_weighted) {
  if (!area_weighted) return 0.5;
  return (rj * rj) / (ri * ri + rj * rj);
}

/* The contact of circle i with circle j (seed eq. 4.3-4.5): adds i's move
 * to (ax, ay) and raises ov to the overlap. Shared by every relaxation
 * kernel and its CPU twin, so they do the same arithmetic. */
JL_HD static inline void jl_pair_contact(int i, int j, double xi, double yi, double ri, double xj,
                                         double yj, double rj, int area_weighted,
                                         double *ax, double *ay, double *ov) {
  double ddx = xi - xj, ddy = yi - yj, sum = ri + rj;
  double d2 = ddx * ddx + ddy * ddy;
  if (j == i || d2 >= sum * sum) return;
  double d = sqrt(d2);
  double share = jl_pair_share(ri, rj, area_weighted);
  *ov = jl_fmax(*ov, sum - d);
  if (d > 0.0) {
    /* (sum - d) along the unit normal, i.e. (sum/d - 1)(c_i - c_j).
     * Eq. 4.3 as printed, (1 - d/sum)(c_i - c_j), falls short of
     * separation by the factor d/sum (docs/design.md). */
    double f = share * (sum / d - 1.0);
    *ax += f * ddx;
    *ay += f * ddy;
  } else {
    /* coincident centres: separate along x, lower index to the left */
    *ax += (i < j ? -share : share) * sum;
  }
}

/* A circle poking out of the container of radius Rc moves back onto it. */
JL_HD static inline void jl_container_contact(double xi, double yi, double ri, double Rc,
                                              double *ax, double *ay, double *ov) {
  double lim = jl_fmax(Rc - ri, 0.0);
  double rho2 = xi * xi + yi * yi;
  if (rho2 <= lim * lim) return;
  double rho = sqrt(rho2);
  double f = (rho - lim) / rho;
  *ov = jl_fmax(*ov, rho - lim);
  *ax -= f * xi;
  *ay -= f * yi;
}

/* Circle i's contacts with every circle j = 0..n-1 (jl_pair_contact, in
 * ascending j). Most pairs do not touch, so each chunk of 64 circles is
 * first tested without a branch into a bit mask, and only the touching
 * pairs then take the square root and division, still in ascending j: the
 * same additions as the plain loop, so the same bits. Without the branch per
 * pair the device keeps many tests in flight at once. */
JL_HD static inline void jl_circle_contacts(int i, double xi, double yi, double ri,
                                            const double *x, const double *y, const double *r,
                                            int n, int area_weighted, double *ax, double *ay,
                                            double *ov) {
  for (int j0 = 0; j0 < n; j0 += 64) {
    int m = n - j0 < 64 ? n - j0 : 64;
    uint64_t hit = 0;
    for (int k = 0; k < m; ++k) {
      double ddx = xi - x[j0 + k], ddy = yi - y[j0 + k], sum = ri + r[j0 + k];
      double d2 = ddx * ddx + ddy * ddy;
      hit |= (uint64_t)!(d2 >= sum * sum) << k;
    }
    if (i >= j0 && i < j0 + m) hit &= ~((uint64_t)1 << (i - j0));
    while (hit) {
#ifdef __CUDA_ARCH__
      int k = __ffsll((long long)hit) - 1;
#else
      int k = __builtin_ctzll(hit);
#endif
      hit &= hit - 1;
      int j = j0 + k;
      jl_pair_contact(i, j, xi, yi, ri, x[j], y[j], r[j], area_weighted, ax, ay, ov);
    }
  }
}

/* Circle i's contacts with the circles of its neighbour list, in ascending
 * j. The list holds every circle that touches i (and a few that do not),
 * and jl_pair_contact adds only touching pairs, so these are the additions
 * of jl_circle_contacts: the same bits. */
JL_HD static inline void jl_circle_contacts_list(int i, double xi, double yi, double ri,
                                                 const double *x, const double *y,
                                                 const double *r, const uint16_t *nb, int n,
                                                 int cnt, int area_weighted, double *ax,
                                                 double *ay, double *ov) {
  (void)n;  /* the CPU layout does not need it */
  for (int k = 0; k < cnt; ++k) {
    int j = nb[JL_NBR_AT(n, i, k)];
    jl_pair_contact(i, j, xi, yi, ri, x[j], y[j], r[j], area_weighted, ax, ay, ov);
  }
}

/* Circle i's contacts: from its neighbour list while it has one, else from
 * all pairs. The lists must be current (jl_nbr_refresh). */
JL_RELAX_FN void jl_ws_contacts(const jl_relax_ws *w, int n, int i, double xi, double yi,
                                double ri, int area_weighted, double *ax, double *ay,
                                double *ov) {
  int cnt = w->nb ? w->nbc[i] : JL_NBR_CAP + 1;
  if (cnt <= JL_NBR_CAP)
    jl_circle_contacts_list(i, xi, yi, ri, w->x, w->y, w->r, w->nb, n, cnt, area_weighted, ax,
                            ay, ov);
  else
    jl_circle_contacts(i, xi, yi, ri, w->x, w->y, w->r, n, area_weighted, ax, ay, ov);
}

/* Points the neighbour lists at nbmem (JL_NBR_DOUBLES(n); NULL: all pairs)
 * and marks them for a build before their first use. */
JL_RELAX_FN void jl_relax_ws_bind_nbr(jl_relax_ws *w, double *nbmem, int n, double skin) {
  w->nb_builds = 0;
  if (!nbmem || n > JL_NBR_MAX_N || !(skin > 0.0)) {
    w->rx = w->ry = NULL;
    w->nbc = w->nb = NULL;
    w->nb_stale = 0;  /* never: there is nothing to build */
    return;
  }
  w->nb_stale = 1;
  w->rx = nbmem;
  w->ry = nbmem + n;
  w->nbc = (uint16_t *)(nbmem + 2 * (size_t)n);
  w->nb = w->nbc + n;
  double lim = JL_NBR_REBUILD * skin;
  w->nb_lim2 = lim * lim;
}

/* Builds every circle's list: each j != i with d < r_i + r_j + skin, in
 * ascending j (a scan over all j, tested a chunk of 64 at a time without a
 * branch as in jl_circle_contacts; its cost is one all-pairs step, paid once
 * per rebuild), and records the positions. */
JL_RELAX_FN void jl_nbr_build(jl_relax_ws *w, const jl_relax_params *p) {
  const int n = p->n;
  const double *x = w->x, *y = w->y, *r = w->r;
  JL_FOR(i, n) {
    double xi = x[i], yi = y[i], ri = r[i] + p->nbr_skin;
    int cnt = 0;
    for (int j0 = 0; j0 < n && cnt <= JL_NBR_CAP; j0 += 64) {
      int m = n - j0 < 64 ? n - j0 : 64;
      uint64_t hit = 0;
      for (int k = 0; k < m; ++k) {
        double ddx = xi - x[j0 + k], ddy = yi - y[j0 + k], cut = ri + r[j0 + k];
        /* !(>=), as in jl_circle_contacts: a NaN distance is listed too */
        hit |= (uint64_t)!(ddx * ddx + ddy * ddy >= cut * cut) << k;
      }
      if (i >= j0 && i < j0 + m) hit &= ~((uint64_t)1 << (i - j0));
      while (hit && cnt <= JL_NBR_CAP) {
#ifdef __CUDA_ARCH__
        int k = __ffsll((long long)hit) - 1;
#else
        int k = __builtin_ctzll(hit);
#endif
        hit &= hit - 1;
        if (cnt < JL_NBR_CAP) w->nb[JL_NBR_AT(n, i, cnt)] = (uint16_t)(j0 + k);
        cnt++;
      }
    }
    w->nbc[i] = (uint16_t)cnt;  /* JL_NBR_CAP + 1: too many, all pairs */
    w->rx[i] = xi;
    w->ry[i] = yi;
  }
  /* every thread has read nb_stale (it entered here) before it falls */
  JL_SYNC();
  if (JL_LEADER) {
    w->nb_stale = 0;
    w->nb_builds++;
  }
}

/* Circle i moved (after a relaxation step): the lists go stale once it is
 * JL_NBR_REBUILD of the skin from where they were built. */
JL_RELAX_FN void jl_nbr_moved(jl_relax_ws *w, int i) {
  double ex = w->x[i] - w->rx[i], ey = w->y[i] - w->ry[i];
  if (!(ex * ex + ey * ey <= w->nb_lim2)) JL_RAISE(&w->nb_stale);
}

/* Makes the lists current for the packing in x, y, whatever moved it since
 * (a move, a restore, a copy): rebuilt when stale or when some circle is
 * JL_NBR_REBUILD of the skin from where they were built. Inside a
 * relaxation the steps keep them current (jl_nbr_moved). */
JL_RELAX_FN void jl_nbr_refresh(jl_relax_ws *w, const jl_relax_params *p) {
  if (!w->nb) return;
  double m = 0.0;
  JL_FOR(i, p->n) {
    double ex = w->x[i] - w->rx[i], ey = w->y[i] - w->ry[i];
    if (!(ex * ex + ey * ey <= w->nb_lim2)) m = 1.0;
  }
  m = jl_block_max(m, w->red);
  if (m > 0.0 || w->nb_stale) jl_nbr_build(w, p);
}

/* Smallest container centred at the origin: max |c_i| + r_i. */
JL_RELAX_FN double jl_relax_enclosing(jl_relax_ws *w, int n) {
  double m = 0.0;
  JL_FOR(i, n) { m = jl_fmax(m, sqrt(w->x[i] * w->x[i] + w->y[i] * w->y[i]) + w->r[i]); }
  return jl_block_max(m, w->red);
}

/* Contact relaxation (seed eq. 4.3-4.5): every overlapping pair moves both
 * circles along the centre line just far enough to separate that pair; a
 * circle poking out of the container of radius Rc is moved back onto it.
 * Moves are summed over pairs and applied together (Jacobi). Returns 1 as
 * soon as the largest overlap is <= tol, 0 after max_steps. */
JL_RELAX_FN int jl_relax_run_jacobi(jl_relax_ws *w, const jl_relax_params *p, double Rc,
                                   int max_steps) {
  const int n = p->n;
  double *x = w->x, *y = w->y, *r = w->r;
  double checkpoint = INFINITY;
  for (int s = 0; s < max_steps; ++s) {
    if (w->cut) return 0;
    if (w->nb_stale) jl_nbr_build(w, p);
    double worst = 0.0;
    JL_FOR(i, n) {
      double xi = x[i], yi = y[i], ri = r[i];
      double ax = 0.0, ay = 0.0, ov = 0.0;
      jl_ws_contacts(w, n, i, xi, yi, ri, p->area_weighted, &ax, &ay, &ov);
      jl_container_contact(xi, yi, ri, Rc, &ax, &ay, &ov);
      w->dx[i] = ax;
      w->dy[i] = ay;
      worst = jl_fmax(worst, ov);
    }
    worst = jl_block_max(worst, w->red);
    if (worst <= p->tol) return 1;
    /* Jammed: the overlap no longer falls geometrically, so more steps
     * would only creep. */
    if ((s & 15) == 15) {
      if (worst > p->stall_ratio * checkpoint) return 0;
      checkpoint = worst;
    }
    jl_relax_poll_cut(w);
    if (JL_LEADER) w->steps++;
    JL_FOR(i, n) {
      x[i] += w->dx[i];
      y[i] += w->dy[i];
      if (w->nb) jl_nbr_moved(w, i);
    }
    JL_SYNC();
  }
  return 0;
}

#ifdef __CUDA_ARCH__
/* The rounds of jl_block_sum3's tree once its m live entries sit in one
 * warp's registers (lane i holds entry i): entry i += entry i + h by
 * shuffles, the same additions in the same order; lane 0 ends with the sums. */
static __device__ __forceinline__ void jl_warp_tree3(int m, int lane, double *va, double *vb,
                                                     double *vc) {
  while (m > 1) {
    int h = (m + 1) >> 1;
    double oa = __shfl_down_sync(0xffffffffu, *va, h);
    double ob = __shfl_down_sync(0xffffffffu, *vb, h);
    double oc = __shfl_down_sync(0xffffffffu, *vc, h);
    if (lane < m - h) {
      *va += oa;
      *vb += ob;
      *vc += oc;
    }
    m = h;
  }
}
#endif

/* Sums of a, b and c over n entries by one fixed pairwise tree, the same on
 * both paths (a block-wide shuffle sum would round differently from a CPU
 * loop). Leaves the sums in a[0], b[0], c[0]; the caller syncs before. */
JL_RELAX_FN void jl_block_sum3(double *a, double *b, double *c, int n) {
  int m = n;
#ifdef __CUDA_ARCH__
  /* The same tree, but once the live entries fit in one warp its rounds go
   * by shuffles (a[i] + a[i + h], the same additions in the same order)
   * instead of a block barrier each: 2 barriers instead of 6 at n = 50. */
  while (m > 32) {
    int h = (m + 1) >> 1;
    JL_FOR(i, m - h) {
      a[i] += a[i + h];
      b[i] += b[i + h];
      c[i] += c[i + h];
    }
    JL_SYNC();
    m = h;
  }
  if (threadIdx.x < 32) {
    int lane = (int)threadIdx.x;
    double va = lane < m ? a[lane] : 0.0, vb = lane < m ? b[lane] : 0.0,
           vc = lane < m ? c[lane] : 0.0;
    jl_warp_tree3(m, lane, &va, &vb, &vc);
    if (lane == 0) {
      a[0] = va;
      b[0] = vb;
      c[0] = vc;
    }
  }
  JL_SYNC();
#else
  while (m > 1) {
    int h = (m + 1) >> 1;
    JL_FOR(i, m - h) {
      a[i] += a[i + h];
      b[i] += b[i + h];
      c[i] += c[i + h];
    }
    m = h;
  }
#endif
}

/* FIRE's reductions of one step: the largest overlap (returned) and the sums
 * P = F.v, F2 = |F|^2, V2 = |v|^2 of the arrays s0, s1, s2 by the tree of
 * jl_block_sum3. Every thread gets them, and may write the arrays again.
 * On the device, up to 64 circles (the contest sizes), warp 0 does the whole
 * tree after one barrier (its first round, a[i] + a[i + h], in registers;
 * the same additions in the same order) and a second barrier hands the
 * results out: 2 barriers a step instead of 5. */
JL_RELAX_FN double jl_fire_reduce(jl_relax_ws *w, int n, double worst, double *P, double *F2,
                                  double *V2) {
#ifdef __CUDA_ARCH__
  if (n <= 64) {
    double *red = w->red;
    int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
    for (int o = 16; o > 0; o >>= 1) worst = jl_fmax(worst, __shfl_xor_sync(0xffffffffu, worst, o));
    if (lane == 0) red[warp] = worst;
    __syncthreads();  /* the sum arrays and the warps' maxima are complete */
    if (warp == 0) {
      double m = red[0];
      for (int k = 1; k < (int)(blockDim.x >> 5); ++k) m = jl_fmax(m, red[k]);
      int live = n;
      double va = lane < live ? w->s0[lane] : 0.0, vb = lane < live ? w->s1[lane] : 0.0,
             vc = lane < live ? w->s2[lane] : 0.0;
      if (live > 32) {
        int h = (live + 1) >> 1;
        if (lane < live - h) {
          va += w->s0[lane + h];
          vb += w->s1[lane + h];
          vc += w->s2[lane + h];
        }
        live = h;
      }
      jl_warp_tree3(live, lane, &va, &vb, &vc);
      if (lane == 0) {
        red[JL_RELAX_REDUCE_SLOTS / 2] = m;
        red[JL_RELAX_REDUCE_SLOTS / 2 + 1] = va;
        red[JL_RELAX_REDUCE_SLOTS / 2 + 2] = vb;
        red[JL_RELAX_REDUCE_SLOTS / 2 + 3] = vc;
      }
    }
    __syncthreads();
    /* read before the next step's first barrier, after which warp 0 writes
     * these slots again */
    *P = red[JL_RELAX_REDUCE_SLOTS / 2 + 1];
    *F2 = red[JL_RELAX_REDUCE_SLOTS / 2 + 2];
    *V2 = red[JL_RELAX_REDUCE_SLOTS / 2 + 3];
    return red[JL_RELAX_REDUCE_SLOTS / 2];
  }
#endif
  worst = jl_block_max(worst, w->red); /* syncs: the sum arrays are complete */
  jl_block_sum3(w->s0, w->s1, w->s2, n);
  *P = w->s0[0];
  *F2 = w->s1[0];
  *V2 = w->s2[0];
  /* every thread has read the sums before anyone writes them again */
  JL_SYNC();
  return worst;
}

/* Contact relaxation by FIRE: the Jacobi moves are read as forces on unit
 * masses (they are minus the gradient of the summed squared overlaps), and
 * the circles move by damped inertial dynamics that steer along the force
 * and speed up while the power F.v stays positive. A jammed packing that
 * Jacobi leaves creeping is taken out in a few hundred steps, so trials are
 * compared at their true local optimum rather than wherever Jacobi stalled.
 * Same contract as jl_relax_run_jacobi. */
JL_RELAX_FN int jl_relax_run_fire(jl_relax_ws *w, const jl_relax_params *p, double Rc,
                                 int max_steps) {
  const int n = p->n;
  double *x = w->x, *y = w->y, *r = w->r;
  JL_FOR(i, n) { w->vx[i] = 0.0; w->vy[i] = 0.0; }
  double dt = p->fire_dt0, alpha = JL_FIRE_ALPHA0;
  int npos = 0;
  double checkpoint = INFINITY;
  JL_SYNC();
  for (int s = 0; s < max_steps; ++s) {
    if (w->cut) return 0;
    if (w->nb_stale) jl_nbr_build(w, p);
    double worst = 0.0;
    JL_FOR(i, n) {
      double xi = x[i], yi = y[i], ri = r[i];
      double ax = 0.0, ay = 0.0, ov = 0.0;
      jl_ws_contacts(w, n, i, xi, yi, ri, p->area_weighted, &ax, &ay, &ov);
      jl_container_contact(xi, yi, ri, Rc, &ax, &ay, &ov);
      w->dx[i] = ax;
      w->dy[i] = ay;
      w->s0[i] = ax * w->vx[i] + ay * w->vy[i];
      w->s1[i] = ax * ax + ay * ay;
      w->s2[i] = w->vx[i] * w->vx[i] + w->vy[i] * w->vy[i];
      worst = jl_fmax(worst, ov);
    }
    double P, F2, V2;
    worst = jl_fire_reduce(w, n, worst, &P, &F2, &V2);
    if (worst <= p->tol) return 1;
    if (s % JL_FIRE_STALL_WINDOW == JL_FIRE_STALL_WINDOW - 1) {
      if (worst > p->stall_ratio * checkpoint) return 0;
      checkpoint = worst;
    }
    jl_relax_poll_cut(w);
    if (JL_LEADER) w->steps++;
    double keep = 1.0, back = 0.0;
    if (P > 0.0) {
      if (++npos > JL_FIRE_N_DELAY) {
        dt = fmin(dt * JL_FIRE_F_INC, p->fire_dtmax);
        alpha *= JL_FIRE_F_ALPHA;
      }
    } else {
      /* uphill: step half back, stop, and start again slowly */
      npos = 0;
      dt *= JL_FIRE_F_DEC;
      alpha = JL_FIRE_ALPHA0;
      back = 0.5 * dt;
      keep = 0.0;
      V2 = 0.0;
      P = 0.0;
    }
    /* |v + dt F|^2 from the sums, so one reduction per step suffices */
    double V2n = V2 + 2.0 * dt * P + dt * dt * F2;
    double mix = F2 > 0.0 ? alpha * sqrt(V2n / F2) : 0.0;
    JL_FOR(i, n) {
      double vx = w->vx[i], vy = w->vy[i];
      double ox = x[i] - back * vx, oy = y[i] - back * vy;
      vx = keep * vx + dt * w->dx[i];
      vy = keep * vy + dt * w->dy[i];
      vx = (1.0 - alpha) * vx + mix * w->dx[i];
      vy = (1.0 - alpha) * vy + mix * w->dy[i];
      w->vx[i] = vx;
      w->vy[i] = vy;
      x[i] = ox + dt * vx;
      y[i] = oy + dt * vy;
      if (w->nb) jl_nbr_moved(w, i);
    }
    JL_SYNC();
  }
  return 0;
}

/* Legalization by the chosen method: returns 1 as soon as the largest
 * overlap is <= tol, 0 when it stalls or after max_steps. */
JL_RELAX_FN int jl_relax_run(jl_relax_ws *w, const jl_relax_params *p, double Rc, int max_steps) {
  jl_nbr_refresh(w, p);
  if (p->relax == JL_RELAX_FIRE) return jl_relax_run_fire(w, p, Rc, max_steps);
  return jl_relax_run_jacobi(w, p, Rc, max_steps);
}

JL_RELAX_FN void jl_relax_save(jl_relax_ws *w, int n, double *bx, double *by) {
  JL_FOR(i, n) { bx[i] = w->x[i]; by[i] = w->y[i]; }
  JL_SYNC();
}

JL_RELAX_FN void jl_relax_restore(jl_relax_ws *w, int n, const double *bx, const double *by) {
  JL_FOR(i, n) { w->x[i] = bx[i]; w->y[i] = by[i]; }
  JL_SYNC();
}

/* Compression (seed 4.1.2): shrink the container by delta and relax; every
 * circle outside the new container is moved toward the origin, which for the
 * outermost circle alone is the seed's move. On success the step doubles, on
 * failure the packing is restored and the step halves, until it is below
 * delta_min * R. Leaves w->R at the enclosing radius of the final packing.
 * The first step is d0 * R: large for a random start, small after a trial
 * that already fits near the old container. */
JL_RELAX_FN void jl_relax_compress_from(jl_relax_ws *w, const jl_relax_params *p, double d0) {
  const int n = p->n;
  double R = jl_relax_enclosing(w, n);
  double delta = d0 * R;
  for (int it = 0; it < p->compress_iters && delta > p->delta_min * R && !w->cut; ++it) {
    jl_relax_save(w, n, w->bx, w->by);
    int ok = jl_relax_run(w, p, R - delta, p->max_steps);
    double Rn = ok ? jl_relax_enclosing(w, n) : R;
    if (ok && Rn < R) {
      R = Rn;
      delta = fmin(2.0 * delta, p->delta0 * R);
    } else {
      jl_relax_restore(w, n, w->bx, w->by);
      delta *= 0.5;
    }
  }
  /* every thread holds the same R; one writes it (no shared-memory race) */
  if (JL_LEADER) w->R = R;
  JL_SYNC();
}

JL_RELAX_FN void jl_relax_compress(jl_relax_ws *w, const jl_relax_params *p) {
  jl_relax_compress_from(w, p, p->delta0);
}

/* Random start (seed 4.1.2.1, first option): centres uniform in a square
 * sized by the total area, relaxed without a container, then scaled apart
 * so that it is legal whatever the relaxation left, then compressed.
 * placed: the centres already in x, y instead (a crossover's child). */
JL_RELAX_FN void jl_relax_start(jl_relax_ws *w, const jl_relax_params *p, int placed) {
  const int n = p->n;
  if (!placed && JL_LEADER) {
    double area = 0.0;
    for (int i = 0; i < n; ++i) area += w->r[i] * w->r[i];
    double half = 1.2 * sqrt(area);
    for (int i = 0; i < n; ++i) {
      w->x[i] = (2.0 * jl_ws_u01(w) - 1.0) * half;
      w->y[i] = (2.0 * jl_ws_u01(w) - 1.0) * half;
    }
  }
  JL_SYNC();
  jl_relax_run(w, p, INFINITY, 4 * p->max_steps);
  jl_nbr_refresh(w, p);
  double s = 1.0;
  JL_FOR(i, n) {
    /* every overlapping pair is listed; a maximum needs no order */
    int cnt = w->nb ? w->nbc[i] : JL_NBR_CAP + 1, all = cnt > JL_NBR_CAP;
    for (int k = 0; k < (all ? n : cnt); ++k) {
      int j = all ? k : w->nb[JL_NBR_AT(n, i, k)];
      double ddx = w->x[i] - w->x[j], ddy = w->y[i] - w->y[j], sum = w->r[i] + w->r[j];
      double d2 = ddx * ddx + ddy * ddy;
      if (j != i && d2 < sum * sum) s = jl_fmax(s, d2 > 0.0 ? sum / sqrt(d2) : 2.0);
    }
  }
  s = jl_block_max(s, w->red);
  if (s > 1.0) {
    s *= 1.0 + 1e-12;
    JL_FOR(i, n) { w->x[i] *= s; w->y[i] *= s; }
    JL_SYNC();
  }
  jl_relax_compress(w, p);
}

/* The circles of a move: swap circle i with the next strictly larger one,
 * swap two random circles, or (any other kind) circle i alone. */
JL_RELAX_FN void jl_move_pick(jl_relax_ws *w, int n, int kind, int *pi, int *pj) {
  int i = (int)jl_uint_below(jl_ws_draw(w), (uint32_t)n), j = i;
  if (kind == JL_MOVE_SWAP_NEXT) {
    i = (int)jl_uint_below(jl_ws_draw(w), (uint32_t)(n - 1));
    j = i + 1;
    while (j < n - 1 && w->r[j] == w->r[i]) ++j;   /* next strictly larger */
  } else if (kind == JL_MOVE_SWAP) {
    j = (int)jl_uint_below(jl_ws_draw(w), (uint32_t)(n - 1));
    if (j >= i) ++j;
  }
  *pi = i;
  *pj = j;
}

/* A uniform point of the unit disk with |u|^2 >= qmin, by rejection;
 * returns |u|^2. */
JL_RELAX_FN double jl_disk_point(jl_relax_ws *w, double qmin, double *ux, double *uy) {
  double q;
  do {
    *ux = 2.0 * jl_ws_u01(w) - 1.0;
    *uy = 2.0 * jl_ws_u01(w) - 1.0;
    q = *ux * *ux + *uy * *uy;
  } while (q > 1.0 || q < qmin);
  return q;
}

JL_RELAX_FN void jl_swap_centres(jl_relax_ws *w, int i, int j) {
  double tx = w->x[i], ty = w->y[i];
  w->x[i] = w->x[j]; w->y[i] = w->y[j];
  w->x[j] = tx;      w->y[j] = ty;
}

/* One improvement trial (seed 4.1.2.2, plus the jump move):
 * the leader picks a move, the block applies it and relaxes, inside a
 * container a little larger than the one the trial must beat, so a hopeless
 * move fails after one short relaxation, then compresses. The new packing
 * is kept when it is at most accept_worse above the candidate's record
 * (record-to-record travel). Returns 1 when it improved the record by more
 * than accept_rel. */
JL_RELAX_FN int jl_relax_trial(jl_relax_ws *w, const jl_relax_params *p) {
  const int n = p->n;
  double R0 = w->R;
  jl_relax_save(w, n, w->sx, w->sy);
  if (JL_LEADER) {
    double u = jl_ws_u01(w);
    double c1 = p->p_swap_next, c2 = c1 + p->p_swap, c3 = c2 + p->p_jump;
    int kind = u < c1 ? JL_MOVE_SWAP_NEXT : u < c2 ? JL_MOVE_SWAP
             : u < c3 ? JL_MOVE_JUMP : JL_MOVE_OUTSIDE;
    int i, j;
    jl_move_pick(w, n, kind, &i, &j);
    if ((kind == JL_MOVE_SWAP_NEXT || kind == JL_MOVE_SWAP) && w->r[i] == w->r[j])
      kind = JL_MOVE_OUTSIDE;
    if (kind == JL_MOVE_JUMP) {
      double ux, uy, lim = jl_fmax(R0 - w->r[i], 0.0);
      jl_disk_point(w, 0.0, &ux, &uy);
      w->x[i] = ux * lim;
      w->y[i] = uy * lim;
    } else if (kind == JL_MOVE_OUTSIDE) {
      double ux, uy;
      double dist = (R0 + w->r[i]) / sqrt(jl_disk_point(w, 1e-6, &ux, &uy));
      w->x[i] = ux * dist;
      w->y[i] = uy * dist;
    } else {
      jl_swap_centres(w, i, j);
    }
  }
  JL_SYNC();
  int improved = 0, kept = 0;
  int fenced = p->trial_slack >= 0.0;
  double R_keep = w->R_rec * (1.0 + w->band);
  double Rc = fenced ? R_keep * (1.0 + p->trial_slack) : INFINITY;
  if (jl_relax_run(w, p, Rc, 4 * p->max_steps)) {
    jl_relax_compress_from(w, p, fenced ? p->delta_trial : p->delta0);
    improved = w->R < w->R_rec * (1.0 - p->accept_rel);
    kept = improved || w->R < R_keep;
  }
  /* every thread has read R_rec before the leader moves it */
  JL_SYNC();
  if (improved && JL_LEADER) w->R_rec = w->R;
  if (!kept) {
    jl_relax_restore(w, n, w->sx, w->sy);
    if (JL_LEADER) w->R = R0;
    JL_SYNC();
  }
  return improved;
}

/* Circle i's share of the overlap energy in a container of radius Rc: a
 * quarter of its squared overlap with each circle it overlaps (the other
 * circle holds the other quarter), half its squared excess over Rc. */
JL_RELAX_FN double jl_circle_energy(const jl_relax_ws *w, int n, int i, double Rc) {
  const double *x = w->x, *y = w->y, *r = w->r;
  double e = 0.0;
  /* from i's neighbour list while it has one (jl_nbr_refresh): it holds
   * every circle that overlaps i, in ascending j, so the same additions */
  int cnt = w->nb ? w->nbc[i] : JL_NBR_CAP + 1, all = cnt > JL_NBR_CAP;
  for (int k = 0; k < (all ? n : cnt); ++k) {
    int j = all ? k : w->nb[JL_NBR_AT(n, i, k)];
    double ddx = x[i] - x[j], ddy = y[i] - y[j], sum = r[i] + r[j];
    double d2 = ddx * ddx + ddy * ddy;
    if (j != i && d2 < sum * sum) {
      double ov = sum - sqrt(d2);
      e += 0.25 * ov * ov;
    }
  }
  double lim = jl_fmax(Rc - r[i], 0.0), rho = sqrt(x[i] * x[i] + y[i] * y[i]);
  if (rho > lim) e += 0.5 * (rho - lim) * (rho - lim);
  return e;
}

/* The overlap energy of the packing in a container of radius Rc: the energy
 * whose negative gradient the relaxation moves follow, the sum of the
 * circles' shares. Summed by the fixed tree of jl_block_sum3 (in s0; s1 and
 * s2 are scratch), so both paths get the same bits. */
JL_RELAX_FN double jl_relax_energy(jl_relax_ws *w, const jl_relax_params *p, double Rc) {
  const int n = p->n;
  jl_nbr_refresh(w, p);
  JL_FOR(i, n) {
    w->s0[i] = jl_circle_energy(w, n, i, Rc);
    w->s1[i] = 0.0;
    w->s2[i] = 0.0;
  }
  JL_SYNC();
  jl_block_sum3(w->s0, w->s1, w->s2, n);
  double E = w->s0[0];
  /* every thread has read the sum before the arrays are written again */
  JL_SYNC();
  return E;
}

JL_RELAX_FN void jl_copy_xy(double *tx, double *ty, const double *fx, const double *fy, int n) {
  JL_FOR(i, n) { tx[i] = fx[i]; ty[i] = fy[i]; }
  JL_SYNC();
}

/* A circle drawn in proportion to its energy ce (fallback: none has any). */
JL_RELAX_FN int jl_walk_aimed_circle(jl_relax_ws *w, int n, int fallback) {
  double tot = 0.0;
  for (int k = 0; k < n; ++k) tot += w->ce[k];
  if (!(tot > 0.0)) return fallback;
  double u = jl_ws_u01(w) * tot, acc = 0.0;
  int i;
  for (i = 0; i < n - 1; ++i) {
    acc += w->ce[i];
    if (u < acc) break;
  }
  return i;
}

/* The leader's walk move: swap two circles of different radii (mostly
 * neighbours in size) or put one at a random point of the container, with
 * circles that moved in the last walk_tenure steps left alone. An aimed
 * jump (walk_aim; measured at JL_WALK_AIM_DEFAULT) moves a circle where the
 * packing hurts, tabu or not. */
JL_RELAX_FN void jl_walk_move(jl_relax_ws *w, const jl_relax_params *p) {
  const int n = p->n;
  int kind = JL_MOVE_JUMP, i = 0, j = 0;
  for (int tries = 0; tries < 8; ++tries) {
    double u = jl_ws_u01(w);
    double c1 = p->p_swap_next, c2 = c1 + p->p_swap;
    kind = u < c1 ? JL_MOVE_SWAP_NEXT : u < c2 ? JL_MOVE_SWAP : JL_MOVE_JUMP;
    jl_move_pick(w, n, kind, &i, &j);
    if (kind != JL_MOVE_JUMP && w->r[i] == w->r[j]) kind = JL_MOVE_JUMP;
    if (w->tabu[i] <= (double)w->iter && w->tabu[j] <= (double)w->iter) break;
  }
  if (kind == JL_MOVE_JUMP && p->walk_aim > 0.0 && jl_ws_u01(w) < p->walk_aim)
    i = jl_walk_aimed_circle(w, n, i);
  if (kind == JL_MOVE_JUMP) {
    double ux, uy, lim = jl_fmax(w->Rt - w->r[i], 0.0);
    jl_disk_point(w, 0.0, &ux, &uy);
    w->x[i] = ux * lim;
    w->y[i] = uy * lim;
  } else {
    jl_swap_centres(w, i, j);
  }
  w->mi = i;
  w->mj = j;
}

/* The walk's container for a record R: below it by the candidate's rung. */
JL_RELAX_FN double jl_walk_container(const jl_relax_params *p, int c, double R) {
  double s = p->walk_shrink;
  for (int l = 0; p->walk_levels > 1 && l < (c / p->walk_every) % p->walk_levels; ++l)
    s *= p->walk_ratio;
  return R * (1.0 - s);
}

/* The walk settles at the packing in x, y in its container Rt (on entering,
 * or resuming from the batch): no circle tabu, its energy the best so far. */
JL_RELAX_FN void jl_walk_settle(jl_relax_ws *w, const jl_relax_params *p, double Rt) {
  JL_FOR(i, p->n) w->tabu[i] = 0.0;
  if (JL_LEADER) { w->Rt = Rt; w->since = 0; }
  JL_SYNC();
  double E = jl_relax_energy(w, p, Rt);
  if (JL_LEADER) { w->E = E; w->E_best = E; }
  JL_SYNC();
}

/* The walk enters the container below the candidate's record from its
 * legal packing (sx, sy, enclosing radius R): scaled by Rt / R, relaxed in
 * Rt, its energy taken. Returns 1 when the relaxed packing is legal in Rt. */
JL_RELAX_FN int jl_walk_enter(jl_relax_ws *w, const jl_relax_params *p, int c) {
  const int n = p->n;
  double Rt = jl_walk_container(p, c, w->R_rec);
  double f = Rt / w->R;
  JL_FOR(i, n) { w->x[i] = w->sx[i] * f; w->y[i] = w->sy[i] * f; }
  JL_SYNC();
  int legal = jl_relax_run(w, p, Rt, 4 * p->max_steps);
  jl_walk_settle(w, p, Rt);
  return legal;
}

/* The compressed packing in x, y (enclosing radius R) becomes the
 * candidate's packing, and its record where below it. */
JL_RELAX_FN void jl_walk_take(jl_relax_ws *w, const jl_relax_params *p) {
  JL_SYNC();
  if (JL_LEADER && w->R < w->R_rec) w->R_rec = w->R;
  jl_copy_xy(w->sx, w->sy, w->x, w->y, p->n);
}

/* The packing in x, y is legal in the walk's container: it is compressed,
 * becomes the candidate's packing and record (sx, sy, R, R_rec), and the
 * walk enters the container below the new record. Returns 1 when the
 * record fell. */
JL_RELAX_FN int jl_walk_found(jl_relax_ws *w, const jl_relax_params *p, int c) {
  jl_relax_compress_from(w, p, p->delta_trial);
  int improved = w->R < w->R_rec * (1.0 - p->accept_rel);
  jl_walk_take(w, p);
  /* one level deep: a walk that enters legal again counts on its next step */
  jl_walk_enter(w, p, c);
  return improved;
}

/* The walk begins from the candidate's legal packing (sx, sy). */
JL_RELAX_FN int jl_walk_begin(jl_relax_ws *w, const jl_relax_params *p, int c) {
  return jl_walk_enter(w, p, c) ? jl_walk_found(w, p, c) : 0;
}

JL_RELAX_FN int jl_walk_probe(jl_relax_ws *w, const jl_relax_params *p, int c);

/* One step of a fixed-container walk (the penalty search of the tabu and
 * quasi-physical methods for this problem): walk_k moves from the walk's
 * packing, each relaxed in the container Rt below the record; the packing
 * moves to the neighbour of least overlap energy, and the moved circles
 * turn tabu. A neighbour that is legal
 * at Rt is a new record. Returns 1 when the record fell. */
JL_RELAX_FN int jl_relax_walk_step(jl_relax_ws *w, const jl_relax_params *p, int c) {
  const int n = p->n;
  double Rt = w->Rt;
  jl_copy_xy(w->cx, w->cy, w->x, w->y, n);
  if (p->walk_aim > 0.0) {
    jl_nbr_refresh(w, p);
    JL_FOR(i, n) w->ce[i] = jl_circle_energy(w, n, i, Rt);
    JL_SYNC();
  }
  if (JL_LEADER) { w->kE = INFINITY; w->kmi = w->kmj = 0; }
  JL_SYNC();
  for (int k = 0; k < p->walk_k; ++k) {
    if (k > 0) jl_copy_xy(w->x, w->y, w->cx, w->cy, n);
    if (JL_LEADER) jl_walk_move(w, p);
    JL_SYNC();
    if (jl_relax_run(w, p, Rt, p->max_steps)) return jl_walk_found(w, p, c);
    if (w->cut) {
      /* the launch ends where this step began */
      jl_copy_xy(w->x, w->y, w->cx, w->cy, n);
      return 0;
    }
    double E = jl_relax_energy(w, p, Rt);
    if (E < w->kE) {
      jl_copy_xy(w->kx, w->ky, w->x, w->y, n);
      if (JL_LEADER) { w->kE = E; w->kmi = w->mi; w->kmj = w->mj; }
      JL_SYNC();
    }
  }
  /* tabu search: to the best neighbour even when it is worse */
  jl_copy_xy(w->x, w->y, w->kx, w->ky, n);
  if (JL_LEADER) {
    w->E = w->kE;
    w->tabu[w->kmi] = w->tabu[w->kmj] = (double)(w->iter + 1 + p->walk_tenure);
    w->iter++;
    if (w->E < w->E_best * (1.0 - 1e-9)) { w->E_best = w->E; w->since = 0; }
    else w->since++;
  }
  JL_SYNC();
  if (p->walk_probe != JL_PROBE_OFF && w->since == 0) {
    int imp = jl_walk_probe(w, p, c);
    if (imp >= 0) return imp;
  }
  if (w->since >= p->walk_reset) return jl_walk_begin(w, p, c);
  return 0;
}

/* The probe. A packing below the record but above the walk's container Rt
 * is never legal in Rt, so a walker whose record lies less than its rung
 * above a better basin (n = 30: 1.03e-4 above the record, rungs from 2e-4)
 * could never find it. The walk's packing (x, y = kx, ky) at a new lowest
 * energy is relaxed once more just below the record; legal there, it is
 * compressed into a record. JL_PROBE_RESTART then begins the walk again
 * below it (jl_walk_found); JL_PROBE_KEEP keeps the walk where it was, in
 * its container, unless the record fell below Rt. Returns 1 when the record
 * fell, 0 when it did not but the walk began again, -1 when the walk goes
 * on from its packing. */
JL_RELAX_FN int jl_walk_probe(jl_relax_ws *w, const jl_relax_params *p, int c) {
  const int n = p->n;
  if (!jl_relax_run(w, p, w->R_rec * (1.0 - p->accept_rel), p->max_steps)) {
    jl_copy_xy(w->x, w->y, w->kx, w->ky, n);
    return -1;
  }
  if (p->walk_probe == JL_PROBE_RESTART) return jl_walk_found(w, p, c);
  double R_was = w->R;
  jl_relax_compress_from(w, p, p->delta_trial);
  int improved = w->R < w->R_rec * (1.0 - p->accept_rel);
  if (improved) {
    jl_walk_take(w, p);
    if (w->R < w->Rt) {  /* below the walk's container: a find in Rt */
      jl_walk_enter(w, p, c);
      return 1;
    }
  } else {
    JL_SYNC();  /* every thread has read R */
    if (JL_LEADER) w->R = R_was;  /* the candidate's packing stays */
    JL_SYNC();
  }
  jl_copy_xy(w->x, w->y, w->kx, w->ky, n);
  return improved ? 1 : -1;
}

/* Lays the workspace arrays out in one block of JL_RELAX_WS_DOUBLES(n). */
JL_RELAX_FN void jl_relax_ws_bind(jl_relax_ws *w, double *mem, int n) {
  w->x = mem;          w->y = mem + n;
  w->dx = mem + 2 * n; w->dy = mem + 3 * n;
  w->bx = mem + 4 * n; w->by = mem + 5 * n;
  w->ce = w->bx;
  w->sx = mem + 6 * n; w->sy = mem + 7 * n;
  w->r = mem + 8 * n;  w->red = mem + 9 * n;
  double *f = mem + 9 * n + JL_RELAX_REDUCE_SLOTS;
  w->vx = f;          w->vy = f + n;
  w->s0 = f + 2 * n;  w->s1 = f + 3 * n; w->s2 = f + 4 * n;
  w->cx = f + 5 * n;  w->cy = f + 6 * n;
  w->kx = f + 7 * n;  w->ky = f + 8 * n; w->tabu = f + 9 * n;
}

/* The whole per-candidate job of one launch: load, maybe start, run the
 * trials, store. Called per candidate by the CPU twin and per block by the
 * kernel, with w and mem in shared memory on the GPU; nbmem
 * (JL_NBR_DOUBLES(n), global memory on the GPU) holds the neighbour lists
 * when p->nbr is set. */
JL_RELAX_FN void jl_relax_candidate(jl_relax_ws *w, double *mem, double *nbmem,
                                    const jl_relax_params *p, jl_circle_batch b, int c) {
  const int n = p->n;
  if (JL_LEADER) {
    jl_relax_ws_bind(w, mem, n);
    jl_relax_ws_bind_nbr(w, p->nbr ? nbmem : NULL, n, p->nbr_skin);
    jl_rng_state_init(&w->rng, p->seed, (uint64_t)c, b.rng_offset[c]);
    w->draws = 0;
    w->steps = 0;
    w->cut_src = b.cut;
    w->cut = 0;
    /* a step's pair tests: n per circle, or about a list's worth */
    double per = w->nb && n > JL_NBR_CAP ? (double)JL_NBR_CAP : (double)n;
    double every = (double)JL_CUT_POLL_PAIRS / ((double)n * per);
    w->cut_every = every > 1.0 ? (int)every : 1;
    w->cut_wait = 1;
    double band = p->accept_worse;
    for (int l = 0; p->band_levels > 1 && l < c % p->band_levels; ++l) band *= p->band_ratio;
    w->band = band;
  }
  JL_SYNC();
  JL_FOR(i, n) {
    w->x[i] = b.x[(size_t)c * n + i];
    w->y[i] = b.y[(size_t)c * n + i];
    w->r[i] = b.r[i];
    if (w->nb) { w->rx[i] = w->x[i]; w->ry[i] = w->y[i]; }
  }
  JL_SYNC();
  if (b.need_start[c]) {
    jl_relax_start(w, p, b.need_start[c] == JL_START_PLACED);
  } else {
    /* the host may hand over any legal packing: take its true radius */
    double R = jl_relax_enclosing(w, n);
    if (JL_LEADER) w->R = R;
    JL_SYNC();
  }
  if (JL_LEADER) {
    double rec = b.R_rec[c];
    w->R_rec = b.need_start[c] || !(rec > 0.0) || w->R < rec ? w->R : rec;
  }
  JL_SYNC();
  uint32_t stuck = b.need_start[c] ? 0u : b.stuck[c];
  uint64_t accepted = 0;
  int walker = p->walk_every > 0 && c % p->walk_every == p->walk_every - 1 &&
               p->bench_steps <= 0;
  if (walker) {
    /* the legal packing waits in sx, sy; the walk's packing is in x, y */
    jl_copy_xy(w->sx, w->sy, w->x, w->y, n);
    if (JL_LEADER) w->iter = 0;
    if (!b.need_start[c] && b.Rt[c] > 0.0 && b.Rt[c] < w->R_rec) {
      JL_FOR(i, n) {
        w->x[i] = b.wx[(size_t)c * n + i];
        w->y[i] = b.wy[(size_t)c * n + i];
      }
      JL_SYNC();
      jl_walk_settle(w, p, b.Rt[c]);
    } else if (jl_walk_begin(w, p, c)) {
      stuck = 0;
      accepted++;
    }
  }
  if (p->bench_steps > 0) {
    /* the same step as the search, with no early exit, so every candidate
     * (and both paths) does exactly bench_steps steps */
    jl_relax_params q = *p;
    q.tol = -1.0;
    q.stall_ratio = INFINITY;
    jl_relax_run(w, &q, 0.98 * w->R, p->bench_steps);
  }
  uint64_t trials = 0;
  for (;;) {
    if (p->bench_steps > 0) break;
    if (p->step_budget > 0 ? trials > 0 && w->steps >= p->step_budget
                           : trials >= (uint64_t)p->trials)
      break;
    if (w->cut) break;
    int imp = walker ? jl_relax_walk_step(w, p, c) : jl_relax_trial(w, p);
    if (imp) { stuck = 0; accepted++; }
    else stuck++;
    trials++;
  }
  const double *ox = walker ? w->sx : w->x, *oy = walker ? w->sy : w->y;
  JL_FOR(i, n) {
    b.x[(size_t)c * n + i] = ox[i];
    b.y[(size_t)c * n + i] = oy[i];
    if (walker) {
      b.wx[(size_t)c * n + i] = w->x[i];
      b.wy[(size_t)c * n + i] = w->y[i];
    }
  }
  if (JL_LEADER) {
    b.R[c] = w->R;
    b.R_rec[c] = w->R_rec;
    b.need_start[c] = 0;
    b.stuck[c] = stuck;
    b.rng_offset[c] += w->draws;
    b.steps[c] += w->steps;
    b.trials_done[c] += trials;
    b.accepted[c] += accepted;
    if (walker) b.Rt[c] = w->Rt;
  }
}

#endif
