/* The host kernels' GEMM, laid out as in BLIS (Van Zee and van de Geijn, "BLIS: A Framework for
 * Rapidly Instantiating BLAS Functionality", ACM TOMS 2015): op(B) is packed KC rows by NC
 * columns at a time into panels NR columns wide, op(A) KC columns by MC rows into panels MR
 * rows high, and a micro-kernel keeps an MR x NR block of C in registers while it streams one
 * panel of each. The last panel of a block is padded with zeros to whole vectors (and to MR
 * rows); the micro-kernel stores only the part of its block inside C.
 *
 * Why not OpenBLAS: the kernels call it on one thread, on shapes it handles poorly (the
 * convolutions' 32-row products run at a third of its large-matrix rate), and it is held to
 * its AVX2 kernels on machines whose OPENBLAS_CORETYPE is set so. This GEMM picks its
 * micro-kernel from what the CPU runs, once, at the first call. */
#include "gemm.h"
#include "isa.h"
#include "transpose8.h"
#include "unchecked.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef HOST_X86_KERNELS
#include <immintrin.h>
#define HOST_GEMM_X86 1
#endif

/* C (m x n, ldc) = A-panel (MR x kc, MR values per step) times B-panel (kc rows of nv*VL
 * values, b_step floats apart) + beta C (C is not read if beta is 0); m <= MR, n <= nv * VL.
 * next_b, if not NULL, is the panel the next calls read, rows at the same step: it is fetched
 * into cache a row per step (a B read in place has rows far apart, which the hardware's
 * prefetchers do not follow: 20% of ResNet's 56 x 56 1x1 layers went in waiting for them). */
typedef void Tile(int nv, int kc, const float *a, const float *b, size_t b_step,
                  const float *next_b, float *c, size_t ldc, int m, int n, float beta);

typedef struct Isa {
  const char *name;
  int mr, vl, max_nv; /* NR = max_nv * vl */
  Tile *tile;
} Isa;

/* ------------------------------------------------------------------ plain C */

enum { C_MR = 4, C_VL = 8, C_NV = 2 };

static void c_tile(int nv, int kc, const float *a, const float *b, size_t b_step,
                   const float *next_b, float *c, size_t ldc, int m, int n, float beta) {
  (void)next_b;
  int width = nv * C_VL;
  float acc[C_MR][C_NV * C_VL] = {{0}};
  for (int k = 0; k < kc; k++, a += C_MR, b += b_step)
    for (int i = 0; i < C_MR; i++)
      for (int j = 0; j < width; j++) acc[i][j] += a[i] * b[j];
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      c[i * ldc + j] = beta == 0 ? acc[i][j] : beta * c[i * ldc + j] + acc[i][j];
}

#ifdef HOST_GEMM_X86
/* ------------------------------------------------------------------ AVX-512: 8 x 48 */

#define AVX512 __attribute__((target("avx512f"), always_inline)) UNCHECKED_LOOP inline
enum { Z_MR = 8, Z_VL = 16, Z_NV = 3 };

static AVX512 void avx512_store(__m512 v, float *row, int left, float beta) {
  __mmask16 mask = left >= Z_VL ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
  if (beta != 0) v = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(mask, row), v);
  _mm512_mask_storeu_ps(row, mask, v);
}

