/* Concatenation along channels: per image, the inputs' blocks one after another. */
#include <string.h>

#include "kernels.h"

static int64_t total(int n, const int64_t *sizes) {
  int64_t t = 0;
  for (int i = 0; i < n; i++) t += sizes[i];
  return t;
}

void swk_concat_forward(int n, const int64_t *sizes, int batch, const float *const *x, float *y) {
  int64_t out = total(n, sizes);
#pragma omp parallel for schedule(static)
  for (int b = 0; b < batch; b++) {
    float *dst = y + (int64_t)b * out;
    for (int i = 0; i < n; i++) {
      memcpy(dst, x[i] + (int64_t)b * sizes[i], sizeof(float) * (size_t)sizes[i]);
      dst += sizes[i];
    }
  }
}

void swk_concat_backward(int n, const int64_t *sizes, int batch, const float *dy, float *const *dx,
                         const bool *dx_add) {
  int64_t out = total(n, sizes);
#pragma omp parallel for schedule(static)
  for (int b = 0; b < batch; b++) {
    const float *src = dy + (int64_t)b * out;
    for (int i = 0; i < n; i++) {
      if (dx[i]) {
        float *dst = dx[i] + (int64_t)b * sizes[i];
        if (dx_add[i])
          for (int64_t k = 0; k < sizes[i]; k++) dst[k] += src[k];
        else
          memcpy(dst, src, sizeof(float) * (size_t)sizes[i]);
      }
      src += sizes[i];
    }
  }
}
