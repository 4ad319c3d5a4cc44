/* Direct convolution on the channel-blocked layout (conv_direct.h). Output channels are the
 * vector lanes: a register block holds one or two blocks of 16 output channels for a strip of
 * up to 14 output pixels of one row (AVX-512: 28 accumulators; AVX2: one block of 6 pixels,
 * 12), and per input channel and tap the strip's filters are loaded once and each pixel's input
 * is broadcast against them: two loads' worth of filters and one broadcast per pixel feed
 * 2 x 14 FMAs. Rows of taps in the vertical padding are skipped; for the horizontal padding
 * each thread copies the rows of the image it works on with zero columns at both sides, just
 * before the strips that read them, into a window of a few rows (a copy costs what one pass
 * over the input does; strips of edge pixels with their own taps ran at a quarter of the
 * speed), so that every strip has all kw taps (the weight gradient's tiles, one
 * tap each, skip the columns outside instead: visit_tile). The filters, (No, Ni, K, K) as
 * every plan keeps them, are packed per call into (No/16, Ni/16, K, K, 16 input, 16 output),
 * zero outside the channels. Threads split strips of pixels (forward, input gradient) or tiles
 * of the weight gradient evenly, so results do not depend on their number: each output is one
 * sum in one order. */
#include "conv_direct.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "balance.h"
#include "direct_tiling.h"
#include "register_blocks.h"
#include "vec16.h"
#include "stream.h"
#include "transpose8.h"
#include "unchecked.h"
#include "workspace.h"

_Static_assert(HOST_TILE_FLOATS == 2 * TILE_LANES * 16, "workspace.h's tile, register_blocks.h's");

/* ------------------------------------------------------------------ packing */

