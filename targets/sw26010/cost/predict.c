/* Work of the CPE kernels from their shapes (predict.h). Each function follows the loops of
 * its kernel; counts are summed over the 64 CPEs, as the emulator's counters are. */
#include "predict.h"

#include <math.h>

#include "../kernels/args.h"

enum { LDM_FLOATS = 14 * 1024, CPES = 64 };

static int block_edge(int dim, int cap) {
  int b = ((dim + 7) / 8 + 3) / 4 * 4;
  return b < 4 ? 4 : b > cap ? cap : b;
}

/* gemm_cpe.h's buffers (gemm_ldm_take) for a run of `runs` C blocks: `buffers` sets of an A
 * block and the run's B blocks as fetched, the A and B blocks multiplied, the run's C blocks, the
 * bias. */
static int ldm_floats(int bm, int bn, int bk, int runs, int buffers) {
  return (buffers + 1) * bm * bk + (buffers * runs + 1) * bk * bn + runs * bm * bn +
         (bm > bn ? bm : bn);
}

/* The smallest edge (a multiple of 4) that covers dim in as many steps of 8 edges as `edge` does:
 * the same number of tiles or slices with less zero padding in the last. */
static int balanced(int dim, int edge) {
  int steps = (dim + 8 * edge - 1) / (8 * edge),
      b = ((dim + 8 * steps - 1) / (8 * steps) + 3) / 4 * 4;
  return b < 4 ? 4 : b;
}

void sw_gemm_blocks(int m, int n, int k, int buffers, int *bm, int *bn, int *bk) {
  *bm = block_edge(m, 64), *bn = block_edge(n, 64), *bk = block_edge(k, 64);
  while (ldm_floats(*bm, *bn, *bk, 1, buffers) > LDM_FLOATS && *bk > 16) *bk -= 4;
  while (ldm_floats(*bm, *bn, *bk, 1, buffers) > LDM_FLOATS) {
    if (*bm >= *bn)
      *bm -= 4;
    else
      *bn -= 4;
  }
  *bm = balanced(m, *bm), *bn = balanced(n, *bn), *bk = balanced(k, *bk);
}

static double ceil_div(double a, double b) { return (double)(long long)((a + b - 1) / b); }

void sw_work_add(SwWork *sum, SwWork w) {
  sum->flops += w.flops, sum->vector_flops += w.vector_flops, sum->dma_bytes += w.dma_bytes;
  sum->dma_put_bytes += w.dma_put_bytes;
  sum->dma_transfers += w.dma_transfers, sum->dma_batched += w.dma_batched;
  sum->dma_blocks += w.dma_blocks, sum->rlc_words += w.rlc_words, sum->ldm_ops += w.ldm_ops;
  sum->overlapped_bytes += w.overlapped_bytes, sum->overlapped_put_bytes += w.overlapped_put_bytes;
  sum->overlapped_transfers += w.overlapped_transfers;
  sum->overlapped_batched += w.overlapped_batched, sum->overlapped_blocks += w.overlapped_blocks;
}

/* Every CPE reads its launch's arguments (the spawn argument) first. */
static SwWork launch_work(double arg_bytes) {
  SwWork w = {0};
  w.dma_transfers = w.dma_blocks = CPES;
  w.dma_bytes = CPES * arg_bytes;
  return w;
}

/* One operand of a product as stored (dense, `rows` lines of `cols` floats), cut into the CPEs'
 * blocks of br x bc on a grid from (0, 0), moved `times` over: a transfer per block that holds
 * any of it (blocks past the edges are clipped, or skipped when empty), one contiguous piece per
 * line unless the block spans whole lines (gemm_load, gemm_store). */
typedef struct Operand {
  double rows, cols, ld; /* as stored: lines, their used length, their length */
  int br, bc;
} Operand;

/* The contiguous pieces of memory one move of a blocked operand (several blocks across) forms:
 * a block's lines each, except where a tile's 8 blocks across are all whole (gemm_whole_tile)
 * and the blocks strided (more than one line): their 8 transfers are tiled, together one piece
 * per line, or one in all when the operand is exactly those 8 blocks wide. */
static double operand_pieces(Operand o, double col_blocks) {
  double whole_tiles = (double)(long long)(o.cols / (8.0 * o.bc)), pieces = 0;
  for (double first = 0; first < o.rows; first += o.br) {
    double lines = o.rows - first < o.br ? o.rows - first : o.br;
    double tiled = lines == 1 ? 8 : o.ld == 8.0 * o.bc ? 1 : lines; /* per whole tile */
    pieces += lines * (col_blocks - 8 * whole_tiles) + whole_tiles * tiled;
  }
  return pieces;
}

/* A rows x cols operand in blocks of br x bc, stored transposed or not, its stored lines ld
 * floats long (0: dense). */
static Operand stored(int rows, int cols, int br, int bc, int transposed, int ld) {
  Operand o = transposed ? (Operand){cols, rows, 0, bc, br} : (Operand){rows, cols, 0, br, bc};
  o.ld = ld ? ld : o.cols;
  return o;
}

