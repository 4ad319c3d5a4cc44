/* The layouts runtime/kernels.h offers: every kernel takes (B,N,R,C); the op table's `layouts`
 * column names the others (convolution's implicit and direct plans, the activations and add
 * take (R,C,N,B) and (B,N/16,R,C,16), pooling (R,C,N,B)); a concatenation takes the blocked
 * layout where every input's channels fill whole blocks (then it joins whole blocks, as it
 * joins channels in (B,N,R,C)). A target implementing the whole interface accepts exactly
 * these (ir/target.h). */
#include "../ir/target.h"

static bool whole_blocks(const Graph *g, const Op *op) {
  for (int j = 0; j < op->inputs.len; j++)
    if (g->values.data[op->inputs.data[j]].shape.dim[1] % LAYOUT_BLOCK) return false;
  return true;
}

bool kernel_interface_accepts(const Graph *g, const Op *op, Layout l) {
  if (l == LAYOUT_BNRC) return true;
  unsigned also = op_info[op->kind].layouts;
  if (l == LAYOUT_RCNB) return also & ALSO_RCNB;
  return (also & ALSO_BNRC16) && (op->kind != OP_CONCAT || whole_blocks(g, op));
}
