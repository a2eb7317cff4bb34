#include "trunk_io.h"

#include <assimp/cexport.h>
#include <assimp/cimport.h>
#include <assimp/material.h>
#include <assimp/scene.h>
#include <cjson/cJSON.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_util.h"
#include "json_file.h"

#define JL_QUAT_UNIT_TOL 1e-6

/* ---- problem ---- */

static void jl_stem(const char *path, char *out, size_t cap) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  snprintf(out, cap, "%s", base);
  char *dot = strchr(out, '.');
  if (dot && dot != out) *dot = '\0';
}

void jl_trunk_problem_from_mesh(jl_trunk_problem *p, const char *mesh_path) {
  memset(p, 0, sizeof *p);
  snprintf(p->mesh, sizeof p->mesh, "%s", mesh_path);
  jl_stem(mesh_path, p->name, sizeof p->name);
  snprintf(p->units, sizeof p->units, "mm");
  p->scale = 1.0;
  p->block.x = JL_BLOCK_DIN_X;
  p->block.y = JL_BLOCK_DIN_Y;
  p->block.z = JL_BLOCK_DIN_Z;
}

/* Edges within [JL_BLOCK_EDGE_MIN, JL_BLOCK_EDGE_MAX] (NaN fails) and their ratio within JL_BLOCK_ASPECT_MAX. */
static int jl_block_edges_ok(const double v[3], char *why, size_t cap) {
  for (int k = 0; k < 3; ++k)
    if (!(v[k] >= JL_BLOCK_EDGE_MIN && v[k] <= JL_BLOCK_EDGE_MAX)) {
      snprintf(why, cap, "edge %d is %g mm, not within [%g, %g] mm", k + 1, v[k], JL_BLOCK_EDGE_MIN,
               JL_BLOCK_EDGE_MAX);
      return 0;
    }
  double lo = fmin(v[0], fmin(v[1], v[2])), hi = fmax(v[0], fmax(v[1], v[2]));
  if (hi > JL_BLOCK_ASPECT_MAX * lo) {
    snprintf(why, cap, "the longest edge (%g mm) is more than %g times the shortest (%g mm)", hi,
             JL_BLOCK_ASPECT_MAX, lo);
    return 0;
  }
  return 1;
}

int jl_block_size_parse(const char *opt, const char *s, jl_block_size *b, jl_error *err) {
  double v[3];
  const char *c = s;
  for (int k = 0; k < 3; ++k) {
    char *end;
    v[k] = strtod(c, &end);
    if (end == c || !isfinite(v[k]) || !(v[k] > 0))
      return jl_error_set(err, JL_ERR_INPUT,
                          "%s: expected LxWxH, three numbers > 0 in mm such as 200x100x50, got '%s'",
                          opt, s);
    c = end;
    if (k < 2) {
      if (*c != 'x' && *c != 'X')
        return jl_error_set(err, JL_ERR_INPUT,
                            "%s: expected LxWxH, three numbers > 0 in mm such as 200x100x50, got '%s'",
                            opt, s);
      ++c;
    }
  }
  if (*c)
    return jl_error_set(err, JL_ERR_INPUT,
                        "%s: expected LxWxH, three numbers > 0 in mm such as 200x100x50, got '%s'", opt, s);
  char why[160];
  if (!jl_block_edges_ok(v, why, sizeof why))
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: %s", opt, s, why);
  b->x = v[0];
  b->y = v[1];
  b->z = v[2];
  return JL_OK;
}

/* Reads [L, W, H] (mm). */
static int jl_block_from_json(const cJSON *it, const char *path, const char *key, jl_block_size *b,
                              jl_error *err) {
  double v[3];
  if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 3)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: must be [L, W, H] in mm", path, key);
  for (int k = 0; k < 3; ++k) {
    const cJSON *e = cJSON_GetArrayItem(it, k);
    v[k] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    if (!isfinite(v[k]) || !(v[k] > 0))
      return jl_error_set(err, JL_ERR_INPUT, "%s: %s[%d]: must be a finite number > 0 (mm)", path, key, k);
  }
  char why[160];
  if (!jl_block_edges_ok(v, why, sizeof why))
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: %s", path, key, why);
  b->x = v[0];
  b->y = v[1];
  b->z = v[2];
  return JL_OK;
}

static void jl_dirname(const char *path, char *out, size_t cap) {
  snprintf(out, cap, "%s", path);
  char *slash = strrchr(out, '/');
  if (slash) slash[slash == out ? 1 : 0] = '\0';
  else snprintf(out, cap, ".");
}

/* Drops "." parts and "name/.." pairs, so problems/trunk/../../meshes/x.stl
 * reads meshes/x.stl (lexically: symbolic links are not followed). */
static void jl_path_tidy(char *path) {
  char *part[512];
  int n = 0, abs = path[0] == '/';
  char *save = NULL;
  for (char *t = strtok_r(path, "/", &save); t && n < 512; t = strtok_r(NULL, "/", &save)) {
    if (strcmp(t, ".") == 0) continue;
    if (strcmp(t, "..") == 0 && n > 0 && strcmp(part[n - 1], "..") != 0) {
      --n;
      continue;
    }
    if (strcmp(t, "..") == 0 && abs) continue;
    part[n++] = t;
  }
  char out[JL_TRUNK_PATH_MAX];
  size_t len = 0;
  out[0] = '\0';
  if (abs) out[len++] = '/';
  for (int i = 0; i < n; ++i) {
    size_t l = strlen(part[i]);
    if (len + l + 2 > sizeof out) break;
    if (i) out[len++] = '/';
    memcpy(out + len, part[i], l);
    len += l;
  }
  if (len == 0) out[len++] = '.';
  out[len] = '\0';
  memcpy(path, out, len + 1);
}