static void operand_moves(SwWork *w, Operand o, double times, int put) {
  double row_blocks = ceil_div(o.rows, o.br), col_blocks = ceil_div(o.cols, o.bc),
         transfers = row_blocks * col_blocks, bytes = times * 4 * o.rows * o.cols;
  w->dma_transfers += times * transfers;
  w->dma_blocks +=
      times * (col_blocks == 1 && o.ld == o.cols ? transfers : operand_pieces(o, col_blocks));
  w->dma_bytes += bytes;
  if (put) w->dma_put_bytes += bytes;
}

/* The product C (m x n) += A (m x k) B (k x n) of gemm_cpe.h (A or B stored transposed when
 * ta or tb). Per tile and slice of 8bk, every CPE fetches an A block `a_loads` times and a B
 * block `b_loads` times (a step each A fetch, with its B fetches: a run's products share A); in
 * each of 8 exchanges 7 of 8 blocks come by RLC and each product multiplies a pair. Over the
 * tiles, A is read whole once per tile column and A fetch, B once per tile row and product. C is
 * written whole `c_puts` times and read `c_gets` times (where the kernel starts from beta C != 0),
 * with `c_bias` bias reads (per row of C) per C block. Flops and RLC count whole blocks, as the
 * kernels do. The first step (tile (0, 0), slice 0) has `first_b` B fetches; with 2 `buffers`
 * every later step's fetches are overlapped. */
typedef struct Product {
  int m, n, k, ta, tb;
  double a_loads, b_loads, c_puts, c_gets, c_bias;
  int lda, ldb, ldc; /* stored line lengths; 0: dense */
  int bias_columns;  /* the bias is per column of C */
  int buffers;
  double first_b;
  int bm, bn, bk; /* the blocks */
} Product;

/* Blocks of br x bc on the grid from (0, 0) wholly inside rows x cols. */
static double whole_blocks(double rows, double cols, int br, int bc) {
  return (double)(long long)(rows / br) * (double)(long long)(cols / bc);
}

/* The blocks an operand's fetches unpack (gemm_unpack: all but the whole untransposed ones; a
 * load and a store per element held, the zeroing in vector stores): `events` fetches over the
 * CPEs, the operand (rows x cols, blocks br x bc) read whole `times` over. */
static double unpack_ops(double events, double times, double rows, double cols, int br, int bc,
                         int transposed) {
  double whole = transposed ? 0 : whole_blocks(rows, cols, br, bc);
  return (events - times * whole) * br * bc / 4 + 2 * times * (rows * cols - whole * br * bc);
}

/* The memory pipeline's work (gemm_cpe.h's cpe_count_ldm): unpacking (a and b fetches over the
 * CPEs); every exchange packs a word in 5 operations, sent once and received 7 times; every C
 * block starts zeroed, or fetched (spread like an unpacked block unless whole) and scaled, the
 * bias added over what it holds; a store packs a block cut at the right edge. */
static double product_ldm_ops(Product p, int bm, int bn, int bk, double tiles_m, double tiles_n,
                              double a, double b) {
  double tile_cpes = tiles_m * tiles_n * CPES, c = (double)p.m * p.n;
  double unpacks = unpack_ops(a, tiles_n * p.a_loads, p.m, p.k, bm, bk, p.ta) +
                   unpack_ops(b, tiles_m * p.b_loads, p.k, p.n, bk, bn, p.tb);
  double exchanges = 5 * 8 * (a * bm * bk + b * bk * bn) / 4;
  double c_ops = tile_cpes * ((p.c_puts - p.c_gets) * bm * bn / 4 + p.c_gets * 2 * bm * bn) +
                 unpack_ops(p.c_gets * tile_cpes, p.c_gets, p.m, p.n, bm, bn, 0) +
                 2 * c * p.c_bias + 2 * p.c_puts * p.m * (double)(p.n % bn);
  return unpacks + exchanges + c_ops;
}

/* An axis of `extent` in tiles of 8 blocks of b: how many tiles hold 8 blocks, and the last's. */
static void axis_tiles(double extent, int b, double tiles[2], double blocks[2]) {
  double n = ceil_div(extent, 8.0 * b);
  tiles[0] = n - 1, blocks[0] = 8;
  tiles[1] = 1, blocks[1] = ceil_div(extent - (n - 1) * 8.0 * b, b);
}

/* The CPEs that fetch anything in a step: CPE (row, col) fetches A's block when row < ai and
 * col < kb, a B block when row < kb and col < bj (the blocks inside the matrices). */
static double fetching_cpes(double ai, double kb, double bj) {
  return ai * kb + kb * bj - (ai < kb ? ai : kb) * (kb < bj ? kb : bj);
}

/* Waits for the operands' fetches (one per CPE and step that fetches), over all tiles and
 * slices. */
