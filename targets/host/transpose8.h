/* An 8 x 8 block of floats transposed in registers: three rounds of shuffles, in whatever
 * vector registers the build targets. The GEMM packs transposed operands with it, and the
 * explicit weight gradient turns dW^T back into dW. */
#ifndef SWNC_HOST_TRANSPOSE8_H
#define SWNC_HOST_TRANSPOSE8_H

#include <stddef.h>
#include <string.h>

typedef float HostV8 __attribute__((vector_size(32)));

/* column[j][i] = src[i * ld + j] for i < rows (at most 8), zero for the rows after; j < 8.
 * Only those rows are read. */
static inline __attribute__((always_inline)) void host_transpose8_rows(const float *src, size_t ld,
                                                                       int rows, HostV8 column[8]) {
  HostV8 r[8], t[8], u[8];
  for (int i = 0; i < 8; i++) {
    r[i] = (HostV8){0};
    if (i < rows) memcpy(&r[i], src + i * ld, sizeof r[i]);
  }
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; h++) {
      u[i + 2 * h] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * h + 1] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int j = 0; j < 4; j++) {
    column[j] = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    column[j + 4] = __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

/* column[j][i] = src[i * ld + j] for i, j < 8. */
static inline void host_transpose8(const float *src, size_t ld, HostV8 column[8]) {
  host_transpose8_rows(src, ld, 8, column);
}

#endif
