/* Facts about the graph and its schedule that several passes need, computed in one place. */
#include "ir.h"

char *graph_params_upstream(Module *m) {
  const Graph *g = &m->graph;
  char *up = arena_alloc(&m->arena, (size_t)g->values.len + 1);
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    bool any = op->params.len > 0;
    for (int j = 0; j < op->inputs.len; j++) any |= up[op->inputs.data[j]];
    up[op->output] = any;
  }
  return up;
}

int *schedule_backward_index(Module *m) {
  int n = m->graph.ops.len;
  int *step = arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) step[i] = -1;
  for (int j = 0; j < m->schedule.backward.len; j++) step[m->schedule.backward.data[j].op] = j;
  return step;
}

bool schedule_needs_input_gradient(const Module *m, int op) {
  for (int j = 0; j < m->schedule.backward.len; j++)
    if (m->schedule.backward.data[j].op == op)
      return m->schedule.backward.data[j].input_grad.data[0] != GRAD_NONE;
  return false;
}
