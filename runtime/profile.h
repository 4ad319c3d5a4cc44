#ifndef SWNC_RT_PROFILE_H
#define SWNC_RT_PROFILE_H

#include <stdio.h>

#include "swnc_rt.h"

SwnProfile *swn_profile_new(const SwnNetwork *net);
/* `batch` images per iteration, split over `core_groups` workers (the profile is worker 0's). */
void swn_profile_report(SwnProfile *p, int batch, int core_groups, FILE *f);
/* The table as JSON: {"network", "batch", "iterations", "kernels", "layers": [{"name",
 * "forward_ms", "backward_ms", "update_ms"}, ...]} in ms per iteration (docs/runtime.md). */
void swn_profile_write_json(const SwnProfile *p, const char *path, int batch);
void swn_profile_free(SwnProfile *p);

/* Seconds on the hardware the program is built for: the kernel set's running estimate of its
 * time where it makes one (swk_estimate: sw26010 on its emulator, per core group, i.e. per
 * calling thread), else wall time. --autotune and --comm-profile measure with it, so that on
 * the emulator they measure the chip, not the emulator. */
double swn_target_now(void);
/* The work between these two calls on this thread is left out of its estimate from then on
 * (swn_target_now and --profile's): work whose thread depends on scheduling here, so that the
 * estimate stays the same in every run. Wall time is never left out. */
void swn_target_exclude_begin(void);
void swn_target_exclude_end(void);
/* Whether swn_target_now is an estimate. */
bool swn_target_estimates(void);

#endif
