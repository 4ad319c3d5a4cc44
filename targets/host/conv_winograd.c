/* Winograd convolution F(m x m, r x r) on the channel-blocked layout (conv_winograd.h).
 *
 * A computation runs in passes over chunks of tiles (workspace.h: host_winograd), each in
 * three phases, run by one thread (forward and dX with tiles enough: own_passes) or split
 * between the threads:
 *   1. transform: each tile's alpha x alpha inputs, a block of 16 channels at a time, to
 *      V[position][input block][tile][16] (the weight gradient also transforms dY's tiles);
 *   2. products: for each of the alpha^2 positions, a 1x1 convolution of the chunk's tiles by
 *      the transformed filters U[position] on the direct plan's register blocks (strips of up
 *      to 14 tiles by 32 output channels), to P[output block][tile][position][16]; the weight
 *      gradient sums V x transformed dY over the tiles into its sums S[position] with the
 *      direct plan's tiles, each thread its own part of S (or, its tiles cut into runs, each
 *      run into a set of S of its own: host_winograd_wgrad_sets);
 *   3. inverse transform of each tile and output block into y (or, after the last pass, of S
 *      into dW).
 * (The layouts: Tiles, pass_at.) The transforms work on a block's 16 channels, a register's
 * worth at a time (conv_winograd_transforms.h). Each output is one sum in one order whatever
 * the number of threads.
 *
 * Rounding: F(2x2, 3x3)'s transforms have coefficients 1 and 1/2 and lose little; F(4x4, 3x3)'s
 * (up to 5 in B, 8 in A, 1/24 in G) magnify float rounding, so its results differ from the
 * definition by up to about 2e-5 of their scale where the direct plan's differ by 1e-6;
 * F(2x2, 5x5)'s (16/15 in G, 2.5 in B) by up to about 1e-5. */
#include "conv_winograd.h"

#include <omp.h>
#include <string.h>

#include "balance.h"
#include "isa.h"
#include "register_blocks.h"
#include "vec16.h"
#include "workspace.h"

/* ------------------------------------------------------------------ transforms per ISA */

typedef struct Transforms {
  void (*input)(int m, int r, const float *x, ptrdiff_t row, int h, int w, int r0, int c0, float *v,
                ptrdiff_t v_pos);
  void (*output)(int m, int r, const float *p, ptrdiff_t p_pos, const float *bias, float *y,
                 ptrdiff_t row, int rows, int cols, bool accumulate, bool relu, const float *mask,
                 float slope, float ceiling);
  void (*gradient)(int m, int r, const float *dy, ptrdiff_t row, int ho, int wo, int r0, int c0,
                   float *out, ptrdiff_t pos);
  void (*filter)(int m, int r, const float *g, float *u, ptrdiff_t u_pos);
  void (*weights)(int m, int r, const float *s, ptrdiff_t s_pos, float *dg);
  void (*taps)(int taps, const float *src, int o_step, int t_step, float *g);
} Transforms;

#define TRANSFORMS(suffix)                                                                         \
  {                                                                                                \
    input_tile_##suffix, output_tile_##suffix, gradient_tile_##suffix, filter_tile_##suffix,       \
        weights_tile_##suffix, taps_##suffix                                                       \
  }

/* g[t][o] = src[o * o_step + t * t_step] for the taps t of 16 filters o: a filter
 * transform's input, gathered from the filters as stored (w[o][c] or, transposed, w[c][o]
 * flipped). A vector of 16 filters' tap at a time where the CPU gathers: 144 scalar copies
 * (3 x 3 filters) were as long as the transform. */
static void taps_c(int taps, const float *src, int o_step, int t_step, float *g) {
  for (int t = 0; t < taps; t++)
    for (int o = 0; o < 16; o++) g[t * 16 + o] = src[o * o_step + t * t_step];
}

#ifdef HOST_X86_KERNELS
#include <immintrin.h>

__attribute__((target("avx512f"))) static void taps_avx512(int taps, const float *src, int o_step,
                                                           int t_step, float *g) {
  __m512i index =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(o_step));
  for (int t = 0; t < taps; t++)
    _mm512_storeu_ps(g + t * 16, _mm512_i32gather_ps(index, src + t * t_step, 4));
}

