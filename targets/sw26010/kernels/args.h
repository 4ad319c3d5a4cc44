/* What the MPE side of each sw26010 kernel hands its CPE side (the spawn argument). The CPEs
 * read it by DMA like any main-memory data, so it is plain data: sizes, strides, addresses. */
#ifndef SWNC_SW26010_ARGS_H
#define SWNC_SW26010_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "activations.h"

/* Core groups per chip: workers per process (threads.c) and the cost model's batch share. */
enum { SW_CORE_GROUPS = 4 };

/* n cut into pieces of at most `most`, evened out: the piece length. */
static inline int sw_even_pieces(int n, int most) {
  int pieces = (n + most - 1) / most;
  return (n + pieces - 1) / pieces;
}

/* The convolutions' tiling words (SwkConv forward_tiling, dgrad_tiling, wgrad_tiling): how
 * their products buffer their operands (gemm_cpe.h). 0, the rule: double-buffered unless the
 * model prices single-buffered cheaper (sw_gemm_buffering); single-buffered, each step's operands
 * waited for before its arithmetic, as swCaffe's kernels do (the reference plan set,
 * --conv=swcaffe); double-buffered. */
enum { SW_TILING_RULE, SW_TILING_SINGLE_BUFFERED, SW_TILING_DOUBLE_BUFFERED };

/* C_b = beta C_b + op(A_b) op(B_b) (+ bias[row]) for b < count; a stride of 0 shares that
 * matrix across the batch (a shared C accumulates over it). Row-major; op is a transpose when
 * ta / tb is set. bm, bn, bk: the block of A, B and C each CPE holds (multiples of 4). */
typedef struct SwGemmArgs {
  int m, n, k, count;
  int ta, tb;
  int lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  const float *a, *b;
  float *c;
  const float *bias; /* per row of C (per column if bias_columns), added once, or NULL */
  int bias_columns;
  float beta;
  int bm, bn, bk;
  int single_buffered; /* wait for each step's operands before its arithmetic (gemm_cpe.h) */
} SwGemmArgs;

/* The explicit convolution (conv.c) of a group's cig channels into k = cig kh kw rows of
 * columns per output pixel: a pointwise filter (1x1, stride 1, no padding) has them as its
 * input stored, and its GEMMs take the whole batch at once; otherwise im2col fills columns of up
 * to 16 MB (SW_CONV_COL_FLOATS) per launch, that many images at a time. */
enum { SW_CONV_COL_FLOATS = 1 << 22 };
static inline bool sw_conv_pointwise(int kh, int kw, int sh, int sw, int ph, int pw) {
  return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
}
static inline int sw_conv_images_per_launch(int64_t k, int64_t pixels, bool pointwise) {
  int64_t per_image = k * pixels;
  return pointwise                         ? 1 << 30 /* any batch */
         : per_image >= SW_CONV_COL_FLOATS ? 1
                                           : (int)(SW_CONV_COL_FLOATS / per_image);
}

/* Where a launch of n images finds its columns: lines of ld floats, images image_stride apart
 * (the workspace: n P and P; pointwise, the input itself: P and its image of in_image). */
typedef struct SwConvColumns {
  int ld;
  int64_t image_stride;
} SwConvColumns;
static inline SwConvColumns sw_conv_columns(bool pointwise, int n, int pixels, int64_t in_image) {
  return pointwise ? (SwConvColumns){pixels, in_image} : (SwConvColumns){n * pixels, pixels};
}

/* Its GEMMs over n images of one group (cog output channels, pixels P per image), pointers left
 * to the caller: the columns are `cols_ld` floats a line and `cols_stride` apart per image (the
 * workspace: n P and P; the input itself, pointwise: P and its image stride); dY's images are
 * out_image apart. Y_i = W col_i; dW (+)= sum_i dY_i col_i^T (beta 1 after the first launch);
 * dcol_i (+)= W^T dY_i. */
