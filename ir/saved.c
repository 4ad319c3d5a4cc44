/* What each op keeps from its forward pass for its backward pass (beyond the values the op
 * table's bwd_reads names), and the non-learned state it carries between iterations. These
 * are properties of the computation, whatever the target: max pooling must remember where
 * the maximum was, batch norm its batch statistics and running averages. */
#include "ir.h"

int op_saved(const Graph *g, const Op *op, SavedSpec out[2]) {
  Shape in = g->values.data[op->inputs.len ? op->inputs.data[0] : op->output].shape;
  Shape y = g->values.data[op->output].shape;
  switch (op->kind) {
  case OP_POOL:
    if (op->attr.pool != POOL_MAX) return 0;
    out[0] = (SavedSpec){"argmax", shape_per_image(y), true, DT_I32};
    return 1;
  case OP_BATCHNORM: out[0] = (SavedSpec){"mean_invstd", 2 * in.dim[1], false, DT_F32}; return 1;
  case OP_LRN: out[0] = (SavedSpec){"scale", shape_per_image(y), true, DT_F32}; return 1;
  case OP_SOFTMAX_LOSS: out[0] = (SavedSpec){"prob", shape_per_image(in), true, DT_F32}; return 1;
  default: return 0;
  }
}

int64_t op_state_words(const Graph *g, const Op *op) {
  if (op->kind != OP_BATCHNORM) return 0;
  return 2 * g->values.data[op->inputs.data[0]].shape.dim[1]; /* running mean and variance */
}
