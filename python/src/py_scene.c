/* Scenes (include/jostle/scene.h): a jl_scene_sim in a capsule, stepped with
 * the GIL released, its state read out as doubles. */
#include "py_jostle.h"

#include <jostle/scene.h>

#include <limits.h>
#include <string.h>
#include <time.h>

#define JL_PY_SCENE_CAPSULE "jostle.scene_sim"
/* A body as the package passes it: shape, size[3], position[3],
 * orientation[4], velocity[3], angular_velocity[3], density. */
#define JL_PY_BODY_FIELDS 18
/* step() runs a chunk of steps with the GIL released, then handles signals:
 * chunks grow until one takes about this long. */
#define JL_PY_STEP_CHUNK_S 0.1

typedef struct jl_py_scene {
  jl_scene_sim *sim;
  int busy;                /* being stepped with the GIL released */
} jl_py_scene;

static void jl_py_scene_capsule_free(PyObject *cap) {
  jl_py_scene *s = PyCapsule_GetPointer(cap, JL_PY_SCENE_CAPSULE);
  if (!s) {
    PyErr_Clear();
    return;
  }
  jl_scene_sim_free(s->sim);
  PyMem_RawFree(s);
}

static PyObject *jl_py_scene_wrap(jl_scene_sim *sim) {
  jl_py_scene *s = PyMem_RawMalloc(sizeof *s);
  if (!s) {
    jl_scene_sim_free(sim);
    return PyErr_NoMemory();
  }
  s->sim = sim;
  s->busy = 0;
  PyObject *cap = PyCapsule_New(s, JL_PY_SCENE_CAPSULE, jl_py_scene_capsule_free);
  if (!cap) {
    jl_scene_sim_free(sim);
    PyMem_RawFree(s);
  }
  return cap;
}

/* The scene in a capsule, not being stepped by another thread. */
static jl_py_scene *jl_py_scene_get(PyObject *cap) {
  jl_py_scene *s = PyCapsule_GetPointer(cap, JL_PY_SCENE_CAPSULE);
  if (s && s->busy) {
    PyErr_SetString(PyExc_RuntimeError, "scene: being stepped by another thread");
    return NULL;
  }
  return s;
}

static PyObject *jl_py_scene_load(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"path", "device", "threads", NULL};
  PyObject *path = NULL;
  jl_scene_options o;
  jl_scene_options_default(&o);
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|si", kwlist, PyUnicode_FSConverter, &path,
                                   &o.device, &o.threads))
    return NULL;
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = jl_scene_sim_load(PyBytes_AS_STRING(path), &o, &sim, &err);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (rc != JL_OK) return jl_py_raise(&err);
  return jl_py_scene_wrap(sim);
}

/* Three doubles from a sequence, or leaves v as it is for None. */
static int jl_py_vec3(PyObject *obj, const char *what, double v[3]) {
  if (obj == Py_None) return 0;
  PyObject *seq = PySequence_Fast(obj, what);
  if (!seq) return -1;
  if (PySequence_Fast_GET_SIZE(seq) != 3) {
    PyErr_Format(PyExc_ValueError, "%s: expected 3 numbers", what);
    Py_DECREF(seq);
    return -1;
  }
  double t[3];
  for (int i = 0; i < 3; ++i) {
    t[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    if (t[i] == -1.0 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return -1;
    }
  }
  Py_DECREF(seq);
  memcpy(v, t, sizeof t);
  return 0;
}

static int jl_py_opt_double(PyObject *obj, double *v) {
  if (obj == Py_None) return 0;
  double d = PyFloat_AsDouble(obj);
  if (d == -1.0 && PyErr_Occurred()) return -1;
  *v = d;
  return 0;
}

/* scene_create(bodies, gravity, dt, friction, restitution, solver, iterations,
 * device, threads): bodies as JL_PY_BODY_FIELDS doubles each; None keeps a
 * setting's default. */
static PyObject *jl_py_scene_create(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"bodies", "gravity", "dt", "friction", "restitution", "solver",
                           "iterations", "device", "threads", NULL};
  PyObject *bodies_obj, *gravity = Py_None, *dt = Py_None, *friction = Py_None,
                        *restitution = Py_None, *iterations = Py_None;
  const char *solver = NULL;
  jl_scene_settings st;
  jl_scene_settings_default(&st);
  jl_scene_options o;
  jl_scene_options_default(&o);
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOzOsi", kwlist, &bodies_obj, &gravity, &dt,
                                   &friction, &restitution, &solver, &iterations, &o.device,
                                   &o.threads))
    return NULL;
  if (jl_py_vec3(gravity, "gravity", st.gravity) < 0 || jl_py_opt_double(dt, &st.dt) < 0 ||
      jl_py_opt_double(friction, &st.friction) < 0 ||
      jl_py_opt_double(restitution, &st.restitution) < 0)
    return NULL;
  if (solver) st.solver = solver;
  if (iterations != Py_None) {
    long it = PyLong_AsLong(iterations);
    if (it == -1 && PyErr_Occurred()) return NULL;
    if (it < 0 || it > INT_MAX) {
      PyErr_SetString(jl_py_input_error, "iterations: expected 0 or more");
      return NULL;
    }
    st.iterations = (int)it;
  }
  Py_ssize_t nf = 0;
  double *f = jl_py_doubles(bodies_obj, "bodies", &nf);
  if (!f) return NULL;
  Py_ssize_t n = nf / JL_PY_BODY_FIELDS;
  if (nf % JL_PY_BODY_FIELDS != 0 || n > INT_MAX) {
    PyMem_RawFree(f);
    PyErr_Format(PyExc_ValueError, "bodies: expected %d numbers a body", JL_PY_BODY_FIELDS);
    return NULL;
  }
  jl_scene_body *b = PyMem_RawCalloc(n > 0 ? (size_t)n : 1, sizeof *b);
  if (!b) {
    PyMem_RawFree(f);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    const double *v = f + i * JL_PY_BODY_FIELDS;
    b[i].shape = (jl_scene_shape)(int)v[0];
    memcpy(b[i].size, v + 1, sizeof b[i].size);
    memcpy(b[i].position, v + 4, sizeof b[i].position);
    memcpy(b[i].orientation, v + 7, sizeof b[i].orientation);
    memcpy(b[i].velocity, v + 11, sizeof b[i].velocity);
    memcpy(b[i].angular_velocity, v + 14, sizeof b[i].angular_velocity);
    b[i].density = v[17];
  }
  PyMem_RawFree(f);
  jl_scene_sim *sim = NULL;
  jl_error err = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = jl_scene_sim_create(&st, b, (int)n, &o, &sim, &err);
  Py_END_ALLOW_THREADS
  PyMem_RawFree(b);
  if (rc != JL_OK) return jl_py_raise(&err);
  return jl_py_scene_wrap(sim);
}