static int smaller_of(int a, int b) { return a < b ? a : b; }
static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* An input-gradient tile (ob, ib)'s filters are 16 runs of 16 x kh x kw floats, a filter apart:
 * for a 1x1 filter 16 floats 4 KB apart (ResNet's last stage), which the hardware's prefetchers
 * do not follow, and the packing waited on memory line by line. Where runs are that short
 * (fewer than 8 taps) the tile 8 / taps on (about 8 lines a run ahead) is fetched while this
 * one is packed: res5's 1x1 and projection input gradients 9-12% faster stand-alone (filters
 * out of cache; packing 21% -> 11% of the projection's). Longer runs the prefetchers follow
 * (3x3: no gain). */
static void prefetch_ahead(const SwkConv *p, const float *w, int ob, int ib) {
  int taps = p->kh * p->kw;
  if (taps >= 8) return;
  int first = (ib + 8 / taps) * 16;
  for (int i = 0; i < 16 && first + i < p->co; i++) {
    const float *run = w + ((size_t)(first + i) * (size_t)p->ci + (size_t)ob * 16) * (size_t)taps;
    for (int f = 0; f < 16 * taps + 16; f += 16) __builtin_prefetch(run + f);
  }
}

/* A forward's whole tile (16 x 16 channels): filter o's 16 input channels' taps [16 in][taps]
 * at src + o out_step, by 8 x 8 transposes of 8 filters' consecutive floats, a tap's 8 output
 * channels coming out as one vector. A float at a time, 1x1 layers' packing (a float's worth of
 * work per float moved) held them back: res5's 2048 -> 512 and its projection forward 6%
 * faster, res4's 1x1 2.5% (stand-alone, filters out of cache, 8-10 alternated pairs), 3x3
 * unchanged. */
static void pack_tiles_transposed(const float *src, ptrdiff_t out_step, int taps, float *dst) {
  for (int o0 = 0; o0 < 16; o0 += 8)
    for (int j0 = 0, i = 0, t = 0; j0 < 16 * taps; j0 += 8) { /* float j: input i, tap t */
      HostV8 column[8];
      host_transpose8(src + o0 * out_step + j0, (size_t)out_step, column);
      for (int j = 0; j < 8; j++) {
        memcpy(dst + t * 256 + i * 16 + o0, &column[j], sizeof column[j]);
        if (++t == taps) t = 0, i++;
      }
    }
}

/* The tiles of output block ob and input block ib, [kh][kw][16 in][16 out], into dst from p's
 * filters w: p's own (forward, phase NULL), or those of an input-gradient phase (q's outputs
 * are p's inputs, its taps p's taps of the phase, flipped). Written in order (a forward's whole
 * tiles by pack_tiles_transposed), a 16-float line of output channels at a time, each read
 * from 16 filters a filter (or, for a phase, a tap run) apart: those 16 x 16 taps are a few
 * KB, read from L1 for the tap after. Writing in the source's order instead scattered every
 * float to its own line of a block of a few hundred KB, beyond L1: 21% of ResNet-50 res5's 3x3
 * stride-2 forward and 43% of its input gradient went to packing. */
static void pack_tiles(const SwkConv *p, const float *w, const HostPhase *phase, int ob, int ib,
                       float *dst) {
  const SwkConv *q = phase ? &phase->q : p;
  int taps = q->kh * q->kw, p_taps = p->kh * p->kw;
  int no = smaller_of(16, q->co - ob * 16), ni = smaller_of(16, q->ci - ib * 16);
  if (!phase && ni == 16 && no == 16) {
    pack_tiles_transposed(w + ((size_t)ob * 16 * (size_t)p->ci + (size_t)ib * 16) * (size_t)taps,
                          (ptrdiff_t)p->ci * taps, taps, dst);
    return;
  }
  for (int t = 0; t < taps; t++, dst += 256) {
    if (ni < 16 || no < 16) memset(dst, 0, sizeof(float) * 256);
    const float *src; /* lane 0's output channel 0 */
    ptrdiff_t lane_step, out_step;
    if (!phase) {
      src = w + ((size_t)ob * 16 * (size_t)p->ci + (size_t)ib * 16) * (size_t)taps + (size_t)t;
      lane_step = taps, out_step = (ptrdiff_t)p->ci * taps;
    } else { /* q's input channel is p's output channel; its taps run backwards */
      int th = t / q->kw, tw = t % q->kw, kh = phase->kh0 + p->sh * (q->kh - 1 - th),
          kw = phase->kw0 + p->sw * (q->kw - 1 - tw);
      src = w + ((size_t)ib * 16 * (size_t)p->ci + (size_t)ob * 16) * (size_t)p_taps +
            (size_t)(kh * p->kw + kw);
      lane_step = (ptrdiff_t)p->ci * p_taps, out_step = p_taps;
    }
    if (out_step == 1 && no == 16) /* a 1x1 filter's input gradient: a lane's outputs are a line */
      for (int i = 0; i < ni; i++) memcpy(dst + i * 16, src + i * lane_step, sizeof(float) * 16);
    else
      for (int i = 0; i < ni; i++)
        for (int o = 0; o < no; o++) dst[i * 16 + o] = src[i * lane_step + o * out_step];
  }
  if (phase) prefetch_ahead(p, w, ob, ib);
}

/* The packing of q's filters for direct(): q is p (the forward, phase NULL) or one phase of
 * p's input gradient, its tiles output block outer (conv_direct.h). Two ways:
 * - whole: all of them packed up front into `whole`, q's packing in the convolution's
 *   (host_conv_direct_workspace: for the input gradient every phase's, one after the other,
 *   packed the first time any phase needs them). Images outer the first image's strips need
 *   every group. An input gradient of several phases, run one after the other, packs so too:
 *   by group and phase, each phase's packing re-read all of a group's filters (res5's 3x3
 *   stride-2 input gradient 4-7% slower);
 * - by group (filters outer, the forward or an input gradient of one phase that runs:
 *   host_direct_single_phase): each thread packs the group it is about to run into
 *   a buffer of its own (`own`, a group each), as its strips reach it. The group's tiles (590 KB
 *   for ResNet-50 res5's 3x3 layers) are written into that core's L2 and read from there by
 *   its strips, and one thread's packing, bound by memory, overlaps the other's strips. Packed
 *   whole, both threads waited on memory together, the 9.4 MB went out to L3 or memory and
 *   came back, and res5's 3x3 stride-2 forward lost 4-5% more to it. A group whose strips both
 *   threads run (at the end of the queue) is packed by both. */
typedef struct Packing {
  const SwkConv *p;
  const float *w;
  const HostPhase *phase; /* NULL: the forward */
  bool input_gradient;
  float *whole;     /* every phase's packing, or the forward's */
  float *of_q;      /* q's within it */
  bool *whole_done; /* whether `whole` holds them (set by the first images-outer phase) */
  float *own;       /* a group for each thread, host_direct_group_floats(q) apart; NULL: whole */
} Packing;

/* Output block ob's tiles: p's own (forward), or of every phase of p's input gradient, each
 * phase's packing after the one before it (host_direct_phase_packed_floats), into `whole`.
 * The phases take their turn per input block, while its filters' lines are in L1: packed
 * phase after phase, each re-read all of them, and with 3x3 stride 2 (4 phases) the packing
 * took 23% of ResNet-50 res5's input gradient on one thread, against 10% of its forward. */
static void pack_block_whole(const Packing *k, int ob) {
  const SwkConv *p = k->p;
  int bi = host_blocks(k->input_gradient ? p->co : p->ci);
  for (int ib = 0; ib < bi; ib++) {
    if (!k->input_gradient) {
      pack_tiles(p, k->w, NULL, ob, ib, k->whole + ((size_t)ob * bi + ib) * p->kh * p->kw * 256);
      continue;
    }
    float *at = k->whole;
    for (int rh = 0; rh < p->sh; rh++)
      for (int rw = 0; rw < p->sw; rw++) {
        HostPhase f = host_direct_phase(p, rh, rw);
        if (host_direct_phase_runs(&f))
          pack_tiles(p, k->w, &f, ob, ib, at + ((size_t)ob * bi + ib) * f.q.kh * f.q.kw * 256);
        at += host_direct_phase_packed_floats(&f);
      }
  }
}

/* `whole` packed, shared by the team of threads calling it (a work-sharing loop: all must). */
static void pack_whole(const Packing *k) {
  if (*k->whole_done) return;
  int bo = host_blocks(k->input_gradient ? k->p->ci : k->p->co);
#pragma omp for schedule(static)
  for (int ob = 0; ob < bo; ob++) pack_block_whole(k, ob);
    /* the loop's barrier orders every thread's reading of the flag before its setting */
#pragma omp single
  *k->whole_done = true;
}

/* The tiles of q's output blocks [ob0, ob1) packed into dst. */
static void pack_group(const Packing *k, int ob0, int ob1, float *dst) {
  const SwkConv *q = k->phase ? &k->phase->q : k->p;
  int bi = host_blocks(q->ci), taps = q->kh * q->kw;
  for (int ob = ob0; ob < ob1; ob++)
    for (int ib = 0; ib < bi; ib++, dst += (size_t)taps * 256)
      pack_tiles(k->p, k->w, k->phase, ob, ib, dst);
}

/* ------------------------------------------------------------------ images */

/* The copies (host_direct_copies) are made row by row as the strips reach them: rows of a
 * copy are its rows of pixels per block of 16 channels (per channel if it holds planes), and
 * per phase if split; a thread copies the rows the strips of an output row read just before
 * running them, and prefetches the source of the rows the next output row will read. Copied
 * whole up front, ResNet-50's 3x3 stride-2 layers (inputs four times their outputs) spent 11%
 * of their forward in the copy, its reads from memory overlapping nothing. */
static int copy_rows(const SwkConv *p, bool x_planar) {
  return host_direct_splits_phases(p, x_planar) ? host_direct_phase_split(p).rows : p->h;
}

/* The rows of the copy that output rows [oh, oh + rows) read, as [*r0, *r1). */
static void copy_rows_read(const SwkConv *p, bool x_planar, int oh, int rows, int *r0, int *r1) {
  if (host_direct_splits_phases(p, x_planar)) { /* tap kh: phase kh % sh, row oh + kh / sh */
    *r0 = oh, *r1 = oh + rows + (p->kh - 1) / p->sh;
  } else { /* tap kh: input row oh sh - ph + kh, the vertical padding skipped */
    *r0 = oh * p->sh - p->ph, *r1 = (oh + rows - 1) * p->sh - p->ph + p->kh;
  }
  int n = copy_rows(p, x_planar);
  *r0 = *r0 < 0 ? 0 : *r0 > n ? n : *r0;
  *r1 = *r1 < *r0 ? *r0 : *r1 > n ? n : *r1;
}

/* Where a copy's rows go: runs (per block, phase or plane) of `held` rows from row lo (a
 * window over the rows; held = all from 0: the whole image). */
typedef struct Window {
  int held, lo;
} Window;

/* Where copy row r of run k goes, rows `row` floats long. */
static float *window_row(float *dst, Window win, size_t k, int r, size_t row) {
  return dst + (k * (size_t)win.held + (size_t)(r - win.lo)) * row;
}

/* Copy rows [r0, r1) of image `image` of blocked x with few channels, as planes whose rows are
 * widened as the padded copy's. */
static void planes_rows(const SwkConv *p, const float *x, int image, int r0, int r1, Window win,
                        float *dst) {
  size_t row = (size_t)(p->w + 2 * p->pw), plane = (size_t)p->h * (size_t)p->w * HOST_BLOCK;
  const float *src = x + (size_t)image * host_direct_image_floats(p, false);
  for (int c = 0; c < p->ci; c++)
    for (int r = r0; r < r1; r++) {
      float *d = window_row(dst, win, (size_t)c, r, row);
      const float *s = src + (size_t)(c / HOST_BLOCK) * plane +
                       (size_t)r * (size_t)p->w * HOST_BLOCK + (size_t)(c % HOST_BLOCK);
      memset(d, 0, sizeof(float) * (size_t)p->pw);
      for (int col = 0; col < p->w; col++) d[p->pw + col] = s[(size_t)col * HOST_BLOCK];
      memset(d + p->pw + p->w, 0, sizeof(float) * (size_t)p->pw);
    }
}

/* Copy rows [i0, i1) of image `image` of blocked x split into its stride phases
 * (host_direct_splits_phases): per input block, phase (a, b)'s rows of pixels
 * (sh i + a - ph, sw j + b - pw), zeros outside the image. The input is read in its order (row
 * i's phases a, then each pixel's phases b), the phases' rows written side by side: phase by
 * phase, short runs of every other pixel (7 in ResNet's last stage) that the prefetchers did not
 * follow, the copy waited on memory for each (7% of res5's 3x3 stride-2 forward). */
static void split_rows(const SwkConv *p, const float *x, int image, int i0, int i1, Window win,
                       float *dst) {
  HostPhaseSplit g = host_direct_phase_split(p);
  size_t row = (size_t)g.cols * HOST_BLOCK;
  const float *src = x + (size_t)image * host_direct_image_floats(p, false);
  for (int cb = 0; cb < host_blocks(p->ci); cb++)
    for (int i = i0; i < i1; i++)
      for (int a = 0; a < g.phases_h; a++) {
        size_t run = ((size_t)cb * (size_t)g.phases_h + (size_t)a) * (size_t)g.phases_w;
        int ih = p->sh * i + a - p->ph;
        if (ih < 0 || ih >= p->h) {
          for (int b = 0; b < g.phases_w; b++)
            memset(window_row(dst, win, run + (size_t)b, i, row), 0, sizeof(float) * row);
          continue;
        }
        const float *in = src + ((size_t)cb * (size_t)p->h + (size_t)ih) * (size_t)p->w * 16;
        for (int j = 0; j < g.cols; j++)
          for (int b = 0; b < g.phases_w; b++) {
            float *d = window_row(dst, win, run + (size_t)b, i, row) + j * 16;
            int iw = p->sw * j + b - p->pw;
            if (iw < 0 || iw >= p->w)
              memset(d, 0, sizeof(float) * 16);
            else
              memcpy(d, in + (size_t)iw * 16, sizeof(float) * 16);
          }
      }
}

/* Copy rows [r0, r1) of image `image` of x as the kernels read it into its copy dst: split
 * into its stride phases, or its rows widened by pw zero columns at both sides, in planes if
 * few channels. */
static void pad_rows(const SwkConv *p, const float *x, bool x_planar, int image, int r0, int r1,
                     Window win, float *dst) {
  if (host_direct_splits_phases(p, x_planar)) {
    split_rows(p, x, image, r0, r1, win, dst);
    return;
  }
  if (!x_planar && host_direct_few_channels(p)) {
    planes_rows(p, x, image, r0, r1, win, dst);
    return;
  }
  int pixel = x_planar ? 1 : HOST_BLOCK;
  int planes = x_planar ? p->ci : host_blocks(p->ci);
  size_t row = (size_t)p->w * (size_t)pixel, side = (size_t)p->pw * (size_t)pixel;
  const float *src = x + (size_t)image * (size_t)planes * (size_t)p->h * row;
  for (int c = 0; c < planes; c++)
    for (int r = r0; r < r1; r++) {
      size_t at = (size_t)c * (size_t)p->h + (size_t)r;
      float *d = window_row(dst, win, (size_t)c, r, row + 2 * side);
      memset(d, 0, sizeof(float) * side);
      memcpy(d + side, src + at * row, sizeof(float) * row);
      memset(d + side + row, 0, sizeof(float) * side);
    }
}

/* The whole of image `image`'s copy. */
static void pad_image(const SwkConv *p, const float *x, bool x_planar, int image, float *dst) {
  int n = copy_rows(p, x_planar);
  pad_rows(p, x, x_planar, image, 0, n, (Window){.held = n}, dst);
}

/* A copy's runs of rows (per block, phase or plane) and the floats of one of its rows. */
static void copy_runs(const SwkConv *p, bool x_planar, int *runs, size_t *row) {
  if (host_direct_splits_phases(p, x_planar)) {
    HostPhaseSplit g = host_direct_phase_split(p);
    *runs = host_blocks(p->ci) * g.phases_h * g.phases_w, *row = (size_t)g.cols * HOST_BLOCK;
    return;
  }
  bool planes = x_planar || host_direct_few_channels(p);
  *runs = planes ? p->ci : host_blocks(p->ci);
  *row = (size_t)(p->w + 2 * p->pw) * (planes ? 1 : HOST_BLOCK);
}

/* Moves rows [r0, r1) of every run of a window to its start. */
static void slide_rows(const SwkConv *p, bool x_planar, Window win, int r0, int r1, float *dst) {
  int runs;
  size_t row;
  copy_runs(p, x_planar, &runs, &row);
  for (int k = 0; k < runs; k++)
    memmove(window_row(dst, win, (size_t)k, win.lo, row), window_row(dst, win, (size_t)k, r0, row),
            sizeof(float) * (size_t)(r1 - r0) * row);
}

/* The source of copy rows [r0, r1) of image `image` of a blocked x, as lines for the strips
 * to prefetch (Strip.ahead): one run of whole rows per input block. */
static StripAhead source_lines(const SwkConv *p, const float *x, int image, int r0, int r1) {
  bool split = host_direct_splits_phases(p, false);
  /* a split copy's row i reads input rows [sh i - ph, sh i - ph + phases_h) */
  int from = split ? p->sh * r0 - p->ph : r0, to = split ? p->sh * r1 - p->ph : r1;
  from = from < 0 ? 0 : from, to = to > p->h ? p->h : to;
  if (to <= from) return (StripAhead){0};
  size_t row = (size_t)p->w * HOST_BLOCK, plane = (size_t)p->h * row;
  int run = (to - from) * p->w; /* a pixel is a line */
  return (StripAhead){.x = x + (size_t)image * host_direct_image_floats(p, false) +
                           (size_t)from * row,
                      .block = (ptrdiff_t)plane,
                      .run = run,
                      .to = run * host_blocks(p->ci)};
}

/* The rows [win.lo, hi) of image `image` (-1: none) a thread's copy holds in its window, and
 * the source lines of the rows the next output row will read, for its strips to
 * prefetch. Prefetching the copy's own lines too, for writing, ran ResNet-50's res3 3x3
 * stride-2 forward 7% slower. */
typedef struct Copied {
  int image, hi;
  Window win;
  StripAhead next;
} Copied;

/* The image a thread reads for output rows [oh, oh + rows): x's own, or its copy in `mine`,
 * holding at least the rows those output rows read (a thread's strips come in order: the rows
 * copied only grow, but when it moves to another image or back to earlier rows). */
static const float *image_view(const SwkConv *p, const float *x, bool x_planar, int image, int oh,
                               int rows, float *mine, Copied *have) {
  if (!host_direct_copies(p, x_planar))
    return x + (size_t)image * host_direct_image_floats(p, x_planar);
  int r0, r1;
  copy_rows_read(p, x_planar, oh, rows, &r0, &r1);
  if (have->image != image || r0 < have->win.lo || r0 > have->hi)
    have->image = image, have->win.lo = have->hi = r0;
  if (r1 - have->win.lo > have->win.held) { /* the window moves on to row r0 */
    slide_rows(p, x_planar, have->win, r0, have->hi, mine);
    have->win.lo = r0;
  }
  if (r1 > have->hi) {
    pad_rows(p, x, x_planar, image, have->hi, r1, have->win, mine);
    /* the next output row's new rows, as many as these; only where a pixel is a line (a
     * planar first layer's lines hold many) */
    int n = copy_rows(p, x_planar), ahead = r1 + (r1 - have->hi) < n ? r1 + (r1 - have->hi) : n;
    bool lines = !x_planar && !host_direct_few_channels(p) && ahead > r1;
    have->next = lines ? source_lines(p, x, image, r1, ahead) : (StripAhead){0};
    have->hi = r1;
  }
  return mine;
}

/* Strides of an image as the kernels read it: between its rows and columns of taps, lanes and
 * blocks; between the phases of a phase-split image (host_direct_splits_phases: phases_h x
 * phases_w of them; else one); between the inputs of successive output rows and pixels; and
 * the rows of padding above, which a padded copy does not hold and a split one does. */
typedef struct View {
  ptrdiff_t row, col, lane, block;
  int phases_h, phases_w;
  ptrdiff_t row_phase, col_phase;
  ptrdiff_t next_row, next_pixel;
  int top;
  int first; /* the copy row a window starts at (image_view) */
} View;

/* x as given (pw 0) or padded by pw columns, `held` rows a plane */
static View view_of(const SwkConv *p, bool given_planar, int pw, int held) {
  bool x_planar = given_planar || host_direct_few_channels(p);
  View v = {.row = (ptrdiff_t)(p->w + 2 * pw) * (x_planar ? 1 : HOST_BLOCK)};
  v.col = x_planar ? 1 : HOST_BLOCK;
  v.lane = x_planar ? (ptrdiff_t)held * v.row : 1;
  v.block = (x_planar ? HOST_BLOCK : 1) * (ptrdiff_t)held * v.row; /* 16 channels */
  v.phases_h = v.phases_w = 1;
  v.next_row = (ptrdiff_t)p->sh * v.row, v.next_pixel = (ptrdiff_t)p->sw * v.col;
  v.top = p->ph;
  return v;
}

/* x split into its stride phases (split_rows), `held` rows a phase */
static View split_view(const SwkConv *p, int held) {
  HostPhaseSplit g = host_direct_phase_split(p);
  View v = {.row = (ptrdiff_t)g.cols * HOST_BLOCK, .col = HOST_BLOCK, .lane = 1};
  v.phases_h = g.phases_h, v.phases_w = g.phases_w;
  v.col_phase = (ptrdiff_t)held * v.row, v.row_phase = g.phases_w * v.col_phase;
  v.block = g.phases_h * v.row_phase;
  v.next_row = v.row, v.next_pixel = v.col;
  return v;
}

/* ------------------------------------------------------------------ the forward pass */

/* Where a convolution's outputs go: image n's pixel (oh, ow) of output block b at y + n * image
 * + b * block + oh * row + ow * pixel (an input-gradient phase's are strided in dX); its input
 * is read from `shift` columns into the padded view (host_direct_phase). */
typedef struct Placement {
  float *y;
  ptrdiff_t image, block, row, pixel;
  int shift;
  bool stream;       /* the last pass stores with streaming stores (set by direct()) */
  const float *mask; /* not NULL: the ReLU output masking the last pass's stores, at y's offsets
                        from it (SwkConv.dx_relu), with mask_slope */
  float mask_slope, mask_ceiling;
} Placement;

/* q's outputs as one blocked tensor of their own. */
static Placement compact(const SwkConv *q, float *y) {
  ptrdiff_t row = (ptrdiff_t)q->wo * 16, block = (ptrdiff_t)q->ho * row;
  return (Placement){
      .y = y, .image = host_blocks(q->co) * block, .block = block, .row = row, .pixel = 16};
}

/* Output pixels [ow, ow + np) of rows [oh, oh + rows) of one image (x: its view), or with
 * x_image (not 0) of row oh of `rows` images (the next image's view x_image floats on), for
 * output blocks [ob, ob + nb), summing input blocks [c0, c1): the first of them adds the bias
 * (or to y), the others add to y. */
static void compute_strip(const DirectIsa *k, const SwkConv *p, const float *x, View v,
                          ptrdiff_t x_image, const float *tiles, int tiles_ob, const float *bias,
                          bool accumulate, const Placement *at, int image, int ob, int nb, int oh,
                          int rows, int ow, int np, int c0, int c1, StripAhead ahead,
                          const float *y_next) {
  int bi = host_blocks(p->ci), taps = p->kh * p->kw, ih = oh * p->sh - p->ph;
  ptrdiff_t y_at = image * at->image + ob * at->block + oh * at->row + ow * at->pixel;
  Strip s = {.x = x,
             .x_offset = oh * v.next_row - (v.top + v.first) * v.row + ow * v.next_pixel +
                         at->shift * v.col + c0 * v.block,
             .x_block = v.block,
             .x_row = v.row,
             .x_col = v.col,
             .x_pixel = v.next_pixel,
             .x_lane = v.lane,
             .phases_h = v.phases_h,
             .phases_w = v.phases_w,
             .x_row_phase = v.row_phase,
             .x_col_phase = v.col_phase,
             .rows = rows,
             .x_rows = x_image ? x_image : v.next_row,
             .blocks_in = c1 - c0,
             .lanes_last = c1 < bi ? 16 : p->ci - (bi - 1) * 16,
             .kh = p->kh,
             .kw = p->kw,
             .kh0 = ih < 0 ? -ih : 0,
             .kh1 = p->h - ih < p->kh ? p->h - ih : p->kh,
             .w = tiles + ((size_t)(ob - tiles_ob) * (size_t)bi + (size_t)c0) * (size_t)taps * 256,
             .w_block = (ptrdiff_t)bi * taps * 256,
             .bias = bias && !c0 ? bias + ob * 16 : NULL,
             .y = at->y + y_at,
             .y_block = at->block,
             .y_pixel = at->pixel,
             .y_rows = x_image ? at->image : at->row,
             .accumulate = accumulate || c0,
             .relu = p->relu && c1 == bi, /* the last pass over the input blocks */
             .relu_slope = p->relu_slope,
             .stream = at->stream && c1 == bi,
             .mask = at->mask && c1 == bi ? at->mask + y_at : NULL,
             .mask_slope = at->mask_slope,
             .mask_ceiling = at->mask_ceiling,
             .ahead = ahead,
             .y_next = y_next};
  k->strip(nb, np, &s);
}

/* The strips of one convolution as direct() runs them: item i is strip (i % strips) of row
 * group (i / strips % row groups: direct_tiling.h) of image (i / strips / row groups % batch),
 * for group (i / strips / row groups / batch) of output blocks filters outer, for all groups
 * images outer. */
typedef struct Strips {
  const DirectIsa *isa;
  const SwkConv *q;
  const Placement *at;
  const Packing *pack;
  const float *x, *bias;
  bool x_planar, accumulate, batch_padded;
  HostDirectTiling tiling;
  HostStripRows rows;
  View view;
  int batch, groups, strips, pixels, blocks_in, pass;
  int units;       /* images, or pairs of them */
  long items, run; /* all; a run shares each pass over the input blocks */
  size_t padded_image;
  int held;          /* the rows a thread's copy of an image holds (held_rows) */
  ptrdiff_t x_image; /* not 0: a strip holds one row of two images (host_strip_image_pairs),
                        the second's view this many floats on */
} Strips;

/* The rows a thread's copy of an image holds: a window four times as deep as the rows one
 * strip reads, which stays in L2 beside the filters, in one pass over the input blocks (a later
 * pass comes back to an image's first rows); else all of them. */
static int held_rows(const Strips *r) {
  const SwkConv *q = r->q;
  int all = copy_rows(q, r->x_planar), most = r->rows.rows;
  if (!host_direct_copies(q, r->x_planar) || r->batch_padded || r->pass < r->blocks_in) return all;
  int span = host_direct_splits_phases(q, r->x_planar) ? most + (q->kh - 1) / q->sh
                                                       : (most - 1) * q->sh + q->kh;
  return 4 * span < all ? 4 * span : all;
}

/* Share k of `shares` of the lines to prefetch (none in passes but the first over the input
 * blocks: those rows are copied): a row group's strips split them evenly. */
static StripAhead ahead_share(const Copied *have, int c0, int shares, int k) {
  if (c0) return (StripAhead){0};
  StripAhead a = have->next;
  long all = have->next.to;
  a.from = (int)(all * k / shares), a.to = (int)(all * (k + 1) / shares);
  return a;
}

/* Where item i's strips are: image, output rows [oh, oh + rows), pixels [ow, ow + np) of
 * them, strip index; and the group of output blocks it is for, filters outer (else 0). */
typedef struct StripPlace {
  int image, oh, rows, ow, np, strip, group;
} StripPlace;

static StripPlace strip_place(const Strips *r, long i) {
  StripPlace at = {.strip = (int)(i % r->strips)};
  int row_groups = r->rows.groups;
  at.oh = host_strip_row_group(&r->rows, (int)(i / r->strips % row_groups), &at.rows);
  int unit = (int)(i / r->strips / row_groups % r->units);
  at.group = (int)(i / r->strips / row_groups / r->units);
  at.image = r->x_image ? 2 * unit : unit;
  if (r->x_image) at.rows = r->batch - at.image < 2 ? 1 : 2;
  at.ow = at.strip * r->pixels;
  at.np = r->q->wo - at.ow < r->pixels ? r->q->wo - at.ow : r->pixels;
  return at;
}

/* The first output of output block ob at a strip's place. */
static const float *strip_y(const Strips *r, const StripPlace *at, int ob) {
  const Placement *p = r->at;
  return p->y + at->image * p->image + ob * p->block + at->oh * p->row + at->ow * p->pixel;
}

/* Items [from, to) of one run, in passes over the input blocks, with the packed tiles of
 * output blocks tiles_ob on (those the run reads); `mine` is the thread's copy of an image
 * (holding what *have says). */
static void run_strips(const Strips *r, long from, long to, const float *tiles, int tiles_ob,
                       float *padded, float *mine, Copied *have) {
  const SwkConv *q = r->q;
  int bo = host_blocks(q->co), most = r->isa->blocks;
  for (int c0 = 0; c0 < r->blocks_in; c0 += r->pass) {
    int c1 = c0 + r->pass < r->blocks_in ? c0 + r->pass : r->blocks_in;
    bool accumulate = r->accumulate || c0;
    StripPlace at = strip_place(r, from);
    for (long i = from; i < to; i++) {
      StripPlace next = i + 1 < to ? strip_place(r, i + 1) : (StripPlace){.image = -1};
      const float *xi =
          r->batch_padded ? padded + r->padded_image * (size_t)at.image
                          : image_view(q, r->x, r->x_planar, at.image, at.oh, at.rows, mine, have);
      View v = r->view;
      if (!r->batch_padded && host_direct_copies(q, r->x_planar)) v.first = have->win.lo;
      int g0 = r->tiling.filters_outer ? at.group : 0,
          g1 = r->tiling.filters_outer ? at.group + 1 : r->groups;
      for (int g = g0; g < g1; g++) {
        int ob = g * most;
        StripAhead ahead =
            ahead_share(have, c0, r->strips * (g1 - g0), at.strip * (g1 - g0) + g - g0);
        /* the sums the next strip starts from, where it adds to y */
        const float *y_next = !accumulate       ? NULL
                              : g + 1 < g1      ? strip_y(r, &at, ob + most)
                              : next.image >= 0 ? strip_y(r, &next, next.group * most)
                                                : NULL;
        compute_strip(r->isa, q, xi, v, r->x_image, tiles, tiles_ob, r->bias, accumulate, r->at,
                      at.image, ob, bo - ob < most ? bo - ob : most, at.oh, at.rows, at.ow, at.np,
                      c0, c1, ahead, y_next);
      }
      at = next;
    }
  }
}

/* y (+)= conv(x) + bias with q's filters packed, y placed by `at`, tiled as the word says
 * (direct_tiling.h); `padded` holds padded images. Threads take pieces of the strips as they
 * finish (balance.h; even one image keeps every thread busy) and run each piece run by run: a
 * strip's outputs are summed by one thread in one order, whichever thread it is. */
static void direct(const SwkConv *q, const Placement *at, int batch, const float *x, bool x_planar,
                   const Packing *pack, const float *bias, bool accumulate, float *padded,
                   int tiling) {
  const DirectIsa *k = host_register_blocks();
  assert(k->blocks <= HOST_DIRECT_GROUP_BLOCKS); /* a thread's buffer holds a group */
  /* outputs written (not added to) and too large to stay in cache go past it (stream.h) */
  Placement where = *at;
  where.stream =
      !accumulate && host_streams(at->y, sizeof(float) * (size_t)batch * (size_t)at->image);
  Strips r = {.isa = k,
              .q = q,
              .at = &where,
              .pack = pack,
              .x = x,
              .bias = bias,
              .x_planar = x_planar,
              .accumulate = accumulate,
              .tiling = host_direct_tiling(tiling, q, batch, x_planar),
              .rows = host_strip_rows(q, k->pixels),
              .batch = batch,
              .groups = ceil_div(host_blocks(q->co), k->blocks),
              .strips = ceil_div(q->wo, k->pixels),
              .blocks_in = host_blocks(q->ci),
              .padded_image = host_direct_padded_image_floats(q, x_planar)};
  /* even strips: a short last one (16 = 14 + 2) runs its few accumulators at a fraction of the
   * rate (cifar10_quick's 16-wide conv2: 8 + 8 is 10% faster forward, 8% for dX) */
  r.pixels = ceil_div(q->wo, r.strips);
  r.pass = r.tiling.blocks ? r.tiling.blocks : r.blocks_in;
  /* filters outer pads the batch up front where the workspace holds it (the rule's case) */
  r.batch_padded = r.tiling.filters_outer && host_direct_copies(q, x_planar) &&
                   (size_t)batch * r.padded_image <= host_direct_padded_batch_floats(q);
  r.held = held_rows(&r);
  r.view = host_direct_splits_phases(q, x_planar) ? split_view(q, r.held)
                                                  : view_of(q, x_planar, q->pw, r.held);
  /* images evenly spaced: padded up front, or read in place */
  ptrdiff_t spacing = r.batch_padded ? (ptrdiff_t)r.padded_image
                      : !host_direct_copies(q, x_planar)
                          ? (ptrdiff_t)host_direct_image_floats(q, x_planar)
                          : 0;
  r.x_image = host_strip_image_pairs(q, batch, k->pixels) ? spacing : 0;
  if (r.x_image) r.rows = (HostStripRows){.rows = 1, .groups = q->ho};
  r.units = r.x_image ? ceil_div(batch, 2) : batch;
  long unit_items = (long)r.rows.groups * r.strips;
  r.items = (long)r.units * unit_items * (r.tiling.filters_outer ? r.groups : 1);
  r.run = r.tiling.filters_outer ? unit_items * r.units : unit_items;
  HostQueue queue = {0, r.items};
#pragma omp parallel num_threads(swk_threads())
  {
    int threads = omp_get_num_threads(), me = omp_get_thread_num();
    float *mine = padded + r.padded_image * (size_t)me;
    Copied have = {.image = -1, .win = {.held = r.held}};
    if (r.batch_padded) {
#pragma omp for schedule(static)
      for (int n = 0; n < batch; n++)
        pad_image(q, x, x_planar, n, padded + r.padded_image * (size_t)n);
    }
    bool by_group = r.tiling.filters_outer && pack->own;
    if (!by_group) pack_whole(pack);
    float *own = by_group ? pack->own + host_direct_group_floats(q) * (size_t)me : NULL;
    int own_group = -1; /* the group `own` holds */
    /* pieces of at least a 64th of an even share: the thread that takes the last waits half a
     * piece on average; at a 16th that was 2-3% of res3's 3x3 stride-2 forward in libgomp's
     * wait, against the 0.5% more it copies at the pieces' starts now */
    long from, to;
    while (host_take(&queue, threads, r.items / (threads * 64) + 1, &from, &to))
      for (long i = from; i < to;) {
        long next_run = (i / r.run + 1) * r.run, end = next_run < to ? next_run : to;
        if (!by_group) {
          run_strips(&r, i, end, pack->of_q, 0, padded, mine, &have);
        } else { /* a run is a group's */
          int group = (int)(i / r.run), ob = group * k->blocks;
          if (own_group != group) {
            pack_group(pack, ob, smaller_of(ob + k->blocks, host_blocks(q->co)), own);
            own_group = group;
          }
          run_strips(&r, i, end, own, ob, padded, mine, &have);
        }
        i = end;
      }
    if (where.stream) host_stream_fence();
  }
}

/* A 1x1 convolution with stride 1 and no padding sees its images as one row of h x w pixels:
 * strips of the widest register block, however narrow the rows (ResNet's 7 x 7). */
static SwkConv one_row(const SwkConv *p) {
  SwkConv q = *p;
  if (p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && !p->ph && !p->pw)
    q.w = q.wo = p->h * p->w, q.h = q.ho = 1;
  return q;
}

void host_conv_direct_forward(const SwkConv *shape, int batch, const float *x, const float *w,
                              const float *bias, float *y, float *ws) {
  SwkConv flat = one_row(shape);
  const SwkConv *p = &flat;
  bool whole_done = false;
  Packing pack = {.p = p, .w = w, .whole = ws, .of_q = ws, .whole_done = &whole_done};
  pack.own = ws + host_direct_packed_floats(p);
  float *padded_bias = pack.own + host_direct_group_floats(p) * (size_t)swk_threads();
  for (int o = 0; o < host_blocks(p->co) * 16; o++)
    padded_bias[o] = bias && o < p->co ? bias[o] : 0;
  Placement at = compact(p, y);
  direct(p, &at, batch, x, p->x_planar, &pack, bias ? padded_bias : NULL, false,
         padded_bias + host_direct_bias_floats(p), p->forward_tiling);
}

/* ------------------------------------------------------------------ the input gradient */

/* The phase's pixels of dx, which no tap reaches: zeroed (or, added to, left as they are),
 * then masked as the strips mask theirs. */
static void untouched_phase(const SwkConv *p, const HostPhase *f, int batch, float *dx, bool dx_add,
                            const float *mask) {
  if (dx_add && !mask) return;
  size_t plane = (size_t)p->h * (size_t)p->w * 16;
  long planes = (long)batch * host_blocks(p->ci);
  float slope = p->dx_relu_slope, ceiling = swk_mask_ceiling(p);
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long i = 0; i < planes; i++)
    for (int ih = f->rh; ih < p->h; ih += p->sh)
      for (int iw = f->rw; iw < p->w; iw += p->sw) {
        size_t at = (size_t)i * plane + ((size_t)ih * (size_t)p->w + (size_t)iw) * 16;
        for (int l = 0; l < 16; l++) {
          float v = dx_add ? dx[at + l] : 0;
          dx[at + l] = mask && !(mask[at + l] > 0 && mask[at + l] < ceiling) ? slope * v : v;
        }
      }
}

