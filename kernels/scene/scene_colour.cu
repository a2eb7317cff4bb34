// Colouring of the contact graph for the device SOR (src/scene/colour_math.h):
// Jones-Plassmann rounds, one thread per contact; a contact whose
// higher-priority neighbours all got a colour in an earlier round takes the
// smallest colour none of them has. The colours depend on the graph and the
// key hashes only, so they equal the CPU twin's (contact_graph.c,
// jl_contact_colour_jp). Then a stable radix sort by colour gives the sweep
// order (ascending contact inside a colour) and a binary search per colour
// its offsets. Host traffic: two ints every JL_COLOUR_ROUNDS_PER_CHECK
// rounds, and the colours' offsets once.
#include <cub/cub.cuh>

#include "scene_arena.cuh"

#include "colour_math.h"

// Rounds launched between two reads of the colouring's progress.
#define JL_COLOUR_ROUNDS_PER_CHECK 16

__global__ void jl_colour_init_kernel(int n, const uint64_t *key, uint64_t *hash, int *round,
                                      int *colour, int *iota) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  hash[i] = jl_cm_hash(key[i]);
  round[i] = -1;
  colour[i] = -1;
  iota[i] = i;
}

// flags[0]: the last round that left a contact uncoloured; flags[1]: the
// largest colour. Joined per block first (a block barrier's OR, a shared
// integer max), so millions of contacts do not all write one address.
__global__ void __launch_bounds__(JL_SCENE_BLOCK) jl_colour_round_kernel(
    int n, int r, const int *ka, const int *kb, const int *body_ptr, const int *body_contact,
    const uint64_t *hash, int *round, int *colour, int *flags) {
  __shared__ int s_max;
  if (threadIdx.x == 0) s_max = -1;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x, left = 0;
  if (i < n && round[i] < 0) {
    if (jl_cm_ready(i, r, ka, kb, body_ptr, body_contact, hash, round)) {
      int c = jl_cm_first_fit(i, ka, kb, body_ptr, body_contact, hash, colour);
      colour[i] = c;
      round[i] = r;
      atomicMax(&s_max, c);  // integer max: the same result in any order
    } else {
      left = 1;
    }
  }
  int any_left = __syncthreads_or(left);  // also makes s_max final
  if (threadIdx.x == 0) {
    if (any_left) flags[0] = r;  // every writer writes the same value
    if (s_max >= 0) atomicMax(&flags[1], s_max);
  }
}

__global__ void jl_colour_ptr_kernel(int n, int colours, const int *sorted, int *ptr) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c > colours) return;
  ptr[c] = jl_cm_lower_bound(sorted, n, c);
}

