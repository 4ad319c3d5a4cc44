/* Threads of the sw26010 kernel set: the MPE is one core; parallelism is the CPE cluster's. */
#include "kernels.h"

void swk_set_threads(int threads) { (void)threads; }
int swk_threads(void) { return 1; }
