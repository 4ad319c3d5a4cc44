/* Parameter and state initialisation from the seed: element i of parameter k draws from the
 * counter hash (seed, k, i), so initial weights do not depend on order or threads. */
#include <math.h>

#include "rng.h"
#include "train.h"

static float gaussian(uint64_t seed, uint64_t k, uint64_t i) {
  /* Box-Muller from two independent draws; u1 in (0, 1] */
  float u1 = 1.0f - swn_uniform(swn_hash3(seed, k, 2 * i));
  float u2 = swn_uniform(swn_hash3(seed, k, 2 * i + 1));
  return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530718f * u2);
}

static float draw(const SwnParamInfo *p, uint64_t seed, uint64_t k, uint64_t i) {
  float fan_in = (float)(p->fan_in > 0 ? p->fan_in : 1);
  switch (p->init) {
  case SWN_INIT_XAVIER: {
    float a = sqrtf(3.0f / fan_in);
    return (2.0f * swn_uniform(swn_hash3(seed, k, i)) - 1.0f) * a;
  }
  case SWN_INIT_MSRA: return gaussian(seed, k, i) * sqrtf(2.0f / fan_in);
  case SWN_INIT_GAUSSIAN: return gaussian(seed, k, i) * p->init_arg;
  case SWN_INIT_UNIFORM: return (2.0f * swn_uniform(swn_hash3(seed, k, i)) - 1.0f) * p->init_arg;
  default: return p->init_arg;
  }
}

void swn_init_parameters(const SwnNetwork *net, uint64_t seed, float *params, float *state) {
  for (int k = 0; k < net->nparams; k++) {
    const SwnParamInfo *p = &net->params[k];
    uint64_t stream = 0x696e6974ull + (uint64_t)k;
    for (int64_t i = 0; i < p->count; i++)
      params[p->offset + i] = draw(p, seed, stream, (uint64_t)i);
  }
  for (int k = 0; k < net->nstate; k++)
    for (int64_t i = 0; i < net->state[k].count; i++)
      state[net->state[k].offset + i] = net->state[k].init;
}
