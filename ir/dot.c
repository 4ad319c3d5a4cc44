/* Graphviz output (--emit=dot): one node per op, one edge per tensor use, labelled with
 * the tensor's shape. */
#include "ir.h"

static const char *node_color(OpKind k) {
  switch (k) {
  case OP_CONV: return "lightblue";
  case OP_FC: return "lightskyblue";
  case OP_POOL: return "palegreen";
  case OP_INPUT:
  case OP_LABEL: return "lightgrey";
  case OP_SOFTMAX_LOSS:
  case OP_ACCURACY: return "salmon";
  case OP_CONCAT:
  case OP_ADD: return "khaki";
  default: return "white";
  }
}

void ir_print_dot(FILE *f, const Module *m) {
  const Graph *g = &m->graph;
  fprintf(f, "digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n",
          m->name ? m->name : "network");
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    fprintf(f, "  n%d [label=\"%s\\n%s", i, op->name, op_info[op->kind].name);
    if (m->shaped) fprintf(f, "\\n%s", shape_str(g->values.data[op->output].shape));
    fprintf(f, "\", fillcolor=%s];\n", node_color(op->kind));
  }
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++) {
      const Value *v = &g->values.data[op->inputs.data[j]];
      fprintf(f, "  n%d -> n%d", v->producer, i);
      if (m->shaped) fprintf(f, " [label=\"%s\", fontsize=9]", shape_str(v->shape));
      fputs(";\n", f);
    }
  }
  fputs("}\n", f);
}
