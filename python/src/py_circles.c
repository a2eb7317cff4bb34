/* Circles (include/jostle/circles.h): pack_circles, the record, writing a result. */
#include "py_jostle.h"

#include <jostle/circles.h>

#include <limits.h>
#include <stdlib.h>

#define JL_PY_CIRCLES_CAPSULE "jostle.circles_result"

static void jl_py_circles_capsule_free(PyObject *cap) {
  jl_circles_result *res = PyCapsule_GetPointer(cap, JL_PY_CIRCLES_CAPSULE);
  if (!res) {
    PyErr_Clear();
    return;
  }
  jl_circles_result_free(res);
  PyMem_RawFree(res);
}

/* (result capsule, facts dict): the capsule owns the C result for write(). */
static PyObject *jl_py_circles_out(jl_circles_result *res) {
  PyObject *cap = PyCapsule_New(res, JL_PY_CIRCLES_CAPSULE, jl_py_circles_capsule_free);
  if (!cap) {
    jl_circles_result_free(res);
    PyMem_RawFree(res);
    return NULL;
  }
  PyObject *facts = Py_BuildValue(
      "{s:N,s:N,s:N,s:d,s:d,s:d,s:d,s:d,s:K,s:K,s:K,s:K,s:s,s:s,s:s}",
      "x", jl_py_bytes(res->x, res->n), "y", jl_py_bytes(res->y, res->n), "r",
      jl_py_bytes(res->r, res->n), "R", res->R, "record", res->best_known_R, "max_overlap",
      res->max_overlap, "time", res->time_s, "time_to_best", res->time_to_best_s, "seed",
      (unsigned long long)res->seed, "trials", (unsigned long long)res->trials, "relax_steps",
      (unsigned long long)res->relax_steps, "restarts", (unsigned long long)res->restarts,
      "stopped_by", jl_py_stop_name(res->stopped_by), "device", res->device, "device_name",
      res->device_name);
  if (!facts) {
    Py_DECREF(cap);
    return NULL;
  }
  return Py_BuildValue("NN", cap, facts);
}

static PyObject *jl_py_pack_circles(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"radii", "time", "device", "seed", "threads", "target", "rounds",
                           "batch", "progress", "checkpoint", "continue_from", NULL};
  PyObject *radii_obj, *progress = Py_None, *ck_out = NULL, *ck_in = NULL;
  jl_circles_options o;
  jl_circles_options_default(&o);
  unsigned long long seed = o.seed;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|dsKidliOO&O&", kwlist, &radii_obj, &o.time_s,
                                   &o.device, &seed, &o.threads, &o.target_R, &o.rounds,
                                   &o.batch, &progress, jl_py_path, &ck_out, jl_py_path, &ck_in))
    return NULL;
  PyObject *out = NULL;
  Py_ssize_t n = 0;
  double *radii = NULL;
  jl_circles_result *res = NULL;
  if (progress != Py_None && !PyCallable_Check(progress)) {
    PyErr_SetString(PyExc_TypeError, "progress: expected a callable or None");
    goto done;
  }
  o.seed = seed;
  o.checkpoint = ck_out ? PyBytes_AS_STRING(ck_out) : NULL;
  o.continue_from = ck_in ? PyBytes_AS_STRING(ck_in) : NULL;
  if (!(radii = jl_py_doubles(radii_obj, "radii", &n))) goto done;
  if (n > INT_MAX) {
    PyErr_SetString(jl_py_input_error, "radii: too many circles");
    goto done;
  }
  if (!(res = PyMem_RawMalloc(sizeof *res))) {
    PyErr_NoMemory();
    goto done;
  }
  jl_py_run run;
  jl_py_run_init(&run, progress);
  o.progress = jl_py_run_progress;
  o.progress_ctx = &run;
  jl_error err = {0};
  run.ts = PyEval_SaveThread();
  int rc = jl_circles_pack(radii, (int)n, &o, res, &err);
  PyEval_RestoreThread(run.ts);
  if (rc != JL_OK) {
    PyMem_RawFree(res);
    res = NULL;
    if (jl_py_run_finish(&run) == 0) jl_py_raise(&err);
    goto done;
  }
  if (jl_py_run_finish(&run) < 0) {
    jl_circles_result_free(res);
    PyMem_RawFree(res);
    res = NULL;
    goto done;
  }
  out = jl_py_circles_out(res);
  res = NULL;  /* the result object owns it now */
done:
  if (res) PyMem_RawFree(res);
  PyMem_RawFree(radii);
  Py_XDECREF(ck_out);
  Py_XDECREF(ck_in);
  return out;
}

static PyObject *jl_py_circles_record(PyObject *self, PyObject *arg) {
  (void)self;
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  return PyFloat_FromDouble(n >= 0 && n <= INT_MAX ? jl_circles_record((int)n) : 0.0);
}

static PyObject *jl_py_circles_write(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"result", "json", "svg", "txt", NULL};
  PyObject *cap, *json = NULL, *svg = NULL, *txt = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&O&O&", kwlist, &cap, jl_py_path, &json,
                                   jl_py_path, &svg, jl_py_path, &txt))
    return NULL;
  PyObject *out = NULL;
  jl_circles_result *res = PyCapsule_GetPointer(cap, JL_PY_CIRCLES_CAPSULE);
  if (res) {
    jl_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = jl_circles_result_write(res, json ? PyBytes_AS_STRING(json) : NULL,
                                 svg ? PyBytes_AS_STRING(svg) : NULL,
                                 txt ? PyBytes_AS_STRING(txt) : NULL, &err);
    Py_END_ALLOW_THREADS
    if (rc == JL_OK) {
      out = Py_None;
      Py_INCREF(out);
    } else {
      jl_py_raise(&err);
    }
  }
  Py_XDECREF(json);
  Py_XDECREF(svg);
  Py_XDECREF(txt);
  return out;
}

PyMethodDef jl_py_circles_methods[] = {
  {"pack_circles", (PyCFunction)(void (*)(void))jl_py_pack_circles, METH_VARARGS | METH_KEYWORDS,
   "pack_circles(radii, time, device, seed, threads, target, rounds, batch, progress) -> "
   "(result, facts): jl_circles_pack with the GIL released."},
  {"circles_record", jl_py_circles_record, METH_O,
   "The contest record for radii 1..n (n = 5..50), 0 for other n."},
  {"circles_write", (PyCFunction)(void (*)(void))jl_py_circles_write, METH_VARARGS | METH_KEYWORDS,
   "circles_write(result, json=None, svg=None, txt=None): jl_circles_result_write."},
  {NULL, NULL, 0, NULL},
};
