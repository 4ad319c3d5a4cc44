#ifndef SWNC_RT_PROFILE_H
#define SWNC_RT_PROFILE_H

#include <stdio.h>

#include "swnc_rt.h"

SwnProfile *swn_profile_new(const SwnNetwork *net);
void swn_profile_report(SwnProfile *p, int batch, FILE *f);
void swn_profile_free(SwnProfile *p);

#endif