__attribute__((target("avx2,fma"))) static void taps_avx2(int taps, const float *src, int o_step,
                                                          int t_step, float *g) {
  __m256i index =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(o_step));
  for (int t = 0; t < taps; t++)
    for (int half = 0; half < 2; half++)
      _mm256_storeu_ps(g + t * 16 + half * 8,
                       _mm256_i32gather_ps(src + t * t_step + half * 8 * o_step, index, 4));
}
#endif

/* The transforms' vectors: a register's worth per instruction set (the plain C set's as
 * wide as SSE2's and NEON's, which every 64-bit x86 and ARM CPU has). */
typedef float WtVec8 __attribute__((vector_size(32)));
typedef float WtVec4 __attribute__((vector_size(16)));

#ifdef HOST_X86_KERNELS
#define WT(name) name##_avx512
#define WT_ATTR __attribute__((target("avx512f")))
#define WtVec HostV16
#include "conv_winograd_transforms.h"
#undef WT
#undef WT_ATTR
#undef WtVec
#define WT(name) name##_avx2
#define WT_ATTR __attribute__((target("avx2,fma")))
#define WtVec WtVec8
#include "conv_winograd_transforms.h"
#undef WT
#undef WT_ATTR
#undef WtVec
#endif
#define WT(name) name##_c
#define WT_ATTR
#define WtVec WtVec4
#include "conv_winograd_transforms.h"
#undef WT
#undef WT_ATTR
#undef WtVec

static const Transforms transforms[] = {
#ifdef HOST_X86_KERNELS
    TRANSFORMS(avx512),
    TRANSFORMS(avx2),
#endif
    TRANSFORMS(c),
};
_Static_assert(sizeof transforms / sizeof transforms[0] == HOST_ISA_COUNT,
               "transforms per instruction set of isa.h");

/* The register blocks and the transforms of one instruction set: the direct plan's choice. */
typedef struct Kernels {
  const DirectIsa *blocks;
  const Transforms *transforms;
} Kernels;

static Kernels kernels(void) {
  const DirectIsa *blocks = host_register_blocks();
  return (Kernels){blocks, &transforms[host_isa_index(blocks->name)]};
}

/* ------------------------------------------------------------------ one call's geometry */

static int ceil_div(int a, int b) { return (a + b - 1) / b; }
static int smaller(int a, int b) { return a < b ? a : b; }
static long smaller_long(long a, long b) { return a < b ? a : b; }

size_t host_conv_winograd_workspace(const SwkConv *p, int m) {
  return host_conv_winograd_workspace_for(p, m, swk_threads());
}

/* A pass's buffer of transformed tiles, V (inputs) or P (products, or dY's transforms): value
 * (block b, tile t, position) at at + b * block + t * tile + position * position, its 16
 * channels together. Position-major (a position's tiles together) lets the products read their
 * strips' pixels in one run; tile-major (a tile's alpha^2 values together) lets a transform
 * read one run of alpha^2 x 64 bytes instead of alpha^2 runs far apart. */
typedef struct Tiles {
  float *at;
  ptrdiff_t block, tile, position;
} Tiles;

static Tiles tiles_in(float *at, const HostWinograd *g, int blocks, bool by_tile) {
  ptrdiff_t tile = by_tile ? g->positions * 16 : 16;
  return (Tiles){at, tile * g->chunk, tile, by_tile ? 16 : (ptrdiff_t)blocks * g->chunk * 16};
}

static float *tile_of(const Tiles *b, int block, int tile) {
  return b->at + block * b->block + tile * b->tile;
}

/* What the passes of one computation read and write. */
typedef struct Operands {
  const float *x;    /* the input (forward, dW) or dY (dX) */
  const float *dy;   /* dW's output gradient */
  const float *u;    /* the transformed filters (forward, dX) */
  const float *bias; /* padded to the output's blocks, or NULL */
  float *y;          /* the output (forward) or dX */
  bool accumulate;   /* add to y instead of writing it */
  bool relu;         /* the forward's ReLU epilogue, applied as y is stored (SwkConv.relu) */
  const float *mask; /* dX masked by this ReLU output at y's offsets (SwkConv.dx_relu), or NULL */
  float slope;       /* the ReLU's or the mask's */
  float ceiling;     /* the mask's upper bound (swk_mask_ceiling) */
  float *sums;       /* dW's sums */
} Operands;

