/* Kernels not yet on the CPEs run on the MPE: the host target's portable C sources, compiled
 * serially with their kernels renamed mpe_* (mpe_compat/), wrapped here to account for their
 * time on the MPE from the bytes they move and the arithmetic they do (cost/model.c). */
#include "adam.h"
#include "mpe.h"

#define MPE(name) __typeof__(swk_##name) mpe_##name;
/* clang-format off */
MPE(pool_forward) MPE(pool_backward) MPE(lrn_forward) MPE(lrn_backward)
MPE(softmax_loss_forward) MPE(softmax_loss_backward)
MPE(accuracy_forward) MPE(conv_direct_workspace) MPE(conv_direct_forward)
MPE(conv_direct_backward) MPE(to_bnrc16) MPE(bnrc16_to_bnrc) MPE(pool_bnrc16_forward)
MPE(pool_bnrc16_backward) MPE(batchnorm_bnrc16_forward) MPE(batchnorm_bnrc16_recompute)
MPE(batchnorm_bnrc16_backward) MPE(conv_winograd2_workspace) MPE(conv_winograd2_forward)
MPE(conv_winograd2_backward) MPE(conv_winograd4_workspace) MPE(conv_winograd4_forward)
MPE(conv_winograd4_backward) MPE(conv_depthwise_workspace)
MPE(conv_depthwise_forward) MPE(conv_depthwise_backward) MPE(mul_forward) MPE(mul_backward)
MPE(upsample_forward) MPE(upsample_backward) MPE(softmax_forward) MPE(softmax_backward)
MPE(channel_bias_forward) MPE(channel_bias_backward) MPE(mul_bnrc16_forward)
MPE(mul_bnrc16_backward)
    /* clang-format on */

    static double floats(double n) {
  return 4 * n;
}

static double pool_sizes(const SwkPool *p, int batch, double *out) {
  *out = (double)batch * p->c * p->ho * p->wo;
  return (double)batch * p->c * p->h * p->w;
}

void sw_mpe_pool_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax) {
  mpe_pool_forward(p, batch, x, y, argmax);
  double out, in = pool_sizes(p, batch, &out);
  sw_mpe_work(floats(in + 2 * out), out * p->kh * p->kw);
}

void sw_mpe_pool_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                          float *dx, bool dx_add) {
  mpe_pool_backward(p, batch, dy, argmax, dx, dx_add);
  double out, in = pool_sizes(p, batch, &out);
  sw_mpe_work(floats(2 * out + in * (dx_add ? 2 : 1)), out);
}

void sw_mpe_lrn_forward(const SwkLrn *p, int batch, const float *x, float *y, float *scale) {
  mpe_lrn_forward(p, batch, x, y, scale);
  double n = (double)batch * p->c * p->hw;
  sw_mpe_work(floats(3 * n), n * (2.0 * p->size + 10));
}

void sw_mpe_lrn_backward(const SwkLrn *p, int batch, const float *x, const float *y,
                         const float *scale, const float *dy, float *dx, bool dx_add) {
  mpe_lrn_backward(p, batch, x, y, scale, dy, dx, dx_add);
  double n = (double)batch * p->c * p->hw;
  sw_mpe_work(floats(5 * n), n * (2.0 * p->size + 10));
}

void sw_mpe_softmax_loss_forward(const SwkSoftmaxLoss *p, int batch, const float *scores,
                                 const int32_t *labels, float *prob, float *loss) {
  mpe_softmax_loss_forward(p, batch, scores, labels, prob, loss);
  double n = (double)batch * p->classes;
  sw_mpe_work(floats(2 * n), 20 * n); /* exp: about 20 operations */
}

void sw_mpe_softmax_loss_backward(const SwkSoftmaxLoss *p, int batch, const float *prob,
                                  const int32_t *labels, float *dscores, bool dscores_add) {
  mpe_softmax_loss_backward(p, batch, prob, labels, dscores, dscores_add);
  double n = (double)batch * p->classes;
  sw_mpe_work(floats((dscores_add ? 3 : 2) * n), 2 * n);
}

