/* The MPE side of the CPE GEMM (gemm_cpe.c): block sizes for the LDM and the buffering the
 * caller set (sw_gemm_buffering), then the launch. */
#include "../cost/predict.h"
#include "mpe.h"

void sw_gemm_run(SwGemmArgs *a) {
  if (a->m <= 0 || a->n <= 0 || a->count <= 0) return;
  sw_gemm_blocks(a->m, a->n, a->k, a->single_buffered ? 1 : 2, &a->bm, &a->bn, &a->bk);
  SW_RUN(sw_gemm, a);
}
