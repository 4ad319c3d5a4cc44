/* The squared norm of a pool (gradient clipping): summed in double over a fixed number of
 * parts, whose sums are added in order, so the result does not depend on the thread count. */
#include "kernels.h"

enum { NORM_PARTS = 64 };

double swk_sum_squares(int64_t n, const float *x) {
  double part[NORM_PARTS];
  int64_t size = (n + NORM_PARTS - 1) / NORM_PARTS;
#pragma omp parallel for schedule(static)
  for (int p = 0; p < NORM_PARTS; p++) {
    int64_t begin = p * size < n ? p * size : n, end = begin + size < n ? begin + size : n;
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = begin; i < end; i++) sum += (double)x[i] * x[i];
    part[p] = sum;
  }
  double total = 0;
  for (int p = 0; p < NORM_PARTS; p++) total += part[p];
  return total;
}
