/* Element-wise sum of n tensors, with its ReLU epilogue if asked; each input's gradient is the
 * output's. Both directions are
 * one pass over memory split between the threads, in chunks that stay in L1 while every input
 * (or every input gradient) is visited: these tensors are a residual network's largest, and its
 * sums move only memory. */
#include <string.h>

#include "kernels.h"
#include "stream.h"

enum { CHUNK = 2048 }; /* floats */

static int64_t chunks(int64_t total) { return (total + CHUNK - 1) / CHUNK; }

/* y[from, to) = the inputs' sum there, then the ReLU if asked (the ReLU kernel's expression). */
static void sum_chunk(int n, const float *const *x, int64_t from, int64_t to, float *y, bool relu,
                      float relu_slope) {
  const float *x0 = x[0] + from;
  int64_t m = to - from;
#pragma omp simd
  for (int64_t k = 0; k < m; k++) y[k] = x0[k];
  for (int i = 1; i < n; i++) {
    const float *xi = x[i] + from;
#pragma omp simd
    for (int64_t k = 0; k < m; k++) y[k] += xi[k];
  }
  if (relu) {
#pragma omp simd
    for (int64_t k = 0; k < m; k++) y[k] = y[k] > 0 ? y[k] : relu_slope * y[k];
  }
}

/* Each chunk is summed in L1 (in y, or in a buffer streamed out to a y too large to stay in
 * cache: stream.h). */
void swk_add_forward(int n, int64_t size, int batch, const float *const *x, float *y, bool relu,
                     float relu_slope) {
  int64_t total = size * batch;
  bool stream = host_streams(y, sizeof(float) * (size_t)total);
#pragma omp parallel num_threads(swk_threads())
  {
#pragma omp for schedule(guided)
    for (int64_t c = 0; c < chunks(total); c++) {
      int64_t from = c * CHUNK, to = from + CHUNK < total ? from + CHUNK : total;
      if (!stream) {
        sum_chunk(n, x, from, to, y + from, relu, relu_slope);
        continue;
      }
      float sum[CHUNK] __attribute__((aligned(64)));
      sum_chunk(n, x, from, to, sum, relu, relu_slope);
      host_stream_copy(y + from, sum, (size_t)(to - from));
    }
    if (stream) host_stream_fence();
  }
}

void swk_add_backward(int n, int64_t size, int batch, const float *dy, float *const *dx,
                      const bool *dx_add) {
  int64_t total = size * batch;
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
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
