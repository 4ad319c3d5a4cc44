/* What each op keeps from its forward pass for its backward pass (beyond the values the op
 * table's bwd_reads names), and the non-learned state it carries between iterations, by the op
 * table's `saved` and `state` columns. These are properties of the computation, whatever the
 * target: max pooling must remember where the maximum was, batch norm its batch statistics and
 * running averages. */
#include "ir.h"

int op_saved(const Graph *g, const Op *op, SavedSpec out[2]) {
  Shape in = g->values.data[op->inputs.len ? op->inputs.data[0] : op->output].shape;
  Shape y = g->values.data[op->output].shape;
  switch (op_info[op->kind].saved) {
  case SAVE_NONE: return 0;
  case SAVE_ARGMAX:
    if (op->attr.pool != POOL_MAX) return 0; /* average pooling needs nothing */
    out[0] = (SavedSpec){"argmax", layout_floats_per_image(y, g->values.data[op->output].layout),
                         true, DT_I32};
    return 1;
  case SAVE_CHANNEL_STATS:
    out[0] = (SavedSpec){"mean_invstd", 2 * in.dim[1], false, DT_F32};
    return 1;
  case SAVE_OUT_SIZED: out[0] = (SavedSpec){"scale", shape_per_image(y), true, DT_F32}; return 1;
  case SAVE_IN_SIZED: out[0] = (SavedSpec){"prob", shape_per_image(in), true, DT_F32}; return 1;
  }
  return 0;
}

int op_state(const Graph *g, const Op *op, StatePart out[2]) {
  if (op_info[op->kind].state == STATE_NONE) return 0;
  int64_t channels = g->values.data[op->inputs.data[0]].shape.dim[1];
  out[0] = (StatePart){"running_mean", channels, 0.0};
  out[1] = (StatePart){"running_var", channels, 1.0};
  return 2;
}

int64_t op_state_words(const Graph *g, const Op *op) {
  StatePart parts[2];
  int64_t words = 0;
  for (int i = 0, n = op_state(g, op, parts); i < n; i++) words += parts[i].words;
  return words;
}
