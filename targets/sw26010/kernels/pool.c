/* Pooling on the CPEs (pool_cpe.c). In (B,N,R,C) a task is a band of rows of one plane that
 * must fit the LDM: planes too wide for one (a window's rows over SW_POOL_IN_FLOATS, or an
 * output row over SW_POOL_OUT_FLOATS) run on the MPE instead (mpe.c). */
#include "mpe.h"

static SwPoolArgs pool_args(const SwkPool *p, int batch, bool rcnb) {
  return (SwPoolArgs){.c = p->c,
                      .h = p->h,
                      .w = p->w,
                      .ho = p->ho,
                      .wo = p->wo,
                      .kh = p->kh,
                      .kw = p->kw,
                      .sh = p->sh,
                      .sw = p->sw,
                      .ph = p->ph,
                      .pw = p->pw,
                      .max = p->max,
                      .batch = batch,
                      .rcnb = rcnb};
}

/* Output rows per forward task: a band's input rows and its outputs in the LDM; 0: none fits. */
static int forward_rows(const SwkPool *p) {
  if (SW_POOL_IN_FLOATS / p->w < p->kh) return 0;
  int rows = (SW_POOL_IN_FLOATS / p->w - p->kh) / p->sh + 1;
  if (rows > p->ho) rows = p->ho;
  return rows < SW_POOL_OUT_FLOATS / p->wo ? rows : SW_POOL_OUT_FLOATS / p->wo;
}

/* Input rows per backward task: the band and the output rows covering it in the LDM. */
static int backward_rows(const SwkPool *p) {
  int rows = SW_POOL_IN_FLOATS / p->w < p->h ? SW_POOL_IN_FLOATS / p->w : p->h;
  while (rows > 0 && ((rows - 1 + p->kh) / p->sh + 1) * p->wo > SW_POOL_OUT_FLOATS) rows--;
  return rows;
}

void swk_pool_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax) {
  SwPoolArgs a = pool_args(p, batch, false);
  if (!(a.rows = forward_rows(p))) {
    sw_mpe_pool_forward(p, batch, x, y, argmax);
    return;
  }
  a.x = x, a.y = y, a.argmax = argmax;
  SW_RUN(sw_pool_forward, &a);
}

void swk_pool_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                       float *dx, bool dx_add) {
  SwPoolArgs a = pool_args(p, batch, false);
  if (!(a.rows = backward_rows(p))) {
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