/* dX by phases (host_direct_phase; one with stride 1), each the forward convolution of dY with
 * its taps into its pixels of dx. */
void host_conv_direct_input_gradient(const SwkConv *p, int batch, const float *w, const float *dy,
                                     float *dx, bool dx_add, const float *mask, float *ws) {
  ptrdiff_t plane = (ptrdiff_t)p->h * p->w * 16;
  bool whole_done = false;
  Packing pack = {
      .p = p, .w = w, .input_gradient = true, .whole = ws, .of_q = ws, .whole_done = &whole_done};
  float *padded = ws + host_direct_phases_packed_floats(p);
  HostPhase only;
  if (host_direct_single_phase(p, &only)) { /* by group, as the forward */
    pack.own = padded;
    padded += host_direct_group_floats(&only.q) * (size_t)swk_threads();
  }
  for (int rh = 0; rh < p->sh; rh++)
    for (int rw = 0; rw < p->sw; rw++) {
      HostPhase f = host_direct_phase(p, rh, rw);
      if (!f.q.ho || !f.q.wo) continue;
      if (!f.q.kh || !f.q.kw) {
        untouched_phase(p, &f, batch, dx, dx_add, mask);
        continue;
      }
      float *dx_phase = dx + ((ptrdiff_t)rh * p->w + rw) * 16;
      Placement at = {.y = dx_phase,
                      .image = host_blocks(p->ci) * plane,
                      .block = plane,
                      .row = (ptrdiff_t)p->sh * p->w * 16,
                      .pixel = (ptrdiff_t)p->sw * 16,
                      .shift = f.shift,
                      .mask = mask ? mask + (dx_phase - dx) : NULL,
                      .mask_slope = p->dx_relu_slope,
                      .mask_ceiling = swk_mask_ceiling(p)};
      pack.phase = &f;
      direct(&f.q, &at, batch, dy, false, &pack, NULL, dx_add, padded, p->dgrad_tiling);
      pack.of_q += host_direct_phase_packed_floats(&f);
    }
}

