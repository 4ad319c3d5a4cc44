/* The workspace each host kernel asks for (its swk_*_workspace in runtime/kernels.h), in
 * floats, and the explicit convolution's plan it follows from. One definition for the kernels
 * and for the target's description, whose --stats counts it in a program's memory. */
#ifndef SWNC_HOST_WORKSPACE_H
#define SWNC_HOST_WORKSPACE_H

#include "conv_direct.h"
#include "gemm.h"
#include "im2col.h"
#include "kernels.h"

/* ------------------------------------------------------------------ explicit convolution */

/* Small images go side by side until a GEMM is at least this many columns wide (one 7x7 image
 * alone is 49 columns: a full panel of the micro-kernel and a nearly empty one). Several
 * images' outputs are gathered in a per-thread buffer; one large image's go straight to y. */
enum { WIDE_GEMM = 256 };
/* A written-out column matrix (col2im's dX) grows no wider: 1 MiB, about a core's L2. It
 * limits that path alone: forward and the weight gradient never write one out. */
enum { COL_FLOATS = 1 << 18 };

typedef struct HostConvDims {
  int cig, cog; /* channels per group */
  int k;        /* rows of col: cig * kh * kw */
  int pixels;   /* P = ho * wo */
  int nb;       /* images side by side per GEMM */
  int nb_col;   /* the same for dX by col2im, whose column matrix is written out */
  size_t in_image, out_image;
  bool pointwise; /* 1x1, stride 1, no padding: an image's column matrix is the image */
  bool dx;        /* backward may be asked for dX */
  bool flip;      /* dX as a convolution of dY with flipped filters (stride 1) */
  SwkConv t;      /* that convolution: dY (co/g channels, ho x wo) to dX_g (ci/g, h x w) */
} HostConvDims;

static inline HostConvDims host_conv_dims(const SwkConv *p) {
  HostConvDims d = {.cig = p->ci / p->groups,
                    .cog = p->co / p->groups,
                    .pixels = p->ho * p->wo,
                    .nb = 1,
                    .dx = !p->no_input_gradient};
  d.k = d.cig * p->kh * p->kw;
  d.in_image = (size_t)p->ci * p->h * p->w;
  d.out_image = (size_t)p->co * d.pixels;
  d.pointwise = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0;
  /* The flipped convolution does h*w/(ho*wo) times the old path's arithmetic: use it only for
   * stride-1 convolutions that keep the image size ("same" padding), where it is no more work
   * with a better GEMM shape. For "valid" ones (LeNet's 12x12 -> 8x8) it was 2.25x the work.
   * A dilated one flips to a convolution with the same dilation (span: its taps' extent). */
  int span_h = p->dh * (p->kh - 1) + 1, span_w = p->dw * (p->kw - 1) + 1;
  d.flip =
      p->sh == 1 && p->sw == 1 && p->ph < span_h && p->pw < span_w && p->h * p->w <= p->ho * p->wo;
  d.nb = d.pixels >= WIDE_GEMM ? 1 : (WIDE_GEMM + d.pixels - 1) / d.pixels;
  size_t per_image = (size_t)d.k * d.pixels;
  d.nb_col = d.nb;
  if ((size_t)d.nb * per_image > COL_FLOATS)
    d.nb_col = per_image >= COL_FLOATS ? 1 : (int)(COL_FLOATS / per_image);
  d.t = (SwkConv){.ci = d.cog,
                  .h = p->ho,
                  .w = p->wo,
                  .co = d.cig,
                  .ho = p->h,
                  .wo = p->w,
                  .kh = p->kh,
                  .kw = p->kw,
                  .sh = 1,
                  .sw = 1,
                  .ph = span_h - 1 - p->ph,
                  .pw = span_w - 1 - p->pw,
                  .dh = p->dh,
                  .dw = p->dw,
                  .groups = 1};
  return d;
}

static inline size_t host_round16(size_t n) { return (n + 15) & ~(size_t)15; }

