/* Checkpoints written by the compiler (docs/runtime.md, Checkpoints). */
#ifndef SWNC_CHECKPOINT_H
#define SWNC_CHECKPOINT_H

#include "../ir/ir.h"

/* Writes a checkpoint of the compiled module m: `params` (the plan's parameter words) and
 * `state` (its state words), iteration 0, zero momentum. Written to a temporary file and renamed
 * over `path`. False after reporting an error. */
bool checkpoint_write(const Module *m, const char *path, const float *params, const float *state);

#endif
