/* The direct convolution's register blocks, written once and included once per instruction
 * set (register_blocks_avx512.c, register_blocks_avx2.c), with STRIP_ATTR (the function
 * attributes), STRIP_VEC (the vector type),
 * STRIP_VL (its floats), STRIP_MAXB / STRIP_MAXP (the most blocks and pixels a strip holds:
 * no code for more), STRIP_LOAD / STRIP_SET1 / STRIP_FMA / STRIP_STORE / STRIP_STREAM (a
 * store past the caches, to an aligned address) / STRIP_ZERO /
 * STRIP_WHERE_POSITIVE (t > 0 ? v : slope * v, lane by lane), STRIP_WHERE_INSIDE
 * (0 < t < ceiling ? v : slope * v), and
 * the names of what it defines: STRIP_NAME and TILE_NAME, dispatchers over the blocks' sizes.
 *
 * Forward (a strip of output pixels): A block of 16 output channels is
 * 16 / STRIP_VL vectors; `nb` blocks (1 or 2) of `np` pixels of one or two rows (ResNet's last
 * stage: 7 pixels a row, 14 a strip) are held in registers while the
 * input channels and taps stream through: per input channel and tap, the filters of the nb
 * blocks are loaded once and every pixel's input is broadcast to them. nb and np are constants
 * where the body is inlined, so the accumulators never leave registers; so is the pixels'
 * distance in the common cases (16 floats: blocked input, stride 1; 1 or 2: a first layer's
 * planar input, stride 1 or 2), whose broadcasts then need no register for their offsets (the
 * general body reloads five of them from the stack per input channel: 5% slower on ResNet's
 * 1x1 layers, 4% on a 3x3, in alternated runs; cifar10_quick's conv1 forward 7%). One block
 * (nb 1) has them too: it is AVX2's only strip (an AVX2 machine, best of 10 runs, 5 rounds:
 * ResNet's res2 1x1 forward 6.5 ms against 7.4 on average, cifar10_quick's conv1 4.7 against
 * 5.2, its conv2 the same). */

#include <assert.h>

#define STRIP_V (16 / STRIP_VL)
/* The loops over a block's accumulators (blocks, rows, pixels, vectors: constants where the body
 * is inlined) unrolled whole, so the accumulators live in registers. -O3 unrolls them itself
 * (and, at 4x the code, took 80 s to compile AVX-512's blocks); at -O2 they stayed loops over
 * arrays on the stack and res3's stride-2 forward ran at under half the rate. With it, the
 * blocks compile at -O2 (targets/host/CMakeLists.txt) in 40 s at -O3's speed: bench/conv_plans
 * 2 8 resnet50, 2 alternated runs, the direct plan's rate 0.95x and 1.02x, Winograd's 0.95x
 * and 1.10x (geometric means over 51 and 38 rows). */
#define STRIP_ALL _Pragma("GCC unroll 32")
/* Software prefetches of the input, where the hardware's fall behind: x's lines are read a pixel
 * (one line) at a time, in runs of a few hundred pixels at places a whole block or plane apart,
 * and each run starts cold. A strip asks for the next input block's pixels (each tap row's, in
 * each column phase of a phase-split x: host_direct_splits_phases) while
 * it works on this one's (about 16 x 28 FMAs later); a tile for the pixel HOST_TILE_PREFETCH
 * ahead of the one it sums (8: 16 ran slower). bench/conv_plans 2 8 resnet50, means of 2
 * alternated runs: the 3x3 stride-2 weight gradients 180 -> 213 (res4) and 157 -> 201 GFLOP/s
 * (res5), res5's 3x3 stride-2 forward 169 -> 207, res2's 256 -> 64 1x1 forward 178 -> 203; the
 * others within noise. Both only where a pixel is a line of its own: a first layer's planar
 * pixels share lines, and cifar10_quick's conv1 forward lost 6% to the strip's prefetches. */

/* The innermost loops unrolled by 4 (their counts are not constants): a stand-alone AVX2 strip
 * (12 FMAs an iteration) ran at 55-65% of a core's rate rolled and 85-95% unrolled while the
 * machine was contended; on a quiet one the two were within 2%. */
