/* Upsampling by integer factors (kernels.h): nearest, or bilinear with PyTorch's
 * align_corners = false. A plane per task; backward adds into a plane in a fixed order. */
#include <string.h>

#include "kernels.h"

/* Output index o of an axis scaled by s from n inputs, bilinear: the two inputs it reads and
 * the second one's weight (the first's is 1 - weight). */
typedef struct Tap {
  int lo, hi;
  float weight;
} Tap;

static Tap bilinear_tap(int o, int s, int n) {
  float src = ((float)o + 0.5f) / (float)s - 0.5f;
  if (src < 0) src = 0;
  int lo = (int)src;
  return (Tap){lo, lo < n - 1 ? lo + 1 : lo, src - (float)lo};
}

static void nearest_plane(const SwkUpsample *p, const float *x, float *y) {
  int wo = p->w * p->sw;
  for (int i = 0; i < p->h * p->sh; i++) {
    const float *row = x + (size_t)(i / p->sh) * p->w;
    for (int j = 0; j < wo; j++) y[(size_t)i * wo + j] = row[j / p->sw];
  }
}

static void bilinear_plane(const SwkUpsample *p, const float *x, float *y) {
  int wo = p->w * p->sw;
  for (int i = 0; i < p->h * p->sh; i++) {
    Tap r = bilinear_tap(i, p->sh, p->h);
    const float *top = x + (size_t)r.lo * p->w, *bottom = x + (size_t)r.hi * p->w;
    for (int j = 0; j < wo; j++) {
      Tap c = bilinear_tap(j, p->sw, p->w);
      float upper = (1 - c.weight) * top[c.lo] + c.weight * top[c.hi];
      float lower = (1 - c.weight) * bottom[c.lo] + c.weight * bottom[c.hi];
      y[(size_t)i * wo + j] = (1 - r.weight) * upper + r.weight * lower;
    }
  }
}

void swk_upsample_forward(const SwkUpsample *p, int batch, const float *x, float *y) {
  size_t in = (size_t)p->h * p->w, out = in * (size_t)p->sh * p->sw;
  int64_t planes = (int64_t)batch * p->c;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < planes; k++) {
    if (p->bilinear)
      bilinear_plane(p, x + k * in, y + k * out);
    else
      nearest_plane(p, x + k * in, y + k * out);
  }
}

static void nearest_plane_backward(const SwkUpsample *p, const float *dy, float *dx) {
  int wo = p->w * p->sw;
  for (int i = 0; i < p->h * p->sh; i++) {
    float *row = dx + (size_t)(i / p->sh) * p->w;
    for (int j = 0; j < wo; j++) row[j / p->sw] += dy[(size_t)i * wo + j];
  }
}

static void bilinear_plane_backward(const SwkUpsample *p, const float *dy, float *dx) {
  int wo = p->w * p->sw;
  for (int i = 0; i < p->h * p->sh; i++) {
    Tap r = bilinear_tap(i, p->sh, p->h);
    float *top = dx + (size_t)r.lo * p->w, *bottom = dx + (size_t)r.hi * p->w;
    for (int j = 0; j < wo; j++) {
      Tap c = bilinear_tap(j, p->sw, p->w);
      float g = dy[(size_t)i * wo + j], upper = (1 - r.weight) * g, lower = r.weight * g;
      top[c.lo] += (1 - c.weight) * upper, top[c.hi] += c.weight * upper;
      bottom[c.lo] += (1 - c.weight) * lower, bottom[c.hi] += c.weight * lower;
    }
  }
}

void swk_upsample_backward(const SwkUpsample *p, int batch, const float *dy, float *dx,
                           bool dx_add) {
  size_t in = (size_t)p->h * p->w, out = in * (size_t)p->sh * p->sw;
  int64_t planes = (int64_t)batch * p->c;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < planes; k++) {
    if (!dx_add) memset(dx + k * in, 0, sizeof(float) * in);
    if (p->bilinear)
      bilinear_plane_backward(p, dy + k * out, dx + k * in);
    else
      nearest_plane_backward(p, dy + k * out, dx + k * in);
  }
}
