/* jostle._jostle: the module, its exceptions and what the parts share (the
 * GIL released during a run, signals and progress, buffers in and out). */
#include "py_jostle.h"

#include <stdlib.h>
#include <string.h>

PyObject *jl_py_error;
PyObject *jl_py_input_error;

PyObject *jl_py_raise(const jl_error *err) {
  if (err->code == JL_ERR_NOMEM) return PyErr_NoMemory();
  PyObject *type = err->code == JL_ERR_INPUT ? jl_py_input_error : jl_py_error;
  /* paths in the message may hold bytes that are not UTF-8: kept as os.fsdecode does */
  const char *msg = err->msg[0] ? err->msg : "jostle failed";
  PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "surrogateescape");
  if (!text) return NULL;
  PyObject *exc = PyObject_CallFunctionObjArgs(type, text, NULL);
  Py_DECREF(text);
  if (!exc) return NULL;
  PyObject *code = PyLong_FromLong(err->code);
  if (!code || PyObject_SetAttrString(exc, "code", code) < 0) {
    Py_XDECREF(code);
    Py_DECREF(exc);
    return NULL;
  }
  Py_DECREF(code);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  return NULL;
}

void jl_py_run_init(jl_py_run *run, PyObject *progress) {
  memset(run, 0, sizeof *run);
  run->progress = progress == Py_None ? NULL : progress;
}

/* Keeps the pending exception to raise after the run (GIL held). */
static void jl_py_run_keep(jl_py_run *run) {
  if (run->exc) {  /* the first one wins */
    PyErr_Clear();
    return;
  }
#if PY_VERSION_HEX >= 0x030C0000
  run->exc = PyErr_GetRaisedException();
#else
  PyErr_Fetch(&run->exc, &run->exc_value, &run->exc_tb);
#endif
}

/* A pending signal's handler; 1 when the run must stop. */
static int jl_py_run_signals(jl_py_run *run) {
  if (PyErr_CheckSignals() == 0) return 0;
  if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
    PyErr_Clear();  /* the search stops and returns its best */
  else
    jl_py_run_keep(run);
  return 1;
}

int jl_py_run_progress(void *ctx, const jl_progress_info *p) {
  jl_py_run *run = ctx;
  PyEval_RestoreThread(run->ts);
  int stop = jl_py_run_signals(run);
  if (!stop && run->progress) {
    PyObject *r = PyObject_CallFunction(run->progress, "ddK", p->time_s, p->best,
                                        (unsigned long long)p->work);
    if (!r) {
      stop = 1;
      if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
        PyErr_Clear();
      else
        jl_py_run_keep(run);
    } else {
      stop = PyObject_IsTrue(r);
      Py_DECREF(r);
      if (stop < 0) {
        jl_py_run_keep(run);
        stop = 1;
      }
    }
  }
  run->ts = PyEval_SaveThread();
  return stop;
}

int jl_py_run_finish(jl_py_run *run) {
  jl_py_run_signals(run);
  if (!run->exc) return 0;
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(run->exc);
#else
  PyErr_Restore(run->exc, run->exc_value, run->exc_tb);
#endif
  run->exc = run->exc_value = run->exc_tb = NULL;
  return -1;
}

const char *jl_py_stop_name(jl_stop_reason r) {
  switch (r) {
    case JL_STOPPED_BY_TIME: return "time";
    case JL_STOPPED_BY_TARGET: return "target";
    case JL_STOPPED_BY_SIGNAL: return "signal";
    case JL_STOPPED_BY_ROUNDS: return "rounds";
  }
  return "unknown";
}

/* A copy of a C-contiguous buffer of the given format, read flat. */
static void *jl_py_buffer_copy(PyObject *obj, const char *what, char format, Py_ssize_t itemsize,
                               Py_ssize_t *n) {
  Py_buffer view;
  if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
  void *out = NULL;
  const char *f = view.format ? view.format : "B";
  if (*f == '@' || *f == '=' || *f == '<') ++f;
  if (f[0] != format || f[1] != '\0' || view.itemsize != itemsize) {
    PyErr_Format(PyExc_TypeError, "%s: expected items of format '%c', got '%s'", what, format,
                 view.format ? view.format : "B");
  } else {
    *n = view.len / itemsize;
    out = PyMem_RawMalloc(view.len > 0 ? (size_t)view.len : 1);
    if (!out)
      PyErr_NoMemory();
    else
      memcpy(out, view.buf, (size_t)view.len);
  }
  PyBuffer_Release(&view);
  return out;
}

