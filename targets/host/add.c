/* Element-wise sum of n tensors; each input's gradient is the output's. Both directions are
 * one pass over memory split between the threads, in chunks that stay in L1 while every input
 * (or every input gradient) is visited: these tensors are a residual network's largest, and its
 * sums move only memory. */
#include <string.h>

#include "kernels.h"

enum { CHUNK = 2048 }; /* floats */

static int64_t chunks(int64_t total) { return (total + CHUNK - 1) / CHUNK; }

void swk_add_forward(int n, int64_t size, int batch, const float *const *x, float *y) {
  int64_t total = size * batch;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (int64_t c = 0; c < chunks(total); c++) {
    int64_t from = c * CHUNK, to = from + CHUNK < total ? from + CHUNK : total;
    const float *x0 = x[0];
#pragma omp simd
    for (int64_t k = from; k < to; k++) y[k] = x0[k];
    for (int i = 1; i < n; i++) {
      const float *xi = x[i];
#pragma omp simd
      for (int64_t k = from; k < to; k++) y[k] += xi[k];
    }
  }
}

void swk_add_backward(int n, int64_t size, int batch, const float *dy, float *const *dx,
                      const bool *dx_add) {
  int64_t total = size * batch;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (int64_t c = 0; c < chunks(total); c++) {
    int64_t from = c * CHUNK, to = from + CHUNK < total ? from + CHUNK : total;
    for (int i = 0; i < n; i++) {
      float *d = dx[i];
      if (!d || d == dy) continue; /* dy itself: the memory plan handed it to this input */
      if (dx_add[i]) {
#pragma omp simd
        for (int64_t k = from; k < to; k++) d[k] += dy[k];
      } else {
        memcpy(d + from, dy + from, sizeof(float) * (size_t)(to - from));
      }
    }
  }
}
