/* Launch accounting: every CPE launch's counters become an estimated SW26010 time
 * (cost/model.c), summed with the MPE's work into totals that --profile reads between layers.
 * Totals are per core group (per MPE thread): the workers of the other groups and the
 * allreduce's communication thread (its own group here) do not charge the layer that worker 0,
 * the profiled one, runs meanwhile. */
#include "mpe.h"

#ifdef ATHREAD_EMULATOR
#include "../cost/counted.h"

/* Per MPE thread, i.e. per core group: a worker's profile reads its own group's totals. */
static _Thread_local SwkEstimate totals;

void sw_launched(void) {
  SwWork w = sw_counted_work(athread_last_counters());
  SwTime t = sw_cpe_time(&w);
  totals.seconds += t.total, totals.cpe_seconds += t.total;
  totals.flops += w.flops, totals.dma_bytes += w.dma_bytes, totals.rlc_words += w.rlc_words;
  totals.launches++;
}

void sw_mpe_work(double bytes, double flops) {
  double s = sw_mpe_time(bytes, flops);
  totals.seconds += s, totals.mpe_seconds += s;
}

bool swk_estimate(SwkEstimate *out) {
  *out = totals;
  return true;
}

#else /* on the chip: nothing to estimate; --profile shows the measured times */
void sw_launched(void) {}
void sw_mpe_work(double bytes, double flops) { (void)bytes, (void)flops; }
bool swk_estimate(SwkEstimate *out) {
  (void)out;
  return false;
}
#endif
