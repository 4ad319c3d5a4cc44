/* --infer: the network's forward pass in evaluation mode on an array of inputs (docs/runtime.md). */
#ifndef SWNC_RT_INFER_H
#define SWNC_RT_INFER_H

#include "swnc_rt.h"

/* Reads `input` (N x C x H x W float32, the network's input as its first layer sees it; N x C
 * for a vector input), runs it through net->evaluate in batches of at most `batch` images in
 * `step` (allocated for that batch of the evaluation plan, its weights and state loaded), and
 * writes the scores the first loss reads (N x classes float32) to `output`. */
void swn_infer(const SwnNetwork *net, SwnStep *step, int64_t batch, const char *input,
               const char *output);

#endif
