/* --comm-profile: one training iteration's phases and gradient buckets, averaged over the
 * iterations after the first, written for swnc-sim's scaling prediction (runtime/comm/sim.h). */
#ifndef SWNC_RT_ITERATION_PROFILE_H
#define SWNC_RT_ITERATION_PROFILE_H

#include "comm/sim.h"
#include "distributed.h"

typedef struct SwnTiming {
  SwnIterationProfile sum; /* sums of seconds over `count` iterations */
  int count;
} SwnTiming;

/* phase: the times forward began, backward began, update began, update ended (swn_now). */
void swn_timing_record(SwnTiming *t, const SwnDistributed *d, const double phase[4]);
/* Writes the means to `path` (exits with a message if it cannot); nothing if none recorded. */
void swn_timing_write(SwnTiming *t, const char *path, const char *network, int batch);

#endif
