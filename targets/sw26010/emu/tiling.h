/* Strided DMA transfers declared tiled (athread_dma_tiled), checked at join (tiling.c). On the
 * chip the blocks of a strided transfer are separate memory requests, but when the
 * same-numbered transfers of the 8 CPEs of a mesh row (or column) take adjacent blocks, the
 * group's requests cover contiguous memory and stream at the contiguous rate (the swDNN paper's
 * column-tiled gets; docs/targets.md "sw26010 cost model"). */
#ifndef SWEMU_TILING_H
#define SWEMU_TILING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct StridedTransfer {
  uintptr_t start;
  int len, stride, bsize; /* athread_get/put's: bytes, gap between blocks, block */
  bool get, overlapped;   /* overlapped: declared so (athread_dma_overlapped) */
  bool tiled;
} StridedTransfer;

typedef struct StridedLog {
  StridedTransfer *at;
  size_t count, cap;
} StridedLog;

/* Appends; false when out of memory. */
bool strided_log_add(StridedLog *log, StridedTransfer t);

typedef struct Tiling {
  int64_t transfers;              /* that tiled */
  int64_t blocks_gone;            /* their blocks less the contiguous pieces they form together */
  int64_t overlapped_blocks_gone; /* the part of it from transfers declared overlapped (the
                                    pieces of 8 counted with the first of them) */
  int cpe;                        /* when one did not tile: the first such CPE, and its transfer */
  size_t index;
  bool in_rows;
} Tiling;

/* Over a launch's logs (CPE r * 8 + c) of transfers declared tiled with the CPE's mesh row
 * (rows) or column (cols), marks the ones that tile with the same-numbered transfers so
 * declared of the other 7 CPEs of that row or column: all alike (direction, bytes, block),
 * whole blocks, gaps of at least 7 blocks, the 8 starts one block apart. Together the 8 form
 * one contiguous piece when the gap is 7 blocks, else one per block of a transfer. cpe is -1
 * when all tiled; else the first CPE with one that did not, in rows if `in_rows`. */
Tiling strided_tiling(StridedLog rows[64], StridedLog cols[64]);

#endif
