/* Single-precision matrix multiply for the host kernels, on the calling thread:
 *   C (m x n) = op(A) (m x k) op(B) (k x n) + beta C,   row-major, op(X) = X or X^T.
 * The kernels split their work over threads themselves and give each call `pack`, a scratch
 * area of HOST_GEMM_PACK_FLOATS floats from their workspace. The micro-kernel
 * is the widest the CPU runs (AVX-512, AVX2+FMA or plain C), chosen once. */
#ifndef SWNC_HOST_GEMM_H
#define SWNC_HOST_GEMM_H

#include <stdbool.h>
#include <stddef.h>

enum { HOST_GEMM_KC = 192, HOST_GEMM_MC = 96, HOST_GEMM_NC = 768 };
enum { HOST_GEMM_PACK_FLOATS = (HOST_GEMM_MC + HOST_GEMM_NC) * HOST_GEMM_KC };

void host_sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float *a, size_t lda,
                const float *b, size_t ldb, float beta, float *c, size_t ldc, float *pack);

/* The instruction set the micro-kernel uses: "avx512", "avx2" or "c". SWN_ISA in the
 * environment picks a narrower one (tests run every path the CPU has). */
const char *host_gemm_isa(void);
/* For tests: use `isa` from now on; false if this CPU cannot run it. */
bool host_gemm_use(const char *isa);

#endif
