/* Host side of the scene pipeline on the device: turns the launchers'
 * messages (kernels/scene/scene_*.cu) into jl_error values. */
#include "scene_gpu.h"

#include <math.h>
#include <string.h>

#include "grid_pairs.h"
#include "setup_math.h"

#ifdef JL_HAVE_CUDA
int jl_cuda_scene_create(jl_scene_gpu **out, int ordinal, char *msg, int msg_len);
void jl_cuda_scene_destroy(jl_scene_gpu *g);
size_t jl_cuda_scene_bytes(const jl_scene_gpu *g);
void jl_cuda_scene_set_limit(jl_scene_gpu *g, size_t bytes);
void jl_cuda_scene_set_graphs(jl_scene_gpu *g, int on);
void jl_cuda_scene_set_persistent(jl_scene_gpu *g, int on);
void jl_cuda_scene_set_streamed(jl_scene_gpu *g, int mode);
void jl_cuda_scene_set_round_narrow(jl_scene_gpu *g, int on);
void jl_cuda_scene_set_staged_narrow(jl_scene_gpu *g, int on);
void jl_cuda_scene_set_pair_skin(jl_scene_gpu *g, double share);
void jl_cuda_scene_set_soa_by_setup(jl_scene_gpu *g, int on);
long jl_cuda_scene_persistent_solves(const jl_scene_gpu *g);
void jl_cuda_scene_set_persistent_cache(jl_scene_gpu *g, int mode);
const char *jl_cuda_scene_persistent_cache(const jl_scene_gpu *g);
int jl_cuda_scene_set_bodies(jl_scene_gpu *g, const jl_bodies *b, char *msg, int msg_len);
int jl_cuda_scene_get_bodies(jl_scene_gpu *g, jl_bodies *b, char *msg, int msg_len);
int jl_cuda_scene_half_step(jl_scene_gpu *g, double half_dt, char *msg, int msg_len);
int jl_cuda_scene_free_velocity(jl_scene_gpu *g, const double gravity[3], double dt, double *dv,
                                char *msg, int msg_len);
int jl_cuda_scene_collide(jl_scene_gpu *g, double margin, jl_gpu_collide_stats *st, char *msg,
                          int msg_len);
int jl_cuda_scene_get_pairs(jl_scene_gpu *g, int *pair_a, int *pair_b, char *msg, int msg_len);
int jl_cuda_scene_get_contacts(jl_scene_gpu *g, jl_contacts *out, char *msg, int msg_len);
int jl_cuda_scene_contact_count(const jl_scene_gpu *g);
int jl_cuda_scene_set_problem(jl_scene_gpu *g, const jl_contact_problem *p, char *msg,
                              int msg_len);
int jl_cuda_scene_jor(jl_scene_gpu *g, int on_g, int apgd, double alpha, double tol_abs, double tol_rel,
                      int max_iter, int check_every, double *lambda, int *iterations, double *residual,
                      int *converged, int *restarts, double *alpha_out, char *msg, int msg_len);
int jl_cuda_scene_setup(jl_scene_gpu *g, const double *mu_table, const double *eps_n_table,
                        const double *eps_t_table, int build_g, int write_soa, char *msg,
                        int msg_len);
void jl_cuda_scene_problem_size(const jl_scene_gpu *g, int *n, int *nb, int *nnz, int *has_g);
int jl_cuda_scene_get_problem(jl_scene_gpu *g, jl_contact_problem *p, char *msg, int msg_len);
void jl_cuda_scene_set_timing(jl_scene_gpu *g, int on);
void jl_cuda_scene_stage_times(const jl_scene_gpu *g, double *s);
int jl_cuda_scene_set_marks(jl_scene_gpu *g, int on, char *msg, int msg_len);
int jl_cuda_scene_marks(const jl_scene_gpu *g, const char **names, double *ms, int cap);
int jl_cuda_scene_step(jl_scene_gpu *g, double dt, const double gravity[3], double contact_tol,
                       const double *mu_table, const double *eps_n_table,
                       const double *eps_t_table, int kind, double alpha, double tol_abs,
                       double tol_rel, int max_iter, int warm_start, int check_every,
                       int *contacts, int *iterations, int *converged, int *restarts,
                       int *colours, int *groups, double *max_pen, double *residual, char *msg, int msg_len);
int jl_cuda_scene_get_colours(jl_scene_gpu *g, int *colour, int *colours, char *msg, int msg_len);
void jl_cuda_scene_kept(const jl_scene_gpu *g, int *pairs, int *body_lists);

/* Runs a launcher call with a message buffer; a failure becomes JL_ERR_DEVICE
 * (or JL_ERR_NOMEM when the device ran out of memory). */
