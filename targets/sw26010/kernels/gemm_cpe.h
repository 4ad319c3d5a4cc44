/* The register-communication-blocked product on the 8x8 CPE mesh (swCaffe, section 4), shared by
 * the GEMM (gemm_cpe.c) and the implicit convolution (conv_implicit_cpe.c). A C tile of
 * 8bm x 8bn is spread over the mesh, CPE (i,j) owning block (i,j). To add A B to it (A: m x k,
 * B: k x n), for each slice of 8bk of the inner dimension CPE (i,j) loads block (i,j) of A's
 * slice (bm x bk) and of B's (bk x bn); then in step s = 0..7 CPE (i,s) broadcasts its A block
 * along row i and CPE (s,j) its B block along column j, and every CPE adds A(i,s) B(s,j) to
 * its C block. Blocks past the matrix edges are zero, so every CPE takes part in every
 * exchange: all 64 CPEs must make the same sequence of calls.
 * A run keeps several C blocks in LDM that share the A operand (B_r differs): each slice of A
 * is then loaded and broadcast once for the run, not once per product.
 * The kernels describe their products as a walk (GemmWalk) over runs and, in each run, positions
 * (a tap, a pixel, a batch item); a step is one slice of one position's products. gemm_pipeline
 * runs the steps double-buffered (swDNN's scheme): the next step's operands are fetched into the
 * other buffer set while this step exchanges and multiplies, and waited for after it;
 * single-buffered (swCaffe's shipped kernels), each step's fetch is waited for before its
 * arithmetic. Operands land in LDM as stored (no staging
 * copy): a block that is whole and not transposed is used as it is; any other is unpacked (zero
 * edges, transposition) by its owner in the step it broadcasts it. */
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

enum { GEMM_RUN_MAX = 16 };

/* An operand block as its DMA left it in LDM: the part (r x c) of the logical block inside the
 * matrix, in its stored form (r lines of c floats, or c lines of r when stored transposed); r
 * or c is 0 when the block lies past the matrix's edges. */
typedef struct Held {
  int r, c, transposed;
} Held;

/* This CPE's buffers: per buffer set (two when double-buffered) the A block and a run's B
 * blocks as fetched; the A and B blocks a step multiplies (received, or this CPE's own
 * unpacked); a run's C blocks; the bias; the reply counter of the fetches in flight. */
typedef struct Ldm {
  float *a[2], *b[2], *ar, *br, *c, *bias;
  int runs, buffers;
  volatile int reply;
} Ldm;

/* Whether the block at stored column `at` (of blocks `cap` wide, tiles of 8 from column 0) lies
 * in a tile whose 8 blocks are all whole: the 8 CPEs moving them then take adjacent blocks of
 * each stored line, together contiguous runs (tiled strided transfers). */
static inline bool gemm_whole_tile(int at, int cap, int extent) {
  return (at / (8 * cap) + 1) * 8 * cap <= extent;
}

/* Issues the DMA of m's cap_r x cap_c block at (r0, c0) into dst (its stored form) on
 * l->reply, declared overlapped when `overlapped`; counts it in *issued. */
static inline Held gemm_fetch(float *dst, int cap_r, int cap_c, const Block *m, int r0, int c0,
                              Ldm *l, bool overlapped, int *issued) {
  int r = m->rows - r0 < cap_r ? m->rows - r0 : cap_r,
      c = m->cols - c0 < cap_c ? m->cols - c0 : cap_c;
  if (r <= 0 || c <= 0) return (Held){0, 0, m->transposed};
  int lines = m->transposed ? c : r, run = m->transposed ? r : c; /* as stored */
  const float *src =
      m->transposed ? m->base + (int64_t)c0 * m->ld + r0 : m->base + (int64_t)r0 * m->ld + c0;
  int bytes = 4 * lines * run;
  if (overlapped) cpe_dma_overlapped();
  if (lines == 1 || run == m->ld) {
    cpe_get_async(dst, src, bytes, 0, 0, &l->reply);
  } else {
    /* CPE (i, j) holds block (i, j): a row of the mesh takes a line's adjacent blocks, or a
     * column when the matrix is stored transposed */
    if (m->transposed ? gemm_whole_tile(r0, cap_r, m->rows) : gemm_whole_tile(c0, cap_c, m->cols))
      cpe_dma_tiled(m->transposed ? COL_SCOPE : ROW_SCOPE);
    cpe_get_async(dst, src, bytes, 4 * run, 4 * (m->ld - run), &l->reply);
  }
  (*issued)++;
  return (Held){r, c, m->transposed};
}

