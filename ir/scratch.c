/* The scratch memory a run holds beside its memory plan, for --stats: what the kernels, the
 * runtime's convolution dispatcher and its data loader allocate (docs/runtime.md). Each is
 * sized here the way the runtime sizes it; the kernels' own needs come from the target. */
#include "target.h"

enum { SLOT_X, SLOT_Y, SLOT_DX, SLOT_WS, SLOTS }; /* the dispatcher's, runtime/conv.c */

static double larger(double a, double b) { return a > b ? a : b; }

/* The dispatcher's slots for one computation of convolution op in `plan` on `batch` images:
 * its operands converted where the plan's layout is not the tensors', and the implicit and
 * direct kernels' workspace, which it holds itself. */
static void computation_slots(const Module *m, const Op *op, ConvComputation c, ConvPlan plan,
                              int64_t batch, bool input_gradient, double slot[SLOTS]) {
  const Target *t = m->options.target;
  const Graph *g = &m->graph;
  ConvShape s = conv_shape(g, op, batch);
  Layout own = conv_plan_layout(plan);
  double x = (double)batch *
             (double)layout_floats_per_image(g->values.data[op->inputs.data[0]].shape, own),
         y = (double)batch * (double)layout_floats_per_image(g->values.data[op->output].shape, own);
  if (own != g->values.data[op->output].layout) {
    slot[SLOT_Y] = larger(slot[SLOT_Y], y); /* forward's y, or backward's dY */
    if (c != CONV_DGRAD) slot[SLOT_X] = larger(slot[SLOT_X], x);
    if (c == CONV_DGRAD) slot[SLOT_DX] = larger(slot[SLOT_DX], x);
  }
  if (conv_plan_batched_workspace(plan)) /* the others use the step's shared workspace */
    slot[SLOT_WS] = larger(slot[SLOT_WS], target_conv_workspace(t, &s, plan, input_gradient));
}

ScratchWords run_scratch(const Module *m, int64_t test_batch) {
  const Target *t = m->options.target;
  const Graph *g = &m->graph;
  int64_t batch = m->train.batch, forward_batch = batch > test_batch ? batch : test_batch;
  ScratchWords w = {.known = t->fc_workspace != NULL};
  double slot[SLOTS] = {0};
  for (int i = 0; i < g->ops.len && w.known; i++) {
    const Op *op = &g->ops.data[i];
    bool dx = schedule_needs_input_gradient(m, i);
    if (op_info[op->kind].family == FAMILY_FC) w.kernels = larger(w.kernels, t->fc_workspace());
    if (op_info[op->kind].family != FAMILY_CONV) continue;
    ConvShape s = conv_shape(g, op, batch);
    for (int plan = PLAN_EXPLICIT; plan < PLAN_COUNT; plan++) /* as lowering sizes it */
      if (!conv_plan_batched_workspace((ConvPlan)plan) &&
          (conv_uses_plan(op, (ConvPlan)plan) || (plan == PLAN_EXPLICIT && !op->conv.costed)))
        w.kernels = larger(w.kernels, target_conv_workspace(t, &s, (ConvPlan)plan, dx));
    const ConvPlan *plan = op->conv.plan;
    computation_slots(m, op, CONV_FORWARD, plan[CONV_FORWARD], forward_batch, dx, slot);
    computation_slots(m, op, CONV_WGRAD, plan[CONV_WGRAD], batch, dx, slot);
    if (dx) computation_slots(m, op, CONV_DGRAD, plan[CONV_DGRAD], batch, dx, slot);
  }
  for (int k = 0; k < SLOTS; k++) w.dispatcher += slot[k];
  for (int i = 0; i < g->ops.len; i++) /* two batches in flight: runtime/loader.c */
    if (g->ops.data[i].kind == OP_INPUT)
      w.loader =
          2 * (double)batch * (double)shape_per_image(g->values.data[g->ops.data[i].output].shape);
  return w;
}