#define STRIP_UNROLL _Pragma("GCC unroll 4")

static STRIP_ATTR void STRIP_BODY(const int nb, const int np, const int rows,
                                  const ptrdiff_t x_pixel, const Strip *s) {
  STRIP_VEC acc[STRIP_MAXB][STRIP_MAXP][STRIP_V];
  STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int r = 0; r < rows; r++)
      STRIP_ALL for (int p = 0; p < np; p++) STRIP_ALL for (int v = 0; v < STRIP_V; v++)
          acc[b][r * np + p][v] = s->accumulate ? STRIP_LOAD(s->y + b * s->y_block + r * s->y_rows +
                                                             p * s->y_pixel + v * STRIP_VL)
                                  : s->bias     ? STRIP_LOAD(s->bias + b * 16 + v * STRIP_VL)
                                                : STRIP_ZERO();
  const ptrdiff_t x_rows = s->x_rows;
  /* Strip.ahead's lines, spread evenly over the taps (its fields in locals, as y's below) */
  const StripAhead ahead = s->ahead;
  const int taps = s->blocks_in * (s->kh1 - s->kh0) * s->kw,
            ahead_per_tap = ahead.x && taps > 0 ? (ahead.to - ahead.from + taps - 1) / taps : 0;
  int line = ahead.from;
  /* the next line to prefetch: its run's start and its place in it, divided once here (a
   * division per line was 4% of ResNet-50 res3's 3x3 stride-2 forward, 6 lines a tap) */
  const float *ahead_run = ahead_per_tap ? ahead.x + line / ahead.run * ahead.block : NULL;
  int ahead_at = ahead_per_tap ? line % ahead.run : 0;
  /* The lines of the mask this strip reads at its end and of the sums the next strip starts
   * from, spread over the first half of the taps: read cold, a strip of few input channels
   * waited on them (ResNet-50's 256 -> 64 1x1 input gradient through a ReLU and into a
   * shortcut's gradient, 64 channels a strip: 6.9-7.4 ms, now 5.3-5.5; 4.4 with neither).
   * Output (lb, lr, lp) is the next whose lines are asked for. */
  const int outputs = nb * rows * np, half = (taps + 1) / 2,
            later_per_tap = (s->mask || s->y_next) && half > 0 ? (outputs + half - 1) / half : 0;
  int later = 0, lb = 0, lr = 0, lp = 0;
  for (int cb = 0; cb < s->blocks_in; cb++) {
    int lanes = strip_lanes(s, cb);
    for (int kh = s->kh0; kh < s->kh1; kh++)
      for (int kw = 0; kw < s->kw; kw++) {
        const float *xt = strip_tap_x(s, cb, kh, kw), *wt = strip_tap_w(s, cb, kh, kw);
        for (int end = line + ahead_per_tap < ahead.to ? line + ahead_per_tap : ahead.to;
             line < end; line++) {
          assert(ahead_run + ahead_at * 16 ==
                 ahead.x + line / ahead.run * ahead.block + line % ahead.run * 16);
          __builtin_prefetch(ahead_run + ahead_at * 16, 0, 2);
          if (++ahead_at == ahead.run) ahead_at = 0, ahead_run += ahead.block;
        }
        for (int end = later + later_per_tap < outputs ? later + later_per_tap : outputs;
             later < end; later++) {
          ptrdiff_t at = lb * s->y_block + lr * s->y_rows + lp * s->y_pixel;
          if (s->mask) __builtin_prefetch(s->mask + at);
          if (s->y_next) __builtin_prefetch(s->y_next + at);
          if (++lp == np) {
            lp = 0;
            if (++lr == rows) lr = 0, lb++;
          }
        }
        /* the next block's pixels of this row of taps */
        if (host_pixel_owns_line(x_pixel) && kw < s->phases_w && cb + 1 < s->blocks_in) {
          const float *next = xt + s->x_block;
          STRIP_ALL for (int r = 0; r < rows; r++) STRIP_ALL for (int p = 0; p < np; p++)
              __builtin_prefetch(next + r * x_rows + p * x_pixel);
        }
        STRIP_UNROLL
        for (int l = 0; l < lanes; l++, wt += 16, xt += s->x_lane) {
          STRIP_VEC w[STRIP_MAXB][STRIP_V];
          STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int v = 0; v < STRIP_V; v++)
              w[b][v] = STRIP_LOAD(wt + b * s->w_block + v * STRIP_VL);
          STRIP_ALL for (int r = 0; r < rows; r++) STRIP_ALL for (int p = 0; p < np; p++) {
            STRIP_VEC x = STRIP_SET1(xt[r * x_rows + p * x_pixel]);
            STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int v = 0; v < STRIP_V; v++)
                acc[b][r * np + p][v] = STRIP_FMA(w[b][v], x, acc[b][r * np + p][v]);
          }
        }
      }
  }
  if (s->relu) { /* y > 0 ? y : slope * y, as the ReLU kernel computes it */
    STRIP_VEC slope = STRIP_SET1(s->relu_slope);
    STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int p = 0; p < rows * np; p++)
        STRIP_ALL for (int v = 0; v < STRIP_V; v++) acc[b][p][v] =
            STRIP_WHERE_POSITIVE(acc[b][p][v], acc[b][p][v], slope);
  }
  if (s->mask) { /* 0 < mask < ceiling ? y : slope * y, as the ReLU (ReLU6) backward computes */
    STRIP_VEC slope = STRIP_SET1(s->mask_slope), ceiling = STRIP_SET1(s->mask_ceiling);
    STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int r = 0; r < rows; r++)
        STRIP_ALL for (int p = 0; p < np; p++) STRIP_ALL for (int v = 0; v < STRIP_V; v++) {
      const float *m = s->mask + b * s->y_block + r * s->y_rows + p * s->y_pixel;
      acc[b][r * np + p][v] =
          STRIP_WHERE_INSIDE(STRIP_LOAD(m + v * STRIP_VL), acc[b][r * np + p][v], slope, ceiling);
    }
  }
  /* in locals: a vector store may alias anything, so s's fields would be read again per store */
  float *const y = s->y;
  const ptrdiff_t y_block = s->y_block, y_pixel = s->y_pixel, y_rows = s->y_rows;
  if (s->stream) {
    STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int r = 0; r < rows; r++)
        STRIP_ALL for (int p = 0; p < np; p++) STRIP_ALL for (int v = 0; v < STRIP_V; v++)
            STRIP_STREAM(y + b * y_block + r * y_rows + p * y_pixel + v * STRIP_VL,
                         acc[b][r * np + p][v]);
    return;
  }
  STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int r = 0; r < rows; r++)
      STRIP_ALL for (int p = 0; p < np; p++) STRIP_ALL for (int v = 0; v < STRIP_V; v++)
          STRIP_STORE(y + b * y_block + r * y_rows + p * y_pixel + v * STRIP_VL,
                      acc[b][r * np + p][v]);
}

