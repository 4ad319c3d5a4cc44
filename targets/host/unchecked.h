/* Register blocks under AddressSanitizer.
 *
 * The register-blocked loops (the direct convolution's strips and tiles, the GEMM's
 * micro-kernels) load and store whole vectors, 64 bytes with AVX-512. ASan checks an access
 * wider than 16 bytes through its slow generic path, one call per access: an instrumented
 * training run was about 100 times slower than a plain one, most of the sanitizer suite's
 * time. These loops are built uninstrumented (UNCHECKED_LOOP: UBSan's checks of their index
 * arithmetic left them a fifth slower still) and their entry points check
 * each call's footprint once, region by region (check_region), before the loop runs: a block
 * that would read or write out of bounds is still reported, at the check, with its stack.
 * Without ASan both are nothing. */
#ifndef SWNC_HOST_UNCHECKED_H
#define SWNC_HOST_UNCHECKED_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define SWNC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWNC_ASAN 1
#endif
#endif

#ifdef SWNC_ASAN
#include <sanitizer/asan_interface.h>

#define UNCHECKED_LOOP __attribute__((no_sanitize("address", "undefined")))

/* Reports the first poisoned byte of [p, p + bytes) as ASan reports any bad access: by
 * reading it here, where accesses are checked (never inlined into an unchecked loop). */
__attribute__((noinline, unused)) static void check_region(const void *p, size_t bytes) {
  const volatile char *bad = __asan_region_is_poisoned((void *)(size_t)p, bytes);
  if (bad) (void)*bad;
}
#define CHECKING_REGIONS 1
#else
#define UNCHECKED_LOOP
static inline void check_region(const void *p, size_t bytes) {
  (void)p;
  (void)bytes;
}
#define CHECKING_REGIONS 0
#endif

#endif
