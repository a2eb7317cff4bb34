/* Circle packing files: the result JSON (read and written), Packomania
 * text (index x y, container radius 1) and an SVG picture. Every writer
 * builds the whole text in memory and writes it atomically. */
#include "circles.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_util.h"
#include "json_file.h"

#define JL_CIRCLES_READ_MAX 100000

/* ---- shared helpers ---- */

/* ---- result JSON: write ---- */

static const char *jl_stop_name(int s) {
  switch (s) {
    case JL_STOP_TIME: return "time";
    case JL_STOP_TARGET: return "target";
    case JL_STOP_SIGNAL: return "signal";
    case JL_STOP_ROUNDS: return "rounds";
    default: return "unknown";
  }
}

static void jl_json_problem(jl_buf *b, const jl_circle_problem *prob, int n) {
  double best = prob ? prob->best_known_R : 0.0;
  jl_buf_printf(b, "  \"problem\": {\"name\": ");
  jl_buf_json_string(b, prob ? prob->name : "");
  jl_buf_printf(b, ", \"n\": %d, \"best_known_R\": ", n);
  if (best > 0) jl_buf_json_number(b, best);
  else jl_buf_printf(b, "null");
  jl_buf_printf(b, ", \"source\": ");
  jl_buf_json_string(b, prob ? prob->source : "");
  jl_buf_printf(b, "},\n");
}

static void jl_json_check(jl_buf *b, const jl_circle_check *c) {
  jl_buf_printf(b, "  \"legal\": %s,\n  \"check\": {\"R\": ", c->legal ? "true" : "false");
  jl_buf_json_number(b, (double)c->R);
  jl_buf_printf(b, ", \"max_overlap\": ");
  jl_buf_json_number(b, (double)c->max_overlap);
  jl_buf_printf(b, ", \"max_excess\": ");
  jl_buf_json_number(b, (double)c->max_excess);
  jl_buf_printf(b, ", \"rel_tol\": ");
  jl_buf_json_number(b, JL_LEGAL_REL_TOL);
  jl_buf_printf(b, "},\n");
}

