/* The direct convolution's register blocks (conv_direct.c, conv_direct_blocks.h), one set per
 * instruction set (register_blocks_<isa>.c; plain C, the reference, in register_blocks.c). The
 * Winograd plan (conv_winograd.c) runs its products on them too: each of its alpha x alpha
 * element-wise products is a 1x1 convolution over the transformed tiles. */
#ifndef SWNC_HOST_REGISTER_BLOCKS_H
#define SWNC_HOST_REGISTER_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>

/* Lines a strip prefetches into L2 while it runs, spread over its taps: [from, to) of runs
 * `run` lines long, `block` floats apart from x (x NULL: none). A copied image's next rows'
 * source (conv_direct.c), fetched in the shadow of the FMAs instead of by the copy itself. */
typedef struct StripAhead {
  const float *x;
  ptrdiff_t block;
  int run, from, to;
} StripAhead;

/* A strip: nb (1 or 2) blocks of 16 output channels for np output pixels of each of `rows` (1
 * or 2) output rows, held in registers while the input channels and taps stream through;
 * y = bias (or y) + the sum. The rows of a strip read the same rows of taps (kh0, kh1).
 * Offsets are in floats from `x`, which may be before the image for a strip in its top rows
 * (only the rows of taps inside it are read). */
typedef struct Strip {
  const float *x;
  ptrdiff_t x_offset; /* the strip's first pixel's tap (0, 0), channel 0 */
  ptrdiff_t x_block, x_row, x_col, x_pixel, x_lane; /* next input block, row, tap column, strip
                                                       pixel, channel in a block */
  /* taps kh, kw of a phase-split x (host_direct_splits_phases): row kh / phases_h of phase
   * kh % phases_h (x_row_phase apart), column kw / phases_w of phase kw % phases_w; else 1 */
  int phases_h, phases_w;
  ptrdiff_t x_row_phase, x_col_phase;
  int rows; /* output rows; the second's inputs x_rows and outputs y_rows further */
  ptrdiff_t x_rows;
  int blocks_in, lanes_last; /* input blocks; channels in the last */
  int kh, kw, kh0, kh1;      /* kernel size; the rows of taps inside the image */
  const float *w; /* packed filters of the first output block: [block in][kh][kw][16 in][16 out] */
  ptrdiff_t w_block; /* to the next output block's */
  const float *bias; /* padded, of the first output block; NULL: none */
  float *y; /* pixel p of row r, output block b at y + b * y_block + r * y_rows + p * y_pixel */
  ptrdiff_t y_block, y_pixel, y_rows;
  bool accumulate; /* add to y (an input gradient that fans out) instead of writing it */
  bool relu;       /* store y > 0 ? y : relu_slope * y (the final pass's sums only) */
  float relu_slope;
  /* not NULL: store mask > 0 ? y : mask_slope * y, mask read at y's offsets (an input gradient
   * through the ReLU whose output mask is: SwkConv.dx_relu; the final pass's sums only) */
  const float *mask;
  float mask_slope, mask_ceiling; /* the mask passes y where 0 < mask < mask_ceiling */
  bool stream; /* store y with streaming stores (stream.h: the last pass of a large output) */
  StripAhead ahead;
  const float *y_next; /* not NULL: the y the next strip adds to, laid out as this one's */
} Strip;

/* A strip's input channels in block cb, and where its taps (kh, kw) of block cb start: the
 * first pixel's input, channel 0, and the first output block's filters. One definition for
 * every strip and its footprint check (unchecked.h), which must agree. */
static inline int strip_lanes(const Strip *s, int cb) {
  return cb == s->blocks_in - 1 ? s->lanes_last : 16;
}
static inline const float *strip_tap_x(const Strip *s, int cb, int kh, int kw) {
  ptrdiff_t row = kh / s->phases_h * s->x_row + kh % s->phases_h * s->x_row_phase,
            col = kw / s->phases_w * s->x_col + kw % s->phases_w * s->x_col_phase;
  return s->x + (s->x_offset + cb * s->x_block + row + col);
}
static inline const float *strip_tap_w(const Strip *s, int cb, int kh, int kw) {
  return s->w + ((size_t)(cb * s->kh + kh) * (size_t)s->kw + (size_t)kw) * 256;
}

/* The weight gradient's register block, a tile: for nb output blocks and nl input channels of
 * one tap, sum[b][i][o] += dY[block b][pixel][o] * x[channel i][the pixel's tap] over `rows`
 * output rows of wo pixels (dY's pixels 16 floats apart) of each of `images` images; x is the
 * tap's input for the first pixel, channel 0 of the tile; sum[b][i][o] at
 * sum + b * sum_block + 16 i + o. */
enum { TILE_LANES = 8 };         /* input channels a tile holds at most (its sum's stride) */
enum { HOST_TILE_PREFETCH = 8 }; /* pixels ahead a tile prefetches x (conv_direct_blocks.h) */
/* Whether an input's pixels `x_pixel` floats apart are each a cache line of their own (blocked
 * input), the blocks' condition for prefetching x (conv_direct_blocks.h). */
static inline bool host_pixel_owns_line(ptrdiff_t x_pixel) { return x_pixel >= 16; }
typedef struct Tile {
  const float *dy, *x;
  ptrdiff_t dy_block, dy_row, dy_image; /* next output block, next output row, next image */
  ptrdiff_t x_row, x_pixel, x_lane;     /* next output row's tap, next pixel's, next channel */
  ptrdiff_t x_image;
  int images, rows, wo;
  float *sum;
  ptrdiff_t sum_block; /* to the next output block's sums */
  bool fresh;          /* the sums start at 0, not at what `sum` holds */
} Tile;

typedef struct DirectIsa {
  const char *name;
  int blocks, pixels; /* the largest register blocks: output blocks x pixels */
  int lanes;          /* and output blocks x input channels (a tile) */
  void (*strip)(int nb, int np, const Strip *s);
  void (*tile)(int nb, int nl, const Tile *t);
} DirectIsa;

/* The blocks of the instruction set the kernels use (isa.h; host_conv_direct_use switches). */
const DirectIsa *host_register_blocks(void);
/* Each x86 instruction set's blocks, in host_isas' order (isa.h). */
extern const DirectIsa host_blocks_avx512, host_blocks_avx2;
/* Check every float a strip or a tile reads or writes, as the vector blocks (unchecked) access
 * them: their entry points call these where CHECKING_REGIONS (unchecked.h), under ASan. */
void host_check_strip(int nb, int np, const Strip *s);
void host_check_tile(int nb, int nl, const Tile *t);

#endif