#define JL_GPU_CALL(err, what, call)                                                    \
  do {                                                                                  \
    char msg[JL_ERROR_MSG_MAX - 64];                                                    \
    int msg_len = (int)sizeof msg;                                                      \
    msg[0] = '\0';                                                                      \
    if ((call) != 0) {                                                                  \
      int code_ = strstr(msg, "out of memory") ? JL_ERR_NOMEM : JL_ERR_DEVICE;           \
      return jl_error_set(err, code_, "%s: %s", what, msg);                             \
    }                                                                                   \
  } while (0)

int jl_scene_gpu_create(jl_scene_gpu **out, const jl_device *dev, jl_error *err) {
  *out = NULL;
  if (!dev || dev->kind != JL_DEVICE_CUDA)
    return jl_error_set(err, JL_ERR_DEVICE, "scene on the GPU: no CUDA device selected");
  JL_GPU_CALL(err, "scene on the GPU", jl_cuda_scene_create(out, dev->cuda_ordinal, msg, msg_len));
  return JL_OK;
}

void jl_scene_gpu_destroy(jl_scene_gpu *g) { jl_cuda_scene_destroy(g); }

size_t jl_scene_gpu_bytes(const jl_scene_gpu *g) { return jl_cuda_scene_bytes(g); }

void jl_scene_gpu_set_limit(jl_scene_gpu *g, size_t bytes) { jl_cuda_scene_set_limit(g, bytes); }

void jl_scene_gpu_set_graphs(jl_scene_gpu *g, int on) { jl_cuda_scene_set_graphs(g, on); }
void jl_scene_gpu_set_persistent(jl_scene_gpu *g, int on) { jl_cuda_scene_set_persistent(g, on); }
void jl_scene_gpu_set_streamed(jl_scene_gpu *g, int mode) { jl_cuda_scene_set_streamed(g, mode); }
void jl_scene_gpu_set_round_narrow(jl_scene_gpu *g, int on) { jl_cuda_scene_set_round_narrow(g, on); }
void jl_scene_gpu_set_staged_narrow(jl_scene_gpu *g, int on) { jl_cuda_scene_set_staged_narrow(g, on); }
void jl_scene_gpu_set_pair_skin(jl_scene_gpu *g, double share) {
  jl_cuda_scene_set_pair_skin(g, share >= 0.0 && isfinite(share) ? share : JL_GP_SKIN);
}
void jl_scene_gpu_set_soa_by_setup(jl_scene_gpu *g, int on) { jl_cuda_scene_set_soa_by_setup(g, on); }
long jl_scene_gpu_persistent_solves(const jl_scene_gpu *g) {
  return jl_cuda_scene_persistent_solves(g);
}
void jl_scene_gpu_set_persistent_cache(jl_scene_gpu *g, int mode) {
  jl_cuda_scene_set_persistent_cache(g, mode);
}
const char *jl_scene_gpu_persistent_cache(const jl_scene_gpu *g) {
  return jl_cuda_scene_persistent_cache(g);
}