/* ------------------------------------------------------------------ the weight gradient */

/* The tiles of dW. A tile's lanes are input channels of one tap: (group of output blocks,
 * input block, chunk of its channels, tap); or, for a first layer's few channels (fewer than
 * its filters' width: 3 channels would fill 3 of 8 lanes), taps of one filter row: (group,
 * channel, row of taps, chunk of the row). */
typedef struct Tiling {
  const DirectIsa *isa;
  bool taps_in_lanes;
  int groups, most_blocks, lanes;
  int units, chunks, steps; /* input blocks or channels; chunks of lanes; taps or tap rows */
  long count;
} Tiling;

/* A tile: output blocks [ob, ob + nb); lane i is input channel ci + i at tap (kh, kw), or
 * (taps_in_lanes) channel ci at tap (kh, kw + i); nl lanes (0: the tile is past ci). */
typedef struct TileAt {
  int ob, nb, ci, kh, kw, nl;
} TileAt;

static Tiling tiling(const SwkConv *p) {
  const DirectIsa *k = host_register_blocks();
  Tiling t = {.isa = k, .most_blocks = k->blocks, .lanes = k->lanes};
  t.taps_in_lanes = host_direct_few_channels(p);
  t.groups = ceil_div(host_blocks(p->co), t.most_blocks);
  t.units = t.taps_in_lanes ? p->ci : host_blocks(p->ci);
  t.chunks = ceil_div(t.taps_in_lanes ? p->kw : 16, t.lanes);
  t.steps = t.taps_in_lanes ? p->kh : p->kh * p->kw;
  t.count = (long)t.groups * t.units * t.chunks * t.steps;
  return t;
}