static inline size_t host_col_floats(const HostConvDims *d) {
  return d->flip || !d->dx ? 0 : host_round16((size_t)d->k * d->nb_col * d->pixels);
}

static inline size_t host_padded_floats(const SwkConv *p, const HostConvDims *d) {
  size_t x = host_pad_floats(p, d->cig, d->nb),
         dy = d->flip && d->dx ? host_pad_floats(&d->t, d->cog, d->nb) : 0;
  return host_round16(x > dy ? x : dy);
}

/* Gathered results of nb images: outputs or output gradients (co/g x nb*P), or the flipped
 * convolution's input gradients (ci/g x nb*h*w, no more than nb*P). None for one image at a
 * time: its results are y, dY and dX themselves (VGG-16's first layers: 13 MiB a thread). */
static inline size_t host_packed_floats(const HostConvDims *d) {
  if (d->nb == 1) return 0;
  int rows = d->flip && d->dx && d->cig > d->cog ? d->cig : d->cog;
  return host_round16((size_t)rows * d->nb * d->pixels);
}

/* Per thread: for the col2im path (no flip) the written-out column gradient (K x nb*P); the
 * gathered outputs, output gradients or flipped input gradients of nb images; the GEMM's own
 * packing area; padded copies of the images whose columns the GEMM reads (nb images of x or
 * of dY). Shared by all threads, after them: the filters packed (host_filter_panels_floats)
 * and dW transposed (the size of W). */
static inline size_t host_conv_thread_floats(const SwkConv *p, const HostConvDims *d) {
  return host_col_floats(d) + host_packed_floats(d) + HOST_GEMM_PACK_FLOATS +
         host_padded_floats(p, d);
}

/* The input gradient's GEMM multiplies dY's columns by an m x k operand per group: the
 * flipped filters (m = ci/g, k = co/g*kh*kw), W_g^T for a 1x1 (m = ci/g, k = co/g), or W_g^T
 * for col2im (m = K, k = co/g). */
static inline void host_dx_filters_shape(const SwkConv *p, const HostConvDims *d, int *m, int *k) {
  *m = d->flip ? d->cig : d->k;
  *k = d->flip && !d->pointwise ? d->cog * p->kh * p->kw : d->cog;
}

/* Every group's filters packed as the GEMMs' A operand (gemm.h), for forward or dX. */
static inline size_t host_filter_panels_floats(const SwkConv *p, const HostConvDims *d) {
  int m, k;
  host_dx_filters_shape(p, d, &m, &k);
  size_t forward = host_gemm_packed_floats(d->cog, d->k), dx = host_gemm_packed_floats(m, k);
  return (size_t)p->groups * (forward > dx ? forward : dx);
}

static inline size_t host_conv_workspace(const SwkConv *p, int threads) {
  HostConvDims d = host_conv_dims(p);
  return host_conv_thread_floats(p, &d) * (size_t)threads +
         host_round16(host_filter_panels_floats(p, &d)) + host_round16((size_t)p->co * d.k);
}

/* ------------------------------------------------------------------ implicit convolution */

/* A tap of one pixel: where its data row (channel 0, image 0) and its filter row start. Each
 * thread lists a pixel's kh x kw taps in its slice of the workspace. */
typedef struct HostTap {
  size_t data, filter;
} HostTap;

static inline size_t host_tap_floats(const SwkConv *p) {
  return (sizeof(HostTap) * (size_t)p->kh * p->kw + 15) / 16 * 4;
}

/* The weight gradient packs blocks of output pixels of n*B columns (conv_implicit.c). */
enum { PIXEL_FLOATS = 4096 }; /* n*B per packed block */

static inline int host_pixel_block(int batch) {
  return batch >= PIXEL_FLOATS ? 1 : PIXEL_FLOATS / batch;
}

