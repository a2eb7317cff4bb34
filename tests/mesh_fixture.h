/* Loads a mesh of meshes/ (the directory in JL_MESH_DIR, set by
 * tests/meson.build) in mm, failing the test with the loader's message.
 * Include after cmocka.h. */
#ifndef JL_MESH_FIXTURE_H
#define JL_MESH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "mesh.h"

static void mesh_fixture_load(jl_mesh *m, const char *file) {
  const char *dir = getenv("JL_MESH_DIR");
  assert_non_null(dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  jl_error err = {0};
  jl_mesh_report rep;
  if (jl_mesh_load(m, path, 1.0, &rep, &err) != JL_OK) fail_msg("%s: %s", path, err.msg);
}

#endif