static void jl_json_run(jl_buf *b, const jl_circle_run_info *r) {
  jl_buf_printf(b, "  \"run\": {\"seed\": %" PRIu64 ", \"device\": ", r->seed);
  jl_buf_json_string(b, r->device);
  jl_buf_printf(b, ", \"device_name\": ");
  jl_buf_json_string(b, r->device_name);
  jl_buf_printf(b, ", \"mode\": ");
  jl_buf_json_string(b, r->mode);
  jl_buf_printf(b, ", \"walk\": %d, \"aim\": ", r->walk);
  jl_buf_json_number(b, r->aim);
  jl_buf_printf(b, ", \"walk_k\": %d, \"tenure\": %d, \"walk_reset\": %d, \"stuck\": %d, \"stuck_behind\": %d, \"probe\": \"%s\"",
                r->walk_k, r->tenure, r->walk_reset, r->stuck, r->stuck_behind,
                jl_circles_probe_name(r->probe));
  jl_buf_printf(b, ", \"time_s\": ");
  jl_buf_json_number(b, r->time_s);
  jl_buf_printf(b, ", \"time_to_best_s\": ");
  jl_buf_json_number(b, r->time_to_best_s);
  jl_buf_printf(b, ", \"launch_s\": ");
  jl_buf_json_number(b, r->launch_s);
  jl_buf_printf(b, ", \"polish_s\": ");
  jl_buf_json_number(b, r->polish_s);
  jl_buf_printf(b, ", \"polish\": \"%s\"", r->polish_beside ? "beside" : "after");
  jl_buf_printf(b, ", \"trials\": %" PRIu64 ", \"relax_steps\": %" PRIu64 ", \"restarts\": %" PRIu64
                   ", \"adoptions\": %" PRIu64 ", \"elite\": %d, \"crowding\": ",
                r->trials, r->relax_steps, r->restarts, r->adoptions, r->elite);
  jl_buf_json_number(b, r->crowding);
  jl_buf_printf(b, ", \"adopt_by\": \"%s\", \"cross\": ", r->adopt_spread ? "spread" : "uniform");
  jl_buf_json_number(b, r->cross);
  jl_buf_printf(b, ", \"crossovers\": %" PRIu64, r->crossovers);
  jl_buf_printf(b, ", \"elite_crowded\": %" PRIu64 ", \"elite_R\": [", r->elite_crowded);
  for (int k = 0; k < r->elite_count; ++k) {
    if (k) jl_buf_printf(b, ", ");
    jl_buf_json_number(b, r->elite_R[k]);
  }
  jl_buf_printf(b, "], \"elite_spread\": [");
  for (int k = 0; k < r->elite_count; ++k) {
    if (k) jl_buf_printf(b, ", ");
    jl_buf_json_number(b, r->elite_spread[k]);
  }
  jl_buf_printf(b, "], \"population\": {\"candidates\": %d, \"near_best\": %d, \"median_gap\": ",
                r->population, r->near_best);
  jl_buf_json_number(b, r->median_gap);
  jl_buf_printf(b, "}, \"stopped_by\": \"%s\"", jl_stop_name(r->stopped_by));
  jl_buf_printf(b, ", \"ranks\": %d, \"migrations\": %" PRIu64, r->ranks > 0 ? r->ranks : 1,
                r->migrations);
  if (r->ranks > 1 && r->rank_info) {
    jl_buf_printf(b, ",\n    \"islands\": [");
    for (int k = 0; k < r->ranks; ++k) {
      const jl_rank_info *ri = &r->rank_info[k];
      jl_buf_printf(b, "%s\n      {\"rank\": %d, \"seed\": %" PRIu64 ", \"device\": \"%s\", \"cuda_device\": %d, "
                       "\"device_name\": ", k ? "," : "", k, ri->seed, ri->cuda_device >= 0 ? "cuda" : "cpu",
                    ri->cuda_device);
      jl_buf_json_string(b, ri->device_name);
      jl_buf_printf(b, ", \"host_threads\": %d, \"cpus\": %d", ri->host_threads, ri->bound_cpus);
      jl_buf_printf(b, ", \"trials\": %" PRIu64 ", \"relax_steps\": %" PRIu64 ", \"best_R\": ",
                    ri->trials, ri->relax_steps);
      jl_buf_json_number(b, ri->best);
      jl_buf_printf(b, ", \"failed\": %s", ri->failed ? "true" : "false");
      if (ri->failed) {
        jl_buf_printf(b, ", \"error\": ");
        jl_buf_json_string(b, ri->msg);
      }
      jl_buf_printf(b, "}");
    }
    jl_buf_printf(b, "]");
  }
  jl_buf_printf(b, "},\n");
}

static void jl_json_circles(jl_buf *b, const jl_circle_packing *pk) {
  jl_buf_printf(b, "  \"circles\": [\n");
  for (int i = 0; i < pk->n; ++i) {
    jl_buf_printf(b, "    {\"x\": ");
    jl_buf_json_number(b, pk->x[i]);
    jl_buf_printf(b, ", \"y\": ");
    jl_buf_json_number(b, pk->y[i]);
    jl_buf_printf(b, ", \"r\": ");
    jl_buf_json_number(b, pk->r[i]);
    jl_buf_printf(b, "}%s\n", i + 1 < pk->n ? "," : "");
  }
  jl_buf_printf(b, "  ]\n");
}