/* A pass: tiles [first, first + count) of the batch, in the chunk-sized buffers; `shared`: its
 * phases split between the team's threads, each ending in a barrier, else run by this thread
 * alone. The products' strips: `strips` of `pixels` tiles by `groups` of output blocks. */
typedef struct Pass {
  const SwkConv *q;
  HostWinograd g;
  Kernels k;
  const Operands *o;
  long first;
  int count;
  bool shared;
  bool fresh; /* the weight gradient's first pass into its sums: sets them */
  int strips, pixels, groups;
  Tiles v, p;
} Pass;

/* The pass of `count` tiles from tile `first`, its buffers from `at` in the workspace. V is
 * position-major. P is tile-major for forward and dX, whose products write it and whose
 * inverse transforms read it (F(2x2, 5x5) on cifar10_quick's conv2, one thread, best of 30
 * calls in 6 alternated rounds: forward 12.3 -> 11.7 ms, dX 11.4 -> 11.0; conv3 forward
 * 5.9 -> 5.4; V tile-major as well gained nothing, as the products then read strided pixels),
 * position-major for the weight gradient, whose tiles read dY's transforms 16 floats apart. */
static Pass pass_at(const SwkConv *q, const HostWinograd *g, Kernels k, const Operands *o,
                    long first, int count, bool shared, float *at) {
  float *p = at + (size_t)g->positions * (size_t)g->bi * (size_t)g->chunk * 16;
  int strips = ceil_div(count, k.blocks->pixels);
  return (Pass){.q = q,
                .g = *g,
                .k = k,
                .o = o,
                .first = first,
                .count = count,
                .shared = shared,
                .strips = strips,
                .pixels = ceil_div(count, strips), /* even: a short last strip wastes FMAs */
                .groups = ceil_div(g->bo, k.blocks->blocks),
                .v = tiles_in(at, g, g->bi, false),
                .p = tiles_in(p, g, g->bo, !o->sums)};
}

/* Item i of a phase: a tile, a strip or a register block's sums. */
typedef void PhaseItem(const Pass *s, long i);

/* Items [0, n) of a phase: split between the team's threads if the pass is shared (a barrier
 * at the end), else run by this thread. */
static void run_phase(const Pass *s, PhaseItem *item, long n) {
  if (s->shared) {
#pragma omp for schedule(guided)
    for (long i = 0; i < n; i++) item(s, i);
  } else {
    for (long i = 0; i < n; i++) item(s, i);
  }
}

typedef struct TileAt {
  int image, r0, c0; /* the tile's first output pixel */
} TileAt;

static TileAt tile_at(const Pass *s, long tile) {
  long per_image = (long)s->g.tiles_h * s->g.tiles_w;
  int in_image = (int)(tile % per_image);
  return (TileAt){(int)(tile / per_image), in_image / s->g.tiles_w * s->g.m,
                  in_image % s->g.tiles_w * s->g.m};
}

/* ------------------------------------------------------------------ phase 1: transforms */

/* x's tiles into V, item i: input block i / count, tile i % count (neighbouring tiles share
 * their edge pixels in cache). */
static void transform_input(const Pass *s, long i) {
  const SwkConv *q = s->q;
  size_t plane = (size_t)q->h * (size_t)q->w * 16;
  int ib = (int)(i / s->count), t = (int)(i % s->count);
  TileAt at = tile_at(s, s->first + t);
  const float *block = s->o->x + ((size_t)at.image * (size_t)s->g.bi + (size_t)ib) * plane;
  s->k.transforms->input(s->g.m, q->kh, block, (ptrdiff_t)q->w * 16, q->h, q->w, at.r0 - q->ph,
                         at.c0 - q->pw, tile_of(&s->v, ib, t), s->v.position);
}

/* dY's tiles (A dY A^T) into P's place, item i: output block i / count, tile i % count. */
static void transform_gradient(const Pass *s, long i) {
  const SwkConv *q = s->q;
  size_t plane = (size_t)q->ho * (size_t)q->wo * 16;
  int ob = (int)(i / s->count), t = (int)(i % s->count);
  TileAt at = tile_at(s, s->first + t);
  const float *block = s->o->dy + ((size_t)at.image * (size_t)s->g.bo + (size_t)ob) * plane;
  s->k.transforms->gradient(s->g.m, q->kh, block, (ptrdiff_t)q->wo * 16, q->ho, q->wo, at.r0, at.c0,
                            tile_of(&s->p, ob, t), s->p.position);
}

