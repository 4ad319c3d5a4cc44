/* GEMM on the 8x8 CPE mesh with register-communication blocking (gemm_cpe.h): for each C
 * tile, each batch item's product is added to it; C is read (when beta is not 0) and written
 * once per item, or once per tile when all items share it (stride_c 0). Each element of A and
 * B is read from memory once per tile. */
#include "args.h"
#include "gemm_cpe.h"

void sw_gemm(void *arg) {
  SwGemmArgs p;
  cpe_get(&p, arg, sizeof p);
  Tiles t = {p.bm, p.bn, p.bk};
  Ldm l = gemm_ldm_take(t, 1);
  for (int ti = 0; ti < p.m; ti += 8 * p.bm)
    for (int tj = 0; tj < p.n; tj += 8 * p.bn) {
      int i0 = ti + _ROW * p.bm, j0 = tj + _COL * p.bn;
      for (int i = 0; i < p.count; i++) {
        float *c = p.c + i * p.stride_c;
        if (i == 0 || p.stride_c)
          gemm_start(t, c, p.ldc, p.m, p.n, i0, j0, p.beta, p.bias, p.bias_columns, &l, 0);
        Block a = {p.a + i * p.stride_a, p.lda, p.m, p.k, p.ta},
              b = {p.b + i * p.stride_b, p.ldb, p.k, p.n, p.tb};
        gemm_accumulate(t, p.k, &a, &b, 1, ti, tj, &l);
        if (i == p.count - 1 || p.stride_c)
          gemm_store(c, p.ldc, p.m, p.n, i0, j0, l.c, p.bm, p.bn, l.tmp);
      }
    }
  gemm_ldm_give(t, &l);
}
