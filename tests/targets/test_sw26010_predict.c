/* The sw26010 cost model's work predicted from shapes (cost/predict.c, what the strategy pass
 * prices) against the emulator's counters for the same launch (what --profile prices): the
 * model must follow its kernel's loops, so every count must match exactly, edge blocks, padding
 * and the launch's argument reads included. Shapes cover ragged edges, strides, padding,
 * transposed operands, runs cut short by the row's end, adding into the output. */
#include <math.h>
#include <stdlib.h>

#include "../cost/counted.h"
#include "../cost/predict.h"
#include "shapes.h"
#include "check.h"
#include "mpe.h"

static void compare(const char *kernel, SwWork predicted) {
  SwWork c = sw_counted_work(athread_last_counters());
  double counted[] = {c.flops,
                      c.vector_flops,
                      c.rlc_words,
                      c.ldm_ops,
                      c.dma_bytes,
                      c.dma_put_bytes,
                      c.dma_transfers,
                      c.dma_batched,
                      c.dma_blocks,
                      c.overlapped_bytes,
                      c.overlapped_put_bytes,
                      c.overlapped_transfers,
                      c.overlapped_batched,
                      c.overlapped_blocks};
  double model[] = {predicted.flops,
                    predicted.vector_flops,
                    predicted.rlc_words,
                    predicted.ldm_ops,
                    predicted.dma_bytes,
                    predicted.dma_put_bytes,
                    predicted.dma_transfers,
                    predicted.dma_batched,
                    predicted.dma_blocks,
                    predicted.overlapped_bytes,
                    predicted.overlapped_put_bytes,
                    predicted.overlapped_transfers,
                    predicted.overlapped_batched,
                    predicted.overlapped_blocks};
  static const char *names[] = {"flops",
                                "vector flops",
                                "rlc words",
                                "ldm ops",
                                "dma bytes",
                                "dma put bytes",
                                "dma transfers",
                                "dma batched",
                                "dma blocks",
                                "overlapped bytes",
                                "overlapped put bytes",
                                "overlapped transfers",
                                "overlapped batched",
                                "overlapped blocks"};
  enum { COUNTS = sizeof counted / sizeof counted[0] };
  for (int i = 0; i < COUNTS; i++) {
    bool ok = fabs(model[i] - counted[i]) <= 1e-9 * fmax(counted[i], 1);
    if (!ok)
      fprintf(stderr, "%s %s: predicted %.17g, counted %.17g\n", kernel, names[i], model[i],
              counted[i]);
    CHECK(ok);
  }
}

