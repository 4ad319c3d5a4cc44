/* Local response normalisation across channels (Caffe's ACROSS_CHANNELS):
 *   scale_c = k + alpha / size * sum_{c' in window(c)} x_c'^2,   y_c = x_c * scale_c^-beta
 *   dx_c = dy_c * scale_c^-beta - 2 alpha beta / size * x_c * sum_{c' in window(c)} dy_c' y_c' / scale_c'
 * with the window of `size` channels centred on c and clipped at the ends. */
#include <string.h>

#include "kernels.h"
#include "lrn_power.h"

enum { RUN = 64 }; /* pixels whose window sums backward keeps at once, in a vector's reach */

/* out[i] = s[i]^-beta over n pixels: a loop per form of the power, each of which vectorises. */
static void powers(const float *s, float *out, int n, float beta) {
  if (beta == 0.75f)
    for (int i = 0; i < n; i++) out[i] = swn_lrn_power(s[i], 0.75f);
  else if (beta == 0.5f)
    for (int i = 0; i < n; i++) out[i] = swn_lrn_power(s[i], 0.5f);
  else
    for (int i = 0; i < n; i++) out[i] = swn_lrn_power(s[i], beta);
}

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
      float *yc = yn + (size_t)c * p->hw;
      const float *xc = xn + (size_t)c * p->hw;
      for (int i = 0; i < p->hw; i++) s[i] = p->k + a * s[i];
      powers(s, yc, p->hw, p->beta);
      for (int i = 0; i < p->hw; i++) yc[i] *= xc[i];
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
      /* each pixel's window sum in channel order, a run of pixels at a time (the loops over
       * pixels vectorise) */
      for (int i0 = 0; i0 < p->hw; i0 += RUN) {
        int n = p->hw - i0 < RUN ? p->hw - i0 : RUN;
        float acc[RUN] = {0};
        for (int k = lo; k <= hi; k++) {
          size_t at = base + (size_t)k * p->hw + (size_t)i0;
          for (int i = 0; i < n; i++) acc[i] += dy[at + i] * y[at + i] / scale[at + i];
        }
        size_t at = base + (size_t)c * p->hw + (size_t)i0;
        float power[RUN];
        powers(scale + at, power, n, p->beta);
        for (int i = 0; i < n; i++) {
          float g = dy[at + i] * power[i] - coeff * x[at + i] * acc[i];
          dx[at + i] = dx_add ? dx[at + i] + g : g;
        }
      }
    }
  }
}