/* A thread's (tap, co, ci) sums, its packed blocks of dY and X, and the GEMM's packing area. */
static inline size_t host_implicit_thread_floats(const SwkConv *p, int batch) {
  size_t k = (size_t)host_pixel_block(batch) * batch;
  return (size_t)p->kh * p->kw * p->co * p->ci + (size_t)(p->co + p->ci) * k +
         HOST_GEMM_PACK_FLOATS;
}

static inline size_t host_conv_implicit_workspace(const SwkConv *p, int batch, int threads) {
  size_t weights = host_implicit_thread_floats(p, batch), taps = host_tap_floats(p);
  return (weights > taps ? weights : taps) * (size_t)threads;
}

/* ------------------------------------------------------------------ fully connected */

/* The GEMM's packing area, per thread. */
static inline size_t host_fc_workspace(int threads) {
  return (size_t)HOST_GEMM_PACK_FLOATS * (size_t)threads;
}

/* ------------------------------------------------------------------ direct convolution */

/* A tile of the weight gradient's sums: up to 2 output blocks x 8 input channels x 16 lanes. */
enum { HOST_TILE_FLOATS = 2 * 8 * 16 };

static inline size_t host_direct_packed_floats(const SwkConv *p) {
  return (size_t)host_blocks(p->co) * (size_t)host_blocks(p->ci) * (size_t)(p->kh * p->kw) * 256;
}

/* The output blocks of a group as the direct plan runs them (register_blocks.h: a register
 * block's, DirectIsa.blocks, at most this), and the packed tiles of one group of q's: a
 * buffer of each thread's (conv_direct.c: Packing). */
enum { HOST_DIRECT_GROUP_BLOCKS = 2 };
static inline size_t host_direct_group_floats(const SwkConv *q) {
  int blocks = host_blocks(q->co);
  if (blocks > HOST_DIRECT_GROUP_BLOCKS) blocks = HOST_DIRECT_GROUP_BLOCKS;
  return (size_t)blocks * (size_t)host_blocks(q->ci) * (size_t)(q->kh * q->kw) * 256;
}

static inline size_t host_direct_bias_floats(const SwkConv *p) {
  return (size_t)host_blocks(p->co) * HOST_BLOCK;
}

static inline size_t host_direct_image_floats(const SwkConv *p, bool x_planar) {
  size_t channels = x_planar ? (size_t)p->ci : (size_t)host_blocks(p->ci) * HOST_BLOCK;
  return channels * (size_t)p->h * (size_t)p->w;
}

/* A first layer's few channels, fewer than its filters' width: the direct kernels read them as
 * planes (a blocked input, 3 lanes of 16 used, is copied per image) and the weight gradient's
 * tiles hold taps of a row in their lanes (3 channels would fill 3 of 8). */
static inline bool host_direct_few_channels(const SwkConv *p) { return p->ci < p->kw; }

/* Where a first layer's direct plan reads its input in (B,N,R,C) as it comes (SwkConv.x_planar,
 * chosen by the compiler): few channels, which it would read as planes anyway. */
static inline bool host_direct_reads_planar(const SwkConv *p) {
  return host_direct_few_channels(p);
}

/* Whether the forward reads a strided blocked x through a copy split into its stride phases:
 * image (a, b) holds the padded input's pixels (sh i + a, sw j + b), for the phases a tap
 * reaches (a < kh, b < kw), so that a strip's pixels are adjacent lines (16 floats apart, as
 * at stride 1) instead of sw lines apart. bench/conv_plans 2 8, forward: ResNet-50's 1x1
 * stride-2 projections (read in place, 2 lines apart) ran at 42-57% of the FMA peak, split
 * 51-60% (3 alternated runs); its 3x3 stride-2 layers the same either way (55-64%), though its
 * stride-1 3x3 layers with as many outputs and channels run at 74-79%: what costs there is not
 * how far apart a strip's pixels lie. */