/* ------------------------------------------------------------------ phase 2: products */

/* P[position] = V[position] x U[position], item i: strip i % strips of output group
 * i / strips % groups at position i / strips / groups. */
static void multiply(const Pass *s, long i) {
  const DirectIsa *b = s->k.blocks;
  int most = b->blocks, strips = s->strips, pixels = s->pixels;
  ptrdiff_t u_block = (ptrdiff_t)s->g.bi * 256, u_position = u_block * s->g.bo;
  int strip = (int)(i % strips), group = (int)(i / strips % s->groups);
  int position = (int)(i / strips / s->groups), ob = group * most, t0 = strip * pixels;
  Strip st = {.x = s->v.at + position * s->v.position,
              .x_offset = t0 * s->v.tile,
              .x_block = s->v.block,
              .x_pixel = s->v.tile,
              .x_lane = 1,
              .rows = 1,
              .blocks_in = s->g.bi,
              .lanes_last = s->q->ci - (s->g.bi - 1) * 16,
              .kh = 1,
              .kw = 1,
              .kh1 = 1,
              .phases_h = 1,
              .phases_w = 1,
              .w = s->o->u + position * u_position + ob * u_block,
              .w_block = u_block,
              .y = tile_of(&s->p, ob, t0) + position * s->p.position,
              .y_block = s->p.block,
              .y_pixel = s->p.tile};
  b->strip(smaller(most, s->g.bo - ob), smaller(pixels, s->count - t0), &st);
}

/* ------------------------------------------------------------------ phase 3: inverse */

/* Item i: output block i / count of tile i % count into y. */
static void transform_output(const Pass *s, long i) {
  const SwkConv *q = s->q;
  size_t plane = (size_t)q->ho * (size_t)q->wo * 16;
  int ob = (int)(i / s->count), t = (int)(i % s->count);
  TileAt at = tile_at(s, s->first + t);
  float *block = s->o->y + ((size_t)at.image * (size_t)s->g.bo + (size_t)ob) * plane +
                 ((size_t)at.r0 * (size_t)q->wo + (size_t)at.c0) * 16;
  s->k.transforms->output(
      s->g.m, q->kh, tile_of(&s->p, ob, t), s->p.position, s->o->bias ? s->o->bias + ob * 16 : NULL,
      block, (ptrdiff_t)q->wo * 16, smaller(s->g.m, q->ho - at.r0), smaller(s->g.m, q->wo - at.c0),
      s->o->accumulate, s->o->relu, s->o->mask ? s->o->mask + (block - s->o->y) : NULL, s->o->slope,
      s->o->ceiling);
}

/* ------------------------------------------------------------------ forward and dX */

/* The r x r taps of output `out` and input c in w: w[out][c] (forward) or w[c][out]
 * (transposed). */
static const float *filter_taps(const SwkConv *p, const float *w, bool transposed, int out, int c) {
  size_t taps = (size_t)p->kh * (size_t)p->kw;
  return transposed ? w + ((size_t)c * (size_t)p->ci + (size_t)out) * taps
                    : w + ((size_t)out * (size_t)p->ci + (size_t)c) * taps;
}

/* U = G g G^T of q's filters: block ob's [input block][16 in][16 out] at each position. The
 * taps g of output o and input c are w[o][c] (forward), or w[c][o] flipped (the input
 * gradient's transposed convolution). */
static void transform_filters(const SwkConv *p, const float *w, bool transposed,
                              const HostWinograd *g, Kernels k, float *u) {
  int outs = transposed ? p->ci : p->co, ins = transposed ? p->co : p->ci;
  ptrdiff_t u_block = (ptrdiff_t)g->bi * 256, u_position = u_block * g->bo;
  long items = (long)g->bo * g->bi * 16;
  int r = p->kh, last = r * r - 1;
#pragma omp for schedule(guided)
  for (long i = 0; i < items; i++) {
    int ob = (int)(i / (g->bi * 16)), c = (int)(i % (g->bi * 16));
    float taps[5 * 5][16];
    /* the transposed filters of the next item, c + 1's, a filter row further on where the
     * hardware prefetchers do not look, fetched while this one's are transformed (a quarter
     * of res5's input gradient at batch 8 went in waiting for them) */
    if (transposed && c + 1 < ins && ob * 16 < outs) {
      const float *next = filter_taps(p, w, true, ob * 16, c + 1);
      for (int f = 0; f < 16 * (last + 1); f += 16) __builtin_prefetch(next + f);
    }
    if (ob * 16 + 16 <= outs && c < ins) { /* 16 filters: gathered by the ISA's code */
      k.transforms->taps(
          last + 1, filter_taps(p, w, transposed, ob * 16, c) + (transposed ? last : 0),
          transposed ? last + 1 : p->ci * (last + 1), transposed ? -1 : 1, &taps[0][0]);
    } else {
      memset(taps, 0, sizeof taps);
      for (int o = 0; o < 16 && ob * 16 + o < outs && c < ins; o++) {
        const float *src = filter_taps(p, w, transposed, ob * 16 + o, c);
        for (int t = 0; t <= last; t++) taps[t][o] = src[transposed ? last - t : t];
      }
    }
    k.transforms->filter(g->m, r, &taps[0][0], u + ob * u_block + (ptrdiff_t)c * 16, u_position);
  }
}

