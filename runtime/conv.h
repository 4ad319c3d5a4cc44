/* The convolution dispatcher's state (swnc_rt.h declares the calls). */
#ifndef SWNC_CONV_H
#define SWNC_CONV_H

#include <stdio.h>

#include "swnc_rt.h"

/* autotune: time both plans of every computation during the first training iterations and
 * keep the faster (reported on `report` once decided). */
SwnConvState *swn_conv_state_new(const SwnNetwork *net, bool autotune, FILE *report);
void swn_conv_state_free(SwnConvState *c);
/* Whether timing is on for this step: only training steps are timed. */
void swn_conv_timing(SwnConvState *c, bool on);

#endif