/* nv is a constant where this is inlined, so the loops unroll and acc stays in registers. */
static AVX512 void avx512_block(const int nv, int kc, const float *a, const float *b, size_t b_step,
                                const float *next_b, float *c, size_t ldc, int m, int n,
                                float beta) {
  __m512 acc[Z_MR][Z_NV];
  for (int i = 0; i < Z_MR; i++)
    for (int v = 0; v < Z_NV; v++) acc[i][v] = _mm512_setzero_ps();
  /* C's lines, for writing, while the products run: a large C (ResNet's 56 x 56 1x1 layers:
   * 3 MB an image) is not in L2, and its lines would otherwise be fetched at the stores */
  for (int i = 0; i < m; i++)
    for (int v = 0; v < nv; v++) __builtin_prefetch(c + i * ldc + v * Z_VL, 1, 3);
  for (int k = 0; k < kc; k++, a += Z_MR, b += b_step) {
    __m512 bv[Z_NV];
    if (next_b)
      for (int v = 0; v < nv; v++) __builtin_prefetch(next_b + k * b_step + v * Z_VL, 0, 3);
    for (int v = 0; v < nv; v++) bv[v] = _mm512_loadu_ps(b + v * Z_VL);
    for (int i = 0; i < Z_MR; i++) {
      __m512 ai = _mm512_set1_ps(a[i]);
      for (int v = 0; v < nv; v++) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  for (int i = 0; i < Z_MR; i++) /* a constant trip count: acc is never indexed at run time */
    for (int v = 0; v < nv; v++)
      if (i < m && v * Z_VL < n)
        avx512_store(acc[i][v], c + i * ldc + v * Z_VL, n - v * Z_VL, beta);
}

__attribute__((target("avx512f"))) UNCHECKED_LOOP static void
avx512_tile(int nv, int kc, const float *a, const float *b, size_t b_step, const float *next_b,
            float *c, size_t ldc, int m, int n, float beta) {
  /* next_b comes with whole panels only (nv 3); apart from it, a NULL constant drops the test
   * from the loop */
  if (nv == 3 && next_b)
    avx512_block(3, kc, a, b, b_step, next_b, c, ldc, m, n, beta);
  else if (nv == 3)
    avx512_block(3, kc, a, b, b_step, NULL, c, ldc, m, n, beta);
  else if (nv == 2)
    avx512_block(2, kc, a, b, b_step, NULL, c, ldc, m, n, beta);
  else
    avx512_block(1, kc, a, b, b_step, NULL, c, ldc, m, n, beta);
}

/* ------------------------------------------------------------------ AVX2 + FMA: 6 x 16 */

#define AVX2 __attribute__((target("avx2,fma"), always_inline)) UNCHECKED_LOOP inline
enum { Y_MR = 6, Y_VL = 8, Y_NV = 2 };

/* The accumulators are named variables: held in an array, GCC keeps a copy of them in memory
 * and stores all twelve on every step. */
#define AVX2_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define AVX2_ZERO(i) __m256 acc##i##0 = _mm256_setzero_ps(), acc##i##1 = _mm256_setzero_ps();
#define AVX2_FMA(i)                                                                                \
  {                                                                                                \
    __m256 ai = _mm256_broadcast_ss(a + i);                                                        \
    acc##i##0 = _mm256_fmadd_ps(ai, b0, acc##i##0);                                                \
    if (nv == 2) acc##i##1 = _mm256_fmadd_ps(ai, b1, acc##i##1);                                   \
  }
#define AVX2_STORE(i)                                                                              \
  if (i < m) {                                                                                     \
    avx2_store(acc##i##0, c + i * ldc, n, beta);                                                   \
    if (nv == 2 && n > Y_VL) avx2_store(acc##i##1, c + i * ldc + Y_VL, n - Y_VL, beta);            \
  }

/* C's row (its first `left` floats, up to a vector's) = v + beta C, C not read if beta is 0;
 * the same rounding as a fused multiply-add of each float. */
static AVX2 void avx2_store(__m256 v, float *row, int left, float beta) {
  if (left >= Y_VL) {
    if (beta != 0) v = _mm256_fmadd_ps(_mm256_set1_ps(beta), _mm256_loadu_ps(row), v);
    _mm256_storeu_ps(row, v);
    return;
  }
  __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  if (beta != 0) v = _mm256_fmadd_ps(_mm256_set1_ps(beta), _mm256_maskload_ps(row, mask), v);
  _mm256_maskstore_ps(row, mask, v);
}

static AVX2 void avx2_block(const int nv, int kc, const float *a, const float *b, size_t b_step,
                            const float *next_b, float *c, size_t ldc, int m, int n, float beta) {
  AVX2_ROWS(AVX2_ZERO)
  for (int i = 0; i < m; i++) __builtin_prefetch(c + i * ldc, 1, 3); /* as avx512_block */
#pragma GCC unroll 4 /* rolled, the step ran slower at times (conv_direct_blocks.h) */
  for (int k = 0; k < kc; k++, a += Y_MR, b += b_step) {
    if (next_b)
      for (int v = 0; v < nv; v++) __builtin_prefetch(next_b + k * b_step + v * Y_VL, 0, 3);
    __m256 b0 = _mm256_loadu_ps(b), b1 = nv == 2 ? _mm256_loadu_ps(b + Y_VL) : b0;
    AVX2_ROWS(AVX2_FMA)
  }
  AVX2_ROWS(AVX2_STORE)
}

__attribute__((target("avx2,fma"))) UNCHECKED_LOOP static void
avx2_tile(int nv, int kc, const float *a, const float *b, size_t b_step, const float *next_b,
          float *c, size_t ldc, int m, int n, float beta) {
  if (nv == 2)
    avx2_block(2, kc, a, b, b_step, next_b, c, ldc, m, n, beta);
  else
    avx2_block(1, kc, a, b, b_step, next_b, c, ldc, m, n, beta);
}
#endif

/* The micro-kernels of isa.h's instruction sets, in its order. */
static const Isa isas[] = {
#ifdef HOST_GEMM_X86
    {"avx512", Z_MR, Z_VL, Z_NV, avx512_tile},
    {"avx2", Y_MR, Y_VL, Y_NV, avx2_tile},
#endif
    {"c", C_MR, C_VL, C_NV, c_tile},
};
enum { ISA_COUNT = sizeof isas / sizeof isas[0] };
_Static_assert((int)ISA_COUNT == (int)HOST_ISA_COUNT,
               "a micro-kernel per instruction set of isa.h");

static const Isa *isa;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static const Isa *named(const char *name) { return &isas[host_isa_index(name)]; }

static void choose_isa(void) { isa = named(host_isa_choice()); }

static const Isa *current(void) {
  pthread_once(&isa_once, choose_isa);
  return isa;
}

const char *host_gemm_isa(void) { return current()->name; }

bool host_gemm_use(const char *name) {
  current();
  if (!host_isa_runs(name)) return false;
  isa = named(name);
  return true;
}

/* ------------------------------------------------------------------ packing */

/* dst[j * pitch + i] = src[i * ld + j] for i < rows (at most 8), j < 8; rows is a constant
 * where this is inlined, so each column is stored in one or two moves. */
static inline __attribute__((always_inline)) void transpose8(const int rows, const float *src,
                                                             size_t ld, float *dst, size_t pitch) {
  HostV8 column[8];
  host_transpose8_rows(src, ld, rows, column);
  for (int j = 0; j < 8; j++) memcpy(dst + j * pitch, &column[j], sizeof(float) * (size_t)rows);
}

enum { MAX_MR = 8 }; /* the tallest micro-kernel block (AVX-512's) */

/* One panel of A from `rows` <= mr rows of a row-major source (kc columns, ld apart): column
 * after column of mr values, rows past the end zeros. Whole panels (of AVX-512's 8 rows or
 * AVX2's 6) are transposed eight columns at a time (the scalar loop below took 3% of ResNet's 1x1 convolutions, their
 * filters packed per call). */
static void panel_from_rows(const float *src, size_t ld, int rows, int kc, int mr, float *dst) {
  int k = 0;
  if (rows == 8 && mr == 8)
    for (; k + 8 <= kc; k += 8) transpose8(8, src + k, ld, dst + (size_t)k * 8, 8);
  else if (rows == 6 && mr == 6)
    for (; k + 8 <= kc; k += 8) transpose8(6, src + k, ld, dst + (size_t)k * 6, 6);
  for (; k < kc; k++) {
    float *col = dst + (size_t)k * mr;
    for (int r = 0; r < rows; r++) col[r] = src[(size_t)r * ld + k];
    for (int r = rows; r < mr; r++) col[r] = 0;
  }
}

/* Rows [i0, i0 + mc) and columns [p0, p0 + kc) of a stored A^T as panels of mr rows: each
 * line of A^T (a column of A) is read once along its length and dealt to the panels. (Panel
 * by panel, every line was visited once per panel a few floats at a time: a line a miss, too
 * many streams for the prefetchers, 3% of ResNet's 1x1 backward in packing its filters.) */
static void panels_from_columns(const HostMatrix *a, int i0, int mc, int p0, int kc, int mr,
                                float *dst) {
  for (int k = 0; k < kc; k++) {
    const float *src = a->data + (size_t)(p0 + k) * a->ld + i0;
    for (int ip = 0; ip < mc; ip += mr) {
      int count = mc - ip < mr ? mc - ip : mr;
      float *col = dst + (size_t)ip * kc + (size_t)k * mr;
      memcpy(col, src + ip, sizeof(float) * (size_t)count);
      for (int r = count; r < mr; r++) col[r] = 0;
    }
  }
}

/* Rows [i0, i0 + mc) and columns [p0, p0 + kc) of A as panels of mr rows. A row of a stored
 * A^T is a column of the panel, copied as it is; rows of a stored A, or of a computed one
 * (written out a panel at a time first), are transposed. */
static void pack_a(const HostMatrix *a, int i0, int mc, int p0, int kc, int mr, float alpha,
                   float *dst) {
  float rows[MAX_MR * HOST_GEMM_KC], *start = dst;
  if (!a->block && a->trans)
    panels_from_columns(a, i0, mc, p0, kc, mr, dst);
  else
    for (int ip = 0; ip < mc; ip += mr, dst += (size_t)mr * kc) {
      int count = mc - ip < mr ? mc - ip : mr;
      size_t first = (size_t)i0 + ip;
      if (a->block) {
        a->block(a->source, (int)first, count, p0, kc, rows, (size_t)kc);
        panel_from_rows(rows, (size_t)kc, count, kc, mr, dst);
      } else {
        panel_from_rows(a->data + first * a->ld + p0, a->ld, count, kc, mr, dst);
      }
    }
  if (alpha != 1) /* alpha A B: scaled here, where each element of A passes once */
    for (size_t i = 0; i < (size_t)(mc + mr - 1) / mr * mr * kc; i++) start[i] *= alpha;
}

/* Rows [p0, p0 + kc) and columns [j0, j0 + cols) of a stored B^T (B's columns are rows of
 * the source, ld apart), row after row, `width` floats apart: eight by eight transposed, the
 * edges one by one. */
static void copy_transposed_b(const HostMatrix *b, int p0, int kc, int j0, int cols, float *dst,
                              size_t width) {
  const float *src = b->data + (size_t)j0 * b->ld + p0;
  int k8 = kc / 8 * 8, j8 = cols / 8 * 8;
  for (int k = 0; k < k8; k += 8)
    for (int j = 0; j < j8; j += 8)
      transpose8(8, src + (size_t)j * b->ld + k, b->ld, dst + (size_t)k * width + j, width);
  for (int k = 0; k < kc; k++)
    for (int j = k < k8 ? j8 : 0; j < cols; j++)
      dst[(size_t)k * width + j] = src[(size_t)j * b->ld + k];
}

/* Rows [p0, p0 + kc) and columns [j0, j0 + cols) of a stored B, row after row, `width`
 * floats apart. */
static void copy_stored_b(const HostMatrix *b, int p0, int kc, int j0, int cols, float *dst,
                          size_t width) {
  if (b->trans) {
    copy_transposed_b(b, p0, kc, j0, cols, dst, width);
    return;
  }
  for (int k = 0; k < kc; k++, dst += width) {
    const float *row = b->data + (size_t)(p0 + k) * b->ld + j0;
    memcpy(dst, row, sizeof(float) * (size_t)cols);
    __builtin_prefetch(row + cols + 16, 0, 2); /* as host_columns_block: the next panel's */
  }
}

/* Rows [p0, p0 + kc) and columns [j0, j0 + nc) of B as panels of nr columns, row after row;
 * the last panel is as wide as its columns rounded up to whole vectors, zero-padded. */
static void pack_b(const HostMatrix *b, int p0, int kc, int j0, int nc, int nr, int vl,
                   float *dst) {
  for (int jp = 0; jp < nc; jp += nr) {
    int cols = nc - jp < nr ? nc - jp : nr, width = (cols + vl - 1) / vl * vl;
    if (b->block)
      b->block(b->source, p0, kc, j0 + jp, cols, dst, (size_t)width);
    else
      copy_stored_b(b, p0, kc, j0 + jp, cols, dst, (size_t)width);
    for (int k = 0; cols < width && k < kc; k++)
      memset(dst + (size_t)k * width + cols, 0, sizeof(float) * (size_t)(width - cols));
    dst += (size_t)width * kc;
  }
}

/* ------------------------------------------------------------------ the loops */

/* Every float of B's panel the micro-kernels (unchecked.h) read: kc rows of nv vectors. */
static void check_panel(const float *panel, size_t step, int kc, int width) {
  if (!CHECKING_REGIONS) return;
  if (step == (size_t)width) {
    check_region(panel, (size_t)kc * step * 4);
    return;
  }
  for (int k = 0; k < kc; k++) check_region(panel + (size_t)k * step, (size_t)width * 4);
}

/* Every float of A's panel and C's block one micro-kernel call reads or writes. */
static void check_block(const float *a, int kc, int mr, const float *c, size_t ldc, int m, int n) {
  if (!CHECKING_REGIONS) return;
  check_region(a, (size_t)kc * (size_t)mr * 4);
  for (int i = 0; i < m; i++) check_region(c + (size_t)i * ldc, (size_t)n * 4);
}

static void scale(int m, int n, float beta, float *c, size_t ldc) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) c[i * ldc + j] = beta == 0 ? 0 : beta * c[i * ldc + j];
}

int host_gemm_rows(void) { return current()->mr; }

/* Packed A's panels of rows [ic, ...) for inner columns [pc, pc + kc): the column blocks follow
 * one another, each holding all rows (rounded up to whole panels) kc floats apart. */
static size_t panels_offset(int m, int mr, int pc, int ic, int kc) {
  return (size_t)pc * (size_t)((m + mr - 1) / mr * mr) + (size_t)ic * (size_t)kc;
}

void host_gemm_pack(HostMatrix a, int m, int k, int r0, int r1, float *panels) {
  int mr = current()->mr;
  assert(r0 % mr == 0 && (r1 % mr == 0 || r1 == m));
  for (int pc = 0; r0 < r1 && pc < k; pc += HOST_GEMM_KC) {
    int kc = k - pc < HOST_GEMM_KC ? k - pc : HOST_GEMM_KC;
    pack_a(&a, r0, r1 - r0, pc, kc, mr, 1.0f, panels + panels_offset(m, mr, pc, r0, kc));
  }
}

void host_gemm_scaled(int m, int n, int k, float alpha, HostMatrix a, HostMatrix b, float beta,
                      float *c, size_t ldc, float *pack) {
  const Isa *x = current();
  assert(!a.panels || alpha == 1);
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    scale(m, n, beta, c, ldc);
    return;
  }
  int nr = x->max_nv * x->vl;
  /* With few rows (one block of A), each panel of B serves one pass of the micro-kernel down
   * that block: it is packed just before, so it is still in L1 when used, and a stored,
   * untransposed B is not packed at all (that would cost about as much as the arithmetic)
   * except for its last, partial panel. */
  bool one_block = m <= HOST_GEMM_MC, in_place = one_block && !b.block && !b.trans;
  float *packing_a = pack, *packed_b = pack + HOST_GEMM_MC * HOST_GEMM_KC;
  for (int jc = 0; jc < n; jc += HOST_GEMM_NC) {
    int nc = n - jc < HOST_GEMM_NC ? n - jc : HOST_GEMM_NC;
    for (int pc = 0; pc < k; pc += HOST_GEMM_KC) {
      int kc = k - pc < HOST_GEMM_KC ? k - pc : HOST_GEMM_KC, whole = nc / nr * nr;
      float keep = pc > 0 ? 1.0f : beta; /* what the micro-kernel does with C */
      if (!one_block) pack_b(&b, pc, kc, jc, nc, nr, x->vl, packed_b);
      for (int ic = 0; ic < m; ic += HOST_GEMM_MC) {
        int mc = m - ic < HOST_GEMM_MC ? m - ic : HOST_GEMM_MC;
        const float *packed_a = packing_a;
        if (a.panels)
          packed_a = a.panels + panels_offset(m, x->mr, pc, ic, kc);
        else
          pack_a(&a, ic, mc, pc, kc, x->mr, alpha, packing_a);
        for (int jr = 0; jr < nc; jr += nr) {
          int cols = nc - jr < nr ? nc - jr : nr, nv = (cols + x->vl - 1) / x->vl;
          const float *panel = packed_b + (size_t)jr * kc;
          size_t step = (size_t)nv * x->vl;
          if (in_place && jr < whole) {
            panel = b.data + (size_t)pc * b.ld + jc + jr, step = b.ld;
          } else if (one_block) {
            pack_b(&b, pc, kc, jc + jr, cols, nr, x->vl, packed_b);
            panel = packed_b;
          }
          check_panel(panel, step, kc, nv * x->vl);
          for (int ir = 0; ir < mc; ir += x->mr) {
            float *block = c + (size_t)(ic + ir) * ldc + jc + jr;
            int rows = mc - ir < x->mr ? mc - ir : x->mr;
            check_block(packed_a + (size_t)ir * kc, kc, x->mr, block, ldc, rows, cols);
            /* the first pass down a panel read in place fetches the next panel's rows */
            const float *next = in_place && ir == 0 && jr + 2 * nr <= whole ? panel + nr : NULL;
            x->tile(nv, kc, packed_a + (size_t)ir * kc, panel, step, next, block, ldc, rows, cols,
                    keep);
          }
        }
      }
    }
  }
}
