/* GEMM on the 8x8 CPE mesh with register-communication blocking (gemm_cpe.h): for each C
 * tile, each batch item's product is added to it; C is read (when beta is not 0) and written
 * once per item, or once per tile when all items share it (stride_c 0). Each element of A and
 * B is read from memory once per tile. */
#include "args.h"
#include "gemm_cpe.h"

/* Runs: (tile row, tile column, item) when each item has its C, else (tile row, tile column);
 * positions: the items of a run. */
typedef struct GemmItems {
  GemmWalk walk;
  const SwGemmArgs *p;
  int ti, tj, item, first; /* first: the run's first item */
} GemmItems;

static bool item_step(const GemmWalk *w, GemmStep *s) {
  const GemmItems *q = (const GemmItems *)w;
  const SwGemmArgs *p = q->p;
  int i = q->item;
  *s = (GemmStep){.a = {p->a + i * p->stride_a, p->lda, p->m, p->k, p->ta},
                  .b = {{p->b + i * p->stride_b, p->ldb, p->k, p->n, p->tb}},
                  .runs = 1,
                  .k = p->k,
                  .k0 = w->k0,
                  .ti = q->ti,
                  .tj = q->tj};
  return true;
}

static bool next_item(GemmWalk *w) {
  GemmItems *q = (GemmItems *)w;
  return !q->p->stride_c && ++q->item < q->p->count;
}

static bool next_run(GemmWalk *w) {
  GemmItems *q = (GemmItems *)w;
  const SwGemmArgs *p = q->p;
  if (p->stride_c && (q->item = ++q->first) < p->count) return true;
  q->item = q->first = 0;
  if ((q->tj += 8 * p->bn) < p->n) return true;
  q->tj = 0;
  return (q->ti += 8 * p->bm) < p->m;
}

static GemmRun item_run(const GemmWalk *w) {
  const GemmItems *q = (const GemmItems *)w;
  const SwGemmArgs *p = q->p;
  return (GemmRun){.c = p->c + q->first * p->stride_c,
                   .n = 1,
                   .ld = p->ldc,
                   .rows = p->m,
                   .cols = p->n,
                   .ti = q->ti,
                   .tj = q->tj,
                   .beta = p->beta,
                   .bias = p->bias,
                   .bias_columns = p->bias_columns};
}

void sw_gemm(void *arg) {
  SwGemmArgs p;
  cpe_get(&p, arg, sizeof p);
  Tiles t = {p.bm, p.bn, p.bk};
  Ldm l = gemm_ldm_take(t, 1, p.single_buffered ? 1 : 2);
  GemmItems items = {.walk = {item_step, next_item, next_run, item_run, p.k, p.bk, 0, false},
                     .p = &p};
  gemm_pipeline(t, &items.walk, &l);
  gemm_ldm_give(t, &l);
}
