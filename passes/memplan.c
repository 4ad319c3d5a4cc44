/* Pass `memplan`: gives every tensor of the training step, and of evaluation, an offset.
 *
 * Training buffers are the ops' outputs, the gradients of those outputs, and what ops save for
 * backward. Each lives on the step timeline (forward op i is step i, then the backward steps,
 * an epilogue's backward a step of its own) from the step that writes it to the last step that
 * reads it: an activation lives until its last forward consumer or the backward step that
 * reads it (the op table's bwd_reads; an op's epilogue reads its output), a gradient from its
 * first writer to its producer's backward step. An output that backward computes again (pass
 * recompute) lives until its last forward reader, and its recomputed copy from the
 * recomputation to the last backward reader. Buffers whose
 * lifetimes do not overlap may share memory; placement is greedy, largest first, at the
 * lowest offset that fits (as static planners in Glow and TensorFlow do).
 *
 * Evaluation runs forward alone: no gradients, and nothing outlives its last forward reader
 * (what a forward kernel writes for backward dies at once), so its plan is a fraction of the
 * training one per image and a larger evaluation batch fits in the same memory.
 *
 * Per-image buffers are planned in units of one image, so one plan serves any batch size.
 * Parameters (and, at the same offsets, their gradients and momentum) form one contiguous
 * pool in the order backward completes them: the last layer's first. */
#include <limits.h>
#include <stdlib.h>

#include "passes.h"

enum { ALIGN_WORDS = 16 }; /* 64 bytes per image: vector and cache-line alignment */

static int add_buffer(Module *m, StepPlan *p, BufferKind kind, const char *name, int op,
                      int64_t elems, bool per_image, DType dt, int first, int last) {
  Buffer b = {kind, name, op, elems, per_image, dt, first, last, 0};
  vec_push(&m->arena, p->buffers, b);
  return p->buffers.len - 1;
}

static int extend(int last, int step) { return step > last ? step : last; }

/* Where each op's backward, and the recomputation of its output, fall on a step's timeline
 * (-1: none; for evaluation, none at all). Forward op i is step i; then each backward step in
 * turn, preceded by a step for each output it recomputes (pass recompute) and one for an
 * epilogue's backward (which reads the op's output before the op's backward writes anything). */
typedef struct Timeline {
  int *backward, *recompute;
} Timeline;

static Timeline timeline(Module *m, StepKind kind) {
  int n = m->graph.ops.len;
  Timeline t = {arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1)),
                arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1))};
  for (int i = 0; i < n; i++) t.backward[i] = t.recompute[i] = -1;
  if (kind == STEP_EVAL) return t;
  int step = n;
  for (int j = 0; j < m->schedule.backward.len; j++) {
    const BackwardStep *s = &m->schedule.backward.data[j];
    for (int k = 0; k < s->recompute.len; k++) t.recompute[s->recompute.data[k]] = step++;
    if (backward_epilogue(&m->graph.ops.data[s->op])) step++;
    t.backward[s->op] = step++;
  }
  return t;
}

/* The buffer that backward reads an op's output from: the recomputed one if there is one. */
static Buffer *read_in_backward(StepPlan *p, const OpBuffers *ob) {
  return &p->buffers.data[ob->recomputed >= 0 ? ob->recomputed : ob->out];
}

/* Whether an add's input value could share the add's gradient beside the primary: the add is
 * its only consumer (no other term is added to it) and its producer's backward only reads it
 * (no epilogue masking it in place, not an add handing it on). */
static bool sharable(const Module *m, int add, int value, const int *bstep) {
  const Graph *g = &m->graph;
  const Op *producer = &g->ops.data[g->values.data[value].producer];
  if (producer->kind == OP_ADD || backward_epilogue(producer) ||
      bstep[g->values.data[value].producer] < 0)
    return false;
  for (int i = 0; i < g->ops.len; i++)
    for (int j = 0; j < g->ops.data[i].inputs.len; j++)
      if (g->ops.data[i].inputs.data[j] == value && i != add) return false;
  return true;
}

/* The first step after the add's backward that changes its primary input's gradient: another
 * consumer adding its term, or the producer's epilogue masking it (else the producer's
 * backward, after which handing it on may change it). */
