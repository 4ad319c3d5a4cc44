/* GEMM on the 8x8 CPE mesh with register-communication blocking (BRIEF section 2). C is cut
 * into tiles of 8bm x 8bn; CPE (i,j) owns block (i,j) of the tile. For each slice of 8bk of the
 * inner dimension, CPE (i,j) loads block (i,j) of A's slice (bm x bk) and of B's (bk x bn);
 * then in step s = 0..7 CPE (i,s) broadcasts its A block along row i and CPE (s,j) its B block
 * along column j, and every CPE adds A(i,s) B(s,j) to its C block. Each element of A and B is
 * read from memory once per tile. Blocks past the matrix edges are zero, so every CPE takes
 * part in every exchange. */
#include <string.h>

#include "args.h"
#include "cpe.h"

typedef struct Block {
  const float *base; /* the matrix in main memory */
  int ld, rows, cols; /* its logical size */
  int transposed;     /* stored as cols x rows */
} Block;

/* dst[cap_r][cap_c] = the logical block at (r0, c0), zero outside the matrix. */
static void load(float *dst, int cap_r, int cap_c, const Block *m, int r0, int c0, float *tmp) {
  int r = m->rows - r0 < cap_r ? m->rows - r0 : cap_r, c = m->cols - c0 < cap_c ? m->cols - c0 : cap_c;
  memset(dst, 0, sizeof(float) * (size_t)cap_r * (size_t)cap_c);
  if (r <= 0 || c <= 0) return;
  int lines = m->transposed ? c : r, run = m->transposed ? r : c; /* as stored */
  const float *src = m->transposed ? m->base + (int64_t)c0 * m->ld + r0 : m->base + (int64_t)r0 * m->ld + c0;
  int bytes = 4 * lines * run;
  if (lines == 1 || run == m->ld) cpe_get(tmp, src, bytes);
  else cpe_get_strided(tmp, src, bytes, 4 * run, 4 * (m->ld - run));
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++) dst[i * cap_c + j] = m->transposed ? tmp[j * run + i] : tmp[i * run + j];
}

/* Writes the valid part (inside rows x cols) of a cap_r x cap_c block at (r0, c0). */
static void store(float *base, int ld, int rows, int cols, int r0, int c0, const float *blk, int cap_r, int cap_c,
                  float *tmp) {
  int r = rows - r0 < cap_r ? rows - r0 : cap_r, c = cols - c0 < cap_c ? cols - c0 : cap_c;
  if (r <= 0 || c <= 0) return;
  const float *src = blk;
  if (c != cap_c) {
    for (int i = 0; i < r; i++) memcpy(tmp + i * c, blk + i * cap_c, sizeof(float) * (size_t)c);
    src = tmp;
  }
  float *dst = base + (int64_t)r0 * ld + c0;
  if (r == 1 || c == ld) cpe_put(dst, src, 4 * r * c);
  else cpe_put_strided(dst, src, 4 * r * c, 4 * c, 4 * (ld - c));
}

/* c[bm][bn] += a[bm][bk] b[bk][bn] */
static void multiply(float *restrict c, const float *restrict a, const float *restrict b, int bm, int bn, int bk) {
  for (int i = 0; i < bm; i++)
    for (int k = 0; k < bk; k++) {
      float aik = a[i * bk + k];
      for (int j = 0; j < bn; j++) c[i * bn + j] += aik * b[k * bn + j];
    }
}

/* Step s's blocks: this CPE's own if it is the sender, else received. */
static const float *exchange(const float *mine, float *received, int floats, int sender, int row) {
  if (sender) {
    cpe_broadcast(mine, floats, row);
    return mine;
  }
  cpe_receive(received, floats, row);
  return received;
}

typedef struct Ldm {
  float *a, *b, *ar, *br, *c, *tmp, *bias;
  int tmp_floats;
} Ldm;

