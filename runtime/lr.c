/* Learning-rate policies (Caffe's: fixed, step, multistep, inv, poly, exp; and cosine) with
 * linear warm-up: the first `warmup` iterations scale the policy's rate by (it + 1) / warmup.
 * Cosine (Loshchilov and Hutter, SGDR, without restarts) starts after the warm-up:
 * lr (1 + cos(pi (it - warmup) / (total - warmup))) / 2, from lr down to 0 at the last. */
#include <math.h>

#include "train.h"

float swn_learning_rate(const SwnTrainConfig *t, int64_t iteration, int64_t total) {
  double lr = t->lr, it = (double)iteration;
  switch (t->lr_policy) {
  case SWN_LR_STEP: lr *= pow(t->gamma, t->step > 0 ? floor(it / (double)t->step) : 0); break;
  case SWN_LR_MULTISTEP: {
    int passed = 0;
    for (int i = 0; i < t->nsteps; i++) passed += iteration >= t->steps[i];
    lr *= pow(t->gamma, passed);
    break;
  }
  case SWN_LR_INV: lr *= pow(1.0 + t->gamma * it, -t->power); break;
  case SWN_LR_POLY: lr *= total > 0 ? pow(fmax(0.0, 1.0 - it / (double)total), t->power) : 1; break;
  case SWN_LR_EXP: lr *= pow(t->gamma, it); break;
  case SWN_LR_COSINE: {
    double span = (double)(total - t->warmup), done = it - (double)t->warmup;
    if (span > 0 && done > 0) lr *= 0.5 * (1 + cos(M_PI * fmin(done / span, 1.0)));
    break;
  }
  default: break;
  }
  if (iteration < t->warmup) lr *= (it + 1) / (double)t->warmup;
  return (float)lr;
}