int jl_circle_result_write_json(const char *path, const jl_circle_problem *prob,
                                const jl_circle_packing *pk, const jl_circle_run_info *info,
                                const jl_circle_check *check, jl_error *err) {
  if (prob && prob->n != pk->n)
    return jl_error_set(err, JL_ERR_INPUT, "%s: problem %s has %d circles, the packing %d", path,
                        prob->name, prob->n, pk->n);
  jl_circle_check own;
  if (!check) {
    jl_circle_check_packing(pk, JL_LEGAL_REL_TOL, &own);
    check = &own;
  }
  jl_buf b = {0};
  jl_buf_printf(&b, "{\n  \"format\": \"jostle-result\",\n  \"version\": 1,\n  \"kind\": \"circles\",\n");
  jl_json_problem(&b, prob, pk->n);
  jl_buf_printf(&b, "  \"R\": ");
  jl_buf_json_number(&b, pk->R);
  jl_buf_printf(&b, ",\n  \"gap_to_record\": ");
  if (prob && prob->best_known_R > 0) jl_buf_json_number(&b, pk->R / prob->best_known_R - 1.0);
  else jl_buf_printf(&b, "null");
  jl_buf_printf(&b, ",\n");
  jl_json_check(&b, check);
  if (info) jl_json_run(&b, info);
  jl_json_circles(&b, pk);
  jl_buf_printf(&b, "}\n");
  return jl_buf_write_atomic(&b, path, err);
}

/* ---- result JSON: read ---- */

static int jl_expect_string(const cJSON *root, const char *key, const char *want,
                            const char *path, jl_error *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!cJSON_IsString(it) || strcmp(it->valuestring, want) != 0)
    return jl_error_set(err, JL_ERR_INPUT, "%s: %s: must be \"%s\"", path, key, want);
  return JL_OK;
}

static int jl_result_header(const cJSON *root, const char *path, jl_error *err) {
  if (!cJSON_IsObject(root))
    return jl_error_set(err, JL_ERR_INPUT, "%s: the top level must be a JSON object", path);
  int rc = jl_expect_string(root, "format", "jostle-result", path, err);
  if (!rc) rc = jl_expect_string(root, "kind", "circles", path, err);
  if (rc) return rc;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (v && !(cJSON_IsNumber(v) && v->valuedouble == 1))
    return jl_error_set(err, JL_ERR_INPUT, "%s: version: unsupported (this build reads version 1)", path);
  const cJSON *R = cJSON_GetObjectItemCaseSensitive(root, "R");
  if (R && !cJSON_IsNull(R) && !(cJSON_IsNumber(R) && isfinite(R->valuedouble)))
    return jl_error_set(err, JL_ERR_INPUT, "%s: R: must be a finite number", path);
  return JL_OK;
}

static int jl_circle_field(const cJSON *c, const char *key, int i, int positive, double *out,
                           const char *path, jl_error *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(c, key);
  double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
  if (!isfinite(v) || (positive && !(v > 0)))
    return jl_error_set(err, JL_ERR_INPUT, "%s: circles[%d].%s: must be a finite number%s", path, i,
                        key, positive ? " > 0" : "");
  *out = v;
  return JL_OK;
}

static int jl_result_circles(const cJSON *root, jl_circle_packing *pk, const char *path,
                             jl_error *err) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "circles");
  if (!cJSON_IsArray(arr))
    return jl_error_set(err, JL_ERR_INPUT, "%s: circles: missing or not an array", path);
  int n = cJSON_GetArraySize(arr);
  if (n < 1 || n > JL_CIRCLES_READ_MAX)
    return jl_error_set(err, JL_ERR_INPUT, "%s: circles: must hold 1..%d circles, has %d", path,
                        JL_CIRCLES_READ_MAX, n);
  int rc = jl_circle_packing_init(pk, n, err);
  if (rc) return rc;
  int i = 0;
  for (const cJSON *c = arr->child; c && !rc; c = c->next, ++i) {
    if (!cJSON_IsObject(c)) {
      rc = jl_error_set(err, JL_ERR_INPUT, "%s: circles[%d]: must be an object {x, y, r}", path, i);
      break;
    }
    rc = jl_circle_field(c, "x", i, 0, &pk->x[i], path, err);
    if (!rc) rc = jl_circle_field(c, "y", i, 0, &pk->y[i], path, err);
    if (!rc) rc = jl_circle_field(c, "r", i, 1, &pk->r[i], path, err);
  }
  if (!rc) rc = jl_circle_radii_check(pk->r, n, path, "circles[", "].r", err);
  if (rc) { jl_circle_packing_free(pk); return rc; }
  jl_circle_packing_update_R(pk);
  return JL_OK;
}

