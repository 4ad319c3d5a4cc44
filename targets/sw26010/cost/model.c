/* The SW26010 cost model (model.h). Per core group:
 *   compute = vector flops / 742.4 GFLOPS + scalar flops / 185.6 GFLOPS
 *             + memory-pipeline instructions / (64 x 1.45 GHz)
 *             the CPE cluster's peak (the SW26010 as swCaffe describes it) is a 4-wide vector
 *             multiply-add per cycle and CPE; scalar code issues one lane's: a quarter. Each
 *             CPE has two pipelines: P0 for arithmetic, P1 for LDM loads and stores and
 *             register communication, one instruction per cycle each; the block products keep
 *             P1 under P0, but the copies, zeroing and packing the kernels declare
 *             (athread.h ldm_ops) run in loops of their own, P1's work alone
 *   dma     = (waits * L + blocks * B) / 64 + bytes got / G + bytes put / P
 *             the group's requests are served in turn (over four buses, each shared by two mesh
 *             rows): each contiguous block in memory costs B, and the group moves bytes at G
 *             (memory to LDM) and P (LDM to memory); each CPE also waits a latency L per wait
 *             (a request, or the requests one dma_wait waits for together), while the others'
 *             requests proceed: the work is spread evenly over the 64 CPEs, so L / 64 per wait.
 *             Strided requests declared tiled (emu/tiling.h) count the contiguous pieces the 8
 *             of a mesh column or row form together: the group's requests are contiguous.
 *             L, B, G, P are fitted (least squares on log rates) to the DMA tables published for
 *             the chip (Lin et al., ParCo 2018: STREAM copy and triad at 64 B - 24 KB per
 *             request, strided private blocks of 8 B - 8 KB; the swDNN paper's column-tiled
 *             gets of 128 and 256 B blocks), each experiment run as an emulator kernel and
 *             priced from its counters (bench/sw26010_dma, docs/targets.md), the 8-byte rows
 *             left out (they run twice as fast as any such model fitting 64 B): L = 846 ns
 *             (1227 cycles), B = 1111 ns / 64 = 17.4 ns, G = 28.3 GB/s, P = 16.4 GB/s
 *             (bench/sw26010_dma --fit). The
 *             private blocks set B (a block costs the same from 8 B to 2 KB), copy against
 *             triad sets G against P at large requests and L at small ones (triad waits once
 *             for its two gets), the 24 KB rows the sum of 1/G and 1/P.
 *   rlc     = words * 32 B / 4461 GB/s                   (pipelined broadcast rate)
 *   total   = exposed dma + max(compute + rlc, overlapped dma)
 *             overlapped: the dma term of the transfers a kernel double-buffers (issued before
 *             arithmetic they do not feed, waited for after it: athread_dma_overlapped); they
 *             stream while the CPE computes and exchange, and only what outlasts that shows.
 *             Taken over the launch's sums, as the kernels' steps are alike. Every other
 *             transfer, exchange and computation waits for the one before.
 * MPE: bytes / 9.9 GB/s (its measured copy rate) + flops / 11.6 GFLOPS (its peak). */
#include "model.h"

const double SW_CG_PEAK_FLOPS = 742.4e9;
static const double CPES = 64, SIMD_LANES = 4, CLOCK = 1.45e9;
const SwDmaConstants SW_DMA = {
    .wait_s = 846e-9, .block_s = 1111e-9, .get_bytes_per_s = 28.3e9, .put_bytes_per_s = 16.4e9};
static const double RLC_BROADCAST_BYTES_PER_S = 4461e9, RLC_WORD_BYTES = 32;
static const double MPE_FLOPS = 11.6e9, MPE_BYTES_PER_S = 9.9e9;

SwTime sw_cpe_time(const SwWork *w) {
  SwTime t;
  t.compute = w->vector_flops / SW_CG_PEAK_FLOPS +
              (w->flops - w->vector_flops) / (SW_CG_PEAK_FLOPS / SIMD_LANES) +
              w->ldm_ops / (CPES * CLOCK);
  t.dma = sw_dma_time(w, &SW_DMA);
  t.rlc = w->rlc_words * RLC_WORD_BYTES / RLC_BROADCAST_BYTES_PER_S;
  SwWork overlapped = {.dma_bytes = w->overlapped_bytes,
                       .dma_put_bytes = w->overlapped_put_bytes,
                       .dma_transfers = w->overlapped_transfers,
                       .dma_batched = w->overlapped_batched,
                       .dma_blocks = w->overlapped_blocks};
  t.overlapped = sw_dma_time(&overlapped, &SW_DMA);
  double busy = t.compute + t.rlc;
  t.total = t.dma - t.overlapped + (busy > t.overlapped ? busy : t.overlapped);
  return t;
}

double sw_cpe_seconds(SwWork w) { return sw_cpe_time(&w).total; }

double sw_dma_time(const SwWork *w, const SwDmaConstants *k) {
  double waits = w->dma_transfers - w->dma_batched, got = w->dma_bytes - w->dma_put_bytes;
  return (waits * k->wait_s + w->dma_blocks * k->block_s) / CPES + got / k->get_bytes_per_s +
         w->dma_put_bytes / k->put_bytes_per_s;
}

double sw_mpe_time(double bytes, double flops) {
  return bytes / MPE_BYTES_PER_S + flops / MPE_FLOPS;
}