static inline SwGemmArgs sw_conv_forward_gemm(int cog, int k, int pixels, int n, int cols_ld,
                                              int64_t cols_stride, int64_t out_image) {
  return (SwGemmArgs){.m = cog,
                      .n = pixels,
                      .k = k,
                      .count = n,
                      .lda = k,
                      .ldb = cols_ld,
                      .ldc = pixels,
                      .stride_b = cols_stride,
                      .stride_c = out_image};
}
static inline SwGemmArgs sw_conv_weights_gemm(int cog, int k, int pixels, int n, int cols_ld,
                                              int64_t cols_stride, int64_t out_image, float beta) {
  return (SwGemmArgs){.m = cog,
                      .n = k,
                      .k = pixels,
                      .count = n,
                      .tb = 1,
                      .lda = pixels,
                      .ldb = cols_ld,
                      .ldc = k,
                      .stride_a = out_image,
                      .stride_b = cols_stride,
                      .beta = beta};
}
static inline SwGemmArgs sw_conv_columns_gemm(int cog, int k, int pixels, int n, int cols_ld,
                                              int64_t cols_stride, int64_t out_image, float beta) {
  return (SwGemmArgs){.m = k,
                      .n = pixels,
                      .k = cog,
                      .count = n,
                      .ta = 1,
                      .lda = k,
                      .ldb = pixels,
                      .ldc = cols_ld,
                      .stride_b = out_image,
                      .stride_c = cols_stride,
                      .beta = beta};
}

/* Work per CPE task, shared with the cost model's counts (cost/predict.c): im2col's output
 * buffer, and the element-wise kernels' chunk (4 KB transfers). */
enum { SW_IM2COL_OUT_FLOATS = 8192, SW_STREAM_CHUNK = 1024 };

/* A sliding window's geometry (SwkConv's, SwkPool's fields of these names) as designated
 * initialisers of the argument structs below that hold it. */
#define SW_WINDOW_OF(p)                                                                            \
  .h = (p)->h, .w = (p)->w, .ho = (p)->ho, .wo = (p)->wo, .kh = (p)->kh, .kw = (p)->kw,            \
  .sh = (p)->sh, .sw = (p)->sw, .ph = (p)->ph, .pw = (p)->pw

/* im2col of `images` images (x: image stride in_image floats) into col (k rows of ld floats;
 * image i's P = ho*wo columns start at column i*P), and col2im, its adjoint, which writes (or
 * adds to) x. Channels are those of one group: channel 0 is x's channel `first_channel`. */
typedef struct SwIm2colArgs {
  int channels, h, w, ho, wo, kh, kw, sh, sw, ph, pw;
  int dh, dw; /* dilation */
  int images, first_channel, add;
  int64_t in_image, ld;
  float *x, *col;
} SwIm2colArgs;

/* Element-wise kernels over n floats: y = f(a, b, c), with op-specific scalars. */
typedef enum {
  SW_ACTIVATION,      /* y = the activation `act` of a (runtime/activations.h), s0 its parameter */
  SW_ACTIVATION_GRAD, /* y (+)= its gradient from b (dy) and a (what its backward reads) */
  SW_SUM_INTO,
  SW_SCALE,
  SW_SGD,
  SW_SGD_APPLY,
  SW_EASGD,
  SW_DROPOUT,
  SW_DROPOUT_GRAD,
  SW_ROW_BIAS_GRAD
} SwStreamOp;

/* The element-wise ops stream_cpe.c runs in 4-wide vectors (whole vectors of each chunk):
 * the sums, scalings and optimizer steps, and of the activations ReLU (`act`). */
static inline int sw_stream_vectorised(SwStreamOp op, int act) {
  return op == SW_SUM_INTO || op == SW_SCALE || op == SW_SGD || op == SW_SGD_APPLY ||
         op == SW_EASGD ||
         ((op == SW_ACTIVATION || op == SW_ACTIVATION_GRAD) && act == SWN_ACT_relu);
}

/* The arrays an element-wise op writes: y, and z for SGD's momentum or EASGD's center. */
static inline int sw_stream_puts(SwStreamOp op) {
  return op == SW_SGD || op == SW_SGD_APPLY || op == SW_EASGD ? 2 : 1;
}

