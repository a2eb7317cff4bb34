// Device arena of the scene pipeline (src/scene/scene_gpu.h), shared by the
// kernels/scene/scene_*.cu launchers. Every buffer is grown on demand (never
// shrunk) and reused across steps; a buffer's old contents are dropped when
// it grows, so only scratch storage and arrays re-uploaded whole grow here.
#ifndef JL_SCENE_ARENA_CUH
#define JL_SCENE_ARENA_CUH

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#include "cuda_check.h"
#include "grid_pairs.h"
#include "prox_math.h"
#include "scene_gpu.h"

struct jl_dbuf {
  void *p = nullptr;
  size_t cap = 0;
};

// Threads per block of the one-thread-per-item kernels.
#define JL_SCENE_BLOCK 256
// The one-block reductions (deterministic: fixed strides, fixed tree).
#define JL_SCENE_REDUCE_THREADS 1024
// Multi-block reductions: at most this many blocks of JL_SCENE_BLOCK threads
// write partials that one block of JL_SCENE_REDUCE_THREADS then joins.
#define JL_SCENE_REDUCE_PARTIALS 1024

static inline int jl_scene_blocks(long long n) {
  long long b = (n + JL_SCENE_BLOCK - 1) / JL_SCENE_BLOCK;
  return (int)(b > 0 ? b : 1);
}

