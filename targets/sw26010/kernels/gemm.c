/* The MPE side of the CPE GEMM (gemm_cpe.c): block sizes for the LDM, then the launch. */
#include "../cost/predict.h"
#include "mpe.h"

void sw_gemm_run(SwGemmArgs *a) {
  if (a->m <= 0 || a->n <= 0 || a->count <= 0) return;
  sw_gemm_blocks(a->m, a->n, a->k, &a->bm, &a->bn, &a->bk);
  SW_RUN(sw_gemm, a);
}