/* Tile k's place in the tiling; the visits step through it without dividing (64-bit divisions
 * per tile and visit showed in cifar10_quick's profile). */
typedef struct TileCursor {
  int step, chunk, unit, group;
} TileCursor;

static TileCursor cursor_at(const Tiling *tl, long k) {
  return (TileCursor){.step = (int)(k % tl->steps),
                      .chunk = (int)(k / tl->steps % tl->chunks),
                      .unit = (int)(k / tl->steps / tl->chunks % tl->units),
                      .group = (int)(k / tl->steps / tl->chunks / tl->units)};
}

static void cursor_next(const Tiling *tl, TileCursor *c) {
  if (++c->step < tl->steps) return;
  c->step = 0;
  if (++c->chunk < tl->chunks) return;
  c->chunk = 0;
  if (++c->unit < tl->units) return;
  c->unit = 0, c->group++;
}

static TileAt tile_of(const SwkConv *p, const Tiling *tl, TileCursor c) {
  int step = c.step, unit = c.unit, l0 = c.chunk * tl->lanes;
  TileAt t = {.ob = c.group * tl->most_blocks};
  t.nb = smaller_of(host_blocks(p->co) - t.ob, tl->most_blocks);
  if (tl->taps_in_lanes) {
    t.ci = unit, t.kh = step, t.kw = l0, t.nl = smaller_of(p->kw - l0, tl->lanes);
  } else {
    int left = p->ci - unit * 16 - l0;
    t.ci = unit * 16 + l0, t.kh = step / p->kw, t.kw = step % p->kw;
    t.nl = smaller_of(smaller_of(16 - l0, tl->lanes), left > 0 ? left : 0);
  }
  return t;
}

