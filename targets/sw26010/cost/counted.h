/* The work (model.h) an emulated launch did, from the emulator's counters (athread.h): what
 * --profile, the DMA bench and unit_sw26010_predict price or compare. */
#ifndef SWNC_SW26010_COUNTED_H
#define SWNC_SW26010_COUNTED_H

#include <athread.h>

#include "model.h"

static inline SwWork sw_counted_work(const AthreadCounters *c) {
  return (SwWork){.flops = (double)c->flops,
                  .vector_flops = (double)c->vector_flops,
                  .dma_bytes = (double)(c->dma_get_bytes + c->dma_put_bytes),
                  .dma_put_bytes = (double)c->dma_put_bytes,
                  .dma_transfers = (double)c->dma_transfers,
                  .dma_batched = (double)c->dma_batched,
                  .dma_blocks = (double)c->dma_blocks,
                  .rlc_words = (double)c->rlc_words,
                  .ldm_ops = (double)c->ldm_ops,
                  .overlapped_bytes = (double)(c->overlapped_get_bytes + c->overlapped_put_bytes),
                  .overlapped_put_bytes = (double)c->overlapped_put_bytes,
                  .overlapped_transfers = (double)c->overlapped_transfers,
                  .overlapped_batched = (double)c->overlapped_batched,
                  .overlapped_blocks = (double)c->overlapped_blocks};
}

#endif