static int jl_result_problem(const cJSON *root, const jl_circle_packing *pk,
                             jl_circle_problem *prob, const char *path, jl_error *err) {
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "problem");
  if (p && !cJSON_IsObject(p))
    return jl_error_set(err, JL_ERR_INPUT, "%s: problem: must be an object", path);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "n");
  const cJSON *best = cJSON_GetObjectItemCaseSensitive(p, "best_known_R");
  const cJSON *source = cJSON_GetObjectItemCaseSensitive(p, "source");
  if (n && !(cJSON_IsNumber(n) && n->valuedouble == pk->n))
    return jl_error_set(err, JL_ERR_INPUT, "%s: problem.n: does not match the %d circles", path, pk->n);
  if (best && !cJSON_IsNull(best) && !(cJSON_IsNumber(best) && isfinite(best->valuedouble) &&
                                       best->valuedouble > 0))
    return jl_error_set(err, JL_ERR_INPUT, "%s: problem.best_known_R: must be a finite number > 0 or null",
                        path);
  if ((name && !cJSON_IsString(name)) || (source && !cJSON_IsNull(source) && !cJSON_IsString(source)))
    return jl_error_set(err, JL_ERR_INPUT, "%s: problem.%s: must be a string", path,
                        name && !cJSON_IsString(name) ? "name" : "source");
  int rc = cJSON_IsString(name) ? jl_utf8_check(name->valuestring, path, "problem.name", err) : JL_OK;
  if (!rc && cJSON_IsString(source)) rc = jl_utf8_check(source->valuestring, path, "problem.source", err);
  if (rc || !prob) return rc;
  rc = jl_circle_problem_init(prob, pk->n, err);
  if (rc) return rc;
  memcpy(prob->radii, pk->r, (size_t)pk->n * sizeof *pk->r);
  if (name) snprintf(prob->name, sizeof prob->name, "%s", name->valuestring);
  if (cJSON_IsString(source)) snprintf(prob->source, sizeof prob->source, "%s", source->valuestring);
  if (cJSON_IsNumber(best)) prob->best_known_R = best->valuedouble;
  return JL_OK;
}

int jl_circle_result_read_json(const char *path, jl_circle_packing *pk,
                               jl_circle_problem *prob, jl_error *err) {
  memset(pk, 0, sizeof *pk);
  if (prob) memset(prob, 0, sizeof *prob);
  cJSON *root = NULL;
  int rc = jl_json_load_file(path, &root, err);
  if (rc) return rc;
  rc = jl_result_header(root, path, err);
  if (!rc) rc = jl_result_circles(root, pk, path, err);
  if (!rc) {
    rc = jl_result_problem(root, pk, prob, path, err);
    if (rc) jl_circle_packing_free(pk);
  }
  cJSON_Delete(root);
  return rc;
}

/* ---- Packomania text ---- */

/* Coordinates are written in long double with 21 digits: reading derives
 * the scale from 1 - |c_k|, which loses R / r_k digits of whatever precision
 * the file holds, so a few digits more than double keeps the round trip
 * exact to double precision. */
int jl_circle_write_packomania(const char *path, const jl_circle_packing *pk, jl_error *err) {
  if (!(pk->R > 0) || !isfinite(pk->R))
    return jl_error_set(err, JL_ERR_INPUT, "%s: the packing's R must be a finite number > 0", path);
  jl_buf b = {0};
  long double R = pk->R;
  for (int i = 0; i < pk->n; ++i)
    jl_buf_printf(&b, "%d %.21Lg %.21Lg\n", i + 1, (long double)pk->x[i] / R,
                  (long double)pk->y[i] / R);
  return jl_buf_write_atomic(&b, path, err);
}

