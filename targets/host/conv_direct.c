/* Direct convolution on the channel-blocked layout (conv_direct.h). Output channels are the
 * vector lanes: a register block holds one or two blocks of 16 output channels for a strip of
 * up to 14 output pixels of one row (AVX-512: 28 accumulators; AVX2: one block of 6 pixels,
 * 12), and per input channel and tap the strip's filters are loaded once and each pixel's input
 * is broadcast against them: two loads' worth of filters and one broadcast per pixel feed
 * 2 x 14 FMAs. Rows of taps in the vertical padding are skipped; for the horizontal padding
 * each thread first copies the image it works on with zero columns at both sides (a copy costs
 * what one pass over the input does; strips of edge pixels with their own taps ran at a
 * quarter of the speed), so that every strip has all kw taps. The filters, (No, Ni, K, K) as every plan keeps
 * them, are packed per call into (No/16, Ni/16, K, K, 16 input, 16 output), zero outside the
 * channels. Threads split (image, pair of output blocks, output row) evenly, so results do
 * not depend on their number: each output is one sum in one order. */
#include "conv_direct.h"

#include <omp.h>
#include <pthread.h>
#include <string.h>

#include "isa.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DIRECT_X86 1
#endif

/* One register block's work; offsets are in floats from `x`, which may be before the image for
 * a strip in its top rows (only the rows of taps inside it are read). */
typedef struct Strip {
  const float *x;
  ptrdiff_t x_offset; /* the strip's first pixel's tap (0, 0), channel 0 */
  ptrdiff_t x_block, x_row, x_col, x_pixel, x_lane; /* next input block, row, tap column, strip
                                                       pixel, channel in a block */
  int blocks_in, lanes_last;                        /* input blocks; channels in the last */
  int kh, kw, kh0, kh1; /* kernel size; the rows of taps inside the image */
  const float *w;       /* packed filters of the first output block */
  ptrdiff_t w_block;    /* to the next output block's */
  const float *bias;    /* padded, of the first output block; NULL: none */
  float *y;
  ptrdiff_t y_block;
} Strip;

/* ------------------------------------------------------------------ plain C: the reference */

static void c_strip(int nb, int np, const Strip *s) {
  for (int b = 0; b < nb; b++)
    for (int p = 0; p < np; p++)
      for (int o = 0; o < 16; o++) {
        float sum = s->bias ? s->bias[b * 16 + o] : 0;
        for (int cb = 0; cb < s->blocks_in; cb++) {
          int lanes = cb == s->blocks_in - 1 ? s->lanes_last : 16;
          for (int kh = s->kh0; kh < s->kh1; kh++)
            for (int kw = 0; kw < s->kw; kw++)
              for (int l = 0; l < lanes; l++) {
                const float *x = s->x + (s->x_offset + cb * s->x_block + kh * s->x_row +
                                         kw * s->x_col + p * s->x_pixel + l * s->x_lane);
                size_t tap = ((size_t)(cb * s->kh + kh) * (size_t)s->kw + (size_t)kw) * 256;
                sum += s->w[(ptrdiff_t)tap + b * s->w_block + l * 16 + o] * *x;
              }
        }
        s->y[b * s->y_block + p * 16 + o] = sum;
      }
}

#ifdef DIRECT_X86
/* ------------------------------------------------------------------ AVX-512: 2 blocks x 14 */

#define STRIP_ATTR __attribute__((target("avx512f"), always_inline)) inline
#define STRIP_ATTR_OUTER __attribute__((target("avx512f")))
#define STRIP_VEC __m512
#define STRIP_VL 16
#define STRIP_MAXP 14
#define STRIP_LOAD(p) _mm512_loadu_ps(p)
#define STRIP_SET1(f) _mm512_set1_ps(f)
#define STRIP_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define STRIP_STORE(p, v) _mm512_storeu_ps(p, v)
#define STRIP_ZERO() _mm512_setzero_ps()
#define STRIP_BODY avx512_strip_body
#define STRIP_NAME avx512_strip
#define STRIP_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14)
#include "conv_direct_strip.h"
enum { AVX512_PIXELS = STRIP_MAXP };
#undef STRIP_ATTR
#undef STRIP_ATTR_OUTER
#undef STRIP_VEC
#undef STRIP_VL
#undef STRIP_MAXP
#undef STRIP_LOAD
#undef STRIP_SET1
#undef STRIP_FMA
#undef STRIP_STORE
#undef STRIP_ZERO
#undef STRIP_BODY
#undef STRIP_NAME
#undef STRIP_CASES

/* ------------------------------------------------------------------ AVX2 + FMA: 1 block x 6 */