static int first_change(const Module *m, int add, int value, const int *bstep) {
  const Graph *g = &m->graph;
  int producer = g->values.data[value].producer;
  int first = bstep[producer] - (backward_epilogue(&g->ops.data[producer]) ? 1 : 0);
  for (int i = 0; i < g->ops.len; i++)
    for (int j = 0; j < g->ops.data[i].inputs.len; j++)
      if (g->ops.data[i].inputs.data[j] == value && i != add && bstep[i] >= 0 && bstep[i] < first)
        first = bstep[i];
  return first;
}

static int producer_step(const Module *m, const Op *op, int k, const int *bstep) {
  return bstep[m->graph.values.data[op->inputs.data[k]].producer];
}

/* A sum's input gradient is its output gradient, so an add hands its own gradient buffer to its
 * inputs instead of copying it into buffers of their own (marked in `handed`). To one input,
 * the primary, always: the output's gradient is read by nothing after the add's backward, and
 * the input's later writers add to it after that. The primary is an input that could not share
 * (one that fans out), else the one whose producer's backward runs last. To each other input
 * that could share (sharable) where its producer reads the buffer before anything changes it
 * (first_change): ResNet's residual sums then copy no gradient at all. To none where an input
 * repeats (add(x, x): the kernel would read a gradient another input's term has changed). */
static void handed_inputs(const Module *m, const BackwardStep *s, const int *bstep, bool *handed) {
  const Op *op = &m->graph.ops.data[s->op];
  int n = op->inputs.len, primary = -1;
  for (int k = 0; k < n; k++) handed[k] = false;
  if (op->kind != OP_ADD || op->buf[STEP_TRAIN].grad < 0) return;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if (op->inputs.data[a] == op->inputs.data[b]) return;
  bool share[n];
  for (int k = 0; k < n; k++) {
    share[k] = s->input_grad.data[k] == GRAD_WRITE && sharable(m, s->op, op->inputs.data[k], bstep);
    if (s->input_grad.data[k] != GRAD_WRITE) continue;
    bool later =
        primary >= 0 && producer_step(m, op, k, bstep) > producer_step(m, op, primary, bstep);
    if (primary < 0 || (share[primary] && (!share[k] || later))) primary = k;
  }
  if (primary < 0) return;
  handed[primary] = true;
  int change = first_change(m, s->op, op->inputs.data[primary], bstep);
  for (int k = 0; k < n; k++)
    handed[k] |= k != primary && share[k] && producer_step(m, op, k, bstep) < change;
}