static double product_waits(Product p, int bm, int bn, int bk) {
  double tm[2], am[2], tn[2], an[2], tk[2], ak[2], waits = 0;
  axis_tiles(p.m, bm, tm, am), axis_tiles(p.n, bn, tn, an), axis_tiles(p.k, bk, tk, ak);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < 2; l++)
        waits += tm[i] * tn[j] * tk[l] * fetching_cpes(am[i], ak[l], an[j]);
  return waits * p.a_loads;
}

/* A's and B's fetches, `times` over (B's b_per_a per A), `pieces` of them: the operands
 * (rows x k and k x cols) cut to tile (0, 0) and slice 0 when `first` (the first step). */
static SwWork operand_fetches(Product p, int bm, int bn, int bk, double a_times, double b_times,
                              int first) {
  int lda = p.lda ? p.lda : p.ta ? p.m : p.k, ldb = p.ldb ? p.ldb : p.tb ? p.k : p.n;
  int m = first && p.m > 8 * bm ? 8 * bm : p.m, n = first && p.n > 8 * bn ? 8 * bn : p.n,
      k = first && p.k > 8 * bk ? 8 * bk : p.k;
  SwWork w = {0};
  operand_moves(&w, stored(m, k, bm, bk, p.ta, lda), a_times, 0);
  operand_moves(&w, stored(k, n, bk, bn, p.tb, ldb), b_times, 0);
  return w;
}

/* The fetches' waits and, double-buffered, the part overlapped: all but the first step's. */
static void fetch_timing(SwWork *w, Product p, int bm, int bn, int bk, double tiles_m,
                         double tiles_n) {
  SwWork all = operand_fetches(p, bm, bn, bk, tiles_n * p.a_loads, tiles_m * p.b_loads, 0);
  all.dma_batched = all.dma_transfers - product_waits(p, bm, bn, bk);
  sw_work_add(w, all);
  if (p.buffers < 2 || p.first_b < 1) return;
  SwWork first = operand_fetches(p, bm, bn, bk, 1, p.first_b, 1);
  double ai = ceil_div(p.m < 8 * bm ? p.m : 8 * bm, bm),
         kb = ceil_div(p.k < 8 * bk ? p.k : 8 * bk, bk),
         bj = ceil_div(p.n < 8 * bn ? p.n : 8 * bn, bn);
  first.dma_batched = first.dma_transfers - fetching_cpes(ai, kb, bj);
  w->overlapped_bytes += all.dma_bytes - first.dma_bytes;
  w->overlapped_transfers += all.dma_transfers - first.dma_transfers;
  w->overlapped_batched += all.dma_batched - first.dma_batched;
  w->overlapped_blocks += all.dma_blocks - first.dma_blocks;
}

static SwWork product_work(Product p) {
  int bm = p.bm, bn = p.bn, bk = p.bk;
  double tiles_m = ceil_div(p.m, 8.0 * bm), tiles_n = ceil_div(p.n, 8.0 * bn),
         slices = ceil_div(p.k, 8.0 * bk);
  double per_slice = tiles_m * tiles_n * CPES * slices, a = per_slice * p.a_loads,
         b = per_slice * p.b_loads;
  SwWork w = {0};
  w.flops = w.vector_flops = b * 2.0 * 8 * bm * bn * bk; /* gemm_multiply's vectors */
  w.rlc_words = 7.0 * (a * bm * bk + b * bk * bn) / 4;
  fetch_timing(&w, p, bm, bn, bk, tiles_m, tiles_n);
  operand_moves(&w, stored(p.m, p.n, bm, bn, 0, p.ldc), p.c_gets, 0);
  operand_moves(&w, stored(p.m, p.n, bm, bn, 0, p.ldc), p.c_puts, 1);
  /* a bias piece per C block holding any of C */
  if (p.bias_columns)
    operand_moves(&w, stored(p.n, 1, bn, 1, 0, 0), p.c_bias * ceil_div(p.m, bm), 0);
  else
    operand_moves(&w, stored(p.m, 1, bm, 1, 0, 0), p.c_bias * ceil_div(p.n, bn), 0);
  w.ldm_ops = product_ldm_ops(p, bm, bn, bk, tiles_m, tiles_n, a, b);
  return w;
}

/* C started (read when beta is not 0, the bias added) and written once per batch item, or once
 * per tile when all items share it (stride_c 0). */
SwWork sw_gemm_work(const SwGemmArgs *g) {
  SwWork w = launch_work(sizeof(SwGemmArgs));
  double starts = g->stride_c ? g->count : 1;
  Product p = {g->m,
               g->n,
               g->k,
               g->ta,
               g->tb,
               g->count,
               g->count,
               starts,
               g->beta != 0 ? starts : 0,
               g->bias ? starts : 0,
               g->lda,
               g->ldb,
               g->ldc,
               g->bias_columns,
               g->single_buffered ? 1 : 2,
               1,
               0,
               0,
               0};
  sw_gemm_blocks(p.m, p.n, p.k, p.buffers, &p.bm, &p.bn, &p.bk);
  sw_work_add(&w, product_work(p));
  return w;
}