static inline bool host_direct_splits_phases(const SwkConv *p, bool x_planar) {
  return !x_planar && !host_direct_few_channels(p) && (p->sh > 1 || p->sw > 1);
}

/* The phase images' extent: the phases a tap reaches, each rows x cols pixels of 16 floats. */
typedef struct HostPhaseSplit {
  int phases_h, phases_w, rows, cols;
} HostPhaseSplit;

static inline HostPhaseSplit host_direct_phase_split(const SwkConv *p) {
  return (HostPhaseSplit){.phases_h = p->sh < p->kh ? p->sh : p->kh,
                          .phases_w = p->sw < p->kw ? p->sw : p->kw,
                          .rows = p->ho + (p->kh - 1) / p->sh,
                          .cols = p->wo + (p->kw - 1) / p->sw};
}

/* Whether the kernels read x (planar or blocked) through a copy of each image: split into its
 * stride phases (above), or padded with pw zero columns at both sides of every row, in planes
 * if x has few channels. */
static inline bool host_direct_copies(const SwkConv *p, bool x_planar) {
  return p->pw || (!x_planar && host_direct_few_channels(p)) ||
         host_direct_splits_phases(p, x_planar);
}

/* One image as a thread reads it, if copied. */
static inline size_t host_direct_padded_image_floats(const SwkConv *p, bool x_planar) {
  if (!host_direct_copies(p, x_planar)) return 0;
  if (host_direct_splits_phases(p, x_planar)) {
    HostPhaseSplit g = host_direct_phase_split(p);
    return (size_t)host_blocks(p->ci) * HOST_BLOCK * (size_t)(g.phases_h * g.phases_w) *
           (size_t)g.rows * (size_t)g.cols;
  }
  bool planes = x_planar || host_direct_few_channels(p);
  size_t channels = planes ? (size_t)p->ci : (size_t)host_blocks(p->ci) * HOST_BLOCK;
  return channels * (size_t)p->h * (size_t)(p->w + 2 * p->pw);
}

/* All of a batch's copied images (blocked x), held when the filters outweigh the images
 * (direct_tiling.h: filters outer), which bounds them by the filters. */
static inline size_t host_direct_padded_batch_floats(const SwkConv *q) {
  if (!host_direct_copies(q, false)) return 0;
  return host_direct_packed_floats(q) * host_direct_padded_image_floats(q, false) /
             host_direct_image_floats(q, false) +
         1;
}

/* The input gradient of a stride-1 convolution as a forward one: dY in, dX out, flipped taps
 * and the padding that makes dX as large as X. */
static inline SwkConv host_direct_transposed(const SwkConv *p) {
  SwkConv q = *p;
  q.ci = p->co, q.h = p->ho, q.w = p->wo, q.co = p->ci, q.ho = p->h, q.wo = p->w;
  q.ph = p->kh - 1 - p->ph, q.pw = p->kw - 1 - p->pw, q.bias = false, q.relu = false;
  return q;
}

/* The input gradient of a convolution with stride s, by phases: dX's pixels (s i + rh, s j + rw)
 * receive only the taps kh = rh + ph (mod s), kw = rw + pw (mod s), so each of the s^2 phases is
 * a stride-1 forward convolution of dY with those taps flipped (q), its outputs s pixels apart
 * in dX. With stride 1 the one phase is host_direct_transposed. A phase's padding may differ
 * left and right: its view of dY is padded by q.pw at both sides and read from `shift` columns
 * in. A phase without taps (a 1x1 filter's odd pixels at stride 2) gets no gradient. */
typedef struct HostPhase {
  SwkConv q;
  int rh, rw;   /* its first pixel in dX */
  int kh0, kw0; /* its first tap in the filters; the others are s apart */
  int shift;
} HostPhase;

/* How many of k0, k0 + s, k0 + 2s, ... are below k (a phase's taps, or its pixels). */
static inline int host_every(int k0, int k, int s) { return k0 < k ? (k - k0 + s - 1) / s : 0; }