struct jl_scene_gpu {
  int ordinal = 0;
  size_t bytes = 0;        // held by the buffers below
  size_t limit = 0;        // most bytes the arena may hold (0: what the device has)
  // bodies, structure-of-arrays (rigid_body.h)
  int nb = 0;
  int round_only = 0;      // no boxes: the narrow phase's kernels for round shapes
  int all_iso = 0;         // every dynamic body's inertia isotropic (a sphere, a cube)
  int round_narrow = 1;    // 0: the general narrow kernels all the same (benchmarks)
  int staged_narrow = 1;   // 0: boxes' contacts by the count and write passes all the same (tests)
  jl_dbuf shape, is_static, material, size, pos, quat, vel, omega, inv_mass, inv_inertia, dv;
  // broad phase
  jl_dbuf aabb, kind, cell_range, entry_count, entry_start, flag, flag_scan, planes, large;
  jl_dbuf keys, keys_alt, vals, vals_alt, entry_body, entry_cell, sorted_body, sorted_cell,
      bucket_start;
  jl_dbuf pair_count, pair_start, pair_key, pair_key_alt, pair_a, pair_b;
  jl_dbuf summary;         // reductions' results
  jl_dbuf fault;           // int: a kernel saw what cannot happen (checked by the host)
  int pairs = 0;
  // the device step's kept pair list (grid_pairs.h, JL_GP_SKIN): pair_a,
  // pair_b hold kept_pairs pairs from the boxes widened by pair_skin times
  // the cell edge (aabb_fat), valid while kept_ok and every box lies inside
  // its widened one (the check raises jl_np_same's escaped)
  jl_dbuf aabb_fat;
  double pair_skin = JL_GP_SKIN;  // 0: a new list every step, without a skin
  int kept_ok = 0, kept_pairs = 0;
  int kept_last = 0;               // the last collide kept the list
  // contacts_same: the last collide kept the list and counted per pair what
  // the collide before it did (np_count holds a kept list's last counts:
  // counts_id is the list_id they belong to), so its contacts have the
  // bodies, in order, of the last setup's, and the setup keeps its body
  // lists (csr_ok: p_body_ptr, p_body_contact from csr_n contacts, csr_nb bodies)
  int list_id = 0, counts_id = -1, contacts_same = 0;
  int csr_ok = 0, csr_n = -1, csr_nb = -1;
  int csr_kept = 0;                // the last setup kept its body lists
  jl_dbuf np_same;                 // jl_np_same: the contacts' total and the count pass's diff
  double kept_margin = 0.0;
  // narrow phase: contacts (contact.h)
  jl_dbuf np_count, np_start, c_a, c_b, c_point, c_normal, c_gap, c_key;
  // the staged narrow phase's slots (JL_MAX_MANIFOLD a pair, contact.h's fields)
  jl_dbuf n_a, n_b, n_point, n_normal, n_gap, n_key;
  int contacts = 0;
  // JOR prox: the contact problem (contact_setup.h) and the iterates
  // p_body_entry: each body list entry's contact and side, 2 i + side (the
  // streamed solve's du reads it instead of body_contact and then ka)
  jl_dbuf p_ka, p_kb, p_rx, p_irx, p_im, p_c, p_mu, p_diag, p_lever, p_iso, p_arm, p_body_ptr,
      p_body_contact, p_body_entry;
  jl_dbuf p_frame, p_keys, p_keys_alt, p_vals, p_vals_alt;
  jl_dbuf p_row_count, p_row_start, p_rowptr, p_col, p_blocks;
  jl_dbuf law_table;       // mu, eps_n, eps_t per material pair
  // what law_table holds (law_ok: uploaded), so a step uploads the tables
  // only when they change (a copy from pageable memory waits for the device)
  int law_ok = 0;
  double h_law[3 * JL_MATERIALS_MAX * JL_MATERIALS_MAX];
  int p_n = 0, p_nb = 0, p_nnz = 0, p_has_g = 0;  // the problem on the device
  // the last setup wrote only what a streamed solve of isotropic bodies
  // reads (ka, kb, im, iso, the constants by field): not the problem's
  // frame, lever rows, c, mu, diag, levers and arms (jl_cuda_scene_setup)
  int p_lean = 0;
  jl_dbuf lam0, lam1, lam_init, du, res, ok, state;
  jl_dbuf lam_y0, lam_y1;  // APGD: the extrapolated points (reserved by an APGD solve)
  // the streamed JOR / APGD solve (kernels/scene/scene_prox.cu): the
  // constants by field (jor_soa.cuh), each body's iso and inverse mass
  jl_dbuf j_soa, j_body_consts;
  int soa_by_setup = 1;    // 0: the solve copies j_soa all the same (benchmarks)
  int soa_n = -1;          // j_soa holds the last setup's n contacts (-1: not written)
  int du_soa = 0;          // the last solve streamed: j_soa and j_body_consts hold its
                           // problem's (the step's end velocity reads them)
  // SOR: the problem's per-contact arrays and impulses in colour order
  jl_dbuf s_ka, s_kb, s_frame, s_rx, s_irx, s_im, s_c, s_mu, s_diag, s_lam;
  // the device step's warm-start memory (keys sorted, world impulses)
  jl_dbuf prev_key, prev_imp;
  int prev_n = 0;
  // SOR: the colouring (kernels/scene/scene_colour.cu) and the multi-block reductions' partials
  jl_dbuf col_hash, col_round, col_colour, col_sorted, col_sorted_alt, col_iota, col_order,
      col_ptr, col_flags, partial;
  int colours = 0;         // of the last colouring; its offsets are h_colour_ptr
  int groups = 0;          // launch groups of the last SOR solve (small colours merged)
  int *h_colour_ptr = nullptr;
  int h_colour_cap = 0;
  jl_dbuf temp;            // CUB scratch
  // the solver's iterations as a CUDA graph (kernels/scene/scene_prox.cu), on its own stream
  int use_graphs = 1;
  // small JOR / APGD solves in one cooperative launch (jl_jor_persistent_kernel)
  int use_persistent = 1;
  // large matrix-free JOR / APGD solves by the streamed kernels: -1 by size
  // (JL_JOR_STREAMED_MIN contacts), 0 never, 1 always
  int use_streamed = -1;
  // what it keeps in shared memory (jl_persist_plans in scene_prox.cu): -1
  // the first plan that fits one wave, k: plan k only
  int persist_cache = -1;
  int persist_asked = 0;   // persist_fit holds the device's answers
  int persist_fit[JL_SCENE_GPU_PERSIST_PLANS] = {0};  // blocks of each plan the device holds at once
  long persistent_solves = 0;
  const char *persist_last = "";  // the plan of the last persistent solve
  // stage timing (jl_scene_gpu_set_timing): a device sync at each stage end
  int timing = 0;
  double stage_s[JL_STEP_STAGES] = {0};
  double stage_t0 = 0;
  // marks (jl_scene_gpu_set_marks): this step's events and names, and the
  // sums per name since marks were turned on
  int marks_on = 0, mark_n = 0;
  cudaEvent_t mark_ev[JL_SCENE_GPU_MARKS] = {};
  const char *mark_at[JL_SCENE_GPU_MARKS] = {};
  int prof_n = 0;
  const char *prof_name[JL_SCENE_GPU_MARKS] = {};
  double prof_ms[JL_SCENE_GPU_MARKS] = {0};
  cudaStream_t stream = nullptr;
  cudaEvent_t ready = nullptr;      // the legacy stream's work before a solve
  cudaGraphExec_t graph_exec = nullptr;
  void *h_state = nullptr;          // pinned: two jl_state_and_buf the solver's checks land in
  cudaEvent_t checked[2] = {nullptr, nullptr};
  // the kernels of graph_exec in launch order (jl_prox_loop): an update in
  // place needs the same topology, so another shape is instantiated anew
  std::vector<int> graph_shape;
};