typedef struct SwStreamArgs {
  SwStreamOp op;
  int act; /* SW_ACTIVATION, SW_ACTIVATION_GRAD: which (SwnActivation) */
  int add; /* gradients: add to y instead of writing it */
  int64_t n;
  const float *a, *b;
  float *y, *z; /* outputs (z: a second one, as SGD's momentum or EASGD's center) */
  float s0, s1, s2;
  /* SW_ROW_BIAS_GRAD: y[r] (+)= the sum over `images` blocks (image_stride floats apart) of
   * row r of that block (rows x cols floats) */
  int64_t rows, cols, images, image_stride;
  /* SW_DROPOUT (y = kept a, scaled) and SW_DROPOUT_GRAD (y (+)= kept a, scaled): element i is
   * element i % per_image of image first_image + i / per_image; s0 is the ratio; the mask is
   * runtime/rng.h's swn_dropout_keep */
  int64_t per_image;
  uint64_t seed, layer, iteration, first_image;
  int train;
} SwStreamArgs;

/* Sums and copies on 2-D parts (sum_cpe.c): for each part, row r of dst (dst_ld floats apart)
 * is the sum of row r of its sources (src_ld apart), added left to right (((s0 + s1) + s2)...),
 * or added to dst's row (dst + sum) when `add`. One source is a copy: concatenations and their
 * gradients are one part per input, a residual sum one part with a source per input. Tasks are
 * SW_STREAM_CHUNK floats of one row, dealt round-robin over the parts' rows in order. */
/* Adam's step runs on the MPE (mpe.c): its operations per element, a division and a square
 * root counted as 8 each (the price layer_costs.c gives the update). */
enum { SW_ADAM_FLOPS = 24 };
/* softmax (an op) on the MPE: operations per element forward, an exponential counted as 20 */
enum { SW_SOFTMAX_FLOPS = 24 };

enum { SW_SUM_SOURCES = 8, SW_SUM_PARTS = 8 };
typedef struct SwSumPart {
  const float *src[SW_SUM_SOURCES];
  float *dst;
  int sources, add;
  int64_t rows, cols, src_ld, dst_ld;
} SwSumPart;
typedef struct SwSumArgs {
  int parts;
  SwSumPart part[SW_SUM_PARTS];
} SwSumArgs;

/* Local response normalisation across channels (lrn_cpe.c), with the host target's arithmetic
 * in its order. A task is `pixels` pixels of one image, all channels (strided gets of c rows);
 * forward writes y and scale, backward dx (added when `add`). */
enum { SW_LRN_FLOATS = 12288 }; /* the LDM a task's buffers share */
typedef struct SwLrnArgs {
  int c, hw, size, batch, backward, add, pixels;
  float alpha, beta, k;
  const float *x, *y_in, *scale_in, *dy;
  float *y, *scale, *dx;
} SwLrnArgs;

/* Pixels per LRN task with `buffers` arrays of c x pixels in the LDM (2 forward, 5 backward),
 * evened out over the plane; 0: not even one pixel fits (the MPE runs it). */
static inline int sw_lrn_pixels(int c, int hw, int buffers) {
  int most = SW_LRN_FLOATS / (buffers * c);
  return most < 1 ? 0 : sw_even_pieces(hw, most);
}

/* Top-k accuracy (accuracy_cpe.c), an image per task with the host target's rule; the count is
 * reduced over the mesh and CPE 0 writes correct / batch. Up to SW_SOFTMAX_CLASSES classes. */
typedef struct SwAccuracyArgs {
  int classes, top, batch;
  const float *scores;
  const int32_t *labels;
  float *accuracy;
} SwAccuracyArgs;

/* Implicit-GEMM convolution (no im2col) on the (R, C, N, B) layout, filters in (K, K, No, Ni)
 * order (conv_implicit_cpe.c):
 *   SW_IMPLICIT_FORWARD  out = y  (ho x wo x co x batch) from x and w (+ bias)
 *   SW_IMPLICIT_DATA     out = dx (h x w x ci x batch) from dy and w, added when `add`
 *   SW_IMPLICIT_WEIGHTS  out = dw (K x K x co x ci) from dy and x
 * bm, bn, bk: the product's blocks (gemm_cpe.h); run: how many C blocks (output pixels along a
 * row, input pixels along a row, or taps along a filter row) share each loaded A block. */
