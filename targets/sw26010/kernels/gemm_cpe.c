/* GEMM on the 8x8 CPE mesh with register-communication blocking (gemm_cpe.h): for each C
 * tile, each batch item's product is added to it; C is read (when beta is not 0) and written
 * once per item, or once per tile when all items share it (stride_c 0). Each element of A and
 * B is read from memory once per tile. The steps (gemm_pipeline): per tile, item and slice. */
#include "args.h"
#include "gemm_cpe.h"

typedef struct GemmSteps {
  GemmSource source;
  const SwGemmArgs *p;
  int ti, tj, item, k0;
  bool started;
} GemmSteps;

/* The next slice, item, tile column, tile row. */
static bool advance(GemmSteps *q) {
  const SwGemmArgs *p = q->p;
  if (!q->started) return q->started = true;
  if ((q->k0 += 8 * p->bk) < p->k) return true;
  q->k0 = 0;
  if (++q->item < p->count) return true;
  q->item = 0;
  if ((q->tj += 8 * p->bn) < p->n) return true;
  q->tj = 0;
  return (q->ti += 8 * p->bm) < p->m;
}

static bool next_step(GemmSource *source, GemmStep *s, GemmRun *run, bool *starts) {
  GemmSteps *q = (GemmSteps *)source;
  const SwGemmArgs *p = q->p;
  if (!advance(q)) return false;
  int i = q->item;
  *s = (GemmStep){.a = {p->a + i * p->stride_a, p->lda, p->m, p->k, p->ta},
                  .b = {{p->b + i * p->stride_b, p->ldb, p->k, p->n, p->tb}},
                  .runs = 1,
                  .k = p->k,
                  .k0 = q->k0,
                  .ti = q->ti,
                  .tj = q->tj};
  *starts = q->k0 == 0 && (i == 0 || p->stride_c);
  if (*starts)
    *run = (GemmRun){.c = p->c + i * p->stride_c,
                     .n = 1,
                     .ld = p->ldc,
                     .rows = p->m,
                     .cols = p->n,
                     .ti = q->ti,
                     .tj = q->tj,
                     .beta = p->beta,
                     .bias = p->bias,
                     .bias_columns = p->bias_columns};
  return true;
}

void sw_gemm(void *arg) {
  SwGemmArgs p;
  cpe_get(&p, arg, sizeof p);
  Tiles t = {p.bm, p.bn, p.bk};
  Ldm l = gemm_ldm_take(t, 1, p.single_buffered ? 1 : 2);
  GemmSteps steps = {.source = {next_step}, .p = &p};
  gemm_pipeline(t, &steps.source, &l);
  gemm_ldm_give(t, &l);
}
