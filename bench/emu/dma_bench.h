/* The DMA experiments of the SW26010 micro-benchmark suite (Lin et al., ParCo 2018) and the
 * swDNN paper's tiled gets, as emulator kernels (dma_cpe.c) for bench/emu/dma.c. */
#ifndef SWNC_DMA_BENCH_H
#define SWNC_DMA_BENCH_H
#include <stdint.h>

typedef enum {
  DMA_COPY,    /* get n bytes, copy them in LDM, put n bytes */
  DMA_TRIAD,   /* get b and c (n bytes each), a = b + s c, put a */
  DMA_PRIVATE, /* strided: 24 KB per transfer in blocks of `block` bytes, each CPE its own region */
  DMA_TILED,   /* strided gets: the 8 CPEs of a column read adjacent blocks, the group contiguous
                memory */
} DmaPattern;

typedef struct DmaBench {
  DmaPattern pattern;
  int bytes;        /* per transfer (contiguous), or per strided transfer */
  int block;        /* strided: the contiguous block */
  int64_t per_cpe;  /* bytes each CPE moves in (get), in all */
  float *a, *b, *c; /* main memory, 64 x per_cpe bytes each (strided: twice, for the gaps) */
} DmaBench;
#endif