#define STRIP_PIXELS(NB, P)                                                                        \
  if (s->x_pixel == 16)                                                                            \
    STRIP_BODY(NB, P, 1, 16, s);                                                                   \
  else if (s->x_pixel == 1)                                                                        \
    STRIP_BODY(NB, P, 1, 1, s);                                                                    \
  else if (s->x_pixel == 2)                                                                        \
    STRIP_BODY(NB, P, 1, 2, s);                                                                    \
  else                                                                                             \
    STRIP_BODY(NB, P, 1, s->x_pixel, s);

/* Two rows: of a blocked input at stride 1 or 2 (16 or 32 floats apart); a first layer's planar
 * input has rows too wide for them. */
#define STRIP_TWO_ROWS(NB, P)                                                                      \
  if (s->x_pixel == 16)                                                                            \
    STRIP_BODY(NB, P, 2, 16, s);                                                                   \
  else if (s->x_pixel == 32)                                                                       \
    STRIP_BODY(NB, P, 2, 32, s);                                                                   \
  else                                                                                             \
    STRIP_BODY(NB, P, 2, s->x_pixel, s);

/* Two rows only where they fit the registers (direct_tiling.h asks no more) */
#define STRIP_ROWS(NB, P)                                                                          \
  if (2 * (P) <= STRIP_MAXP && s->rows == 2) {                                                     \
    STRIP_TWO_ROWS(NB, (2 * (P) <= STRIP_MAXP ? (P) : 1))                                          \
  } else {                                                                                         \
    STRIP_PIXELS(NB, P)                                                                            \
  }

