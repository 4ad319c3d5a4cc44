/* Threading of the host kernels: OpenMP over images, rows or channels; the GEMM runs on the
 * calling thread, so the kernels' own parallel loops are the only level. */
#include <omp.h>

#include "gemm.h"
#include "kernels.h"

static int thread_count = 1;

void swk_set_threads(int threads) {
  thread_count = threads > 0 ? threads : 1;
  omp_set_num_threads(thread_count);
}

int swk_threads(void) { return thread_count; }

const char *swk_isa(void) { return host_gemm_isa(); }

/* One core group: the worker's OpenMP threads share all the cores. */
int swk_core_groups(void) { return 1; }
