/* Trunk meshes (STL ASCII and binary, OBJ, PLY) through jl_mesh_load: assimp's
 * import, then welding and validation, as `trunk MESH` reads them. assimp
 * picks its importer by the file name, so the input is named by what it
 * looks like: "ply" first is PLY, "solid" first ASCII STL, other text OBJ,
 * and anything with binary bytes binary STL. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "mesh.h"

static const char *jl_mesh_name(const uint8_t *data, size_t size) {
  if (size >= 3 && memcmp(data, "ply", 3) == 0) return "mesh.ply";
  if (size >= 5 && memcmp(data, "solid", 5) == 0) return "mesh.stl";
  for (size_t i = 0; i < size && i < 512; ++i)
    if ((data[i] < 0x20 && data[i] != '\n' && data[i] != '\r' && data[i] != '\t') || data[i] >= 0x7f)
      return "mesh.stl";
  return "mesh.obj";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, jl_mesh_name(data, size));
  jl_mesh m;
  jl_mesh_report rep;
  memset(&rep, 0, sizeof rep);
  jl_error err = {0};
  int rc = jl_mesh_load(&m, path, 1.0, &rep, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    JL_FUZZ_CHECK(m.vertices == NULL && m.triangles == NULL);
    return 0;
  }
  JL_FUZZ_CHECK(m.n_triangles >= 4 && m.n_vertices >= 4);
  for (int i = 0; i < 3 * m.n_vertices; ++i) JL_FUZZ_CHECK(isfinite(m.vertices[i]));
  for (int i = 0; i < 3 * m.n_triangles; ++i)
    JL_FUZZ_CHECK(m.triangles[i] >= 0 && m.triangles[i] < m.n_vertices);
  JL_FUZZ_CHECK(rep.volume > 0 && jl_mesh_volume(&m) > 0);
  jl_mesh_free(&m);
  return 0;
}
