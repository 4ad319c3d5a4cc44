/* The work (model.h) each CPE kernel of this target does, predicted from shapes as the kernels
 * (the kernels/..._cpe.c files) would count it: the target description's cost model uses these, so the
 * strategy pass and --profile price the same kernels the same way. */
#ifndef SWNC_SW26010_PREDICT_H
#define SWNC_SW26010_PREDICT_H

#include <stdint.h>

#include "model.h"

/* The blocks gemm_cpe.c uses for an m x n x k product: an eighth of each dimension in whole
 * 4-float words, at most 64, shrunk until `buffers` sets of A and B as fetched, A and B as
 * multiplied, C and the bias fit in 56 KB of LDM, then each evened out over its tiles or
 * slices. */
void sw_gemm_blocks(int m, int n, int k, int buffers, int *bm, int *bn, int *bk);
/* The CPE GEMM (gemm_cpe.c) launched with these arguments (its blocks as sw_gemm_blocks
 * chooses them; of the pointers, only whether there is a bias matters). */
struct SwGemmArgs;
SwWork sw_gemm_work(const struct SwGemmArgs *g);
/* Sets single_buffered as tiling word `tiling` asks (kernels/args.h SW_TILING_*): the rule's is
 * double-buffered unless single-buffered costs less by the model (double buffering's LDM can
 * shrink the blocks or the run). */
void sw_gemm_buffering(struct SwGemmArgs *g, int tiling);
/* The implicit convolution (conv_implicit_cpe.c) for the pass, shapes and buffering in a: its
 * blocks and run (fills a->bm, bn, bk, run: sw_gemm_blocks' bm and bn, and of its widest slice
 * bk and halves of it, each with the longest run that fits, the pair the model prices
 * cheapest); its buffering (sw_gemm_buffering's rule); its work. */
struct SwImplicitArgs;
void sw_implicit_plan(struct SwImplicitArgs *a);
void sw_implicit_buffering(struct SwImplicitArgs *a, int tiling);
SwWork sw_implicit_work(const struct SwImplicitArgs *a);
/* y[j][k][i] (+)= x[i][k][j] for i < a, k < mid, j < b (transpose_cpe.c). */
SwWork sw_transpose_work(int64_t a, int64_t mid, int64_t b, int add);
/* im2col (col2im when `back`, adding into the image when `add`) of images x channels planes;
 * dh: the kernel rows' dilation. */
SwWork sw_im2col_work(int images, int channels, int h, int w, int ho, int wo, int kh, int kw,
                      int sh, int ph, int dh, int back, int add);
/* An element-wise kernel over n floats reading or writing `operands` arrays, `puts` of them
 * written (stream_cpe.c). */
SwWork sw_stream_work(double n, int operands, int puts, int vectorised);
/* The bias gradient's row sums (+)= over `images` blocks of rows x cols (stream_cpe.c). */
SwWork sw_row_sums_work(double rows, double cols, double images, int add);
/* Pooling (pool_cpe.c) as `p` sets it up (its blocks from sw_pool_*_block), either pass. */
struct SwPoolArgs;
SwWork sw_pool_work(const struct SwPoolArgs *p, int backward);
/* LRN (lrn_cpe.c), the pass `p` says. */
struct SwLrnArgs;
SwWork sw_lrn_work(const struct SwLrnArgs *p);
/* One launch of sums of parts (sum_cpe.c). */
struct SwSumArgs;
SwWork sw_sum_work(const struct SwSumArgs *a);
/* Batch norm (batchnorm_cpe.c), the pass `p` says. */
struct SwBatchNormArgs;
SwWork sw_batchnorm_work(const struct SwBatchNormArgs *p);
/* The softmax loss (softmax_loss_cpe.c), forward or backward (adding into dscores). */
SwWork sw_softmax_work(int classes, int batch, int backward, int add);
/* Top-k accuracy (accuracy_cpe.c) of `batch` images. */
SwWork sw_accuracy_work(int classes, int batch);
void sw_work_add(SwWork *sum, SwWork w);

#endif
