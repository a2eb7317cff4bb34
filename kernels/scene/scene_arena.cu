// Scene pipeline arena: creation, body upload and download (src/scene/scene_gpu.h).
#include "scene_arena.cuh"

#include <cstdlib>

#include "../core/kernel_load.cuh"

#include "integrate.h"
#include "rigid_body.h"

// A kernel of each of the scene's files (their jl_cuda_scene_*_code).
extern "C" const void *jl_cuda_scene_collide_code(void);
extern "C" const void *jl_cuda_scene_colour_code(void);
extern "C" const void *jl_cuda_scene_energy_code(void);
extern "C" const void *jl_cuda_scene_integrate_code(void);
extern "C" const void *jl_cuda_scene_prox_code(void);
extern "C" const void *jl_cuda_scene_setup_code(void);
extern "C" const void *jl_cuda_scene_step_code(void);

extern "C" int jl_cuda_scene_create(jl_scene_gpu **out, int ordinal, char *msg, int msg_len) {
  *out = nullptr;
  JL_CUDA_TRY(cudaSetDevice(ordinal));
  // the scene's kernels loaded now rather than at the first step's launches
  const void *code[] = {jl_cuda_scene_collide_code(),   jl_cuda_scene_colour_code(),
                        jl_cuda_scene_energy_code(),    jl_cuda_scene_integrate_code(),
                        jl_cuda_scene_prox_code(),      jl_cuda_scene_setup_code(),
                        jl_cuda_scene_step_code()};
  (void)jl_cuda_kernels_load(code, (int)(sizeof code / sizeof code[0]));
  jl_scene_gpu *g = new jl_scene_gpu();
  g->ordinal = ordinal;
  *out = g;
  return 0;
}

extern "C" void jl_cuda_scene_destroy(jl_scene_gpu *g) {
  if (!g) return;
  jl_dbuf *all[] = {&g->shape, &g->is_static, &g->material, &g->size, &g->pos, &g->quat, &g->vel,
                    &g->omega, &g->inv_mass, &g->inv_inertia, &g->dv, &g->aabb, &g->aabb_fat,
                    &g->np_same, &g->kind,
                    &g->cell_range, &g->entry_count, &g->entry_start, &g->flag, &g->flag_scan,
                    &g->planes, &g->large, &g->keys, &g->keys_alt, &g->vals, &g->vals_alt,
                    &g->entry_body, &g->entry_cell, &g->sorted_body, &g->sorted_cell,
                    &g->bucket_start, &g->pair_count, &g->pair_start, &g->pair_key,
                    &g->pair_key_alt, &g->pair_a, &g->pair_b, &g->summary, &g->fault, &g->np_count,
                    &g->np_start, &g->c_a, &g->c_b, &g->c_point, &g->c_normal, &g->c_gap,
                    &g->c_key, &g->n_a, &g->n_b, &g->n_point, &g->n_normal, &g->n_gap,
                    &g->n_key, &g->p_ka, &g->p_kb, &g->p_rx, &g->p_irx, &g->p_im,
                    &g->p_c, &g->p_mu, &g->p_diag, &g->p_lever, &g->p_iso, &g->p_arm, &g->p_body_ptr, &g->p_body_contact, &g->p_body_entry, &g->p_frame, &g->p_keys,
                    &g->p_keys_alt, &g->p_vals, &g->p_vals_alt, &g->p_row_count, &g->p_row_start, &g->p_rowptr, &g->p_col,
                    &g->p_blocks, &g->law_table,
                    &g->prev_key, &g->prev_imp, &g->lam0,
                    &g->lam1, &g->lam_y0, &g->lam_y1, &g->j_soa,
                    &g->j_body_consts, &g->lam_init, &g->du, &g->res, &g->ok, &g->state, &g->temp,
                    &g->col_hash, &g->col_round, &g->col_colour, &g->col_sorted,
                    &g->col_sorted_alt, &g->col_iota, &g->col_order, &g->col_ptr,
                    &g->col_flags, &g->partial,
                    &g->s_ka, &g->s_kb, &g->s_frame, &g->s_rx, &g->s_irx, &g->s_im,
                    &g->s_c, &g->s_mu, &g->s_diag, &g->s_lam};
  for (jl_dbuf *b : all) cudaFree(b->p);
  free(g->h_colour_ptr);
  if (g->graph_exec) cudaGraphExecDestroy(g->graph_exec);
  if (g->ready) cudaEventDestroy(g->ready);
  for (int k = 0; k < JL_SCENE_GPU_MARKS; ++k)
    if (g->mark_ev[k]) cudaEventDestroy(g->mark_ev[k]);
  for (int k = 0; k < 2; ++k)
    if (g->checked[k]) cudaEventDestroy(g->checked[k]);
  if (g->h_state) cudaFreeHost(g->h_state);
  if (g->stream) cudaStreamDestroy(g->stream);
  delete g;
}

extern "C" size_t jl_cuda_scene_bytes(const jl_scene_gpu *g) { return g ? g->bytes : 0; }

