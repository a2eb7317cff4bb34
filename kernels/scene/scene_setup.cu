// Contact setup on the device: one thread per contact for frame, W, M^-1 W,
// c, mu and diag (src/scene/setup_math.h, shared with the CPU twin
// src/scene/setup_twin.c); the body CSR by a stable radix sort of each
// contact side's body with its entry 2 i + side, and a binary search per
// body (no atomics, contacts ascending per body); the Delassus blocks in
// block CSR by row counts, a scan and one thread per row. Reads the contacts
// of the last collide, the bodies and dv_free in the arena; writes the
// problem arrays that the JOR kernels use.
// The material tables are uploaded when they differ from the last upload,
// so a step's setup waits for nothing on the host.
#include <climits>
#include <cstring>

#include <cub/cub.cuh>

#include "jor_soa.cuh"
#include "scene_arena.cuh"

#include "scene.h"
#include "setup_math.h"

// The contact's frame, lever rows and inertia lever rows (45 of the 63
// doubles it writes) go to shared memory first and out in whole sectors:
// stored directly, each of a warp's 45 stores touched 32 sectors, and the
// million-sphere pile's setup took 3.8 ms instead of 0.85 (the wall's 0.081
// instead of 0.030; H200). Blocks of 64 threads: 23 KB of rows.
// LEAN (a solve that streams, every body isotropic: jl_cuda_scene_setup):
// the rows, c, mu, diag, the levers and the arms stay in shared memory
// (59 doubles a thread, 30 KB) and only the constants by field, ka, kb, im
// and iso go out: what the streamed solve and the step read.
// A thread's slots: frame 9, rx 18, irx 18; LEAN then c 3, mu 1, diag 2,
// lever 6, arm 2.
enum {
  JL_SR_FRAME = 0,
  JL_SR_RX = JL_SR_FRAME + 9,
  JL_SR_IRX = JL_SR_RX + 18,
  JL_SETUP_ROWS = JL_SR_IRX + 18,
  JL_SR_C = JL_SETUP_ROWS,
  JL_SR_MU = JL_SR_C + 3,
  JL_SR_DIAG = JL_SR_MU + 1,
  JL_SR_LEVER = JL_SR_DIAG + 2,
  JL_SR_ARM = JL_SR_LEVER + 6,
  JL_SETUP_LEAN_ROWS = JL_SR_ARM + 2
};
#define JL_SETUP_BLOCK 64
template <bool LEAN>
__global__ void __launch_bounds__(JL_SETUP_BLOCK) jl_setup_contact_kernel(
    int n, jl_sm_bodies b, const int *material, const int *ca, const int *cb,
    const double *point, const double *normal, const double *law, int law_stride,
    const double *dv_free, jl_sm_problem p, int nb, uint32_t *sides, int *entries, double *soa) {
  constexpr int rows = LEAN ? JL_SETUP_LEAN_ROWS : JL_SETUP_ROWS;
  __shared__ double s_rows[rows * JL_SETUP_BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int a = ca[i], bb = cb[i];
    int m = material[a] * JL_MATERIALS_MAX + material[bb];
    // contact i's own arrays as contact 0, its rows in this thread's slots
    double *t = s_rows + rows * threadIdx.x;
    size_t k = (size_t)i;
    jl_sm_problem q = {p.ka + k,       p.kb + k,        t + JL_SR_FRAME, t + JL_SR_RX,
                       t + JL_SR_IRX,  p.im + 2 * k,    p.c + 3 * k,     p.mu + k,
                       p.diag + 2 * k, p.lever + 6 * k, p.iso + 2 * k,   p.arm + 2 * k};
    if (LEAN) {
      q.c = t + JL_SR_C;
      q.mu = t + JL_SR_MU;
      q.diag = t + JL_SR_DIAG;
      q.lever = t + JL_SR_LEVER;
      q.arm = t + JL_SR_ARM;
    }
    jl_sm_contact(&b, a, bb, point + 3 * (size_t)i, normal + 3 * (size_t)i, law[m],
                  law[law_stride + m], law[2 * law_stride + m], dv_free, 0, &q);
    jl_sm_body_sides(p.ka, p.kb, i, nb, sides + 2 * (size_t)i);
    entries[2 * (size_t)i] = 2 * i;
    entries[2 * (size_t)i + 1] = 2 * i + 1;
    // the streamed solve's rows, read back while this thread's lines are in cache
    if (soa) jl_soa_store((size_t)n, (size_t)i, q.c, q.frame, q.lever, q.diag, q.mu, q.arm, soa);
  }
  if (LEAN) return;
  __syncthreads();
  long long first = (long long)blockIdx.x * blockDim.x;
  int count = (int)(n - first < (long long)blockDim.x ? n - first : (long long)blockDim.x);
  const int width[3] = {JL_SR_RX - JL_SR_FRAME, JL_SR_IRX - JL_SR_RX, JL_SETUP_ROWS - JL_SR_IRX},
            off[3] = {JL_SR_FRAME, JL_SR_RX, JL_SR_IRX};
  double *dst[3] = {p.frame, p.rx, p.irx};
  for (int f = 0; f < 3; ++f) {
    double *g = dst[f] + (size_t)width[f] * first;
    for (int j = threadIdx.x; j < width[f] * count; j += blockDim.x)
      g[j] = s_rows[rows * (j / width[f]) + off[f] + j % width[f]];
  }
}

