/* What the MPE side of each sw26010 kernel hands its CPE side (the spawn argument). The CPEs
 * read it by DMA like any main-memory data, so it is plain data: sizes, strides, addresses. */
#ifndef SWNC_SW26010_ARGS_H
#define SWNC_SW26010_ARGS_H

#include <stdint.h>

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
} SwGemmArgs;

/* Work per CPE task, shared with the cost model's counts (cost/predict.c): im2col's output
 * buffer, and the element-wise kernels' chunk (4 KB transfers). */
enum { SW_IM2COL_OUT_FLOATS = 8192, SW_STREAM_CHUNK = 1024 };

/* im2col of `images` images (x: image stride in_image floats) into col (k rows of ld floats;
 * image i's P = ho*wo columns start at column i*P), and col2im, its adjoint, which writes (or
 * adds to) x. Channels are those of one group: channel 0 is x's channel `first_channel`. */
typedef struct SwIm2colArgs {
  int channels, h, w, ho, wo, kh, kw, sh, sw, ph, pw;
  int images, first_channel, add;
  int64_t in_image, ld;
  float *x, *col;
} SwIm2colArgs;

/* Element-wise kernels over n floats: y = f(a, b, c), with op-specific scalars. */
typedef enum {
  SW_RELU, SW_RELU_GRAD, SW_SIGMOID, SW_SIGMOID_GRAD, SW_TANH, SW_TANH_GRAD, SW_SUM_INTO, SW_SCALE, SW_SGD,
  SW_EASGD, SW_ROW_BIAS_GRAD
} SwStreamOp;

typedef struct SwStreamArgs {
  SwStreamOp op;
  int add;       /* gradients: add to y instead of writing it */
  int64_t n;
  const float *a, *b;
  float *y, *z;  /* outputs (z: a second one, as SGD's momentum or EASGD's center) */
  float s0, s1, s2;
  /* SW_ROW_BIAS_GRAD: y[r] (+)= the sum over `images` blocks (image_stride floats apart) of
   * row r of that block (rows x cols floats) */
  int64_t rows, cols, images, image_stride;
} SwStreamArgs;

#endif
