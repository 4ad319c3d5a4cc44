/* The direct convolution's AVX-512 register blocks (conv_direct_blocks.h, register_blocks.h): 2
 * blocks of 16 output channels x 14 pixels (28 accumulators), tiles of 2 blocks x 8 input
 * channels. Each instruction set's blocks are a file of their own so that the build compiles
 * them side by side: in one file with the direct plan they were its longest compile (90 s). */
#include "isa.h"
#include "register_blocks.h"
#include "unchecked.h"

#ifdef HOST_X86_KERNELS
#include <immintrin.h>

#define STRIP_ATTR __attribute__((target("avx512f"), always_inline)) UNCHECKED_LOOP inline
#define STRIP_ATTR_OUTER __attribute__((target("avx512f"))) UNCHECKED_LOOP
#define STRIP_VEC __m512
#define STRIP_VL 16
#define STRIP_MAXB 2
#define STRIP_MAXP 14
#define STRIP_LOAD(p) _mm512_loadu_ps(p)
#define STRIP_SET1(f) _mm512_set1_ps(f)
#define STRIP_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define STRIP_STORE(p, v) _mm512_storeu_ps(p, v)
#define STRIP_STREAM(p, v) _mm512_stream_ps(p, v)
#define STRIP_ZERO() _mm512_setzero_ps()
#define STRIP_WHERE_POSITIVE(t, v, slope)                                                          \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, _mm512_setzero_ps(), _CMP_GT_OQ),                     \
                       _mm512_mul_ps(v, slope), v)
#define STRIP_WHERE_INSIDE(t, v, slope, ceiling)                                                   \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, _mm512_setzero_ps(), _CMP_GT_OQ) &                    \
                           _mm512_cmp_ps_mask(t, ceiling, _CMP_LT_OQ),                             \
                       _mm512_mul_ps(v, slope), v)
#define STRIP_BODY avx512_strip_body
#define STRIP_NAME avx512_strip
#define STRIP_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14)
#define TILE_BODY avx512_tile_body
#define TILE_NAME avx512_tile
#define TILE_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
#include "conv_direct_blocks.h"

const DirectIsa host_blocks_avx512 = {.name = "avx512",
                                      .blocks = STRIP_MAXB,
                                      .pixels = STRIP_MAXP,
                                      .lanes = 8,
                                      .strip = avx512_strip,
                                      .tile = avx512_tile};
#endif