// The body CSR from the sides sorted by body in one launch: thread t gives
// body_ptr[t] (t <= nb), and body_contact[t] and body_entry[t] (t < m,
// dynamic sides only).
__global__ void jl_setup_body_csr_kernel(int nb, const uint32_t *bodies, const int *entries,
                                         int m, int *body_ptr, int *body_contact,
                                         int *body_entry) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t <= nb) body_ptr[t] = jl_sm_lower_bound(bodies, m, t);
  if (t < m && bodies[t] != (uint32_t)nb) {
    int e = entries[t];
    body_contact[t] = e >> 1;
    body_entry[t] = jl_soa_entry(e >> 1, e & 1);
  }
}

__global__ void jl_setup_row_count_kernel(int n, const int *ka, const int *kb, const int *body_ptr,
                                          const int *body_contact, long long *count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  count[i] = i < n ? jl_sm_row_columns(ka, kb, body_ptr, body_contact, i, nullptr) : 0;
}

__global__ void jl_setup_row_fill_kernel(int n, const int *ka, const int *kb, const int *body_ptr,
                                         const int *body_contact, const double *frame,
                                         const double *rx, const double *irx, const double *im,
                                         const long long *start, int *rowptr, int *col,
                                         double *blocks) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  rowptr[i] = (int)start[i];
  if (i == n) return;
  int *cols = col + start[i];
  int m = jl_sm_row_columns(ka, kb, body_ptr, body_contact, i, cols);
  for (int e = 0; e < m; ++e)
    jl_sm_block(ka, kb, frame, rx, irx, im, i, cols[e], blocks + 9 * (size_t)(start[i] + e));
}

