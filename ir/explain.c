/* --explain: for every convolution, the candidate plans of its three computations with their
 * costs (measured or modelled), its cost with its tensors in each layout, and what the layout
 * pass chose and why; then the transforms it inserted. */
#include <math.h>

#include "target.h"

static void print_cost(FILE *f, double seconds, bool tuned) {
  if (isinf(seconds))
    fprintf(f, "%16s", "-");
  else
    fprintf(f, "%10.3f ms %s", 1e3 * seconds, tuned ? "(t)" : "(m)");
}

static const char *plans_text(const Module *m, const Op *op) {
  static char buf[160];
  char names[CONV_COMPUTATIONS][PLAN_NAME_MAX];
  snprintf(buf, sizeof buf, "forward %s, wgrad %s, dgrad %s",
           conv_plan_text(m, op, CONV_FORWARD, names[0]),
           conv_plan_text(m, op, CONV_WGRAD, names[1]),
           conv_plan_text(m, op, CONV_DGRAD, names[2]));
  return buf;
}

/* Why the layout pass chose `chosen`: the cheapest layout for the layer alone, or the one
 * that saves transforms with its neighbours (naming the layout that would be cheaper alone). */
static const char *reason(const Module *m, const Op *op, Layout chosen) {
  const ConvChoice *ch = &op->conv;
  static char buf[160];
  if (m->options.conv == CONV_REFERENCE) return "the reference plan set (--conv)";
  if (m->options.conv != CONV_AUTO) return "forced by --conv";
  Layout cheapest = chosen;
  for (int l = 0; l < LAYOUT_COUNT; l++)
    if (ch->in_layout[l] < ch->in_layout[cheapest]) cheapest = (Layout)l;
  if (cheapest == chosen) return "the cheapest layout for this layer";
  snprintf(buf, sizeof buf,
           "%s alone would save %.3f ms here, but costs more in transforms with its neighbours",
           layout_name(cheapest), 1e3 * (ch->in_layout[chosen] - ch->in_layout[cheapest]));
  return buf;
}

static void explain_conv(FILE *f, const Module *m, const Op *op) {
  const ConvChoice *ch = &op->conv;
  const Graph *g = &m->graph;
  Layout chosen = g->values.data[op->output].layout;
  fprintf(f, "%s: conv %s -> %s, batch %lld\n", op->name,
          shape_str(g->values.data[op->inputs.data[0]].shape),
          shape_str(g->values.data[op->output].shape), (long long)m->train.batch);
  for (int p = 0; p < PLAN_COUNT; p++)
    if (ch->illegal[p])
      fprintf(f, "  %s plan illegal: %s\n", conv_plan_name((ConvPlan)p), ch->illegal[p]);
  fprintf(f, "  %-8s", "");
  for (int p = 0; p < PLAN_COUNT; p++) fprintf(f, " %16s", conv_plan_name((ConvPlan)p));
  fputc('\n', f);
  for (int c = 0; c < CONV_COMPUTATIONS; c++) {
    fprintf(f, "  %-8s ", conv_computation_name((ConvComputation)c));
    for (int p = 0; p < PLAN_COUNT; p++) {
      print_cost(f, ch->cost[c][p], ch->tuned[c][p]);
      fputc(' ', f);
    }
    fputc('\n', f);
  }
  fprintf(f, "  %-8s ", "backward");
  for (int p = 0; p < PLAN_COUNT; p++) {
    print_cost(f, ch->joint[p], ch->joint_tuned[p]);
    fputc(' ', f);
  }
  fputs(" (wgrad and dgrad in one call)\n", f);
  for (int l = 0; l < LAYOUT_COUNT; l++) {
    fprintf(f, "  in %s: ", layout_name((Layout)l));
    if (isinf(ch->in_layout[l]))
      fputs("-\n", f);
    else
      fprintf(f, "%.3f ms\n", 1e3 * ch->in_layout[l]);
  }
  fprintf(f, "  chosen: %s (%s): %s\n", layout_name(chosen), plans_text(m, op),
          reason(m, op, chosen));
}

void ir_print_explain(FILE *f, const Module *m) {
  if (!module_has(m, STAGE_LAID_OUT)) return;
  const Graph *g = &m->graph;
  const Target *t = m->options.target;
  fprintf(
      f,
      "# convolution plans on target '%s'; costs per training step: (m) model, (t) tuning file\n",
      t->name);
  if (t->kernel_isa)
    fprintf(
        f, "# kernels: %s on this machine (a program chooses when it starts; SWN_ISA narrows it)\n",
        t->kernel_isa());
  int transforms = 0;
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    if (op->kind == OP_CONV && op->conv.costed) explain_conv(f, m, op);
    transforms += op->kind == OP_TRANSFORM;
  }
  const LayoutSearch *ls = &m->layout_search;
  fprintf(f, "layouts: %s, at most %d states a step\n",
          ls->beam ? "the cheapest states kept (a beam): valid, not proven optimal" : "optimal",
          ls->most_states);
  fprintf(f, "transforms: %d\n", transforms);
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    if (op->kind != OP_TRANSFORM) continue;
    Shape s = g->values.data[op->output].shape;
    Layout from = g->values.data[op->inputs.data[0]].layout, to = (Layout)op->attr.to;
    fprintf(f, "  %s (%s, %s to %s): %.3f ms forward\n", op->name, shape_str(s), layout_name(from),
            layout_name(to), 1e3 * module_transform_cost(m, s, from, to));
  }
}