static Ldm ldm_take(const SwGemmArgs *p) {
  int bm = p->bm, bn = p->bn, bk = p->bk, t = bm * bk;
  if (bk * bn > t) t = bk * bn;
  if (bm * bn > t) t = bm * bn;
  Ldm l = {.tmp_floats = t};
  l.a = ldm_malloc(sizeof(float) * (size_t)(bm * bk));
  l.ar = ldm_malloc(sizeof(float) * (size_t)(bm * bk));
  l.b = ldm_malloc(sizeof(float) * (size_t)(bk * bn));
  l.br = ldm_malloc(sizeof(float) * (size_t)(bk * bn));
  l.c = ldm_malloc(sizeof(float) * (size_t)(bm * bn));
  l.tmp = ldm_malloc(sizeof(float) * (size_t)t);
  l.bias = ldm_malloc(sizeof(float) * (size_t)(bm > bn ? bm : bn));
  return l;
}

static void ldm_give(const SwGemmArgs *p, Ldm *l) {
  int bm = p->bm, bn = p->bn, bk = p->bk;
  ldm_free(l->bias, sizeof(float) * (size_t)(bm > bn ? bm : bn));
  ldm_free(l->tmp, sizeof(float) * (size_t)l->tmp_floats);
  ldm_free(l->c, sizeof(float) * (size_t)(bm * bn));
  ldm_free(l->br, sizeof(float) * (size_t)(bk * bn));
  ldm_free(l->b, sizeof(float) * (size_t)(bk * bn));
  ldm_free(l->ar, sizeof(float) * (size_t)(bm * bk));
  ldm_free(l->a, sizeof(float) * (size_t)(bm * bk));
}

/* C block (i0, j0) of batch item t, starting from beta C (+ bias). */
static void start_block(const SwGemmArgs *p, int t, int i0, int j0, Ldm *l) {
  Block c = {p->c + t * p->stride_c, p->ldc, p->m, p->n, 0};
  if (p->beta != 0) {
    load(l->c, p->bm, p->bn, &c, i0, j0, l->tmp);
    for (int i = 0; i < p->bm * p->bn; i++) l->c[i] *= p->beta;
  } else {
    memset(l->c, 0, sizeof(float) * (size_t)(p->bm * p->bn));
  }
  int rows = p->m - i0 < p->bm ? p->m - i0 : p->bm, cols = p->n - j0 < p->bn ? p->n - j0 : p->bn;
  if (!p->bias || rows <= 0 || cols <= 0) return;
  cpe_get(l->bias, p->bias + (p->bias_columns ? j0 : i0), 4 * (p->bias_columns ? cols : rows));
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) l->c[i * p->bn + j] += l->bias[p->bias_columns ? j : i];
}

/* One batch item's contribution to the C block this CPE owns in tile (tile_i, tile_j). */
static void accumulate(const SwGemmArgs *p, int t, int tile_i, int tile_j, int row, int col, Ldm *l) {
  Block a = {p->a + t * p->stride_a, p->lda, p->m, p->k, p->ta};
  Block b = {p->b + t * p->stride_b, p->ldb, p->k, p->n, p->tb};
  for (int k0 = 0; k0 < p->k; k0 += 8 * p->bk) {
    load(l->a, p->bm, p->bk, &a, tile_i + row * p->bm, k0 + col * p->bk, l->tmp);
    load(l->b, p->bk, p->bn, &b, k0 + row * p->bk, tile_j + col * p->bn, l->tmp);
    for (int s = 0; s < 8; s++) {
      const float *as = exchange(l->a, l->ar, p->bm * p->bk, col == s, 1);
      const float *bs = exchange(l->b, l->br, p->bk * p->bn, row == s, 0);
      multiply(l->c, as, bs, p->bm, p->bn, p->bk);
    }
    cpe_count_flops(2LL * 8 * p->bm * p->bn * p->bk);
  }
}

void sw_gemm(void *arg) {
  SwGemmArgs p;
  cpe_get(&p, arg, sizeof p);
  int row = _ROW, col = _COL;
  Ldm l = ldm_take(&p);
  for (int ti = 0; ti < p.m; ti += 8 * p.bm)
    for (int tj = 0; tj < p.n; tj += 8 * p.bn) {
      int i0 = ti + row * p.bm, j0 = tj + col * p.bn;
      for (int t = 0; t < p.count; t++) {
        if (t == 0 || p.stride_c) start_block(&p, t, i0, j0, &l);
        accumulate(&p, t, ti, tj, row, col, &l);
        if (t == p.count - 1 || p.stride_c)
          store(p.c + t * p.stride_c, p.ldc, p.m, p.n, i0, j0, l.c, p.bm, p.bn, l.tmp);
      }
    }
  ldm_give(&p, &l);
}