static inline HostPhase host_direct_phase(const SwkConv *p, int rh, int rw) {
  HostPhase f = {.q = *p, .rh = rh, .rw = rw};
  SwkConv *q = &f.q;
  f.kh0 = (rh + p->ph) % p->sh, f.kw0 = (rw + p->pw) % p->sw;
  q->ci = p->co, q->h = p->ho, q->w = p->wo, q->co = p->ci, q->bias = false, q->relu = false;
  q->ho = host_every(rh, p->h, p->sh), q->wo = host_every(rw, p->w, p->sw);
  q->kh = host_every(f.kh0, p->kh, p->sh), q->kw = host_every(f.kw0, p->kw, p->sw);
  q->sh = q->sw = 1;
  /* output i reads dY row i + (rh + ph - kh0) / s - t for its t-th tap */
  q->ph = q->kh - 1 - (rh + p->ph - f.kh0) / p->sh;
  int left = q->kw - 1 - (rw + p->pw - f.kw0) / p->sw, right = q->wo + q->kw - 1 - left - q->w;
  q->pw = left > right ? left : right;
  if (q->pw < 0) q->pw = 0;
  f.shift = q->pw - left;
  return f;
}

static inline size_t host_larger(size_t a, size_t b) { return a > b ? a : b; }

/* Whether a phase runs (it has pixels and taps), and its filters' packing where it does. The
 * input gradient packs every phase's filters in one pass over them, one packing after
 * another in (rh, rw) order (conv_direct.c). */
static inline bool host_direct_phase_runs(const HostPhase *f) {
  return f->q.ho && f->q.wo && f->q.kh && f->q.kw;
}
static inline size_t host_direct_phase_packed_floats(const HostPhase *f) {
  return host_direct_phase_runs(f) ? host_direct_packed_floats(&f->q) : 0;
}

/* Whether just one phase of p's input gradient runs (stride 1, or a strided 1x1 projection's
 * dX, whose other pixels no tap reaches), and that phase: its filters are then packed by group
 * as the forward's are (conv_direct.c: Packing). */
static inline bool host_direct_single_phase(const SwkConv *p, HostPhase *only) {
  int running = 0;
  for (int rh = 0; rh < p->sh; rh++)
    for (int rw = 0; rw < p->sw; rw++) {
      HostPhase f = host_direct_phase(p, rh, rw);
      if (host_direct_phase_runs(&f)) *only = f, running++;
    }
  return running == 1;
}

/* All the phases' packings together: where the input gradient's copies start. */
static inline size_t host_direct_phases_packed_floats(const SwkConv *p) {
  size_t floats = 0;
  for (int rh = 0; rh < p->sh; rh++)
    for (int rw = 0; rw < p->sw; rw++) {
      HostPhase f = host_direct_phase(p, rh, rw);
      floats += host_direct_phase_packed_floats(&f);
    }
  return floats;
}

/* The weight gradient's tile sums (conv_direct.c: tiling), at most a group per output block and
 * tiles of at least 6 lanes: a tile per (group, input block, chunk of its 16 channels, tap),
 * or for a first layer's few channels per (group, channel, row of taps, chunk of the row); then
 * the bias's sums. */
static inline size_t host_direct_tile_floats(const SwkConv *p) {
  size_t channels = (size_t)host_blocks(p->ci) * 3 * (size_t)(p->kh * p->kw);
  size_t taps = (size_t)p->ci * (size_t)p->kh * (size_t)((p->kw + 5) / 6);
  return (size_t)host_blocks(p->co) * (host_larger(channels, taps) * HOST_TILE_FLOATS + HOST_BLOCK);
}

/* Whether the weight gradient splits the batch over the threads, each summing every tile over
 * its images (then the threads' sums are added in thread order), instead of splitting the
 * tiles: where the sums are few (a first layer's 15 tiles for 2 threads ran 8 against 7), so
 * that each image is copied and read by one thread, not all. */