/* A forward or dX pass: transform, products, inverse. */
static void run_pass(const Pass *s) {
  run_phase(s, transform_input, (long)s->g.bi * s->count);
  run_phase(s, multiply, (long)s->g.positions * s->groups * s->strips);
  run_phase(s, transform_output, (long)s->g.bo * s->count);
}

/* Passes of their own for the threads: as many chunks of tiles as a multiple of the threads,
 * even in whole strips of `pixels` tiles (own_first), each transformed, multiplied and
 * transformed back by one thread with no barrier in between, if they have tiles enough to
 * amortise the filters' traffic; else 0, and the team shares each pass. Shared passes wait at
 * three barriers each: cifar10_quick's conv2 at batch 100 ran 78 a call, and a core taken
 * away for a moment stalled both. */
static long own_passes(const HostWinograd *g, long tiles, int threads, int pixels) {
  long strips = (tiles + pixels - 1) / pixels, most = g->chunk / pixels; /* a chunk's strips */
  long chunks = (strips + most - 1) / most;
  chunks = (chunks + threads - 1) / threads * threads;
  long least = host_winograd_least_chunk(g);
  return tiles / chunks >= (least > HOST_WINOGRAD_CHUNK_STEP ? least : HOST_WINOGRAD_CHUNK_STEP)
             ? chunks
             : 0;
}

/* The first tile of piece c of `pieces`, at a multiple of `unit` tiles, so that only the
 * batch's last unit is short: own passes in whole strips (even tiles per chunk cut AVX2's
 * 6-tile strips of a 247-tile chunk as 41 x 6 + 1), the weight gradient's runs in whole chunks
 * (runs of a quarter of the tiles each, their last passes short, ran 8% slower on one
 * thread). */
static long own_first(long tiles, long pieces, long c, int unit) {
  long first = (tiles + unit - 1) / unit * c / pieces * unit;
  return first < tiles ? first : tiles;
}

/* y (+)= q's convolution of x (+ bias), with p's filters w (transposed for dX), then the ReLU
 * if the forward's p->relu, or masked by `mask` (not NULL: a ReLU's output, with
 * p->dx_relu_slope) as it is stored. */
static void winograd(const SwkConv *p, const SwkConv *q, int m, bool transposed, int batch,
                     const float *x, const float *w, const float *bias, float *y, bool accumulate,
                     const float *mask, float *ws) {
  HostWinograd g = host_winograd(q, m);
  Kernels k = kernels();
  float *u = ws, *padded_bias = u + host_winograd_filter_floats(&g);
  float *v = ws + host_winograd_tiles_offset(&g);
  Operands o = {.x = x,
                .u = u,
                .bias = bias ? padded_bias : NULL,
                .y = y,
                .accumulate = accumulate,
                .relu = !transposed && p->relu,
                .mask = mask,
                .slope = transposed ? p->dx_relu_slope : p->relu_slope,
                .ceiling = swk_mask_ceiling(p)};
  long tiles = (long)batch * g.tiles_h * g.tiles_w;
  int threads = swk_threads();
  int pixels = k.blocks->pixels;
  long chunks = own_passes(&g, tiles, threads, pixels);
#pragma omp parallel num_threads(threads)
  {
    transform_filters(p, w, transposed, &g, k, u);
#pragma omp single
    for (int c = 0; c < g.bo * 16; c++) padded_bias[c] = bias && c < q->co ? bias[c] : 0;
    if (chunks) {
      float *mine = v + (size_t)omp_get_thread_num() * host_winograd_pass_floats(&g);
#pragma omp for schedule(dynamic)
      for (long c = 0; c < chunks; c++) {
        long first = own_first(tiles, chunks, c, pixels);
        int count = (int)(own_first(tiles, chunks, c + 1, pixels) - first);
        if (!count) continue;
        Pass s = pass_at(q, &g, k, &o, first, count, false, mine);
        run_pass(&s);
      }
    } else {
      for (long first = 0; first < tiles; first += g.chunk) {
        Pass s = pass_at(q, &g, k, &o, first, (int)smaller_long(g.chunk, tiles - first), true, v);
        run_pass(&s);
      }
    }
  }
}

