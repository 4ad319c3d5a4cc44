/* The IR verifier: invariants every pass must keep. Runs after each pass with
 * --verify-each (on in debug builds and in tests). Reports each violation as an internal error. */
#include <stdarg.h>
#include <stdlib.h>

#include "ir.h"
#include "symtab.h"

static bool fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool fail(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error((SrcLoc){0}, "verifier: %s", msg);
  return false;
}

static bool verify_op(const Module *m, int i, SymTab *names) {
  const Graph *g = &m->graph;
  const Op *op = &g->ops.data[i];
  const OpInfo *info = &op_info[op->kind];
  bool ok = true;
  if (symtab_put(names, op->name, i) >= 0) ok = fail("two ops are named '%s'", op->name);
  if (op->output < 0 || op->output >= g->values.len || g->values.data[op->output].producer != i)
    ok = fail("op '%s' has a bad output value", op->name);
  int n = op->inputs.len;
  if (n < info->min_inputs || (info->max_inputs >= 0 && n > info->max_inputs))
    ok = fail("op '%s' (%s) has a wrong number of inputs", op->name, info->name);
  for (int j = 0; j < n; j++) {
    int v = op->inputs.data[j];
    if (v < 0 || v >= g->values.len)
      ok = fail("op '%s' reads a value that does not exist", op->name);
    else if (g->values.data[v].producer >= i)
      ok = fail("op '%s' reads '%s' before it is produced (not in topological order)", op->name,
                g->values.data[v].name);
  }
  if (module_has(m, STAGE_SHAPED)) {
    const Value *out = &g->values.data[op->output];
    for (int d = 0; d < out->shape.rank; d++)
      if (out->shape.dim[d] < 1) ok = fail("value '%s' has a non-positive dimension", out->name);
    for (int p = 0; p < op->params.len; p++)
      if (shape_elems(op->params.data[p].shape) < 1)
        ok = fail("parameter '%s' is empty", op->params.data[p].name);
  }
  return ok;
}

static bool verify_schedule(const Module *m) {
  const Graph *g = &m->graph;
  const Schedule *s = &m->schedule;
  bool ok = true;
  if (s->forward.len != g->ops.len) ok = fail("the forward schedule misses ops");
  for (int i = 0; i < s->forward.len && ok; i++)
    if (s->forward.data[i] != i) ok = fail("the forward schedule is out of order");
  int prev = g->ops.len;
  char *written = xcalloc((size_t)g->values.len + 1, 1, "the verifier");
  for (int i = 0; i < s->backward.len; i++) {
    const BackwardStep *b = &s->backward.data[i];
    if (b->op < 0 || b->op >= prev) {
      ok = fail("the backward schedule is not in reverse topological order");
      break;
    }
    prev = b->op;
    const Op *op = &g->ops.data[b->op];
    if (b->input_grad.len != op->inputs.len)
      ok = fail("backward step '%s' has a wrong input count", op->name);
    for (int j = 0; j < b->input_grad.len && j < op->inputs.len; j++) {
      int v = op->inputs.data[j];
      if (b->input_grad.data[j] == GRAD_ACCUMULATE && !written[v])
        ok = fail("backward step '%s' adds to the gradient of '%s' before it is written", op->name,
                  g->values.data[v].name);
      if (b->input_grad.data[j] == GRAD_WRITE && written[v])
        ok = fail("backward step '%s' overwrites the gradient of '%s'", op->name,
                  g->values.data[v].name);
      if (b->input_grad.data[j] != GRAD_NONE) written[v] = 1;
    }
  }
  free(written);
  return ok;
}

static int64_t padded(int64_t words) { return (words + 15) / 16 * 16; }

static int by_first_step(const void *x, const void *y) {
  const Buffer *a = *(const Buffer *const *)x, *b = *(const Buffer *const *)y;
  return a->first < b->first ? -1 : a->first > b->first;
}

/* Buffers of one step alive at the same time never share memory. In order of their first
 * step, a buffer meets only those that start before it ends, so long chains of short-lived
 * buffers are checked in near-linear time. */
static bool verify_step_plan(const StepPlan *p) {
  bool ok = true;
  int n = p->buffers.len;
  const Buffer **order = xcalloc((size_t)n + 1, sizeof *order, "the verifier");
  for (int i = 0; i < n; i++) order[i] = &p->buffers.data[i];
  qsort(order, (size_t)n, sizeof *order, by_first_step);
  for (int i = 0; i < n && ok; i++) {
    const Buffer *a = order[i];
    int64_t limit = a->per_image ? p->image_words : p->fixed_words;
    if (a->offset < 0 || a->offset + a->elems > limit)
      ok = fail("buffer '%s' lies outside its region", a->name);
    for (int j = i + 1; j < n && ok && order[j]->first <= a->last; j++) {
      const Buffer *b = order[j];
      bool same_memory =
          a->offset < b->offset + padded(b->elems) && b->offset < a->offset + padded(a->elems);
      if (a->per_image == b->per_image && same_memory)
        ok = fail("buffers '%s' and '%s' are live at the same time in the same memory", a->name,
                  b->name);
    }
  }
  free(order);
  return ok;
}