/* Parses "k x y" from one line; returns 0 when the line is not that. */
static int jl_parse_pm_line(const char *s, long *k, long double *x, long double *y) {
  char *end;
  *k = strtol(s, &end, 10);
  if (end == s) return 0;
  s = end;
  *x = strtold(s, &end);
  if (end == s) return 0;
  s = end;
  *y = strtold(s, &end);
  if (end == s) return 0;
  for (s = end; *s; ++s)
    if (*s != ' ' && *s != '\t' && *s != '\r') return 0;
  return 1;
}

/* Reads the unit-container centres, line by line, into x and y. */
static int jl_read_pm_lines(char *text, const char *path, int n, long double *x, long double *y,
                            jl_error *err) {
  int count = 0, line = 0;
  for (char *s = text; s && *s; ) {
    char *nl = strchr(s, '\n');
    if (nl) *nl = '\0';
    ++line;
    const char *t = s + strspn(s, " \t\r");
    s = nl ? nl + 1 : NULL;
    if (*t == '\0' || *t == '#') continue;
    long k;
    long double cx, cy;
    if (!jl_parse_pm_line(t, &k, &cx, &cy))
      return jl_error_set(err, JL_ERR_INPUT, "%s:%d: expected \"index x y\"", path, line);
    if (count >= n)
      return jl_error_set(err, JL_ERR_INPUT, "%s:%d: more circles than the problem's %d", path, line, n);
    if (k != count + 1)
      return jl_error_set(err, JL_ERR_INPUT, "%s:%d: index %ld, expected %d (indices run 1..n in order)",
                          path, line, k, count + 1);
    if (!isfinite(cx) || !isfinite(cy))
      return jl_error_set(err, JL_ERR_INPUT, "%s:%d: circle %ld: %s is not a finite number", path, line,
                          k, isfinite(cx) ? "y" : "x");
    if (!(hypotl(cx, cy) < 1.0L))
      return jl_error_set(err, JL_ERR_INPUT, "%s:%d: circle %ld: centre must lie inside the unit container",
                          path, line, k);
    x[count] = cx;
    y[count] = cy;
    ++count;
  }
  if (count != n)
    return jl_error_set(err, JL_ERR_INPUT, "%s: has %d circles, the problem has %d", path, count, n);
  return JL_OK;
}

/* Packomania files list centres for container radius 1 but not the radii,
 * which are r_k / R for the unknown true R. Scaling by s maps circle k to
 * centre s c_k with radius r_k, inside the container of radius s when
 * s |c_k| + r_k <= s, i.e. s >= r_k / (1 - |c_k|). The smallest s fitting
 * every circle is the maximum of these: the outermost circle touches. */
int jl_circle_read_packomania(const char *path, const jl_circle_problem *prob,
                              jl_circle_packing *pk, jl_error *err) {
  memset(pk, 0, sizeof *pk);
  int n = prob->n;
  char *text = NULL;
  int rc = jl_file_read_text(path, &text, NULL, err);
  if (rc) return rc;
  long double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  if (!x || !y) rc = jl_error_set(err, JL_ERR_NOMEM, "%s: out of memory", path);
  if (!rc) rc = jl_read_pm_lines(text, path, n, x, y, err);
  if (!rc) rc = jl_circle_packing_init(pk, n, err);
  if (!rc) {
    long double s = 0.0L;
    for (int k = 0; k < n; ++k) {
      long double need = (long double)prob->radii[k] / (1.0L - hypotl(x[k], y[k]));
      if (need > s) s = need;
    }
    for (int k = 0; k < n; ++k) {
      pk->x[k] = (double)(s * x[k]);
      pk->y[k] = (double)(s * y[k]);
      pk->r[k] = prob->radii[k];
    }
    jl_circle_packing_update_R(pk);
  }
  free(x);
  free(y);
  free(text);
  return rc;
}

/* ---- SVG ---- */

static void jl_radius_label(char *out, size_t cap, double r) {
  if (r == rint(r) && fabs(r) < 1e9) snprintf(out, cap, "%.0f", r);
  else snprintf(out, cap, "%.3g", r);
}

