/* Implicit-GEMM convolution on the CPEs (conv_implicit_cpe.c), which read the filters in swDNN's
 * (K, K, No, Ni) order: filters kept in (No, Ni, K, K) order (the parameter pool's, whatever
 * the plan) are reordered on the CPEs first, into the workspace; the weight gradient is computed in
 * (K, K, No, Ni) order and reordered back. The bias gradient is the CPEs' row sums of dY. */
#include "../cost/predict.h"
#include "mpe.h"

static int64_t weights(const SwkConv *p) { return (int64_t)p->co * p->ci * p->kh * p->kw; }

size_t swk_conv_implicit_workspace(const SwkConv *p, int batch) {
  (void)batch;
  return p->filters_kkoi ? 0 : (size_t)weights(p);
}

/* Fills in the shapes, the buffering the pass's tiling word asks for, the product's blocks and
 * the run (sw_implicit_plan), and launches. */
static void run(const SwkConv *p, int batch, SwImplicitArgs a, int tiling) {
  a.ci = p->ci, a.h = p->h, a.w = p->w, a.co = p->co, a.ho = p->ho, a.wo = p->wo;
  a.kh = p->kh, a.kw = p->kw, a.sh = p->sh, a.sw = p->sw, a.ph = p->ph, a.pw = p->pw,
  a.batch = batch;
  sw_implicit_buffering(&a, tiling);
  sw_implicit_plan(&a);
  SW_RUN(sw_conv_implicit, &a);
}

/* The filters in (K, K, No, Ni) order: w itself, or reordered into `into`. */
static const float *kkoi(const SwkConv *p, const float *w, float *into) {
  if (p->filters_kkoi) return w;
  sw_transpose_run((int64_t)p->co * p->ci, 1, (int64_t)p->kh * p->kw, w, into, false);
  return into;
}

void swk_conv_implicit_forward(const SwkConv *p, int batch, const float *x, const float *w,
                               const float *b, float *y, float *ws) {
  SwImplicitArgs a = {.pass = SW_IMPLICIT_FORWARD,
                      .x = x,
                      .filters = kkoi(p, w, ws),
                      .bias = p->bias ? b : NULL,
                      .out = y};
  run(p, batch, a, p->forward_tiling);
}

void swk_conv_implicit_backward(const SwkConv *p, int batch, const float *x, const float *w,
                                const float *dy, float *dx, bool dx_add, float *dw, float *db,
                                float grad_scale, float bias_grad_scale, float grad_keep,
                                float *ws) {
  sw_unfolded(grad_scale, bias_grad_scale, grad_keep);
  if (dw) {
    SwImplicitArgs a = {
        .pass = SW_IMPLICIT_WEIGHTS, .x = x, .dy = dy, .out = p->filters_kkoi ? dw : ws};
    run(p, batch, a, p->wgrad_tiling);
    if (!p->filters_kkoi)
      sw_transpose_run((int64_t)p->kh * p->kw, 1, (int64_t)p->co * p->ci, ws, dw, false);
    if (db && p->bias) {
      SwStreamArgs s = {.op = SW_ROW_BIAS_GRAD,
                        .a = dy,
                        .y = db,
                        .rows = p->co,
                        .cols = batch,
                        .images = (int64_t)p->ho * p->wo,
                        .image_stride = (int64_t)p->co * batch};
      sw_stream_run(&s);
    }
  }
  if (dx) {
    SwImplicitArgs a = {
        .pass = SW_IMPLICIT_DATA, .filters = kkoi(p, w, ws), .dy = dy, .out = dx, .add = dx_add};
    run(p, batch, a, p->dgrad_tiling);
  }
}