/* Each step's plan is sound; parameters tile their pool exactly. */
static bool verify_plan(const Module *m) {
  const MemPlan *p = &m->plan;
  bool ok = verify_step_plan(&p->step[STEP_TRAIN]) && verify_step_plan(&p->step[STEP_EVAL]);
  int64_t covered = 0;
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    for (int k = 0; k < op->params.len; k++) {
      const Param *q = &op->params.data[k];
      covered += shape_elems(q->shape);
      if (q->offset < 0 || q->offset + shape_elems(q->shape) > p->param_words)
        ok = fail("parameter '%s' lies outside the parameter pool", q->name);
    }
  }
  if (covered != p->param_words)
    ok = fail("the parameter pool is not tiled exactly by the parameters");
  return ok;
}

/* Buckets tile the gradient pool in order; each is complete at its step; all but the last
 * reach the threshold. */
static bool verify_fusion(const Module *m) {
  const Fusion *f = &m->fusion;
  bool ok = true;
  int64_t at = 0;
  for (int b = 0; b < f->buckets.len; b++) {
    const Bucket *bk = &f->buckets.data[b];
    if (bk->offset != at || bk->words <= 0)
      ok = fail("gradient bucket %d does not continue the pool", b);
    if (bk->ready_step < 0 || bk->ready_step >= m->schedule.backward.len)
      ok = fail("gradient bucket %d has no step", b);
    if (b > 0 && bk->ready_step < f->buckets.data[b - 1].ready_step)
      ok = fail("gradient bucket %d is completed before bucket %d", b, b - 1);
    if (b + 1 < f->buckets.len && bk->words * 4 < f->threshold && f->threshold > 0)
      ok = fail("gradient bucket %d is smaller than the threshold", b);
    at += bk->words;
  }
  int64_t updated = 0;
  for (int k = 0; k < m->schedule.update_ops.len; k++)
    updated += op_param_count(&m->graph.ops.data[m->schedule.update_ops.data[k]]);
  if (at != updated)
    ok = fail("the gradient buckets cover %lld of %lld words", (long long)at, (long long)updated);
  return ok;
}

/* Every op reads its 4-D inputs in the layout it works in (its output's; (B,N,R,C) if the output
 * is not 4-D), except a transform, which reads the other, and a conv whose direct plan reads its
 * input in (B,N,R,C) (x_planar); a conv's forward plan is its layout's. */
static bool verify_layouts(const Module *m) {
  const Graph *g = &m->graph;
  bool ok = true;
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    const Value *out = &g->values.data[op->output];
    Layout works = out->shape.rank == 4 ? out->layout : LAYOUT_BNRC;
    if (out->shape.rank != 4 && out->layout != LAYOUT_BNRC)
      ok = fail("value '%s' is not 4-D but in rcnb", out->name);
    for (int j = 0; j < op->inputs.len; j++) {
      const Value *in = &g->values.data[op->inputs.data[j]];
      if (in->shape.rank != 4) continue;
      bool want_other = op->kind == OP_TRANSFORM;
      if (j == 0 && op->kind == OP_CONV && op->conv.x_planar) {
        if (in->layout != LAYOUT_BNRC || works != LAYOUT_BNRC16 ||
            op->conv.plan[CONV_FORWARD] != PLAN_DIRECT || op->conv.plan[CONV_WGRAD] != PLAN_DIRECT)
          ok = fail("conv '%s' reads '%s' as it comes but is not a direct plan on bnrc16 reading "
                    "bnrc",
                    op->name, in->name);
        continue;
      }
      if ((in->layout != works) != want_other)
        ok = fail("op '%s' works in %s but reads '%s' in %s", op->name, layout_name(works),
                  in->name, layout_name(in->layout));
    }
    if (op->kind == OP_TRANSFORM && (int)out->layout != op->attr.to)
      ok = fail("transform '%s' does not produce the layout it names", op->name);
    if (op->kind == OP_CONV && op->conv.costed &&
        conv_plan_layout(op->conv.plan[CONV_FORWARD]) != works)
      ok = fail("conv '%s' works in %s with a forward plan for the other layout", op->name,
                layout_name(works));
  }
  return ok;
}

bool ir_verify(const Module *m) {
  if (!module_has(m, STAGE_ELABORATED)) return true;
  Arena scratch = {0};
  SymTab names;
  symtab_init(&names, &scratch);
  bool ok = true;
  for (int i = 0; i < m->graph.ops.len; i++) ok &= verify_op(m, i, &names);
  for (int v = 0; v < m->graph.values.len; v++) {
    int p = m->graph.values.data[v].producer;
    if (p < 0 || p >= m->graph.ops.len || m->graph.ops.data[p].output != v)
      ok = fail("value '%s' has no producer", m->graph.values.data[v].name);
  }
  if (ok && module_has(m, STAGE_LAID_OUT))
    ok &= verify_layouts(m); /* it follows value ids: only once they are sound */
  if (module_has(m, STAGE_SCHEDULED)) ok &= verify_schedule(m);
  if (module_has(m, STAGE_PLANNED)) ok &= verify_plan(m);
  if (module_has(m, STAGE_CUT)) ok &= verify_fusion(m);
  arena_free(&scratch);
  return ok;
}
