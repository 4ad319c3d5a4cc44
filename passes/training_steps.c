/* Pass `training-steps`: lowers training into the steps a backend emits.
 * forward:  every op in topological order;
 * backward: reverse topological order, only ops on a path from a parameter to a loss;
 *           for each input, whether its gradient is needed and, where a value fans out to
 *           several consumers, which consumer writes its gradient first and which add to it;
 * update:   the ops with parameters, in the order backward completes their gradients. */
#include "passes.h"

static bool is_loss(const Op *op) { return op_info[op->kind].role == ROLE_LOSS; }

/* to_loss[v]: a loss lies downstream of v (metrics pass no gradient). */
static char *mark_loss_paths(Module *m) {
  const Graph *g = &m->graph;
  char *to_loss = arena_alloc(&m->arena, (size_t)g->values.len + 1);
  for (int i = g->ops.len - 1; i >= 0; i--) {
    const Op *op = &g->ops.data[i];
    if (op_info[op->kind].role == ROLE_METRIC || !(is_loss(op) || to_loss[op->output])) continue;
    for (int j = 0; j < op->inputs.len; j++) to_loss[op->inputs.data[j]] = 1;
  }
  return to_loss;
}

bool pass_training_steps(Module *m) {
  Graph *g = &m->graph;
  Schedule *s = &m->schedule;
  *s = (Schedule){0};
  char *needs_grad = graph_params_upstream(m), *to_loss = mark_loss_paths(m);
  char *grad_written = arena_alloc(&m->arena, (size_t)g->values.len + 1);

  for (int i = 0; i < g->ops.len; i++) vec_push(&m->arena, s->forward, i);

  for (int i = g->ops.len - 1; i >= 0; i--) {
    const Op *op = &g->ops.data[i];
    bool on_path = is_loss(op) || to_loss[op->output];
    if (!on_path || !needs_grad[op->output]) continue;
    BackwardStep step = {.op = i, .param_grads = op->params.len > 0};
    for (int j = 0; j < op->inputs.len; j++) {
      int v = op->inputs.data[j];
      GradMode mode = GRAD_NONE;
      if (needs_grad[v]) mode = grad_written[v] ? GRAD_ACCUMULATE : GRAD_WRITE;
      grad_written[v] |= needs_grad[v];
      vec_push(&m->arena, step.input_grad, mode);
    }
    vec_push(&m->arena, s->backward, step);
    if (step.param_grads) vec_push(&m->arena, s->update_ops, i);
  }
  return true;
}
