/* Checking and counting declared tiled transfers (tiling.h). */
#include "tiling.h"

#include <stdlib.h>

bool strided_log_add(StridedLog *log, StridedTransfer t) {
  if (log->count == log->cap) {
    size_t cap = log->cap ? 2 * log->cap : 64;
    StridedTransfer *at = realloc(log->at, cap * sizeof *at);
    if (!at) return false;
    log->at = at, log->cap = cap;
  }
  log->at[log->count++] = t;
  return true;
}

static bool alike(const StridedTransfer *a, const StridedTransfer *b) {
  return a->get == b->get && a->len == b->len && a->bsize == b->bsize && a->stride == b->stride;
}

/* The k-th transfers of the 8 CPEs first, first + step, ..., if all have one. */
static bool members(StridedLog logs[64], int first, int step, size_t k, StridedTransfer *m[8]) {
  for (int i = 0; i < 8; i++) {
    StridedLog *log = &logs[first + i * step];
    if (k >= log->count) return false;
    m[i] = &log->at[k];
  }
  return true;
}

static bool tile(StridedTransfer *const m[8]) {
  int b = m[0]->bsize;
  if (b <= 0 || m[0]->len % b || m[0]->stride < 7 * b) return false;
  uintptr_t lowest = m[0]->start;
  for (int i = 1; i < 8; i++) {
    if (!alike(m[0], m[i])) return false;
    if (m[i]->start < lowest) lowest = m[i]->start;
  }
  unsigned seen = 0; /* which of the 8 block offsets are taken */
  for (int i = 0; i < 8; i++) {
    uintptr_t offset = m[i]->start - lowest;
    if (offset % (uintptr_t)b || offset / (uintptr_t)b >= 8) return false;
    seen |= 1u << (offset / (uintptr_t)b);
  }
  return seen == 0xffu;
}

/* A group of 8 CPEs: a row (first 8 r, step 1) or a column (first c, step 8). */
static void mark(StridedLog logs[64], int first, int step, Tiling *t) {
  StridedTransfer *m[8];
  for (size_t k = 0; members(logs, first, step, k, m); k++) {
    if (!tile(m)) continue;
    int64_t blocks = m[0]->len / m[0]->bsize, pieces = m[0]->stride == 7 * m[0]->bsize ? 1 : blocks;
    for (int i = 0; i < 8; i++) {
      m[i]->tiled = true;
      if (m[i]->overlapped) t->overlapped_blocks_gone += blocks - (i == 0 ? pieces : 0);
    }
    t->transfers += 8, t->blocks_gone += 8 * blocks - pieces;
  }
}

/* The first transfer of `logs` left unmarked, into t. */
static void first_untiled(StridedLog logs[64], bool in_rows, Tiling *t) {
  for (int c = 0; c < 64 && t->cpe < 0; c++)
    for (size_t k = 0; k < logs[c].count; k++)
      if (!logs[c].at[k].tiled) {
        t->cpe = c, t->index = k, t->in_rows = in_rows;
        return;
      }
}

Tiling strided_tiling(StridedLog rows[64], StridedLog cols[64]) {
  Tiling t = {0, 0, 0, -1, 0, false};
  for (int g = 0; g < 8; g++) mark(rows, 8 * g, 1, &t), mark(cols, g, 8, &t);
  first_untiled(rows, true, &t);
  first_untiled(cols, false, &t);
  return t;
}
