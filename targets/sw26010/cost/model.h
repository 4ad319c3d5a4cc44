/* The cost model of the SW26010 (docs/targets.md "sw26010 cost model"): estimated seconds on
 * the real chip of a CPE-cluster launch, from what it did (the emulator's counters or the
 * same counts predicted from shapes), and of work left on the MPE. Constants come from the
 * published hardware facts (the SW26010 as swCaffe describes it), never from measured layer timings. Used by the
 * kernel set (--profile) and by the target description (the strategy pass), so both agree. */
#ifndef SWNC_SW26010_MODEL_H
#define SWNC_SW26010_MODEL_H

#include <stdint.h>

/* What one launch on one core group's 64 CPEs did, summed over the CPEs. */
typedef struct SwWork {
  double flops;         /* arithmetic the CPEs executed (padding included) */
  double vector_flops;  /* the part of it in 4-wide vector instructions */
  double dma_bytes;     /* moved between memory and LDM, both ways */
  double dma_put_bytes; /* the part of them written to memory */
  double dma_transfers; /* DMA requests */
  double dma_batched;   /* requests waited for together with an earlier one (one dma_wait) */
  double dma_blocks;    /* contiguous pieces in main memory (a strided request has many, unless its
                        blocks tile memory with its mesh column's or row's) */
  double rlc_words;     /* 256-bit register-communication values received */
  double ldm_ops;       /* memory-pipeline instructions beside the arithmetic (athread.h ldm_ops) */
  /* the part of the DMA counts double-buffered: issued before arithmetic that does not need
   * them and waited for after it (athread_dma_overlapped) */
  double overlapped_bytes, overlapped_put_bytes, overlapped_transfers, overlapped_batched,
      overlapped_blocks;
} SwWork;

typedef struct SwTime {
  double compute, dma, rlc; /* seconds */
  double overlapped;        /* the part of dma double-buffered */
  double total; /* dma - overlapped + max(compute + rlc, overlapped): the rest waits in turn */
} SwTime;

SwTime sw_cpe_time(const SwWork *w);
/* Its total. */
double sw_cpe_seconds(SwWork w);

/* The DMA term's constants (model.c): seconds per wait and per contiguous block (per CPE), the
 * group's get and put bandwidths; the model's own, fitted to the published DMA experiments, and
 * the term under any others (bench/sw26010_dma --fit refits them). */
typedef struct SwDmaConstants {
  double wait_s, block_s, get_bytes_per_s, put_bytes_per_s;
} SwDmaConstants;
extern const SwDmaConstants SW_DMA;
double sw_dma_time(const SwWork *w, const SwDmaConstants *k);
/* Work on the MPE: `bytes` through its cache, `flops` of scalar arithmetic. */
double sw_mpe_time(double bytes, double flops);

extern const double SW_CG_PEAK_FLOPS;

#endif
