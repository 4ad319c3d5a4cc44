/* Sums in double that vectorise and do not depend on how the work is split: the arithmetic
 * every target's batch norm shares, so that their statistics agree bit for bit.
 *
 * A sum runs over runs of floats (one image's plane of a channel, in image order). Element i
 * of a run goes to lane i % SWK_LANES; the lanes are added in order at the end. A strict
 * left-to-right double sum is one dependent add per element (a latency chain, a few GB/s);
 * independent lanes let the compiler keep them in vector registers. */
#ifndef SWNC_LANES_H
#define SWNC_LANES_H

enum { SWK_LANES = 16 };

typedef struct SwkLanes {
  double v[SWK_LANES];
} SwkLanes;

static inline double swk_lanes_total(const SwkLanes *l) {
  double s = 0;
  for (int j = 0; j < SWK_LANES; j++) s += l->v[j];
  return s;
}

/* Adds x[i], i < len, of one run. A run cut into pieces whose lengths are multiples of
 * SWK_LANES (all but the last) sums the same piece by piece. */
static inline void swk_lanes_add(SwkLanes *l, const float *x, int len) {
  int i = 0;
  for (; i + SWK_LANES <= len; i += SWK_LANES)
    for (int j = 0; j < SWK_LANES; j++) l->v[j] += x[i + j];
  for (int j = 0; i < len; i++, j++) l->v[j] += x[i];
}

/* Adds (x[i] - center)^2. */
static inline void swk_lanes_add_squares(SwkLanes *l, const float *x, int len, double center) {
  int i = 0;
  for (; i + SWK_LANES <= len; i += SWK_LANES)
    for (int j = 0; j < SWK_LANES; j++) {
      double d = x[i + j] - center;
      l->v[j] += d * d;
    }
  for (int j = 0; i < len; i++, j++) {
    double d = x[i] - center;
    l->v[j] += d * d;
  }
}

/* Adds dy[i] and, in `scaled`, dy[i] * (x[i] - mean) * invstd (in float, as batch norm's
 * backward forms it). */
static inline void swk_lanes_add_products(SwkLanes *l, SwkLanes *scaled, const float *dy,
                                          const float *x, int len, float mean, float invstd) {
  int i = 0;
  for (; i + SWK_LANES <= len; i += SWK_LANES)
    for (int j = 0; j < SWK_LANES; j++) {
      float g = dy[i + j];
      l->v[j] += g;
      scaled->v[j] += g * (x[i + j] - mean) * invstd;
    }
  for (int j = 0; i < len; i++, j++) {
    float g = dy[i];
    l->v[j] += g;
    scaled->v[j] += g * (x[i] - mean) * invstd;
  }
}

#endif