/* mul (squeeze-and-excitation's scale) runs on the MPE: x and s read, y written; backward
 * reads dy too and writes the gradients asked for. */
static void mul_work(int c, int64_t hw, int64_t s_hw, int batch, bool backward, const float *dx,
                     bool dx_add, const float *ds) {
  double n = (double)batch * c * hw, s = (double)batch * c * s_hw;
  if (!backward) return sw_mpe_work(floats(2 * n + s), n);
  sw_mpe_work(floats((2 + (dx ? 1 : 0) + (dx_add ? 1 : 0)) * n + s),
              ((dx ? 1 : 0) + (ds ? 1 : 0)) * n);
}

void swk_mul_forward(int c, int64_t hw, int64_t s_hw, int batch, const float *x, const float *s,
                     float *y) {
  mpe_mul_forward(c, hw, s_hw, batch, x, s, y);
  mul_work(c, hw, s_hw, batch, false, NULL, false, NULL);
}

void swk_mul_backward(int c, int64_t hw, int64_t s_hw, int batch, const float *x, const float *s,
                      const float *dy, float *dx, bool dx_add, float *ds, bool ds_add) {
  mpe_mul_backward(c, hw, s_hw, batch, x, s, dy, dx, dx_add, ds, ds_add);
  mul_work(c, hw, s_hw, batch, true, dx, dx_add, ds);
}

/* The blocked layout's (never chosen for this target, whose description refuses the layout:
 * kept so that the kernel set is the whole interface) */
void swk_mul_bnrc16_forward(int c, int64_t hw, int64_t s_hw, int batch, const float *x,
                            const float *s, float *y) {
  mpe_mul_bnrc16_forward(c, hw, s_hw, batch, x, s, y);
  mul_work(c, hw, s_hw, batch, false, NULL, false, NULL);
}

void swk_mul_bnrc16_backward(int c, int64_t hw, int64_t s_hw, int batch, const float *x,
                             const float *s, const float *dy, float *dx, bool dx_add, float *ds,
                             bool ds_add) {
  mpe_mul_bnrc16_backward(c, hw, s_hw, batch, x, s, dy, dx, dx_add, ds, ds_add);
  mul_work(c, hw, s_hw, batch, true, dx, dx_add, ds);
}

/* a transposed convolution's bias on the MPE: y read and written (an add per element);
 * its gradient reads dy (an add per element) */
void swk_channel_bias_forward(int c, int64_t hw, int batch, const float *b, float *y) {
  mpe_channel_bias_forward(c, hw, batch, b, y);
  double n = (double)batch * c * hw;
  sw_mpe_work(floats(2 * n), n);
}

void swk_channel_bias_backward(int c, int64_t hw, int batch, const float *dy, float *db,
                               float scale, float keep) {
  mpe_channel_bias_backward(c, hw, batch, dy, db, scale, keep);
  double n = (double)batch * c * hw;
  sw_mpe_work(floats(n), n);
}

/* upsampling on the MPE: the input read and the output written (backward the reverse, the
 * input gradient read too when added to); bilinear weighs 4 taps per output */
static double upsample_flops(const SwkUpsample *p, double out) {
  return (p->bilinear ? 7 : 1) * out;
}

void swk_upsample_forward(const SwkUpsample *p, int batch, const float *x, float *y) {
  mpe_upsample_forward(p, batch, x, y);
  double in = (double)batch * p->c * p->h * p->w, out = in * p->sh * p->sw;
  sw_mpe_work(floats(in + out), upsample_flops(p, out));
}

void swk_upsample_backward(const SwkUpsample *p, int batch, const float *dy, float *dx,
                           bool dx_add) {
  mpe_upsample_backward(p, batch, dy, dx, dx_add);
  double in = (double)batch * p->c * p->h * p->w, out = in * p->sh * p->sw;
  sw_mpe_work(floats(out + in * (dx_add ? 2 : 1)), upsample_flops(p, out));
}

