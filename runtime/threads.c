/* The compute threads: how they wait, and whether they can start.
 *
 * Waiting. The kernels' OpenMP threads meet at a barrier after every parallel loop, thousands
 * of times an iteration. libgomp's default lets a waiting thread spin for a while first, which
 * costs nothing on an idle machine but, on a shared one (other jobs, CI, an HPC node with a
 * daemon), burns the core that the thread being waited for needs: LeNet training with two busy
 * processes beside it ran 3.2x slower than alone with spinning and 1.8x with passive waiting,
 * which was as fast alone (bench/contention.sh measures both). So a generated program waits
 * passively unless OMP_WAIT_POLICY says otherwise (wait_policy.c). */
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "util.h"

static void *no_work(void *arg) { return arg; }

/* OpenMP aborts the process when it cannot start its team ("Thread creation failed"): start
 * as many threads, with the same default attributes, first, and say what limits them. */
static void check_threads_can_start(int threads) {
  pthread_t *started = swn_alloc(sizeof(pthread_t) * (size_t)threads);
  int n = 0, failure = 0;
  while (n < threads - 1 && !(failure = pthread_create(&started[n], NULL, no_work, NULL))) n++;
  for (int i = 0; i < n; i++) pthread_join(started[i], NULL);
  free(started);
  if (failure)
    swn_fatal("--threads %d: this process can start only %d more threads here (%s: a memory or "
              "process limit); ask for fewer",
              threads, n, strerror(failure));
}

void swn_threads_start(int threads) {
  check_threads_can_start(threads);
  swk_set_threads(threads);
}