int jl_scene_gpu_set_bodies(jl_scene_gpu *g, const jl_bodies *b, jl_error *err) {
  JL_GPU_CALL(err, "upload bodies", jl_cuda_scene_set_bodies(g, b, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_get_bodies(jl_scene_gpu *g, jl_bodies *b, jl_error *err) {
  JL_GPU_CALL(err, "download bodies", jl_cuda_scene_get_bodies(g, b, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_half_step(jl_scene_gpu *g, double half_dt, jl_error *err) {
  JL_GPU_CALL(err, "integration", jl_cuda_scene_half_step(g, half_dt, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_free_velocity(jl_scene_gpu *g, const double gravity[3], double dt, double *dv,
                               jl_error *err) {
  JL_GPU_CALL(err, "free velocity", jl_cuda_scene_free_velocity(g, gravity, dt, dv, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_collide(jl_scene_gpu *g, double margin, jl_gpu_collide_stats *st, jl_error *err) {
  JL_GPU_CALL(err, "collision detection", jl_cuda_scene_collide(g, margin, st, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_get_pairs(jl_scene_gpu *g, int *pair_a, int *pair_b, jl_error *err) {
  JL_GPU_CALL(err, "download pairs", jl_cuda_scene_get_pairs(g, pair_a, pair_b, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_get_contacts(jl_scene_gpu *g, jl_contacts *out, jl_error *err) {
  int rc = jl_contacts_reserve(out, jl_cuda_scene_contact_count(g), err);
  if (rc != JL_OK) return rc;
  JL_GPU_CALL(err, "download contacts", jl_cuda_scene_get_contacts(g, out, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_setup(jl_scene_gpu *g, const double *mu_table, const double *eps_n_table,
                       const double *eps_t_table, int build_g, jl_error *err) {
  JL_GPU_CALL(err, "contact setup on the device",
              jl_cuda_scene_setup(g, mu_table, eps_n_table, eps_t_table, build_g, 0, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_set_problem(jl_scene_gpu *g, const jl_contact_problem *p, jl_error *err) {
  JL_GPU_CALL(err, "upload the contact problem", jl_cuda_scene_set_problem(g, p, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_get_problem(jl_scene_gpu *g, jl_contact_problem *p, jl_error *err) {
  int n, nb, nnz, has_g;
  jl_cuda_scene_problem_size(g, &n, &nb, &nnz, &has_g);
  int rc = jl_contact_problem_reserve(p, n, nb, has_g ? nnz : 0, err);
  if (rc != JL_OK) return rc;
  JL_GPU_CALL(err, "download the contact problem", jl_cuda_scene_get_problem(g, p, msg, msg_len));
  return JL_OK;
}

int jl_scene_gpu_jor(jl_scene_gpu *g, const jl_contact_problem *p, const jl_prox_opts *o,
                     int check_every, double *lambda, jl_prox_stats *st, jl_error *err) {
  memset(st, 0, sizeof *st);
  st->alpha = o->alpha;
  if (!(o->alpha > 0.0) || o->max_iter < 1)
    return jl_error_set(err, JL_ERR_INPUT, "solver: alpha must be > 0 and max_iter >= 1");
  if (p) {
    for (int i = 0; i < p->n; ++i)
      if (!(p->diag[2 * i] > 0.0) || !(p->diag[2 * i + 1] > 0.0))
        return jl_error_set(err, JL_ERR_INTERNAL, "contact %d has no dynamic body", i);
    int rc = jl_scene_gpu_set_problem(g, p, err);
    if (rc != JL_OK) return rc;
  }
  int n, nb, nnz, has_g;
  jl_cuda_scene_problem_size(g, &n, &nb, &nnz, &has_g);
  if (n <= 0) {
    st->converged = 1;
    return JL_OK;
  }
  JL_GPU_CALL(err, "JOR on the device",
              jl_cuda_scene_jor(g, !o->matrix_free, o->kind == JL_SOLVER_APGD, o->alpha, o->tol_abs, o->tol_rel,
                                o->max_iter, check_every, lambda, &st->iterations,
                                &st->residual, &st->converged, &st->restarts, &st->alpha, msg,
                                msg_len));
  return JL_OK;
}

int jl_scene_gpu_step(jl_scene_gpu *g, const jl_scene *s, int check_every, jl_gpu_step_stats *st,
                      jl_error *err) {
  memset(st, 0, sizeof *st);
  const jl_prox_opts *o = &s->solver;
  if (o->kind != JL_SOLVER_JOR && o->kind != JL_SOLVER_SOR && o->kind != JL_SOLVER_APGD)
    return jl_error_set(err, JL_ERR_INPUT, "the device step solves with JOR, SOR or APGD only");
  if (!(o->alpha > 0.0) || o->max_iter < 1)
    return jl_error_set(err, JL_ERR_INPUT, "solver: alpha must be > 0 and max_iter >= 1");
  JL_GPU_CALL(err, "time step on the device",
              jl_cuda_scene_step(g, s->dt, s->gravity, s->contact_tol, s->mu, s->eps_n, s->eps_t,
                                 (int)o->kind, o->alpha, o->tol_abs, o->tol_rel,
                                 o->max_iter, o->warm_start, check_every, &st->contacts,
                                 &st->iterations, &st->converged, &st->restarts, &st->colours,
                                 &st->groups, &st->max_penetration, &st->residual, msg, msg_len));
  jl_cuda_scene_kept(g, &st->pairs_kept, &st->body_lists_kept);
  return JL_OK;
}

void jl_scene_gpu_set_timing(jl_scene_gpu *g, int on) { jl_cuda_scene_set_timing(g, on); }
void jl_scene_gpu_stage_times(const jl_scene_gpu *g, double *seconds) {
  jl_cuda_scene_stage_times(g, seconds);
}
int jl_scene_gpu_set_marks(jl_scene_gpu *g, int on, jl_error *err) {
  JL_GPU_CALL(err, "turn the step's marks on", jl_cuda_scene_set_marks(g, on, msg, msg_len));
  return JL_OK;
}
int jl_scene_gpu_marks(const jl_scene_gpu *g, const char **names, double *ms, int cap) {
  return jl_cuda_scene_marks(g, names, ms, cap);
}

int jl_scene_gpu_get_colours(jl_scene_gpu *g, int *colour, int *colours, jl_error *err) {
  JL_GPU_CALL(err, "download the colouring",
              jl_cuda_scene_get_colours(g, colour, colours, msg, msg_len));
  return JL_OK;
}

#else /* built without CUDA */

int jl_scene_gpu_create(jl_scene_gpu **out, const jl_device *dev, jl_error *err) {
  (void)dev;
  *out = NULL;
  return jl_error_set(err, JL_ERR_DEVICE, "scene on the GPU: jostle was built without CUDA");
}
void jl_scene_gpu_destroy(jl_scene_gpu *g) { (void)g; }
size_t jl_scene_gpu_bytes(const jl_scene_gpu *g) {
  (void)g;
  return 0;
}
void jl_scene_gpu_set_limit(jl_scene_gpu *g, size_t bytes) { (void)g, (void)bytes; }
void jl_scene_gpu_set_graphs(jl_scene_gpu *g, int on) { (void)g, (void)on; }
void jl_scene_gpu_set_persistent(jl_scene_gpu *g, int on) { (void)g, (void)on; }
void jl_scene_gpu_set_streamed(jl_scene_gpu *g, int mode) { (void)g, (void)mode; }
void jl_scene_gpu_set_round_narrow(jl_scene_gpu *g, int on) { (void)g, (void)on; }
void jl_scene_gpu_set_staged_narrow(jl_scene_gpu *g, int on) { (void)g, (void)on; }
void jl_scene_gpu_set_pair_skin(jl_scene_gpu *g, double share) { (void)g, (void)share; }
void jl_scene_gpu_set_soa_by_setup(jl_scene_gpu *g, int on) { (void)g, (void)on; }
long jl_scene_gpu_persistent_solves(const jl_scene_gpu *g) {
  (void)g;
  return 0;
}
void jl_scene_gpu_set_persistent_cache(jl_scene_gpu *g, int mode) { (void)g, (void)mode; }
const char *jl_scene_gpu_persistent_cache(const jl_scene_gpu *g) {
  (void)g;
  return "";
}
void jl_scene_gpu_set_timing(jl_scene_gpu *g, int on) { (void)g, (void)on; }
void jl_scene_gpu_stage_times(const jl_scene_gpu *g, double *seconds) {
  (void)g;
  for (int k = 0; k < JL_STEP_STAGES; ++k) seconds[k] = 0.0;
}
int jl_scene_gpu_marks(const jl_scene_gpu *g, const char **names, double *ms, int cap) {
  (void)g, (void)names, (void)ms, (void)cap;
  return 0;
}
#define JL_NO_CUDA(err) jl_error_set(err, JL_ERR_DEVICE, "jostle was built without CUDA")
int jl_scene_gpu_set_bodies(jl_scene_gpu *g, const jl_bodies *b, jl_error *err) {
  (void)g, (void)b;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_set_marks(jl_scene_gpu *g, int on, jl_error *err) {
  (void)g, (void)on;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_get_bodies(jl_scene_gpu *g, jl_bodies *b, jl_error *err) {
  (void)g, (void)b;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_half_step(jl_scene_gpu *g, double half_dt, jl_error *err) {
  (void)g, (void)half_dt;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_free_velocity(jl_scene_gpu *g, const double gravity[3], double dt, double *dv,
                               jl_error *err) {
  (void)g, (void)gravity, (void)dt, (void)dv;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_collide(jl_scene_gpu *g, double margin, jl_gpu_collide_stats *st, jl_error *err) {
  (void)g, (void)margin;
  memset(st, 0, sizeof *st);
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_get_pairs(jl_scene_gpu *g, int *pair_a, int *pair_b, jl_error *err) {
  (void)g, (void)pair_a, (void)pair_b;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_get_contacts(jl_scene_gpu *g, jl_contacts *out, jl_error *err) {
  (void)g, (void)out;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_setup(jl_scene_gpu *g, const double *mu_table, const double *eps_n_table,
                       const double *eps_t_table, int build_g, jl_error *err) {
  (void)g, (void)mu_table, (void)eps_n_table, (void)eps_t_table, (void)build_g;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_set_problem(jl_scene_gpu *g, const jl_contact_problem *p, jl_error *err) {
  (void)g, (void)p;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_get_problem(jl_scene_gpu *g, jl_contact_problem *p, jl_error *err) {
  (void)g, (void)p;
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_step(jl_scene_gpu *g, const jl_scene *s, int check_every, jl_gpu_step_stats *st,
                      jl_error *err) {
  (void)g, (void)s, (void)check_every;
  memset(st, 0, sizeof *st);
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_jor(jl_scene_gpu *g, const jl_contact_problem *p, const jl_prox_opts *o,
                     int check_every, double *lambda, jl_prox_stats *st, jl_error *err) {
  (void)g, (void)p, (void)o, (void)check_every, (void)lambda;
  memset(st, 0, sizeof *st);
  return JL_NO_CUDA(err);
}
int jl_scene_gpu_get_colours(jl_scene_gpu *g, int *colour, int *colours, jl_error *err) {
  (void)g, (void)colour;
  *colours = 0;
  return JL_NO_CUDA(err);
}
#endif
