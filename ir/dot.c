/* Graphviz output (--emit=dot): one node per op, one edge per tensor use, labelled with
 * the tensor's shape. */
#include "ir.h"

static const char *node_color(OpKind k) {
  const OpInfo *info = &op_info[k];
  if (info->role == ROLE_IMAGES || info->role == ROLE_LABELS) return "lightgrey";
  if (info->role == ROLE_LOSS || info->role == ROLE_METRIC) return "salmon";
  switch (info->family) {
  case FAMILY_CONV: return "lightblue";
  case FAMILY_FC: return "lightskyblue";
  case FAMILY_POOL: return "palegreen";
  case FAMILY_JOIN: return "khaki";
  case FAMILY_NONE:
  case FAMILY_ACTIVATION:
  case FAMILY_BATCHNORM:
  case FAMILY_LRN:
  case FAMILY_DROPOUT:
  case FAMILY_LOSS:
  case FAMILY_ACCURACY:
  case FAMILY_TRANSFORM: return "white";
  }
  return "white";
}

void ir_print_dot(FILE *f, const Module *m) {
  const Graph *g = &m->graph;
  fprintf(f,
          "digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
          "fontname=\"Helvetica\"];\n",
          m->name ? m->name : "network");
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    fprintf(f, "  n%d [label=\"%s\\n%s", i, op->name, op_info[op->kind].name);
    if (module_has(m, STAGE_SHAPED))
      fprintf(f, "\\n%s", shape_str(g->values.data[op->output].shape));
    fprintf(f, "\", fillcolor=%s];\n", node_color(op->kind));
  }
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++) {
      const Value *v = &g->values.data[op->inputs.data[j]];
      fprintf(f, "  n%d -> n%d", v->producer, i);
      if (module_has(m, STAGE_SHAPED))
        fprintf(f, " [label=\"%s\", fontsize=9]", shape_str(v->shape));
      fputs(";\n", f);
    }
  }
  fputs("}\n", f);
}