typedef enum { SW_IMPLICIT_FORWARD, SW_IMPLICIT_DATA, SW_IMPLICIT_WEIGHTS } SwImplicitPass;
enum { SW_IMPLICIT_RUN_MAX = 16 };

typedef struct SwImplicitArgs {
  SwImplicitPass pass;
  int ci, h, w, co, ho, wo, kh, kw, sh, sw, ph, pw;
  int batch, add;
  const float *x, *filters, *dy, *bias;
  float *out;
  int bm, bn, bk, run;
  int single_buffered; /* as swCaffe's kernels: operands fetched between the steps (gemm_cpe.h) */
} SwImplicitArgs;

/* Along one axis: the input position tap k of output position o reads, or -1 outside the image
 * (padding is coordinate mapping); and the output position whose tap k reads input position i,
 * or -1 if there is none. The kernel and the cost model's counts (cost/predict.c) use both. */
static inline int sw_implicit_input(int o, int k, int stride, int pad, int in) {
  int i = o * stride - pad + k;
  return i >= 0 && i < in ? i : -1;
}

static inline int sw_implicit_source(int i, int k, int stride, int pad, int out) {
  int t = i + pad - k;
  if (t < 0 || t % stride) return -1;
  t /= stride;
  return t < out ? t : -1;
}

/* The position across tap k from position i: the input position it reads, or with `gather` the
 * output position that reads input position i; -1 if none. */
static inline int sw_implicit_across(int gather, int i, int k, int stride, int pad, int extent) {
  return gather ? sw_implicit_source(i, k, stride, pad, extent)
                : sw_implicit_input(i, k, stride, pad, extent);
}

/* y[j][k][i] (+)= x[i][k][j] for i < a, k < mid, j < b: the layout transforms ((B,N,R,C) is
 * (batch, c, hw); (R,C,N,B) is (hw, c, batch)) and the filters' reordering. Tiles of up to
 * SW_TRANSPOSE_FLOATS. */
enum { SW_TRANSPOSE_FLOATS = 2048 };
typedef struct SwTransposeArgs {
  int64_t a, mid, b;
  int add;
  const float *x;
  float *y;
} SwTransposeArgs;

/* A transpose task's tile, ta x tb elements (tb up to 64, ta as long as SW_TRANSPOSE_FLOATS
 * allows, then tb longer where a is short), and the tiles along a and b: the kernel's and the
 * cost model's (cost/predict.c). */
typedef struct SwTransposeTiling {
  int64_t ta, tb, na, nb;
} SwTransposeTiling;

static inline SwTransposeTiling sw_transpose_tiling(int64_t a, int64_t b) {
  SwTransposeTiling t;
  t.tb = b < 64 ? b : 64;
  t.ta = SW_TRANSPOSE_FLOATS / t.tb;
  if (t.ta > a) t.ta = a;
  t.tb = SW_TRANSPOSE_FLOATS / t.ta;
  if (t.tb > b) t.tb = b;
  t.na = (a + t.ta - 1) / t.ta, t.nb = (b + t.tb - 1) / t.tb;
  return t;
}

/* Pooling (pool_cpe.c) with the semantics of the host target's (Caffe's windows). (B,N,R,C):
 * a task is a block of `rows` x `cols` output pixels (forward) or input pixels (backward) of one
 * plane, whole rows where a band of them fits, else a block of columns of one row (a strided
 * transfer per array, as swCaffe's pooling of wide planes); its input region within
 * SW_POOL_IN_FLOATS and its outputs within SW_POOL_OUT_FLOATS. (R,C,N,B): a task is
 * SW_STREAM_CHUNK lanes (channel x image) of one output pixel (forward) or input pixel
 * (backward). argmax: the input pixel (ih * w + iw). */
