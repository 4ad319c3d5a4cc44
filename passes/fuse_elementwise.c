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
 * A max pool then carries the backward of its input's epilogue (Op.pool_carries): the gradient
 * reaches only the position each window's maximum came from, where the activation's output is
 * the pool's output, so the activation's backward can run on the pool's output gradient, reading
 * the pool's output (which the next layer keeps anyway), before the pool scatters it. The
 * producer's output then dies after the pool's forward instead of living until its backward:
 * in VGG-16, the output of the last convolution of each block (23 MiB an image).
 *
 * Values are bit-identical to the unfused program's: the same kernels (or the same arithmetic
 * inside the producer's kernel) run on the same operands. A carried ReLU multiplies by 1 or 0
 * either way; another activation is carried only where windows do not overlap (a position
 * receiving the gradient of several windows would have their sum multiplied once, not each
 * term). --no-fuse keeps every activation. */
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

/* Whether max pool q can carry its input's epilogue e bit for bit (see the top). */
static bool carries_exactly(const Op *q, const Epilogue *e) {
  bool overlap = !q->attr.global &&
                 (q->attr.kernel[0] > q->attr.stride[0] || q->attr.kernel[1] > q->attr.stride[1]);
  return (e->kind == OP_RELU && e->slope == 0) || !overlap;
}

static void carry_through_pools(Module *m) {
  Graph *g = &m->graph;
  const int *readers = reader_counts(m);
  for (int i = 0; i < g->ops.len; i++) {
    Op *q = &g->ops.data[i];
    if (op_info[q->kind].family != FAMILY_POOL || q->attr.pool != POOL_MAX || q->epilogue.on)
      continue;
    int v = q->inputs.data[0];
    Op *p = &g->ops.data[g->values.data[v].producer];
    if (readers[v] != 1 || !p->epilogue.on || !carries_exactly(q, &p->epilogue)) continue;
    q->pool_carries = p->epilogue;
    p->epilogue.backward_in_reader = true;
  }
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
    p->epilogue = (Epilogue){.on = true, .kind = a->kind, .slope = a->attr.slope};
    folded[i] = true;
    replacement[a->output] = v;
    count++;
  }
  if (count) compact(m, folded, replacement);
  carry_through_pools(m);
  return true;
}
