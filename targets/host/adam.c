/* Adam's and AdamW's step (runtime/adam.h), streamed over a parameter tensor. */
#include "adam.h"
#include "kernels.h"

void swk_adam_update(int64_t n, float lr, float decay, float beta1, float beta2, float epsilon,
                     bool decoupled, uint64_t iteration, float *w, const float *g, float *m,
                     float *v) {
  SwnAdam a = swn_adam(lr, decay, beta1, beta2, epsilon, decoupled, iteration);
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) swn_adam_element(&a, &w[i], g[i], &m[i], &v[i]);
}