static void create_buffers(Module *m, StepKind kind) {
  Graph *g = &m->graph;
  StepPlan *p = &m->plan.step[kind];
  const Timeline t = timeline(m, kind);
  const int *bstep = t.backward;
  int n = g->ops.len;
  for (int i = 0; i < n; i++) {
    Op *op = &g->ops.data[i];
    OpBuffers *ob = &op->buf[kind];
    const Value *v = &g->values.data[op->output];
    bool scalar = v->shape.rank == 0;
    OpRole role = op_info[op->kind].role;
    bool external = role == ROLE_IMAGES || role == ROLE_LABELS; /* written before forward */
    bool metric = role == ROLE_LOSS || role == ROLE_METRIC;     /* read after it */
    int64_t elems = scalar ? 1 : layout_floats_per_image(v->shape, v->layout);
    ob->out = add_buffer(m, p, BUF_ACT, v->name, i, elems, !scalar, v->dtype, external ? 0 : i,
                         metric ? INT_MAX : i);
    if (t.recompute[i] >= 0)
      ob->recomputed = add_buffer(m, p, BUF_RECOMPUTED, arena_printf(&m->arena, "%s'", v->name), i,
                                  elems, !scalar, v->dtype, t.recompute[i], t.recompute[i]);
    Buffer *b = read_in_backward(p, ob);
    if ((op_info[op->kind].bwd_reads & BWD_OUT) && bstep[i] >= 0)
      b->last = extend(b->last, bstep[i]);
    if (backward_epilogue(op) && bstep[i] >= 0)
      b->last = extend(b->last, bstep[i] - 1); /* its backward */
    SavedSpec saved[2];
    op->nsaved = op_saved(g, op, saved);
    for (int k = 0; k < op->nsaved; k++)
      ob->saved[k] = add_buffer(
          m, p, BUF_SAVED, arena_printf(&m->arena, "%s.%s", op->name, saved[k].what), i,
          saved[k].elems, saved[k].per_image, saved[k].dtype, i, bstep[i] >= 0 ? bstep[i] : i);
  }
  /* inputs: forward consumers, recomputations, and backward steps that read their inputs */
  for (int i = 0; i < n; i++) {
    const Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++) {
      const OpBuffers *in = &g->ops.data[g->values.data[op->inputs.data[j]].producer].buf[kind];
      Buffer *b = &p->buffers.data[in->out];
      b->last = extend(b->last, i);
      if (t.recompute[i] >= 0) {
        b = read_in_backward(p, in);
        b->last = extend(b->last, t.recompute[i]);
      }
      if ((op_info[op->kind].bwd_reads & BWD_IN) && bstep[i] >= 0) {
        b = read_in_backward(p, in);
        b->last = extend(b->last, bstep[i]);
      }
    }
  }
  /* evaluation: the scores a loss reads stay until the step ends, where --infer reads them */
  for (int i = 0; kind == STEP_EVAL && i < n; i++) {
    const Op *op = &g->ops.data[i];
    if (op_info[op->kind].role != ROLE_LOSS) continue;
    const Op *scores = &g->ops.data[g->values.data[op->inputs.data[0]].producer];
    p->buffers.data[scores->buf[kind].out].last = INT_MAX;
  }
  /* gradients: from the first backward step that writes them to the producer's backward */
  for (int j = 0; kind == STEP_TRAIN && j < m->schedule.backward.len; j++) {
    const BackwardStep *s = &m->schedule.backward.data[j];
    const Op *op = &g->ops.data[s->op];
    bool handed[op->inputs.len + 1];
    handed_inputs(m, s, bstep, handed);
    for (int k = 0; k < op->inputs.len; k++) {
      if (s->input_grad.data[k] != GRAD_WRITE) continue;
      const Value *v = &g->values.data[op->inputs.data[k]];
      Op *producer = &g->ops.data[v->producer];
      int written = bstep[s->op], last = bstep[v->producer] >= 0 ? bstep[v->producer] : written;
      if (handed[k]) {
        Buffer *b = &p->buffers.data[op->buf[kind].grad];
        b->name = arena_printf(&m->arena, "%s=d(%s)", b->name, v->name);
        b->last = extend(b->last, last);
        producer->buf[kind].grad = op->buf[kind].grad;
        continue;
      }
      producer->buf[kind].grad =
          add_buffer(m, p, BUF_GRAD, arena_printf(&m->arena, "d(%s)", v->name), v->producer,
                     layout_floats_per_image(v->shape, v->layout), true, DT_F32, written, last);
    }
  }
}

static int64_t align(int64_t x) { return (x + ALIGN_WORDS - 1) / ALIGN_WORDS * ALIGN_WORDS; }

/* The orders greedy placement tries, each with the others as tie-breakers; the smallest region
 * wins. By size alone, a long-lived small buffer (the input images) can land above a gap that a
 * short-lived large one left; placing long-lived or large-and-long-lived buffers first avoids
 * that on other graphs. */
static int64_t lifetime(const Buffer *b) { return (int64_t)b->last - b->first + 1; }
static int64_t footprint(const Buffer *b) { return b->elems * lifetime(b); }

static int descending(int64_t x, int64_t y) { return x < y ? 1 : x > y ? -1 : 0; }

static int tie_break(const Buffer *x, const Buffer *y) {
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return x < y ? -1 : x > y;
}

static int by_size(const void *a, const void *b) {
  const Buffer *x = *(Buffer *const *)a, *y = *(Buffer *const *)b;
  int d = descending(x->elems, y->elems);
  return d ? d : tie_break(x, y);
}

/* Descending by a key, then by size. */
#define ORDER_BY(name, key)                                                                        \
  static int name(const void *a, const void *b) {                                                  \
    int d = descending(key(*(Buffer *const *)a), key(*(Buffer *const *)b));                        \
    return d ? d : by_size(a, b);                                                                  \
  }
static int64_t late_start(const Buffer *b) { return -(int64_t)b->first; }
static int64_t end(const Buffer *b) { return b->last; }
ORDER_BY(by_lifetime, lifetime)
ORDER_BY(by_footprint, footprint)
ORDER_BY(by_start, late_start)
ORDER_BY(by_end, end)

