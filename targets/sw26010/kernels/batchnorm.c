/* Batch normalisation on the CPEs (batchnorm_cpe.c). */
#include "mpe.h"

static SwBatchNormArgs batchnorm_args(const SwkBatchNorm *p, int batch) {
  return (SwBatchNormArgs){.c = p->c,
                           .hw = p->hw,
                           .batch = batch,
                           .affine = p->affine,
                           .frozen = p->frozen,
                           .eps = p->eps,
                           .momentum = p->momentum};
}

void swk_batchnorm_forward(const SwkBatchNorm *p, int batch, bool train, const float *x,
                           const float *scale, const float *shift, float *y, float *saved,
                           float *running) {
  SwBatchNormArgs a = batchnorm_args(p, batch); /* the CPE kernel applies no ReLU */
  a.train = train, a.x = x, a.scale = scale, a.shift = shift, a.y = y, a.saved = saved,
  a.running = running;
  SW_RUN(sw_batchnorm, &a);
  sw_epilogue_relu(p, (int64_t)p->c * p->hw, batch, y);
}

void swk_batchnorm_recompute(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                             const float *shift, const float *saved, float *y) {
  SwBatchNormArgs a = batchnorm_args(p, batch);
  a.recompute = 1, a.x = x, a.scale = scale, a.shift = shift, a.y = y, a.saved = (float *)saved;
  SW_RUN(sw_batchnorm, &a);
  sw_epilogue_relu(p, (int64_t)p->c * p->hw, batch, y);
}

void swk_batchnorm_backward(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                            const float *dy, const float *saved, float *dx, bool dx_add,
                            float *dscale, float *dshift, float grad_scale, float bias_grad_scale,
                            float grad_keep) {
  sw_unfolded(grad_scale, bias_grad_scale, grad_keep);
  SwBatchNormArgs a = batchnorm_args(p, batch);
  a.backward = 1, a.x = x, a.scale = scale, a.dy = dy, a.saved = (float *)saved, a.dx = dx,
  a.add = dx_add;
  a.dscale = dscale, a.dshift = dshift;
  SW_RUN(sw_batchnorm, &a);
}