double *jl_py_doubles(PyObject *obj, const char *what, Py_ssize_t *n) {
  return jl_py_buffer_copy(obj, what, 'd', sizeof(double), n);
}

int *jl_py_ints(PyObject *obj, const char *what, Py_ssize_t *n) {
  return jl_py_buffer_copy(obj, what, 'i', sizeof(int), n);
}

PyObject *jl_py_bytes(const double *v, Py_ssize_t n) {
  return PyByteArray_FromStringAndSize((const char *)v, n * (Py_ssize_t)sizeof(double));
}

/* Paths through PyUnicode_FSConverter (str, bytes or os.PathLike), or None. */
int jl_py_path(PyObject *obj, void *out) {
  if (obj == NULL) {  /* cleanup call */
    Py_CLEAR(*(PyObject **)out);
    return 1;
  }
  if (obj == Py_None) {
    *(PyObject **)out = NULL;
    return Py_CLEANUP_SUPPORTED;
  }
  return PyUnicode_FSConverter(obj, out);
}

static PyObject *jl_py_version(PyObject *self, PyObject *args) {
  (void)self;
  (void)args;
  return PyUnicode_FromString(jl_version());
}

static PyObject *jl_py_cuda_count(PyObject *self, PyObject *args) {
  (void)self;
  (void)args;
  int n;
  Py_BEGIN_ALLOW_THREADS
  n = jl_device_cuda_count();
  Py_END_ALLOW_THREADS
  return PyLong_FromLong(n);
}

static PyMethodDef jl_py_module_methods[] = {
  {"version", jl_py_version, METH_NOARGS, "jostle's version, \"0.1.0\"."},
  {"cuda_device_count", jl_py_cuda_count, METH_NOARGS,
   "The CUDA devices this build can use (0 without CUDA or without a device)."},
  {NULL, NULL, 0, NULL},
};

static struct PyModuleDef jl_py_module = {
  PyModuleDef_HEAD_INIT, "jostle._jostle",
  "The C extension under the jostle package (include/jostle, libjostle).", -1,
  jl_py_module_methods, NULL, NULL, NULL, NULL,
};

static int jl_py_add_part(PyObject *m, PyMethodDef *methods) {
  return PyModule_AddFunctions(m, methods);
}

PyMODINIT_FUNC PyInit__jostle(void) {
  PyObject *m = PyModule_Create(&jl_py_module);
  if (!m) return NULL;
  jl_py_error = PyErr_NewExceptionWithDoc(
      "jostle.Error", "A jostle failure; str() is jostle's message, .code its status code.",
      PyExc_Exception, NULL);
  if (!jl_py_error) goto fail;
  PyObject *bases = PyTuple_Pack(2, jl_py_error, PyExc_ValueError);
  if (!bases) goto fail;
  jl_py_input_error = PyErr_NewExceptionWithDoc(
      "jostle.InputError", "Bad input: the message names the file or field and the reason.",
      bases, NULL);
  Py_DECREF(bases);
  if (!jl_py_input_error) goto fail;
  Py_INCREF(jl_py_error);
  if (PyModule_AddObject(m, "Error", jl_py_error) < 0) {
    Py_DECREF(jl_py_error);
    goto fail;
  }
  Py_INCREF(jl_py_input_error);
  if (PyModule_AddObject(m, "InputError", jl_py_input_error) < 0) {
    Py_DECREF(jl_py_input_error);
    goto fail;
  }
  if (jl_py_add_part(m, jl_py_circles_methods) < 0) goto fail;
#ifdef JL_PY_HAVE_TRUNK
  if (jl_py_add_part(m, jl_py_trunk_methods) < 0) goto fail;
#endif
#ifdef JL_PY_HAVE_SCENE
  if (jl_py_add_part(m, jl_py_scene_methods) < 0) goto fail;
#endif
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