static float *buffer(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

static void gemm(int m, int n, int k, int ta, int tb, int count, int c_shared, int single) {
  float *a = buffer((int64_t)m * k * count), *b = buffer((int64_t)k * n * count);
  float *c = buffer((int64_t)m * n * (c_shared ? 1 : count));
  SwGemmArgs g = {.m = m,
                  .n = n,
                  .k = k,
                  .count = count,
                  .ta = ta,
                  .tb = tb,
                  .lda = ta ? m : k,
                  .ldb = tb ? k : n,
                  .ldc = n,
                  .stride_a = (int64_t)m * k,
                  .stride_b = (int64_t)k * n,
                  .stride_c = c_shared ? 0 : (int64_t)m * n,
                  .a = a,
                  .b = b,
                  .c = c,
                  .single_buffered = single};
  sw_gemm_run(&g);
  compare("gemm", sw_gemm_work(&g));
  free(a), free(b), free(c);
}

/* All three passes, double- and single-buffered; the forward with a bias, the data gradient
 * adding when `add`. */
static void implicit(SwkConv shape, int batch, int add) {
  SwImplicitArgs a = {CONV_GEOMETRY(shape), .batch = batch};
  static const char *names[] = {"implicit forward", "implicit data", "implicit weights"};
  float *x = buffer((int64_t)a.h * a.w * a.ci * a.batch),
        *y = buffer((int64_t)a.ho * a.wo * a.co * a.batch);
  float *w = buffer((int64_t)a.kh * a.kw * a.co * a.ci), *bias = buffer(a.co);
  for (int run = 0; run < 6; run++) {
    int pass = run % 3;
    a.pass = (SwImplicitPass)pass, a.single_buffered = run >= 3;
    a.x = x, a.filters = w, a.dy = y, a.bias = pass == SW_IMPLICIT_FORWARD ? bias : NULL;
    a.add = pass == SW_IMPLICIT_DATA && add;
    a.out = pass == SW_IMPLICIT_FORWARD ? y : pass == SW_IMPLICIT_DATA ? x : w;
    sw_implicit_plan(&a);
    SW_RUN(sw_conv_implicit, &a);
    compare(names[pass], sw_implicit_work(&a));
  }
  free(x), free(y), free(w), free(bias);
}

static void transpose(int64_t a, int64_t mid, int64_t b, int add) {
  float *x = buffer(a * mid * b), *y = buffer(a * mid * b);
  sw_transpose_run(a, mid, b, x, y, add);
  compare("transpose", sw_transpose_work(a, mid, b, add));
  free(x), free(y);
}

static void im2col(SwIm2colArgs a, int back) {
  int64_t pixels = (int64_t)a.ho * a.wo;
  a.in_image = (int64_t)a.channels * a.h * a.w, a.ld = a.images * pixels;
  a.x = buffer(a.images * a.in_image), a.col = buffer(a.channels * a.kh * a.kw * a.ld);
  if (back)
    SW_RUN(sw_col2im, &a);
  else
    SW_RUN(sw_im2col, &a);
  compare(back ? "col2im" : "im2col", sw_im2col_work(a.images, a.channels, a.h, a.w, a.ho, a.wo,
                                                     a.kh, a.kw, a.sh, a.ph, a.dh, back, a.add));
  free(a.x), free(a.col);
}

static void stream(SwStreamOp op, SwnActivation act, int64_t n, int operands) {
  float *a = buffer(n), *b = buffer(n), *y = buffer(n), *z = buffer(n);
  SwStreamArgs s = {.op = op, .act = act, .n = n, .a = a, .b = b, .y = y, .z = z, .per_image = 700};
  sw_stream_run(&s);
  compare("stream",
          sw_stream_work((double)n, operands, sw_stream_puts(op), sw_stream_vectorised(op, act)));
  free(a), free(b), free(y), free(z);
}

static void row_sums(int64_t rows, int64_t cols, int64_t images, int add) {
  float *a = buffer(rows * cols * images), *y = buffer(rows);
  SwStreamArgs s = {.op = SW_ROW_BIAS_GRAD,
                    .add = add,
                    .a = a,
                    .y = y,
                    .rows = rows,
                    .cols = cols,
                    .images = images,
                    .image_stride = rows * cols};
  sw_stream_run(&s);
  compare("row sums", sw_row_sums_work((double)rows, (double)cols, (double)images, add));
  free(a), free(y);
}

/* Both passes, adding into dx; blocks as pool.c sets them up for (B,N,R,C). */
static void pool(SwkPool shape, int batch, int rcnb) {
  SwPoolArgs a = {POOL_GEOMETRY(shape), .batch = batch, .rcnb = rcnb};
  int64_t planes = (int64_t)a.batch * a.c;
  float *x = buffer(planes * a.h * a.w), *y = buffer(planes * a.ho * a.wo);
  int32_t *am = calloc((size_t)(planes * a.ho * a.wo), sizeof(int32_t));
  for (int backward = 0; backward <= 1; backward++) {
    if (!a.rcnb) CHECK(backward ? sw_pool_backward_block(&a) : sw_pool_forward_block(&a));
    a.x = x, a.y = y, a.dy = y, a.dx = x, a.argmax = am, a.add = backward;
    if (backward)
      SW_RUN(sw_pool_backward, &a);
    else
      SW_RUN(sw_pool_forward, &a);
    compare(backward ? "pool backward" : "pool forward", sw_pool_work(&a, backward));
  }
  free(x), free(y), free(am);
}

static void lrn(SwLrnArgs a) {
  int64_t n = (int64_t)a.batch * a.c * a.hw;
  float *x = buffer(n), *y = buffer(n), *s = buffer(n), *dx = buffer(n);
  for (int i = 0; i < n; i++) s[i] = 1; /* scale, a power's base */
  for (int backward = 0; backward <= 1; backward++) {
    a.backward = backward, a.pixels = sw_lrn_pixels(a.c, a.hw, backward ? 5 : 2);
    a.x = x, a.y = y, a.scale = s, a.y_in = y, a.scale_in = s, a.dy = x, a.dx = dx;
    SW_RUN(sw_lrn, &a);
    compare(backward ? "lrn backward" : "lrn forward", sw_lrn_work(&a));
  }
  free(x), free(y), free(s), free(dx);
}

/* Three parts: a copy of rows with pitches, a sum of three sources added into dst (rows of
 * 1103: vectors and a scalar tail), one long row. */
static void sums(void) {
  float *a = buffer(20000), *b = buffer(20000), *c = buffer(20000), *d = buffer(20000);
  SwSumArgs s = {.parts = 3};
  s.part[0] = (SwSumPart){
      .src = {a}, .dst = d, .sources = 1, .rows = 7, .cols = 1500, .src_ld = 1500, .dst_ld = 2000};
  s.part[1] = (SwSumPart){.src = {a, b, c},
                          .dst = d + 15000,
                          .sources = 3,
                          .add = 1,
                          .rows = 3,
                          .cols = 1103,
                          .src_ld = 1103,
                          .dst_ld = 1200};
  s.part[2] = (SwSumPart){
      .src = {b}, .dst = c, .sources = 1, .rows = 1, .cols = 9003, .src_ld = 9003, .dst_ld = 9003};
  SW_RUN(sw_sum, &s);
  compare("sum", sw_sum_work(&s));
  free(a), free(b), free(c), free(d);
}

static void accuracy(int classes, int batch) {
  float *s = buffer((int64_t)classes * batch), acc;
  int32_t *labels = calloc((size_t)batch, sizeof(int32_t));
  SwAccuracyArgs a = {.classes = classes,
                      .top = 1,
                      .batch = batch,
                      .scores = s,
                      .labels = labels,
                      .accuracy = &acc};
  SW_RUN(sw_accuracy, &a);
  compare("accuracy", sw_accuracy_work(classes, batch));
  free(s), free(labels);
}

/* Every pass: training forward, inference, recompute, backward with and without dx. */
static void batchnorm(int c, int hw, int batch, int affine) {
  int64_t n = (int64_t)c * hw * batch;
  float *x = buffer(n), *y = buffer(n), *dx = buffer(n), *stats = buffer(4 * c);
  for (int i = 0; i < 4 * c; i++) stats[i] = 1;
  SwBatchNormArgs base = {.c = c,
                          .hw = hw,
                          .batch = batch,
                          .affine = affine,
                          .eps = 1e-5f,
                          .momentum = 0.9f,
                          .x = x,
                          .scale = stats,
                          .shift = stats,
                          .dy = y,
                          .y = y,
                          .saved = stats,
                          .running = stats + 2 * c,
                          .dscale = stats,
                          .dshift = stats + c};
  SwBatchNormArgs passes[5] = {base, base, base, base, base};
  passes[0].train = 1, passes[2].recompute = 1;
  passes[3].backward = 1, passes[3].dx = dx, passes[3].add = 1;
  passes[4].backward = 1;
  for (int i = 0; i < 5; i++) {
    SW_RUN(sw_batchnorm, &passes[i]);
    compare("batch norm", sw_batchnorm_work(&passes[i]));
  }
  free(x), free(y), free(dx), free(stats);
}

static void softmax(int classes, int batch) {
  float *s = buffer((int64_t)classes * batch), *q = buffer((int64_t)classes * batch), loss;
  int32_t *labels = calloc((size_t)batch, sizeof(int32_t));
  for (int backward = 0; backward <= 1; backward++) {
    SwSoftmaxArgs a = {.classes = classes,
                       .batch = batch,
                       .backward = backward,
                       .add = backward,
                       .loss_weight = 1,
                       .scores = s,
                       .labels = labels,
                       .prob = q,
                       .loss = &loss,
                       .dscores = s};
    SW_RUN(sw_softmax_loss, &a);
    compare("softmax loss", sw_softmax_work(classes, batch, backward, backward));
  }
  free(s), free(q), free(labels);
}

int main(void) {
  athread_init();
  for (int single = 0; single < 2; single++) {
    gemm(256, 128, 512, 0, 0, 2, 0, single);
    gemm(64, 96, 192, 0, 1, 3, 1, single);
    gemm(50, 70, 90, 1, 0, 2, 0, single);
    gemm(3, 200, 7, 1, 1, 1, 0, single);
  }
  implicit(conv_row(64, 10, 10, 64, 3, 3, 1, 1, 1, 1, 1, false), 32, 0);
  implicit(conv_row(30, 11, 23, 70, 3, 3, 2, 2, 0, 0, 1, false), 9, 1);
  implicit(conv_row(32, 3, 40, 32, 1, 19, 1, 2, 0, 3, 1, false), 4, 0);
  /* 1x1 stride 2: input pixels no output reads (the data pass writes them apart) */
  implicit(conv_row(16, 9, 9, 24, 1, 1, 2, 2, 0, 0, 1, false), 8, 1);
  /* a filter row no pixel reaches (dW 0) */
  implicit(conv_row(8, 3, 3, 8, 3, 3, 4, 4, 2, 2, 1, false), 4, 0);
  transpose(32, 64, 100, 0);
  transpose(100, 3, 32, 1);
  transpose(5000, 1, 3, 0);
  SwIm2colArgs cols = {.channels = 5,
                       .h = 13,
                       .w = 17,
                       .ho = 7,
                       .wo = 9,
                       .kh = 3,
                       .kw = 3,
                       .sh = 2,
                       .sw = 2,
                       .ph = 1,
                       .pw = 1,
                       .dh = 1,
                       .dw = 1,
                       .images = 3};
  im2col(cols, 0);
  im2col(cols, 1);
  cols.add = 1;
  im2col(cols, 1);
  SwIm2colArgs wide = {.channels = 2,
                       .h = 4,
                       .w = 3000,
                       .ho = 2,
                       .wo = 2996,
                       .kh = 3,
                       .kw = 5,
                       .sh = 1,
                       .sw = 1,
                       .dh = 1,
                       .dw = 1,
                       .images = 2};
  im2col(wide, 0);
  cols.dh = 3, cols.dw = 2, cols.ho = 5, cols.wo = 8; /* dilated: rows 3 apart, columns 2 */
  im2col(cols, 0);
  im2col(cols, 1);
  stream(SW_ACTIVATION, SWN_ACT_relu, 100000, 2);
  stream(SW_ACTIVATION_GRAD, SWN_ACT_relu, 4101, 3);  /* in vectors, a scalar tail of 1 */
  stream(SW_ACTIVATION_GRAD, SWN_ACT_swish, 3000, 3); /* scalar */
  stream(SW_SGD, 0, 5000, 5);
  stream(SW_SUM_INTO, 0, 4099, 3); /* a last chunk of 3 floats: its scalar tail */
  row_sums(70, 3000, 3, 0);
  row_sums(10, 40, 7, 1);
  stream(SW_DROPOUT_GRAD, 0, 3000, 2);
  /* (B,N,R,C) bands of rows, blocks of columns of wide planes (with padding at their edges),
   * a stride wider than the window (rows no window reaches); (R,C,N,B) lane chunks */
  for (int max = 0; max <= 1; max++) {
    pool(pool_floor_row(3, 100, 100, 3, 3, 2, 2, 1, 1, max), 2, 0);
    pool(pool_row(2, 5, 4000, 3, 3, 1, 1, 1, 1, max), 1, 0);
    pool(pool_row(1, 3, 7000, 2, 2, 2, 2, 0, 0, max), 1, 0);
    pool(pool_row(4, 9, 9, 1, 1, 3, 3, 0, 0, max), 2, 0);
    pool(pool_row(40, 9, 9, 3, 3, 2, 2, 1, 1, max), 30, 1);
  }
  lrn((SwLrnArgs){
      .c = 96, .hw = 301, .size = 5, .batch = 2, .alpha = 1e-4f, .beta = 0.75f, .k = 1});
  lrn((SwLrnArgs){
      .c = 6, .hw = 49, .size = 3, .batch = 3, .add = 1, .alpha = 1e-2f, .beta = 0.5f, .k = 2});
  sums();
  accuracy(10, 150);
  batchnorm(5, 1500, 3, 1);  /* a plane in pieces of one run */
  batchnorm(70, 10, 130, 0); /* many images per strided piece, more channels than CPEs */
  softmax(10, 150);
  athread_halt();
  return check_report();
}
