/* The host runs its own kernels: --profile measures them, there is nothing to estimate. */
#include "kernels.h"

bool swk_estimate(SwkEstimate *totals) {
  (void)totals;
  return false;
}
