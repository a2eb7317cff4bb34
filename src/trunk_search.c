#include "trunk_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_batch.h"
#include "device.h"
#include "rng.h"
#include "surface_grid.h"
#include "timer.h"

/* Temperature schedule (energy in blocks): hot enough at first that a
 * deletion (+1) is taken one time in five, cold at the end. */
#define JL_T_START 0.6
#define JL_T_END 0.03
/* Chains run at staggered temperatures: chain c at T * (1 + (c % 4) / 2). */
#define JL_T_SPREAD 4
/* A chain this many blocks behind the best adopts the best packing; any
 * chain does so with this probability per launch. */
#define JL_ADOPT_LAG 2
#define JL_ADOPT_P 0.05
/* Chains whose best state is checked exactly per launch, at most. */
#define JL_CHECKS_PER_ROUND 4
/* Launch length aimed at by timed runs, seconds, and the most moves per
 * chain per launch. */
#define JL_ROUND_S 1.0
#define JL_ITERS_MAX 256
/* Default distance kept from the samples, as a share of the spacing: an
 * edge lying along a row of samples can cut through the surface by up to
 * half the row spacing. With a quarter, 20 of 43 exact checks failed on
 * wall cuts (1000 x 500 x 400 cuboid, 5 mm spacing, from empty, 25 s on 2
 * threads); with half, none of 21 did. */
#define JL_POINT_SKIN_SHARE 0.5
/* The CUDA kernel keeps a candidate in shared memory: 22 doubles a slot
 * (227 KiB of shared memory per thread block on the H100/H200). */
#define JL_CUDA_MAX_SLOTS 1250

void jl_trunk_search_config_default(jl_trunk_search_config *c) {
  memset(c, 0, sizeof *c);
  c->seed = 1;
  c->device = "auto";
  c->point_skin = -1.0;
  c->block.x = JL_BLOCK_DIN_X;
  c->block.y = JL_BLOCK_DIN_Y;
  c->block.z = JL_BLOCK_DIN_Z;
}

static double jl_signed_volume(const jl_mesh *m) {
  double v = 0.0;
  for (int t = 0; t < m->n_triangles; ++t) {
    const double *a = m->vertices + 3 * m->triangles[3 * t];
    const double *b = m->vertices + 3 * m->triangles[3 * t + 1];
    const double *c = m->vertices + 3 * m->triangles[3 * t + 2];
    v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
         a[2] * (b[0] * c[1] - b[1] * c[0]);
  }
  return v / 6.0;
}

/* Checks chains whose best state beats the global best, best first; the
 * first that passes becomes the new best. A chain that fails goes back to
 * recording from the global best count. */
static int jl_take_best(jl_block_batch *b, jl_trunk_check_fn check, void *ctx,
                        jl_block_packing *best, jl_block_packing *tmp, jl_trunk_run_info *info,
                        int *improved, jl_error *err) {
  *improved = 0;
  for (int k = 0; k < JL_CHECKS_PER_ROUND; ++k) {
    int cb = -1;
    for (int c = 0; c < b->count; ++c)
      if (b->best_n[c] > best->count && (cb < 0 || b->best_n[c] > b->best_n[cb])) cb = c;
    if (cb < 0) return JL_OK;
    int rc = jl_block_batch_get_best(b, cb, tmp, err);
    if (rc) return rc;
    double worst = 0.0;
    info->checks++;
    if (check(ctx, tmp, &worst)) {
      if ((rc = jl_block_packing_copy(best, tmp, err))) return rc;
      *improved = 1;
      return JL_OK;
    }
    info->checks_failed++;
    b->best_n[cb] = best->count;
  }
  return JL_OK;
}

