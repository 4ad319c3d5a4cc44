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

/* out[0, m) = the inputs' sum at [from, from + m), added in order, then the ReLU if asked (the
 * ReLU kernel's expression) as the last input is added: a vector loop per input after the
 * second (one loop over all inputs per element did not vectorise). */
static void sum_run(int n, const float *const *x, int64_t from, int m, float *restrict out,
                    bool relu, float relu_slope) {
  const float *restrict a = x[0] + from, *restrict b = x[1] + from;
  bool last = n == 2;
#pragma omp simd
  for (int k = 0; k < m; k++) {
    float v = a[k] + b[k];
    out[k] = relu && last && !(v > 0) ? relu_slope * v : v;
  }
  for (int i = 2; i < n; i++) {
    const float *restrict c = x[i] + from;
    last = i == n - 1;
#pragma omp simd
    for (int k = 0; k < m; k++) {
      float v = out[k] + c[k];
      out[k] = relu && last && !(v > 0) ? relu_slope * v : v;
    }
  }
}

/* A y too large to stay in cache is written with streaming stores (stream.h), a run of RUN
 * floats at a time from L1. Runs of 2048 floats, each summed in three loops (copy, add, ReLU),
 * took 2.9 ms for res2's sum of 25 MB tensors; runs of 256 in one loop take 1.1 ms: the loads
 * and the streaming stores then overlap. */
enum { RUN = 256 };

void swk_add_forward(int n, int64_t size, int batch, const float *const *x, float *y, bool relu,
                     float relu_slope) {
  int64_t total = size * batch;
  bool stream = host_streams(y, sizeof(float) * (size_t)total);
#pragma omp parallel num_threads(swk_threads())
  {
#pragma omp for schedule(static)
    for (int64_t c = 0; c < chunks(total); c++) {
      int64_t from = c * CHUNK, to = from + CHUNK < total ? from + CHUNK : total;
      if (!stream) {
        sum_run(n, x, from, (int)(to - from), y + from, relu, relu_slope);
        continue;
      }
      for (int64_t r = from; r < to; r += RUN) {
        float sum[RUN] __attribute__((aligned(64)));
        int m = to - r < RUN ? (int)(to - r) : RUN;
        sum_run(n, x, r, m, sum, relu, relu_slope);
        host_stream_copy(y + r, sum, (size_t)m);
      }
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
