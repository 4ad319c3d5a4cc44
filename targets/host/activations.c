/* The element-wise activations, one forward and one backward kernel per row of
 * runtime/activations.h, whose functions hold the arithmetic. Backward reads `v`, the output or
 * the input as the row says; dx_add adds to dx (the loops are split so that each vectorises). */
#include "activations.h"
#include "kernels.h"

/* clang-format off */
#define HOST_ACTIVATION(unused_a, unused_b, name, reads)                                           \
  void swk_##name##_forward(const SwkAct *p, int batch, const float *x, float *y) {                \
    int64_t n = p->n * batch;                                                                      \
    float s = p->slope;                                                                            \
    _Pragma("omp parallel for simd schedule(static)")                                              \
    for (int64_t i = 0; i < n; i++) y[i] = swn_##name(x[i], s);                                    \
  }                                                                                                \
  void swk_##name##_backward(const SwkAct *p, int batch, const float *v, const float *dy,          \
                             float *dx, bool dx_add) {                                             \
    int64_t n = p->n * batch;                                                                      \
    float s = p->slope;                                                                            \
    if (dx_add) {                                                                                  \
      _Pragma("omp parallel for simd schedule(static)")                                            \
      for (int64_t i = 0; i < n; i++) dx[i] += swn_##name##_grad(v[i], dy[i], s);                 \
    } else {                                                                                       \
      _Pragma("omp parallel for simd schedule(static)")                                            \
      for (int64_t i = 0; i < n; i++) dx[i] = swn_##name##_grad(v[i], dy[i], s);                   \
    }                                                                                              \
  }
/* clang-format on */
SWN_ACTIVATIONS(HOST_ACTIVATION, , )
