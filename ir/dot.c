/* Graphviz output (--emit=dot). A network built from blocks is drawn at its top level, each
 * block instance one node (its block and what it outputs), and each block's body once, beside
 * it, as a cluster (blocks nested in it as clusters within), from the block's first instance:
 * ResNet-50 is about 25 ranks tall instead of a strip of 170. A network without blocks is drawn
 * op by op. A node says what shapes its layer (kernel, stride, padding, groups, outputs); an
 * edge, the tensor it carries. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static const char *node_color(OpKind k) {
  const OpInfo *info = &op_info[k];
  if (info->role == ROLE_IMAGES || info->role == ROLE_LABELS) return "lightgrey";
  if (info->role == ROLE_LOSS || info->role == ROLE_METRIC) return "salmon";
  switch (info->family) {
  case FAMILY_CONV:
  case FAMILY_DECONV: return "lightblue";
  case FAMILY_FC: return "lightskyblue";
  case FAMILY_POOL: return "palegreen";
  case FAMILY_JOIN:
  case FAMILY_MUL: return "khaki";
  case FAMILY_NONE:
  case FAMILY_ACTIVATION:
  case FAMILY_BATCHNORM:
  case FAMILY_LRN:
  case FAMILY_UPSAMPLE:
  case FAMILY_SOFTMAX:
  case FAMILY_DROPOUT:
  case FAMILY_LOSS:
  case FAMILY_ACCURACY:
  case FAMILY_TRANSFORM: return "white";
  }
  return "white";
}

/* "3x3 /2 pad 1, 32 groups, 64 outputs": what shapes a conv, pool or fc; "" for others. */
static const char *layer_details(const Op *op) {
  static char text[128];
  const OpAttrs *a = &op->attr;
  text[0] = 0;
  switch (op_info[op->kind].family) {
  case FAMILY_CONV:
  case FAMILY_DECONV:
    snprintf(text, sizeof text, "%lldx%lld /%lld pad %lld%s%.0lld%s, %lld outputs",
             (long long)a->kernel[0], (long long)a->kernel[1], (long long)a->stride[0],
             (long long)a->pad[0], a->groups > 1 ? ", " : "",
             (long long)(a->groups > 1 ? a->groups : 0), a->groups > 1 ? " groups" : "",
             (long long)a->outputs);
    break;
  case FAMILY_POOL:
    if (a->global)
      snprintf(text, sizeof text, "global %s", a->pool == POOL_MAX ? "max" : "average");
    else
      snprintf(text, sizeof text, "%s %lldx%lld /%lld pad %lld",
               a->pool == POOL_MAX ? "max" : "average", (long long)a->kernel[0],
               (long long)a->kernel[1], (long long)a->stride[0], (long long)a->pad[0]);
    break;
  case FAMILY_FC: snprintf(text, sizeof text, "%lld outputs", (long long)a->outputs); break;
  case FAMILY_NONE:
  case FAMILY_ACTIVATION:
  case FAMILY_BATCHNORM:
  case FAMILY_LRN:
  case FAMILY_JOIN:
  case FAMILY_MUL:
  case FAMILY_UPSAMPLE:
  case FAMILY_SOFTMAX:
  case FAMILY_DROPOUT:
  case FAMILY_LOSS:
  case FAMILY_ACCURACY:
  case FAMILY_TRANSFORM: break;
  }
  return text;
}

static void op_node(FILE *f, const Module *m, const char *id, const Op *op, const char *name) {
  const char *details = layer_details(op);
  fprintf(f, "  %s [label=\"%s\\n%s%s%s", id, name, op_info[op->kind].name, *details ? " " : "",
          details);
  if (module_has(m, STAGE_SHAPED))
    fprintf(f, "\\n%s", shape_str(m->graph.values.data[op->output].shape));
  fprintf(f, "\", fillcolor=%s];\n", node_color(op->kind));
}

static void edge(FILE *f, const Module *m, const char *from, const char *to, int value) {
  fprintf(f, "  %s -> %s", from, to);
  if (module_has(m, STAGE_SHAPED))
    fprintf(f, " [label=\"%s\", fontsize=9]", shape_str(m->graph.values.data[value].shape));
  fputs(";\n", f);
}

static const CallSite *outermost(const CallSite *s) {
  while (s && s->outer) s = s->outer;
  return s;
}

/* Top-level groups: an op outside every block is its own; a block instance's ops are one. */
typedef struct Groups {
  int *of_op;                /* group of each op */
  const CallSite **instance; /* per group: the outermost instance, or NULL (a single op) */
  int *first_op, *last_op;   /* per group */
  int count;
} Groups;

static void group_ops(const Graph *g, Groups *gr) {
  int n = g->ops.len;
  gr->of_op = xcalloc((size_t)n + 1, sizeof(int), "the graph drawing");
  gr->instance = xcalloc((size_t)n + 1, sizeof *gr->instance, "the graph drawing");
  gr->first_op = xcalloc((size_t)n + 1, sizeof(int), "the graph drawing");
  gr->last_op = xcalloc((size_t)n + 1, sizeof(int), "the graph drawing");
  gr->count = 0;
  for (int i = 0; i < n; i++) {
    const CallSite *s = outermost(g->ops.data[i].site);
    int k = -1;
    for (int j = gr->count - 1; s && j >= 0 && k < 0; j--)
      if (gr->instance[j] == s) k = j;
    if (k < 0) k = gr->count++, gr->instance[k] = s, gr->first_op[k] = i;
    gr->of_op[i] = k;
    gr->last_op[k] = i;
  }
}

