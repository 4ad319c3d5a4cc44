/* A vector of 16 floats (one channel block of the B,N/16,R,C,16 layout) and its unaligned load
 * and store, in whatever registers the build targets: one 512-bit register with AVX-512, two
 * 256-bit ones with AVX2, scalars otherwise. */
#ifndef SWNC_HOST_VEC16_H
#define SWNC_HOST_VEC16_H

#include <stdint.h>
#include <string.h>

typedef float HostV16 __attribute__((vector_size(64)));
typedef int32_t HostI16 __attribute__((vector_size(64)));

static inline HostV16 host_v16_load(const float *p) {
  HostV16 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void host_v16_store(float *p, HostV16 v) { memcpy(p, &v, sizeof v); }

#endif