void sw_gemm_buffering(SwGemmArgs *g, int tiling) {
  SwGemmArgs one = *g;
  one.single_buffered = 1, g->single_buffered = 0;
  g->single_buffered = tiling == SW_TILING_SINGLE_BUFFERED ||
                       (tiling == SW_TILING_RULE &&
                        sw_cpe_seconds(sw_gemm_work(&one)) < sw_cpe_seconds(sw_gemm_work(g)));
}

/* The implicit pass's product (m x k)(k x n) per (pixel, tap) pair and the longest run of C
 * blocks sharing A that fits beside the blocks, at most `extent` (the row or filter row). */
static SwWork implicit_work(SwImplicitArgs a);

/* The longest run (at most `extent`) that fits beside a's blocks. */
static int longest_run(const SwImplicitArgs *a, int extent, int buffers) {
  int run = 1;
  while (run < SW_IMPLICIT_RUN_MAX && run < extent &&
         ldm_floats(a->bm, a->bn, a->bk, run + 1, buffers) <= LDM_FLOATS)
    run++;
  return run;
}

void sw_implicit_plan(SwImplicitArgs *a) {
  int m = a->pass == SW_IMPLICIT_DATA ? a->ci : a->co,
      n = a->pass == SW_IMPLICIT_WEIGHTS ? a->ci : a->batch;
  int k = a->pass == SW_IMPLICIT_FORWARD ? a->ci : a->pass == SW_IMPLICIT_DATA ? a->co : a->batch;
  int extent = a->pass == SW_IMPLICIT_FORWARD ? a->wo : a->pass == SW_IMPLICIT_DATA ? a->w : a->kw;
  int buffers = a->single_buffered ? 1 : 2, widest;
  sw_gemm_blocks(m, n, k, buffers, &a->bm, &a->bn, &widest);
  double best = INFINITY;
  for (int edge = widest; edge >= 4; edge /= 2) {
    SwImplicitArgs c = *a;
    c.bk = balanced(k, edge / 4 * 4 > 4 ? edge / 4 * 4 : 4);
    c.run = longest_run(&c, extent, buffers);
    double t = sw_cpe_seconds(implicit_work(c));
    if (t < best) best = t, a->bk = c.bk, a->run = c.run;
    if (c.run == SW_IMPLICIT_RUN_MAX || c.run == extent) break; /* narrower slices gain nothing */
  }
}

/* One axis of the convolution as a pass's loops walk it: positions (of the output, or of the
 * input for the data pass's gather) and taps, and which pairs touch the image. */
typedef struct Axis {
  int positions, taps, stride, pad, other; /* other: the extent on the far side */
  int gather;
} Axis;

static int touches(Axis x, int position, int tap) {
  return sw_implicit_across(x.gather, position, tap, x.stride, x.pad, x.other) >= 0;
}

/* The touching (position, tap) pairs, and the groups a run of `run` positions (or of taps, when
 * runs_of_taps) forms with one tap (or position) where at least one pair touches: a product per
 * pair, an A load per group. Touching factorises over rows and columns. */
typedef struct AxisCounts {
  double pairs, groups;
} AxisCounts;

static AxisCounts axis_counts(Axis x, int run, int runs_of_taps) {
  AxisCounts c = {0, 0};
  int outer = runs_of_taps ? x.positions : x.taps, inner = runs_of_taps ? x.taps : x.positions;
  for (int o = 0; o < outer; o++)
    for (int first = 0; first < inner; first += run) {
      int any = 0;
      for (int r = first; r < inner && r < first + run; r++) {
        int t = runs_of_taps ? touches(x, o, r) : touches(x, r, o);
        c.pairs += t, any |= t;
      }
      c.groups += any;
    }
  return c;
}

void sw_implicit_buffering(SwImplicitArgs *a, int tiling) {
  SwImplicitArgs one = *a;
  one.single_buffered = 1, a->single_buffered = 0;
  a->single_buffered = tiling == SW_TILING_SINGLE_BUFFERED ||
                       (tiling == SW_TILING_RULE && sw_cpe_seconds(sw_implicit_work(&one)) <
                                                        sw_cpe_seconds(sw_implicit_work(a)));
}

/* The B fetches of the kernel's first step: in the first run (in order) with a product, the
 * first tap (forward, data) or output pixel (weights) with one, its products. 0: none at all. */
static double first_step_products(Axis rows, Axis cols, int run, int weights) {
  int outer = weights ? cols.taps : cols.positions;
  for (int y = 0; y < (weights ? rows.taps : rows.positions); y++)
    for (int first = 0; first < outer; first += run)
      for (int step = 0; step < (weights ? rows.positions * cols.positions : rows.taps * cols.taps);
           step++) {
        int i = weights ? step / cols.positions : step / cols.taps,
            j = weights ? step % cols.positions : step % cols.taps;
        if (!(weights ? touches(rows, i, y) : touches(rows, y, i))) continue;
        int products = 0;
        for (int r = first; r < outer && r < first + run; r++)
          products += weights ? touches(cols, j, r) : touches(cols, r, j);
        if (products) return products;
      }
  return 0;
}

