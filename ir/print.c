/* The IR text form (docs/ir.md): the graph, one op per line, then the settings and the
 * training schedule. Stable: tests compare it byte for byte. */
#include <limits.h>
#include <stdlib.h>

#include "ir.h"
#include "target.h"

static void print_attrs(FILE *f, const Op *op) {
  for (const FieldSpec *s = op_info[op->kind].fields; s->key; s++)
    if (s->shown || !field_is_default(s, &op->attr)) {
      fputc(' ', f);
      field_print(f, s, &op->attr);
    }
}

static void print_param(FILE *f, const Param *p) {
  fprintf(f, "%s %s", param_role_name(p->role), shape_str(p->shape));
  if (p->lr_mult != 1) fprintf(f, " lr*%g", p->lr_mult);
  if (p->decay_mult != 1) fprintf(f, " decay*%g", p->decay_mult);
}

/* An epilogue's backward an op runs for its input's producer: `carries=relu(slope=0.1)`. */
static void print_carried(FILE *f, const char *key, const Epilogue *e) {
  if (!e->on) return;
  fprintf(f, "%s%s", key, op_info[e->kind].name);
  if (e->slope != 0) fprintf(f, "(slope=%g)", e->slope);
}

static void print_op(FILE *f, const Module *m, const Op *op) {
  const Graph *g = &m->graph;
  fprintf(f, "  %s = %s(", op->name, op_info[op->kind].name);
  for (int j = 0; j < op->inputs.len; j++)
    fprintf(f, "%s%s", j ? ", " : "", g->values.data[op->inputs.data[j]].name);
  fputc(')', f);
  print_attrs(f, op);
  print_carried(f, " carries=", &op->pool_carries);
  print_carried(f, " masks=", &op->dx_carries);
  if (op->epilogue.on) {
    fprintf(f, " epilogue=%s", op_info[op->epilogue.kind].name);
    if (op->epilogue.slope != 0) fprintf(f, "(slope=%g)", op->epilogue.slope);
  }
  const Value *out = &g->values.data[op->output];
  if (!module_has(m, STAGE_SHAPED)) {
    fputs(" -> ?\n", f);
    return;
  }
  fprintf(f, " -> %s %s", dtype_name(out->dtype), shape_str(out->shape));
  if (out->shape.rank == 4) fprintf(f, " %s", layout_name(out->layout));
  if (op->kind == OP_CONV && op->conv.costed && module_has(m, STAGE_LAID_OUT)) {
    char names[CONV_COMPUTATIONS][PLAN_NAME_MAX];
    fprintf(f, " plan forward=%s wgrad=%s dgrad=%s", conv_plan_text(m, op, CONV_FORWARD, names[0]),
            conv_plan_text(m, op, CONV_WGRAD, names[1]),
            conv_plan_text(m, op, CONV_DGRAD, names[2]));
    if (op->conv.x_planar) fputs(" reads=bnrc", f);
  }
  if (op->params.len) {
    fprintf(f, " params %lld (", (long long)op_param_count(op));
    for (int p = 0; p < op->params.len; p++) {
      if (p) fputs(", ", f);
      print_param(f, &op->params.data[p]);
    }
    fputc(')', f);
  }
  fputc('\n', f);
}

static void print_section(FILE *f, const char *name, const FieldSpec *specs, const void *obj) {
  fprintf(f, "%s {", name);
  for (const FieldSpec *s = specs; s->key; s++) {
    fputc(' ', f);
    field_print(f, s, obj);
  }
  fputs(" }\n", f);
}

static const char *grad_mode_text(GradMode g) { return g == GRAD_WRITE ? "=" : "+="; }

static void print_schedule(FILE *f, const Module *m) {
  const Graph *g = &m->graph;
  const Schedule *s = &m->schedule;
  fputs("steps {\n  forward", f);
  for (int i = 0; i < s->forward.len; i++) fprintf(f, " %s", g->ops.data[s->forward.data[i]].name);
  fputc('\n', f);
  for (int i = 0; i < s->backward.len; i++) {
    const BackwardStep *b = &s->backward.data[i];
    const Op *op = &g->ops.data[b->op];
    fprintf(f, "  backward %s:", op->name);
    for (int j = 0; j < b->recompute.len; j++)
      fprintf(f, " recompute %s;", g->ops.data[b->recompute.data[j]].name);
    for (int j = 0; j < b->input_grad.len; j++)
      if (b->input_grad.data[j] != GRAD_NONE)
        fprintf(f, " d(%s) %s", g->values.data[op->inputs.data[j]].name,
                grad_mode_text(b->input_grad.data[j]));
    if (b->param_grads) fputs(" d(params) =", f);
    fputc('\n', f);
  }
  fputs("  update", f);
  for (int i = 0; i < s->update_ops.len; i++)
    fprintf(f, " %s", g->ops.data[s->update_ops.data[i]].name);
  if (module_has(m, STAGE_FOLDED))
    fputs(s->gradients_in_momentum ? "\n  gradients into momentum"
                                   : "\n  gradients in their own pool",
          f);
  fputs("\n}\n", f);
}

