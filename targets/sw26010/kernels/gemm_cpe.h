/* The register-communication-blocked product on the 8x8 CPE mesh (swCaffe, section 4), shared by
 * the GEMM (gemm_cpe.c) and the implicit convolution (conv_implicit_cpe.c). A C tile of
 * 8bm x 8bn is spread over the mesh, CPE (i,j) owning block (i,j). To add A B to it (A: m x k,
 * B: k x n), for each slice of 8bk of the inner dimension CPE (i,j) loads block (i,j) of A's
 * slice (bm x bk) and of B's (bk x bn); then in step s = 0..7 CPE (i,s) broadcasts its A block
 * along row i and CPE (s,j) its B block along column j, and every CPE adds A(i,s) B(s,j) to
 * its C block. Blocks past the matrix edges are zero, so every CPE takes part in every
 * exchange: all 64 CPEs must make the same sequence of calls.
 * A run keeps several C blocks in LDM that share the A operand (B_r differs): each slice of A
 * is then loaded and broadcast once for the run, not once per product. */
#ifndef SWNC_SW26010_GEMM_CPE_H
#define SWNC_SW26010_GEMM_CPE_H

#include <stdint.h>
#include <string.h>

#include "cpe.h"

/* A matrix in main memory: its logical size, stored row-major with leading dimension ld, or
 * as its transpose (cols x rows) when `transposed`. */
typedef struct Block {
  const float *base;
  int ld, rows, cols;
  int transposed;
} Block;

typedef struct Tiles {
  int bm, bn, bk; /* the blocks each CPE holds: multiples of 4 */
} Tiles;

/* This CPE's buffers: A and B blocks (own and received), `runs` B and C blocks for a run. */
typedef struct Ldm {
  float *a, *b, *ar, *br, *c, *tmp, *bias;
  int runs, tmp_floats;
} Ldm;

/* Whether the block at stored column `at` (of blocks `cap` wide, tiles of 8 from column 0) lies
 * in a tile whose 8 blocks are all whole: the 8 CPEs moving them then take adjacent blocks of
 * each stored line, together contiguous runs (tiled strided transfers). */
static inline bool gemm_whole_tile(int at, int cap, int extent) {
  return (at / (8 * cap) + 1) * 8 * cap <= extent;
}

/* dst[cap_r][cap_c] = the logical block at (r0, c0), zero outside the matrix. Memory-pipeline
 * work (cpe_count_ldm): the zeroing in vector stores, a load and a store per element copied. */
static inline void gemm_load(float *dst, int cap_r, int cap_c, const Block *m, int r0, int c0,
                             float *tmp) {
  int r = m->rows - r0 < cap_r ? m->rows - r0 : cap_r,
      c = m->cols - c0 < cap_c ? m->cols - c0 : cap_c;
  memset(dst, 0, sizeof(float) * (size_t)cap_r * (size_t)cap_c);
  cpe_count_ldm(cap_r * cap_c / 4);
  if (r <= 0 || c <= 0) return;
  cpe_count_ldm(2LL * r * c);
  int lines = m->transposed ? c : r, run = m->transposed ? r : c; /* as stored */
  const float *src =
      m->transposed ? m->base + (int64_t)c0 * m->ld + r0 : m->base + (int64_t)r0 * m->ld + c0;
  int bytes = 4 * lines * run;
  if (lines == 1 || run == m->ld) {
    cpe_get(tmp, src, bytes);
  } else {
    /* CPE (i, j) holds block (i, j): a row of the mesh takes a line's adjacent blocks, or a
     * column when the matrix is stored transposed */
    if (m->transposed ? gemm_whole_tile(r0, cap_r, m->rows) : gemm_whole_tile(c0, cap_c, m->cols))
      cpe_dma_tiled(m->transposed ? COL_SCOPE : ROW_SCOPE);
    cpe_get_strided(tmp, src, bytes, 4 * run, 4 * (m->ld - run));
  }
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++)
      dst[i * cap_c + j] = m->transposed ? tmp[j * run + i] : tmp[i * run + j];
}