/* Rows are walked one position at a time; columns in runs (of pixels, or of taps for the
 * weights). C blocks per output pixel (forward, with the bias read at each start), input pixel
 * (data gradient, read too when adding) or tap (weights). */
/* The work of the implicit pass a with the blocks and run a holds. */
static SwWork implicit_work(SwImplicitArgs a) {
  int gather = a.pass == SW_IMPLICIT_DATA;
  Axis rows = {gather ? a.h : a.ho, a.kh, a.sh, a.ph, gather ? a.ho : a.h, gather};
  Axis cols = {gather ? a.w : a.wo, a.kw, a.sw, a.pw, gather ? a.wo : a.w, gather};
  AxisCounts r = axis_counts(rows, 1, 0),
             c = axis_counts(cols, a.run, a.pass == SW_IMPLICIT_WEIGHTS);
  double a_loads = r.pairs * c.groups, b_loads = r.pairs * c.pairs, pixels = (double)a.ho * a.wo;
  /* every view is dense: per pixel (ci or co, batch), per tap (co, ci) */
  Product p = {.a_loads = a_loads,
               .b_loads = b_loads,
               .buffers = a.single_buffered ? 1 : 2,
               .first_b = first_step_products(rows, cols, a.run, a.pass == SW_IMPLICIT_WEIGHTS),
               .bm = a.bm,
               .bn = a.bn,
               .bk = a.bk};
  if (a.pass == SW_IMPLICIT_FORWARD)
    p.m = a.co, p.n = a.batch, p.k = a.ci, p.c_puts = pixels, p.c_bias = a.bias ? pixels : 0;
  else if (a.pass == SW_IMPLICIT_WEIGHTS)
    p.m = a.co, p.n = a.ci, p.k = a.batch, p.tb = 1, p.c_puts = (double)a.kh * a.kw;
  else
    p.m = a.ci, p.n = a.batch, p.k = a.co, p.ta = 1, p.c_puts = (double)a.h * a.w,
    p.c_gets = a.add ? p.c_puts : 0;
  SwWork w = launch_work(sizeof(SwImplicitArgs));
  sw_work_add(&w, product_work(p));
  return w;
}

SwWork sw_implicit_work(const SwImplicitArgs *args) {
  SwImplicitArgs a = *args;
  sw_implicit_plan(&a);
  return implicit_work(a);
}

/* One contiguous piece per line of a get or put of `lines` runs of `run` floats, `ld` apart. */
static double pieces(int64_t lines, int64_t run, int64_t ld) {
  return lines == 1 || run == ld ? 1 : (double)lines;
}

/* transpose_cpe.c: per tile (ni x nj, clipped at the edges) one strided get of its ni rows and
 * one strided put (and a get when adding) of its nj columns. */
SwWork sw_transpose_work(int64_t a, int64_t mid, int64_t b, int add) {
  SwTransposeTiling t = sw_transpose_tiling(a, b);
  /* the tiles along each axis: full ones, and the clipped last one */
  int64_t ni[2] = {t.ta, a % t.ta}, ci[2] = {a / t.ta, a % t.ta != 0};
  int64_t nj[2] = {t.tb, b % t.tb}, cj[2] = {b / t.tb, b % t.tb != 0};
  double moves = add ? 3 : 2, elements = (double)a * mid * b;
  SwWork w = launch_work(sizeof(SwTransposeArgs));
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      double tiles = (double)(ci[i] * cj[j] * mid);
      w.dma_transfers += tiles * moves;
      w.dma_blocks +=
          tiles * (pieces(ni[i], nj[j], mid * b) + (moves - 1) * pieces(nj[j], ni[i], mid * a));
      /* in LDM: 4x4 blocks of vectors when both sides are multiples of 4, else element-wise */
      double tile_elements = tiles * (double)(ni[i] * nj[j]);
      bool vectors = ni[i] % 4 == 0 && nj[j] % 4 == 0;
      w.ldm_ops += vectors ? tile_elements / 16 * (add ? 12 : 8) : tile_elements * (add ? 3 : 2);
      if (add && vectors) w.vector_flops += tile_elements;
    }
  w.dma_bytes += 4 * elements * moves, w.dma_put_bytes += 4 * elements;
  w.flops = add ? elements : 0;
  return w;
}

/* im2col: per (image, channel, kernel row) each output row whose input row (the kernel row dh
 * rows apart) is inside the image gets that row, and each run of output rows puts kw runs; col2im: per (image, channel, input
 * row) kw segments of wo floats in per kernel row with an output row, the row out (and in first
 * when adding). The (output row, kernel row) pairs inside the image are counted as the implicit
 * pass counts them. */
