/* The allreduce's arithmetic: vectorised, single-threaded (it runs on the communication
 * thread while the compute threads carry on with backward). */
#include "kernels.h"

void swk_sum_into(int64_t n, float *restrict y, const float *restrict x) {
#pragma omp simd
  for (int64_t i = 0; i < n; i++) y[i] += x[i];
}

void swk_scale(int64_t n, float *y, float a) {
#pragma omp simd
  for (int64_t i = 0; i < n; i++) y[i] *= a;
}
