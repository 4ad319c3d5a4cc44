/* swnc tune: measures every convolution plan and layout transform of a network on the target
 * and appends the results to a tuning file (ir/tuning.h). */
#ifndef SWNC_TUNE_H
#define SWNC_TUNE_H

#include "build.h"

typedef struct TuneOptions {
  const char
      *output; /* the tuning file: read first (what it has is not measured again), then appended */
  int repeat;  /* timed runs per measurement; the median is kept */
  int limit;   /* stop after this many new measurements; 0: no limit */
} TuneOptions;

bool tune_network(const Module *m, const BuildOptions *build, const TuneOptions *o);

#endif