static double kernel_rows_inside(int h, int ho, int kh, int sh, int ph, int dh) {
  double pairs = 0;
  for (int oh = 0; oh < ho; oh++)
    for (int i = 0; i < kh; i++) {
      int ih = oh * sh - ph + i * dh;
      pairs += ih >= 0 && ih < h;
    }
  return pairs;
}

SwWork sw_im2col_work(int images, int channels, int h, int w, int ho, int wo, int kh, int kw,
                      int sh, int ph, int dh, int back, int add) {
  SwWork r = launch_work(sizeof(SwIm2colArgs));
  double planes = (double)images * channels;
  double rows_inside = kernel_rows_inside(h, ho, kh, sh, ph, dh);
  if (!back) {
    int run = SW_IM2COL_OUT_FLOATS / (kw * wo);
    run = run < 1 ? 1 : run > ho ? ho : run;
    double gets = planes * rows_inside, puts = planes * kh * ceil_div(ho, run) * kw;
    r.dma_transfers += gets + puts, r.dma_blocks += gets + puts;
    r.dma_put_bytes += 4.0 * planes * kh * kw * ho * wo;
    r.dma_bytes += 4.0 * gets * w + r.dma_put_bytes;
    r.ldm_ops = 2.0 * planes * kh * kw * ho * wo; /* each column element loaded or zeroed, stored */
  } else {
    double segments = planes * rows_inside * kw, rows = planes * h * (add ? 2 : 1);
    r.dma_transfers += segments + rows, r.dma_blocks += segments + rows;
    r.dma_bytes += 4.0 * (segments * wo + rows * w), r.dma_put_bytes += 4.0 * planes * h * w;
    r.flops = segments * wo;
    /* a row zeroed (unless added to), then two loads and a store per segment element */
    r.ldm_ops = 3.0 * segments * wo + (add ? 0 : planes * h * (double)(w / 4));
  }
  return r;
}

/* Chunks of SW_STREAM_CHUNK floats: `operands` arrays read or written per element, `puts` of
 * them written; with
 * `vectorised` (sw_stream_vectorised), each chunk's whole vectors in vector arithmetic (the
 * chunks hold whole vectors, so all but the last n % 4 elements). */
SwWork sw_stream_work(double n, int operands, int puts, int vectorised) {
  SwWork w = launch_work(sizeof(SwStreamArgs));
  double chunks = ceil_div(n, SW_STREAM_CHUNK);
  w.dma_transfers += chunks * operands, w.dma_blocks += chunks * operands;
  w.dma_bytes += 4 * n * operands, w.dma_put_bytes += 4 * n * puts;
  w.flops = 4 * n;
  if (vectorised) w.vector_flops = 4 * (n - (double)((long long)n % 4));
  return w;
}

/* SW_ROW_BIAS_GRAD: per row and image, its columns in chunks; per row one sum out (and the old
 * one in when adding). */
SwWork sw_row_sums_work(double rows, double cols, double images, int add) {
  SwWork w = launch_work(sizeof(SwStreamArgs));
  double gets = rows * images * ceil_div(cols, SW_STREAM_CHUNK), sums = rows * (add ? 2 : 1);
  w.dma_transfers += gets + sums, w.dma_blocks += gets + sums;
  w.dma_bytes += 4 * (rows * images * cols + sums), w.dma_put_bytes += 4 * rows;
  w.flops = rows * images * cols;
  return w;
}

/* Pooling, (B,N,R,C): per block of the plane (the same in every plane) its input region in one
 * transfer (a block per row unless whole rows), outputs and argmax out likewise; backward the
 * block's dx (in when adding) and the output region covering it. (R,C,N,B): per pixel and lane
 * chunk, a get per window element (forward) or per output whose window holds the pixel. The
 * blocks and covering ranges are pool_cpe.c's. */
static int min_of(int a, int b) { return a < b ? a : b; }

static int pool_covering_first(int i0, int k, int s, int pad) {
  int t = i0 + pad - k;
  return t < 0 ? 0 : t / s + 1;
}

static int pool_covering_end(int i1, int s, int pad, int out) {
  return min_of((i1 - 1 + pad) / s + 1, out);
}

/* transfers and blocks of a region of `rows` x `span` floats with rows `pitch` apart, in (get)
 * or out (put) */
static void pool_region(SwWork *w, double times, int rows, int span, int pitch, int put) {
  w->dma_transfers += times, w->dma_blocks += times * (span == pitch ? 1 : rows);
  w->dma_bytes += times * 4.0 * rows * span;
  if (put) w->dma_put_bytes += times * 4.0 * rows * span;
}