static TileAt tile_at(const SwkConv *p, const Tiling *tl, long k) {
  return tile_of(p, tl, cursor_at(tl, k));
}

/* Output rows at a time for a visit of one image: HOST_WGRAD_VISIT_PIXELS. */
static int rows_per_visit(const SwkConv *p) {
  int rows = ceil_div(HOST_WGRAD_VISIT_PIXELS, p->wo);
  return rows < p->ho ? rows : p->ho;
}

/* The outputs [*o0, *o1) (rows or columns) narrowed to those whose tap k, at stride s and
 * padding pad, lies inside an input of n. */
static void inside(int k, int s, int pad, int n, int *o0, int *o1) {
  int first = ceil_div(pad - k > 0 ? pad - k : 0, s), last = (n - 1 + pad - k) / s + 1;
  if (*o0 < first) *o0 = first;
  if (*o1 > last) *o1 = last;
}

/* What a weight gradient's threads share. */
typedef struct WeightGradient {
  const SwkConv *p;
  const SwkConv *source; /* a subsampling convolution p runs on copies of (or NULL) */
  Tiling tl;
  View v;
  const float *x, *dy;
  size_t dy_image, sums_floats; /* one image's dY; a set of tile and bias sums */
  size_t x_image;               /* one image of x, where it is read in place */
  bool copies;                  /* x is read through a padded copy (host_direct_wgrad_copies) */
  int images;                   /* per visit */
  float *dw, *db;               /* where the sums go, stored as keep * dW + scale * sums */
  float scale, bias_scale, keep;
  bool store_when_done; /* one set of sums: each tile's stored after its last visit */
  bool stream;          /* dW too large for the caches, not read: stored by units (store_unit) */
} WeightGradient;

/* Adds tile k's (at) share of `images` images from x's (x: the view of the first, the next
 * g->x_image further) and dy_image's for output rows [oh0, oh1) to its sums, or on its first
 * visit sets them to it (the sums are not zeroed beforehand, nor read back from memory at the
 * end: res5's 3x3 weight gradient has 19 MB of them). A copy's columns are padded; in place, a
 * tap's run of pixels is the columns whose tap lies inside the image. */
static void visit_tile(const WeightGradient *g, long k, TileAt at, const float *x,
                       const float *dy_image, int images, int oh0, int oh1, bool first,
                       float *sums) {
  const SwkConv *p = g->p;
  const View v = g->v;
  int ow0 = 0, ow1 = p->wo;
  inside(at.kh, p->sh, p->ph, p->h, &oh0, &oh1);
  if (!g->copies) inside(at.kw, p->sw, p->pw, p->w, &ow0, &ow1);
  if (!at.nl || oh0 >= oh1 || ow0 >= ow1) {
    if (first) memset(sums + k * HOST_TILE_FLOATS, 0, sizeof(float) * HOST_TILE_FLOATS);
    return;
  }
  Tile t = {.dy_block = (ptrdiff_t)p->ho * p->wo * 16,
            .dy_row = (ptrdiff_t)p->wo * 16,
            .dy_image = (ptrdiff_t)g->dy_image,
            .x_row = p->sh * v.row,
            .x_pixel = p->sw * v.col,
            .x_lane = g->tl.taps_in_lanes ? v.col : v.lane,
            .x_image = (ptrdiff_t)g->x_image,
            .images = images,
            .rows = oh1 - oh0,
            .wo = ow1 - ow0,
            .sum = sums + k * HOST_TILE_FLOATS,
            .sum_block = TILE_LANES * 16,
            .fresh = first};
  t.dy = dy_image + (((ptrdiff_t)at.ob * p->ho + oh0) * p->wo + ow0) * 16;
  int column = ow0 * p->sw - p->pw + at.kw + (g->copies ? p->pw : 0); /* in the view */
  t.x = x + (at.ci / 16) * v.block + (at.ci % 16) * v.lane +
        (ptrdiff_t)(oh0 * p->sh - p->ph + at.kh) * v.row + column * v.col;
  g->tl.isa->tile(at.nb, at.nl, &t);
}

/* dW = keep * dW + scale * sums, for tile k: filter by filter, so that a tile's stores stay
 * within a filter's few hundred bytes (lane by lane, each store went to another filter, a
 * filter's ci x taps floats apart: 19% of res5's 3x3 stride-2 weight gradient). */
static void store_tile(const SwkConv *p, const Tiling *tl, long k, const float *sums, float *dw,
                       float scale, float keep) {
  TileAt at = tile_at(p, tl, k);
  const float *sum = sums + k * HOST_TILE_FLOATS;
  ptrdiff_t lane_step = tl->taps_in_lanes ? 1 : p->kh * p->kw; /* dW's floats between lanes */
  for (int b = 0; b < at.nb; b++)
    for (int o = 0; o < 16 && (at.ob + b) * 16 + o < p->co; o++) {
      size_t co = (size_t)((at.ob + b) * 16 + o);
      float *d = &dw[((co * (size_t)p->ci + (size_t)at.ci) * (size_t)p->kh + (size_t)at.kh) *
                         (size_t)p->kw +
                     (size_t)at.kw];
      const float *g = sum + b * TILE_LANES * 16 + o;
      for (int i = 0; i < at.nl; i++)
        d[i * lane_step] = swk_gradient_store(d[i * lane_step], g[i * 16], scale, keep);
    }
}