/* A relative path in a file is taken relative to that file's folder. */
static void jl_resolve(const char *file, const char *rel, char *out, size_t cap) {
  if (rel[0] == '/') {
    snprintf(out, cap, "%s", rel);
    return;
  }
  char dir[JL_TRUNK_PATH_MAX];
  jl_dirname(file, dir, sizeof dir);
  if (strcmp(dir, ".") == 0) {
    snprintf(out, cap, "%s", rel);
    return;
  }
  size_t nd = strlen(dir), nr = strlen(rel);
  if (nd + 1 + nr + 1 > cap) {  /* too long: keep the name, loading will say it is missing */
    snprintf(out, cap, "%s", rel);
    return;
  }
  memcpy(out, dir, nd);
  out[nd] = '/';
  memcpy(out + nd + 1, rel, nr + 1);
  jl_path_tidy(out);
}

int jl_trunk_problem_load(jl_trunk_problem *p, const char *path, jl_error *err) {
  static const char *const keys[] = {"kind", "name", "mesh", "units", "block", "description", NULL};
  cJSON *root = NULL;
  int rc = jl_json_load_file(path, &root, err);
  if (rc) return rc;
  if (!cJSON_IsObject(root)) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: the top level must be a JSON object", path);
    goto done;
  }
  for (const cJSON *it = root->child; it; it = it->next) {
    int known = 0;
    for (int k = 0; keys[k]; ++k) known |= strcmp(it->string, keys[k]) == 0;
    if (!known) {
      rc = jl_error_set(err, JL_ERR_INPUT,
                        "%s: %s: unknown key (expected kind, name, mesh, units, block, description)",
                        path, it->string);
      goto done;
    }
    for (const cJSON *o = root->child; o != it; o = o->next)
      if (strcmp(o->string, it->string) == 0) {
        rc = jl_error_set(err, JL_ERR_INPUT, "%s: %s: duplicate key", path, it->string);
        goto done;
      }
  }
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
  if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "trunk") != 0) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: kind: expected \"trunk\"", path);
    goto done;
  }
  const cJSON *mesh = cJSON_GetObjectItemCaseSensitive(root, "mesh");
  if (!cJSON_IsString(mesh) || !mesh->valuestring[0]) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: mesh: missing or not a file name", path);
    goto done;
  }
  if ((rc = jl_utf8_check(mesh->valuestring, path, "mesh", err))) goto done;
  char resolved[JL_TRUNK_PATH_MAX];
  jl_resolve(path, mesh->valuestring, resolved, sizeof resolved);
  jl_trunk_problem_from_mesh(p, resolved);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
  if (name) {
    if (!cJSON_IsString(name) || strlen(name->valuestring) >= sizeof p->name || !name->valuestring[0]) {
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: name: must be a string of 1..%d characters", path,
                        (int)sizeof p->name - 1);
      goto done;
    }
    if ((rc = jl_utf8_check(name->valuestring, path, "name", err))) goto done;
    snprintf(p->name, sizeof p->name, "%s", name->valuestring);
  } else {
    jl_stem(path, p->name, sizeof p->name);
  }
  const cJSON *units = cJSON_GetObjectItemCaseSensitive(root, "units");
  if (units) {
    double s = cJSON_IsString(units) ? jl_units_scale(units->valuestring) : 0.0;
    if (s == 0.0) {
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: units: expected \"mm\", \"cm\", \"m\" or \"in\"", path);
      goto done;
    }
    snprintf(p->units, sizeof p->units, "%s", units->valuestring);
    p->scale = s;
  }
  const cJSON *block = cJSON_GetObjectItemCaseSensitive(root, "block");
  if (block) rc = jl_block_from_json(block, path, "block", &p->block, err);
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
  if (!rc && desc && !cJSON_IsString(desc))
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: description: must be a string", path);
done:
  cJSON_Delete(root);
  return rc;
}

/* ---- result JSON ---- */

static void jl_json_key_number(jl_buf *b, const char *key, double v, const char *after) {
  jl_buf_printf(b, "\"%s\": ", key);
  jl_buf_json_number(b, v);
  jl_buf_printf(b, "%s", after);
}

/* run.fills: the fills' budget and times, the floor's frame, each frame's counts. */
static void jl_trunk_fills_json(jl_buf *b, const jl_trunk_fill_report *fl) {
  static const double deg = 180.0 / 3.14159265358979323846;
  const jl_trunk_frame *f = &fl->frame;
  jl_buf_printf(b, "\"fills\": {");
  jl_json_key_number(b, "budget_s", fl->budget_s, ", ");
  jl_json_key_number(b, "time_s", fl->time_s, ", ");
  jl_buf_printf(b, "\"frame\": \"%s\", \"floor_frame\": {\"turned\": %s, \"rotation\": [", fl->winner ? "floor" : "mesh",
                f->turned ? "true" : "false");
  for (int i = 0; i < 3; ++i) {
    jl_buf_json_vec(b, f->R[i], 3);
    jl_buf_printf(b, "%s", i < 2 ? ", " : "], ");
  }
  jl_json_key_number(b, "yaw_deg", f->yaw * deg, ", ");
  jl_json_key_number(b, "pitch_deg", f->pitch * deg, ", ");
  jl_json_key_number(b, "roll_deg", f->roll * deg, ", ");
  jl_json_key_number(b, "angle_deg", f->angle * deg, ", ");
  jl_json_key_number(b, "shift_mm", f->shift, ", ");
  jl_json_key_number(b, "floor_area_mm2", f->floor_area, ", ");
  jl_json_key_number(b, "wall_area_mm2", f->wall_area, "}, \"frames\": [");
  for (int k = 0; k < 2; ++k) {
    const jl_frame_fills *ff = &fl->fills[k];
    jl_buf_printf(b, "%s{\"frame\": \"%s\", \"ran\": %s", k ? ", " : "", k ? "floor" : "mesh",
                  ff->ran ? "true" : "false");
    if (ff->ran) {
      jl_buf_printf(b, ", \"count\": %d, \"best\": ", ff->count);
      jl_buf_json_string(b, ff->best ? ff->best : "none");
      jl_buf_printf(b, ", \"grid\": %d, \"layered\": %d, \"slab_counts\": [%d, %d], \"tilt_ran\": %s, "
                    "\"tilt_count\": %d, \"complete\": %s, \"rejected\": %s, \"times_s\": {",
                    ff->grid, ff->layered, ff->slab[0], ff->slab[1], ff->tilt_ran ? "true" : "false", ff->tilt,
                    ff->complete ? "true" : "false", ff->rejected ? "true" : "false");
      jl_json_key_number(b, "grid", ff->grid_s, ", ");
      jl_json_key_number(b, "layered", ff->layered_s, ", \"slabs\": ");
      jl_buf_json_vec(b, ff->slab_s, 2);
      jl_buf_printf(b, ", ");
      jl_json_key_number(b, "tilt", ff->tilt_s, "}, ");
      jl_json_key_number(b, "time_to_count_s", ff->found_s, "");
    }
    jl_buf_printf(b, "}");
  }
  jl_buf_printf(b, "]}, ");
}

