/* The work (model.h) each CPE kernel of this target does, predicted from shapes as the kernels
 * (the kernels/..._cpe.c files) would count it: the target description's cost model uses these, so the
 * strategy pass and --profile price the same kernels the same way. */
#ifndef SWNC_SW26010_PREDICT_H
#define SWNC_SW26010_PREDICT_H

#include <stdint.h>

#include "model.h"

/* The blocks gemm_cpe.c uses for an m x n x k product: an eighth of each dimension in whole
 * 4-float words, at most 64, shrunk until A, B (each twice), C, a staging block and the bias
 * fit in 56 KB of LDM, then each evened out over its tiles or slices. */
void sw_gemm_blocks(int m, int n, int k, int *bm, int *bn, int *bk);
SwWork sw_gemm_work(int m, int n, int k, int count, int c_shared);
/* The implicit convolution's pass a->pass for the shapes in a (conv_implicit_cpe.c). */
struct SwImplicitArgs;
SwWork sw_implicit_work(const struct SwImplicitArgs *a);
/* y[j][k][i] (+)= x[i][k][j] for i < a, k < mid, j < b (transpose_cpe.c). */
SwWork sw_transpose_work(int64_t a, int64_t mid, int64_t b, int add);
SwWork sw_im2col_work(int images, int channels, int h, int w, int ho, int wo, int kh, int kw, int back);
SwWork sw_stream_work(double n, int operands);
void sw_work_add(SwWork *sum, SwWork w);

#endif
