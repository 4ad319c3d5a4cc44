/* Local response normalisation across channels (Caffe's ACROSS_CHANNELS):
 *   scale_c = k + alpha / size * sum_{c' in window(c)} x_c'^2,   y_c = x_c * scale_c^-beta
 *   dx_c = dy_c * scale_c^-beta - 2 alpha beta / size * x_c * sum_{c' in window(c)} dy_c' y_c' / scale_c'
 * with the window of `size` channels centred on c and clipped at the ends. */
#include <math.h>
#include <string.h>

#include "kernels.h"

void swk_lrn_forward(const SwkLrn *p, int batch, const float *x, float *y, float *scale) {
  int half = (p->size - 1) / 2;
  float a = p->alpha / (float)p->size;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++) {
    const float *xn = x + (size_t)n * p->c * p->hw;
    float *yn = y + (size_t)n * p->c * p->hw, *sn = scale + (size_t)n * p->c * p->hw;
    for (int c = 0; c < p->c; c++) {
      int lo = c - half < 0 ? 0 : c - half, hi = c + half >= p->c ? p->c - 1 : c + half;
      float *s = sn + (size_t)c * p->hw;
      for (int i = 0; i < p->hw; i++) s[i] = 0;
      for (int k = lo; k <= hi; k++) {
        const float *xk = xn + (size_t)k * p->hw;
        for (int i = 0; i < p->hw; i++) s[i] += xk[i] * xk[i];
      }
      for (int i = 0; i < p->hw; i++) {
        s[i] = p->k + a * s[i];
        yn[(size_t)c * p->hw + i] = xn[(size_t)c * p->hw + i] * powf(s[i], -p->beta);
      }
    }
  }
}

void swk_lrn_backward(const SwkLrn *p, int batch, const float *x, const float *y,
                      const float *scale, const float *dy, float *dx, bool dx_add) {
  int half = (p->size - 1) / 2;
  float coeff = 2.0f * p->alpha * p->beta / (float)p->size;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++) {
    size_t base = (size_t)n * p->c * p->hw;
    for (int c = 0; c < p->c; c++) {
      int lo = c - half < 0 ? 0 : c - half, hi = c + half >= p->c ? p->c - 1 : c + half;
      for (int i = 0; i < p->hw; i++) {
        float acc = 0;
        for (int k = lo; k <= hi; k++) {
          size_t at = base + (size_t)k * p->hw + i;
          acc += dy[at] * y[at] / scale[at];
        }
        size_t at = base + (size_t)c * p->hw + i;
        float g = dy[at] * powf(scale[at], -p->beta) - coeff * x[at] * acc;
        dx[at] = dx_add ? dx[at] + g : g;
      }
    }
  }
}
