/* Loads a mesh of meshes/ (the directory in JL_MESH_DIR, set by
 * tests/meson.build) in mm, failing the test with the loader's message.
 * Include after cmocka.h. */
#ifndef JL_MESH_FIXTURE_H
#define JL_MESH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "mesh.h"

/* scale: millimetres per unit of the file (1000 for a mesh in metres). */
static void mesh_fixture_load_scaled(jl_mesh *m, const char *file, double scale) {
  const char *dir = getenv("JL_MESH_DIR");
  assert_non_null(dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  jl_error err = {0};
  jl_mesh_report rep;
  if (jl_mesh_load(m, path, scale, &rep, &err) != JL_OK) fail_msg("%s: %s", path, err.msg);
}

static inline void mesh_fixture_load(jl_mesh *m, const char *file) { mesh_fixture_load_scaled(m, file, 1.0); }

#endif
