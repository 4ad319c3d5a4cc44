/* The ordered pass list and the driver loop, with -print-after and -verify-each. */
#include "passes.h"

enum {
  GRAPH = STAGE_ELABORATED | STAGE_SHAPED | STAGE_VERIFIED,
};

static const Pass passes[] = {
    {"elaborate", "instantiate blocks, resolve names, decode attributes, order the graph",
     pass_elaborate, 0, STAGE_ELABORATED},
    {"infer-shapes", "infer every tensor's shape and create the learnable parameters",
     pass_infer_shapes, STAGE_ELABORATED, STAGE_SHAPED},
    {"verify", "check the IR's invariants", pass_verify, STAGE_ELABORATED | STAGE_SHAPED,
     STAGE_VERIFIED},
    {"fuse-elementwise", "fold each activation into the op before it, as its epilogue",
     pass_fuse_elementwise, GRAPH, STAGE_FUSED},
    {"price-conv-plans", "cost each convolution's computations in each plan (model or tuning file)",
     pass_price_conv_plans, GRAPH | STAGE_FUSED, STAGE_COSTED},
    {"layout", "lay tensors out, fix convolution plans, insert the fewest costly transforms",
     pass_layout, GRAPH | STAGE_COSTED, STAGE_LAID_OUT},
    {"training-steps", "lower training into forward, backward and update steps",
     pass_training_steps, GRAPH | STAGE_LAID_OUT, STAGE_SCHEDULED},
    {"carry-masks",
     "let a convolution apply its input's ReLU backward as it stores the input gradient",
     pass_carry_masks, GRAPH | STAGE_SCHEDULED, STAGE_CARRIED},
    {"recompute",
     "let backward compute cheap outputs again (batch norm, sums) instead of keeping them",
     pass_recompute, GRAPH | STAGE_SCHEDULED | STAGE_CARRIED, STAGE_RECOMPUTED},
    {"fold-gradients",
     "have backward add the gradients into SGD's momentum instead of a pool of their own",
     pass_fold_gradients, GRAPH | STAGE_SCHEDULED, STAGE_FOLDED},
    {"memplan", "place every tensor of a training step in one arena, reusing dead memory",
     pass_memplan, GRAPH | STAGE_SCHEDULED | STAGE_CARRIED | STAGE_RECOMPUTED | STAGE_FOLDED,
     STAGE_PLANNED},
    {"bucket-gradients",
     "cut the gradient pool into buckets and mark where backward completes each",
     pass_bucket_gradients, GRAPH | STAGE_SCHEDULED | STAGE_PLANNED, STAGE_CUT},
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
    if (!module_has(m, p->needs)) {
      diag_error((SrcLoc){0}, "internal: pass '%s' runs before the stages it needs", p->name);
      return false;
    }
    int errors = diag_error_count();
    bool ok = p->run(m) && diag_error_count() == errors;
    if (!ok) return false;
    m->stages |= p->provides;
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
