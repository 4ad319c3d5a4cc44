/* Max and average pooling, Caffe's semantics: windows may hang over the padded border; an
 * average divides by the window's extent within the padded input. Max pooling records the
 * index of the maximum within the input plane for backward. Planes are spread over threads. */
#include <string.h>

#include "kernels.h"
#include "pool_window.h"

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* Eight floats src[0], src[stride], ...: two vectors' even elements for stride 2, which reads
 * src[15] too. */
static v8f load_strided(const float *src, int stride) {
  v8f v;
  if (stride == 1) {
    memcpy(&v, src, sizeof v);
  } else if (stride == 2) {
    v8f lo, hi;
    memcpy(&lo, src, sizeof lo), memcpy(&hi, src + 8, sizeof hi);
    v = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
  } else {
    for (int i = 0; i < 8; i++) v[i] = src[i * stride];
  }
  return v;
}

/* Outputs [ow0, ow0 + 8) of a row whose windows span input rows [h0, h1) and lie inside the
 * row, with every element load_strided reads: the taps in the scalar loop's order, a tap
 * taken only if greater, so the same maximum and index as one output at a time. */
static void max_eight(const SwkPool *p, const float *x, int h0, int h1, int ow0, float *y,
                      int32_t *argmax) {
  int first = ow0 * p->sw - p->pw;
  v8i lanes = {0, 1, 2, 3, 4, 5, 6, 7};
  lanes *= p->sw;
  v8f best = load_strided(x + h0 * p->w + first, p->sw);
  v8i at = lanes + (h0 * p->w + first);
  for (int ih = h0; ih < h1; ih++)
    for (int kw = 0; kw < p->kw; kw++) {
      int from = ih * p->w + first + kw;
      v8f v = load_strided(x + from, p->sw);
      v8i greater = v > best;
      best = (v8f)((greater & (v8i)v) | (~greater & (v8i)best));
      at = (greater & (lanes + from)) | (~greater & at);
    }
  memcpy(y, &best, sizeof best);
  memcpy(argmax, &at, sizeof at);
}

/* The outputs [*lo, *hi) of a row whose windows, and the last element a strided load of theirs
 * reads, lie inside the row: those max_eight may compute. */
static void inside_outputs(const SwkPool *p, int *lo, int *hi) {
  *lo = (p->pw + p->sw - 1) / p->sw;
  int last = p->w - p->kw - (p->sw - 1) + p->pw; /* largest ow * sw allowed */
  *hi = last < 0 ? 0 : last / p->sw + 1;
  if (*hi > p->wo) *hi = p->wo;
  if (*hi < *lo) *hi = *lo;
}

/* One output as max_eight computes it, its window clipped to the input. */
static void max_one(const SwkPool *p, const float *x, int h0, int h1, int ow, float *y,
                    int32_t *argmax) {
  int w0 = ow * p->sw - p->pw, w1 = w0 + p->kw < p->w ? w0 + p->kw : p->w;
  if (w0 < 0) w0 = 0;
  int32_t at = h0 * p->w + w0;
  float best = x[at];
  for (int ih = h0; ih < h1; ih++)
    for (int iw = w0; iw < w1; iw++) {
      int32_t i = ih * p->w + iw;
      float v = x[i];
      bool greater = v > best;
      best = greater ? v : best;
      at = greater ? i : at;
    }
  *y = best, *argmax = at;
}

/* Branch-free selection: on random data a compare-and-branch mispredicts half the time,
 * which made this loop ten times slower than it is now. Windows are never empty (pad < kernel).
 * Outputs whose windows lie inside the row go eight at a time, the last eight overlapping the
 * ones before if need be (they compute the same values again). */
static void max_plane(const SwkPool *p, const float *x, float *y, int32_t *argmax) {
  int lo, hi;
  inside_outputs(p, &lo, &hi);
  if (hi - lo < 8) lo = hi = 0;
  for (int oh = 0; oh < p->ho; oh++) {
    int h0 = oh * p->sh - p->ph, h1 = h0 + p->kh < p->h ? h0 + p->kh : p->h;
    if (h0 < 0) h0 = 0;
    float *yr = y + oh * p->wo;
    int32_t *ar = argmax + oh * p->wo;
    for (int ow = 0; ow < lo; ow++) max_one(p, x, h0, h1, ow, yr + ow, ar + ow);
    for (int ow = lo; ow < hi; ow += 8) {
      int first = ow + 8 <= hi ? ow : hi - 8;
      max_eight(p, x, h0, h1, first, yr + first, ar + first);
    }
    for (int ow = hi; ow < p->wo; ow++) max_one(p, x, h0, h1, ow, yr + ow, ar + ow);
  }
}

static void avg_plane(const SwkPool *p, const float *x, float *y) {
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      SwnWindow win = SWN_POOL_WINDOW(p, oh, ow);
      float s = 0;
      for (int ih = win.h0; ih < win.h1; ih++)
        for (int iw = win.w0; iw < win.w1; iw++) s += x[ih * p->w + iw];
      y[oh * p->wo + ow] = s / win.area;
    }
}

static void avg_plane_backward(const SwkPool *p, const float *dy, float *dx) {
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      SwnWindow win = SWN_POOL_WINDOW(p, oh, ow);
      float g = dy[oh * p->wo + ow] / win.area;
      for (int ih = win.h0; ih < win.h1; ih++)
        for (int iw = win.w0; iw < win.w1; iw++) dx[ih * p->w + iw] += g;
    }
}

void swk_pool_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax) {
  size_t in = (size_t)p->h * p->w, out = (size_t)p->ho * p->wo;
  int64_t planes = (int64_t)batch * p->c;
#pragma omp parallel for schedule(guided)
  for (int64_t i = 0; i < planes; i++) {
    if (p->max)
      max_plane(p, x + i * in, y + i * out, argmax + i * out);
    else
      avg_plane(p, x + i * in, y + i * out);
  }
}

void swk_pool_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                       float *dx, bool dx_add) {
  size_t in = (size_t)p->h * p->w, out = (size_t)p->ho * p->wo;
  int64_t planes = (int64_t)batch * p->c;
#pragma omp parallel for schedule(guided)
  for (int64_t i = 0; i < planes; i++) {
    float *dxp = dx + i * in;
    const float *dyp = dy + i * out;
    if (!dx_add) memset(dxp, 0, sizeof(float) * in);
    if (!p->max) {
      avg_plane_backward(p, dyp, dxp);
      continue;
    }
    const int32_t *am = argmax + i * out;
    for (size_t j = 0; j < out; j++) dxp[am[j]] += dyp[j];
  }
}
