/* ELU (Clevert et al.): y = x for x > 0, alpha (e^x - 1) otherwise (e^x - 1 as the CPEs, which
 * have no expm1, compute it, so that both kernel sets agree). Backward reads y: with
 * alpha >= 0, y > 0 exactly where x > 0, and below dy/dx = alpha e^x = y + alpha. */
#include <math.h>

#include "kernels.h"

void swk_elu_forward(const SwkAct *p, int batch, const float *x, float *y) {
  int64_t n = p->n * batch;
  float alpha = p->slope;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : alpha * (expf(x[i]) - 1.0f);
}

void swk_elu_backward(const SwkAct *p, int batch, const float *y, const float *dy, float *dx,
                      bool dx_add) {
  int64_t n = p->n * batch;
  float alpha = p->slope;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    float g = y[i] > 0 ? dy[i] : dy[i] * (y[i] + alpha);
    dx[i] = dx_add ? dx[i] + g : g;
  }
}