int jl_trunk_summary_write_json(const char *path, const jl_trunk_summary *r, jl_error *err) {
  const jl_trunk_problem *p = r->problem;
  const jl_block_packing *bp = r->blocks;
  double bvol = p->block.x * p->block.y * p->block.z;
  double mvol = r->mesh ? r->mesh->volume : NAN;
  jl_buf b = {0};
  jl_buf_printf(&b, "{\n  \"format\": \"jostle-result\",\n  \"version\": 1,\n  \"kind\": \"trunk\",\n");
  jl_buf_printf(&b, "  \"problem\": {\"name\": ");
  jl_buf_json_string(&b, p->name);
  jl_buf_printf(&b, ", \"mesh\": ");
  jl_buf_json_string(&b, p->mesh);
  jl_buf_printf(&b, ", \"units\": ");
  jl_buf_json_string(&b, p->units);
  jl_buf_printf(&b, ", \"block\": ");
  double blk[3] = {p->block.x, p->block.y, p->block.z};
  jl_buf_json_vec(&b, blk, 3);
  jl_buf_printf(&b, "},\n  \"count\": %d,\n  ", bp->count);
  jl_json_key_number(&b, "liters", bp->count * bvol / 1e6, ",\n  ");
  jl_json_key_number(&b, "mesh_volume_mm3", mvol, ",\n  ");
  jl_json_key_number(&b, "mesh_volume_l", mvol / 1e6, ",\n  ");
  jl_json_key_number(&b, "fill_ratio", bp->count * bvol / mvol, ",\n");
  if (r->fills) jl_buf_printf(&b, "  \"fills_complete\": %s,\n", r->fills_complete ? "true" : "false");
  jl_buf_printf(&b, "  \"baseline_count\": %d,\n", r->baseline_count);
  if (r->layered_count >= 0) jl_buf_printf(&b, "  \"layered_count\": %d,\n", r->layered_count);
  jl_buf_printf(&b, "  \"upper_bound\": %ld,\n", r->upper_bound);
  if (r->reach) {
    const jl_reach_info *re = r->reach;
    jl_buf_printf(&b, "  \"reachable\": {");
    jl_json_key_number(&b, "liters", re->volume_mm3 / 1e6, ", ");
    jl_buf_printf(&b, "\"bound\": %ld, ", re->bound);
    jl_json_key_number(&b, "cover_liters", re->cover_mm3 / 1e6, ", ");
    jl_json_key_number(&b, "voxel_mm", re->voxel, ", ");
    jl_buf_printf(&b, "\"frames\": %d, \"frames_opened\": %d, \"sloped_faces\": %d, \"complete\": %s, ",
                  re->frames, re->frames_done, re->faces, re->complete ? "true" : "false");
    jl_json_key_number(&b, "time_s", re->time_s, "},\n");
  }
  const jl_trunk_report *c = r->check;
  jl_buf_printf(&b, "  \"legal\": %s,\n", c && c->legal ? "true" : "false");
  if (c) {
    jl_buf_printf(&b, "  \"check\": {");
    jl_json_key_number(&b, "tol_mm", c->tol, ", ");
    jl_json_key_number(&b, "max_surface_depth_mm", c->max_surface_depth, ", ");
    jl_buf_printf(&b, "\"surface_block\": %d, \"surface_triangle\": %d, \"outside_blocks\": %d, ",
                  c->surface_block, c->surface_triangle, c->outside_blocks);
    jl_json_key_number(&b, "max_overlap_depth_mm", c->max_overlap_depth, ", ");
    jl_buf_printf(&b, "\"overlap_blocks\": [%d, %d], \"worst\": \"%s\", ", c->overlap_i, c->overlap_j,
                  jl_violation_name(c->worst_kind));
    jl_json_key_number(&b, "worst_mm", c->worst, "},\n");
  }
  if (r->mesh) {
    const jl_mesh_report *m = r->mesh;
    jl_buf_printf(&b,
                  "  \"mesh\": {\"triangles\": %d, \"input_triangles\": %d, \"degenerate_dropped\": %d, "
                  "\"components\": %d, \"cavities\": %d, \"flipped_triangles\": %d, ",
                  m->triangles, m->input_triangles, m->degenerate_dropped, m->components, m->cavities,
                  m->flipped_triangles);
    jl_buf_printf(&b, "\"repairs\": {");
    jl_json_key_number(&b, "tol_mm", m->repair_tol, ", ");
    jl_buf_printf(&b, "\"welded_vertices\": %d, \"doubled_removed\": %d, \"slivers_removed\": %d, "
                  "\"overlaps_accepted\": %d, ", m->welded_vertices, m->doubled_removed, m->slivers_removed,
                  m->overlaps_accepted);
    jl_json_key_number(&b, "max_overlap_mm", m->max_overlap, "}, \"bounds_mm\": [");
    jl_buf_json_vec(&b, m->lo, 3);
    jl_buf_printf(&b, ", ");
    jl_buf_json_vec(&b, m->hi, 3);
    jl_buf_printf(&b, "]},\n");
  }
  jl_buf_printf(&b, "  \"run\": {\"seed\": %" PRIu64 ", \"device\": ", r->seed);
  jl_buf_json_string(&b, r->device);
  jl_buf_printf(&b, ", \"device_name\": ");
  jl_buf_json_string(&b, r->device_name);
  jl_buf_printf(&b, ", \"search\": ");
  jl_buf_json_string(&b, r->search);
  jl_buf_printf(&b, ", ");
  jl_json_key_number(&b, "time_s", r->time_s, ", ");
  jl_json_key_number(&b, "time_to_best_s", r->time_to_best_s, ", ");
  jl_json_key_number(&b, "baseline_time_s", r->baseline_time_s, ", ");
  jl_buf_printf(&b, "\"baseline_complete\": %s, ", r->baseline_complete ? "true" : "false");
  if (r->layered_count >= 0) {
    jl_json_key_number(&b, "layered_time_s", r->layered_time_s, ", ");
    jl_buf_printf(&b, "\"layered_complete\": %s, ", r->layered_complete ? "true" : "false");
  }
  if (r->start) {
    jl_buf_printf(&b, "\"start\": ");
    jl_buf_json_string(&b, r->start);
    jl_buf_printf(&b, ", \"slab_counts\": [%d, %d], \"tilt_count\": %d, ", r->slab_count[0], r->slab_count[1],
                  r->tilt_count);
  }
  if (r->fills) jl_trunk_fills_json(&b, r->fills);
  jl_buf_printf(&b, "\"stopped_by\": ");
  jl_buf_json_string(&b, r->stopped_by);
  const jl_trunk_run_info *si = r->search_info;
  if (si)
    jl_buf_printf(&b, ", \"anneal\": {\"chains\": %d, \"rounds\": %ld, \"moves\": %" PRIu64
                  ", \"accepted\": %" PRIu64 ", \"relax_steps\": %" PRIu64
                  ", \"exact_checks\": %d, \"exact_checks_failed\": %d, \"gap_fill_added\": %d, "
                  "\"gap_fill_s\": %.6g, \"chains_best\": %d, \"legalize_tried\": %d, "
                  "\"legalize_legal\": %d, \"legalize_dropped\": %d, \"legalize_s\": %.6g, "
                  "\"pocket_tried\": %d, \"pocket_added\": %d, \"pocket_s\": %.6g, \"surface_points\": %d, "
                  "\"spacing_mm\": %.17g, \"cell_mm\": %.17g",
                  si->batch, si->rounds, si->moves, si->accepted, si->relax_steps, si->checks,
                  si->checks_failed, si->gap_added, si->gap_time_s, si->chains_best, si->legalize_tried,
                  si->legalize_legal, si->legalize_dropped, si->legalize_time_s, si->pocket_tried,
                  si->pocket_added, si->pocket_time_s, si->n_points, si->spacing, si->cell);
  if (si) {
    jl_buf_printf(&b, ", \"by_kind\": {");
    for (int k = 0; k < JL_TRUNK_MOVE_KINDS; ++k)
      jl_buf_printf(&b, "%s\"%s\": [%" PRIu64 ", %" PRIu64 "]", k ? ", " : "", jl_trunk_move_names[k],
                    si->kind_moves[k], si->kind_accepted[k]);
    jl_buf_printf(&b, "}}");
  }
  jl_buf_printf(&b, ", \"ranks\": %d, \"migrations\": %" PRIu64, r->ranks > 0 ? r->ranks : 1, r->migrations);
  if (r->ranks > 1 && r->rank_info) {
    jl_buf_printf(&b, ",\n    \"islands\": [");
    for (int k = 0; k < r->ranks; ++k) {
      const jl_rank_info *ri = &r->rank_info[k];
      jl_buf_printf(&b, "%s\n      {\"rank\": %d, \"seed\": %" PRIu64 ", \"device\": \"%s\", \"cuda_device\": %d, "
                        "\"device_name\": ", k ? "," : "", k, ri->seed, ri->cuda_device >= 0 ? "cuda" : "cpu",
                    ri->cuda_device);
      jl_buf_json_string(&b, ri->device_name);
      jl_buf_printf(&b, ", \"host_threads\": %d, \"cpus\": %d", ri->host_threads, ri->bound_cpus);
      jl_buf_printf(&b, ", \"moves\": %" PRIu64 ", \"relax_steps\": %" PRIu64 ", \"count\": %.0f, \"failed\": %s",
                    ri->trials, ri->relax_steps, ri->best, ri->failed ? "true" : "false");
      if (ri->failed) {
        jl_buf_printf(&b, ", \"error\": ");
        jl_buf_json_string(&b, ri->msg);
      }
      jl_buf_printf(&b, "}");
    }
    jl_buf_printf(&b, "]");
  }
  jl_buf_printf(&b, "},\n  \"blocks\": [\n");
  for (int i = 0; i < bp->count; ++i) {
    jl_buf_printf(&b, "    {\"c\": ");
    jl_buf_json_vec(&b, bp->centre + 3 * i, 3);
    jl_buf_printf(&b, ", \"q\": ");
    jl_buf_json_vec(&b, bp->quat + 4 * i, 4);
    jl_buf_printf(&b, "}%s\n", i + 1 < bp->count ? "," : "");
  }
  jl_buf_printf(&b, "  ]\n}\n");
  return jl_buf_write_atomic(&b, path, err);
}

