/* The layouts runtime/kernels.h offers: every kernel takes (B,N,R,C); those the op table marks
 * `rcnb` (convolution's implicit plan, pooling, the activations, add) also take (R,C,N,B). A
 * target implementing the whole interface accepts exactly these (ir/target.h). */
#include "../ir/target.h"

bool kernel_interface_accepts(const Graph *g, const Op *op, Layout l) {
  (void)g;
  return l == LAYOUT_BNRC || op_info[op->kind].rcnb;
}