static int by_offset(const void *a, const void *b) {
  const Buffer *x = *(Buffer *const *)a, *y = *(Buffer *const *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static bool overlap_in_time(const Buffer *a, const Buffer *b) {
  return a->first <= b->last && b->first <= a->last;
}

/* Places the buffers in `order`, each at the lowest offset where it overlaps no buffer placed
 * before it that is live at the same time; returns the region's size. */
static int64_t place_in_order(Buffer **order, int count, Buffer **live) {
  int64_t size = 0;
  for (int i = 0; i < count; i++) {
    Buffer *b = order[i];
    int nlive = 0;
    for (int k = 0; k < i; k++)
      if (overlap_in_time(order[k], b)) live[nlive++] = order[k];
    qsort(live, (size_t)nlive, sizeof *live, by_offset);
    int64_t offset = 0, words = align(b->elems);
    for (int k = 0; k < nlive; k++) {
      if (live[k]->offset >= offset + words) break; /* fits in the gap before live[k] */
      int64_t end = live[k]->offset + align(live[k]->elems);
      if (end > offset) offset = end;
    }
    b->offset = offset;
    if (offset + words > size) size = offset + words;
  }
  return size;
}

/* Placement is quadratic in the buffers; past this many (no real network comes near: ResNet-50
 * has about 600) only the first order is tried, so that a generated graph of tens of thousands
 * of layers still compiles in seconds. */
enum { ORDERS_TRIED_UP_TO = 4096 };

/* Places the buffers of one region (per-image or fixed) in the best of the greedy orders;
 * returns the region's size. */
static int64_t place_region(Module *m, StepPlan *p, bool per_image) {
  int (*const orders[])(const void *, const void *) = {by_size, by_lifetime, by_footprint, by_start,
                                                       by_end};
  int norders = (int)(sizeof orders / sizeof orders[0]);
  if (p->buffers.len > ORDERS_TRIED_UP_TO) norders = 1;
  int total = p->buffers.len, count = 0;
  Buffer **order = arena_alloc(&m->arena, sizeof *order * (size_t)(total + 1));
  Buffer **live = arena_alloc(&m->arena, sizeof *live * (size_t)(total + 1));
  for (int i = 0; i < total; i++)
    if (p->buffers.data[i].per_image == per_image) order[count++] = &p->buffers.data[i];
  int best = 0;
  int64_t best_size = INT64_MAX;
  for (int k = 0; k < norders; k++) {
    qsort(order, (size_t)count, sizeof *order, orders[k]);
    int64_t size = place_in_order(order, count, live);
    if (size < best_size) best = k, best_size = size;
  }
  if (best != norders - 1) { /* the offsets are the last order's: place the best again */
    qsort(order, (size_t)count, sizeof *order, orders[best]);
    place_in_order(order, count, live);
  }
  return best_size;
}

static void place_parameters(Module *m) {
  Graph *g = &m->graph;
  char *placed = arena_alloc(&m->arena, (size_t)g->ops.len + 1);
  int64_t offset = 0;
  /* backward order first, then ops whose parameters get no gradient */
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < (pass ? g->ops.len : m->schedule.update_ops.len); k++) {
      int i = pass ? k : m->schedule.update_ops.data[k];
      if (placed[i]) continue;
      placed[i] = 1;
      Op *op = &g->ops.data[i];
      for (int p = 0; p < op->params.len; p++) {
        op->params.data[p].offset = offset;
        offset += shape_elems(op->params.data[p].shape);
      }
    }
  m->plan.param_words = offset;
  int64_t state = 0;
  for (int i = 0; i < g->ops.len; i++) {
    Op *op = &g->ops.data[i];
    op->state_words = op_state_words(g, op);
    op->state_offset = state;
    state += op->state_words;
  }
  m->plan.state_words = state;
}

static void plan_step(Module *m, StepKind kind) {
  StepPlan *p = &m->plan.step[kind];
  create_buffers(m, kind);
  for (int i = 0; i < p->buffers.len; i++)
    if (p->buffers.data[i].per_image) p->naive_image_words += align(p->buffers.data[i].elems);
  p->image_words = place_region(m, p, true);
  p->fixed_words = place_region(m, p, false);
}

int64_t memplan_training_floats(Module *m) {
  pass_memplan(m);
  const StepPlan *p = &m->plan.step[STEP_TRAIN];
  return p->image_words * m->train.batch + p->fixed_words;
}

bool pass_memplan(Module *m) {
  m->plan = (MemPlan){0};
  for (int i = 0; i < m->graph.ops.len; i++) {
    Op *op = &m->graph.ops.data[i];
    for (int k = 0; k < STEP_KINDS; k++) op->buf[k] = (OpBuffers){-1, -1, {-1, -1}, -1};
    op->nsaved = 0;
  }
  for (int k = 0; k < STEP_KINDS; k++) plan_step(m, (StepKind)k);
  place_parameters(m);
  return true;
}
