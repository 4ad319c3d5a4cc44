/* Single-precision matrix multiply for the host kernels, on the calling thread:
 *   C (m x n) = alpha A (m x k) B (k x n) + beta C,   row-major (alpha 1 unless scaled).
 * An operand is stored (op(X) = X or X^T of a row-major X) or computed block by block as the
 * GEMM packs it: a convolution's column matrix is read from the image this way, never written
 * out whole (im2col.h). The kernels split their work over threads themselves and give each call
 * `pack`, a scratch area of HOST_GEMM_PACK_FLOATS floats from their workspace. The micro-kernel
 * is the widest the CPU runs (AVX-512, AVX2+FMA or plain C), chosen once. */
#ifndef SWNC_HOST_GEMM_H
#define SWNC_HOST_GEMM_H

#include <stdbool.h>
#include <stddef.h>

enum { HOST_GEMM_KC = 192, HOST_GEMM_MC = 96, HOST_GEMM_NC = 768 };
enum { HOST_GEMM_PACK_FLOATS = (HOST_GEMM_MC + HOST_GEMM_NC) * HOST_GEMM_KC };

/* Writes rows [r0, r0 + rows) by columns [c0, c0 + cols) of a computed operand to dst, row
 * after row, `pitch` floats apart. */
typedef void HostBlock(const void *source, int r0, int rows, int c0, int cols, float *dst,
                       size_t pitch);

typedef struct HostMatrix {
  const float *data; /* stored: element (i, j) is data[i * ld + j], or data[j * ld + i] if trans */
  size_t ld;
  bool trans;
  HostBlock *block; /* computed (data unused): block(source, ...) */
  const void *source;
  const float *panels; /* A packed already (host_gemm_pack), as the GEMM reads it */
} HostMatrix;

static inline HostMatrix host_stored(const float *data, size_t ld, bool trans) {
  return (HostMatrix){.data = data, .ld = ld, .trans = trans};
}

/* An A operand several products share (a convolution's filters, used by every thread for every
 * group of images) is packed once, in the GEMM's panel layout, and named by host_packed:
 * host_gemm_pack writes rows [r0, r1) of A (m x k) into `panels`, so that threads can each
 * pack a share; r0 and r1 are multiples of host_gemm_rows() (r1 may be m). Panels hold
 * host_gemm_packed_floats(m, k) floats: rows rounded up to a multiple of every micro-kernel's
 * height (8, 6 and 4), so the size does not depend on which one the CPU runs. */
enum { HOST_GEMM_ROWS_MULTIPLE = 24 };
static inline size_t host_gemm_packed_floats(int m, int k) {
  return (size_t)((m + HOST_GEMM_ROWS_MULTIPLE - 1) / HOST_GEMM_ROWS_MULTIPLE *
                  HOST_GEMM_ROWS_MULTIPLE) *
         (size_t)k;
}
int host_gemm_rows(void);
void host_gemm_pack(HostMatrix a, int m, int k, int r0, int r1, float *panels);
static inline HostMatrix host_packed(const float *panels) { return (HostMatrix){.panels = panels}; }

/* alpha must be 1 when A is packed (host_packed). */
void host_gemm_scaled(int m, int n, int k, float alpha, HostMatrix a, HostMatrix b, float beta,
                      float *c, size_t ldc, float *pack);

static inline void host_gemm(int m, int n, int k, HostMatrix a, HostMatrix b, float beta, float *c,
                             size_t ldc, float *pack) {
  host_gemm_scaled(m, n, k, 1.0f, a, b, beta, c, ldc, pack);
}

/* host_gemm on two stored operands, in BLAS's argument order. */
static inline void host_sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float *a,
                              size_t lda, const float *b, size_t ldb, float beta, float *c,
                              size_t ldc, float *pack) {
  host_gemm(m, n, k, host_stored(a, lda, trans_a), host_stored(b, ldb, trans_b), beta, c, ldc,
            pack);
}

/* The instruction set the micro-kernel uses: "avx512", "avx2" or "c". SWN_ISA in the
 * environment picks a narrower one (tests run every path the CPU has). */
const char *host_gemm_isa(void);
/* For tests: use `isa` from now on; false if this CPU cannot run it. */
bool host_gemm_use(const char *isa);

#endif