/* db = keep * db + scale * sum, for output block ob's channels. */
static void store_bias(const SwkConv *p, int ob, const float sum[16], float *db, float scale,
                       float keep) {
  for (int o = 0; o < 16 && ob * 16 + o < p->co; o++)
    db[ob * 16 + o] = keep == 0 ? scale * sum[o] : keep * db[ob * 16 + o] + scale * sum[o];
}

/* Adds output block ob's dY over rows [oh0, oh1) of one image to its sum, pixel by pixel, in
 * the widest vectors the build has (vec16.h): the sum in memory would be stored and reloaded
 * per pixel, and so was half of a 16-float vector without AVX-512 (2% of cifar10_quick's step
 * on an AVX2 machine). */
static void add_bias_rows(const SwkConv *p, const float *dy_image, int ob, int oh0, int oh1,
                          float sum[16]) {
  const float *d = dy_image + ((size_t)ob * (size_t)p->ho + (size_t)oh0) * (size_t)p->wo * 16;
  HostVec s[HOST_VEC_PARTS];
  for (int v = 0; v < HOST_VEC_PARTS; v++) s[v] = host_vec_load(sum + v * HOST_VEC_FLOATS);
  for (size_t q = 0; q < (size_t)(oh1 - oh0) * (size_t)p->wo; q++)
    for (int v = 0; v < HOST_VEC_PARTS; v++)
      s[v] += host_vec_load(d + q * 16 + v * HOST_VEC_FLOATS);
  for (int v = 0; v < HOST_VEC_PARTS; v++) host_vec_store(sum + v * HOST_VEC_FLOATS, s[v]);
}

/* db = keep * db + scale * (dY summed over images and pixels), by output block. */
void host_direct_bias_gradient(const SwkConv *p, int batch, const float *dy, float *db, float scale,
                               float keep) {
  int bo = host_blocks(p->co);
  size_t image = (size_t)bo * (size_t)p->ho * (size_t)p->wo * 16;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (int ob = 0; ob < bo; ob++) {
    float sum[16] = {0};
    for (int n = 0; n < batch; n++) add_bias_rows(p, dy + (size_t)n * image, ob, 0, p->ho, sum);
    store_bias(p, ob, sum, db, scale, keep);
  }
}

/* Images [n0, n1) of x, a subsampling convolution's input (p, host_direct_subsamples), as the
 * stride-1 convolution of the copy reads them: image by image, block by block, the pixels
 * (oh sh, ow sw) side by side. */
static void subsample_images(const SwkConv *p, const float *x, int n0, int n1, float *dst) {
  size_t plane = (size_t)p->h * (size_t)p->w * HOST_BLOCK;
  for (long i = (long)n0 * host_blocks(p->ci); i < (long)n1 * host_blocks(p->ci); i++) {
    const float *src = x + (size_t)i * plane;
    for (int oh = 0; oh < p->ho; oh++) {
      const float *row = src + (size_t)oh * (size_t)p->sh * (size_t)p->w * HOST_BLOCK;
      for (int ow = 0; ow < p->wo; ow++, dst += HOST_BLOCK)
        memcpy(dst, row + (size_t)ow * (size_t)p->sw * HOST_BLOCK, sizeof(float) * HOST_BLOCK);
    }
  }
}

/* With a group's first tile k, the group's db from its bias sums (after the set's tiles). */
static void store_group_bias(const WeightGradient *g, long k, const float *sums) {
  const Tiling *tl = &g->tl;
  if (!g->db || k % (tl->count / tl->groups)) return;
  TileAt at = tile_at(g->p, tl, k);
  const float *bias_sums = sums + (size_t)tl->count * HOST_TILE_FLOATS;
  for (int b = at.ob; b < at.ob + at.nb; b++)
    store_bias(g->p, b, bias_sums + b * HOST_BLOCK, g->db, g->bias_scale, g->keep);
}

/* Tile k's dW from its sums (sums: the first set), and with a group's first tile the group's
 * db. */
static void store_done(const WeightGradient *g, long k, const float *sums) {
  store_tile(g->p, &g->tl, k, sums, g->dw, g->scale, g->keep);
  store_group_bias(g, k, sums);
}

/* The tiles of a unit (an output group's one block of input channels: every chunk and tap,
 * consecutive) as one: each filter's run of dW, its 16 input channels x taps, gathered from the
 * tiles' sums by 8 x 8 transposes (a tile's [lane][output] into [output][lane]) and streamed
 * whole (stream.h), for a dW too large for the caches. Stored tile by tile, each store went to
 * a line a tap's float wide and waited on memory for it (read for ownership): 11% of res5's 3x3
 * stride-2 weight gradient (9.4 MB of dW), now 1.085-1.099x as fast (batch 8, stand-alone).
 * Where dW fits in cache, storing tile by tile is as fast or faster (res3's 3x3 stride-2 by
 * units, not streamed: 1-9% slower); 1x1 layers' tiles already store whole lines (by units 2%
 * slower). */
enum { UNIT_TAPS_MAX = 25 }; /* the most taps stored so (5 x 5): a filter's run on the stack */
static void store_unit(const WeightGradient *g, long first, const float *sums) {
  const SwkConv *p = g->p;
  const Tiling *tl = &g->tl;
  TileAt at = tile_at(p, tl, first);
  int taps = p->kh * p->kw, channels = smaller_of(16, p->ci - at.ci), floats = channels * taps;
  for (int b = 0; b < at.nb; b++)
    for (int o0 = 0; o0 < 16 && (at.ob + b) * 16 + o0 < p->co; o0 += 8) {
      float run[8][16 * UNIT_TAPS_MAX]; /* filter o0 + j's [channel][tap] */
      for (int c = 0; c < tl->chunks; c++) {
        int lanes = smaller_of(tl->lanes, channels - c * tl->lanes);
        for (int t = 0; t < taps && lanes > 0; t++) {
          HostV8 column[8];
          host_transpose8_rows(sums + (first + (long)c * tl->steps + t) * HOST_TILE_FLOATS +
                                   b * TILE_LANES * 16 + o0,
                               16, lanes, column);
          for (int j = 0; j < 8; j++)
            for (int i = 0; i < lanes; i++) run[j][(c * tl->lanes + i) * taps + t] = column[j][i];
        }
      }
      for (int j = 0; j < 8 && (at.ob + b) * 16 + o0 + j < p->co; j++) {
        float *d = g->dw + ((size_t)((at.ob + b) * 16 + o0 + j) * (size_t)p->ci + (size_t)at.ci) *
                               (size_t)taps;
        for (int f = 0; f < floats; f++) run[j][f] *= g->scale; /* keep is 0: g->stream */
        host_stream_copy(d, run[j], (size_t)floats);
      }
    }
}

/* Tile k's dW, stored now that its sums are final (tiles [from, to) are the caller's): where dW
 * streams, with the rest of its unit when it is the unit's last and the caller holds the whole
 * unit of several taps; else on its own. */
static void store_finished(const WeightGradient *g, long k, long from, long to, const float *sums) {
  const Tiling *tl = &g->tl;
  long per_unit = (long)tl->chunks * tl->steps, first = k - k % per_unit;
  int taps = g->p->kh * g->p->kw;
  bool whole = g->stream && !tl->taps_in_lanes && taps > 1 && taps <= UNIT_TAPS_MAX &&
               first >= from && first + per_unit <= to;
  if (!whole) {
    store_done(g, k, sums);
    return;
  }
  if (k != first + per_unit - 1) return;
  store_unit(g, first, sums);
  store_group_bias(g, first, sums);
}

/* Adds images [n0, n1) to tiles [from, to)'s sums (`sums`, the bias's after the tiles'), visit
 * by visit: some rows of an image or several whole images (host_direct_wgrad_images); `mine`
 * holds a padded image. A group's bias goes with the group's first tile, over the dY rows that
 * tile has just read (a pass of its own over dY was 1.4% of cifar10_quick's step). With one set
 * of sums a tile is stored as soon as it is done, while its sums are in cache. */
