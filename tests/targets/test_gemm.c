/* The host GEMM against a double-precision loop, on every micro-kernel this CPU runs: all four
 * transpositions, alpha 1 and otherwise, beta 0, 1 and otherwise, leading dimensions wider than the matrices, shapes
 * around the register block and the cache blocks (fringes in every direction). With alpha 1,
 * A packed beforehand (host_gemm_pack, in three shares of rows as threads pack it, into exactly
 * host_gemm_packed_floats) must give the same bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemm.h"

static int failures;

static float *random_matrix(size_t n, unsigned *seed) {
  float *x = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) x[i] = (float)rand_r(seed) / RAND_MAX * 2.0f - 1.0f;
  return x;
}

/* Element (i, j) of op(X) where X is stored row-major with leading dimension ld. */
static double at(const float *x, size_t ld, bool trans, int i, int j) {
  return trans ? x[(size_t)j * ld + i] : x[(size_t)i * ld + j];
}

/* C = A B + beta C0 with A packed first must equal `want`, the same product from A as stored. */
static void check_packed(const char *isa, bool ta, bool tb, int m, int n, int k, float beta,
                         const float *a, size_t lda, const float *b, size_t ldb, const float *c0,
                         const float *want, size_t ldc, float *pack) {
  float *panels = malloc(sizeof(float) * (host_gemm_packed_floats(m, k) + 1));
  float *c = malloc(sizeof(float) * (size_t)m * ldc);
  for (size_t i = 0; i < (size_t)m * ldc; i++) c[i] = c0[i];
  int unit = host_gemm_rows(), units = (m + unit - 1) / unit;
  for (int share = 0; share < 3; share++) {
    int r0 = units * share / 3 * unit, r1 = units * (share + 1) / 3 * unit;
    host_gemm_pack(host_stored(a, lda, ta), m, k, r0 < m ? r0 : m, r1 < m ? r1 : m, panels);
  }
  host_gemm(m, n, k, host_packed(panels), host_stored(b, ldb, tb), beta, c, ldc, pack);
  for (size_t i = 0; i < (size_t)m * ldc; i++)
    if (c[i] != want[i]) {
      printf("FAIL %s: %c%c m=%d n=%d k=%d beta=%g: packed A gives %g at %zu, stored A %g\n", isa,
             ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, beta, c[i], i, want[i]);
      failures++;
      break;
    }
  free(panels), free(c);
}

static void check(const char *isa, bool ta, bool tb, int m, int n, int k, float alpha, float beta,
                  unsigned *seed) {
  size_t lda = (size_t)(ta ? m : k) + 3, ldb = (size_t)(tb ? k : n) + 5, ldc = (size_t)n + 7;
  float *a = random_matrix((size_t)(ta ? k : m) * lda, seed);
  float *b = random_matrix((size_t)(tb ? n : k) * ldb, seed);
  float *c = random_matrix((size_t)m * ldc, seed), *c0 = malloc(sizeof(float) * m * ldc);
  for (size_t i = 0; i < (size_t)m * ldc; i++) c0[i] = c[i];
  float *pack = malloc(sizeof(float) * HOST_GEMM_PACK_FLOATS);
  host_gemm_scaled(m, n, k, alpha, host_stored(a, lda, ta), host_stored(b, ldb, tb), beta, c, ldc,
                   pack);
  double worst = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < (int)ldc; j++) {
      double want = c0[(size_t)i * ldc + j], scale = 1;
      if (j < n) { /* inside C: the product; outside (padding) untouched */
        want = beta == 0 ? 0 : beta * want;
        for (int p = 0; p < k; p++) {
          double t = alpha * at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
          want += t, scale += fabs(t);
        }
      }
      double err = fabs(c[(size_t)i * ldc + j] - want) / scale;
      if (err > worst) worst = err;
    }
  if (worst > 1e-6) {
    printf("FAIL %s: %c%c m=%d n=%d k=%d alpha=%g beta=%g: relative error %.3g\n", isa,
           ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, beta, worst);
    failures++;
  }
  if (alpha == 1) check_packed(isa, ta, tb, m, n, k, beta, a, lda, b, ldb, c0, c, ldc, pack);
  free(a), free(b), free(c), free(c0), free(pack);
}

int main(void) {
  static const char *const isas[] = {"avx512", "avx2", "c"};
  static const int shapes[][3] = {{1, 1, 1},      {3, 5, 7},      {8, 48, 1},    {9, 49, 2},
                                  {7, 15, 33},    {16, 16, 16},   {17, 33, 65},  {32, 256, 75},
                                  {32, 250, 300}, {6, 8, 200},    {97, 31, 193}, {5, 800, 20},
                                  {100, 1000, 3}, {200, 770, 40}, {13, 17, 0},   {64, 64, 400}};
  static const float betas[] = {0.0f, 1.0f, 0.5f}, alphas[] = {1.0f, 0.25f};
  int tried = 0;
  unsigned seed = 12345;
  for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
    if (!host_gemm_use(isas[i])) {
      printf("%s: this CPU does not run it, skipped\n", isas[i]);
      continue;
    }
    tried++;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      for (int t = 0; t < 4; t++)
        check(isas[i], t & 1, t & 2, shapes[s][0], shapes[s][1], shapes[s][2], alphas[(s + t) % 2],
              betas[(s + t) % 3], &seed);
    printf("%s: %zu shapes x 4 transpositions checked\n", isas[i], sizeof shapes / sizeof *shapes);
  }
  if (!tried || !host_gemm_use("c")) failures++; /* plain C runs everywhere */
  if (failures) printf("%d failures\n", failures);
  return failures ? 1 : 0;
}