static void pool_bnrc_forward(const SwPoolArgs *p, SwWork *w) {
  double planes = (double)p->batch * p->c;
  for (int r = 0; r < p->ho; r += p->rows)
    for (int c = 0; c < p->wo; c += p->cols) {
      int n = min_of(p->rows, p->ho - r), m = min_of(p->cols, p->wo - c);
      int r0 = r * p->sh - p->ph, r1 = min_of(p->h, (r + n - 1) * p->sh - p->ph + p->kh);
      int c0 = c * p->sw - p->pw, c1 = min_of(p->w, (c + m - 1) * p->sw - p->pw + p->kw);
      r0 = r0 < 0 ? 0 : r0, c0 = c0 < 0 ? 0 : c0;
      if (r1 > r0) pool_region(w, planes, r1 - r0, c1 - c0, p->w, 0);
      pool_region(w, planes * (p->max ? 2 : 1), n, m, p->wo, 1);
      w->flops += planes * n * m * p->kh * p->kw;
    }
}

static void pool_bnrc_backward(const SwPoolArgs *p, SwWork *w) {
  double planes = (double)p->batch * p->c;
  for (int r = 0; r < p->h; r += p->rows)
    for (int c = 0; c < p->w; c += p->cols) {
      int n = min_of(p->rows, p->h - r), m = min_of(p->cols, p->w - c);
      int o0 = pool_covering_first(r, p->kh, p->sh, p->ph),
          o1 = pool_covering_end(r + n, p->sh, p->ph, p->ho);
      int q0 = pool_covering_first(c, p->kw, p->sw, p->pw),
          q1 = pool_covering_end(c + m, p->sw, p->pw, p->wo);
      if (p->add) pool_region(w, planes, n, m, p->w, 0);
      pool_region(w, planes, n, m, p->w, 1);
      if (o1 <= o0 || q1 <= q0) continue;
      pool_region(w, planes * (p->max ? 2 : 1), o1 - o0, q1 - q0, p->wo, 0);
      w->flops += planes * (o1 - o0) * (q1 - q0) * (p->max ? 1 : p->kh * p->kw);
    }
}

/* The window of output o along one axis, clipped to the input: [*a, *b). */
static void pool_window(int o, int k, int s, int pad, int in, int *a, int *b) {
  int lo = o * s - pad, hi = lo + k < in + pad ? lo + k : in + pad;
  *a = lo < 0 ? 0 : lo, *b = hi > in ? in : hi;
}

/* The window elements over all output pixels: forward's gets per lane chunk, and backward's
 * (input pixel, output whose window holds it) pairs. */
static double pool_window_elements(const SwPoolArgs *p) {
  double area = 0;
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      int h0, h1, w0, w1;
      pool_window(oh, p->kh, p->sh, p->ph, p->h, &h0, &h1);
      pool_window(ow, p->kw, p->sw, p->pw, p->w, &w0, &w1);
      area += (double)(h1 - h0) * (w1 - w0);
    }
  return area;
}

static void pool_rcnb(const SwPoolArgs *p, int backward, SwWork *w) {
  double lanes = (double)p->c * p->batch, chunks = ceil_div(lanes, SW_STREAM_CHUNK);
  double reads = pool_window_elements(p), arrays = p->max ? 2 : 1;
  /* forward: a get per window element, y (and argmax) out per output pixel; backward: dy (and
   * argmax) in per pair, dx (in when adding and) out per input pixel */
  double per_chunk = backward ? reads * arrays + (double)p->h * p->w * (p->add ? 2 : 1)
                              : reads + (double)p->ho * p->wo * arrays;
  double puts_per_chunk = backward ? (double)p->h * p->w : (double)p->ho * p->wo * arrays;
  w->dma_transfers += chunks * per_chunk, w->dma_blocks = w->dma_transfers;
  w->dma_bytes += 4 * lanes * per_chunk, w->dma_put_bytes += 4 * lanes * puts_per_chunk;
  w->flops += lanes * reads;
}

SwWork sw_pool_work(const SwPoolArgs *p, int backward) {
  SwWork w = launch_work(sizeof(SwPoolArgs));
  if (p->rcnb)
    pool_rcnb(p, backward, &w);
  else if (backward)
    pool_bnrc_backward(p, &w);
  else
    pool_bnrc_forward(p, &w);
  return w;
}

/* LRN: per task (a run of pixels of one image) one transfer per array, a block per channel
 * unless the run is the whole plane: forward x in, scale and y out; backward x, scale, dy, y
 * (and dx when adding) in, dx out. */
SwWork sw_lrn_work(const SwLrnArgs *p) {
  SwWork w = launch_work(sizeof(SwLrnArgs));
  int arrays = p->backward ? 5 + p->add : 3, puts = p->backward ? 1 : 2;
  for (int first = 0; first < p->hw; first += p->pixels) {
    int n = min_of(p->pixels, p->hw - first);
    double tasks = p->batch;
    w.dma_transfers += tasks * arrays;
    w.dma_blocks += tasks * arrays * (n == p->hw ? 1 : p->c);
    w.dma_bytes += tasks * arrays * 4.0 * p->c * n,
        w.dma_put_bytes += tasks * puts * 4.0 * p->c * n;
    w.flops += tasks * p->c * n * (2.0 * p->size + 10);
  }
  return w;
}