enum { SW_POOL_IN_FLOATS = 6144, SW_POOL_OUT_FLOATS = 2048 };
typedef struct SwPoolArgs {
  int c, h, w, ho, wo, kh, kw, sh, sw, ph, pw, max;
  int batch, add, rows, cols, rcnb;
  const float *x, *dy;
  float *y, *dx;
  int32_t *argmax;
} SwPoolArgs;

/* A (B,N,R,C) forward task's block (p->rows x p->cols output pixels): whole rows, as many as
 * fit with their windows' input rows; else columns of one row. 0: not even one window fits
 * (the MPE runs it). The kernel's and the cost model's (cost/predict.c). */
static inline int sw_pool_forward_block(SwPoolArgs *p) {
  if (SW_POOL_IN_FLOATS / p->w >= p->kh && SW_POOL_OUT_FLOATS >= p->wo) {
    int rows = (SW_POOL_IN_FLOATS / p->w - p->kh) / p->sh + 1;
    if (rows > SW_POOL_OUT_FLOATS / p->wo) rows = SW_POOL_OUT_FLOATS / p->wo;
    p->rows = sw_even_pieces(p->ho, rows), p->cols = p->wo;
    return 1;
  }
  if (SW_POOL_IN_FLOATS / p->kh < p->kw) return 0;
  int cols = (SW_POOL_IN_FLOATS / p->kh - p->kw) / p->sw + 1;
  p->rows = 1,
  p->cols = sw_even_pieces(p->wo, cols < SW_POOL_OUT_FLOATS ? cols : SW_POOL_OUT_FLOATS);
  return 1;
}

/* Output pixels along one axis that can reach `n` adjacent input pixels (at most). */
static inline int sw_pool_reaching(int n, int k, int s) { return (n - 1 + k) / s + 1; }

/* A backward task's block of input pixels: whole rows, as many as fit with the output rows
 * reaching them; else columns of one row. 0: none fits. */
static inline int sw_pool_backward_block(SwPoolArgs *p) {
  int rows = SW_POOL_IN_FLOATS / p->w < p->h ? SW_POOL_IN_FLOATS / p->w : p->h;
  while (rows > 0 && sw_pool_reaching(rows, p->kh, p->sh) * p->wo > SW_POOL_OUT_FLOATS) rows--;
  if (rows > 0) {
    p->rows = sw_even_pieces(p->h, rows), p->cols = p->w;
    return 1;
  }
  int cols = SW_POOL_IN_FLOATS < p->w ? SW_POOL_IN_FLOATS : p->w;
  int out_rows = sw_pool_reaching(1, p->kh, p->sh);
  while (cols > 0 && out_rows * sw_pool_reaching(cols, p->kw, p->sw) > SW_POOL_OUT_FLOATS) cols--;
  if (cols == 0) return 0;
  p->rows = 1, p->cols = sw_even_pieces(p->w, cols);
  return 1;
}

/* Softmax with cross-entropy (softmax_loss_cpe.c), an image per task: forward writes prob and
 * the mean loss times loss_weight, backward dscores (added when `add`). Up to
 * SW_SOFTMAX_CLASSES classes (more run on the MPE). */
enum { SW_SOFTMAX_CLASSES = 4096 };
typedef struct SwSoftmaxArgs {
  int classes, batch, backward, add;
  float loss_weight, label_smoothing;
  const float *scores;
  const int32_t *labels;
  float *prob, *loss, *dscores;
} SwSoftmaxArgs;

/* Batch normalisation (batchnorm_cpe.c), a channel per task, with the semantics of the host
 * target's (double sums; biased variance to normalise, unbiased for the running average).
 * Forward with the batch's statistics (train), the running ones, or the saved ones
 * (recompute); or backward. */
typedef struct SwBatchNormArgs {
  int c, hw, batch, backward, train, recompute, affine, add, frozen;
  float eps, momentum;
  const float *x, *scale, *shift, *dy;
  float *y, *saved, *running, *dx, *dscale, *dshift;
} SwBatchNormArgs;

#endif
