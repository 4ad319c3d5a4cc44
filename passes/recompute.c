/* Pass `recompute`: trades cheap computation for memory. Training keeps, from forward until
 * backward reads it, every value some backward step reads; at the start of backward all of
 * them are live at once, and that is the training plan's peak. Some of them are cheap to make
 * again from values backward keeps anyway: a batch norm's output (after its epilogue: the next
 * convolution's weight gradient reads it, and a ReLU epilogue's backward) from its input and
 * saved batch statistics, which its own backward reads; a residual sum from the batch norm
 * before it and the block's input; a concatenation from its parts, and a layout transform
 * from its input (the parts of a concatenation are often transforms); a convolution with few
 * multiply-adds per output element (a first layer's, its output among the largest) from its
 * input, which its own weight gradient keeps. Such an output dies after
 * its last forward reader, and backward computes it again just before the first backward step
 * that needs it (BackwardStep.recompute), into a buffer of its own that lives until the last.
 * By default (--recompute=kept) a recomputation reads only values backward keeps anyway.
 * --recompute=chains also lets it read values that are themselves recomputed (a residual sum
 * needs the batch norm before it, and the previous block's sum), which are then recomputed
 * first, at the same step at the latest: a link of such a chain costs a pass over memory for
 * no memory of its own (the batch norm's output is needed only to make the sum again), so
 * chains save the most memory at the most time (ResNet-50 at batch 8: its sums' 126 MB for
 * 48 ms of backward in --profile, 2% of a whole run, docs/ir.md). Nothing is recomputed from
 * a value backward would otherwise have let go (a ReLU after a convolution, without fusion:
 * the convolution's output). The values are the same bit for bit: the same kernels on the
 * same inputs (batch norm: swk_batchnorm_recompute, the forward's expression on the saved
 * statistics). --recompute=none keeps every output. */
#include <limits.h>

#include "passes.h"

/* What the decisions need to know of each op: the index of its backward step, and (a
 * convolution) whether running it again is cheap. */
typedef struct Facts {
  const int *backward_index;
  const bool *cheap_conv;
  int depth; /* how deep recomputations may nest: 1 (kept) or DEPTH (chains) */
} Facts;

/* A convolution cheap to run again: at most RECOMPUTE_TAPS multiply-adds per output element,
 * and at most a twentieth of the network's forward arithmetic. 32 multiply-adds at the FMA rate
 * take about as long as a pass over memory reading and writing the element, which is what a
 * batch norm's recomputation costs: VGG-16's first convolution (27, 0.6% of the net) goes with
 * it and saves its output, the largest; ResNet-50's and GoogLeNet's (7x7 on 3 channels: 147)
 * would cost four times a batch norm's time per byte saved (measured: 10 ms of a 990 ms step
 * for 26 MB at batch 8) and stay kept, as do LeNet's (25, but 12% of the net) and AlexNet's. */
enum { RECOMPUTE_TAPS = 32 };

/* grouped: whether grouped convolutions (depthwise ones: 9 or 25 taps) may count as cheap.
 * Recomputing one needs its input at hand, so the chain before it is recomputed early and
 * lives long: that lowers MobileNetV2's peak (kept inputs) and raised EfficientNet-B0's by a
 * quarter (its inputs recomputed too), so the pass plans both and keeps the smaller. */
static bool *cheap_convolutions(Module *m, bool grouped) {
  const Graph *g = &m->graph;
  double total = 0;
  for (int i = 0; i < g->ops.len; i++) total += op_flops(g, &g->ops.data[i]);
  bool *cheap = arena_alloc(&m->arena, sizeof(bool) * (size_t)(g->ops.len + 1));
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    if (op_info[op->kind].family != FAMILY_CONV) {
      cheap[i] = false;
      continue;
    }
    int64_t taps = op->attr.kernel[0] * op->attr.kernel[1] *
                   (g->values.data[op->inputs.data[0]].shape.dim[1] / op->attr.groups);
    cheap[i] = (grouped || op->attr.groups == 1) && taps <= RECOMPUTE_TAPS &&
               op_flops(g, op) <= total / 20;
  }
  return cheap;
}

/* Whether op i's output can be computed again in backward: by a pure kernel of its inputs, or
 * (batch norm) from its input and the statistics it saves for its backward step, which must
 * come no earlier than `step`. */
static bool recomputable(const Module *m, int i, const Facts *f, int step) {
  const Op *op = &m->graph.ops.data[i];
  switch (op_info[op->kind].family) {
  case FAMILY_BATCHNORM: return f->backward_index[i] >= step;
  case FAMILY_CONV: return f->cheap_conv[i];
  case FAMILY_JOIN:
  case FAMILY_MUL:
  case FAMILY_UPSAMPLE:
  case FAMILY_SOFTMAX:
  case FAMILY_TRANSFORM:
  case FAMILY_ACTIVATION: return true;
  case FAMILY_NONE: /* written by the runtime */
  case FAMILY_POOL: /* its backward needs its argmax, saved by forward */
  case FAMILY_FC:
  case FAMILY_DECONV: /* as costly as a convolution, and rare */
  case FAMILY_LRN:
  case FAMILY_DROPOUT:
  case FAMILY_LOSS:
  case FAMILY_ACCURACY: return false;
  }
  return false;
}

/* Whether backward step `s` reads op v's output (an input of its op, or the op's own output
 * through its epilogue or its backward). */
