/* The kernel interface: what every target (targets/<name>/) implements and generated code
 * calls. Activations are in the (B, N, R, C) layout unless a kernel says otherwise; `batch`
 * is the number of images in this call; shapes in the structs are per image. A backward
 * kernel writes each requested gradient, or adds to it where `*_add` is set (a value that fans
 * out to several layers); a NULL gradient pointer means it is not needed. Parameter gradients
 * are always written. Kernels use up to swk_threads() threads and a workspace of the size
 * their *_workspace function asks for, which they may use freely during the call. */
#ifndef SWNC_KERNELS_H
#define SWNC_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void swk_set_threads(int threads);
int swk_threads(void);

/* Core groups: compute clusters with their own memory controller, each driven by its own
 * management thread. A process runs one worker per group, each on its share of the batch
 * (runtime/workers.c); the kernels a worker calls run on its own group. 1 where all cores
 * form one group (host: the worker's threads share them). */
int swk_core_groups(void);

/* A target whose programs run somewhere other than its hardware (sw26010, on its emulator)
 * estimates the hardware's time of every kernel call: running totals since the start of the
 * calling thread's core group (its calls only), read by --profile between layers. False (and
 * nothing written) where the kernels run on their own hardware. */
typedef struct SwkEstimate {
  double seconds;                  /* estimated on the target: cpe + mpe */
  double cpe_seconds, mpe_seconds; /* in compute-core launches, and left on the management core */
  double flops, dma_bytes, rlc_words;
  int64_t launches;
} SwkEstimate;
bool swk_estimate(SwkEstimate *totals);

/* ------------------------------------------------------------- convolution */
typedef struct SwkConv {
  int ci, h, w;      /* input channels, height, width */
  int co, ho, wo;    /* output */
  int kh, kw, sh, sw, ph, pw;
  int groups;
  bool bias;
  bool filters_kkoi; /* implicit plan only: filters in (K,K,No,Ni) order, not (No,Ni,K,K) */
} SwkConv;

/* Explicit GEMM (im2col) on the (B, N, R, C) layout with (No, Ni/groups, K, K) filters.
 * Backward computes the weight gradient (dw and db) unless dw is NULL and the input gradient
 * unless dx is NULL, so the two can run with different plans. */
size_t swk_conv_workspace(const SwkConv *p); /* floats */
void swk_conv_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b, float *y,
                      float *ws);
void swk_conv_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                       float *dx, bool dx_add, float *dw, float *db, float *ws);

/* Implicit-GEMM convolution (no im2col) on the (R, C, N, B) layout: x[h][w][ci][batch],
 * y[ho][wo][co][batch]; groups must be 1. Padding is coordinate mapping: taps that fall
 * outside the image are skipped. The same SwkConv describes it, and backward skips dw or dx
 * when NULL as above. */
void swk_conv_implicit_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b,
                               float *y);
size_t swk_conv_implicit_workspace(const SwkConv *p, int batch); /* floats, for backward */
void swk_conv_implicit_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                                float *dx, bool dx_add, float *dw, float *db, float *ws);

/* Layout transforms of a (batch, c, h, w) tensor: (B,N,R,C) -> (R,C,N,B) and back. The
 * backward of one is the other, applied to the gradient (written or added). */
void swk_to_rcnb(int c, int h, int w, int batch, const float *x, float *y, bool add);
void swk_to_bnrc(int c, int h, int w, int batch, const float *x, float *y, bool add);

/* ------------------------------------------------------------- pooling */
typedef struct SwkPool {
  int c, h, w, ho, wo;
  int kh, kw, sh, sw, ph, pw;
  bool max; /* else average (over the window clipped to the padded input, as Caffe) */
} SwkPool;

void swk_pool_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax);
void swk_pool_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax, float *dx, bool dx_add);
/* The same on the (R, C, N, B) layout; argmax also holds input pixels (ih * w + iw). */
void swk_pool_rcnb_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax);
void swk_pool_rcnb_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax, float *dx,
                            bool dx_add);

/* ------------------------------------------------------------- fully connected */
typedef struct SwkFc {
  int in, out;
  bool bias;
} SwkFc;

size_t swk_fc_workspace(const SwkFc *p);
void swk_fc_forward(const SwkFc *p, int batch, const float *x, const float *w, const float *b, float *y);
void swk_fc_backward(const SwkFc *p, int batch, const float *x, const float *w, const float *dy, float *dx,
                     bool dx_add, float *dw, float *db, float *ws);

/* ------------------------------------------------------------- element-wise activations */
typedef struct SwkAct {
  int64_t n;   /* elements per image */
  float slope; /* relu: leaky slope */
} SwkAct;