static void free_groups(Groups *gr) {
  free(gr->of_op), free(gr->instance), free(gr->first_op), free(gr->last_op);
}

/* The top level: single ops as they are, each instance one node. */
static void draw_top_level(FILE *f, const Module *m, const Groups *gr) {
  const Graph *g = &m->graph;
  char id[32], from[32];
  for (int k = 0; k < gr->count; k++) {
    snprintf(id, sizeof id, "g%d", k);
    const Op *last = &g->ops.data[gr->last_op[k]];
    if (!gr->instance[k]) {
      op_node(f, m, id, last, last->name);
      continue;
    }
    fprintf(f, "  %s [label=\"%s\\n%s", id, gr->instance[k]->instance, gr->instance[k]->block);
    if (module_has(m, STAGE_SHAPED))
      fprintf(f, "\\n%s", shape_str(g->values.data[last->output].shape));
    fputs("\", fillcolor=lightyellow, penwidth=2];\n", f);
  }
  /* an instance reads a value once however many of its ops read it (an instance's ops are
   * consecutive, so remembering the last group each value was drawn into suffices) */
  int *drawn_into = xcalloc((size_t)g->values.len + 1, sizeof(int), "the graph drawing");
  for (int v = 0; v < g->values.len; v++) drawn_into[v] = -1;
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++) {
      int v = op->inputs.data[j], from_group = gr->of_op[g->values.data[v].producer];
      if (from_group == gr->of_op[i] || drawn_into[v] == gr->of_op[i]) continue;
      drawn_into[v] = gr->of_op[i];
      snprintf(from, sizeof from, "g%d", from_group);
      snprintf(id, sizeof id, "g%d", gr->of_op[i]);
      edge(f, m, from, id, v);
    }
  }
  free(drawn_into);
}

/* The ops of `site` and, as clusters within, of the instances nested in it (ops first..last). */
static void draw_cluster(FILE *f, const Module *m, const CallSite *site, int first, int last,
                         int body, size_t prefix, int *clusters) {
  const Graph *g = &m->graph;
  fprintf(f, "  subgraph cluster_%d {\n  label=\"%s: %s\";\n", (*clusters)++, site->instance,
          site->block);
  char id[48];
  for (int i = first; i <= last; i++) {
    const Op *op = &g->ops.data[i];
    if (op->site == site) {
      snprintf(id, sizeof id, "b%d_%d", body, i);
      op_node(f, m, id, op, op->name + (strlen(op->name) > prefix ? prefix : 0));
    }
  }
  /* each directly nested instance once, where its first op is */
  for (int i = first; i <= last; i++) {
    const CallSite *s = g->ops.data[i].site;
    while (s && s->outer != site) s = s->outer;
    if (!s || s == site) continue;
    bool earlier = false;
    for (int e = first; e < i && !earlier; e++) {
      const CallSite *t = g->ops.data[e].site;
      while (t && t->outer != site) t = t->outer;
      earlier = t == s;
    }
    if (!earlier) draw_cluster(f, m, s, i, last, body, prefix, clusters);
  }
  fputs("  }\n", f);
}

/* Each block's body once, from its first instance; what enters it from outside, an "input". */
static void draw_bodies(FILE *f, const Module *m, const Groups *gr) {
  const Graph *g = &m->graph;
  int clusters = 0;
  for (int k = 0; k < gr->count; k++) {
    const CallSite *s = gr->instance[k];
    bool drawn = false;
    for (int e = 0; e < k && !drawn; e++)
      drawn = gr->instance[e] && !strcmp(gr->instance[e]->block, s ? s->block : "");
    if (!s || drawn) continue;
    int first = gr->first_op[k], last = gr->last_op[k];
    draw_cluster(f, m, s, first, last, k, strlen(s->instance) + 1, &clusters);
    fprintf(f, "  b%d_in [label=\"input\", shape=plaintext, style=\"\"];\n", k);
    char from[48], to[48];
    for (int i = first; i <= last; i++) {
      const Op *op = &g->ops.data[i];
      if (gr->of_op[i] != k) continue;
      for (int j = 0; j < op->inputs.len; j++) {
        int v = op->inputs.data[j], p = g->values.data[v].producer;
        if (gr->of_op[p] == k)
          snprintf(from, sizeof from, "b%d_%d", k, p);
        else
          snprintf(from, sizeof from, "b%d_in", k);
        snprintf(to, sizeof to, "b%d_%d", k, i);
        edge(f, m, from, to, v);
      }
    }
  }
}

void ir_print_dot(FILE *f, const Module *m) {
  fprintf(f,
          "digraph \"%s\" {\n  rankdir=TB;\n  ranksep=0.3;\n  node [shape=box, "
          "style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n  "
          "edge [fontname=\"Helvetica\"];\n",
          m->name ? m->name : "network");
  Groups gr;
  group_ops(&m->graph, &gr);
  draw_top_level(f, m, &gr);
  draw_bodies(f, m, &gr);
  free_groups(&gr);
  fputs("}\n", f);
}
