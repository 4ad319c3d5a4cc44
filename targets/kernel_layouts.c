/* The layouts runtime/kernels.h offers: every kernel takes (B,N,R,C); the op table's `layouts`
 * column names the others (convolution's implicit and direct plans, the activations and add
 * take (R,C,N,B) and (B,N/16,R,C,16), pooling (R,C,N,B)); a concatenation takes the blocked
 * layout where every input's channels fill whole blocks (then it joins whole blocks, as it
 * joins channels in (B,N,R,C)), mul where its scale is a vector or x's shape. A target implementing the whole interface accepts exactly
 * these (ir/target.h). */
#include "../ir/target.h"

static bool whole_blocks(const Graph *g, const Op *op) {
  for (int j = 0; j < op->inputs.len; j++)
    if (g->values.data[op->inputs.data[j]].shape.dim[1] % LAYOUT_BLOCK) return false;
  return true;
}

/* mul's blocked kernels take a per-channel scale as (batch, c) floats (a vector: no layout), or
 * one of x's own shape (blocked with x); a per-channel scale that is an image of 1 x 1 pixels
 * would come blocked, as they do not read it. */
static bool scale_unblocked_or_whole(const Graph *g, const Op *op) {
  Shape x = g->values.data[op->inputs.data[0]].shape, s = g->values.data[op->inputs.data[1]].shape;
  return s.rank != 4 || shape_per_image(s) == shape_per_image(x);
}

bool kernel_interface_accepts(const Graph *g, const Op *op, Layout l) {
  if (l == LAYOUT_BNRC) return true;
  unsigned also = op_info[op->kind].layouts;
  if (l == LAYOUT_RCNB) return also & ALSO_RCNB;
  if (op->kind == OP_CONCAT) return (also & ALSO_BNRC16) && whole_blocks(g, op);
  if (op->kind == OP_MUL) return (also & ALSO_BNRC16) && scale_unblocked_or_whole(g, op);
  return also & ALSO_BNRC16;
}