void swk_relu_forward(const SwkAct *p, int batch, const float *x, float *y);
void swk_relu_backward(const SwkAct *p, int batch, const float *y, const float *dy, float *dx, bool dx_add);
void swk_sigmoid_forward(const SwkAct *p, int batch, const float *x, float *y);
void swk_sigmoid_backward(const SwkAct *p, int batch, const float *y, const float *dy, float *dx, bool dx_add);
void swk_tanh_forward(const SwkAct *p, int batch, const float *x, float *y);
void swk_tanh_backward(const SwkAct *p, int batch, const float *y, const float *dy, float *dx, bool dx_add);

/* ------------------------------------------------------------- batch normalisation */
typedef struct SwkBatchNorm {
  int c, hw;
  float eps, momentum; /* running = momentum * running + (1 - momentum) * batch statistic */
  bool affine;
} SwkBatchNorm;

/* Training mode normalises with the batch statistics, saves mean and 1/std (2c floats) and
 * updates the running statistics (2c floats: mean, unbiased variance); inference mode uses
 * the running statistics. */
void swk_batchnorm_forward(const SwkBatchNorm *p, int batch, bool train, const float *x, const float *scale,
                           const float *shift, float *y, float *saved, float *running);
void swk_batchnorm_backward(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                            const float *dy, const float *saved, float *dx, bool dx_add, float *dscale,
                            float *dshift);

/* ------------------------------------------------------------- local response normalisation */
typedef struct SwkLrn {
  int c, hw, size;
  float alpha, beta, k; /* y = x / (k + alpha / size * sum of x^2 over `size` channels)^beta */
} SwkLrn;

void swk_lrn_forward(const SwkLrn *p, int batch, const float *x, float *y, float *scale);
void swk_lrn_backward(const SwkLrn *p, int batch, const float *x, const float *y, const float *scale,
                      const float *dy, float *dx, bool dx_add);

/* ------------------------------------------------------------- dropout */
/* The mask is a hash of (seed, layer, iteration, image index, element): reproducible, independent of
 * threads and of how the batch is split, and recomputed in backward instead of stored. Kept
 * elements are scaled by 1 / (1 - ratio). */
typedef struct SwkDropout {
  int64_t n;
  float ratio;
  uint64_t layer; /* distinguishes the masks of different dropout layers */
} SwkDropout;

bool swk_dropout_keep(const SwkDropout *p, uint64_t seed, uint64_t iteration, uint64_t image, int64_t element);
void swk_dropout_forward(const SwkDropout *p, int batch, bool train, uint64_t seed, uint64_t iteration,
                         uint64_t first_image, const float *x, float *y);
void swk_dropout_backward(const SwkDropout *p, int batch, uint64_t seed, uint64_t iteration, uint64_t first_image,
                          const float *dy, float *dx, bool dx_add);

/* ------------------------------------------------------------- concat and add */
/* Concatenation along channels: input i contributes `sizes[i]` elements per image. */
void swk_concat_forward(int n, const int64_t *sizes, int batch, const float *const *x, float *y);
void swk_concat_backward(int n, const int64_t *sizes, int batch, const float *dy, float *const *dx,
                         const bool *dx_add);
void swk_add_forward(int n, int64_t size, int batch, const float *const *x, float *y);
void swk_add_backward(int n, int64_t size, int batch, const float *dy, float *const *dx, const bool *dx_add);

/* ------------------------------------------------------------- loss and accuracy */
typedef struct SwkSoftmaxLoss {
  int classes;
  float loss_weight;
} SwkSoftmaxLoss;

/* Mean cross-entropy over the batch, times loss_weight; `prob` keeps the softmax. Labels
 * must be in [0, classes): the data loader checks them. */
void swk_softmax_loss_forward(const SwkSoftmaxLoss *p, int batch, const float *scores, const int32_t *labels,
                              float *prob, float *loss);
void swk_softmax_loss_backward(const SwkSoftmaxLoss *p, int batch, const float *prob, const int32_t *labels,
                               float *dscores, bool dscores_add);
/* The fraction of images whose label is among the `top` highest scores (ties count against). */
void swk_accuracy_forward(int classes, int top, int batch, const float *scores, const int32_t *labels,
                          float *accuracy);

/* ------------------------------------------------------------- optimizer */
/* Caffe's SGD: v = momentum * v + lr * (g + decay * w); w -= v. */
void swk_sgd_update(int64_t n, float lr, float decay, float momentum, float *w, const float *g, float *v);

/* Synchronous EASGD's elastic step (BRIEF section 6), before the SGD update: with `sum` the
 * sum over all `ranks` of their weights w, adds the elastic force rho (w - center) to the
 * gradient g, and moves the center by eta rho (sum - ranks x center). */
void swk_easgd_elastic(int64_t n, float eta, float rho, int ranks, const float *w, const float *sum, float *center,
                       float *g);

/* ------------------------------------------------------------- collectives */
/* y[i] += x[i] and y[i] *= a: the arithmetic of the allreduce, on the caller's thread only
 * (the communication thread runs it beside the compute threads). */
void swk_sum_into(int64_t n, float *y, const float *x);
void swk_scale(int64_t n, float *y, float a);

#endif
