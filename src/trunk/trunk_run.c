/* The trunk run (trunk_run.h): what `jostle trunk` and jl_trunk_volume do
 * between reading their options and writing their outputs. */
#include "stop_flag.h"
#include "trunk_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "timer.h"
#include "trunk_slabs.h"
#include "trunk_tilt.h"

/* A bounding box that could hold this many times max_blocks is refused
 * too: the fills scan the bounding box, not the volume. */
#define JL_TRUNK_BOX_FACTOR 10.0

/* Volume and size rule out any block: floor(V / v) = 0, a bounding box
 * extent below the block's shortest edge (a box is at least that wide in
 * every direction), or a bounding box diagonal below its longest edge. */
static int jl_trunk_fits_one(const jl_trunk_problem *p, const jl_mesh_report *rep, long *bound,
                             jl_error *err) {
  double bv = p->block.x * p->block.y * p->block.z;
  *bound = (long)floor(rep->volume / bv);
  double shortest = fmin(p->block.x, fmin(p->block.y, p->block.z));
  double narrow = fmin(rep->hi[0] - rep->lo[0], fmin(rep->hi[1] - rep->lo[1], rep->hi[2] - rep->lo[2]));
  if (*bound < 1)
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: trunk too small for one block: volume %.6g L < block %.6g L", p->mesh,
                        rep->volume / 1e6, bv / 1e6);
  double longest = fmax(p->block.x, fmax(p->block.y, p->block.z));
  double diag = sqrt((rep->hi[0] - rep->lo[0]) * (rep->hi[0] - rep->lo[0]) +
                     (rep->hi[1] - rep->lo[1]) * (rep->hi[1] - rep->lo[1]) +
                     (rep->hi[2] - rep->lo[2]) * (rep->hi[2] - rep->lo[2]));
  if (diag < longest)
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: trunk too small for one block: its bounding box diagonal is %.6g mm, "
                        "the block's longest edge %.6g mm", p->mesh, diag, longest);
  if (narrow < shortest)
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: trunk too small for one block: %.6g mm across, the block's shortest edge is %.6g mm",
                        p->mesh, narrow, shortest);
  return JL_OK;
}

/* Before any work: a mesh that could hold more than max blocks by its
 * volume, or JL_TRUNK_BOX_FACTOR times that by its bounding box, is refused
 * with its size (a mesh in metres read as millimetres is a 1 km trunk). */
static int jl_trunk_check_size(const jl_trunk_run_config *cfg, const jl_mesh_report *rep, jl_error *err) {
  const jl_trunk_problem *p = cfg->problem;
  long max = cfg->max_blocks;
  double bv = p->block.x * p->block.y * p->block.z;
  double ext[3] = {rep->hi[0] - rep->lo[0], rep->hi[1] - rep->lo[1], rep->hi[2] - rep->lo[2]};
  double by_volume = rep->volume / bv, by_box = ext[0] * ext[1] * ext[2] / bv;
  int box = by_volume <= (double)max && !(by_box <= JL_TRUNK_BOX_FACTOR * (double)max);
  if (by_volume <= (double)max && !box) return JL_OK;
  char lim[128];
  if (box) snprintf(lim, sizeof lim, "%g x %ld (%s)", JL_TRUNK_BOX_FACTOR, max, cfg->max_blocks_name);
  else snprintf(lim, sizeof lim, "%ld (%s)", max, cfg->max_blocks_name);
  return jl_error_set(err, JL_ERR_INPUT,
                      "%s: the mesh measures %.6g x %.6g x %.6g mm (bounding box) and %.6g L read in %s: "
                      "its %s could hold %.4g blocks of %gx%gx%g mm, more than %s; if the mesh is not in %s, "
                      "give its unit with %s mm|cm|m|in",
                      p->mesh, ext[0], ext[1], ext[2], rep->volume / 1e6, p->units, box ? "bounding box" : "volume",
                      box ? by_box : by_volume, p->block.x, p->block.y, p->block.z, lim, p->units, cfg->units_name);
}

/* Progress lines go to the log drawn in place (progress_live) every
 * JL_RUN_PROGRESS_LIVE_S, else every JL_RUN_PROGRESS_PLAIN_S and when
 * forced (a better packing): a terminal follows them, a log file keeps a few. */
#define JL_RUN_PROGRESS_LIVE_S 0.2
#define JL_RUN_PROGRESS_PLAIN_S 5.0

/* What cut a phase short, for a message: "a signal" or "<share> --time". */
static const char *jl_run_cut_by(const jl_trunk_run_config *cfg, const volatile sig_atomic_t *stop,
                                 const char *share, char *buf, size_t cap) {
  if (jl_stop_requested(stop)) return "a signal";
  snprintf(buf, cap, "%s %s", share, cfg->time_name);
  return buf;
}

/* A line to the caller's log, if any. */
static void jl_run_log(const jl_trunk_run_config *cfg, int level, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
static void jl_run_log(const jl_trunk_run_config *cfg, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  jl_log_vline(cfg->log, cfg->log_ctx, level, fmt, ap);
  va_end(ap);
}

typedef struct jl_run_progress {
  const jl_trunk_run_config *cfg;
  double period, last;     /* seconds between lines; the last line's time */
  int drawn;               /* a live line was passed that nothing ended yet */
} jl_run_progress;

static void jl_run_progress_init(jl_run_progress *pr, const jl_trunk_run_config *cfg) {
  pr->cfg = cfg;
  pr->period = cfg->progress_live ? JL_RUN_PROGRESS_LIVE_S : JL_RUN_PROGRESS_PLAIN_S;
  pr->last = -1e300;
  pr->drawn = 0;
}

static void jl_run_progress_update(jl_run_progress *pr, double now, int force, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 4, 5)))
#endif
  ;