#define STRIP_ATTR __attribute__((target("avx2,fma"), always_inline)) inline
#define STRIP_ATTR_OUTER __attribute__((target("avx2,fma")))
#define STRIP_VEC __m256
#define STRIP_VL 8
#define STRIP_MAXP 6
#define STRIP_LOAD(p) _mm256_loadu_ps(p)
#define STRIP_SET1(f) _mm256_set1_ps(f)
#define STRIP_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define STRIP_STORE(p, v) _mm256_storeu_ps(p, v)
#define STRIP_ZERO() _mm256_setzero_ps()
#define STRIP_BODY avx2_strip_body
#define STRIP_NAME avx2_strip
#define STRIP_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6)
#include "conv_direct_strip.h"
enum { AVX2_PIXELS = STRIP_MAXP };
#endif

/* ------------------------------------------------------------------ instruction sets */

typedef struct DirectIsa {
  const char *name;
  int blocks, pixels; /* the largest register block: output blocks x pixels */
  void (*strip)(int nb, int np, const Strip *s);
} DirectIsa;

static const DirectIsa isas[] = {
#ifdef DIRECT_X86
    {"avx512", 2, AVX512_PIXELS, avx512_strip},
    {"avx2", 1, AVX2_PIXELS, avx2_strip},
#endif
    {"c", 2, 8, c_strip},
};
enum { ISA_COUNT = sizeof isas / sizeof isas[0] };
_Static_assert((int)ISA_COUNT == (int)HOST_ISA_COUNT, "a strip per instruction set of isa.h");

static const DirectIsa *isa;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static void choose_isa(void) {
  const char *name = host_isa_choice();
  isa = &isas[ISA_COUNT - 1];
  for (int i = 0; i < ISA_COUNT; i++)
    if (!strcmp(isas[i].name, name)) isa = &isas[i];
}

static const DirectIsa *current(void) {
  pthread_once(&isa_once, choose_isa);
  return isa;
}

const char *host_conv_direct_isa(void) { return current()->name; }

bool host_conv_direct_use(const char *name) {
  current();
  for (int i = 0; i < ISA_COUNT; i++)
    if (!strcmp(isas[i].name, name) && host_isa_runs(name)) {
      isa = &isas[i];
      return true;
    }
  return false;
}

/* ------------------------------------------------------------------ packing */

static size_t packed_filter_floats(const SwkConv *p) {
  return (size_t)host_blocks(p->co) * (size_t)host_blocks(p->ci) * (size_t)(p->kh * p->kw) * 256;
}

/* Output block ob's filters: [ib][kh][kw][16 in][16 out]. */
static void pack_block(const SwkConv *p, const float *w, int ob, float *packed) {
  int bi = host_blocks(p->ci), taps = p->kh * p->kw;
  float *dst = packed + (size_t)ob * (size_t)bi * (size_t)taps * 256;
  for (int ib = 0; ib < bi; ib++)
    for (int t = 0; t < taps; t++, dst += 256)
      for (int l = 0; l < 16; l++)
        for (int o = 0; o < 16; o++) {
          int co = ob * 16 + o, ci = ib * 16 + l;
          dst[l * 16 + o] = co < p->co && ci < p->ci
                                ? w[((size_t)co * (size_t)p->ci + (size_t)ci) * taps + t]
                                : 0;
        }
}

/* ------------------------------------------------------------------ the forward pass */

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Floats of one image as a thread reads it: with pw zero columns at both sides of every row. */
static size_t padded_image_floats(const SwkConv *p, bool x_planar) {
  size_t channels = x_planar ? (size_t)p->ci : (size_t)host_blocks(p->ci) * HOST_BLOCK;
  return p->pw ? channels * (size_t)p->h * (size_t)(p->w + 2 * p->pw) : 0;
}

static size_t packed_bias_floats(const SwkConv *p) {
  return (size_t)host_blocks(p->co) * HOST_BLOCK;
}

/* A padded image holds at most as many floats blocked as planar. */
size_t host_conv_direct_workspace(const SwkConv *p) {
  return packed_filter_floats(p) + packed_bias_floats(p) +
         (size_t)swk_threads() * padded_image_floats(p, false);
}

/* Image `image` of x with its rows widened by pw zero columns at both sides, into dst. */
static void pad_image(const SwkConv *p, const float *x, bool x_planar, int image, float *dst) {
  int pixel = x_planar ? 1 : HOST_BLOCK;
  size_t rows = (x_planar ? (size_t)p->ci : (size_t)host_blocks(p->ci)) * (size_t)p->h;
  size_t row = (size_t)p->w * (size_t)pixel, side = (size_t)p->pw * (size_t)pixel;
  const float *src = x + (size_t)image * rows * row;
  for (size_t r = 0; r < rows; r++, src += row, dst += row + 2 * side) {
    memset(dst, 0, sizeof(float) * side);
    memcpy(dst + side, src, sizeof(float) * row);
    memset(dst + side + row, 0, sizeof(float) * side);
  }
}

/* Output row oh of one image (x: that image, padded or not; row_floats its rows' length) and
 * output blocks [ob, ob + nb), in strips of the widest register block. */
