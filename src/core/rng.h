/* Philox4x32-10 counter-based generator, bit for bit the stream of cuRAND's
 * curandStatePhilox4_32_10_t: jl_rng_init(seed, subsequence, offset) gives
 * the same numbers as curand_init(seed, subsequence, offset, &s) followed by
 * curand(&s). The host keeps this implementation; kernels use cuRAND itself
 * and the gpu suite checks that the two agree. */
#ifndef JL_RNG_H
#define JL_RNG_H

#include <stdint.h>

#include "hd.h"

typedef struct jl_rng {
  uint32_t ctr[4];
  uint32_t key[2];
  uint32_t out[4];
  uint32_t idx; /* next element of out to return */
} jl_rng;

#define JL_PHILOX_W0 0x9E3779B9u
#define JL_PHILOX_W1 0xBB67AE85u
#define JL_PHILOX_M0 0xD2511F53u
#define JL_PHILOX_M1 0xCD9E8D57u

JL_HD static inline void jl_philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2],
                                          uint32_t out[4]) {
  uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
  uint32_t k0 = key_in[0], k1 = key_in[1];
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = (uint64_t)JL_PHILOX_M0 * c0;
    uint64_t p1 = (uint64_t)JL_PHILOX_M1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += JL_PHILOX_W0;
    k1 += JL_PHILOX_W1;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

JL_HD static inline void jl_rng_incr(jl_rng *s, uint64_t n) {
  uint32_t nlo = (uint32_t)n, nhi = (uint32_t)(n >> 32);
  s->ctr[0] += nlo;
  if (s->ctr[0] < nlo) nhi++;
  s->ctr[1] += nhi;
  if (nhi <= s->ctr[1]) return;
  if (++s->ctr[2]) return;
  ++s->ctr[3];
}

JL_HD static inline void jl_rng_init(jl_rng *s, uint64_t seed, uint64_t subsequence,
                                     uint64_t offset) {
  s->key[0] = (uint32_t)seed;
  s->key[1] = (uint32_t)(seed >> 32);
  s->ctr[0] = s->ctr[1] = s->ctr[2] = s->ctr[3] = 0;
  s->idx = 0;
  /* skipahead_sequence */
  uint32_t slo = (uint32_t)subsequence, shi = (uint32_t)(subsequence >> 32);
  s->ctr[2] += slo;
  if (s->ctr[2] < slo) shi++;
  s->ctr[3] += shi;
  /* skipahead */
  s->idx += (uint32_t)(offset & 3);
  offset /= 4;
  if (s->idx > 3) { offset += 1; s->idx -= 4; }
  jl_rng_incr(s, offset);
  jl_philox4x32_10(s->ctr, s->key, s->out);
}

JL_HD static inline uint32_t jl_rng_u32(jl_rng *s) {
  uint32_t r = s->out[s->idx++];
  if (s->idx == 4) {
    jl_rng_incr(s, 1);
    jl_philox4x32_10(s->ctr, s->key, s->out);
    s->idx = 0;
  }
  return r;
}

/* Uniform double in [0, 1) with 53 random bits from two 32-bit draws; exact,
 * so host and device agree bit for bit. */
JL_HD static inline double jl_u01_from_u32(uint32_t a, uint32_t b) {
  return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * (1.0 / 9007199254740992.0);
}

/* n points uniform in the square [-half, half]^2, x then y of each point
 * from four draws of s (random starts of the benchmarks and tests). */
static inline void jl_rng_square(jl_rng *s, double half, int n, double *x, double *y) {
  for (int i = 0; i < n; ++i) {
    uint32_t a = jl_rng_u32(s), b = jl_rng_u32(s);
    x[i] = (2.0 * jl_u01_from_u32(a, b) - 1.0) * half;
    a = jl_rng_u32(s);
    b = jl_rng_u32(s);
    y[i] = (2.0 * jl_u01_from_u32(a, b) - 1.0) * half;
  }
}

/* Uniform integer in [0, n) for n >= 1 (multiply-shift, no modulo bias worth
 * caring about at the sizes used here). */
JL_HD static inline uint32_t jl_uint_below(uint32_t u, uint32_t n) {
  return (uint32_t)(((uint64_t)u * n) >> 32);
}

#endif
