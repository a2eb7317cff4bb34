/* Trunk volume (include/jostle/trunk.h): blocks in a mesh file or in arrays. */
#include "py_jostle.h"

#include <jostle/trunk.h>

#include <limits.h>

static PyObject *jl_py_trunk_out(jl_trunk_result *res) {
  return Py_BuildValue("{s:i,s:N,s:N,s:d,s:d,s:i,s:i,s:O,s:d,s:d,s:d,s:s,s:s}", "count", res->count,
                       "centres", jl_py_bytes(res->centre, 3 * (Py_ssize_t)res->count),
                       "quaternions", jl_py_bytes(res->quat, 4 * (Py_ssize_t)res->count),
                       "mesh_volume", res->mesh_volume_l, "reachable", res->reachable_l,
                       "upper_bound", res->upper_bound, "baseline", res->baseline,
                       "fills_complete", res->fills_complete ? Py_True : Py_False,
                       "max_penetration", res->max_penetration_mm, "max_overlap",
                       res->max_overlap_mm, "time", res->time_s, "stopped_by",
                       jl_py_stop_name(res->stopped_by), "device_name", res->device_name);
}

/* trunk_volume(path, vertices, triangles, ...): the mesh from the file at path,
 * or (path None) from vertices (doubles, 3 a vertex) and triangles (ints, 3 a
 * triangle). */
static PyObject *jl_py_trunk_volume(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"path", "vertices", "triangles", "time", "device", "seed",
                           "threads", "units", "progress", NULL};
  PyObject *path = NULL, *vert_obj = Py_None, *tri_obj = Py_None, *progress = Py_None;
  jl_trunk_options o;
  jl_trunk_options_default(&o);
  unsigned long long seed = o.seed;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|OOdsKisO", kwlist, jl_py_path, &path,
                                   &vert_obj, &tri_obj, &o.time_s, &o.device, &seed,
                                   &o.threads, &o.units, &progress))
    return NULL;
  o.seed = seed;
  double *vert = NULL;
  int *tri = NULL;
  Py_ssize_t nv = 0, nt = 0;
  PyObject *out = NULL;
  if (progress != Py_None && !PyCallable_Check(progress)) {
    PyErr_SetString(PyExc_TypeError, "progress: expected a callable or None");
    goto done;
  }
  if (!path) {
    if (!(vert = jl_py_doubles(vert_obj, "vertices", &nv))) goto done;
    if (!(tri = jl_py_ints(tri_obj, "triangles", &nt))) goto done;
    if (nv % 3 != 0 || nt % 3 != 0 || nv / 3 > INT_MAX || nt / 3 > INT_MAX) {
      PyErr_SetString(jl_py_input_error,
                      "mesh: expected 3 coordinates a vertex and 3 indices a triangle");
      goto done;
    }
  }
  jl_trunk_result res;
  jl_py_run run;
  jl_py_run_init(&run, progress);
  o.progress = jl_py_run_progress;
  o.progress_ctx = &run;
  jl_error err = {0};
  run.ts = PyEval_SaveThread();
  int rc = path ? jl_trunk_volume(PyBytes_AS_STRING(path), &o, &res, &err)
                : jl_trunk_volume_triangles(vert, (int)(nv / 3), tri, (int)(nt / 3), &o, &res,
                                            &err);
  PyEval_RestoreThread(run.ts);
  if (jl_py_run_finish(&run) < 0) {
    if (rc == JL_OK) jl_trunk_result_free(&res);
    goto done;
  }
  if (rc != JL_OK) {
    jl_py_raise(&err);
    goto done;
  }
  out = jl_py_trunk_out(&res);
  jl_trunk_result_free(&res);
done:
  PyMem_RawFree(vert);
  PyMem_RawFree(tri);
  Py_XDECREF(path);
  return out;
}

PyMethodDef jl_py_trunk_methods[] = {
  {"trunk_volume", (PyCFunction)(void (*)(void))jl_py_trunk_volume, METH_VARARGS | METH_KEYWORDS,
   "trunk_volume(path, vertices, triangles, time, device, seed, threads, units, progress) -> "
   "facts: jl_trunk_volume (path) or jl_trunk_volume_triangles, the GIL released."},
  {NULL, NULL, 0, NULL},
};