int jl_scene_colour(jl_scene_gpu *g, char *msg, int msg_len) {
  int n = g->p_n;
  g->colours = 0;
  if (n <= 0) return 0;
  size_t sn = (size_t)n;
  JL_RESERVE(col_hash, sn * sizeof(uint64_t), "colouring priorities");
  JL_RESERVE(col_round, sn * sizeof(int), "colouring rounds");
  JL_RESERVE(col_colour, sn * sizeof(int), "contact colours");
  JL_RESERVE(col_sorted, sn * sizeof(int), "contact colours");
  JL_RESERVE(col_iota, sn * sizeof(int), "contact order");
  JL_RESERVE(col_order, sn * sizeof(int), "contact order");
  JL_RESERVE(col_flags, 2 * sizeof(int), "colouring flags");
  const int *ka = jl_dp<int>(g->p_ka), *kb = jl_dp<int>(g->p_kb);
  const int *bp = jl_dp<int>(g->p_body_ptr), *bc = jl_dp<int>(g->p_body_contact);
  uint64_t *hash = jl_dp<uint64_t>(g->col_hash);
  int *round = jl_dp<int>(g->col_round), *colour = jl_dp<int>(g->col_colour);
  int *flags = jl_dp<int>(g->col_flags);
  int blocks = jl_scene_blocks(n);
  jl_colour_init_kernel<<<blocks, JL_SCENE_BLOCK>>>(n, jl_dp<uint64_t>(g->c_key), hash, round,
                                                    colour, jl_dp<int>(g->col_iota));
  JL_CUDA_TRY(cudaGetLastError());
  JL_CUDA_TRY(cudaMemset(flags, 0xff, 2 * sizeof(int)));  // -1, -1
  int host_flags[2] = {-1, -1};
  // every round colours the uncoloured contact of highest priority at least: n rounds at most
  for (int r0 = 0;; r0 += JL_COLOUR_ROUNDS_PER_CHECK) {
    if (r0 > n) {
      snprintf(msg, (size_t)msg_len, "colouring: %d contacts not coloured after %d rounds", n, r0);
      return -1;
    }
    int last = r0 + JL_COLOUR_ROUNDS_PER_CHECK - 1;
    for (int r = r0; r <= last; ++r)
      jl_colour_round_kernel<<<blocks, JL_SCENE_BLOCK>>>(n, r, ka, kb, bp, bc, hash, round,
                                                         colour, flags);
    JL_CUDA_TRY(cudaGetLastError());
    JL_CUDA_TRY(cudaMemcpy(host_flags, flags, sizeof host_flags, cudaMemcpyDeviceToHost));
    if (host_flags[0] < last) break;
  }
  int colours = host_flags[1] + 1;
  if (colours < 1 || colours > n) {
    snprintf(msg, (size_t)msg_len, "colouring: %d colours for %d contacts", colours, n);
    return -1;
  }
  int bits = 1;
  while (bits < 31 && (1 << bits) <= colours) ++bits;
  unsigned *keys_in = reinterpret_cast<unsigned *>(colour);
  unsigned *keys_out = jl_dp<unsigned>(g->col_sorted);
  int *vals_in = jl_dp<int>(g->col_iota), *vals_out = jl_dp<int>(g->col_order);
  // stable: ascending contact inside a colour, as the twin's counting sort
  JL_CUB(cub::DeviceRadixSort::SortPairs(d_temp, tb, keys_in, keys_out, vals_in, vals_out, n, 0,
                                         bits));
  JL_RESERVE(col_ptr, ((size_t)colours + 1) * sizeof(int), "colour offsets");
  jl_colour_ptr_kernel<<<jl_scene_blocks((long long)colours + 1), JL_SCENE_BLOCK>>>(
      n, colours, jl_dp<int>(g->col_sorted), jl_dp<int>(g->col_ptr));
  JL_CUDA_TRY(cudaGetLastError());
  if (colours + 1 > g->h_colour_cap) {
    int cap = colours + 1 + colours / 2 + 16;
    int *h = (int *)realloc(g->h_colour_ptr, sizeof(int) * (size_t)cap);
    if (!h) {
      snprintf(msg, (size_t)msg_len, "out of host memory for %d colours", colours);
      return -1;
    }
    g->h_colour_ptr = h;
    g->h_colour_cap = cap;
  }
  JL_CUDA_TRY(cudaMemcpy(g->h_colour_ptr, g->col_ptr.p, ((size_t)colours + 1) * sizeof(int),
                         cudaMemcpyDeviceToHost));
  g->colours = colours;
  return 0;
}

// The last colouring: colour of each contact (n = the problem's contacts) and the colour count.
extern "C" int jl_cuda_scene_get_colours(jl_scene_gpu *g, int *colour, int *colours, char *msg,
                                         int msg_len) {
  *colours = g->colours;
  if (g->p_n > 0 && g->colours > 0)
    JL_CUDA_TRY(cudaMemcpy(colour, g->col_colour.p, (size_t)g->p_n * sizeof(int),
                           cudaMemcpyDeviceToHost));
  return 0;
}

// A kernel of this file: jl_cuda_kernels_load loads all of them (scene_arena.cu).
extern "C" const void *jl_cuda_scene_colour_code(void) {
  return (const void *)jl_colour_init_kernel;
}