// write_soa: also the streamed solve's constants by field (jor_soa.cuh).
extern "C" int jl_cuda_scene_setup(jl_scene_gpu *g, const double *mu_table,
                                   const double *eps_n_table, const double *eps_t_table,
                                   int build_g, int write_soa, char *msg, int msg_len) {
  int n = g->contacts, nb = g->nb;
  g->soa_n = -1;
  g->du_soa = 0;
  g->csr_kept = 0;
  g->p_n = 0;
  g->p_nb = 0;
  g->p_has_g = 0;
  g->p_nnz = 0;
  g->p_lean = 0;
  if ((long long)2 * n >= INT_MAX) {
    snprintf(msg, (size_t)msg_len, "contact setup: too many contacts (%d)", n);
    return -1;
  }
  if (jl_reserve_problem(g, n, nb, msg, msg_len)) return -1;
  size_t law_n = (size_t)JL_MATERIALS_MAX * JL_MATERIALS_MAX;
  size_t law_cap = g->law_table.cap;
  JL_RESERVE(law_table, 3 * law_n * sizeof(double), "material laws");
  if (g->law_table.cap != law_cap) g->law_ok = 0;  // a new buffer: nothing in it yet
  size_t sn = (size_t)(n > 0 ? n : 1);
  JL_RESERVE(p_keys, 2 * sn * sizeof(uint32_t), "body contact keys");
  JL_RESERVE(p_keys_alt, 2 * sn * sizeof(uint32_t), "body contact keys");
  JL_RESERVE(p_vals, 2 * sn * sizeof(int), "body contact keys");
  JL_RESERVE(p_vals_alt, 2 * sn * sizeof(int), "body contact keys");
  double *law = jl_dp<double>(g->law_table), *h_law = g->h_law;
  size_t law_bytes = law_n * sizeof(double);
  if (!g->law_ok || memcmp(h_law, mu_table, law_bytes) ||
      memcmp(h_law + law_n, eps_n_table, law_bytes) ||
      memcmp(h_law + 2 * law_n, eps_t_table, law_bytes)) {
    // one copy of the three tables (a copy from pageable memory waits for the device)
    memcpy(h_law, mu_table, law_bytes);
    memcpy(h_law + law_n, eps_n_table, law_bytes);
    memcpy(h_law + 2 * law_n, eps_t_table, law_bytes);
    g->law_ok = 0;
    JL_CUDA_TRY(cudaMemcpy(law, h_law, 3 * law_bytes, cudaMemcpyHostToDevice));
    g->law_ok = 1;
  }
  int *body_ptr = jl_dp<int>(g->p_body_ptr), *body_contact = jl_dp<int>(g->p_body_contact);
  if (n == 0) {
    g->csr_ok = 0;
    JL_CUDA_TRY(cudaMemset(body_ptr, 0, ((size_t)nb + 1) * sizeof(int)));
    if (build_g) {  // an empty G: rowptr = {0}
      JL_RESERVE(p_rowptr, sizeof(int), "Delassus rows");
      JL_CUDA_TRY(cudaMemset(g->p_rowptr.p, 0, sizeof(int)));
    }
    g->p_nb = nb;
    g->p_has_g = build_g;
    return 0;
  }
  jl_sm_bodies b = {jl_dp<uint8_t>(g->is_static), jl_dp<double>(g->pos), jl_dp<double>(g->quat),
                    jl_dp<double>(g->vel), jl_dp<double>(g->omega), jl_dp<double>(g->inv_mass),
                    jl_dp<double>(g->inv_inertia), jl_dp<uint8_t>(g->shape)};
  jl_sm_problem p = {jl_dp<int>(g->p_ka), jl_dp<int>(g->p_kb), jl_dp<double>(g->p_frame),
                     jl_dp<double>(g->p_rx), jl_dp<double>(g->p_irx), jl_dp<double>(g->p_im),
                     jl_dp<double>(g->p_c), jl_dp<double>(g->p_mu), jl_dp<double>(g->p_diag),
                     jl_dp<double>(g->p_lever), jl_dp<double>(g->p_iso), jl_dp<double>(g->p_arm)};
  double *soa = nullptr;
  if (write_soa) {
    JL_RESERVE(j_soa, JL_SOA_FIELDS * sn * sizeof(double), "contact constants by field");
    soa = jl_dp<double>(g->j_soa);
  }
  // A streamed solve of isotropic bodies reads no other per-contact array
  // (its du rebuilds I^-1 (r x d) as s (r x d); the warm start and the
  // memory take the frame from the contact's normal), and the rows were
  // 45 of the 63 doubles written.
  int lean = soa && g->all_iso && !build_g;
  auto setup = lean ? jl_setup_contact_kernel<true> : jl_setup_contact_kernel<false>;
  setup<<<(n + JL_SETUP_BLOCK - 1) / JL_SETUP_BLOCK, JL_SETUP_BLOCK>>>(
      n, b, jl_dp<int>(g->material), jl_dp<int>(g->c_a), jl_dp<int>(g->c_b),
      jl_dp<double>(g->c_point), jl_dp<double>(g->c_normal), law, (int)law_n,
      jl_dp<double>(g->dv), p, nb, jl_dp<uint32_t>(g->p_keys), jl_dp<int>(g->p_vals), soa);
  JL_CUDA_TRY(cudaGetLastError());
  g->p_lean = lean;
  if (soa) g->soa_n = n;
  jl_scene_mark(g, "setup: contacts");
  // Contacts with the bodies, in order, of the last setup's (a kept pair
  // list counting what it counted before): the body lists stand.
  if (g->contacts_same && g->csr_ok && g->csr_n == n && g->csr_nb == nb && !build_g) {
    jl_scene_mark(g, "setup: body lists kept");
    g->csr_kept = 1;
    g->p_n = n;
    g->p_nb = nb;
    return 0;
  }
  g->csr_ok = 0;
  int m = 2 * n;
  // Each side's body (nb for a static side) with its entry 2 i + side, sorted
  // stably by the body's jl_scene_key_bits(nb + 1) bits: 4-byte keys over
  // 20 bits for a million bodies, where (body << 32 | contact) keys took 52.
  int key_bits = jl_scene_key_bits((long long)nb + 1);
  cub::DoubleBuffer<uint32_t> dk(jl_dp<uint32_t>(g->p_keys), jl_dp<uint32_t>(g->p_keys_alt));
  cub::DoubleBuffer<int> dv(jl_dp<int>(g->p_vals), jl_dp<int>(g->p_vals_alt));
  JL_CUB(cub::DeviceRadixSort::SortPairs(d_temp, tb, dk, dv, m, 0, key_bits));
  jl_scene_mark(g, "setup: body sort");
  long long csr_threads = (long long)nb + 1 > m ? (long long)nb + 1 : m;
  jl_setup_body_csr_kernel<<<jl_scene_blocks(csr_threads), JL_SCENE_BLOCK>>>(
      nb, dk.Current(), dv.Current(), m, body_ptr, body_contact, jl_dp<int>(g->p_body_entry));
  JL_CUDA_TRY(cudaGetLastError());
  jl_scene_mark(g, "setup: body lists");
  g->csr_ok = 1;
  g->csr_n = n;
  g->csr_nb = nb;
  g->p_n = n;
  g->p_nb = nb;
  if (!build_g) return 0;

  JL_RESERVE(p_row_count, (sn + 1) * sizeof(long long), "Delassus row counts");
  JL_RESERVE(p_row_start, (sn + 1) * sizeof(long long), "Delassus row offsets");
  JL_RESERVE(p_rowptr, (sn + 1) * sizeof(int), "Delassus rows");
  long long *count = jl_dp<long long>(g->p_row_count), *start = jl_dp<long long>(g->p_row_start);
  jl_setup_row_count_kernel<<<jl_scene_blocks((long long)n + 1), JL_SCENE_BLOCK>>>(
      n, p.ka, p.kb, body_ptr, body_contact, count);
  JL_CUDA_TRY(cudaGetLastError());
  int items = n + 1;
  JL_CUB(cub::DeviceScan::ExclusiveSum(d_temp, tb, count, start, items));
  long long nnz = 0;
  JL_CUDA_TRY(cudaMemcpy(&nnz, start + n, sizeof(long long), cudaMemcpyDeviceToHost));
  if (nnz > 2000000000LL) {
    snprintf(msg, (size_t)msg_len, "Delassus matrix too large (%lld blocks)", nnz);
    return -1;
  }
  size_t snz = (size_t)(nnz > 0 ? nnz : 1);
  JL_RESERVE(p_col, snz * sizeof(int), "Delassus columns");
  JL_RESERVE(p_blocks, 9 * snz * sizeof(double), "Delassus blocks");
  jl_setup_row_fill_kernel<<<jl_scene_blocks((long long)n + 1), JL_SCENE_BLOCK>>>(
      n, p.ka, p.kb, body_ptr, body_contact, p.frame, p.rx, p.irx, p.im, start,
      jl_dp<int>(g->p_rowptr), jl_dp<int>(g->p_col), jl_dp<double>(g->p_blocks));
  JL_CUDA_TRY(cudaGetLastError());
  g->p_nnz = (int)nnz;
  g->p_has_g = 1;
  return 0;
}

