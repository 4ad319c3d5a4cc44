/* Launch accounting: every CPE launch's counters become an estimated SW26010 time
 * (cost/model.c), summed with the MPE's work into totals that --profile reads between layers.
 * The allreduce's sums run on the communication thread (its own core group here): they go to
 * their own total, so the layer running meanwhile is not charged for them. */
#include <pthread.h>

#include "../cost/model.h"
#include "mpe.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static SwkEstimate totals;
static pthread_t counted_thread; /* the compute thread: the first to launch */
static bool have_counted_thread;

static SwkEstimate *account(void) {
  if (!have_counted_thread) counted_thread = pthread_self(), have_counted_thread = true;
  static SwkEstimate elsewhere;
  return pthread_equal(pthread_self(), counted_thread) ? &totals : &elsewhere;
}

void sw_launched(void) {
  const AthreadCounters *c = athread_last_counters();
  SwWork w = {(double)c->flops, (double)(c->dma_get_bytes + c->dma_put_bytes), (double)c->dma_transfers,
              (double)c->dma_blocks, (double)c->rlc_words};
  SwTime t = sw_cpe_time(&w);
  pthread_mutex_lock(&lock);
  SwkEstimate *e = account();
  e->seconds += t.total, e->cpe_seconds += t.total;
  e->flops += w.flops, e->dma_bytes += w.dma_bytes, e->rlc_words += w.rlc_words;
  e->launches++;
  pthread_mutex_unlock(&lock);
}

void sw_mpe_work(double bytes, double flops) {
  double s = sw_mpe_time(bytes, flops);
  pthread_mutex_lock(&lock);
  SwkEstimate *e = account();
  e->seconds += s, e->mpe_seconds += s;
  pthread_mutex_unlock(&lock);
}

bool swk_estimate(SwkEstimate *out) {
  pthread_mutex_lock(&lock);
  *out = totals;
  pthread_mutex_unlock(&lock);
  return true;
}
