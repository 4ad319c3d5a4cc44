/* --estimate: a training iteration's time on the target from its cost model alone, per layer
 * and phase, without building or running anything: convolutions at the costs the strategy
 * pass found (ConvChoice: measured where a tuning file has them), transforms at the target's
 * transform cost, every other kernel call at its op_cost, then the optimizer's update. Where
 * the target splits the batch over workers that run at once (batch_parts), one worker's share
 * is priced: that is the iteration's time. */
#include <math.h>
#include <stdlib.h>

#include "target.h"

typedef struct Row {
  double forward, backward;
} Row;

/* The transform op's conversion (backward: of the gradient, the other way). */
static double transform_time(const Module *m, const Op *op, bool backward) {
  const Value *x = &m->graph.values.data[op->inputs.data[0]];
  Layout from = x->layout, to = (Layout)op->attr.to;
  return backward ? module_transform_cost(m, x->shape, to, from)
                  : module_transform_cost(m, x->shape, from, to);
}

/* A convolution's forward, and its backward as the strategy pass priced it with its tensors in
 * their layout (in_layout: all three computations, operand conversions included) less the
 * forward; only the weight gradient where backward wants no input gradient. */
static Row conv_time(const Module *m, const Op *op, bool input_grad) {
  const ConvChoice *ch = &op->conv;
  Layout l = m->graph.values.data[op->output].layout;
  ConvPlan fp = ch->plan[CONV_FORWARD];
  double forward = ch->cost[CONV_FORWARD][fp];
  if (conv_plan_layout(fp) != l) {
    Shape x = m->graph.values.data[op->inputs.data[0]].shape,
          y = m->graph.values.data[op->output].shape;
    forward += module_transform_cost(m, x, l, conv_plan_layout(fp)) +
               module_transform_cost(m, y, conv_plan_layout(fp), l);
  }
  double backward =
      input_grad ? ch->in_layout[l] - forward : ch->cost[CONV_WGRAD][ch->plan[CONV_WGRAD]];
  return (Row){forward, backward};
}

static double op_time(const Module *m, const Op *op, int64_t share, bool backward,
                      bool input_grad) {
  if (op->kind == OP_TRANSFORM) return transform_time(m, op, backward);
  return m->options.target->op_cost(&m->graph, op, share, backward, input_grad);
}

/* The activation an op applies to its output in place (pass fuse-elementwise). */
static double epilogue_time(const Module *m, const Op *op, const Epilogue *e, int64_t share,
                            bool backward) {
  int v = op->output;
  Op act = {.kind = e->kind, .output = v};
  act.inputs.data = &v, act.inputs.len = 1;
  return m->options.target->op_cost(&m->graph, &act, share, backward, true);
}

bool ir_print_estimate(FILE *f, const Module *m) {
  const Target *t = m->options.target;
  const Graph *g = &m->graph;
  if (!t->op_cost || !t->update_cost) {
    diag_error((SrcLoc){0}, "--estimate: target '%s' has no model of its kernels' time", t->name);
    return false;
  }
  int parts = t->batch_parts > 1 ? t->batch_parts : 1;
  int64_t batch = m->train.batch, share = target_batch_share(t, batch);
  Row *rows = xcalloc((size_t)g->ops.len + 1, sizeof(Row), "the estimate's rows");
  for (int i = 0; i < m->schedule.forward.len; i++) {
    const Op *op = &g->ops.data[m->schedule.forward.data[i]];
    Row *r = &rows[op - g->ops.data];
    r->forward =
        op->kind == OP_CONV ? conv_time(m, op, true).forward : op_time(m, op, share, false, false);
    if (op->epilogue.on) r->forward += epilogue_time(m, op, &op->epilogue, share, false);
  }
  for (int i = 0; i < m->schedule.backward.len; i++) {
    const BackwardStep *s = &m->schedule.backward.data[i];
    const Op *op = &g->ops.data[s->op];
    Row *r = &rows[s->op];
    bool input_grad = s->input_grad.len && s->input_grad.data[0] != GRAD_NONE;
    r->backward += op->kind == OP_CONV ? conv_time(m, op, input_grad).backward
                                       : op_time(m, op, share, true, input_grad);
    const Epilogue *e = backward_epilogue(op);
    if (e) r->backward += epilogue_time(m, op, e, share, true);
    if (op->dx_carries.on) /* its input's ReLU backward: a pass of its own after the kernels
                              that do not apply it (runtime/conv.c), as before the carrying */
      r->backward += epilogue_time(m, &g->ops.data[g->values.data[op->inputs.data[0]].producer],
                                   &op->dx_carries, share, true);
    for (int k = 0; k < s->recompute.len; k++) /* outputs computed again for this step */
      r->backward += rows[s->recompute.data[k]].forward;
  }
  int64_t params = 0;
  for (int i = 0; i < g->ops.len; i++) params += op_param_count(&g->ops.data[i]);
  fprintf(f, "# estimate: %s on %s at batch %lld", m->name, t->name, (long long)batch);
  if (parts > 1)
    fprintf(f, " (%lld images on each of %d workers at once: one's time)", (long long)share, parts);
  fprintf(f, ", from the cost model alone (ms)\n%-28s %-12s %12s %12s\n", "layer", "op", "forward",
          "backward");
  Row total = {0};
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    if (rows[i].forward == 0 && rows[i].backward == 0) continue;
    fprintf(f, "%-28s %-12s %12.3f %12.3f\n", op->name, op_info[op->kind].name,
            1e3 * rows[i].forward, 1e3 * rows[i].backward);
    total.forward += rows[i].forward, total.backward += rows[i].backward;
  }
  double update = t->update_cost(params, parts, &m->train),
         iteration = total.forward + total.backward + update;
  fprintf(f, "%-41s %12.3f %12.3f\n", "total", 1e3 * total.forward, 1e3 * total.backward);
  fprintf(f, "update: %.3f ms (%lld parameters%s)\n", 1e3 * update, (long long)params,
          parts > 1 ? ", the workers' gradients summed first" : "");
  fprintf(f,
          "iteration: %.3f ms, %.2f images/s (data loading and communication between ranks "
          "not included)\n",
          1e3 * iteration, (double)batch / iteration);
  free(rows);
  return true;
}