void jl_result_kind(const char *path, char *kind, size_t cap) {
  kind[0] = '\0';
  cJSON *root = NULL;
  if (jl_json_load_file(path, &root, NULL) != JL_OK) return;
  const cJSON *k = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "kind") : NULL;
  if (cJSON_IsString(k)) snprintf(kind, cap, "%s", k->valuestring);
  cJSON_Delete(root);
}

static int jl_read_numbers(const cJSON *arr, int n, double *out) {
  if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n) return 0;
  int k = 0;
  for (const cJSON *e = arr->child; e; e = e->next, ++k) {
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) return 0;
    out[k] = e->valuedouble;
  }
  return 1;
}

int jl_trunk_result_read_json(const char *path, jl_trunk_problem *prob, jl_block_packing *blocks,
                              jl_error *err) {
  memset(blocks, 0, sizeof *blocks);
  cJSON *root = NULL;
  int rc = jl_json_load_file(path, &root, err);
  if (rc) return rc;
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "problem");
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "blocks");
  const cJSON *count = cJSON_GetObjectItemCaseSensitive(root, "count");
  if (!cJSON_IsObject(root)) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: the top level must be a JSON object", path);
  } else if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "jostle-result") != 0) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: format: must be \"jostle-result\"", path);
  } else if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "trunk") != 0) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: kind: must be \"trunk\"", path);
  } else if (ver && !(cJSON_IsNumber(ver) && ver->valuedouble == 1)) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: version: unsupported (this build reads version 1)", path);
  } else if (!cJSON_IsObject(p)) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: problem: missing or not an object", path);
  }
  if (rc) goto done;
  const cJSON *mesh = cJSON_GetObjectItemCaseSensitive(p, "mesh");
  const cJSON *units = cJSON_GetObjectItemCaseSensitive(p, "units");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
  if (!cJSON_IsString(mesh) || !mesh->valuestring[0]) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: problem.mesh: missing or not a file name", path);
    goto done;
  }
  if ((rc = jl_utf8_check(mesh->valuestring, path, "problem.mesh", err)) ||
      (cJSON_IsString(name) && (rc = jl_utf8_check(name->valuestring, path, "problem.name", err))))
    goto done;
  char resolved[JL_TRUNK_PATH_MAX];
  if (mesh->valuestring[0] == '/' || access(mesh->valuestring, F_OK) == 0)
    snprintf(resolved, sizeof resolved, "%s", mesh->valuestring);
  else
    jl_resolve(path, mesh->valuestring, resolved, sizeof resolved);
  jl_trunk_problem_from_mesh(prob, resolved);
  if (cJSON_IsString(name) && name->valuestring[0])
    snprintf(prob->name, sizeof prob->name, "%s", name->valuestring);
  double s = cJSON_IsString(units) ? jl_units_scale(units->valuestring) : 0.0;
  if (s == 0.0) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: problem.units: expected \"mm\", \"cm\", \"m\" or \"in\"", path);
    goto done;
  }
  snprintf(prob->units, sizeof prob->units, "%s", units->valuestring);
  prob->scale = s;
  rc = jl_block_from_json(cJSON_GetObjectItemCaseSensitive(p, "block"), path, "problem.block",
                          &prob->block, err);
  if (rc) goto done;
  if (!cJSON_IsArray(arr)) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: blocks: missing or not an array", path);
    goto done;
  }
  if (cJSON_GetArraySize(arr) > JL_TRUNK_MAX_BLOCKS) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: blocks: %d blocks, at most %d allowed", path,
                      cJSON_GetArraySize(arr), JL_TRUNK_MAX_BLOCKS);
    goto done;
  }
  int n = cJSON_GetArraySize(arr);
  if (count && !(cJSON_IsNumber(count) && count->valuedouble == n)) {
    rc = jl_error_set(err, JL_ERR_INPUT, "%s: count: does not match the %d blocks", path, n);
    goto done;
  }
  rc = jl_block_packing_init(blocks, n, err);
  int i = 0;
  for (const cJSON *e = arr->child; e && !rc; e = e->next, ++i) {
    double c[3], q[4];
    if (!cJSON_IsObject(e) || !jl_read_numbers(cJSON_GetObjectItemCaseSensitive(e, "c"), 3, c)) {
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: blocks[%d].c: must be [x, y, z], finite numbers", path, i);
      break;
    }
    if (!jl_read_numbers(cJSON_GetObjectItemCaseSensitive(e, "q"), 4, q)) {
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: blocks[%d].q: must be [w, x, y, z], finite numbers", path, i);
      break;
    }
    double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (fabs(l - 1.0) > JL_QUAT_UNIT_TOL) {
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: blocks[%d].q: must be a unit quaternion (length %.9g)",
                        path, i, l);
      break;
    }
    rc = jl_block_packing_push(blocks, c, q, err);
  }
  if (rc) jl_block_packing_free(blocks);
