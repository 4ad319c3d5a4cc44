/* Learning-rate policies (Caffe's: fixed, step, multistep, inv, poly, exp) with linear warm-up. */
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
  default: break;
  }
  if (iteration < t->warmup) lr *= (it + 1) / (double)t->warmup;
  return (float)lr;
}