static const char *const buffer_kinds[] = {"act", "grad", "saved", "recomputed"};

static const char *const step_names[] = {"train", "eval"};

static void print_step_plan(FILE *f, const StepPlan *p, const char *name) {
  fprintf(f, "  %s: per-image %lld words (without reuse %lld), fixed %lld words\n", name,
          (long long)p->image_words, (long long)p->naive_image_words, (long long)p->fixed_words);
  for (int i = 0; i < p->buffers.len; i++) {
    const Buffer *b = &p->buffers.data[i];
    fprintf(f, "  %s %s %s @ %lld +%lld%s %s [%d, ", name, buffer_kinds[b->kind], b->name,
            (long long)b->offset, (long long)b->elems, b->per_image ? "/image" : "",
            dtype_name(b->dtype), b->first);
    if (b->last == INT_MAX)
      fputs("end]\n", f);
    else
      fprintf(f, "%d]\n", b->last);
  }
}

static void print_plan(FILE *f, const Module *m) {
  const MemPlan *p = &m->plan;
  fprintf(f, "memory {\n  parameters %lld words, state %lld words\n", (long long)p->param_words,
          (long long)p->state_words);
  for (int k = 0; k < STEP_KINDS; k++) print_step_plan(f, &p->step[k], step_names[k]);
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    for (int k = 0; k < op->params.len; k++)
      fprintf(f, "  param %s @ %lld +%lld\n", op->params.data[k].name,
              (long long)op->params.data[k].offset,
              (long long)shape_elems(op->params.data[k].shape));
    if (op->state_words)
      fprintf(f, "  state %s @ %lld +%lld\n", op->name, (long long)op->state_offset,
              (long long)op->state_words);
  }
  fputs("}\n", f);
}

static void print_fusion(FILE *f, const Module *m) {
  const Fusion *fu = &m->fusion;
  fputs("buckets {\n  threshold ", f);
  if (fu->threshold == INT64_MAX)
    fputs("inf", f);
  else
    fprintf(f, "%lld bytes", (long long)fu->threshold);
  fprintf(f, ", %d bucket%s\n", fu->buckets.len, fu->buckets.len == 1 ? "" : "s");
  /* parameters in pool order, to name each bucket's tensors */
  int count = 0;
  for (int k = 0; k < m->schedule.update_ops.len; k++)
    count += m->graph.ops.data[m->schedule.update_ops.data[k]].params.len;
  const Param **order = xcalloc((size_t)count + 1, sizeof *order, "the IR text");
  int n = 0;
  for (int k = 0; k < m->schedule.update_ops.len; k++) {
    const Op *op = &m->graph.ops.data[m->schedule.update_ops.data[k]];
    for (int p = 0; p < op->params.len; p++) order[n++] = &op->params.data[p];
  }
  for (int b = 0; b < fu->buckets.len; b++) {
    const Bucket *bk = &fu->buckets.data[b];
    const BackwardStep *ready = &m->schedule.backward.data[bk->ready_step];
    fprintf(f, "  bucket %d @ %lld +%lld (%lld bytes) ready after backward %s:", b,
            (long long)bk->offset, (long long)bk->words, (long long)bk->words * 4,
            m->graph.ops.data[ready->op].name);
    for (int p = 0; p < bk->nparams; p++) fprintf(f, " %s", order[bk->first_param + p]->name);
    fputc('\n', f);
  }
  free(order);
  fputs("}\n", f);
}

void ir_print(FILE *f, const Module *m) {
  fprintf(f, "network %s {\n", m->name ? m->name : "?");
  for (int i = 0; i < m->graph.ops.len; i++) print_op(f, m, &m->graph.ops.data[i]);
  fputs("}\n", f);
  print_section(f, "train", train_fields, &m->train);
  print_section(f, "data", data_fields, &m->data);
  if (module_has(m, STAGE_SCHEDULED)) print_schedule(f, m);
  if (module_has(m, STAGE_PLANNED)) print_plan(f, m);
  if (module_has(m, STAGE_CUT)) print_fusion(f, m);
}

void print_number(FILE *f, double v) {
  char text[40];
  for (int digits = 6; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*g", digits, v);
    if (strtod(text, NULL) == v) break;
  }
  fputs(text, f);
}