enum { HOST_DIRECT_SPLIT_IMAGES_FLOATS = 128 * 1024 }; /* a thread's sums, 512 KB at most */
static inline bool host_direct_wgrad_splits_images(const SwkConv *p, int threads) {
  return threads > 1 && host_direct_tile_floats(p) <= HOST_DIRECT_SPLIT_IMAGES_FLOATS;
}

/* Whether the weight gradient reads x through a copy (pad_image): only a first layer's few
 * channels, whose tiles hold taps of a row in their lanes, so that their runs of pixels cannot
 * skip the padding's columns; the other tiles, one tap each, run over the pixels whose tap
 * lies inside the image and read x where it is. */
static inline bool host_direct_wgrad_copies(const SwkConv *p, bool x_planar) {
  return host_direct_few_channels(p) && host_direct_copies(p, x_planar);
}

/* A 1x1 convolution with a stride and no padding (ResNet's projections) reads one pixel in
 * sh x sw, in runs of a row's few outputs: its weight gradient copies those pixels of a visit's
 * images side by side and runs as the stride-1 convolution of the copy (host_direct_subsampled).
 * Tiles summing over the strided runs ran ResNet-50's projections at 55-68% of the FMA peak. */
static inline bool host_direct_subsamples(const SwkConv *p) {
  return p->kh == 1 && p->kw == 1 && (p->sh > 1 || p->sw > 1) && !p->ph && !p->pw;
}

/* The stride-1 convolution of a subsampling one's copy: its input is the output's size. */
static inline SwkConv host_direct_subsampled(const SwkConv *p) {
  SwkConv q = *p;
  q.h = p->ho, q.w = p->wo, q.sh = q.sw = 1;
  return q;
}

/* A thread's copy of subsampled images holds at most this many floats (1 MiB), and at least
 * one image. */
enum { HOST_DIRECT_SUBSAMPLE_FLOATS = 256 * 1024 };

/* Pixels a tile sums over per visit, at least: loading and storing its sums and setting up the
 * visit are then a small part of the work (64 pixels ran cifar10_quick's conv2 weight
 * gradient at 248-266 GFLOP/s, 128 at 277-279, 256 no faster: bench/conv_plans). */
enum { HOST_WGRAD_VISIT_PIXELS = 128 };

/* Small images, read where they are, go several to a visit: a tile's sums are loaded and stored
 * once per visit, and a layer of small images has many tiles (ResNet's last stage: 9.4 MB of
 * sums against 49 pixels an image). A visit's images of one input block and one group's dY,
 * which the tiles of that block and group read in turn, stay within this many floats. */
enum { HOST_WGRAD_VISIT_FLOATS = 64 * 1024 }; /* 256 KB */

/* Images a weight gradient's visit spans: 1 (some rows at a time) or several whole ones; those
 * of a subsampling convolution as its copy holds them. */
static inline int host_direct_wgrad_images(const SwkConv *p, bool x_planar) {
  if (host_direct_subsamples(p)) {
    SwkConv q = host_direct_subsampled(p);
    int visit = host_direct_wgrad_images(&q, x_planar);
    size_t held = HOST_DIRECT_SUBSAMPLE_FLOATS / host_direct_image_floats(&q, false);
    return held < 1 ? 1 : held < (size_t)visit ? (int)held : visit;
  }
  size_t image = (size_t)HOST_BLOCK * (size_t)(p->h * p->w + 2 * p->ho * p->wo);
  size_t images = HOST_WGRAD_VISIT_FLOATS / image;
  return host_direct_wgrad_copies(p, x_planar) || images < 2 ? 1 : (int)images;
}

/* A thread's copy of a visit's images for the weight gradient: padded (a first layer's) or
 * subsampled. */
