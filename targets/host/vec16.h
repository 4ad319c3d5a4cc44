/* A vector of 16 floats (one channel block of the B,N/16,R,C,16 layout) and its unaligned load
 * and store, in whatever registers the build targets: one 512-bit register with AVX-512, two
 * 256-bit ones with AVX2, scalars otherwise. GCC splits its arithmetic into the registers the
 * build has, but not its comparisons (without AVX-512 a 16-lane `a > b` becomes 16 scalar
 * compares through the stack: blocked max pooling ran 10x slower so on an AVX2 machine), nor
 * always a sum carried across a loop (half of it stored and reloaded every step). Code that
 * compares or carries a sum uses HostVec, the widest vector the build has, HOST_VEC_PARTS of
 * them a block. */
#ifndef SWNC_HOST_VEC16_H
#define SWNC_HOST_VEC16_H

#include <stdint.h>
#include <string.h>

typedef float HostV16 __attribute__((vector_size(64)));

static inline HostV16 host_v16_load(const float *p) {
  HostV16 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void host_v16_store(float *p, HostV16 v) { memcpy(p, &v, sizeof v); }

#ifdef __AVX512F__
#define HOST_VEC_FLOATS 16
#else
#define HOST_VEC_FLOATS 8
#endif
#define HOST_VEC_PARTS (16 / HOST_VEC_FLOATS)
typedef float HostVec __attribute__((vector_size(HOST_VEC_FLOATS * 4)));
typedef int32_t HostIVec __attribute__((vector_size(HOST_VEC_FLOATS * 4)));

static inline HostVec host_vec_load(const float *p) {
  HostVec v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void host_vec_store(float *p, HostVec v) { memcpy(p, &v, sizeof v); }

#endif