static void jl_svg_title(jl_buf *b, const jl_circle_problem *prob, const jl_circle_packing *pk,
                         double top, double size) {
  jl_buf_printf(b, "<text x=\"0\" y=\"%.7g\" font-size=\"%.7g\" text-anchor=\"middle\" "
                   "fill=\"#222\">", top, size);
  if (prob && prob->name[0]) {
    jl_buf_xml_text(b, prob->name);
    jl_buf_printf(b, ": ");
  }
  jl_buf_printf(b, "n = %d, R = %.10g", pk->n, pk->R);
  if (prob && prob->best_known_R > 0)
    jl_buf_printf(b, " (record %.10g, gap %+.3g%%)", prob->best_known_R,
                  100.0 * (pk->R / prob->best_known_R - 1.0));
  jl_buf_printf(b, "</text>\n");
}

static void jl_svg_circle(jl_buf *b, const jl_circle_packing *pk, int i, double rmin, double rmax) {
  double R = pk->R, r = pk->r[i];
  double t = rmax > rmin ? (r - rmin) / (rmax - rmin) : 0.5;
  int rgb[3];
  jl_viridis(1.0 - t, rgb); /* small circles light, large ones dark */
  jl_buf_printf(b, "<circle cx=\"%.9g\" cy=\"%.9g\" r=\"%.9g\" fill=\"#%02x%02x%02x\" "
                   "stroke=\"#1a1a1a\" stroke-width=\"%.4g\"/>\n",
                pk->x[i], -pk->y[i], r, rgb[0], rgb[1], rgb[2], R / 700.0);
  char label[32];
  jl_radius_label(label, sizeof label, r);
  size_t len = strlen(label);
  double size = r * fmin(0.9, 1.3 / (double)len);
  if (size < R / 90.0) return;   /* unreadable at the usual picture size */
  jl_buf_printf(b, "<text x=\"%.9g\" y=\"%.9g\" font-size=\"%.4g\" text-anchor=\"middle\" "
                   "dominant-baseline=\"central\" fill=\"%s\">%s</text>\n",
                pk->x[i], -pk->y[i], size, 1.0 - t < 0.45 ? "#ffffff" : "#111111", label);
}

int jl_circle_write_svg(const char *path, const jl_circle_problem *prob,
                        const jl_circle_packing *pk, jl_error *err) {
  double R = pk->R;
  if (!(R > 0) || !isfinite(R))
    return jl_error_set(err, JL_ERR_INPUT, "%s: the packing's R must be a finite number > 0", path);
  double rmin = INFINITY, rmax = 0.0;
  for (int i = 0; i < pk->n; ++i) {
    rmin = fmin(rmin, pk->r[i]);
    rmax = fmax(rmax, pk->r[i]);
  }
  double m = 0.04 * R, title = 0.1 * R, w = 2.0 * (R + m), h = w + title;
  jl_buf b = {0};
  jl_buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"%.0f\" "
                    "viewBox=\"%.9g %.9g %.9g %.9g\" font-family=\"Helvetica, Arial, sans-serif\">\n",
                800.0 * h / w, -(R + m), -(R + m) - title, w, h);
  jl_buf_printf(&b, "<rect x=\"%.9g\" y=\"%.9g\" width=\"%.9g\" height=\"%.9g\" fill=\"#ffffff\"/>\n",
                -(R + m), -(R + m) - title, w, h);
  jl_svg_title(&b, prob, pk, -(R + m) - 0.3 * title, 0.45 * title);
  jl_buf_printf(&b, "<circle cx=\"0\" cy=\"0\" r=\"%.9g\" fill=\"none\" stroke=\"#333333\" "
                    "stroke-width=\"%.4g\"/>\n", R, R / 250.0);
  for (int i = 0; i < pk->n; ++i) jl_svg_circle(&b, pk, i, rmin, rmax);
  jl_buf_printf(&b, "</svg>\n");
  return jl_buf_write_atomic(&b, path, err);
}
