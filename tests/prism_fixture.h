/* A prism for tests: a simple polygon in the xz plane (x, z pairs, either
 * winding) extruded along y from 0 to len, its end caps cut into ears,
 * validated (jl_mesh_validate orients it outward). Include after cmocka.h. */
#ifndef JL_PRISM_FIXTURE_H
#define JL_PRISM_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "mesh.h"

static double prism_cross(const double *a, const double *b, const double *c) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

/* Ears of a simple polygon of n points (xz, 2 n doubles), counter-clockwise
 * in (x, z): n - 2 triangles of indices into tri. */
static void prism_ears(const double *xz, int n, int *tri) {
  int *idx = malloc((size_t)n * sizeof *idx), m = n, t = 0;
  assert_non_null(idx);
  for (int i = 0; i < n; ++i) idx[i] = i;
  while (m > 3) {
    int found = 0;
    for (int e = 0; e < m && !found; ++e) {
      int a = idx[(e + m - 1) % m], b = idx[e], c = idx[(e + 1) % m];
      if (prism_cross(xz + 2 * a, xz + 2 * b, xz + 2 * c) <= 0.0) continue;  /* reflex */
      int inside = 0;
      for (int q = 0; q < m && !inside; ++q) {
        int p = idx[q];
        if (p == a || p == b || p == c) continue;
        inside = prism_cross(xz + 2 * a, xz + 2 * b, xz + 2 * p) >= 0.0 &&
                 prism_cross(xz + 2 * b, xz + 2 * c, xz + 2 * p) >= 0.0 &&
                 prism_cross(xz + 2 * c, xz + 2 * a, xz + 2 * p) >= 0.0;
      }
      if (inside) continue;
      tri[3 * t] = a; tri[3 * t + 1] = b; tri[3 * t + 2] = c;
      ++t;
      memmove(idx + e, idx + e + 1, (size_t)(m - e - 1) * sizeof *idx);
      --m;
      found = 1;
    }
    assert_true(found);
  }
  tri[3 * t] = idx[0]; tri[3 * t + 1] = idx[1]; tri[3 * t + 2] = idx[2];
  free(idx);
}

static void prism_mesh(jl_mesh *m, const double *xz_in, int n, double len) {
  double *xz = malloc(2 * (size_t)n * sizeof *xz);
  assert_non_null(xz);
  double area = 0.0;
  for (int i = 0; i < n; ++i) area += xz_in[2 * i] * xz_in[2 * ((i + 1) % n) + 1] - xz_in[2 * ((i + 1) % n)] * xz_in[2 * i + 1];
  for (int i = 0; i < n; ++i) {  /* counter-clockwise in (x, z) */
    int s = area > 0.0 ? i : n - 1 - i;
    xz[2 * i] = xz_in[2 * s];
    xz[2 * i + 1] = xz_in[2 * s + 1];
  }
  double *v = malloc(6 * (size_t)n * sizeof *v);
  int nt = 2 * n + 2 * (n - 2);
  int *t = malloc(3 * (size_t)nt * sizeof *t), *ears = malloc(3 * (size_t)(n - 2) * sizeof *ears);
  assert_non_null(v);
  assert_non_null(t);
  assert_non_null(ears);
  for (int i = 0; i < n; ++i) {  /* vertex i at y = 0, n + i at y = len */
    v[3 * i] = xz[2 * i]; v[3 * i + 1] = 0.0; v[3 * i + 2] = xz[2 * i + 1];
    v[3 * (n + i)] = xz[2 * i]; v[3 * (n + i) + 1] = len; v[3 * (n + i) + 2] = xz[2 * i + 1];
  }
  int k = 0;
  for (int i = 0; i < n; ++i) {
    int j = (i + 1) % n;
    int q[6] = {i, j, n + j, i, n + j, n + i};
    memcpy(t + 3 * k, q, sizeof q);
    k += 2;
  }
  prism_ears(xz, n, ears);
  for (int e = 0; e < n - 2; ++e) {
    int q[6] = {ears[3 * e], ears[3 * e + 2], ears[3 * e + 1],
                n + ears[3 * e], n + ears[3 * e + 1], n + ears[3 * e + 2]};
    memcpy(t + 3 * k, q, sizeof q);
    k += 2;
  }
  jl_error err = {0};
  jl_mesh_report rep;
  assert_int_equal(jl_mesh_from_arrays(m, v, 2 * n, t, nt, &err), JL_OK);
  if (jl_mesh_validate(m, "prism", &rep, &err) != JL_OK) fail_msg("prism: %s", err.msg);
  free(v);
  free(t);
  free(ears);
  free(xz);
}

#endif
