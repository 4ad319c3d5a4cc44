#include "im2col.h"

#include <string.h>

/* Output columns [lo, hi) read input columns inside [0, w) for kernel column `kj`. */
static void valid_range(const SwkConv *p, int kj, int *lo, int *hi) {
  int first = p->pw - kj; /* smallest ow with ow*sw - pw + kj >= 0, times sw */
  *lo = first <= 0 ? 0 : (first + p->sw - 1) / p->sw;
  int last = p->w - 1 + p->pw - kj; /* largest ow*sw allowed */
  *hi = last < 0 ? 0 : last / p->sw + 1;
  if (*hi > p->wo) *hi = p->wo;
  if (*lo > *hi) *lo = *hi;
}

void host_im2col(const SwkConv *p, int ci, const float *x, float *col, size_t ld) {
  for (int c = 0; c < ci; c++)
    for (int ki = 0; ki < p->kh; ki++)
      for (int kj = 0; kj < p->kw; kj++) {
        int lo, hi;
        valid_range(p, kj, &lo, &hi);
        for (int oh = 0; oh < p->ho; oh++) {
          int ih = oh * p->sh - p->ph + ki;
          float *out = col + oh * p->wo;
          if (ih < 0 || ih >= p->h) {
            memset(out, 0, sizeof(float) * (size_t)p->wo);
            continue;
          }
          const float *row = x + ((size_t)c * p->h + ih) * p->w;
          int shift = kj - p->pw; /* input column of output column 0 */
          for (int ow = 0; ow < lo; ow++) out[ow] = 0;
          if (p->sw == 1 && hi > lo)
            memcpy(out + lo, row + lo + shift, sizeof(float) * (size_t)(hi - lo));
          else
            for (int ow = lo; ow < hi; ow++) out[ow] = row[ow * p->sw + shift];
          for (int ow = hi; ow < p->wo; ow++) out[ow] = 0;
        }
        col += ld;
      }
}

void host_col2im(const SwkConv *p, int ci, const float *col, size_t ld, float *x) {
  for (int c = 0; c < ci; c++)
    for (int ki = 0; ki < p->kh; ki++)
      for (int kj = 0; kj < p->kw; kj++) {
        int lo, hi;
        valid_range(p, kj, &lo, &hi);
        for (int oh = 0; oh < p->ho; oh++) {
          int ih = oh * p->sh - p->ph + ki;
          if (ih < 0 || ih >= p->h) continue;
          const float *in = col + oh * p->wo;
          float *row = x + ((size_t)c * p->h + ih) * p->w;
          int shift = kj - p->pw;
          for (int ow = lo; ow < hi; ow++) row[ow * p->sw + shift] += in[ow];
        }
        col += ld;
      }
}
