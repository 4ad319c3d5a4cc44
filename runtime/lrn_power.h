/* LRN's scale^-beta, as every target's kernels compute it (the sw26010 kernels must agree with
 * the host's bit for bit). Caffe's beta 0.75, and 0.5, by square roots: IEEE arithmetic rounds
 * them alike on any machine (a libm's powf need not), within 2 ulp of the power, and a loop of
 * them vectorises (powf, a call per element, was 7% of GoogLeNet's training step). Other betas
 * by powf. Standard C only: the sw26010 CPE kernels include it too. */
#ifndef SWNC_LRN_POWER_H
#define SWNC_LRN_POWER_H

#include <math.h>

static inline float swn_lrn_power(float scale, float beta) {
  if (beta == 0.75f) {
    float root = sqrtf(scale);
    return 1.0f / (root * sqrtf(root));
  }
  if (beta == 0.5f) return 1.0f / sqrtf(scale);
  return powf(scale, -beta);
}

#endif