static void jl_run_progress_update(jl_run_progress *pr, double now, int force, const char *fmt, ...) {
  if (!pr->cfg->log || (!force && now - pr->last < pr->period)) return;
  pr->last = now;
  va_list ap;
  va_start(ap, fmt);
  jl_log_vline(pr->cfg->log, pr->cfg->log_ctx, JL_LOG_PROGRESS, fmt, ap);
  va_end(ap);
  pr->drawn = pr->cfg->progress_live;
}

/* Ends a line drawn in place, so that later lines start below it. */
static void jl_run_progress_end(jl_run_progress *pr) {
  if (pr->drawn && pr->cfg->log) pr->cfg->log(pr->cfg->log_ctx, JL_LOG_PROGRESS, "");
  pr->drawn = 0;
}

static void jl_trunk_mesh_notices(const jl_trunk_run_config *cfg, const char *path, const jl_mesh_report *r) {
  if (r->degenerate_dropped)
    jl_run_log(cfg, JL_LOG_NOTICE, "%s: dropped %d degenerate triangle(s)", path, r->degenerate_dropped);
  if (r->flipped_triangles)
    jl_run_log(cfg, JL_LOG_NOTICE, "%s: fixed orientation: flipped %d of %d triangles to face outward",
                  path, r->flipped_triangles, r->triangles);
  if (r->welded_vertices || r->doubled_removed || r->slivers_removed || r->overlaps_accepted)
    jl_run_log(cfg, JL_LOG_NOTICE,
                  "%s: repaired within %.3g mm (%g of the bounding box diagonal): welded %d vertex(es), "
                  "removed %d doubled triangle(s), flipped away %d sliver(s), accepted %d triangle pair(s) "
                  "crossing by at most that (deepest %.3g mm)",
                  path, r->repair_tol, JL_MESH_REPAIR_TOL, r->welded_vertices, r->doubled_removed,
                  r->slivers_removed, r->overlaps_accepted, r->max_overlap);
}

/* Share of --time that the fills (grid baseline, layered, slab and tilted
 * fills, in both frames) may take together, counted from the start of the
 * run: the search after them gets the rest, and whatever they leave. */
#define JL_TRUNK_FILL_SHARE 0.4
/* Share of --time that the axis-aligned fills leave to the tilted fill:
 * they stop this long before the fills' end, where the tilted fill stops. */
#define JL_TRUNK_TILT_SHARE 0.1
/* Share of the axis-aligned fills' time that a turned floor frame takes
 * first; the mesh's own frame gets the rest, and whatever the floor's left. */
#define JL_TRUNK_FLOOR_FRAME_SHARE 0.7
/* Share of a frame's time that its grid baseline may take: it is reported,
 * not kept (the layered fill contains every lattice), so it must not starve
 * the fills that are (it takes about a tenth of them when nothing cuts). */
#define JL_TRUNK_GRID_SHARE 0.25

/* The fills of a run, in the mesh's frame (0) and the floor's (1). */
typedef struct jl_fill_run {
  char names[2][JL_TRUNK_NAME_MAX + 32];  /* message prefixes of the two frames */
  jl_run_progress pr;
  double t0;
  int threads;
  long bound;
  jl_trunk_fill_report *rep;
  jl_grid_info gi;         /* the mesh frame's grid baseline: the reported baseline */
  jl_baseline_info base;   /* the mesh frame's layered fill */
  int done[2];             /* per frame, the fills that ran: bit 0 grid, 1 layered, 2 + axis slabs, 4 tilt */
  jl_block_packing grid, found;  /* scratch */
  const jl_trunk_run_config *cfg; /* its progress callback and stop flag */
} jl_fill_run;

static void jl_fill_run_init(jl_fill_run *r, const jl_trunk_run_config *cfg, double t0, int threads, long bound,
                             jl_trunk_fill_report *rep) {
  memset(r, 0, sizeof *r);
  snprintf(r->names[0], sizeof r->names[0], "%s", cfg->problem->name);
  snprintf(r->names[1], sizeof r->names[1], "%s, floor frame", cfg->problem->name);
  r->cfg = cfg;
  jl_run_progress_init(&r->pr, cfg);
  r->t0 = t0;
  r->threads = threads;
  r->bound = bound;
  r->rep = rep;
  memset(rep, 0, sizeof *rep);
}

static void jl_fill_run_free(jl_fill_run *r) {
  jl_run_progress_end(&r->pr);
  jl_block_packing_free(&r->grid);
  jl_block_packing_free(&r->found);
}