int jl_trunk_search_run(const jl_trunk_search_config *cfg, const jl_mesh *mesh,
                        const jl_block_packing *start, jl_trunk_check_fn check, void *check_ctx,
                        jl_trunk_progress_fn progress, void *progress_ctx,
                        volatile sig_atomic_t *stop, jl_block_packing *best,
                        jl_trunk_run_info *info, jl_error *err) {
  memset(info, 0, sizeof *info);
  if (!check) return jl_error_set(err, JL_ERR_INPUT, "the trunk search needs an exact check");
  jl_block_size size = cfg->block;
  if (size.x == 0.0 && size.y == 0.0 && size.z == 0.0)
    size = (jl_block_size){JL_BLOCK_DIN_X, JL_BLOCK_DIN_Y, JL_BLOCK_DIN_Z};
  if (!(size.x > 0.0 && size.y > 0.0 && size.z > 0.0) || !isfinite(size.x + size.y + size.z))
    return jl_error_set(err, JL_ERR_INPUT, "block edges must be > 0, got %gx%gx%g", size.x, size.y,
                        size.z);
  double spacing = cfg->spacing > 0.0 ? cfg->spacing : jl_surface_default_spacing(&size);
  double cell = cfg->cell > 0.0 ? cfg->cell : JL_GRID_CELL_DEFAULT;
  jl_device dev;
  int rc = jl_device_select(&dev, cfg->device ? cfg->device : "auto", cfg->threads, NULL, err);
  if (rc) return rc;

  double vol = jl_signed_volume(mesh);
  double bvol = size.x * size.y * size.z;
  long ub = (long)floor(vol / bvol);
  int start_n = start ? start->count : 0;
  long cap = ub > start_n ? ub : start_n;
  if (cap < 1) return jl_error_set(err, JL_ERR_INPUT, "the trunk is too small for one block");
  if (dev.kind == JL_DEVICE_CUDA && cap > JL_CUDA_MAX_SLOTS)
    return jl_error_set(err, JL_ERR_INPUT,
                        "the trunk holds up to %ld blocks; the CUDA kernel keeps at most %d",
                        cap, JL_CUDA_MAX_SLOTS);

  double *pts = NULL;
  int npts = 0;
  jl_surface_grid g;
  memset(&g, 0, sizeof g);
  jl_block_batch b;
  memset(&b, 0, sizeof b);
  jl_block_engine eng;
  memset(&eng, 0, sizeof eng);
  jl_block_packing tmp;
  memset(&tmp, 0, sizeof tmp);
  if ((rc = jl_surface_sample(mesh, spacing, &pts, &npts, err))) goto done;
  if (dev.kind == JL_DEVICE_CUDA) rc = jl_surface_grid_build_cuda(&g, pts, npts, cell, err);
  else rc = jl_surface_grid_build(&g, pts, npts, cell, err);
  if (rc) goto done;
  if ((rc = jl_surface_grid_mark_inside(&g, mesh, err))) goto done;

  int count = cfg->batch > 0 ? cfg->batch
              : dev.kind == JL_DEVICE_CUDA ? (dev.sm_count > 0 ? dev.sm_count : 80) * 16
                                           : dev.threads * 2;
  if ((rc = jl_block_batch_alloc(&b, count, (int)cap, err))) goto done;
  if ((rc = jl_block_engine_init(&eng, &dev, &g, count, (int)cap, err))) goto done;
  if ((rc = jl_block_packing_init(&tmp, (int)cap, err))) goto done;

  jl_block_params p;
  jl_block_params_default(&p, &size, cfg->seed);
  if (cfg->moves_per_round > 0) p.iters = cfg->moves_per_round;
  int adapt = cfg->moves_per_round <= 0 && cfg->time_s > 0.0;
  p.point_skin = cfg->point_skin >= 0.0 ? cfg->point_skin : JL_POINT_SKIN_SHARE * spacing;
  double t0s = cfg->t_start > 0.0 ? cfg->t_start : JL_T_START;
  double t1s = cfg->t_end > 0.0 ? cfg->t_end : JL_T_END;

  /* the start is the first best when it is legal */
  best->count = 0;
  info->start_count = start_n;
  if (start_n > 0) {
    double worst = 0.0;
    info->checks++;
    info->start_legal = check(check_ctx, start, &worst);
    if (info->start_legal) {
      if ((rc = jl_block_packing_copy(best, start, err))) goto done;
    } else {
      info->checks_failed++;
    }
  }
  for (int c = 0; c < count; ++c) {
    if (start_n > 0 && (rc = jl_block_batch_set(&b, c, start, err))) goto done;
    b.n[c] = start_n;
    b.best_n[c] = best->count;
  }
  jl_rng host_rng;
  jl_rng_init(&host_rng, cfg->seed, (uint64_t)1 << 62, 0);

  double t0 = jl_time_now(), t_best = 0.0;
  long round = 0;
  int stopped_by = JL_TRUNK_STOP_ROUNDS;
  for (;;) {
    double now = jl_time_now() - t0;
    double frac = cfg->time_s > 0.0 ? now / cfg->time_s
                  : cfg->rounds > 0 ? (double)round / (double)cfg->rounds
                                    : (double)(round % 200) / 200.0;
    if (frac > 1.0) frac = 1.0;
    double T = t0s * pow(t1s / t0s, frac);
    for (int c = 0; c < count; ++c) b.temp[c] = T * (1.0 + 0.5 * (double)(c % JL_T_SPREAD));
    double tl = jl_time_now();
    if ((rc = jl_block_engine_run(&eng, &p, &b, err))) goto done;
    tl = jl_time_now() - tl;
    round++;
    /* Timed runs (not reproducible anyway: the temperature follows the
     * clock) size launches to about JL_ROUND_S, so progress, checks and
     * Ctrl-C stay prompt on any device; runs by rounds keep a fixed size. */
    if (adapt && tl > 0.0) {
      double want = p.iters * JL_ROUND_S / tl;
      int it = want < 1.0 ? 1 : want > JL_ITERS_MAX ? JL_ITERS_MAX : (int)want;
      if (it < p.iters / 2) it = p.iters / 2 > 0 ? p.iters / 2 : 1;
      if (it > 2 * p.iters) it = 2 * p.iters;
      p.iters = it;
    }
    int improved = 0;
    if ((rc = jl_take_best(&b, check, check_ctx, best, &tmp, info, &improved, err))) goto done;
    now = jl_time_now() - t0;
    if (improved) t_best = now;
    jl_trunk_progress pr = {0};
    pr.time_s = now;
    pr.best_count = best->count;
    pr.temperature = T;
    for (int c = 0; c < count; ++c) {
      if (b.n[c] > pr.count) pr.count = b.n[c];
      pr.moves += b.moves[c];
      pr.relax_steps += b.steps[c];
    }
    if (progress) progress(progress_ctx, &pr);
    if (cfg->target_count > 0 && best->count >= cfg->target_count) { stopped_by = JL_TRUNK_STOP_TARGET; break; }
    if (stop && *stop) { stopped_by = JL_TRUNK_STOP_SIGNAL; break; }
    if (cfg->rounds > 0 && round >= cfg->rounds) { stopped_by = JL_TRUNK_STOP_ROUNDS; break; }
    if (cfg->time_s > 0.0 && now >= cfg->time_s) { stopped_by = JL_TRUNK_STOP_TIME; break; }
    /* share the best: lagging chains (and a few others) continue from it */
    if (best->count > 0) {
      for (int c = 0; c < count; ++c) {
        double u = jl_u01_from_u32(jl_rng_u32(&host_rng), jl_rng_u32(&host_rng));
        if (b.n[c] <= best->count - JL_ADOPT_LAG || !isfinite(b.energy[c]) || u < JL_ADOPT_P) {
          if ((rc = jl_block_batch_set(&b, c, best, err))) goto done;
          if (b.best_n[c] < best->count) b.best_n[c] = best->count;
        }
      }
    }
  }
  info->best_count = best->count;
  info->time_s = jl_time_now() - t0;
  info->time_to_best_s = t_best;
  info->rounds = round;
  for (int c = 0; c < count; ++c) {
    info->moves += b.moves[c];
    info->accepted += b.accepted[c];
    info->relax_steps += b.steps[c];
  }
  info->n_points = npts;
  info->spacing = spacing;
  info->cell = cell;
  info->batch = count;
  info->stopped_by = stopped_by;
  snprintf(info->device, sizeof info->device, "%s", jl_device_kind_name(dev.kind));
  snprintf(info->device_name, sizeof info->device_name, "%s", dev.name);
  rc = JL_OK;
done:
  jl_block_packing_free(&tmp);
  jl_block_engine_free(&eng);
  jl_block_batch_free(&b);
  jl_surface_grid_free(&g);
  free(pts);
  return rc;
}
