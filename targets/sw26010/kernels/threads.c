/* Threads of the sw26010 kernel set: the MPE is one core; parallelism is the CPE cluster's,
 * and a chip's 4 core groups (the SW26010 as swCaffe describes it), one per worker thread. */
#include "args.h"
#include "kernels.h"

void swk_set_threads(int threads) { (void)threads; }
int swk_threads(void) { return 1; }
int swk_core_groups(void) { return SW_CORE_GROUPS; }
const char *swk_isa(void) { return "sw26010 CPE clusters, emulated"; }