static void compute_row(const SwkConv *p, const float *x, bool x_planar, ptrdiff_t row_floats,
                        const float *packed, const float *bias, float *y, int ob, int nb, int oh) {
  int bi = host_blocks(p->ci), taps = p->kh * p->kw;
  Strip s = {
      .x = x, .blocks_in = bi, .lanes_last = p->ci - (bi - 1) * 16, .kh = p->kh, .kw = p->kw};
  s.x_col = x_planar ? 1 : 16;
  s.x_lane = x_planar ? (ptrdiff_t)p->h * row_floats : 1;
  s.x_row = row_floats;
  s.x_block = (x_planar ? 16 : 1) * (ptrdiff_t)p->h * row_floats; /* 16 channels */
  s.x_pixel = (ptrdiff_t)p->sw * s.x_col;
  int ih = oh * p->sh - p->ph;
  s.kh0 = ih < 0 ? -ih : 0;
  s.kh1 = p->h - ih < p->kh ? p->h - ih : p->kh;
  s.w = packed + (size_t)ob * (size_t)bi * (size_t)taps * 256;
  s.w_block = (ptrdiff_t)bi * taps * 256;
  s.bias = bias ? bias + ob * 16 : NULL;
  s.y_block = (ptrdiff_t)p->ho * p->wo * 16;
  int most = current()->pixels;
  for (int ow = 0; ow < p->wo; ow += most) {
    int np = p->wo - ow < most ? p->wo - ow : most;
    Strip at = s;
    at.x_offset = (ptrdiff_t)ih * s.x_row + (ptrdiff_t)ow * s.x_pixel;
    at.y = y + ((ptrdiff_t)ob * p->ho + oh) * p->wo * 16 + (ptrdiff_t)ow * 16;
    current()->strip(nb, np, &at);
  }
}

void host_conv_direct_forward(const SwkConv *p, int batch, const float *x, bool x_planar,
                              const float *w, const float *bias, float *y, float *ws) {
  int bo = host_blocks(p->co), most = current()->blocks, groups = ceil_div(bo, most);
  float *packed = ws, *padded_bias = ws + packed_filter_floats(p);
  float *padded = padded_bias + packed_bias_floats(p);
  size_t image_floats = (x_planar ? (size_t)p->ci : (size_t)host_blocks(p->ci) * HOST_BLOCK) *
                        (size_t)p->h * (size_t)p->w;
  size_t y_image = (size_t)bo * HOST_BLOCK * (size_t)p->ho * (size_t)p->wo;
  ptrdiff_t row_floats = (ptrdiff_t)(p->w + 2 * p->pw) * (x_planar ? 1 : HOST_BLOCK);
  long rows = (long)batch * groups * p->ho;
#pragma omp parallel num_threads(swk_threads())
  {
#pragma omp for schedule(static)
    for (int ob = 0; ob < bo; ob++) pack_block(p, w, ob, packed);
#pragma omp single
    for (int o = 0; o < bo * 16; o++) padded_bias[o] = bias && o < p->co ? bias[o] : 0;
    float *mine = padded + padded_image_floats(p, x_planar) * (size_t)omp_get_thread_num();
    int have = -1; /* the image `mine` holds */
#pragma omp for schedule(static)
    for (long i = 0; i < rows; i++) {
      int oh = (int)(i % p->ho), group = (int)(i / p->ho % groups);
      int image = (int)(i / p->ho / groups), ob = group * most;
      const float *xi = x + (size_t)image * image_floats;
      if (p->pw && have != image) pad_image(p, x, x_planar, image, mine), have = image;
      compute_row(p, p->pw ? mine : xi, x_planar, row_floats, packed, bias ? padded_bias : NULL,
                  y + (size_t)image * y_image, ob, bo - ob < most ? bo - ob : most, oh);
    }
  }
}

void host_to_blocked(const float *x, int batch, int c, int hw, float *y) {
  int blocks = host_blocks(c);
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long i = 0; i < (long)batch * blocks; i++) {
    int b = (int)(i / blocks), cb = (int)(i % blocks);
    float *dst = y + (size_t)i * 16 * (size_t)hw;
    for (int l = 0; l < 16; l++) {
      int ch = cb * 16 + l;
      const float *src = x + ((size_t)b * (size_t)c + (size_t)ch) * (size_t)hw;
      for (int q = 0; q < hw; q++) dst[(size_t)q * 16 + (size_t)l] = ch < c ? src[q] : 0;
    }
  }
}

void host_from_blocked(const float *x, int batch, int c, int hw, float *y) {
  int blocks = host_blocks(c);
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long i = 0; i < (long)batch * blocks; i++) {
    int b = (int)(i / blocks), cb = (int)(i % blocks);
    const float *src = x + (size_t)i * 16 * (size_t)hw;
    for (int l = 0; l < 16 && cb * 16 + l < c; l++) {
      float *dst = y + ((size_t)b * (size_t)c + (size_t)(cb * 16 + l)) * (size_t)hw;
      for (int q = 0; q < hw; q++) dst[q] = src[(size_t)q * 16 + (size_t)l];
    }
  }
}
