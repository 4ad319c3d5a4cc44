/* Counter-based randomness: every random number is a hash of (seed, stream, counter), so
 * results do not depend on call order, thread count, or where a run was resumed. The mixer is
 * splitmix64's finaliser; tools/ and tests replicate it in numpy. Standard C only: the sw26010
 * CPE kernels include it too. */
#ifndef SWNC_RNG_H
#define SWNC_RNG_H

#include <stdbool.h>
#include <stdint.h>

static inline uint64_t swn_mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* swn_hash3's part that depends on (a, b) alone: a loop over c computes it once. */
static inline uint64_t swn_hash2(uint64_t a, uint64_t b) { return swn_mix64(swn_mix64(a) ^ b); }

static inline uint64_t swn_hash3(uint64_t a, uint64_t b, uint64_t c) {
  return swn_mix64(swn_hash2(a, b) ^ c);
}

/* A uniform float in [0, 1) with 24 random bits. */
static inline float swn_uniform(uint64_t h) { return (float)(h >> 40) * (1.0f / 16777216.0f); }

/* Dropout's mask (runtime/kernels.h): whether element `element` of image `image` is kept, a
 * hash of (seed, layer, iteration, image, element). Every target's kernels (the CPEs' too)
 * share this definition, so their masks agree bit for bit. */
static inline bool swn_dropout_keep(uint64_t seed, uint64_t layer, float ratio, uint64_t iteration,
                                    uint64_t image, int64_t element) {
  uint64_t h = swn_mix64(swn_hash3(swn_mix64(seed) ^ layer, iteration, image) ^ (uint64_t)element);
  return swn_uniform(h) >= ratio;
}

#endif