done:
  cJSON_Delete(root);
  return rc;
}

/* ---- glTF binary scene through assimp's exporter ---- */

static void jl_ai_string(struct aiString *s, const char *text) {
  size_t n = strlen(text);
  if (n >= MAXLEN) n = MAXLEN - 1;
  s->length = (ai_uint32)n;
  memcpy(s->data, text, n);
  s->data[n] = '\0';
}

static struct aiMaterialProperty *jl_ai_prop(const char *key, enum aiPropertyTypeInfo type,
                                             const void *data, unsigned len) {
  struct aiMaterialProperty *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  jl_ai_string(&p->mKey, key);
  p->mType = type;
  p->mDataLength = len;
  p->mData = malloc(len);
  if (!p->mData) { free(p); return NULL; }
  memcpy(p->mData, data, len);
  return p;
}

static struct aiMaterial *jl_ai_material(const char *name, const float rgba[4], int two_sided) {
  struct aiMaterial *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->mProperties = calloc(6, sizeof *m->mProperties);
  if (!m->mProperties) { free(m); return NULL; }
  m->mNumAllocated = 6;
  /* material strings are stored as a 32-bit length, the bytes and a NUL */
  size_t nl = strlen(name);
  char sbuf[256];
  if (nl > sizeof sbuf - 5) nl = sizeof sbuf - 5;
  uint32_t l32 = (uint32_t)nl;
  memcpy(sbuf, &l32, 4);
  memcpy(sbuf + 4, name, nl);
  sbuf[4 + nl] = '\0';
  float opacity = rgba[3], colour[4] = {rgba[0], rgba[1], rgba[2], 1.0f};  /* the exporter multiplies in the opacity */
  int ts = two_sided;
  m->mProperties[m->mNumProperties++] = jl_ai_prop("?mat.name", aiPTI_String, sbuf, (unsigned)(5 + nl));
  m->mProperties[m->mNumProperties++] = jl_ai_prop("$clr.diffuse", aiPTI_Float, colour, sizeof colour);
  m->mProperties[m->mNumProperties++] = jl_ai_prop("$clr.base", aiPTI_Float, colour, sizeof colour);
  m->mProperties[m->mNumProperties++] = jl_ai_prop("$mat.opacity", aiPTI_Float, &opacity, sizeof opacity);
  m->mProperties[m->mNumProperties++] = jl_ai_prop("$mat.twosided", aiPTI_Integer, &ts, sizeof ts);
  for (unsigned i = 0; i < m->mNumProperties; ++i)
    if (!m->mProperties[i]) return NULL;  /* the caller frees what it can on failure */
  return m;
}