static void sum_images(const WeightGradient *g, long from, long to, int n0, int n1, float *sums,
                       float *mine) {
  const SwkConv *p = g->p;
  const Tiling *tl = &g->tl;
  float *bias_sums = sums + (size_t)tl->count * HOST_TILE_FLOATS;
  int step = g->images > 1 ? p->ho : rows_per_visit(p);
  for (int n = n0; n < n1; n += g->images) {
    int images = smaller_of(g->images, n1 - n);
    const float *xi = g->x + (size_t)n * g->x_image;
    if (g->copies) pad_image(p, g->x, p->x_planar, n, mine), xi = mine;
    if (g->source) subsample_images(g->source, g->x, n, n + images, mine), xi = mine;
    const float *dy_n = g->dy + (size_t)n * g->dy_image;
    for (int oh = 0; oh < p->ho; oh += step) {
      int oh1 = oh + step < p->ho ? oh + step : p->ho;
      TileCursor c = cursor_at(tl, from);
      for (long k = from; k < to; k++, cursor_next(tl, &c)) {
        TileAt at = tile_of(p, tl, c);
        bool last = g->store_when_done && n + images >= n1 && oh1 == p->ho;
        visit_tile(g, k, at, xi, dy_n, images, oh, oh1, n == n0 && !oh, sums);
        if (g->db && !c.step && !c.chunk && !c.unit) /* the group's first tile */
          for (int i = 0; i < images; i++)
            for (int b = at.ob; b < at.ob + at.nb; b++)
              add_bias_rows(p, dy_n + (size_t)i * g->dy_image, b, oh, oh1,
                            bias_sums + b * HOST_BLOCK);
        if (last) store_finished(g, k, from, to, sums);
      }
    }
  }
}

/* Tiles [from, to)'s dW (and their groups' db) from the sum of `sets` sets of sums, added in
 * order into the first. */
static void store_sums(const WeightGradient *g, long from, long to, float *sums, int sets) {
  const Tiling *tl = &g->tl;
  float *bias_sums = sums + (size_t)tl->count * HOST_TILE_FLOATS;
  for (long k = from; k < to; k++) {
    float *sum = sums + k * HOST_TILE_FLOATS;
    for (int s = 1; s < sets; s++)
      for (int i = 0; i < HOST_TILE_FLOATS; i++) sum[i] += sum[s * g->sums_floats + i];
    if (g->db && !(k % (tl->count / tl->groups))) {
      TileAt at = tile_at(g->p, tl, k);
      for (int b = at.ob; b < at.ob + at.nb; b++)
        for (int s = 1; s < sets; s++)
          for (int o = 0; o < HOST_BLOCK; o++)
            bias_sums[b * HOST_BLOCK + o] += bias_sums[s * g->sums_floats + b * HOST_BLOCK + o];
    }
    store_finished(g, k, from, to, sums); /* a unit's tiles before it are summed */
  }
}

void host_conv_direct_weight_gradient(const SwkConv *shape, int batch, const float *x,
                                      const float *dy, float *dw, float *db, float grad_scale,
                                      float bias_grad_scale, float grad_keep, float *ws) {
  bool subsamples = host_direct_subsamples(shape);
  SwkConv run = subsamples ? host_direct_subsampled(shape) : *shape, flat = one_row(&run);
  const SwkConv *p = &flat;
  bool copies = host_direct_wgrad_copies(p, p->x_planar);
  WeightGradient g = {.p = p,
                      .source = subsamples ? shape : NULL,
                      .tl = tiling(p),
                      .v = view_of(p, p->x_planar, copies ? p->pw : 0, p->h),
                      .x = x,
                      .dy = dy,
                      .copies = copies,
                      .images = host_direct_wgrad_images(shape, p->x_planar),
                      .dw = dw,
                      .db = db,
                      .scale = grad_scale,
                      .bias_scale = bias_grad_scale,
                      .keep = grad_keep};
  g.dy_image = (size_t)host_blocks(p->co) * HOST_BLOCK * (size_t)p->ho * (size_t)p->wo;
  g.x_image = copies ? 0 : host_direct_image_floats(p, p->x_planar);
  g.sums_floats = (size_t)g.tl.count * HOST_TILE_FLOATS + (size_t)host_blocks(p->co) * HOST_BLOCK;
  int planned = swk_threads();
  bool by_images = host_direct_wgrad_splits_images(p, planned) && batch >= planned;
  int sets = by_images ? planned : 1;
  g.store_when_done = !by_images;
  g.stream = grad_keep == 0 && host_streams(dw, sizeof(float) * (size_t)shape->co *
                                                    (size_t)shape->ci * (size_t)(p->kh * p->kw));
  float *padded = ws + g.sums_floats * (size_t)sets;
  size_t tile_sums = (size_t)g.tl.count * HOST_TILE_FLOATS; /* set on their first visits */
  for (int s = 0; s < sets; s++)
    memset(ws + g.sums_floats * (size_t)s + tile_sums, 0,
           sizeof(float) * (g.sums_floats - tile_sums));
#pragma omp parallel num_threads(planned)
  {
    int threads = omp_get_num_threads(), me = omp_get_thread_num();
    float *mine = padded + host_direct_wgrad_copy_floats(shape) * (size_t)me;
    long from = g.tl.count * me / threads, to = g.tl.count * (me + 1) / threads;
    if (by_images) { /* every tile over a share of the images, then the sums added by tiles */
      sum_images(&g, 0, g.tl.count, batch * me / threads, batch * (me + 1) / threads,
                 ws + g.sums_floats * (size_t)me, mine);
#pragma omp barrier
      store_sums(&g, from, to, ws, threads);
    } else { /* each thread its tiles over every image: no shared sums (pieces handed out as
              * threads finish, balance.h, would each read every image again) */
      sum_images(&g, from, to, 0, batch, ws, mine);
    }
    if (g.stream) host_stream_fence();
  }
}

/* ------------------------------------------------------------------ workspace */

/* A pixel's 16 lanes are written (or read) together: one cache line, the 16 planes streamed. */
void host_to_blocked(const float *x, int batch, int c, int hw, float *y, bool add) {
  int blocks = host_blocks(c);
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long i = 0; i < (long)batch * blocks; i++) {
    int b = (int)(i / blocks), cb = (int)(i % blocks), used = c - cb * 16 < 16 ? c - cb * 16 : 16;
    const float *src = x + ((size_t)b * (size_t)c + (size_t)cb * 16) * (size_t)hw;
    float *dst = y + (size_t)i * 16 * (size_t)hw;
    for (size_t q = 0; q < (size_t)hw; q++, dst += 16)
      for (int l = 0; l < 16; l++) {
        float v = l < used ? src[(size_t)l * (size_t)hw + q] : 0;
        dst[l] = add ? dst[l] + v : v;
      }
  }
}

void host_from_blocked(const float *x, int batch, int c, int hw, float *y, bool add) {
  int blocks = host_blocks(c);
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long i = 0; i < (long)batch * blocks; i++) {
    int b = (int)(i / blocks), cb = (int)(i % blocks), used = c - cb * 16 < 16 ? c - cb * 16 : 16;
    const float *src = x + (size_t)i * 16 * (size_t)hw;
    float *dst = y + ((size_t)b * (size_t)c + (size_t)cb * 16) * (size_t)hw;
    for (size_t q = 0; q < (size_t)hw; q++, src += 16)
      for (int l = 0; l < used; l++) {
        float *d = &dst[(size_t)l * (size_t)hw + q];
        *d = add ? *d + src[l] : src[l];
      }
  }
}

/* ------------------------------------------------------------------ the kernel interface */

size_t host_conv_direct_workspace(const SwkConv *p) {
  return host_conv_direct_workspace_for(p, swk_threads());
}

size_t swk_conv_direct_workspace(const SwkConv *p) { return host_conv_direct_workspace(p); }

void swk_conv_direct_forward(const SwkConv *p, int batch, const float *x, const float *w,
                             const float *b, float *y, float *ws) {
  host_conv_direct_forward(p, batch, x, w, p->bias ? b : NULL, y, ws);
}

void swk_conv_direct_backward(const SwkConv *p, int batch, const float *x, const float *w,
                              const float *dy, float *dx, bool dx_add, float *dw, float *db,
                              float grad_scale, float bias_grad_scale, float grad_keep, float *ws) {
  if (dw)
    host_conv_direct_weight_gradient(p, batch, x, dy, dw, p->bias ? db : NULL, grad_scale,
                                     bias_grad_scale, grad_keep, ws);
  if (dx) host_conv_direct_input_gradient(p, batch, w, dy, dx, dx_add, p->dx_relu ? x : NULL, ws);
}

void swk_to_bnrc16(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  host_to_blocked(x, batch, c, h * w, y, add);
}

void swk_bnrc16_to_bnrc(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  host_from_blocked(x, batch, c, h * w, y, add);
}