static inline size_t host_direct_wgrad_copy_floats(const SwkConv *p) {
  if (host_direct_subsamples(p)) {
    SwkConv q = host_direct_subsampled(p);
    return (size_t)host_direct_wgrad_images(p, false) * host_direct_image_floats(&q, false);
  }
  return host_direct_wgrad_copies(p, false) ? host_direct_padded_image_floats(p, false) : 0;
}

/* Any of the three computations: packed filters and bias, or the tile sums (a set per thread
 * if the batch is split); padded images. */
static inline size_t host_conv_direct_workspace_for(const SwkConv *p, int threads) {
  size_t t = (size_t)threads;
  size_t forward = host_direct_packed_floats(p) + t * host_direct_group_floats(p) +
                   host_direct_bias_floats(p) +
                   host_larger(t * host_direct_padded_image_floats(p, false),
                               host_direct_padded_batch_floats(p));
  size_t images = 0; /* the largest phase's copies, after every phase's packing */
  for (int rh = 0; rh < p->sh; rh++)
    for (int rw = 0; rw < p->sw; rw++) {
      HostPhase f = host_direct_phase(p, rh, rw);
      if (!host_direct_phase_runs(&f)) continue;
      images = host_larger(images, host_larger(t * host_direct_padded_image_floats(&f.q, false),
                                               host_direct_padded_batch_floats(&f.q)));
    }
  HostPhase only;
  size_t by_group = host_direct_single_phase(p, &only) ? t * host_direct_group_floats(&only.q) : 0;
  size_t input_gradient = host_direct_phases_packed_floats(p) + by_group + images;
  size_t sums = host_direct_tile_floats(p) * (host_direct_wgrad_splits_images(p, threads) ? t : 1);
  size_t weight_gradient = sums + t * host_direct_wgrad_copy_floats(p);
  return host_larger(host_larger(forward, input_gradient), weight_gradient);
}

/* ------------------------------------------------------------------ Winograd convolution */

/* F(m x m, r x r) on one convolution as the kernels compute it (the forward one, or the input
 * gradient's transposed one): tiles of m x m outputs from alpha = m + r - 1 square inputs. */
typedef struct HostWinograd {
  int m, alpha, positions; /* output tile, input tile, alpha^2 */
  int bi, bo;              /* input and output blocks */
  int tiles_h, tiles_w;    /* tiles per image */
  int chunk;               /* tiles transformed per pass, at most */
} HostWinograd;

/* The convolutions F(m x m, r x r) computes: square 3 x 3 filters (m = 2 or 4) or 5 x 5 (m = 2;
 * F(4x4, 5x5)'s 8 x 8 tiles would need points whose transforms magnify rounding past float's
 * use), stride 1, padding below r (the input gradient's transposed convolution pads
 * r - 1 - padding), no groups. */
static inline bool host_winograd_legal(const SwkConv *q, int m) {
  int r = q->kh;
  return (r == 3 || (r == 5 && m == 2)) && q->kw == r && q->sh == 1 && q->sw == 1 && q->ph < r &&
         q->pw < r && q->groups == 1;
}

/* A pass's transformed tiles (inputs and products) fill about this many floats (2 MiB; on an
 * AVX2 machine with 512 KiB of L2 a core, passes of 2^15 to 2^18 floats ran F(2x2, 5x5) on
 * cifar10_quick's conv2 slower), unless the filters need more tiles to be worth streaming. */
enum { HOST_WINOGRAD_PASS_FLOATS = 1 << 19, HOST_WINOGRAD_CHUNK_STEP = 28 };

/* The fewest tiles a pass amortises its filters' traffic over: each pass streams all
 * transformed filters (positions x bi x bo x 256 floats) through the products once, so as many
 * tiles as make its own transformed data (positions x 16 (bi + bo) a tile) no smaller. */
static inline long host_winograd_least_chunk(const HostWinograd *g) {
  return 16L * g->bi * g->bo / (g->bi + g->bo);
}

