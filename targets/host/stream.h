/* Stores that bypass the caches, for outputs too large to be in them when the next layer reads
 * them. A plain store of a line that is not in cache reads it from memory first (for
 * ownership), so writing a large tensor moves it twice; a non-temporal store writes whole lines
 * straight to memory. Measured on the development machine (2 threads, 25 MB written then read
 * back): 2.8 ms with plain stores, 1.9 ms streaming; equal at 2 MB, where the lines would
 * still have been in L2 for the reader. Kernels stream an output whose tensor is at least
 * HOST_STREAM_BYTES and whose address allows it, and call host_stream_fence before their
 * threads join, so that the stores are visible to whoever runs next. */
#ifndef SWNC_HOST_STREAM_H
#define SWNC_HOST_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HOST_STREAM_X86 1
#endif

/* Larger than both cores' L2 caches together (2 x 2 MB on the development machine). */
enum { HOST_STREAM_BYTES = 4 << 20, HOST_STREAM_ALIGN = 64 };

/* Whether an output of `bytes` at `p` is written with streaming stores. */
static inline bool host_streams(const void *p, size_t bytes) {
#ifdef HOST_STREAM_X86
  return bytes >= HOST_STREAM_BYTES && (uintptr_t)p % HOST_STREAM_ALIGN == 0;
#else
  (void)p, (void)bytes;
  return false;
#endif
}

/* dst[0..n) = src[0..n), streaming whole 64-byte lines where dst allows (the kernels' outputs
 * run in lines: a block's pixel, a chunk of 2048 floats), plainly for the rest. */
static inline void host_stream_copy(float *dst, const float *src, size_t n) {
  size_t i = 0;
#if defined(HOST_STREAM_X86) && defined(__AVX512F__)
  if ((uintptr_t)dst % 64 == 0)
    for (; i + 16 <= n; i += 16) _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#elif defined(HOST_STREAM_X86) && defined(__AVX__)
  if ((uintptr_t)dst % 32 == 0)
    for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
#elif defined(HOST_STREAM_X86)
  if ((uintptr_t)dst % 16 == 0)
    for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
#endif
  memcpy(dst + i, src + i, sizeof(float) * (n - i));
}

/* Orders this thread's streaming stores before its later stores (and the threads' join). */
static inline void host_stream_fence(void) {
#ifdef HOST_STREAM_X86
  _mm_sfence();
#endif
}

#endif
