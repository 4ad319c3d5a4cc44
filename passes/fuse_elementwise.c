/* Pass `fuse-elementwise`: folds each activation into the op that produces its input.
 *
 * An activation a = act(v) is folded into v's producer p when a is v's only reader, p's backward
 * does not read p's output (the folded activation overwrites it), and a's backward reads only
 * a's output (so it can run from p's output alone). p then carries a's kind as its epilogue: its
 * forward leaves act(p(x)) in its output, and its backward first turns the gradient it receives
 * into the gradient of the pre-activation values, in place (the memory plan keeps p's output
 * until then). The graph loses a's op and the value between them: one buffer and one
 * gradient buffer fewer per pair, and no separate pass over memory where the target's kernel
 * applies the activation in its own epilogue (the target description's `epilogues`).
 *
 * Values are bit-identical to the unfused program's: the same kernels (or the same arithmetic
 * inside the producer's kernel) run on the same operands. --no-fuse keeps every activation. */
#include "passes.h"

/* Whether op p can take an activation on its output. */
static bool takes_epilogue(const Op *p) {
  const OpInfo *info = &op_info[p->kind];
  return info->role == ROLE_LAYER && info->family != FAMILY_NONE && !(info->bwd_reads & BWD_OUT);
}

/* Whether activation op a can run as an epilogue: its backward reads its output only. */
static bool is_foldable_activation(const Op *a) {
  return op_info[a->kind].family == FAMILY_ACTIVATION && op_info[a->kind].bwd_reads == BWD_OUT;
}

/* Readers of each value. */
static int *reader_counts(Module *m) {
  const Graph *g = &m->graph;
  int *readers = arena_alloc(&m->arena, sizeof(int) * (size_t)(g->values.len + 1));
  for (int i = 0; i < g->ops.len; i++)
    for (int j = 0; j < g->ops.data[i].inputs.len; j++) readers[g->ops.data[i].inputs.data[j]]++;
  return readers;
}

/* Drops the folded ops and the values they produced; readers of a folded op's value read the
 * value it was folded into (replacement[v] >= 0). Ops and values keep their order. */
static void compact(Module *m, const bool *folded, const int *replacement) {
  Graph *g = &m->graph;
  int *new_value = arena_alloc(&m->arena, sizeof(int) * (size_t)(g->values.len + 1));
  for (int v = 0, n = 0; v < g->values.len; v++) new_value[v] = replacement[v] < 0 ? n++ : -1;
  for (int v = 0; v < g->values.len; v++)
    if (replacement[v] >= 0) new_value[v] = new_value[replacement[v]];
  int nops = 0;
  for (int i = 0; i < g->ops.len; i++) {
    if (folded[i]) continue;
    Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++) op->inputs.data[j] = new_value[op->inputs.data[j]];
    op->output = new_value[op->output];
    g->ops.data[nops++] = *op;
  }
  g->ops.len = nops;
  int nvalues = 0;
  for (int v = 0; v < g->values.len; v++)
    if (replacement[v] < 0) g->values.data[nvalues++] = g->values.data[v];
  g->values.len = nvalues;
  for (int i = 0; i < g->ops.len; i++) g->values.data[g->ops.data[i].output].producer = i;
}

bool pass_fuse_elementwise(Module *m) {
  if (m->options.no_fuse) return true;
  Graph *g = &m->graph;
  const int *readers = reader_counts(m);
  bool *folded = arena_alloc(&m->arena, sizeof(bool) * (size_t)(g->ops.len + 1));
  int *replacement = arena_alloc(&m->arena, sizeof(int) * (size_t)(g->values.len + 1));
  for (int v = 0; v < g->values.len; v++) replacement[v] = -1;
  int count = 0;
  for (int i = 0; i < g->ops.len; i++) {
    const Op *a = &g->ops.data[i];
    if (!is_foldable_activation(a)) continue;
    int v = a->inputs.data[0];
    Op *p = &g->ops.data[g->values.data[v].producer];
    if (readers[v] != 1 || !takes_epilogue(p)) continue;
    p->epilogue = (Epilogue){true, a->kind, a->attr.slope};
    folded[i] = true;
    replacement[a->output] = v;
    count++;
  }
  if (count) compact(m, folded, replacement);
  return true;
}
