/* The SW26010 cost model (model.h). Per core group:
 *   compute = vector flops / 742.4 GFLOPS + scalar flops / 185.6 GFLOPS
 *             the CPE cluster's peak (the SW26010 as swCaffe describes it) is a 4-wide vector
 *             multiply-add per cycle and CPE; scalar code issues one lane's: a quarter
 *   dma     = (bytes / (28 GB/s / 64) + transfers * L + blocks * B) / 64
 *             each CPE's requests in turn at its 1/64 share of the 28 GB/s saturated DMA
 *             bandwidth, plus a latency L per request (hundreds of cycles: 500 / 1.45 GHz) and a
 *             cost B per contiguous block in memory, set so a 256-byte block runs at two
 *             thirds of the stream rate (strided blocks need >= 256 B); the work is spread
 *             evenly over the 64 CPEs, so the sum / 64 is each CPE's time
 *   rlc     = words * 32 B / 4461 GB/s                   (pipelined broadcast rate)
 *   total   = compute + dma + rlc: the kernels wait for each DMA and exchange in turn.
 * MPE: bytes / 9.9 GB/s (its measured copy rate) + flops / 11.6 GFLOPS (its peak). */
#include "model.h"

const double SW_CG_PEAK_FLOPS = 742.4e9, SW_CG_DMA_BYTES_PER_S = 28e9;
static const double CPES = 64, CLOCK = 1.45e9, SIMD_LANES = 4;
static const double DMA_LATENCY_CYCLES = 500;
static const double RLC_BROADCAST_BYTES_PER_S = 4461e9, RLC_WORD_BYTES = 32;
static const double MPE_FLOPS = 11.6e9, MPE_BYTES_PER_S = 9.9e9;

SwTime sw_cpe_time(const SwWork *w) {
  double per_cpe_rate = SW_CG_DMA_BYTES_PER_S / CPES;
  double latency = DMA_LATENCY_CYCLES / CLOCK,
         block = 128 / per_cpe_rate; /* 256 B: 256 / (256 + 128) */
  SwTime t;
  t.compute = w->vector_flops / SW_CG_PEAK_FLOPS +
              (w->flops - w->vector_flops) / (SW_CG_PEAK_FLOPS / SIMD_LANES);
  t.dma = (w->dma_bytes / per_cpe_rate + w->dma_transfers * latency + w->dma_blocks * block) / CPES;
  t.rlc = w->rlc_words * RLC_WORD_BYTES / RLC_BROADCAST_BYTES_PER_S;
  t.total = t.compute + t.dma + t.rlc;
  return t;
}

double sw_mpe_time(double bytes, double flops) {
  return bytes / MPE_BYTES_PER_S + flops / MPE_FLOPS;
}
