/* The MPE side of the CPE GEMM (gemm_cpe.c): block sizes for the LDM, and the cblas_sgemm
 * that MPE code (the implicit convolution's weight gradient) calls, run on the CPEs. */
#include <stdio.h>
#include <stdlib.h>

#include "mpe_compat/cblas.h"
#include "../cost/predict.h"
#include "mpe.h"

void sw_gemm_run(SwGemmArgs *a) {
  if (a->m <= 0 || a->n <= 0 || a->count <= 0) return;
  sw_gemm_blocks(a->m, a->n, a->k, &a->bm, &a->bn, &a->bk);
  SW_RUN(sw_gemm, a);
}

void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
                 float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  if (order != CblasRowMajor || alpha != 1.0f) {
    fprintf(stderr, "sw26010 kernels: cblas_sgemm supports row-major with alpha 1 only\n");
    exit(1);
  }
  SwGemmArgs g = {.m = m, .n = n, .k = k, .count = 1, .ta = ta == CblasTrans, .tb = tb == CblasTrans, .lda = lda,
                  .ldb = ldb, .ldc = ldc, .a = a, .b = b, .c = c, .beta = beta};
  sw_gemm_run(&g);
}