// A mark after the launches since the last one (marks on): an event on the
// legacy stream, which the launchers use, named for what ran since. A step
// that records more than JL_SCENE_GPU_MARKS drops the rest.
static inline void jl_scene_mark(jl_scene_gpu *g, const char *name) {
  if (!g->marks_on || g->mark_n >= JL_SCENE_GPU_MARKS) return;
  if (cudaEventRecord(g->mark_ev[g->mark_n], 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  g->mark_at[g->mark_n++] = name;
}

// Makes b hold at least need bytes (contents dropped when it grows: 1.5x).
// On failure: how many bytes the arena needed, and what the device has free.
static inline int jl_dbuf_reserve(jl_scene_gpu *g, jl_dbuf *b, size_t need, const char *what,
                                  char *msg, int msg_len) {
  if (need <= b->cap) return 0;
  size_t want = need + need / 2 + 256;
  if (b->p) {
    cudaFree(b->p);
    g->bytes -= b->cap;
    b->p = nullptr;
    b->cap = 0;
  }
  if (g->limit && g->bytes + want > g->limit) want = need;
  cudaError_t e = cudaErrorMemoryAllocation;
  if (!g->limit || g->bytes + want <= g->limit) e = cudaMalloc(&b->p, want);
  if (e != cudaSuccess && want > need) {
    (void)cudaGetLastError();  // clear the (non-sticky) allocation error
    want = need;
    e = cudaMalloc(&b->p, want);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    b->p = nullptr;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (g->limit)
      snprintf(msg, (size_t)msg_len,
               "device out of memory for %s: needs %zu bytes, %zu in all with the %zu the "
               "arena holds (limit %zu)",
               what, need, g->bytes + need, g->bytes, g->limit);
    else
      snprintf(msg, (size_t)msg_len,
               "device out of memory for %s: needs %zu bytes, %zu in all with the %zu the "
               "arena holds (device: %zu free of %zu)",
               what, need, g->bytes + need, g->bytes, free_b, total_b);
    return -1;
  }
  b->cap = want;
  g->bytes += want;
  return 0;
}

#define JL_RESERVE(buf, bytes, what)                                                     \
  do {                                                                                   \
    if (jl_dbuf_reserve(g, &g->buf, (size_t)(bytes), what, msg, msg_len)) return -1;     \
  } while (0)

template <typename T> static inline T *jl_dp(const jl_dbuf &b) { return (T *)b.p; }

// CUB calls: ask for the scratch size, grow the scratch, run.
#define JL_CUB(call_with_temp)                                                           \
  do {                                                                                   \
    void *temp_ = nullptr;                                                               \
    size_t temp_bytes_ = 0;                                                              \
    { void *d_temp = temp_; size_t &tb = temp_bytes_; JL_CUDA_TRY(call_with_temp); }      \
    JL_RESERVE(temp, temp_bytes_ > 0 ? temp_bytes_ : 1, "CUB scratch");                                        \
    temp_ = g->temp.p;                                                                   \
    temp_bytes_ = g->temp.cap;                                                           \
    { void *d_temp = temp_; size_t &tb = temp_bytes_; JL_CUDA_TRY(call_with_temp); }      \
  } while (0)

// Bits of a radix sort key that holds values 0 .. n - 1 (at least 1): the
// sorts over keys whose higher bits are zero pass this as end_bit.
static inline int jl_scene_key_bits(long long n) {
  int bits = 1;
  while (bits < 62 && (1LL << bits) < n) bits++;
  return bits;
}

// kernels/scene/scene_collide.cu: the collide of jl_cuda_scene_collide with
// the device step's options. closed_only: count and write only the closed
// contacts (jl_st_closed with closed_tol), in the same order (pairs
// ascending, a pair's points in order). defer_fault: leave the write pass's
// fault flag in g->fault (0: clean) for the caller to read later, instead
// of reading it back here. keep_pairs: build the pair list from boxes
// widened by a skin and keep it while every box stays inside its widened
// one, taking only the pairs that pass the broad phase's tests now
// (jl_gp_live): the same contacts, and no broad phase on most steps.
struct jl_collide_opts {
  int closed_only;
  double closed_tol;
  int defer_fault;
  int keep_pairs;  // the pair list kept while the boxes stay in their skins (g->pair_skin)
  double keep_ahead_s;  // ... which allow for this long at each body's speed
};
int jl_scene_collide(jl_scene_gpu *g, double margin, const jl_collide_opts *o,
                     jl_gpu_collide_stats *st, char *msg, int msg_len);
// The error of a set fault flag.
#define JL_NP_FAULT_MSG "narrow phase: a pair gave other contacts in the write pass"

// kernels/scene/scene_prox.cu: JOR on the problem in the arena, for the host API and the device step.
int jl_scene_jor_reserve(jl_scene_gpu *g, int apgd, char *msg, int msg_len);
// apgd: the sweeps from Nesterov's extrapolated points (prox_solver.h).
// pending (NULL: the state is read here): a solve in one persistent launch
// sets *pending and leaves *out unwritten, so the host need not wait for it:
// the caller copies the state out (jl_scene_jor_state_copy) with its own
// later read, and checks that it stopped (jl_scene_jor_stopped).
int jl_scene_jor_core(jl_scene_gpu *g, int on_g, int apgd, double alpha, double tol_abs,
                      double tol_rel, int max_iter, int check_every, const double **result,
                      jl_pm_state *out, int *pending, char *msg, int msg_len);
int jl_scene_jor_state_copy(jl_scene_gpu *g, jl_pm_state *dst, char *msg, int msg_len);
// 0 when a JOR / APGD solve's final state s says it stopped; else -1 and
// the message (a solve runs until its stop rule fires: this is a fault).
int jl_scene_jor_stopped(const jl_pm_state *s, int apgd, int max_iter, char *msg, int msg_len);
// SOR by the colours of jl_scene_colour, in place in lam0 (lam_init: the start).
int jl_scene_sor_core(jl_scene_gpu *g, double alpha, double tol_abs, double tol_rel, int max_iter,
                      int check_every, jl_pm_state *out, char *msg, int msg_len);
// kernels/scene/scene_colour.cu: colours the problem's contacts (keys: c_key) into
// col_order / h_colour_ptr / g->colours.
int jl_scene_colour(jl_scene_gpu *g, char *msg, int msg_len);

// Blocks of a multi-block reduction over n items.
static inline int jl_scene_reduce_blocks(long long n) {
  int b = jl_scene_blocks(n);
  return b < JL_SCENE_REDUCE_PARTIALS ? b : JL_SCENE_REDUCE_PARTIALS;
}

// Per-contact and per-body arrays of a problem of n contacts and nb bodies.
static inline int jl_reserve_problem(jl_scene_gpu *g, int n, int nb, char *msg, int msg_len) {
  size_t sn = (size_t)(n > 0 ? n : 1), snb = (size_t)(nb > 0 ? nb : 1);
  JL_RESERVE(p_ka, sn * sizeof(int), "contact bodies");
  JL_RESERVE(p_kb, sn * sizeof(int), "contact bodies");
  JL_RESERVE(p_frame, 9 * sn * sizeof(double), "contact frames");
  JL_RESERVE(p_rx, 18 * sn * sizeof(double), "lever rows");
  JL_RESERVE(p_irx, 18 * sn * sizeof(double), "inertia lever rows");
  JL_RESERVE(p_im, 2 * sn * sizeof(double), "inverse masses");
  JL_RESERVE(p_c, 3 * sn * sizeof(double), "free terms");
  JL_RESERVE(p_mu, sn * sizeof(double), "friction");
  JL_RESERVE(p_diag, 2 * sn * sizeof(double), "Delassus diagonals");
  JL_RESERVE(p_lever, 6 * sn * sizeof(double), "contact levers");
  JL_RESERVE(p_iso, 2 * sn * sizeof(double), "isotropic inverse inertias");
  JL_RESERVE(p_arm, 2 * sn * sizeof(double), "sphere levers");
  JL_RESERVE(p_body_ptr, (snb + 1) * sizeof(int), "body contact lists");
  JL_RESERVE(p_body_contact, 2 * sn * sizeof(int), "body contact lists");
  JL_RESERVE(p_body_entry, 2 * sn * sizeof(int), "body contact lists");
  return 0;
}

#endif
