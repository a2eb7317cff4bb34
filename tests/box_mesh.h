/* An axis-aligned box [x0, x1] x [y0, y1] x [z0, z1] as 8 vertices (vertex k
 * at x1 when k & 1, y1 when k & 2, z1 when k & 4) and 12 outward triangles,
 * appended to the arrays at vertex offset base. Triangles 8 and 9 are the
 * face x = x0, 10 and 11 the face x = x1, 2 and 3 the face z = z1. */
#ifndef JL_BOX_MESH_H
#define JL_BOX_MESH_H

static const int cube_tris[12][3] = {
  {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
  {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5},
};

static inline void box_arrays(double x0, double y0, double z0, double x1, double y1, double z1, int base,
                              double *v, int *t) {
  for (int k = 0; k < 8; ++k) {
    v[3 * k] = (k & 1) ? x1 : x0;
    v[3 * k + 1] = (k & 2) ? y1 : y0;
    v[3 * k + 2] = (k & 4) ? z1 : z0;
  }
  for (int f = 0; f < 12; ++f)
    for (int j = 0; j < 3; ++j) t[3 * f + j] = base + cube_tris[f][j];
}

#endif
