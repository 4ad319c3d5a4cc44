/* Work of the CPE kernels from their shapes (predict.h). Each function follows the loops of
 * its kernel; counts are summed over the 64 CPEs, as the emulator's counters are. */
#include "predict.h"

#include "../kernels/args.h"

enum { LDM_FLOATS = 14 * 1024, CPES = 64 };

static int block_edge(int dim, int cap) {
  int b = ((dim + 7) / 8 + 3) / 4 * 4;
  return b < 4 ? 4 : b > cap ? cap : b;
}

static int ldm_floats(int bm, int bn, int bk) {
  int tmp = bm * bk > bk * bn ? bm * bk : bk * bn;
  if (bm * bn > tmp) tmp = bm * bn;
  return 2 * bm * bk + 2 * bk * bn + bm * bn + tmp + (bm > bn ? bm : bn);
}

/* The smallest edge (a multiple of 4) that covers dim in as many steps of 8 edges as `edge` does:
 * the same number of tiles or slices with less zero padding in the last. */
static int balanced(int dim, int edge) {
  int steps = (dim + 8 * edge - 1) / (8 * edge), b = ((dim + 8 * steps - 1) / (8 * steps) + 3) / 4 * 4;
  return b < 4 ? 4 : b;
}

void sw_gemm_blocks(int m, int n, int k, int *bm, int *bn, int *bk) {
  *bm = block_edge(m, 64), *bn = block_edge(n, 64), *bk = block_edge(k, 64);
  while (ldm_floats(*bm, *bn, *bk) > LDM_FLOATS && *bk > 16) *bk -= 4;
  while (ldm_floats(*bm, *bn, *bk) > LDM_FLOATS) {
    if (*bm >= *bn) *bm -= 4;
    else *bn -= 4;
  }
  *bm = balanced(m, *bm), *bn = balanced(n, *bn), *bk = balanced(k, *bk);
}

static double ceil_div(double a, double b) { return (double)(long long)((a + b - 1) / b); }

void sw_work_add(SwWork *sum, SwWork w) {
  sum->flops += w.flops, sum->dma_bytes += w.dma_bytes, sum->dma_transfers += w.dma_transfers;
  sum->dma_blocks += w.dma_blocks, sum->rlc_words += w.rlc_words;
}

/* Per tile and product, every CPE loads an A and a B block per slice of 8bk (rows of the
 * block are the strided pieces), exchanges 7 of 8 blocks each way, and multiplies 8 pairs;
 * `c_moves` C blocks per tile are written (and read where they start from beta C != 0:
 * kernels here pass 0 or accumulate, so only the writes are counted). */
static SwWork product_work(int m, int n, int k, double products, double c_moves) {
  int bm, bn, bk;
  sw_gemm_blocks(m, n, k, &bm, &bn, &bk);
  double tiles = ceil_div(m, 8.0 * bm) * ceil_div(n, 8.0 * bn), slices = ceil_div(k, 8.0 * bk);
  double per_slice = tiles * products * CPES * slices, c = tiles * c_moves * CPES;
  SwWork w = {0};
  w.flops = per_slice * 2.0 * 8 * bm * bn * bk;
  w.rlc_words = per_slice * 7.0 * (bm * bk + bk * bn) / 4;
  w.dma_bytes = per_slice * 4.0 * (bm * bk + bk * bn) + c * 4.0 * bm * bn;
  w.dma_transfers = per_slice * 2 + c;
  w.dma_blocks = per_slice * (double)(bm + bk) + c * bm;
  return w;
}

/* C written once per batch item, or once per tile when all items share it. */
SwWork sw_gemm_work(int m, int n, int k, int count, int c_shared) {
  return product_work(m, n, k, count, c_shared ? 1 : count);
}

/* The (output, kernel) position pairs along one axis whose input position is inside the image:
 * validity of a tap factorises over rows and columns. */
static double inside_pairs(int out, int kernel, int stride, int pad, int in) {
  double n = 0;
  for (int o = 0; o < out; o++)
    for (int k = 0; k < kernel; k++) n += o * stride - pad + k >= 0 && o * stride - pad + k < in;
  return n;
}

/* A product per (pixel, tap) pair inside the image, in every pass (the data gradient's gather
 * visits the same pairs from the input side); C blocks per output pixel (forward), input pixel
 * (data gradient, read too when adding) or tap (weights). */
SwWork sw_implicit_work(const SwImplicitArgs *a) {
  double products = inside_pairs(a->ho, a->kh, a->sh, a->ph, a->h) * inside_pairs(a->wo, a->kw, a->sw, a->pw, a->w);
  if (a->pass == SW_IMPLICIT_FORWARD) return product_work(a->co, a->batch, a->ci, products, (double)a->ho * a->wo);
  if (a->pass == SW_IMPLICIT_WEIGHTS) return product_work(a->co, a->ci, a->batch, products, (double)a->kh * a->kw);
  return product_work(a->ci, a->batch, a->co, products, (a->add ? 2.0 : 1.0) * a->h * a->w);
}

/* transpose_cpe.c: per tile one strided get of its rows and one strided put (and a get when
 * adding) of its columns. */
SwWork sw_transpose_work(int64_t a, int64_t mid, int64_t b, int add) {
  SwTransposeTiling t = sw_transpose_tiling(a, b);
  double tiles = (double)(t.na * t.nb * mid), moves = add ? 3 : 2, elements = (double)a * mid * b;
  SwWork w = {0};
  w.dma_transfers = tiles * moves;
  w.dma_blocks = tiles * ((double)t.ta + (double)t.tb * (moves - 1));
  w.dma_bytes = 4 * elements * moves;
  w.flops = add ? elements : 0;
  return w;
}

/* im2col: per (image, channel, kernel row) each output row gets one input row and each run of
 * rows puts kw runs; col2im: per (image, channel, input row) up to kh x kw runs of wo floats in,
 * one row out. */
SwWork sw_im2col_work(int images, int channels, int h, int w, int ho, int wo, int kh, int kw, int back) {
  SwWork r = {0};
  double planes = (double)images * channels;
  if (!back) {
    int run = SW_IM2COL_OUT_FLOATS / (kw * wo);
    run = run < 1 ? 1 : run > ho ? ho : run;
    double gets = planes * kh * ho, puts = planes * kh * ceil_div(ho, run) * kw;
    r.dma_transfers = r.dma_blocks = gets + puts;
    r.dma_bytes = 4.0 * (gets * w + planes * kh * kw * ho * wo);
  } else {
    double taps = planes * kh * kw * ho; /* every (output row, tap) segment is read once */
    r.dma_transfers = r.dma_blocks = taps + 2 * planes * h;
    r.dma_bytes = 4.0 * (taps * wo + 2 * planes * h * w);
    r.flops = taps * wo;
  }
  return r;
}

/* Chunks of SW_STREAM_CHUNK floats: `operands` arrays read or written per element. */
SwWork sw_stream_work(double n, int operands) {
  SwWork w = {0};
  double chunks = ceil_div(n, SW_STREAM_CHUNK);
  w.dma_transfers = w.dma_blocks = chunks * operands;
  w.dma_bytes = 4 * n * operands;
  w.flops = 4 * n;
  return w;
}