void host_conv_winograd_forward(const SwkConv *p, int m, int batch, const float *x, const float *w,
                                const float *bias, float *y, float *ws) {
  winograd(p, p, m, false, batch, x, w, bias, y, false, NULL, ws);
}

void host_conv_winograd_input_gradient(const SwkConv *p, int m, int batch, const float *w,
                                       const float *dy, float *dx, bool dx_add, const float *mask,
                                       float *ws) {
  SwkConv q = host_direct_transposed(p);
  winograd(p, &q, m, true, batch, dy, w, NULL, dx, dx_add, mask, ws);
}

/* ------------------------------------------------------------------ the weight gradient */

/* Each thread its share of the sums S[position][output block][input block][16 in][16 out]:
 * the register blocks' tiles (nb output blocks by nl input channels) summed over this pass's
 * tiles in place, or set to that sum by the first pass (nothing zeroes them beforehand: 16.8 MB
 * for res5's F(2x2)). */
static void accumulate_sums(const Pass *s, long i) {
  const DirectIsa *b = s->k.blocks;
  int most = b->blocks, chunks = ceil_div(16, b->lanes);
  ptrdiff_t s_position = (ptrdiff_t)s->g.bo * s->g.bi * 256;
  int chunk = (int)(i % chunks), ib = (int)(i / chunks % s->g.bi);
  int group = (int)(i / chunks / s->g.bi % s->groups),
      position = (int)(i / chunks / s->g.bi / s->groups);
  int ob = group * most, l0 = chunk * b->lanes;
  int nl = smaller(smaller(b->lanes, 16 - l0), s->q->ci - ib * 16 - l0);
  if (nl <= 0) return;
  Tile t = {.dy = tile_of(&s->p, ob, 0) + position * s->p.position,
            .x = tile_of(&s->v, ib, 0) + position * s->v.position + l0,
            .dy_block = s->p.block,
            .x_pixel = s->v.tile,
            .x_lane = 1,
            .images = 1,
            .rows = 1,
            .wo = s->count,
            .sum =
                s->o->sums + position * s_position + ((ptrdiff_t)ob * s->g.bi + ib) * 256 + l0 * 16,
            .sum_block = (ptrdiff_t)s->g.bi * 256,
            .fresh = s->fresh};
  b->tile(smaller(most, s->g.bo - ob), nl, &t);
}

/* dW = keep * dW + scale * G^T S G, 16 output channels of one input channel at a time. */
static void store_weights(const SwkConv *p, const HostWinograd *g, Kernels k, const float *sums,
                          float *dw, float scale, float keep) {
  ptrdiff_t s_position = (ptrdiff_t)g->bo * g->bi * 256;
  long items = (long)g->bo * p->ci;
  int taps_n = p->kh * p->kw;
#pragma omp for schedule(guided)
  for (long i = 0; i < items; i++) {
    int ob = (int)(i / p->ci), c = (int)(i % p->ci);
    float taps[5 * 5][16];
    k.transforms->weights(g->m, p->kh,
                          sums + ((ptrdiff_t)ob * g->bi + c / 16) * 256 + (c % 16) * 16, s_position,
                          &taps[0][0]);
    for (int o = 0; o < 16 && ob * 16 + o < p->co; o++) {
      float *d = dw + ((size_t)(ob * 16 + o) * (size_t)p->ci + (size_t)c) * (size_t)taps_n;
      for (int t = 0; t < taps_n; t++)
        d[t] = keep == 0 ? scale * taps[t][o] : keep * d[t] + scale * taps[t][o];
    }
  }
}