/* A log line in place of the progress line (redrawn at the next update). */
static void jl_fill_note(jl_fill_run *r, int level, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
static void jl_fill_note(jl_fill_run *r, int level, const char *fmt, ...) {
  r->pr.drawn = 0;  /* the log's next line takes the progress line's place */
  va_list ap;
  va_start(ap, fmt);
  jl_log_vline(r->cfg->log, r->cfg->log_ctx, level, fmt, ap);
  va_end(ap);
}

double jl_trunk_angle_deg(double rad) {
  double d = rad * (180.0 / 3.14159265358979323846);
  return fabs(d) < 5e-3 ? 0.0 : d;
}

/* Seconds the fills of one frame took. */
static double jl_frame_fills_time(const jl_frame_fills *f) {
  return f->grid_s + f->layered_s + f->slab_s[0] + f->slab_s[1] + f->tilt_s;
}

/* The caller's progress callback, if any: non-zero sets the stop flag. */
static void jl_trunk_report_progress(const jl_trunk_run_config *cfg, double time_s, int best, uint64_t moves) {
  if (!cfg->progress) return;
  jl_progress_info info = {time_s, (double)best, moves};
  if (cfg->progress(cfg->progress_ctx, &info)) jl_stop_request(cfg->stop);
}

/* The progress line: each frame's fill counts so far and the best. */
static void jl_fill_progress(jl_fill_run *r) {
  char line[512] = "";
  size_t n = 0;
  int best = 0;
  for (int k = 0; k < 2; ++k) {
    const jl_frame_fills *f = &r->rep->fills[k];
    if (!f->ran) continue;
    const char *what[5] = {"grid", "layered", "slabs x", "slabs y", "tilt"};
    int count[5] = {f->grid, f->layered, f->slab[0], f->slab[1], f->tilt};
    n += (size_t)snprintf(line + n, n < sizeof line ? sizeof line - n : 0, "%s", k ? "  | floor frame:" : "");
    for (int i = 0, first = 1; i < 5; ++i) {
      if (!(r->done[k] & (1 << i))) continue;
      n += (size_t)snprintf(line + n, n < sizeof line ? sizeof line - n : 0, "%s %s %d", first ? "" : ",", what[i],
                            count[i]);
      first = 0;
      best = count[i] > best ? count[i] : best;
    }
  }
  double now = jl_time_now();
  jl_run_progress_update(&r->pr, now, r->cfg->progress_live, "%s: %.1f s  fills:%s  best %d", r->names[0], now - r->t0, line, best);
  jl_trunk_report_progress(r->cfg, now - r->t0, best, 0);
}

/* The axis-aligned fills of the trunk g in frame k, each stopping at
 * deadline: the grid baseline (within JL_TRUNK_GRID_SHARE of the time to
 * it), the layered fill, the slab fills (slabs across y in zones across x,
 * the sedan's best, then the reverse). best (initialised) gets the largest,
 * in g's coordinates. */
static int jl_fills_aligned(jl_fill_run *r, int k, const jl_trunk_geom *g, double deadline,
                            const volatile sig_atomic_t *stop, jl_block_packing *best, jl_error *err) {
  jl_frame_fills *ff = &r->rep->fills[k];
  const char *nm = r->names[k];
  double edge[3] = {g->block.x, g->block.y, g->block.z};
  ff->ran = 1;
  ff->complete = 1;
  jl_grid_info gi;
  char by[96];
  r->grid.count = 0;
  double now = jl_time_now(), grid_end = deadline > now ? now + JL_TRUNK_GRID_SHARE * (deadline - now) : deadline;
  if (jl_trunk_grid_fill(g, r->threads, 0, grid_end, stop, &r->grid, &gi, err) != JL_OK) return err->code;
  if (!gi.complete) {
    ff->complete = 0;
    jl_fill_note(r, JL_LOG_NOTICE, "%s: the grid baseline was cut short by %s (%d blocks)", nm,
                 jl_run_cut_by(r->cfg, stop, "the fills' share of", by, sizeof by), gi.count);
  }
  jl_fill_note(r, JL_LOG_INFO,
               "%s: baseline %d blocks (grid: %g x %g x %g mm along x, y, z, offset %g, %g, %g mm), "
               "%lld positions tested in %.2f s on %d threads",
               nm, gi.count, edge[gi.edges[0]], edge[gi.edges[1]], edge[gi.edges[2]], gi.offset[0], gi.offset[1],
               gi.offset[2], gi.boxes_tested, gi.time_s, r->threads);
  ff->grid = gi.count;
  ff->grid_s = gi.time_s;
  if (k == 0) r->gi = gi;
  r->done[k] |= 1;
  jl_fill_progress(r);
  jl_baseline_info base;
  memset(&base, 0, sizeof base);
  best->count = 0;
  if (jl_trunk_baseline_until(g, r->threads, 0, deadline, stop, best, &base, err) != JL_OK) return err->code;
  if (!base.complete) {
    ff->complete = 0;
    jl_fill_note(r, JL_LOG_NOTICE, "%s: the layered fill was cut short by %s (%d blocks)", nm,
                 jl_run_cut_by(r->cfg, stop, "the fills' share of", by, sizeof by), base.count);
  }
  char mix[128] = "";
  for (int v = 0, n = 0; v < 3; ++v)
    if (base.layers_upright[v] > 0)
      n += snprintf(mix + n, sizeof mix - (size_t)n, "%s%d x %g mm", n ? ", " : "", base.layers_upright[v], edge[v]);
  jl_fill_note(r, JL_LOG_INFO, "%s: layered fill %d blocks in %d layers (%s), %lld positions tested in %.2f s on %d threads",
               nm, base.count, base.layers, mix[0] ? mix : "none", base.boxes_tested, base.time_s, r->threads);
  ff->layered = base.count;
  ff->layered_s = base.time_s;
  if (k == 0) r->base = base;
  ff->best = "layered";
  if (r->grid.count > best->count) {  /* only when the layered fill was cut short */
    if (jl_block_packing_copy(best, &r->grid, err) != JL_OK) return err->code;
    ff->best = "grid";
  }
  ff->count = best->count;
  ff->found_s = jl_time_now() - r->t0;
  r->done[k] |= 2;
  jl_fill_progress(r);
  for (int ax = 1; ax >= 0 && best->count < r->bound; --ax) {
    if (jl_time_now() >= deadline || jl_stop_requested(stop)) {
      ff->complete = 0;
      break;
    }
    jl_slab_info slab;
    memset(&slab, 0, sizeof slab);
    int src = jl_trunk_slab_fill(g, ax, 1, 0.0, r->threads, deadline, stop, &r->found, &slab, err);
    if (src == JL_ERR_INPUT) {  /* a trunk too large for the slab fill: go on without */
      jl_fill_note(r, JL_LOG_NOTICE, "%s: no slab fill: %s", nm, err->msg);
      memset(err, 0, sizeof *err);
      break;
    }
    if (src != JL_OK) return src;
    jl_fill_note(r, JL_LOG_INFO, "%s: slab fill across %c in zones across %c: %d blocks in %d zones, %d slabs, "
                 "%lld positions tested in %.2f s%s", nm, "xy"[ax], "yx"[ax], slab.count, slab.zones, slab.slabs,
                 slab.boxes_tested, slab.time_s, slab.complete ? "" : " (cut short)");
    ff->slab[ax] = slab.count;
    ff->slab_s[ax] = slab.time_s;
    r->done[k] |= 4 << ax;
    if (!slab.complete) ff->complete = 0;
    if (r->found.count > best->count) {
      if (jl_block_packing_copy(best, &r->found, err) != JL_OK) return err->code;
      ff->best = ax ? "slabs_y" : "slabs_x";
      ff->count = best->count;
      ff->found_s = jl_time_now() - r->t0;
    }
    jl_fill_progress(r);
  }
  return JL_OK;
}

/* The tilted fill of the trunk g in frame k (blocks flat against a large
 * sloped face in a band, the rest axis-aligned across the better slab axis),
 * filling only splits that could beat beat; stops at deadline keeping the
 * best split so far. out gets its packing in g's coordinates (0 blocks: none). */
static int jl_fills_tilt(jl_fill_run *r, int k, const jl_trunk_geom *g, int beat, double deadline,
                         const volatile sig_atomic_t *stop, jl_block_packing *out, jl_error *err) {
  jl_frame_fills *ff = &r->rep->fills[k];
  int axes = ff->slab[0] > ff->slab[1] ? 1 : ff->slab[1] > ff->slab[0] ? 2 : 3;
  jl_tilt_info tilt;
  memset(&tilt, 0, sizeof tilt);
  if (jl_trunk_tilt_fill(g, axes, beat, r->threads, deadline, stop, out, &tilt, err) != JL_OK) return err->code;
  if (tilt.planes > 0)
    jl_fill_note(r, JL_LOG_INFO, "%s: tilted fill against %d sloped face(s): %d blocks (%d tilted, band %g mm), "
                 "%d splits filled, %d could not win, %d not clean, %d failed the exact check, %lld positions tested "
                 "in %.2f s%s", r->names[k], tilt.planes, tilt.count, tilt.tilted, tilt.thickness, tilt.splits,
                 tilt.skipped, tilt.unclean, tilt.rejected, tilt.boxes_tested, tilt.time_s,
                 tilt.complete ? "" : " (cut short)");
  ff->tilt_ran = 1;
  r->done[k] |= 16;
  ff->tilt = tilt.count;
  ff->tilt_s = tilt.time_s;
  if (!tilt.complete) ff->complete = 0;
  return JL_OK;
}

/* in (the floor frame's packing) turned back into the mesh and exactly
 * checked against it: *ok = 1 and out holds it when legal. */
static int jl_fills_turn_back(jl_fill_run *r, const jl_trunk_geom *geom, const jl_block_packing *in,
                              jl_block_packing *out, int *ok, jl_error *err) {
  *ok = 0;
  if (jl_trunk_frame_packing_back(&r->rep->frame, in, out, err) != JL_OK) return err->code;
  jl_trunk_report chk;
  if (jl_trunk_check_packing_until(geom, out, &geom->lim, &chk, err) != JL_OK) return err->code;
  if (!chk.legal) {
    char why[256];
    jl_trunk_report_describe(&chk, why, sizeof why);
    jl_fill_note(r, JL_LOG_NOTICE, "%s: its packing of %d blocks turned back is not kept: %s", r->names[1],
                 in->count, chk.complete ? why : "its exact check was cut short");
    r->rep->fills[1].rejected = 1;
    return JL_OK;
  }
  *ok = 1;
  return JL_OK;
}

/* All the fills, within their share of --time: the axis-aligned fills in
 * the mesh's frame and, when the floor's frame is turned from it, in the
 * floor's (each frame half of what is left until aligned_end), then the
 * tilted fill in the frame that won, until fill_end. best (uninitialised)
 * gets the best packing in the mesh's coordinates; *search names the fill,
 * *time_to_best when it was found. A floor-frame packing is kept only when
 * it beats the mesh frame's and, turned back, passes the exact check. */
static int jl_trunk_run_fills(jl_fill_run *r, const jl_trunk_geom *geom, double aligned_end, double fill_end,
                              const volatile sig_atomic_t *stop, jl_block_packing *best, const char **search,
                              double *time_to_best, jl_error *err) {
  jl_trunk_fill_report *rep = r->rep;
  double start = jl_time_now();
  rep->budget_s = fill_end > start ? fill_end - start : 0.0;  /* the reach may have taken it all */
  jl_mesh turned = {0};
  jl_trunk_geom tg;
  memset(&tg, 0, sizeof tg);
  jl_block_packing inframe = {0}, back = {0};
  int rc = JL_OK;
  if ((rc = jl_block_packing_init(best, 256, err)) != JL_OK || (rc = jl_block_packing_init(&inframe, 256, err)) != JL_OK ||
      (rc = jl_block_packing_init(&r->grid, 256, err)) != JL_OK ||
      (rc = jl_trunk_frame_detect(geom->mesh, &geom->block, &rep->frame, err)) != JL_OK)
    goto done;
  const jl_trunk_frame *fm = &rep->frame;
  double surf = fm->surface_area > 0 ? 100.0 / fm->surface_area : 0.0;
  if (fm->turned)
    jl_fill_note(r, JL_LOG_INFO, "%s: the floor's frame is turned %.2f deg from the mesh's (yaw %.2f, pitch %.2f, "
                 "roll %.2f deg; floor %.0f%% of the surface, walls %.0f%%): filling in both", r->names[0],
                 jl_trunk_angle_deg(fm->angle), jl_trunk_angle_deg(fm->yaw), jl_trunk_angle_deg(fm->pitch), jl_trunk_angle_deg(fm->roll),
                 fm->floor_area * surf, fm->wall_area * surf);
  else
    jl_fill_note(r, JL_LOG_INFO, "%s: the floor's frame is the mesh's (floor %.0f%% of the surface, walls %.0f%%)",
                 r->names[0], fm->floor_area * surf, fm->wall_area * surf);
  /* A turned floor frame goes first with most of the time: the mesh's own
   * frame then lays every layer across a tilted floor and loses a stair
   * along all of it (the 5-degree suv-pitched: 443 blocks in either frame
   * with half the time each on 2 loaded threads, 471 for the same trunk
   * upright), and it keeps only what the floor's leaves. */
  int frames = fm->turned ? 2 : 1;
  double now = jl_time_now();
  if (frames == 2) {
    if ((rc = jl_trunk_frame_turn_mesh(geom->mesh, fm, &turned, err)) != JL_OK ||
        (rc = jl_trunk_geom_init(&tg, &turned, geom->block, err)) != JL_OK ||
        (rc = jl_fills_aligned(r, 1, &tg, now + JL_TRUNK_FLOOR_FRAME_SHARE * (aligned_end - now), stop,
                               &inframe, err)) != JL_OK)
      goto done;
    int ok = 0;
    if (inframe.count > 0) {
      if ((rc = jl_fills_turn_back(r, geom, &inframe, &back, &ok, err)) != JL_OK) goto done;
      if (ok) {
        if ((rc = jl_block_packing_copy(best, &back, err)) != JL_OK) goto done;
        rep->winner = 1;
        *search = rep->fills[1].best;
        *time_to_best = rep->fills[1].found_s;
      }
    }
  }
  /* (also at the bound: the mesh's frame gives the reported grid baseline) */
  if (frames == 1 || (!jl_stop_requested(stop) && jl_time_now() < aligned_end)) {
    if ((rc = jl_fills_aligned(r, 0, geom, aligned_end, stop, &inframe, err)) != JL_OK) goto done;
    if (inframe.count > best->count) {
      if ((rc = jl_block_packing_copy(best, &inframe, err)) != JL_OK) goto done;
      rep->winner = 0;
      *search = rep->fills[0].best;
      *time_to_best = rep->fills[0].found_s;
    }
  }
  /* the tilted fill in the winning frame, with what is left */
  if (best->count < r->bound && !jl_stop_requested(stop) && jl_time_now() < fill_end) {
    int k = rep->winner;
    if ((rc = jl_fills_tilt(r, k, k ? &tg : geom, best->count, fill_end, stop, &r->found, err)) != JL_OK) goto done;
    if (r->found.count > best->count) {
      int ok = 1;
      if (k == 1) {
        if ((rc = jl_fills_turn_back(r, geom, &r->found, &back, &ok, err)) != JL_OK) goto done;
      } else if ((rc = jl_block_packing_copy(&back, &r->found, err)) != JL_OK) {
        goto done;
      }
      if (ok) {
        if ((rc = jl_block_packing_copy(best, &back, err)) != JL_OK) goto done;
        rep->fills[k].count = best->count;
        rep->fills[k].best = "tilt";
        rep->fills[k].found_s = jl_time_now() - r->t0;
        *search = "tilt";
        *time_to_best = rep->fills[k].found_s;
      }
    }
    jl_fill_progress(r);
  }
  rep->time_s = jl_time_now() - start;
  if (rep->fills[1].ran)
    jl_fill_note(r, JL_LOG_INFO, "%s: fills %d in the mesh's frame (%.1f s), %d in the floor's (%.1f s)%s, "
                 "%.1f s of their %.1f s", r->names[0], rep->fills[0].count, jl_frame_fills_time(&rep->fills[0]),
                 rep->fills[1].count, jl_frame_fills_time(&rep->fills[1]), rep->winner ? ": the floor's wins" : "",
                 rep->time_s, rep->budget_s);
  else
    jl_fill_note(r, JL_LOG_INFO, "%s: fills %d in %.1f s of their %.1f s", r->names[0], rep->fills[0].count,
                 rep->time_s, rep->budget_s);
done:
  jl_trunk_geom_free(&tg);
  jl_mesh_free(&turned);
  jl_block_packing_free(&inframe);
  jl_block_packing_free(&back);
  return rc;
}

/* The reachable volume, within JL_REACH_TIME_SHARE of the time left; on
 * CUDA when the run has a device. A run cut short before the axis-aligned
 * frame was opened measures nothing (a notice says so). */
static int jl_trunk_reach_run(const jl_trunk_run_config *cfg, const char *name, const jl_mesh *mesh, jl_block_size block,
                              const jl_device *dev, double deadline, volatile sig_atomic_t *stop,
                              jl_reach_info *info, jl_error *err) {
  jl_reach_config rc;
  jl_reach_config_default(&rc);
  rc.block = block;
  rc.cuda = dev->kind == JL_DEVICE_CUDA;
  rc.threads = dev->threads;
  double now = jl_time_now();
  rc.deadline = now + JL_REACH_TIME_SHARE * (deadline - now);
  rc.stop = stop;
  char by[96];
  if (jl_trunk_reach(mesh, &rc, info, err) != JL_OK) return err->code;
  if (!info->measured) {
    jl_run_log(cfg, JL_LOG_NOTICE, "%s: no reachable volume: %s stopped it after %.2f s", name,
               jl_run_cut_by(cfg, stop, "its share of", by, sizeof by), info->time_s);
    return JL_OK;
  }
  char cut[160] = "";
  if (!info->complete)
    snprintf(cut, sizeof cut, " (cut short by %s: %d of the frames opened)",
             jl_run_cut_by(cfg, stop, "its share of", by, sizeof by), info->frames_done);
  jl_run_log(cfg, JL_LOG_INFO,
                "%s: reachable volume %.3f L (bound %ld): %d orientation frames (axes, %d sloped face(s), %d tilts), "
                "%g mm voxels, %.2f s on %s%s", name, info->volume_mm3 / 1e6, info->bound, info->frames, info->faces,
                info->frames - 1 - info->faces, info->voxel, info->time_s, rc.cuda ? "CUDA" : "the CPU", cut);
  return JL_OK;
}

void jl_trunk_run_config_default(jl_trunk_run_config *c) {
  memset(c, 0, sizeof *c);
  c->device = "auto";
  c->time_s = 60.0;
  c->seed = 1;
  c->cell = 20.0;
  c->moves[0] = c->moves[1] = c->moves[2] = -1.0;
  c->max_blocks = JL_TRUNK_MAX_BLOCKS;
  c->units_name = "--units";
  c->max_blocks_name = "--max-blocks";
  c->time_name = "--time";
  c->device_name = "--device";
}

/* The search's progress line (after every launch) and the caller's callback. */
typedef struct jl_search_progress {
  const jl_trunk_run_config *cfg;
  double t0;
  int last_best;
  jl_run_progress pr;
} jl_search_progress;

static void jl_trunk_on_search_progress(void *ctx, const jl_trunk_progress *p) {
  jl_search_progress *c = ctx;
  int improved = p->best_count > c->last_best;
  c->last_best = p->best_count;
  double now = jl_time_now();
  jl_run_progress_update(&c->pr, now, improved,
                     "%s: %.1f s  best legal %d  chains up to %d (most %d)  legalized %d of %d  "
                     "temperature %.3g  moves %llu  relax steps %.3g",
                     c->cfg->problem->name, now - c->t0, p->best_count, p->count, p->chains_best,
                     p->legalize_legal, p->legalize_tried, p->temperature,
                     (unsigned long long)p->moves, (double)p->relax_steps);
  jl_trunk_report_progress(c->cfg, now - c->t0, p->best_count, p->moves);
}

/* A resumed packing: read, its block the run's. */
static int jl_trunk_resume_read(const jl_trunk_run_config *cfg, jl_block_packing *resume, jl_error *err) {
  const jl_trunk_problem *prob = cfg->problem;
  jl_trunk_problem rp;
  if (jl_trunk_result_read_json(cfg->resume, &rp, resume, err) != JL_OK) return err->code;
  if (rp.block.x != prob->block.x || rp.block.y != prob->block.y || rp.block.z != prob->block.z)
    return jl_error_set(err, JL_ERR_INPUT, "%s: problem.block is %gx%gx%g, this run uses %gx%gx%g", cfg->resume,
                        rp.block.x, rp.block.y, rp.block.z, prob->block.x, prob->block.y, prob->block.z);
  return JL_OK;
}

int jl_trunk_run(const jl_trunk_run_config *cfg, jl_trunk_run_result *out, jl_error *err) {
  memset(out, 0, sizeof *out);
  const jl_trunk_problem *prob = cfg->problem;
  const jl_trunk_islands *isl = cfg->islands;
  const jl_device *dev = cfg->dev;
  volatile sig_atomic_t *stop = cfg->stop;
  const int size = isl ? isl->size : 1, rank = isl ? isl->rank : 0;
  int agreed = size <= 1;  /* the ranks agreed that every one is set up */
  out->root = rank == 0;
  out->seed = cfg->seed;
  const double t0 = cfg->t0;
  jl_trunk_geom geom;
  memset(&geom, 0, sizeof geom);
  jl_block_packing resume = {0}, found = {0};
  jl_block_packing *best = &out->best;
  jl_trunk_run_info *si = &out->search;
  const jl_mesh_report *rep = &out->mesh_report;
  char failed_msg[sizeof((jl_rank_info *)0)->msg] = "";
  if (!prob || !dev || !stop || !(cfg->time_s > 0)) {
    jl_error_set(err, JL_ERR_INTERNAL, "jl_trunk_run: no problem, device, stop flag or time");
    goto fail;
  }

  int lrc = cfg->mesh ? jl_mesh_load_arrays(&out->mesh, cfg->mesh->vertices, cfg->mesh->n_vertices,
                                            cfg->mesh->triangles, cfg->mesh->n_triangles, prob->scale, prob->mesh,
                                            &out->mesh_report, err)
                      : jl_mesh_load(&out->mesh, prob->mesh, prob->scale, &out->mesh_report, err);
  if (lrc != JL_OK) goto fail;
  jl_trunk_mesh_notices(cfg, prob->mesh, rep);
  if (jl_trunk_check_size(cfg, rep, err) != JL_OK) goto fail;
  long bound = 0;
  if (jl_trunk_fits_one(prob, rep, &bound, err) != JL_OK) goto fail;
  out->bound = bound;
  if (cfg->resume && jl_trunk_resume_read(cfg, &resume, err) != JL_OK) goto fail;
  jl_run_log(cfg, JL_LOG_INFO, "%s: %s, %d triangles, %.3f L, bounding box %.0f x %.0f x %.0f mm, upper bound %ld blocks",
                prob->name, prob->mesh, rep->triangles, rep->volume / 1e6,
                rep->hi[0] - rep->lo[0], rep->hi[1] - rep->lo[1], rep->hi[2] - rep->lo[2], bound);
  if (jl_trunk_geom_init(&geom, &out->mesh, prob->block, err) != JL_OK) goto fail;

  /* time_s bounds the whole run from t0 (grid baseline, layered fill, slab
   * fill, tilted fill, gap fill, search); the stop flag ends any phase,
   * keeping the best legal packing so far. The grid fill is the issue's
   * baseline (reported); the layered fill, never worse when complete,
   * starts the search. */
  double deadline = t0 + cfg->time_s;
  /* the search's exact checks (and the resumed packing's) end with the run */
  geom.lim = (jl_trunk_limits){deadline, stop, JL_TRUNK_FINISH_S};
  if (!cfg->no_reach &&
      jl_trunk_reach_run(cfg, prob->name, &out->mesh, prob->block, dev, deadline, stop, &out->reach, err) != JL_OK)
    goto fail;
  jl_fill_run fr;
  jl_fill_run_init(&fr, cfg, t0, dev->threads, bound, &out->fills);
  /* the fills' share of the time, the tilted fill's within it; all of it
   * when the search cannot take this trunk (it would only be idle) */
  int can_search = jl_trunk_search_fits(dev, bound);
  if (!can_search)
    jl_run_log(cfg, JL_LOG_NOTICE,
                  "%s: no search: the trunk holds up to %ld blocks, the CUDA kernel keeps at most %d "
               "(%s cpu searches it); the fills get all of %s",
               prob->name, bound, JL_CUDA_MAX_SLOTS, cfg->device_name, cfg->time_name);
  double fill_end = t0 + (can_search ? JL_TRUNK_FILL_SHARE : 1.0) * cfg->time_s,
         aligned_end = fill_end - JL_TRUNK_TILT_SHARE * cfg->time_s;
  const char *search = "layered", *stopped_by = "baseline";
  double time_to_best = 0.0;
  int frc = jl_trunk_run_fills(&fr, &geom, aligned_end, fill_end, stop, best, &search, &time_to_best, err);
  out->grid = fr.gi;
  out->layered = fr.base;
  jl_fill_run_free(&fr);
  if (frc != JL_OK) goto fail;
  if (cfg->resume) {
    jl_trunk_report rr;
    if (jl_trunk_check_packing_until(&geom, &resume, &geom.lim, &rr, err) != JL_OK) goto fail;
    if (!rr.legal) {
      char why[256];
      jl_trunk_report_describe(&rr, why, sizeof why);
      jl_run_log(cfg, JL_LOG_NOTICE, "%s: not used: %s", cfg->resume, why);
    } else if (resume.count > best->count) {
      if (jl_block_packing_copy(best, &resume, err) != JL_OK) goto fail;
      search = "resume";
      time_to_best = jl_time_now() - t0;
      jl_run_log(cfg, JL_LOG_INFO, "%s: resumed packing of %d blocks beats the fills", cfg->resume, resume.count);
    }
  }
  double t_search = jl_time_now();
  out->start = search;

  /* The annealing search starts from the best fill (or the resumed packing)
   * and only ever hands back packings that passed the exact check. */
  jl_trunk_search_config sc;
  jl_trunk_search_config_default(&sc);
  sc.seed = cfg->seed;
  sc.device_slot = isl ? isl->local_rank : 0;
  sc.time_s = deadline - jl_time_now();
  sc.device = cfg->device;
  sc.threads = cfg->threads;
  sc.block = prob->block;
  sc.spacing = cfg->spacing;
  sc.cell = cfg->cell;
  sc.p_turn = cfg->moves[0];
  sc.p_settle = cfg->moves[1];
  sc.p_push = cfg->moves[2];
  sc.target_count = (int)bound;  /* nothing can beat the volume bound */
  /* at the volume bound nothing can be added */
  int at_bound = best->count >= bound, out_of_time = sc.time_s <= 0.0 || jl_stop_requested(stop);
  int ran_search = !at_bound && !out_of_time && can_search;
  if (size > 1) {
    long cap = bound > best->count ? bound : best->count;
    int ok = isl->begin(isl->ctx, (int)cap, err) == JL_OK;
    if (ok && rank == 0 && !(out->ranks = calloc((size_t)size, sizeof *out->ranks)))
      ok = jl_error_set(err, JL_ERR_NOMEM, "out of memory") == JL_OK;
    agreed = 1;
    if (!isl->all_ok(isl->ctx, ok)) {
      if (ok) jl_error_set(err, JL_ERR_INPUT, "another MPI rank failed to set up (its message above)");
      goto fail;
    }
    sc.migrate = isl->migrate;
    sc.migrate_ctx = isl->ctx;
    sc.migrate_s = isl->migrate_s;
  }
  jl_search_progress pctx = {.cfg = cfg, .t0 = t0, .last_best = best->count};
  jl_run_progress_init(&pctx.pr, cfg);
  int src = ran_search ? jl_trunk_search_run(&sc, &out->mesh, best, jl_trunk_check, &geom, jl_trunk_on_search_progress,
                                             &pctx, stop, &found, si, err)
                       : JL_OK;
  jl_run_progress_end(&pctx.pr);
  if (src == JL_ERR_INPUT) {  /* a trunk beyond the search's sizes (samples, grid, CUDA slots): go on without */
    jl_run_log(cfg, JL_LOG_NOTICE, "%s: no search: %s", prob->name, err->msg);
    memset(err, 0, sizeof *err);
    memset(si, 0, sizeof *si);
    found.count = 0;
    ran_search = 0;
  } else if (src != JL_OK && size > 1) {
    /* a failed rank says so, keeps its fills' packing and stays in the
     * migrations until the others stop */
    jl_run_log(cfg, JL_LOG_ERROR, "rank %d (%s): %s; the other ranks go on", rank, dev->name, err->msg);
    out->rank_failed = 1;
    out->rank_code = err->code;
    snprintf(failed_msg, sizeof failed_msg, "%.*s", (int)sizeof failed_msg - 1, err->msg);
    isl->fail(isl->ctx, err->msg);
    memset(si, 0, sizeof *si);
    found.count = 0;
    ran_search = 0;
  } else if (src != JL_OK) {
    goto fail;
  }
  /* islands: a rank that ran no search still takes part until all stop */
  if (size > 1 && !ran_search) {
    jl_error merr = {0};
    if (isl->until_stop(isl->ctx, out->rank_failed ? 0 : JL_TRUNK_STOP_TIME + 1, &merr) != JL_OK) {
      *err = merr;
      goto fail;
    }
  }
  if (found.count > best->count) {
    if (jl_block_packing_copy(best, &found, err) != JL_OK) goto fail;
    search = "anneal";
    time_to_best = si->time_to_best_s + (t_search - t0);
  }
  if (size > 1) {
    /* every rank's best to rank 0, which keeps the largest that passes its check */
    jl_rank_info mine;
    memset(&mine, 0, sizeof mine);
    mine.cuda_device = dev->kind == JL_DEVICE_CUDA ? dev->cuda_ordinal : -1;
    mine.failed = out->rank_failed;
    mine.seed = sc.seed;
    mine.host_threads = dev->threads;
    mine.bound_cpus = jl_cpu_count();
    mine.trials = si->moves;
    mine.relax_steps = si->relax_steps;
    mine.best = best->count;
    snprintf(mine.device_name, sizeof mine.device_name, "%s", dev->name);
    snprintf(mine.msg, sizeof mine.msg, "%s", failed_msg);
    int had = best->count;
    if (isl->collect(isl->ctx, best, jl_trunk_check, &geom, err) != JL_OK ||
        isl->gather(isl->ctx, &mine, out->ranks, err) != JL_OK)
      goto fail;
    if (rank != 0) goto done;
    if (best->count > had) {
      search = "rank";
      time_to_best = jl_time_now() - t0;
    }
  }
  static const char *const stop_names[] = {"rounds", "time", "target", "signal"};
  if (at_bound)
    stopped_by = "target";
  else if (!ran_search)
    stopped_by = jl_stop_requested(stop) ? "signal" : jl_time_now() >= deadline ? "time" : "rounds";
  else
    stopped_by = (si->stopped_by >= 0 && si->stopped_by <= 3) ? stop_names[si->stopped_by] : "time";

  if (jl_trunk_check_packing(&geom, best, &out->check, err) != JL_OK) goto fail;
  if (!out->check.legal) {
    char why[256];
    jl_trunk_report_describe(&out->check, why, sizeof why);
    jl_error_set(err, JL_ERR_INTERNAL, "internal error: the best packing failed the exact check (%s); nothing written", why);
    goto fail;
  }
  const jl_frame_fills *ff = out->fills.fills;
  out->fills_complete = best->count >= out->bound ||
                        ((ff[0].ran || ff[1].ran) && (!ff[0].ran || ff[0].complete) &&
                         (!ff[1].ran || ff[1].complete));
  out->time_s = jl_time_now() - t0;
  out->ran_search = ran_search;
  out->source = search;
  out->stopped_by = stopped_by;
  out->time_to_best_s = time_to_best;
done:
  jl_trunk_geom_free(&geom);
  jl_block_packing_free(&resume);
  jl_block_packing_free(&found);
  return JL_OK;
fail:
  /* the other ranks wait for this one's word before the search */
  if (!agreed) isl->all_ok(isl->ctx, 0);
  jl_trunk_geom_free(&geom);
  jl_block_packing_free(&resume);
  jl_block_packing_free(&found);
  jl_trunk_run_result_free(out);
  return err->code ? err->code : JL_ERR_INTERNAL;
}

void jl_trunk_run_result_free(jl_trunk_run_result *r) {
  if (!r) return;
  jl_mesh_free(&r->mesh);
  jl_block_packing_free(&r->best);
  free(r->ranks);
  r->ranks = NULL;
}