/* Writes the valid part (inside rows x cols) of a cap_r x cap_c block at (r0, c0). */
static inline void gemm_store(float *base, int ld, int rows, int cols, int r0, int c0,
                              const float *blk, int cap_r, int cap_c, float *tmp) {
  int r = rows - r0 < cap_r ? rows - r0 : cap_r, c = cols - c0 < cap_c ? cols - c0 : cap_c;
  if (r <= 0 || c <= 0) return;
  const float *src = blk;
  if (c != cap_c) {
    for (int i = 0; i < r; i++) memcpy(tmp + i * c, blk + i * cap_c, sizeof(float) * (size_t)c);
    cpe_count_ldm(2LL * r * c);
    src = tmp;
  }
  float *dst = base + (int64_t)r0 * ld + c0;
  if (r == 1 || c == ld) {
    cpe_put(dst, src, 4 * r * c);
  } else {
    if (gemm_whole_tile(c0, cap_c, cols)) cpe_dma_tiled(ROW_SCOPE);
    cpe_put_strided(dst, src, 4 * r * c, 4 * c, 4 * (ld - c));
  }
}

/* c[bm][bn] += a[bm][bk] b[bk][bn] (bm, bn multiples of 4) in 4-wide vectors, swDNN's register
 * block: 4 rows of c by up to 4 vectors (16 columns) stay in 16 accumulators over the whole
 * inner dimension; per k, 4 vectors of b are loaded and 4 elements of a extended to vectors,
 * for 16 vector multiply-adds. Each element still adds its products in k order. */
static inline void gemm_multiply(float *restrict c, const float *restrict a,
                                 const float *restrict b, int bm, int bn, int bk) {
  for (int i = 0; i < bm; i += 4)
    for (int j = 0; j < bn; j += 16) {
      int vectors = bn - j < 16 ? (bn - j) / 4 : 4;
      floatv4 acc[4][4];
      for (int r = 0; r < 4; r++)
        for (int v = 0; v < vectors; v++) simd_load(acc[r][v], c + (i + r) * bn + j + 4 * v);
      for (int k = 0; k < bk; k++) {
        floatv4 bv[4], av;
        for (int v = 0; v < vectors; v++) simd_load(bv[v], b + k * bn + j + 4 * v);
        for (int r = 0; r < 4; r++) {
          simd_loade(av, a + (i + r) * bk + k);
          for (int v = 0; v < vectors; v++) acc[r][v] = simd_vmad(av, bv[v], acc[r][v]);
        }
      }
      for (int r = 0; r < 4; r++)
        for (int v = 0; v < vectors; v++) simd_store(acc[r][v], c + (i + r) * bn + j + 4 * v);
    }
}

/* Step s's blocks: this CPE's own if it is the sender, else received. */
static inline const float *gemm_exchange(const float *mine, float *received, int floats, int sender,
                                         int row) {
  if (sender) {
    cpe_broadcast(mine, floats, row);
    return mine;
  }
  cpe_receive(received, floats, row);
  return received;
}

static inline int gemm_tmp_floats(Tiles t) {
  int n = t.bm * t.bk > t.bk * t.bn ? t.bm * t.bk : t.bk * t.bn;
  return t.bm * t.bn > n ? t.bm * t.bn : n;
}

static inline size_t gemm_bytes(int rows, int cols) {
  return sizeof(float) * (size_t)rows * (size_t)cols;
}

static inline Ldm gemm_ldm_take(Tiles t, int runs) {
  Ldm l = {.runs = runs, .tmp_floats = gemm_tmp_floats(t)};
  l.a = ldm_malloc(gemm_bytes(t.bm, t.bk));
  l.ar = ldm_malloc(gemm_bytes(t.bm, t.bk));
  l.b = ldm_malloc(gemm_bytes(runs * t.bk, t.bn));
  l.br = ldm_malloc(gemm_bytes(t.bk, t.bn));
  l.c = ldm_malloc(gemm_bytes(runs * t.bm, t.bn));
  l.tmp = ldm_malloc(gemm_bytes(l.tmp_floats, 1));
  l.bias = ldm_malloc(gemm_bytes(t.bm > t.bn ? t.bm : t.bn, 1));
  return l;
}