/* softmax on the MPE: x read, y written (an exponential: about 20 operations); backward reads
 * y and dy and writes dx */
void swk_softmax_forward(const SwkSoftmax *p, int batch, const float *x, float *y) {
  mpe_softmax_forward(p, batch, x, y);
  double n = (double)batch * p->c * (double)p->inner;
  sw_mpe_work(floats(2 * n), SW_SOFTMAX_FLOPS * n);
}

void swk_softmax_backward(const SwkSoftmax *p, int batch, const float *y, const float *dy,
                          float *dx, bool dx_add) {
  mpe_softmax_backward(p, batch, y, dy, dx, dx_add);
  double n = (double)batch * p->c * (double)p->inner;
  sw_mpe_work(floats((dx_add ? 4 : 3) * n), 4 * n);
}

void sw_mpe_accuracy_forward(int classes, int top, int batch, const float *scores,
                             const int32_t *labels, float *accuracy) {
  mpe_accuracy_forward(classes, top, batch, scores, labels, accuracy);
  sw_mpe_work(floats((double)batch * classes), (double)batch * classes);
}

/* The host's convolutions on the blocked layout (direct, Winograd, depthwise) and its layout's
 * transforms: the description offers none of them (no CPE version yet), so only a program
 * forced to them runs them. Each counts its arithmetic and one pass over its images. */
static double direct_flops(const SwkConv *p, int batch) {
  return 2.0 * batch * p->co * p->ho * p->wo * (p->ci / p->groups) * p->kh * p->kw;
}

/* Winograd's element-wise products, (m + 2)^2 per tile of m x m outputs and channel pair. */
static double winograd_flops(const SwkConv *p, int m, int batch) {
  double tiles = (double)batch * ((p->ho + m - 1) / m) * ((p->wo + m - 1) / m);
  return 2.0 * tiles * (m + 2) * (m + 2) * p->ci * p->co;
}
static double winograd2_flops(const SwkConv *p, int batch) { return winograd_flops(p, 2, batch); }
static double winograd4_flops(const SwkConv *p, int batch) { return winograd_flops(p, 4, batch); }

static double conv_image_floats(const SwkConv *p, int batch) {
  return (double)batch * (p->ci * p->h * p->w + p->co * p->ho * p->wo);
}

#define MPE_CONV(kernels, flops)                                                                   \
  size_t swk_##kernels##_workspace(const SwkConv *p) { return mpe_##kernels##_workspace(p); }      \
  void swk_##kernels##_forward(const SwkConv *p, int batch, const float *x, const float *w,        \
                               const float *b, float *y, float *ws) {                              \
    mpe_##kernels##_forward(p, batch, x, w, b, y, ws);                                             \
    sw_mpe_work(floats(conv_image_floats(p, batch)), flops(p, batch));                             \
  }                                                                                                \
  void swk_##kernels##_backward(const SwkConv *p, int batch, const float *x, const float *w,       \
                                const float *dy, float *dx, bool dx_add, float *dw, float *db,     \
                                float grad_scale, float bias_grad_scale, float grad_keep,          \
                                float *ws) {                                                       \
    mpe_##kernels##_backward(p, batch, x, w, dy, dx, dx_add, dw, db, grad_scale, bias_grad_scale,  \
                             grad_keep, ws);                                                       \
    double computations = (dx ? 1 : 0) + (dw ? 1 : 0);                                             \
    sw_mpe_work(floats(conv_image_floats(p, batch)), computations *flops(p, batch));               \
  }
MPE_CONV(conv_direct, direct_flops)
MPE_CONV(conv_winograd2, winograd2_flops)
MPE_CONV(conv_winograd4, winograd4_flops)
MPE_CONV(conv_depthwise, direct_flops)

void swk_to_bnrc16(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  mpe_to_bnrc16(c, h, w, batch, x, y, add);
  sw_mpe_work(floats(2.0 * batch * c * h * w), 0);
}