#define STRIP_CASE(P)                                                                              \
  case P:                                                                                          \
    if (STRIP_MAXB == 2 && nb == 2) {                                                              \
      STRIP_ROWS(2, P)                                                                             \
    } else {                                                                                       \
      STRIP_ROWS(1, P)                                                                             \
    }                                                                                              \
    break;

static STRIP_ATTR_OUTER void STRIP_NAME(int nb, int np, const Strip *s) {
  if (CHECKING_REGIONS) host_check_strip(nb, np, s);
  switch (np) { STRIP_CASES(STRIP_CASE) }
}

#undef STRIP_CASE
#undef STRIP_ROWS
#undef STRIP_TWO_ROWS
#undef STRIP_PIXELS

/* Weight gradient (a tile of filters): the sums of nb blocks of 16 output channels (lanes) by
 * nl input channels of one tap stay in registers while a run of output pixels streams through:
 * per pixel the nb dY vectors are loaded and each input channel's x broadcast against them. */
static STRIP_ATTR void TILE_BODY(const int nb, const int nl, const Tile *t) {
  STRIP_VEC acc[STRIP_MAXB][TILE_LANES][STRIP_V];
  STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int i = 0; i < nl; i++)
      STRIP_ALL for (int v = 0; v < STRIP_V; v++) acc[b][i][v] =
          t->fresh ? STRIP_ZERO() : STRIP_LOAD(t->sum + b * t->sum_block + i * 16 + v * STRIP_VL);
  const bool line_per_pixel = host_pixel_owns_line(t->x_pixel);
  for (int n = 0; n < t->images; n++)
    for (int r = 0; r < t->rows; r++) {
      const float *dy = t->dy + n * t->dy_image + r * t->dy_row;
      const float *x = t->x + n * t->x_image + r * t->x_row;
      STRIP_UNROLL
      for (int ow = 0; ow < t->wo; ow++, dy += 16, x += t->x_pixel) {
        if (line_per_pixel) __builtin_prefetch(x + HOST_TILE_PREFETCH * t->x_pixel);
        STRIP_VEC d[STRIP_MAXB][STRIP_V];
        STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int v = 0; v < STRIP_V; v++) d[b][v] =
            STRIP_LOAD(dy + b * t->dy_block + v * STRIP_VL);
        STRIP_ALL for (int i = 0; i < nl; i++) {
          STRIP_VEC xi = STRIP_SET1(x[i * t->x_lane]);
          STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int v = 0; v < STRIP_V; v++)
              acc[b][i][v] = STRIP_FMA(d[b][v], xi, acc[b][i][v]);
        }
      }
    }
  float *const sum = t->sum; /* in locals, as the strip's y */
  const ptrdiff_t sum_block = t->sum_block;
  STRIP_ALL for (int b = 0; b < nb; b++) STRIP_ALL for (int i = 0; i < nl; i++)
      STRIP_ALL for (int v = 0; v < STRIP_V; v++)
          STRIP_STORE(sum + b * sum_block + i * 16 + v * STRIP_VL, acc[b][i][v]);
}

#define TILE_CASE(L)                                                                               \
  case L:                                                                                          \
    if (STRIP_MAXB == 2 && nb == 2)                                                                \
      TILE_BODY(2, L, t);                                                                          \
    else                                                                                           \
      TILE_BODY(1, L, t);                                                                          \
    break;

static STRIP_ATTR_OUTER void TILE_NAME(int nb, int nl, const Tile *t) {
  if (CHECKING_REGIONS) host_check_tile(nb, nl, t);
  switch (nl) { TILE_CASES(TILE_CASE) }
}

#undef TILE_CASE
#undef STRIP_V
#undef STRIP_UNROLL
