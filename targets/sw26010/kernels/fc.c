/* Fully connected layers as CPE GEMMs: Y (B x out) = X W^T + b (bias per column of Y),
 * dW = dY^T X, dX = dY W (added where asked), db = the CPEs' column sums of dY. */
#include "../cost/predict.h"
#include "mpe.h"

size_t swk_fc_workspace(const SwkFc *p) {
  (void)p;
  return 0;
}

void swk_fc_forward(const SwkFc *p, int batch, const float *x, const float *w, const float *b,
                    float *y, float *ws) {
  (void)ws;
  SwGemmArgs m = {.m = batch,
                  .n = p->out,
                  .k = p->in,
                  .count = 1,
                  .tb = 1,
                  .lda = p->in,
                  .ldb = p->in,
                  .ldc = p->out,
                  .a = x,
                  .b = w,
                  .c = y,
                  .bias = p->bias ? b : NULL,
                  .bias_columns = 1};
  sw_gemm_buffering(&m, 0);
  sw_gemm_run(&m);
}

void swk_fc_backward(const SwkFc *p, int batch, const float *x, const float *w, const float *dy,
                     float *dx, bool dx_add, float *dw, float *db, float grad_scale,
                     float bias_grad_scale, float grad_keep, float *ws) {
  (void)ws;
  sw_unfolded(grad_scale, bias_grad_scale, grad_keep);

  SwGemmArgs gw = {.m = p->out,
                   .n = p->in,
                   .k = batch,
                   .count = 1,
                   .ta = 1,
                   .lda = p->out,
                   .ldb = p->in,
                   .ldc = p->in,
                   .a = dy,
                   .b = x,
                   .c = dw};
  sw_gemm_buffering(&gw, 0);
  sw_gemm_run(&gw);
  if (db) {
    SwStreamArgs s = {.op = SW_ROW_BIAS_GRAD,
                      .a = dy,
                      .y = db,
                      .rows = p->out,
                      .cols = 1,
                      .images = batch,
                      .image_stride = p->out};
    sw_stream_run(&s);
  }
  if (dx) {
    SwGemmArgs gx = {.m = batch,
                     .n = p->in,
                     .k = p->out,
                     .count = 1,
                     .lda = p->out,
                     .ldb = p->in,
                     .ldc = p->in,
                     .a = dy,
                     .b = w,
                     .c = dx,
                     .beta = dx_add ? 1.0f : 0.0f};
    sw_gemm_buffering(&gx, 0);
    sw_gemm_run(&gx);
  }
}
