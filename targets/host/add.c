/* Element-wise sum of n tensors; each input's gradient is the output's. */
#include <string.h>

#include "kernels.h"

void swk_add_forward(int n, int64_t size, int batch, const float *const *x, float *y) {
  int64_t total = size * batch;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < total; k++) {
    float s = x[0][k];
    for (int i = 1; i < n; i++) s += x[i][k];
    y[k] = s;
  }
}

void swk_add_backward(int n, int64_t size, int batch, const float *dy, float *const *dx,
                      const bool *dx_add) {
  int64_t total = size * batch;
  for (int i = 0; i < n; i++) {
    if (!dx[i]) continue;
    float *d = dx[i];
    if (dx_add[i]) {
#pragma omp parallel for simd schedule(static)
      for (int64_t k = 0; k < total; k++) d[k] += dy[k];
    } else {
      memcpy(d, dy, sizeof(float) * (size_t)total);
    }
  }
}