static void jl_ai_material_free(struct aiMaterial *m) {
  if (!m) return;
  for (unsigned i = 0; i < m->mNumProperties; ++i)
    if (m->mProperties[i]) {
      free(m->mProperties[i]->mData);
      free(m->mProperties[i]);
    }
  free(m->mProperties);
  free(m);
}

static struct aiMesh *jl_ai_mesh(const char *name, const double *v, int nv, const int *t, int nt,
                                 unsigned material) {
  struct aiMesh *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  jl_ai_string(&m->mName, name);
  m->mPrimitiveTypes = aiPrimitiveType_TRIANGLE;
  m->mMaterialIndex = material;
  m->mVertices = calloc((size_t)nv, sizeof *m->mVertices);
  m->mFaces = calloc((size_t)nt, sizeof *m->mFaces);
  unsigned *idx = calloc((size_t)nt * 3, sizeof *idx);
  if (!m->mVertices || !m->mFaces || !idx) {
    free(m->mVertices); free(m->mFaces); free(idx); free(m);
    return NULL;
  }
  m->mNumVertices = (unsigned)nv;
  m->mNumFaces = (unsigned)nt;
  for (int i = 0; i < nv; ++i) {
    m->mVertices[i].x = (ai_real)v[3 * i];
    m->mVertices[i].y = (ai_real)v[3 * i + 1];
    m->mVertices[i].z = (ai_real)v[3 * i + 2];
  }
  for (int f = 0; f < nt; ++f) {
    m->mFaces[f].mNumIndices = 3;
    m->mFaces[f].mIndices = idx + 3 * f;
    for (int k = 0; k < 3; ++k) idx[3 * f + k] = (unsigned)t[3 * f + k];
  }
  return m;
}

static void jl_ai_mesh_free(struct aiMesh *m) {
  if (!m) return;
  if (m->mFaces) free(m->mFaces[0].mIndices);
  free(m->mFaces);
  free(m->mVertices);
  free(m);
}

/* Corner k of a box: bit 0, 1, 2 pick the sign along each axis. */
static void jl_box_corners(const jl_obb *o, double corner[8][3]) {
  for (int k = 0; k < 8; ++k)
    for (int d = 0; d < 3; ++d) {
      double s0 = (k & 1) ? o->h[0] : -o->h[0], s1 = (k & 2) ? o->h[1] : -o->h[1],
             s2 = (k & 4) ? o->h[2] : -o->h[2];
      corner[k][d] = o->c[d] + s0 * o->ax[0][d] + s1 * o->ax[1][d] + s2 * o->ax[2][d];
    }
}

/* Outward counter-clockwise faces of the corner numbering above. */
static const int jl_box_tris[12][3] = {
  {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
  {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5},
};

static void jl_hsv(double h, double s, double v, float rgb[3]) {
  double f = h * 6.0 - floor(h * 6.0);
  int i = (int)floor(h * 6.0) % 6;
  double p = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
  double r[6] = {v, q, p, p, t, v}, g[6] = {t, v, v, q, p, p}, b[6] = {p, p, t, v, v, q};
  rgb[0] = (float)r[i];
  rgb[1] = (float)g[i];
  rgb[2] = (float)b[i];
}

/* Block colours: one box mesh and material per hue, shared by the blocks'
 * nodes (a mesh per block made assimp's glTF export quadratic in the
 * blocks: 10 s for 8,000). Block i takes hue i mod JL_GLB_HUES. */
#define JL_GLB_HUES 12

int jl_trunk_write_glb(const char *path, const jl_mesh *mesh, const jl_block_size *bs,
                       const jl_block_packing *p, jl_error *err) {
  int n = p->count, rc = JL_OK, nm = 1 + JL_GLB_HUES;
  struct aiScene *sc = calloc(1, sizeof *sc);
  struct aiNode *root = calloc(1, sizeof *root);
  struct aiNode *nodes = calloc((size_t)n + 1, sizeof *nodes);
  struct aiNode **children = calloc((size_t)n + 1, sizeof *children);
  unsigned *mesh_idx = calloc((size_t)nm, sizeof *mesh_idx);
  struct aiMesh **meshes = calloc((size_t)nm, sizeof *meshes);
  struct aiMaterial **mats = calloc((size_t)nm, sizeof *mats);
  if (!sc || !root || !nodes || !children || !mesh_idx || !meshes || !mats) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for the scene", path);
    goto done;
  }
  float grey[4] = {0.75f, 0.78f, 0.82f, 0.3f};
  mats[0] = jl_ai_material("trunk", grey, 1);
  meshes[0] = jl_ai_mesh("trunk", mesh->vertices, mesh->n_vertices, mesh->triangles,
                         mesh->n_triangles, 0);
  if (!mats[0] || !meshes[0]) {
    rc = jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for the scene", path);
    goto done;
  }
  /* the block in its own frame, one copy per hue */
  jl_obb unit;
  const double origin[3] = {0, 0, 0}, q_id[4] = {1, 0, 0, 0};
  jl_obb_from_block(bs, origin, q_id, &unit);
  double corner[8][3];
  jl_box_corners(&unit, corner);
  for (int k = 1; k < nm; ++k) {
    char name[32];
    snprintf(name, sizeof name, "block_hue_%d", k - 1);
    float rgba[4] = {0, 0, 0, 1.0f};
    jl_hsv(fmod((k - 1) * 0.61803398875, 1.0), 0.55, 0.92, rgba);  /* golden-ratio hues: neighbours differ */
    mats[k] = jl_ai_material(name, rgba, 0);
    meshes[k] = jl_ai_mesh(name, &corner[0][0], 8, &jl_box_tris[0][0], 12, (unsigned)k);
    if (!mats[k] || !meshes[k]) {
      rc = jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory for the scene", path);
      goto done;
    }
  }
  for (int k = 0; k < nm; ++k) mesh_idx[k] = (unsigned)k;
  /* Millimetres, z up -> glTF's metres, y up. */
  jl_ai_string(&root->mName, "jostle_trunk");
  root->mTransformation.a1 = 0.001f;
  root->mTransformation.b3 = 0.001f;
  root->mTransformation.c2 = -0.001f;
  root->mTransformation.d4 = 1.0f;
  root->mNumChildren = (unsigned)n + 1;
  root->mChildren = children;
  for (int i = 0; i <= n; ++i) {
    struct aiNode *nd = &nodes[i];
    struct aiMatrix4x4 *t = &nd->mTransformation;
    t->a1 = t->b2 = t->c3 = t->d4 = 1.0f;
    if (i == 0) {
      jl_ai_string(&nd->mName, "trunk");
      nd->mMeshes = &mesh_idx[0];
    } else {
      /* the block's frame: its axes as columns, its centre as the translation */
      char name[32];
      snprintf(name, sizeof name, "block_%d", i - 1);
      jl_ai_string(&nd->mName, name);
      jl_obb o;
      jl_obb_from_block(bs, p->centre + 3 * (i - 1), p->quat + 4 * (i - 1), &o);
      t->a1 = (ai_real)o.ax[0][0]; t->a2 = (ai_real)o.ax[1][0]; t->a3 = (ai_real)o.ax[2][0];
      t->b1 = (ai_real)o.ax[0][1]; t->b2 = (ai_real)o.ax[1][1]; t->b3 = (ai_real)o.ax[2][1];
      t->c1 = (ai_real)o.ax[0][2]; t->c2 = (ai_real)o.ax[1][2]; t->c3 = (ai_real)o.ax[2][2];
      t->a4 = (ai_real)o.c[0]; t->b4 = (ai_real)o.c[1]; t->c4 = (ai_real)o.c[2];
      nd->mMeshes = &mesh_idx[1 + (i - 1) % JL_GLB_HUES];
    }
    nd->mParent = root;
    nd->mNumMeshes = 1;
    children[i] = nd;
  }
  sc->mRootNode = root;
  sc->mNumMeshes = (unsigned)nm;
  sc->mMeshes = meshes;
  sc->mNumMaterials = (unsigned)nm;
  sc->mMaterials = mats;
  const struct aiExportDataBlob *blob = aiExportSceneToBlob(sc, "glb2", 0);
  if (!blob) {
    rc = jl_error_set(err, JL_ERR_IO, "%s: glTF export failed: %s", path, aiGetErrorString());
    goto done;
  }
  rc = jl_file_write_atomic(path, blob->data, blob->size, err);
  aiReleaseExportBlob(blob);
done:
  if (meshes)
    for (int k = 0; k < nm; ++k) jl_ai_mesh_free(meshes[k]);
  if (mats)
    for (int k = 0; k < nm; ++k) jl_ai_material_free(mats[k]);
  free(meshes);
  free(mats);
  free(mesh_idx);
  free(children);
  free(nodes);
  free(root);
  free(sc);
  return rc;
}