static inline void gemm_ldm_give(Tiles t, Ldm *l) {
  ldm_free(l->bias, gemm_bytes(t.bm > t.bn ? t.bm : t.bn, 1));
  ldm_free(l->tmp, gemm_bytes(l->tmp_floats, 1));
  ldm_free(l->c, gemm_bytes(l->runs * t.bm, t.bn));
  ldm_free(l->br, gemm_bytes(t.bk, t.bn));
  ldm_free(l->b, gemm_bytes(l->runs * t.bk, t.bn));
  ldm_free(l->ar, gemm_bytes(t.bm, t.bk));
  ldm_free(l->a, gemm_bytes(t.bm, t.bk));
}

/* C block r of the run. */
static inline float *gemm_c(Tiles t, Ldm *l, int r) {
  return l->c + (size_t)r * (size_t)(t.bm * t.bn);
}

/* This CPE's C block (i0, j0) of c (rows x cols, leading dimension ld) into C block r of the
 * run: beta times its value (nothing read when beta is 0), plus bias per row (or per column)
 * when given. */
static inline void gemm_start(Tiles t, const float *c, int ld, int rows, int cols, int i0, int j0,
                              float beta, const float *bias, int bias_columns, Ldm *l, int r) {
  float *blk = gemm_c(t, l, r);
  if (beta != 0) {
    Block cb = {c, ld, rows, cols, 0};
    gemm_load(blk, t.bm, t.bn, &cb, i0, j0, l->tmp);
    for (int i = 0; i < t.bm * t.bn; i++) blk[i] *= beta;
    cpe_count_ldm(2LL * t.bm * t.bn);
  } else {
    memset(blk, 0, gemm_bytes(t.bm, t.bn));
    cpe_count_ldm(t.bm * t.bn / 4);
  }
  int m = rows - i0 < t.bm ? rows - i0 : t.bm, n = cols - j0 < t.bn ? cols - j0 : t.bn;
  if (!bias || m <= 0 || n <= 0) return;
  cpe_get(l->bias, bias + (bias_columns ? j0 : i0), 4 * (bias_columns ? n : m));
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) blk[i * t.bn + j] += l->bias[bias_columns ? j : i];
  cpe_count_ldm(2LL * m * n);
}

/* Adds A B_r (inner dimension k) to C block r of the run for each r < runs whose b[r].base is
 * set, in the C tile at (tile_i, tile_j). Per slice, A's block is loaded and broadcast once. */
static inline void gemm_accumulate(Tiles t, int k, const Block *a, const Block *b, int runs,
                                   int tile_i, int tile_j, Ldm *l) {
  int row = _ROW, col = _COL, b_floats = t.bk * t.bn, products = 0;
  for (int r = 0; r < runs; r++) products += b[r].base != NULL;
  for (int k0 = 0; k0 < k; k0 += 8 * t.bk) {
    gemm_load(l->a, t.bm, t.bk, a, tile_i + row * t.bm, k0 + col * t.bk, l->tmp);
    for (int r = 0; r < runs; r++)
      if (b[r].base)
        gemm_load(l->b + r * b_floats, t.bk, t.bn, &b[r], k0 + row * t.bk, tile_j + col * t.bn,
                  l->tmp);
    for (int s = 0; s < 8; s++) {
      const float *as = gemm_exchange(l->a, l->ar, t.bm * t.bk, col == s, 1);
      for (int r = 0; r < runs; r++) {
        if (!b[r].base) continue;
        const float *bs = gemm_exchange(l->b + r * b_floats, l->br, b_floats, row == s, 0);
        gemm_multiply(gemm_c(t, l, r), as, bs, t.bm, t.bn, t.bk);
      }
    }
    cpe_count_vector_flops(2LL * 8 * t.bm * t.bn * t.bk * products);
  }
}

#endif