static inline bool gemm_held_whole(Held h, int cap_r, int cap_c) {
  return h.r == cap_r && h.c == cap_c && !h.transposed;
}

/* dst[cap_r][cap_c] = the logical block held at `held`, zero outside it. Memory-pipeline work
 * (cpe_count_ldm): the zeroing in vector stores, a load and a store per element held. */
static inline void gemm_unpack(float *dst, int cap_r, int cap_c, const float *held, Held h) {
  memset(dst, 0, sizeof(float) * (size_t)cap_r * (size_t)cap_c);
  cpe_count_ldm(cap_r * cap_c / 4 + 2LL * h.r * h.c);
  for (int i = 0; i < h.r; i++)
    for (int j = 0; j < h.c; j++)
      dst[i * cap_c + j] = h.transposed ? held[j * h.r + i] : held[i * h.c + j];
}

/* A block fetched into the C block it becomes, spread in place to cap_r x cap_c (zero outside):
 * as gemm_unpack, nothing for a whole block. Lines move from the last, which goes furthest. */
static inline void gemm_spread(float *blk, int cap_r, int cap_c, Held h) {
  if (gemm_held_whole(h, cap_r, cap_c)) return;
  cpe_count_ldm(cap_r * cap_c / 4 + 2LL * h.r * h.c);
  for (int i = h.r - 1; i >= 0; i--) {
    memmove(blk + i * cap_c, blk + i * h.c, sizeof(float) * (size_t)h.c);
    memset(blk + i * cap_c + h.c, 0, sizeof(float) * (size_t)(cap_c - h.c));
  }
  memset(blk + h.r * cap_c, 0, sizeof(float) * (size_t)(cap_r - h.r) * (size_t)cap_c);
}

/* Waits for the `issued` fetches in flight. */
static inline void gemm_wait(Ldm *l, int issued) {
  if (issued) cpe_wait(&l->reply, issued);
}

/* Writes the valid part (inside rows x cols) of a cap_r x cap_c block at (r0, c0); a block cut
 * at the right edge is packed in place first (the block is not used after). */
