/* The direct plan's tilings (conv_direct.c): how its loop over strips runs, as a word the
 * compiler chooses per layer and passes in SwkConv.forward_tiling and dgrad_tiling
 * (runtime/kernels.h). One definition for the kernels, the target's model (description.c) and
 * the candidates swnc tune measures.
 *
 * A strip is a run of output pixels of one row (or two: host_strip_rows) for a group of one or
 * two output blocks, whose sums stay in registers while the input channels and taps stream
 * through. The strips run in one of two orders, which is also how the threads split them (each
 * takes an even share):
 * - images outer: each image's strips, every strip for all groups of output blocks: the strip's
 *   inputs stay in L1 while the filters stream past;
 * - filters outer: each group over all images' strips: the group's filters stay in cache while
 *   the images stream past (the images padded once up front where the workspace holds them).
 * Channel blocking: the input blocks may be summed in passes of `blocks` over a run of strips
 * (an image's, images outer; a group's, filters outer), the first pass writing the outputs and
 * the others adding to them, so that a pass's filters and inputs fit a nearer cache.
 * Every tiling gives the same results bit for bit: an output's sum is formed in one order, its
 * accumulator stored and loaded back exactly between passes. */
#ifndef SWNC_HOST_DIRECT_TILING_H
#define SWNC_HOST_DIRECT_TILING_H

#include <stdio.h>
#include <string.h>

#include "workspace.h"

typedef struct HostDirectTiling {
  bool filters_outer;
  int blocks; /* input blocks per pass; 0: all in one */
} HostDirectTiling;

/* A word: 0 (the kernel's rule), else 1 | filters_outer << 1 | blocks << 2. */
enum { HOST_TILING_SET = 1, HOST_TILING_FILTERS = 2, HOST_TILING_BLOCKS_SHIFT = 2 };

static inline int host_direct_tiling_word(HostDirectTiling t) {
  return HOST_TILING_SET | (t.filters_outer ? HOST_TILING_FILTERS : 0) |
         t.blocks << HOST_TILING_BLOCKS_SHIFT;
}

/* Whether the filters outweigh the batch's images (ResNet's last stage: 9 MB of filters,
 * 100 KB an image). */
static inline bool host_direct_filters_outweigh(const SwkConv *q, int batch, bool x_planar) {
  return host_direct_packed_floats(q) > (size_t)batch * host_direct_image_floats(q, x_planar);
}

/* The kernel's own rule, word 0: filters outer where the filters outweigh the images, all
 * input blocks in one pass. */
static inline HostDirectTiling host_direct_tiling_rule(const SwkConv *q, int batch, bool x_planar) {
  return (HostDirectTiling){.filters_outer = host_direct_filters_outweigh(q, batch, x_planar)};
}

/* The tiling a word names for q (a pass never holds more blocks than q has). */
static inline HostDirectTiling host_direct_tiling(int word, const SwkConv *q, int batch,
                                                  bool x_planar) {
  if (!(word & HOST_TILING_SET)) return host_direct_tiling_rule(q, batch, x_planar);
  HostDirectTiling t = {.filters_outer = word & HOST_TILING_FILTERS,
                        .blocks = word >> HOST_TILING_BLOCKS_SHIFT};
  if (t.blocks >= host_blocks(q->ci)) t.blocks = 0;
  return t;
}

/* "images", "filters.k16" (passes of 16 input blocks): as tuning files and the IR name it. */
enum { HOST_TILING_NAME_MAX = 32 };
static inline const char *host_direct_tiling_name(int word, char name[HOST_TILING_NAME_MAX]) {
  if (!(word & HOST_TILING_SET)) return "";
  int blocks = word >> HOST_TILING_BLOCKS_SHIFT;
  snprintf(name, HOST_TILING_NAME_MAX, "%s", word & HOST_TILING_FILTERS ? "filters" : "images");
  if (blocks) snprintf(name + strlen(name), HOST_TILING_NAME_MAX - strlen(name), ".k%d", blocks);
  return name;
}