void swk_bnrc16_to_bnrc(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  mpe_bnrc16_to_bnrc(c, h, w, batch, x, y, add);
  sw_mpe_work(floats(2.0 * batch * c * h * w), 0);
}

void swk_pool_bnrc16_forward(const SwkPool *p, int batch, const float *x, float *y,
                             int32_t *argmax) {
  mpe_pool_bnrc16_forward(p, batch, x, y, argmax);
  double out, in = pool_sizes(p, batch, &out);
  sw_mpe_work(floats(in + 2 * out), out * p->kh * p->kw);
}

void swk_pool_bnrc16_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                              float *dx, bool dx_add) {
  mpe_pool_bnrc16_backward(p, batch, dy, argmax, dx, dx_add);
  double out, in = pool_sizes(p, batch, &out);
  sw_mpe_work(floats(2 * out + in * (dx_add ? 2 : 1)), out);
}

static double bn_floats(const SwkBatchNorm *p, int batch) { return (double)batch * p->c * p->hw; }

/* Floats an image of the channel-blocked layout holds: channels padded to blocks of 16. */
static int64_t bnrc16_floats(const SwkBatchNorm *p) {
  return (int64_t)(p->c + 15) / 16 * 16 * p->hw;
}

void swk_batchnorm_bnrc16_forward(const SwkBatchNorm *p, int batch, bool train, const float *x,
                                  const float *scale, const float *shift, float *y, float *saved,
                                  float *running) {
  SwkBatchNorm q = *p;
  q.relu = false; /* the CPEs' ReLU pass applies it, as the model prices it */
  mpe_batchnorm_bnrc16_forward(&q, batch, train, x, scale, shift, y, saved, running);
  double n = bn_floats(p, batch);
  sw_mpe_work(floats((train ? 3 : 2) * n), (train ? 5 : 2) * n);
  sw_epilogue_relu(p, bnrc16_floats(p), batch, y);
}

void swk_batchnorm_bnrc16_recompute(const SwkBatchNorm *p, int batch, const float *x,
                                    const float *scale, const float *shift, const float *saved,
                                    float *y) {
  SwkBatchNorm q = *p;
  q.relu = false;
  mpe_batchnorm_bnrc16_recompute(&q, batch, x, scale, shift, saved, y);
  double n = bn_floats(p, batch);
  sw_mpe_work(floats(2 * n), 2 * n);
  sw_epilogue_relu(p, bnrc16_floats(p), batch, y);
}

void swk_batchnorm_bnrc16_backward(const SwkBatchNorm *p, int batch, const float *x,
                                   const float *scale, const float *dy, const float *saved,
                                   float *dx, bool dx_add, float *dscale, float *dshift,
                                   float grad_scale, float bias_grad_scale, float grad_keep) {
  mpe_batchnorm_bnrc16_backward(p, batch, x, scale, dy, saved, dx, dx_add, dscale, dshift,
                                grad_scale, bias_grad_scale, grad_keep);
  double n = bn_floats(p, batch);
  sw_mpe_work(floats((dx_add ? 5 : 4) * n), 8 * n);
}

/* Adam and AdamW (runtime/adam.h) on the MPE: gradient, weights and both moments read, the last
 * three written. */
void swk_adam_update(int64_t n, float lr, float decay, float beta1, float beta2, float epsilon,
                     bool decoupled, uint64_t iteration, float *w, const float *g, float *m,
                     float *v) {
  SwnAdam a = swn_adam(lr, decay, beta1, beta2, epsilon, decoupled, iteration);
  for (int64_t i = 0; i < n; i++) swn_adam_element(&a, &w[i], g[i], &m[i], &v[i]);
  sw_mpe_work(floats(7.0 * (double)n), SW_ADAM_FLOPS * (double)n);
}

/* Gradient clipping's squared norm on the MPE, in order. */
double swk_sum_squares(int64_t n, const float *x) {
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += (double)x[i] * x[i];
  sw_mpe_work(floats((double)n), 2.0 * (double)n);
  return sum;
}
