/* The layouts runtime/kernels.h offers: every kernel takes (B,N,R,C); convolution (its implicit
 * plan), pooling and the element-wise kernels also take (R,C,N,B). A target implementing the
 * whole interface accepts exactly these (ir/target.h). */
#include "../ir/target.h"

bool kernel_interface_accepts(const Graph *g, const Op *op, Layout l) {
  (void)g;
  if (l == LAYOUT_BNRC) return true;
  switch (op->kind) {
  case OP_CONV:
  case OP_POOL:
  case OP_RELU:
  case OP_SIGMOID:
  case OP_TANH:
  case OP_ADD: return true;
  default: return false;
  }
}
