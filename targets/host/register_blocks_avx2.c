/* The direct convolution's AVX2 + FMA register blocks (conv_direct_blocks.h, register_blocks.h):
 * 1 block of 16 output channels (2 vectors) x 6 pixels (12 accumulators), tiles of 1 block x 6
 * input channels; a file of their own as AVX-512's (register_blocks_avx512.c). */
#include "isa.h"
#include "register_blocks.h"
#include "unchecked.h"

#ifdef HOST_X86_KERNELS
#include <immintrin.h>

#define STRIP_ATTR __attribute__((target("avx2,fma"), always_inline)) UNCHECKED_LOOP inline
#define STRIP_ATTR_OUTER __attribute__((target("avx2,fma"))) UNCHECKED_LOOP
#define STRIP_VEC __m256
#define STRIP_VL 8
#define STRIP_MAXB 1
#define STRIP_MAXP 6
#define STRIP_LOAD(p) _mm256_loadu_ps(p)
#define STRIP_SET1(f) _mm256_set1_ps(f)
#define STRIP_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define STRIP_STORE(p, v) _mm256_storeu_ps(p, v)
#define STRIP_STREAM(p, v) _mm256_stream_ps(p, v)
#define STRIP_ZERO() _mm256_setzero_ps()
#define STRIP_WHERE_POSITIVE(t, v, slope)                                                          \
  _mm256_blendv_ps(_mm256_mul_ps(v, slope), v, _mm256_cmp_ps(t, _mm256_setzero_ps(), _CMP_GT_OQ))
#define STRIP_WHERE_INSIDE(t, v, slope, ceiling)                                                   \
  _mm256_blendv_ps(_mm256_mul_ps(v, slope), v,                                                     \
                   _mm256_and_ps(_mm256_cmp_ps(t, _mm256_setzero_ps(), _CMP_GT_OQ),                \
                                 _mm256_cmp_ps(t, ceiling, _CMP_LT_OQ)))
#define STRIP_BODY avx2_strip_body
#define STRIP_NAME avx2_strip
#define STRIP_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6)
#define TILE_BODY avx2_tile_body
#define TILE_NAME avx2_tile
#define TILE_CASES(X) X(1) X(2) X(3) X(4) X(5) X(6)
#include "conv_direct_blocks.h"

const DirectIsa host_blocks_avx2 = {.name = "avx2",
                                    .blocks = STRIP_MAXB,
                                    .pixels = STRIP_MAXP,
                                    .lanes = 6,
                                    .strip = avx2_strip,
                                    .tile = avx2_tile};
#endif