static inline HostWinograd host_winograd(const SwkConv *q, int m) {
  HostWinograd g = {
      .m = m, .alpha = m + q->kh - 1, .bi = host_blocks(q->ci), .bo = host_blocks(q->co)};
  g.positions = g.alpha * g.alpha;
  g.tiles_h = (q->ho + m - 1) / m, g.tiles_w = (q->wo + m - 1) / m;
  long per_tile = (long)g.positions * 16 * (g.bi + g.bo);
  long by_cache = HOST_WINOGRAD_PASS_FLOATS / per_tile, by_filters = host_winograd_least_chunk(&g);
  long chunk = by_cache > by_filters ? by_cache : by_filters;
  g.chunk = (int)((chunk + HOST_WINOGRAD_CHUNK_STEP - 1) / HOST_WINOGRAD_CHUNK_STEP *
                  HOST_WINOGRAD_CHUNK_STEP);
  return g;
}

/* The transformed filters (forward, input gradient) or the weight gradient's sums, by
 * position: (positions, output block, input block, 16 inputs, 16 outputs). */
static inline size_t host_winograd_filter_floats(const HostWinograd *g) {
  return (size_t)g->positions * (size_t)g->bi * (size_t)g->bo * 256;
}

/* Where a pass's tiles start: after the filters or sums and a padded bias (forward's, as
 * wide as the output's blocks; the transposed convolution's as wide as the input's). */
static inline size_t host_winograd_tiles_offset(const HostWinograd *g) {
  return host_winograd_filter_floats(g) +
         host_round16((size_t)(g->bo > g->bi ? g->bo : g->bi) * 16);
}

/* A pass's transformed inputs and products (or transformed output gradients). */
static inline size_t host_winograd_pass_floats(const HostWinograd *g) {
  return (size_t)g->chunk * (size_t)g->positions * 16 * (size_t)(g->bi + g->bo);
}

/* The weight gradient's sets of sums: the batch's tiles cut into this many runs of
 * consecutive tiles, each summed into a set of its own by one thread in passes of its own (no
 * barrier), the sets added in order at the end; where a set is small (at most
 * HOST_WINOGRAD_SET_FLOATS) and the tiles fill a chunk per set, else one run whose passes the
 * threads share. Shared passes wait at three barriers each: cifar10_quick's conv2 at batch 100
 * ran 78 a call, and its F(2x2, 5x5) weight gradient took 4.1-15 ms on 2 threads against
 * 6.2-7 on one. The count depends on the shape and batch alone, so the results do not depend
 * on the threads (4 runs keep 1, 2 and 4 of them even). */
enum { HOST_WINOGRAD_SETS = 4, HOST_WINOGRAD_SET_FLOATS = 128 * 1024 }; /* 512 KB a set */
static inline bool host_winograd_wgrad_may_split(const HostWinograd *g) {
  return host_winograd_filter_floats(g) <= HOST_WINOGRAD_SET_FLOATS;
}
static inline int host_winograd_wgrad_sets(const HostWinograd *g, long tiles) {
  long sets = tiles / g->chunk;
  if (!host_winograd_wgrad_may_split(g) || sets < 2) return 1;
  return sets < HOST_WINOGRAD_SETS ? (int)sets : HOST_WINOGRAD_SETS;
}

/* Any of the three computations on `threads` threads: the filters or sums, a padded bias and
 * a pass's tiles for each thread (forward and dX give each its own passes where the batch has
 * enough tiles), then the weight gradient's other sets of sums. The input gradient's
 * transposed convolution has the same blocks swapped, so the same sizes. */
static inline size_t host_conv_winograd_workspace_for(const SwkConv *p, int m, int threads) {
  HostWinograd g = host_winograd(p, m);
  size_t sets = host_winograd_wgrad_may_split(&g) ? HOST_WINOGRAD_SETS - 1 : 0;
  return host_winograd_tiles_offset(&g) + (size_t)threads * host_winograd_pass_floats(&g) +
         sets * host_winograd_filter_floats(&g);
}

#endif