/* The tilings swnc tune measures beside the rule: both orders, in one pass and in passes of
 * 8, 16 and 32 input blocks where q has more, but the one the rule is. Their count. */
enum { HOST_TILINGS_MAX = 8 };
static inline int host_direct_tiling_candidates(const SwkConv *q, int batch,
                                                int words[HOST_TILINGS_MAX]) {
  static const int passes[] = {0, 8, 16, 32};
  HostDirectTiling rule = host_direct_tiling_rule(q, batch, false);
  int n = 0;
  for (int order = 0; order < 2; order++)
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
      HostDirectTiling t = {.filters_outer = order, .blocks = passes[i]};
      if (t.blocks && t.blocks >= host_blocks(q->ci)) continue;
      if (t.filters_outer == rule.filters_outer && !t.blocks) continue;
      words[n++] = host_direct_tiling_word(t);
    }
  return n;
}

/* Strips of two rows (conv_direct_blocks.h) where an output row is at most half the widest
 * strip: ResNet's last stage, 7 pixels a row and 14 a strip (strips of one row there left half
 * of the accumulators idle and streamed the filters twice as often; with two rows its 1x1
 * projection ran forward at 74% of the peak instead of 61%, its input gradients 5-8 points
 * faster: bench/conv_plans, medians of 6 alternated runs). The two rows of a strip
 * share their rows of taps, so only rows that read all kh rows of taps inside the image pair:
 * an image's output rows run in groups, [0, full0) one by one, [full0, full1) two by two (the
 * last maybe alone), [full1, ho) one by one. */
typedef struct HostStripRows {
  int rows;          /* most rows a strip holds: 1 or 2 */
  int full0, full1;  /* the rows that pair */
  int pairs, groups; /* groups of two rows; all groups of an image's rows */
} HostStripRows;

static inline HostStripRows host_strip_rows(const SwkConv *q, int most_pixels) {
  HostStripRows r = {.rows = 1, .groups = q->ho};
  if (2 * q->wo > most_pixels || q->ho < 2) return r;
  /* row oh reads input rows [oh sh - ph, oh sh - ph + kh): all inside the image from row full0
   * (an input-gradient phase's padding may be negative: none above) to row below / sh */
  int below = q->h + q->ph - q->kh;
  int full0 = q->ph > 0 ? (q->ph + q->sh - 1) / q->sh : 0,
      full1 = below < 0 ? 0 : below / q->sh + 1;
  r.full0 = full0 < q->ho ? full0 : q->ho;
  r.full1 = full1 > q->ho ? q->ho : full1 < r.full0 ? r.full0 : full1;
  r.pairs = (r.full1 - r.full0 + 1) / 2;
  if (!r.pairs) return r;
  r.rows = 2, r.groups = q->ho - (r.full1 - r.full0) + r.pairs;
  return r;
}

/* Strips of one row of two images where the images' views are evenly spaced (a batch padded
 * up front, or read in place) and a row is at most half a strip: every row pairs, where two
 * rows of one image pair only inside the image (ResNet's 7 rows with padding 1: 4 strips an
 * image, 49 of 56 pixels, against 3.5 full ones). The two rows read the same rows of taps. */
static inline bool host_strip_image_pairs(const SwkConv *q, int batch, int most_pixels) {
  return batch >= 2 && 2 * q->wo <= most_pixels;
}

/* Group g's first output row, and its rows in *rows. */
static inline int host_strip_row_group(const HostStripRows *r, int g, int *rows) {
  *rows = 1;
  if (r->rows == 1 || g < r->full0) return g;
  if (g >= r->full0 + r->pairs) return r->full1 + (g - r->full0 - r->pairs);
  int oh = r->full0 + 2 * (g - r->full0);
  *rows = r->full1 - oh < 2 ? 1 : 2;
  return oh;
}

#endif
