/* Local response normalisation on the CPEs (lrn_cpe.c): a task holds all channels of a run of
 * pixels, as many as its buffers fit in SW_LRN_FLOATS, runs evened out over the plane. More
 * channels than one pixel's buffers fit run on the MPE (mpe.c). */
#include "mpe.h"

static SwLrnArgs lrn_args(const SwkLrn *p, int batch, bool backward) {
  return (SwLrnArgs){.c = p->c,
                     .hw = p->hw,
                     .size = p->size,
                     .batch = batch,
                     .backward = backward,
                     .pixels = sw_lrn_pixels(p->c, p->hw, backward ? 5 : 2),
                     .alpha = p->alpha,
                     .beta = p->beta,
                     .k = p->k};
}

void swk_lrn_forward(const SwkLrn *p, int batch, const float *x, float *y, float *scale) {
  SwLrnArgs a = lrn_args(p, batch, false);
  if (!a.pixels) {
    sw_mpe_lrn_forward(p, batch, x, y, scale);
    return;
  }
  a.x = x, a.y = y, a.scale = scale;
  SW_RUN(sw_lrn, &a);
}

void swk_lrn_backward(const SwkLrn *p, int batch, const float *x, const float *y,
                      const float *scale, const float *dy, float *dx, bool dx_add) {
  SwLrnArgs a = lrn_args(p, batch, true);
  if (!a.pixels) {
    sw_mpe_lrn_backward(p, batch, x, y, scale, dy, dx, dx_add);
    return;
  }
  a.x = x, a.y_in = y, a.scale_in = scale, a.dy = dy, a.dx = dx, a.add = dx_add;
  SW_RUN(sw_lrn, &a);
}