/* ---- SVG: three orthographic views ---- */

typedef struct jl_view {
  const char *label;
  double right[3], up[3], toward[3];  /* screen axes and the direction to the viewer */
} jl_view;

static const jl_view jl_views[3] = {
  {"top (from above)", {1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
  {"side (from -y)", {1, 0, 0}, {0, 0, 1}, {0, -1, 0}},
  {"rear (from -x)", {0, -1, 0}, {0, 0, 1}, {-1, 0, 0}},
};

static double jl_d3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

typedef struct jl_edge_rec {
  int a, b, t;
} jl_edge_rec;

static int jl_cmp_edge_rec(const void *x, const void *y) {
  const jl_edge_rec *p = x, *q = y;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return p->t - q->t;
}

static void jl_tri_normal(const jl_mesh *m, int t, double n[3]) {
  const double *a = m->vertices + 3 * m->triangles[3 * t], *b = m->vertices + 3 * m->triangles[3 * t + 1],
               *c = m->vertices + 3 * m->triangles[3 * t + 2];
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  n[0] = u[1] * v[2] - u[2] * v[1];
  n[1] = u[2] * v[0] - u[0] * v[2];
  n[2] = u[0] * v[1] - u[1] * v[0];
  double l = sqrt(jl_d3(n, n));
  if (l > 0) for (int k = 0; k < 3; ++k) n[k] /= l;
}

/* Convex hull of 2D points (Andrew's monotone chain), counter-clockwise. */
static int jl_cmp_pt(const void *x, const void *y) {
  const double *p = x, *q = y;
  if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
  return (p[1] > q[1]) - (p[1] < q[1]);
}
static int jl_hull(double pts[8][2], double out[16][2]) {
  qsort(pts, 8, sizeof pts[0], jl_cmp_pt);
  int k = 0;
  for (int pass = 0; pass < 2; ++pass) {
    int start = k;
    for (int i = 0; i < 8; ++i) {
      const double *p = pts[pass ? 7 - i : i];
      while (k >= start + 2) {
        const double *a = out[k - 2], *b = out[k - 1];
        if ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) > 1e-9) break;
        --k;
      }
      out[k][0] = p[0];
      out[k][1] = p[1];
      ++k;
    }
    --k;  /* the last point starts the other chain */
  }
  return k;
}

typedef struct jl_depth_item {
  double d;
  int i;
} jl_depth_item;

static int jl_cmp_depth(const void *x, const void *y) {
  const jl_depth_item *p = x, *q = y;
  if (p->d != q->d) return p->d < q->d ? -1 : 1;
  return p->i - q->i;
}

