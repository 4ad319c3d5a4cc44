/* Pooling on the CPEs (pool_cpe.c). In (B,N,R,C) a task is a band of whole rows of one plane
 * where one fits the LDM, else a block of columns of one row (wide planes); only a window
 * larger than the LDM buffer runs on the MPE (mpe.c). */
#include "mpe.h"

static SwPoolArgs pool_args(const SwkPool *p, int batch, bool rcnb) {
  return (SwPoolArgs){.c = p->c, SW_WINDOW_OF(p), .max = p->max, .batch = batch, .rcnb = rcnb};
}

void swk_pool_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax) {
  SwPoolArgs a = pool_args(p, batch, false);
  if (!sw_pool_forward_block(&a)) {
    sw_mpe_pool_forward(p, batch, x, y, argmax);
    return;
  }
  a.x = x, a.y = y, a.argmax = argmax;
  SW_RUN(sw_pool_forward, &a);
}

void swk_pool_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                       float *dx, bool dx_add) {
  SwPoolArgs a = pool_args(p, batch, false);
  if (!sw_pool_backward_block(&a)) {
    sw_mpe_pool_backward(p, batch, dy, argmax, dx, dx_add);
    return;
  }
  a.dy = dy, a.argmax = (int32_t *)argmax, a.dx = dx, a.add = dx_add;
  SW_RUN(sw_pool_backward, &a);
}

void swk_pool_rcnb_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax) {
  SwPoolArgs a = pool_args(p, batch, true);
  a.x = x, a.y = y, a.argmax = argmax;
  SW_RUN(sw_pool_forward, &a);
}

void swk_pool_rcnb_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                            float *dx, bool dx_add) {
  SwPoolArgs a = pool_args(p, batch, true);
  a.dy = dy, a.argmax = (int32_t *)argmax, a.dx = dx, a.add = dx_add;
  SW_RUN(sw_pool_backward, &a);
}