/* Tiles [from, to) into o's sums, in passes of a chunk (the first sets the sums), each shared
 * by the team (`shared`, v its buffers) or run by this thread alone (v: its own). */
static void sum_tiles(const SwkConv *p, const HostWinograd *g, Kernels k, const Operands *o,
                      long from, long to, bool shared, float *v) {
  for (long first = from; first < to; first += g->chunk) {
    Pass s = pass_at(p, g, k, o, first, (int)smaller_long(g->chunk, to - first), shared, v);
    s.fresh = first == from;
    run_phase(&s, transform_input, (long)g->bi * s.count);
    run_phase(&s, transform_gradient, (long)g->bo * s.count);
    run_phase(&s, accumulate_sums,
              (long)g->positions * s.groups * g->bi * ceil_div(16, k.blocks->lanes));
  }
}

/* The sets of sums (`sets` of n floats, the first at sums, the others from `more`) added
 * into the first, in order. */
static void add_sets(float *sums, const float *more, size_t n, int sets) {
#pragma omp for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float t = sums[i];
    for (int s = 1; s < sets; s++) t += more[(size_t)(s - 1) * n + i];
    sums[i] = t;
  }
}

/* The batch's tiles in runs summed into sets of their own by one thread each, or in passes
 * the team shares (host_winograd_wgrad_sets). */
void host_conv_winograd_weight_gradient(const SwkConv *p, int m, int batch, const float *x,
                                        const float *dy, float *dw, float *db, float scale,
                                        float bias_scale, float keep, float *ws) {
  HostWinograd g = host_winograd(p, m);
  Kernels k = kernels();
  size_t n = host_winograd_filter_floats(&g);
  float *sums = ws, *v = ws + host_winograd_tiles_offset(&g);
  float *more = v + (size_t)swk_threads() * host_winograd_pass_floats(&g); /* sets 1.. */
  Operands o = {.x = x, .dy = dy, .sums = sums};
  long tiles = (long)batch * g.tiles_h * g.tiles_w;
  int sets = host_winograd_wgrad_sets(&g, tiles);
#pragma omp parallel num_threads(swk_threads())
  {
    if (sets > 1) {
      float *mine = v + (size_t)omp_get_thread_num() * host_winograd_pass_floats(&g);
#pragma omp for schedule(static)
      for (int set = 0; set < sets; set++) {
        Operands own = o;
        if (set) own.sums = more + (size_t)(set - 1) * n;
        sum_tiles(p, &g, k, &own, own_first(tiles, sets, set, g.chunk),
                  own_first(tiles, sets, set + 1, g.chunk), false, mine);
      }
      add_sets(sums, more, n, sets);
    } else {
      sum_tiles(p, &g, k, &o, 0, tiles, true, v);
    }
    store_weights(p, &g, k, sums, dw, scale, keep);
  }
  if (db) host_direct_bias_gradient(p, batch, dy, db, bias_scale, keep);
}

/* ------------------------------------------------------------------ the kernel interface */

#define WINOGRAD_KERNELS(m)                                                                        \
  size_t swk_conv_winograd##m##_workspace(const SwkConv *p) {                                      \
    return host_conv_winograd_workspace(p, m);                                                     \
  }                                                                                                \
  void swk_conv_winograd##m##_forward(const SwkConv *p, int batch, const float *x, const float *w, \
                                      const float *b, float *y, float *ws) {                       \
    host_conv_winograd_forward(p, m, batch, x, w, p->bias ? b : NULL, y, ws);                      \
  }                                                                                                \
  void swk_conv_winograd##m##_backward(const SwkConv *p, int batch, const float *x,                \
                                       const float *w, const float *dy, float *dx, bool dx_add,    \
                                       float *dw, float *db, float grad_scale,                     \
                                       float bias_grad_scale, float grad_keep, float *ws) {        \
    if (dw)                                                                                        \
      host_conv_winograd_weight_gradient(p, m, batch, x, dy, dw, p->bias ? db : NULL, grad_scale,  \
                                         bias_grad_scale, grad_keep, ws);                          \
    if (dx)                                                                                        \
      host_conv_winograd_input_gradient(p, m, batch, w, dy, dx, dx_add, p->dx_relu ? x : NULL,     \
                                        ws);                                                       \
  }

WINOGRAD_KERNELS(2)
WINOGRAD_KERNELS(4)
