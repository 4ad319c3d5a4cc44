/* Pass `carry-masks`: lets a convolution apply the ReLU backward of the op before it as it stores
 * its input gradient.
 *
 * An op p with a ReLU epilogue (pass fuse-elementwise) runs, before its backward, the ReLU's
 * backward on the gradient of its output v, in place: a pass over memory reading v and the
 * gradient and writing the gradient (ResNet-50: every residual sum, and the batch norms before
 * its 3x3 and expanding 1x1 convolutions). Where a convolution c reads v as its input and c's
 * backward step is the last to add to v's gradient, the gradient is complete when c stores its
 * part of it, and v is c's input x, which c's step has at hand (its weight gradient reads it):
 * c then carries the mask (Op.dx_carries, `masks=relu` in its line of the IR): its kernels store
 * dX as x > 0 ? dX : slope * dX (SwkConv.dx_relu: the host's direct plan from its strips'
 * registers, Winograd in its inverse transforms; the dispatcher after any other plan), and p runs
 * no ReLU backward of its own (Epilogue.backward_in_reader). What the pass saves is the separate
 * pass's reading and writing of the gradient; the values are the same bit for bit (the same
 * expression on the same sum). And v is read last by c's step, not p's: the memory plan lets
 * it go sooner.
 *
 * A ReLU6 epilogue is carried the same way, its mask 0 < x < 6 (SwkConv.dx_relu_ceiling).
 * Not where a max pool already carries p's epilogue, where another activation than ReLU or ReLU6
 * is the epilogue (their backward needs more than comparisons), or where the gradient c writes
 * is another value's (a layout transform between them). */
#include "passes.h"

/* The index of the last backward step of a consumer of value v, or -1. */
static int last_consumer_step(const Module *m, int v, const int *bstep) {
  const Graph *g = &m->graph;
  int last = -1;
  for (int i = 0; i < g->ops.len; i++)
    for (int j = 0; j < g->ops.data[i].inputs.len; j++)
      if (g->ops.data[i].inputs.data[j] == v && bstep[i] > last) last = bstep[i];
  return last;
}

/* Whether convolution c, whose backward is step `step`, can carry its input's epilogue. */
static bool carries(const Module *m, const Op *c, int step, const int *bstep) {
  const Graph *g = &m->graph;
  const BackwardStep *s = &m->schedule.backward.data[step];
  if (op_info[c->kind].family != FAMILY_CONV || s->input_grad.data[0] == GRAD_NONE) return false;
  int v = c->inputs.data[0];
  const Op *p = &g->ops.data[g->values.data[v].producer];
  if (backward_epilogue(p) != &p->epilogue ||
      (p->epilogue.kind != OP_RELU && p->epilogue.kind != OP_RELU6))
    return false;
  return bstep[g->values.data[v].producer] > step && last_consumer_step(m, v, bstep) == step;
}

bool pass_carry_masks(Module *m) {
  Graph *g = &m->graph;
  int *bstep = schedule_backward_index(m);
  for (int j = 0; j < m->schedule.backward.len; j++) {
    Op *c = &g->ops.data[m->schedule.backward.data[j].op];
    if (!carries(m, c, j, bstep)) continue;
    Op *p = &g->ops.data[g->values.data[c->inputs.data[0]].producer];
    c->dx_carries = p->epilogue;
    p->epilogue.backward_in_reader = true;
  }
  return true;
}