/* Sums of parts: per task (a row's chunk) a get per source (and of dst when adding), a put. */
SwWork sw_sum_work(const SwSumArgs *a) {
  SwWork w = launch_work(sizeof(SwSumArgs));
  for (int k = 0; k < a->parts; k++) {
    const SwSumPart *q = &a->part[k];
    double moves = q->sources + q->add + 1, rows = (double)q->rows;
    w.dma_transfers += rows * ceil_div((double)q->cols, SW_STREAM_CHUNK) * moves;
    w.dma_bytes += rows * 4.0 * (double)q->cols * moves,
        w.dma_put_bytes += rows * 4.0 * (double)q->cols;
    w.flops += rows * (double)q->cols * (q->sources - 1 + q->add);
    /* chunks hold whole vectors: all but a row's last cols % 4 in vectors */
    w.vector_flops += rows * (double)(q->cols - q->cols % 4) * (q->sources - 1 + q->add);
  }
  w.dma_blocks = w.dma_transfers;
  return w;
}

/* Accuracy: per image its scores and label in; the mesh sum (63 words received: along the 8
 * rows to column 0, then up column 0); CPE 0's result out. */
SwWork sw_accuracy_work(int classes, int batch) {
  SwWork w = launch_work(sizeof(SwAccuracyArgs));
  w.dma_transfers += 2.0 * batch + 1, w.dma_blocks += 2.0 * batch + 1;
  w.dma_bytes += 4.0 * batch * (classes + 1) + 4, w.dma_put_bytes = 4;
  w.flops = (double)classes * batch;
  w.rlc_words = 63;
  return w;
}

/* Batch norm, per channel: the pieces of its data (batchnorm_cpe.c next_piece: several images'
 * runs in one strided transfer when the plane fits a chunk, else chunks of one run), each a
 * transfer of a block per run (one when a single run). */
typedef struct BnPieces {
  double transfers, blocks, floats;
} BnPieces;

static BnPieces bn_pieces(const SwBatchNormArgs *p) {
  BnPieces r = {0};
  if (p->hw <= SW_STREAM_CHUNK) {
    int per = SW_STREAM_CHUNK / p->hw;
    for (int n = 0; n < p->batch; n += per) {
      int images = min_of(per, p->batch - n);
      r.transfers++, r.blocks += images, r.floats += (double)images * p->hw;
    }
  } else {
    double chunks = ceil_div(p->hw, SW_STREAM_CHUNK);
    r.transfers = r.blocks = p->batch * chunks, r.floats = (double)p->batch * p->hw;
  }
  return r;
}

SwWork sw_batchnorm_work(const SwBatchNormArgs *p) {
  SwWork w = launch_work(sizeof(SwBatchNormArgs));
  BnPieces q = bn_pieces(p);
  /* passes over the pieces and scalars moved, and how many of each are written */
  double passes, ones, passes_out, ones_out, count = (double)p->batch * p->hw;
  if (p->backward) {
    passes = p->dx ? 5 + p->add : 2; /* x and dy for the sums; x, dy (and dx) in, dx out */
    passes_out = p->dx ? 1 : 0;
    /* saved in; dscale and dshift out; gamma in */
    ones = 2 + (p->affine ? 2 : 0) + (p->dx && p->affine ? 1 : 0), ones_out = p->affine ? 2 : 0;
    w.flops = p->c * (5 * count + (p->dx ? 7 * count : 0));
  } else {
    int stats = p->train && !p->recompute;
    passes = (stats ? 2 : 0) + 2; /* x twice for the statistics; x in, y out */
    passes_out = 1;
    /* saved out and running in and out, or saved or running in; scale and shift in */
    ones = (stats ? 6 : 2) + (p->affine ? 2 : 0), ones_out = stats ? 4 : 0;
    w.flops = p->c * ((stats ? 4 * count : 0) + 3 * count);
  }
  w.dma_transfers += p->c * (passes * q.transfers + ones);
  w.dma_blocks += p->c * (passes * q.blocks + ones);
  w.dma_bytes += p->c * 4.0 * (passes * q.floats + ones);
  w.dma_put_bytes += p->c * 4.0 * (passes_out * q.floats + ones_out);
  return w;
}

/* Softmax loss: per image its scores (forward) or probabilities (backward) and label in, then
 * probabilities out (backward: dscores, read first when adding); forward, CPE 0's loss out
 * after the mesh sum (63 words). */
SwWork sw_softmax_work(int classes, int batch, int backward, int add) {
  SwWork w = launch_work(sizeof(SwSoftmaxArgs));
  double rows = backward ? 2 + add : 2;
  w.dma_transfers += batch * (rows + 1), w.dma_blocks += batch * (rows + 1);
  w.dma_bytes += 4.0 * batch * (rows * classes + 1), w.dma_put_bytes += 4.0 * batch * classes;
  if (!backward) {
    w.dma_transfers += 1, w.dma_blocks += 1, w.dma_bytes += 4, w.dma_put_bytes += 4;
    w.rlc_words = 63;
  }
  w.flops = (backward ? 3.0 : 24.0) * classes * batch;
  return w;
}