int jl_trunk_write_svg(const char *path, const jl_mesh *m, const jl_block_size *bs,
                       const jl_block_packing *p, const char *title, jl_error *err) {
  double lo[3], hi[3];
  jl_mesh_bounds(m, lo, hi);
  double ext[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
  double big = fmax(ext[0], fmax(ext[1], ext[2]));
  double gap = 0.12 * big, margin = 0.06 * big, title_h = 0.14 * big, sw = 0.0025 * big;
  /* Panel origins (top-left, in mm of the drawing): top view above the side
   * view, the rear view to the right of the side view. */
  double px[3] = {margin, margin, margin + ext[0] + gap};
  double top = margin + title_h + 0.5 * gap;  /* room for the first panel's label */
  double py[3] = {top, top + ext[1] + gap, top + ext[1] + gap};
  double W = margin * 2 + ext[0] + gap + ext[1], H = top + ext[1] + gap + ext[2] + margin;
  int ne = 3 * m->n_triangles;
  jl_edge_rec *e = malloc((size_t)ne * sizeof *e);
  double *nrm = malloc((size_t)m->n_triangles * 3 * sizeof *nrm);
  jl_depth_item *order = malloc((size_t)(p->count > 0 ? p->count : 1) * sizeof *order);
  if (!e || !nrm || !order) {
    free(e); free(nrm); free(order);
    return jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", path);
  }
  for (int t = 0; t < m->n_triangles; ++t) {
    jl_tri_normal(m, t, nrm + 3 * t);
    for (int k = 0; k < 3; ++k) {
      int a = m->triangles[3 * t + k], b = m->triangles[3 * t + (k + 1) % 3];
      e[3 * t + k].a = a < b ? a : b;
      e[3 * t + k].b = a < b ? b : a;
      e[3 * t + k].t = t;
    }
  }
  qsort(e, (size_t)ne, sizeof *e, jl_cmp_edge_rec);
  jl_buf b = {0};
  double px_w = 1000.0;
  jl_buf_printf(&b,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.6g %.6g\">\n<rect x=\"0\" y=\"0\" width=\"%.6g\" height=\"%.6g\" fill=\"white\"/>\n",
                px_w, px_w * H / W, W, H, W, H);
  jl_buf_printf(&b, "<text x=\"%.6g\" y=\"%.6g\" font-family=\"sans-serif\" font-size=\"%.6g\">", margin,
                margin + 0.45 * title_h, 0.32 * title_h);
  jl_buf_xml_text(&b, title);
  jl_buf_printf(&b, "</text>\n");
  jl_buf_printf(&b,
                "<text x=\"%.6g\" y=\"%.6g\" font-family=\"sans-serif\" font-size=\"%.6g\" fill=\"#444\">"
                "trunk %.0f x %.0f x %.0f mm (bounding box), blocks %g x %g x %g mm, colour by height</text>\n",
                margin, margin + 0.85 * title_h, 0.2 * title_h, ext[0], ext[1], ext[2], bs->x, bs->y, bs->z);
  double zlo = DBL_MAX, zhi = -DBL_MAX;
  for (int i = 0; i < p->count; ++i) {
    zlo = fmin(zlo, p->centre[3 * i + 2]);
    zhi = fmax(zhi, p->centre[3 * i + 2]);
  }
  for (int v = 0; v < 3; ++v) {
    const jl_view *vw = &jl_views[v];
    /* screen (u, w) of a world point: u right, w down */
    double r0 = fmin(jl_d3(lo, vw->right), jl_d3(hi, vw->right));
    double u0 = fmax(jl_d3(lo, vw->up), jl_d3(hi, vw->up));
#define JL_SX(pt) (px[v] + jl_d3((pt), vw->right) - r0)
#define JL_SY(pt) (py[v] + u0 - jl_d3((pt), vw->up))
    jl_buf_printf(&b, "<text x=\"%.6g\" y=\"%.6g\" font-family=\"sans-serif\" font-size=\"%.6g\" fill=\"#444\">%s</text>\n",
                  px[v], py[v] - 0.25 * gap, 0.35 * gap, vw->label);
    jl_buf_printf(&b, "<g stroke=\"#222\" stroke-width=\"%.4g\" stroke-linejoin=\"round\">\n", 0.5 * sw);
    for (int i = 0; i < p->count; ++i) {
      order[i].d = jl_d3(p->centre + 3 * i, vw->toward);
      order[i].i = i;
    }
    qsort(order, (size_t)p->count, sizeof *order, jl_cmp_depth);
    for (int s = 0; s < p->count; ++s) {
      int i = order[s].i;
      jl_obb o;
      jl_obb_from_block(bs, p->centre + 3 * i, p->quat + 4 * i, &o);
      double corner[8][3], pts[8][2], hull[16][2];
      jl_box_corners(&o, corner);
      for (int k = 0; k < 8; ++k) {
        pts[k][0] = JL_SX(corner[k]);
        pts[k][1] = JL_SY(corner[k]);
      }
      int nh = jl_hull(pts, hull);
      int rgb[3];
      jl_viridis(zhi > zlo ? (p->centre[3 * i + 2] - zlo) / (zhi - zlo) : 0.5, rgb);
      jl_buf_printf(&b, "<polygon fill=\"rgb(%d,%d,%d)\" fill-opacity=\"0.9\" points=\"", rgb[0], rgb[1], rgb[2]);
      for (int k = 0; k < nh; ++k) jl_buf_printf(&b, "%s%.5g,%.5g", k ? " " : "", hull[k][0], hull[k][1]);
      jl_buf_printf(&b, "\"/>\n");
    }
    jl_buf_printf(&b, "</g>\n<g stroke=\"#c0392b\" stroke-width=\"%.4g\" stroke-linecap=\"round\">\n", sw);
    for (int i = 0; i + 1 < ne; ++i) {
      if (e[i].a != e[i + 1].a || e[i].b != e[i + 1].b) continue;
      const double *n1 = nrm + 3 * e[i].t, *n2 = nrm + 3 * e[i + 1].t;
      double d1 = jl_d3(n1, vw->toward), d2 = jl_d3(n2, vw->toward);
      int crease = jl_d3(n1, n2) < 0.94;  /* sharper than about 20 degrees */
      int outline = (d1 > 1e-9) != (d2 > 1e-9);
      if (!crease && !outline) continue;
      const double *a = m->vertices + 3 * e[i].a, *c = m->vertices + 3 * e[i].b;
      jl_buf_printf(&b, "<line x1=\"%.5g\" y1=\"%.5g\" x2=\"%.5g\" y2=\"%.5g\"/>\n", JL_SX(a), JL_SY(a),
                    JL_SX(c), JL_SY(c));
    }
    jl_buf_printf(&b, "</g>\n");
#undef JL_SX
#undef JL_SY
  }
  jl_buf_printf(&b, "</svg>\n");
  free(e);
  free(nrm);
  free(order);
  return jl_buf_write_atomic(&b, path, err);
}
