/* A mesh file's bytes checked before assimp reads them: the element counts
 * a PLY header declares, a binary STL's triangle count and the faces and
 * vertices of ASCII STL and OBJ text must fit the file and the limits
 * below, so no count in a file makes the import allocate more than the
 * limits allow (a 383-byte PLY claiming 1.2e9 faces is refused here). */
#ifndef JL_MESH_SCAN_H
#define JL_MESH_SCAN_H

#include <stddef.h>

#include "error.h"

/* Triangles in one mesh, after triangulation: about 200 bytes each through
 * the import and validation, so 5 million stay near 1 GB. */
#define JL_MESH_TRIANGLES_MAX 5000000L
/* Vertices before merging: an STL stores three per triangle. */
#define JL_MESH_VERTICES_MAX (3 * JL_MESH_TRIANGLES_MAX)

/* Checks data[0..len), the contents of the mesh file path (the format from
 * the PLY magic line or the extension .stl, .ply, .obj; other formats pass).
 * Errors name path and are JL_ERR_INPUT. */
int jl_mesh_scan(const char *path, const char *data, size_t len, jl_error *err);

#endif