static inline void gemm_store(float *base, int ld, int rows, int cols, int r0, int c0, float *blk,
                              int cap_r, int cap_c) {
  int r = rows - r0 < cap_r ? rows - r0 : cap_r, c = cols - c0 < cap_c ? cols - c0 : cap_c;
  if (r <= 0 || c <= 0) return;
  if (c != cap_c) {
    for (int i = 1; i < r; i++) memmove(blk + i * c, blk + i * cap_c, sizeof(float) * (size_t)c);
    cpe_count_ldm(2LL * r * c);
  }
  float *dst = base + (int64_t)r0 * ld + c0;
  if (r == 1 || c == ld) {
    cpe_put(dst, blk, 4 * r * c);
  } else {
    if (gemm_whole_tile(c0, cap_c, cols)) cpe_dma_tiled(ROW_SCOPE);
    cpe_put_strided(dst, blk, 4 * r * c, 4 * c, 4 * (ld - c));
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

/* Step s's cap_r x cap_c block: this CPE's own if it is the sender (unpacked into `received`
 * unless whole), broadcast along its row (row) or column; else received from the sender. */
static inline const float *gemm_exchange(const float *held, Held h, int cap_r, int cap_c,
                                         float *received, int sender, int row) {
  int floats = cap_r * cap_c;
  if (sender) {
    const float *mine = held;
    if (!gemm_held_whole(h, cap_r, cap_c)) {
      gemm_unpack(received, cap_r, cap_c, held, h);
      mine = received;
    }
    cpe_broadcast(mine, floats, row);
    return mine;
  }
  cpe_receive(received, floats, row);
  return received;
}

static inline size_t gemm_bytes(int rows, int cols) {
  return sizeof(float) * (size_t)rows * (size_t)cols;
}

/* Buffer sets: 2 double-buffered, 1 single. */
static inline Ldm gemm_ldm_take(Tiles t, int runs, int buffers) {
  Ldm l = {.runs = runs, .buffers = buffers};
  for (int i = 0; i < buffers; i++) {
    l.a[i] = ldm_malloc(gemm_bytes(t.bm, t.bk));
    l.b[i] = ldm_malloc(gemm_bytes(runs * t.bk, t.bn));
  }
  l.ar = ldm_malloc(gemm_bytes(t.bm, t.bk));
  l.br = ldm_malloc(gemm_bytes(t.bk, t.bn));
  l.c = ldm_malloc(gemm_bytes(runs * t.bm, t.bn));
  l.bias = ldm_malloc(gemm_bytes(t.bm > t.bn ? t.bm : t.bn, 1));
  return l;
}

static inline void gemm_ldm_give(Tiles t, Ldm *l) {
  ldm_free(l->bias, gemm_bytes(t.bm > t.bn ? t.bm : t.bn, 1));
  ldm_free(l->c, gemm_bytes(l->runs * t.bm, t.bn));
  ldm_free(l->br, gemm_bytes(t.bk, t.bn));
  ldm_free(l->ar, gemm_bytes(t.bm, t.bk));
  for (int i = l->buffers - 1; i >= 0; i--) {
    ldm_free(l->b[i], gemm_bytes(l->runs * t.bk, t.bn));
    ldm_free(l->a[i], gemm_bytes(t.bm, t.bk));
  }
}

/* C block r of the run. */
static inline float *gemm_c(Tiles t, Ldm *l, int r) {
  return l->c + (size_t)r * (size_t)(t.bm * t.bn);
}

/* A run of C blocks in the C tile at (ti, tj): block r of matrix c + r * step (rows x cols,
 * leading dimension ld), started from beta times its value (nothing read when beta is 0) plus
 * the bias per row (or per column) when given. */
typedef struct GemmRun {
  float *c;
  int64_t step;
  int n, ld, rows, cols, ti, tj;
  float beta;
  const float *bias;
  int bias_columns;
} GemmRun;

/* This CPE's block of matrix r of the run into C block r. */
static inline void gemm_start(Tiles t, const GemmRun *run, int r, Ldm *l) {
  float *blk = gemm_c(t, l, r);
  const float *c = run->c + r * run->step;
  int i0 = run->ti + _ROW * t.bm, j0 = run->tj + _COL * t.bn;
  if (run->beta != 0) {
    Block cb = {c, run->ld, run->rows, run->cols, 0};
    int issued = 0;
    Held h = gemm_fetch(blk, t.bm, t.bn, &cb, i0, j0, l, false, &issued);
    gemm_wait(l, issued);
    gemm_spread(blk, t.bm, t.bn, h);
    for (int i = 0; i < t.bm * t.bn; i++) blk[i] *= run->beta;
    cpe_count_ldm(2LL * t.bm * t.bn);
  } else {
    memset(blk, 0, gemm_bytes(t.bm, t.bn));
    cpe_count_ldm(t.bm * t.bn / 4);
  }
  int m = run->rows - i0 < t.bm ? run->rows - i0 : t.bm,
      n = run->cols - j0 < t.bn ? run->cols - j0 : t.bn;
  if (!run->bias || m <= 0 || n <= 0) return;
  cpe_get(l->bias, run->bias + (run->bias_columns ? j0 : i0), 4 * (run->bias_columns ? n : m));
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) blk[i * t.bn + j] += l->bias[run->bias_columns ? j : i];
  cpe_count_ldm(2LL * m * n);
}

static inline void gemm_finish(Tiles t, const GemmRun *run, Ldm *l) {
  int i0 = run->ti + _ROW * t.bm, j0 = run->tj + _COL * t.bn;
  for (int r = 0; r < run->n; r++)
    gemm_store(run->c + r * run->step, run->ld, run->rows, run->cols, i0, j0, gemm_c(t, l, r), t.bm,
               t.bn);
}

/* One step: add A B_r (over the slice of 8bk of the inner dimension k from k0) to C block r of
 * the current run for each r < runs whose b[r].base is set, in the C tile at (ti, tj). */
typedef struct GemmStep {
  Block a, b[GEMM_RUN_MAX];
  int runs, k, k0, ti, tj;
} GemmStep;

/* A kernel's products in order: its runs, in each run its positions, each position one step per
 * slice of 8bk of the inner dimension k (k0 the slice's start). The kernel embeds the walk first
 * in its own state and provides: the step at the current position and slice (false when it has
 * no product), the next position of the run (false past its last), the next run at its first
 * position (false after the last run), the current run. */
typedef struct GemmWalk GemmWalk;
struct GemmWalk {
  bool (*step)(const GemmWalk *w, GemmStep *st);
  bool (*next_position)(GemmWalk *w);
  bool (*next_run)(GemmWalk *w);
  GemmRun (*run)(const GemmWalk *w);
  int k, bk, k0;
  bool started;
};

/* From the current position on, the first of the run with a product, into *st. */
static inline bool gemm_walk_find(GemmWalk *w, GemmStep *st) {
  do
    if (w->step(w, st)) return true;
  while (w->next_position(w));
  return false;
}

/* The next step with a product into *st (false after the last); when it begins a run, the run
 * into *run and *starts set (the first step always does). */
static inline bool gemm_walk_next(GemmWalk *w, GemmStep *st, GemmRun *run, bool *starts) {
  *starts = !w->started;
  if (w->started && (w->k0 += 8 * w->bk) < w->k) return w->step(w, st);
  w->k0 = 0;
  bool more = !w->started || w->next_position(w);
  w->started = true;
  while (!more || !gemm_walk_find(w, st)) {
    if (!w->next_run(w)) return false;
    *starts = more = true;
  }
  if (*starts) *run = w->run(w);
  return true;
}

/* The runs of a walk (from its start) with no product at all: their C blocks as started. */
static inline void gemm_write_runs_without_products(Tiles t, GemmWalk *w, Ldm *l) {
  GemmStep st;
  do {
    if (gemm_walk_find(w, &st)) continue;
    GemmRun run = w->run(w);
    for (int r = 0; r < run.n; r++) gemm_start(t, &run, r, l);
    gemm_finish(t, &run, l);
  } while (w->next_run(w));
}

/* Issues the step's fetches into buffer set `set`: A's block and each present B_r's. */
static inline int gemm_fetch_step(Tiles t, const GemmStep *s, Ldm *l, int set,
                                  Held held[1 + GEMM_RUN_MAX], bool overlapped) {
  int row = _ROW, col = _COL, issued = 0;
  held[0] = gemm_fetch(l->a[set], t.bm, t.bk, &s->a, s->ti + row * t.bm, s->k0 + col * t.bk, l,
                       overlapped, &issued);
  for (int r = 0; r < s->runs; r++)
    if (s->b[r].base)
      held[1 + r] = gemm_fetch(l->b[set] + r * t.bk * t.bn, t.bk, t.bn, &s->b[r],
                               s->k0 + row * t.bk, s->tj + col * t.bn, l, overlapped, &issued);
  return issued;
}

/* The step's 8 exchanges and products, from buffer set `set`. */
static inline void gemm_compute_step(Tiles t, const GemmStep *s, Ldm *l, int set,
                                     const Held held[1 + GEMM_RUN_MAX]) {
  int row = _ROW, col = _COL, b_floats = t.bk * t.bn, products = 0;
  for (int r = 0; r < s->runs; r++) products += s->b[r].base != NULL;
  for (int step = 0; step < 8; step++) {
    const float *as = gemm_exchange(l->a[set], held[0], t.bm, t.bk, l->ar, col == step, 1);
    for (int r = 0; r < s->runs; r++) {
      if (!s->b[r].base) continue;
      const float *bs =
          gemm_exchange(l->b[set] + r * b_floats, held[1 + r], t.bk, t.bn, l->br, row == step, 0);
      gemm_multiply(gemm_c(t, l, r), as, bs, t.bm, t.bn, t.bk);
    }
  }
  cpe_count_vector_flops(2LL * 8 * t.bm * t.bn * t.bk * products);
}

/* Runs the walk's steps, starting each run's C blocks before its first step and storing
 * them after its last. Double-buffered, step i + 1's fetches are issued before step i's
 * arithmetic and waited for after it; single-buffered, after it and before step i + 1's. */
static inline void gemm_pipeline(Tiles t, GemmWalk *walk, Ldm *l) {
  GemmStep steps[2];
  GemmRun runs[2];
  Held held[2][1 + GEMM_RUN_MAX];
  bool starts, next_starts;
  if (!gemm_walk_next(walk, &steps[0], &runs[0], &starts)) return;
  gemm_wait(l, gemm_fetch_step(t, &steps[0], l, 0, held[0], false));
  int cur = 0, set = 0, run = 0;
  for (;;) {
    if (starts)
      for (int r = 0; r < runs[run].n; r++) gemm_start(t, &runs[run], r, l);
    int nxt = cur ^ 1, next_set = l->buffers == 2 ? set ^ 1 : set, issued = 0;
    bool more = gemm_walk_next(walk, &steps[nxt], &runs[run ^ 1], &next_starts);
    if (more && l->buffers == 2)
      issued = gemm_fetch_step(t, &steps[nxt], l, next_set, held[next_set], true);
    gemm_compute_step(t, &steps[cur], l, set, held[set]);
    if (more && l->buffers == 1)
      issued = gemm_fetch_step(t, &steps[nxt], l, next_set, held[next_set], false);
    gemm_wait(l, issued);
    if (!more || next_starts) gemm_finish(t, &runs[run], l);
    if (!more) return;
    cur = nxt, set = next_set, starts = next_starts;
    if (starts) run ^= 1;
  }
}

#endif
