/* The ordered pass list and the driver loop, with -print-after and -verify-each. */
#include "passes.h"

static const Pass passes[] = {
    {"elaborate", "instantiate blocks, resolve names, decode attributes, order the graph", pass_elaborate},
    {"infer-shapes", "infer every tensor's shape and create the learnable parameters", pass_infer_shapes},
    {"verify", "check the IR's invariants", pass_verify},
    {"conv-strategy", "cost each convolution's computations in each plan (model or tuning file)", pass_conv_strategy},
    {"layout", "lay tensors out, fix convolution plans, insert the fewest costly transforms", pass_layout},
    {"schedule", "lower training into forward, backward and update steps", pass_schedule},
    {"memplan", "place every tensor of a training step in one arena, reusing dead memory", pass_memplan},
    {"fusion", "cut the gradient pool into buckets and mark where backward completes each", pass_fusion},
};

const Pass *pipeline_passes(int *count) {
  *count = (int)(sizeof passes / sizeof passes[0]);
  return passes;
}

const Pass *pipeline_find(const char *name) {
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
    if (!strcmp(passes[i].name, name)) return &passes[i];
  return NULL;
}

bool pipeline_run(Module *m, const PipelineOptions *opts) {
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
    const Pass *p = &passes[i];
    int errors = diag_error_count();
    bool ok = p->run(m) && diag_error_count() == errors;
    if (!ok) return false;
    if (opts->verify_each && !ir_verify(m)) {
      diag_error((SrcLoc){0}, "internal: the IR is invalid after pass '%s'", p->name);
      return false;
    }
    if (opts->print_after_all || (opts->print_after && !strcmp(opts->print_after, p->name))) {
      fprintf(opts->dump, "; IR after pass '%s'\n", p->name);
      ir_print(opts->dump, m);
    }
  }
  return true;
}

bool pass_verify(Module *m) { return ir_verify(m); }