static double jl_py_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* scene_step(sim, steps): a signal's exception (KeyboardInterrupt) stops it
 * between chunks, the steps done kept. */
static PyObject *jl_py_scene_step(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *cap;
  long steps;
  if (!PyArg_ParseTuple(args, "Ol", &cap, &steps)) return NULL;
  jl_py_scene *s = jl_py_scene_get(cap);
  if (!s) return NULL;
  if (steps < 0) {
    PyErr_SetString(jl_py_input_error, "step: steps must be >= 0");
    return NULL;
  }
  long chunk = 1;
  s->busy = 1;
  for (long done = 0; done < steps;) {
    long k = chunk < steps - done ? chunk : steps - done;
    jl_error err = {0};
    int rc;
    double t0 = jl_py_now(), dt;
    long before = jl_scene_sim_steps_done(s->sim);
    Py_BEGIN_ALLOW_THREADS
    rc = jl_scene_sim_step(s->sim, k, &err);
    Py_END_ALLOW_THREADS
    dt = jl_py_now() - t0;
    if (rc != JL_OK) {
      s->busy = 0;
      return jl_py_raise(&err);
    }
    /* fewer steps than asked: the state stopped being finite (a diverged
     * solve), and the run is over */
    if (jl_scene_sim_steps_done(s->sim) - before < k) break;
    done += k;
    if (PyErr_CheckSignals() < 0) {
      s->busy = 0;
      return NULL;
    }
    if (dt < JL_PY_STEP_CHUNK_S && chunk < LONG_MAX / 2) chunk *= 2;
  }
  s->busy = 0;
  Py_RETURN_NONE;
}

/* scene_state(sim, what): "positions" or "velocities" (3 doubles a body),
 * "orientations" (4, w x y z). */
static PyObject *jl_py_scene_state(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *cap;
  const char *what;
  if (!PyArg_ParseTuple(args, "Os", &cap, &what)) return NULL;
  jl_py_scene *s = jl_py_scene_get(cap);
  if (!s) return NULL;
  int (*get)(jl_scene_sim *, double *, jl_error *) = NULL;
  int per = 3;
  if (strcmp(what, "positions") == 0) {
    get = jl_scene_sim_positions;
  } else if (strcmp(what, "velocities") == 0) {
    get = jl_scene_sim_velocities;
  } else if (strcmp(what, "orientations") == 0) {
    get = jl_scene_sim_orientations;
    per = 4;
  } else {
    PyErr_Format(PyExc_ValueError, "scene_state: unknown state \"%s\"", what);
    return NULL;
  }
  Py_ssize_t n = (Py_ssize_t)per * jl_scene_sim_body_count(s->sim);
  PyObject *out = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
  if (!out) return NULL;
  jl_error err = {0};
  if (get(s->sim, (double *)(void *)PyByteArray_AS_STRING(out), &err) != JL_OK) {
    Py_DECREF(out);
    return jl_py_raise(&err);
  }
  return out;
}

static PyObject *jl_py_scene_info(PyObject *self, PyObject *cap) {
  (void)self;
  jl_py_scene *s = jl_py_scene_get(cap);
  if (!s) return NULL;
  return Py_BuildValue("{s:i,s:d,s:l,s:s}", "bodies", jl_scene_sim_body_count(s->sim), "time",
                       jl_scene_sim_time(s->sim), "steps", jl_scene_sim_steps_done(s->sim),
                       "device_name", jl_scene_sim_device_name(s->sim));
}

PyMethodDef jl_py_scene_methods[] = {
  {"scene_load", (PyCFunction)(void (*)(void))jl_py_scene_load, METH_VARARGS | METH_KEYWORDS,
   "scene_load(path, device, threads) -> sim: jl_scene_sim_load."},
  {"scene_create", (PyCFunction)(void (*)(void))jl_py_scene_create, METH_VARARGS | METH_KEYWORDS,
   "scene_create(bodies, gravity, dt, friction, restitution, solver, iterations, device, "
   "threads) -> sim: jl_scene_sim_create."},
  {"scene_step", jl_py_scene_step, METH_VARARGS, "scene_step(sim, steps): jl_scene_sim_step."},
  {"scene_state", jl_py_scene_state, METH_VARARGS,
   "scene_state(sim, \"positions\" | \"orientations\" | \"velocities\") -> doubles."},
  {"scene_info", jl_py_scene_info, METH_O,
   "scene_info(sim) -> {bodies, time, steps, device_name}."},
  {NULL, NULL, 0, NULL},
};