extern "C" void jl_cuda_scene_set_limit(jl_scene_gpu *g, size_t bytes) { g->limit = bytes; }

extern "C" void jl_cuda_scene_set_graphs(jl_scene_gpu *g, int on) { g->use_graphs = on != 0; }
extern "C" void jl_cuda_scene_set_persistent(jl_scene_gpu *g, int on) {
  g->use_persistent = on != 0;
}
extern "C" void jl_cuda_scene_set_soa_by_setup(jl_scene_gpu *g, int on) {
  g->soa_by_setup = on != 0;
}
extern "C" void jl_cuda_scene_set_pair_skin(jl_scene_gpu *g, double share) {
  g->pair_skin = share;
  g->kept_ok = 0;
}
extern "C" void jl_cuda_scene_set_round_narrow(jl_scene_gpu *g, int on) {
  g->round_narrow = on != 0;
}
extern "C" void jl_cuda_scene_set_staged_narrow(jl_scene_gpu *g, int on) {
  g->staged_narrow = on != 0;
}
extern "C" void jl_cuda_scene_set_streamed(jl_scene_gpu *g, int mode) {
  g->use_streamed = mode < 0 ? -1 : mode != 0;
}
extern "C" long jl_cuda_scene_persistent_solves(const jl_scene_gpu *g) {
  return g->persistent_solves;
}
extern "C" void jl_cuda_scene_set_persistent_cache(jl_scene_gpu *g, int mode) {
  g->persist_cache = mode < 0 || mode >= JL_SCENE_GPU_PERSIST_PLANS ? -1 : mode;
}
extern "C" const char *jl_cuda_scene_persistent_cache(const jl_scene_gpu *g) {
  return g->persist_last;
}

extern "C" int jl_cuda_scene_set_bodies(jl_scene_gpu *g, const jl_bodies *b, char *msg,
                                        int msg_len) {
  size_t n = (size_t)(b->count > 0 ? b->count : 0);
  JL_RESERVE(shape, n, "body shapes");
  JL_RESERVE(is_static, n, "body flags");
  JL_RESERVE(material, n * sizeof(int), "body materials");
  JL_RESERVE(size, 3 * n * sizeof(double), "body sizes");
  JL_RESERVE(pos, 3 * n * sizeof(double), "body positions");
  JL_RESERVE(quat, 4 * n * sizeof(double), "body orientations");
  JL_RESERVE(vel, 3 * n * sizeof(double), "body velocities");
  JL_RESERVE(omega, 3 * n * sizeof(double), "body angular velocities");
  JL_RESERVE(inv_mass, n * sizeof(double), "body masses");
  JL_RESERVE(inv_inertia, 3 * n * sizeof(double), "body inertias");
  JL_RESERVE(dv, 6 * n * sizeof(double), "free velocities");
  g->nb = (int)n;
  g->kept_ok = 0;  // new bodies: the kept pair list and body lists are not theirs
  g->csr_ok = 0;
  g->round_only = 1;
  g->all_iso = 1;
  for (size_t i = 0; i < n; ++i) {
    if (b->shape[i] == JL_SHAPE_BOX) g->round_only = 0;
    if (!b->is_static[i] && jl_int_iso_inv_inertia(b->inv_inertia + 3 * i) < 0.0) g->all_iso = 0;
  }
  if (n == 0) return 0;
  cudaMemcpyKind h2d = cudaMemcpyHostToDevice;
  JL_CUDA_TRY(cudaMemcpy(g->shape.p, b->shape, n, h2d));
  JL_CUDA_TRY(cudaMemcpy(g->is_static.p, b->is_static, n, h2d));
  JL_CUDA_TRY(cudaMemcpy(g->material.p, b->material, n * sizeof(int), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->size.p, b->size, 3 * n * sizeof(double), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->pos.p, b->pos, 3 * n * sizeof(double), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->quat.p, b->quat, 4 * n * sizeof(double), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->vel.p, b->vel, 3 * n * sizeof(double), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->omega.p, b->omega, 3 * n * sizeof(double), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->inv_mass.p, b->inv_mass, n * sizeof(double), h2d));
  JL_CUDA_TRY(cudaMemcpy(g->inv_inertia.p, b->inv_inertia, 3 * n * sizeof(double), h2d));
  return 0;
}

extern "C" int jl_cuda_scene_get_bodies(jl_scene_gpu *g, jl_bodies *b, char *msg, int msg_len) {
  if (b->count != g->nb) {
    snprintf(msg, (size_t)msg_len, "get bodies: %d bodies on the host, %d on the device", b->count,
             g->nb);
    return -1;
  }
  size_t n = (size_t)g->nb;
  if (n == 0) return 0;
  cudaMemcpyKind d2h = cudaMemcpyDeviceToHost;
  JL_CUDA_TRY(cudaMemcpy(b->pos, g->pos.p, 3 * n * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(b->quat, g->quat.p, 4 * n * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(b->vel, g->vel.p, 3 * n * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(b->omega, g->omega.p, 3 * n * sizeof(double), d2h));
  return 0;
}