static bool step_reads_output(const Module *m, const BackwardStep *s, int v) {
  const Op *op = &m->graph.ops.data[s->op];
  int reads = op_info[op->kind].bwd_reads;
  if (s->op == v) return backward_epilogue(op) || (reads & BWD_OUT);
  if (!(reads & BWD_IN)) return false;
  for (int j = 0; j < op->inputs.len; j++)
    if (op->inputs.data[j] == m->graph.ops.data[v].output) return true;
  return false;
}

/* The first and last backward step that reads each op's output (INT_MAX and -1 if none). */
typedef struct Reads {
  int *first, *last;
} Reads;

static Reads backward_reads(Module *m) {
  int n = m->graph.ops.len;
  Reads r = {arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1)),
             arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1))};
  for (int i = 0; i < n; i++) r.first[i] = INT_MAX, r.last[i] = -1;
  for (int j = 0; j < m->schedule.backward.len; j++) {
    const BackwardStep *s = &m->schedule.backward.data[j];
    const Op *op = &m->graph.ops.data[s->op];
    for (int k = -1; k < op->inputs.len; k++) {
      int v = k < 0 ? s->op : m->graph.values.data[op->inputs.data[k]].producer;
      if (!step_reads_output(m, s, v)) continue;
      if (j < r.first[v]) r.first[v] = j;
      r.last[v] = j;
    }
  }
  return r;
}

/* With chains, recomputations nest no deeper than this (a chain of residual sums is as deep as
 * a stage). */
enum { DEPTH = 64 };

/* What at_hand has found for the current question (one backward step): per op, the question
 * it was last answered for and the answer. Without it, sums that each read the two before
 * them would be asked about exponentially often. */
typedef struct Memo {
  int *asked, query;
  bool *answer;
} Memo;

/* Whether op i's output can be had at backward step `step` without keeping anything longer:
 * backward keeps it until then anyway, or it can be recomputed from such values. */
static bool at_hand(const Module *m, int i, const Reads *r, const Facts *f, int step, int depth,
                    Memo *memo) {
  if (r->last[i] >= step) return true;
  if (memo->asked[i] == memo->query) return memo->answer[i];
  bool ok = depth < f->depth && recomputable(m, i, f, step);
  const Op *op = &m->graph.ops.data[i];
  for (int k = 0; ok && k < op->inputs.len; k++)
    ok = at_hand(m, m->graph.values.data[op->inputs.data[k]].producer, r, f, step, depth + 1, memo);
  memo->asked[i] = memo->query, memo->answer[i] = ok;
  return ok;
}

/* The recomputations under `facts`, into the backward steps' lists. */
static void decide(Module *m, const Facts *facts) {
  Schedule *s = &m->schedule;
  for (int j = 0; j < s->backward.len; j++) s->backward.data[j].recompute.len = 0;
  const Graph *g = &m->graph;
  /* needed[i]: the first backward step that needs op i's output, reading it or recomputing
   * from it; ops are decided last first, so every recomputation that reads an op's output is
   * known before the op is. An op is recomputed where what it reads is at hand then. */
  Reads reads = backward_reads(m);
  int *needed = reads.first;
  int *at = arena_alloc(&m->arena, sizeof(int) * (size_t)(g->ops.len + 1));
  Memo memo = {arena_alloc(&m->arena, sizeof(int) * (size_t)(g->ops.len + 1)), 0,
               arena_alloc(&m->arena, sizeof(bool) * (size_t)(g->ops.len + 1))};
  for (int i = g->ops.len - 1; i >= 0; i--) {
    at[i] = -1;
    memo.query = g->ops.len - i; /* one question per op: asked[] starts at 0 */
    const Op *op = &g->ops.data[i];
    bool cheap = needed[i] != INT_MAX && recomputable(m, i, facts, needed[i]);
    for (int k = 0; cheap && k < op->inputs.len; k++)
      cheap = at_hand(m, g->values.data[op->inputs.data[k]].producer, &reads, facts, needed[i], 1,
                      &memo);
    if (!cheap) continue;
    at[i] = needed[i];
    for (int k = 0; k < op->inputs.len; k++) {
      int producer = g->values.data[op->inputs.data[k]].producer;
      if (at[i] < needed[producer]) needed[producer] = at[i];
    }
  }
  /* in op order: what a recomputation reads is recomputed before it */
  for (int i = 0; i < g->ops.len; i++)
    if (at[i] >= 0) vec_push(&m->arena, s->backward.data[at[i]].recompute, i);
}

static bool any_grouped_cheap(const Module *m, const bool *with, const bool *without) {
  for (int i = 0; i < m->graph.ops.len; i++)
    if (with[i] != without[i]) return true;
  return false;
}

bool pass_recompute(Module *m) {
  Schedule *s = &m->schedule;
  for (int j = 0; j < s->backward.len; j++) s->backward.data[j].recompute.len = 0;
  if (m->options.recompute == RECOMPUTE_NONE) return true;
  int depth = m->options.recompute == RECOMPUTE_CHAINS ? DEPTH : 1;
  const int *index = schedule_backward_index(m);
  Facts with = {index, cheap_convolutions(m, true), depth},
        without = {index, cheap_convolutions(m, false), depth};
  decide(m, &with);
  if (!any_grouped_cheap(m, with.cheap_conv, without.cheap_conv)) return true;
  int64_t peak_with = memplan_training_floats(m);
  decide(m, &without);
  if (peak_with < memplan_training_floats(m)) decide(m, &with);
  return true;
}
