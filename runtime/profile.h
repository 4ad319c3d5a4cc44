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

#endif
