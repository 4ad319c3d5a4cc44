/* The pass pipeline: an ordered list of named passes over a module. */
#ifndef SWNC_PASSES_H
#define SWNC_PASSES_H

#include "../ir/ir.h"

typedef struct Pass {
  const char *name;
  const char *summary;
  bool (*run)(Module *m);
  unsigned needs;    /* Stage bits the module must have */
  unsigned provides; /* the Stage bit it establishes */
} Pass;

typedef struct PipelineOptions {
  bool verify_each; /* run the verifier after every pass */
  bool print_after_all;
  const char *print_after; /* a pass name, or NULL */
  FILE *dump;              /* where IR dumps go (stderr) */
} PipelineOptions;

const Pass *pipeline_passes(int *count);
const Pass *pipeline_find(const char *name);
/* Runs every pass in order; stops after the first that reports an error. A pass runs only on a
 * module with the stages it needs. */
bool pipeline_run(Module *m, const PipelineOptions *opts);

bool pass_elaborate(Module *m);
bool pass_infer_shapes(Module *m);
bool pass_verify(Module *m);
bool pass_fuse_elementwise(Module *m);
bool pass_price_conv_plans(Module *m);
bool pass_layout(Module *m);
bool pass_training_steps(Module *m);
bool pass_carry_masks(Module *m);
bool pass_recompute(Module *m);
bool pass_fold_gradients(Module *m);
bool pass_memplan(Module *m);
/* The training step's floats (activations at the training batch, and its fixed region) as
 * pass_memplan would place them now: for a pass weighing its choices by memory. */
int64_t memplan_training_floats(Module *m);
bool pass_bucket_gradients(Module *m);

#endif
