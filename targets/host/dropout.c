/* Inverted dropout with a counter-based mask (runtime/rng.h): nothing is stored for backward. */
#include "kernels.h"
#include "rng.h"

static bool keep(const SwkDropout *p, uint64_t seed, uint64_t iteration, uint64_t image,
                 int64_t element) {
  return swn_dropout_keep(seed, p->layer, p->ratio, iteration, image, element);
}

void swk_dropout_forward(const SwkDropout *p, int batch, bool train, uint64_t seed,
                         uint64_t iteration, uint64_t first_image, const float *x, float *y) {
  float keep_scale = 1.0f / (1.0f - p->ratio);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++)
    for (int64_t i = 0; i < p->n; i++) {
      int64_t at = (int64_t)n * p->n + i;
      if (!train)
        y[at] = x[at];
      else
        y[at] = keep(p, seed, iteration, first_image + (uint64_t)n, i) ? x[at] * keep_scale : 0.0f;
    }
}

void swk_dropout_backward(const SwkDropout *p, int batch, uint64_t seed, uint64_t iteration,
                          uint64_t first_image, const float *dy, float *dx, bool dx_add) {
  float keep_scale = 1.0f / (1.0f - p->ratio);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++)
    for (int64_t i = 0; i < p->n; i++) {
      int64_t at = (int64_t)n * p->n + i;
      float g = keep(p, seed, iteration, first_image + (uint64_t)n, i) ? dy[at] * keep_scale : 0.0f;
      dx[at] = dx_add ? dx[at] + g : g;
    }
}
