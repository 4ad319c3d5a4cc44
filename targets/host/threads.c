/* Threading of the host kernels: OpenMP over images or channels, with OpenBLAS held to one
 * thread so that the kernels' own parallel loops are the only level (no oversubscription). */
#include <cblas.h>
#include <omp.h>

#include "kernels.h"

static int thread_count = 1;

void swk_set_threads(int threads) {
  thread_count = threads > 0 ? threads : 1;
  omp_set_num_threads(thread_count);
  openblas_set_num_threads(1);
}

int swk_threads(void) { return thread_count; }

/* One core group: the worker's OpenMP threads share all the cores. */
int swk_core_groups(void) { return 1; }
