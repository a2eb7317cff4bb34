/* The jostle._jostle extension: what its parts share. Only the public API
 * (include/jostle) is used. */
#ifndef JL_PY_JOSTLE_H
#define JL_PY_JOSTLE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <jostle/common.h>

/* jostle.Error and jostle.InputError (also a ValueError), made at import. */
extern PyObject *jl_py_error;
extern PyObject *jl_py_input_error;

/* Raises jostle's error as jostle.Error (InputError for JL_ERR_INPUT, MemoryError
 * for JL_ERR_NOMEM) with its message and .code; returns NULL. */
PyObject *jl_py_raise(const jl_error *err);

/* A long run with the GIL released. The progress callback takes the GIL back
 * about once a second: a pending signal's handler runs there, and a
 * KeyboardInterrupt stops the run with the best so far; the user's progress
 * callable (time, best, work) runs there too and stops the run by returning
 * True. Any other exception stops it and is raised after it. */
typedef struct jl_py_run {
  PyThreadState *ts;       /* the saved thread state while the GIL is released */
  PyObject *progress;      /* callable(time, best, work), or NULL */
  PyObject *exc;           /* another exception to raise afterwards (type, value, tb) */
  PyObject *exc_value, *exc_tb;
} jl_py_run;

void jl_py_run_init(jl_py_run *run, PyObject *progress);
/* jl_progress_fn for the options' progress field, ctx = the jl_py_run. */
int jl_py_run_progress(void *ctx, const jl_progress_info *p);
/* After the run (GIL held): takes a KeyboardInterrupt that came after the last
 * callback as a stop too; returns -1 with the exception set when the user's
 * callable or a signal handler raised something else, else 0. */
int jl_py_run_finish(jl_py_run *run);

/* The stop reason's name: "time", "target", "signal" or "rounds". */
const char *jl_py_stop_name(jl_stop_reason r);

/* A C-contiguous buffer (read flat) of doubles ('d') or ints ('i') copied
 * into malloc'd memory; sets an exception (naming what) and returns NULL on
 * anything else. *n receives the item count. */
double *jl_py_doubles(PyObject *obj, const char *what, Py_ssize_t *n);
int *jl_py_ints(PyObject *obj, const char *what, Py_ssize_t *n);

/* n doubles as a bytearray (numpy.frombuffer reads it without a copy). */
PyObject *jl_py_bytes(const double *v, Py_ssize_t n);

/* An "O&" converter for paths: str, bytes or os.PathLike to a bytes object
 * (a new reference the caller releases), None to NULL. */
int jl_py_path(PyObject *obj, void *out);

/* The parts, each adding its functions to the module. */
extern PyMethodDef jl_py_circles_methods[];
#ifdef JL_PY_HAVE_TRUNK
extern PyMethodDef jl_py_trunk_methods[];
#endif
#ifdef JL_PY_HAVE_SCENE
extern PyMethodDef jl_py_scene_methods[];
#endif

#endif