// Sizes of the problem on the device, so the host can make room before fetching it.
extern "C" void jl_cuda_scene_problem_size(const jl_scene_gpu *g, int *n, int *nb, int *nnz,
                                           int *has_g) {
  *n = g->p_n;
  *nb = g->p_nb;
  *nnz = g->p_nnz;
  *has_g = g->p_has_g;
}

// Copies the problem into p (the wrapper made room: jl_contact_problem_reserve).
extern "C" int jl_cuda_scene_get_problem(jl_scene_gpu *g, jl_contact_problem *p, char *msg,
                                         int msg_len) {
  size_t sn = (size_t)g->p_n, snb = (size_t)g->p_nb, nz = (size_t)g->p_nnz;
  cudaMemcpyKind d2h = cudaMemcpyDeviceToHost;
  if (g->p_lean) {
    snprintf(msg, (size_t)msg_len,
             "contact problem: the last step's setup wrote only the streamed solve's "
             "constants (set up the problem with jl_scene_gpu_setup to read it)");
    return -1;
  }
  p->n = g->p_n;
  p->nbodies = g->p_nb;
  p->nnz = g->p_nnz;
  p->has_g = g->p_has_g;
  JL_CUDA_TRY(cudaMemcpy(p->body_ptr, g->p_body_ptr.p, (snb + 1) * sizeof(int), d2h));
  if (sn == 0) {
    if (g->p_has_g) p->rowptr[0] = 0;
    return 0;
  }
  JL_CUDA_TRY(cudaMemcpy(p->ka, g->p_ka.p, sn * sizeof(int), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->kb, g->p_kb.p, sn * sizeof(int), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->frame, g->p_frame.p, 9 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->rx, g->p_rx.p, 18 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->irx, g->p_irx.p, 18 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->im, g->p_im.p, 2 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->lever, g->p_lever.p, 6 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->iso, g->p_iso.p, 2 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->arm, g->p_arm.p, 2 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->c, g->p_c.p, 3 * sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->mu, g->p_mu.p, sn * sizeof(double), d2h));
  JL_CUDA_TRY(cudaMemcpy(p->diag, g->p_diag.p, 2 * sn * sizeof(double), d2h));
  size_t ne = (size_t)p->body_ptr[snb];
  if (ne > 0) JL_CUDA_TRY(cudaMemcpy(p->body_contact, g->p_body_contact.p, ne * sizeof(int), d2h));
  if (g->p_has_g) {
    JL_CUDA_TRY(cudaMemcpy(p->rowptr, g->p_rowptr.p, (sn + 1) * sizeof(int), d2h));
    if (nz > 0) {
      JL_CUDA_TRY(cudaMemcpy(p->col, g->p_col.p, nz * sizeof(int), d2h));
      JL_CUDA_TRY(cudaMemcpy(p->blocks, g->p_blocks.p, 9 * nz * sizeof(double), d2h));
    }
  }
  return 0;
}

// A kernel of this file: jl_cuda_kernels_load loads all of them (scene_arena.cu).
extern "C" const void *jl_cuda_scene_setup_code(void) {
  return (const void *)jl_setup_contact_kernel<false>;
}
