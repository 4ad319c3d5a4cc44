/* Pass `layout`: gives every 4-D tensor a layout, (B,N,R,C) or (R,C,N,B), fixes each
 * convolution's plans, and inserts `transform` ops where a consumer works in another layout
 * than its producer gives.
 *
 * Each op gets a label, the layout it works in (its 4-D inputs and output): the target says
 * which layouts an op's kernel accepts; a convolution's forward plan follows its label, and its
 * cost in a label is the least over its backward plans, each priced with the conversions of its
 * operands if its plan's layout is not the label (conv-strategy gave the plan costs). A tensor
 * whose consumers need the layout it is not in gets one transform, shared by all of them; it
 * costs a conversion forward plus one of the gradient back (if a gradient flows). The labels
 * minimising the sum of op costs and transform costs are found exactly as a minimum s-t cut:
 * per op a node x (in the sink side: (R,C,N,B)); per tensor u two nodes r_u ("u exists in
 * (R,C,N,B)") and b_u ("u does not exist in (B,N,R,C)"), tied to the producer's and consumers'
 * labels by infinite edges; the edge b_u -> r_u costs the transform. All penalties are of the
 * "a = 0, b = 1" kind, so the energy is graph-representable and the cut is the optimum (the
 * minimal number of transforms when they are what the choice costs). Ties go to (B,N,R,C). */
#include <math.h>

#include "../ir/target.h"
#include "mincut.h"
#include "passes.h"

static const double PICOSECONDS = 1e12; /* costs as integers for the cut */

static int64_t to_units(double seconds) {
  if (!(seconds < (double)MINCUT_INFINITE / PICOSECONDS)) return MINCUT_INFINITE;
  return (int64_t)llround(seconds * PICOSECONDS);
}

static Shape value_shape(const Module *m, int v) { return m->graph.values.data[v].shape; }
static Layout other(Layout l) { return l == LAYOUT_BNRC ? LAYOUT_RCNB : LAYOUT_BNRC; }

/* A conversion of tensor v out of layout `from` and, if a gradient flows, the gradient's back. */
static double round_trip(const Module *m, int v, Layout from, bool gradient) {
  double t = module_transform_cost(m, value_shape(m, v), other(from));
  return gradient ? t + module_transform_cost(m, value_shape(m, v), from) : t;
}

/* The least cost of a convolution with its tensors in layout l; its plans in `plans`. */
static double conv_in_layout(const Module *m, const Op *op, Layout l, bool dx_needed,
                             ConvPlan plans[3]) {
  const ConvChoice *ch = &op->conv;
  ConvPlan native = l == LAYOUT_RCNB ? PLAN_IMPLICIT : PLAN_EXPLICIT;
  plans[CONV_FORWARD] = plans[CONV_WGRAD] = plans[CONV_DGRAD] = native;
  double bias = 1 + m->options.target->plan_margin; /* on all but explicit on (B,N,R,C) */
  double forward = ch->cost[CONV_FORWARD][native] * (native == PLAN_EXPLICIT ? 1 : bias);
  if (isinf(forward)) return INFINITY;
  int x = op->inputs.data[0], y = op->output;
  double best = INFINITY;
  for (int wg = 0; wg < PLAN_COUNT; wg++)
    for (int dg = 0; dg < PLAN_COUNT; dg++) {
      if (!dx_needed && dg != wg) continue;
      bool wg_converts = wg != (int)native, dg_converts = dx_needed && dg != (int)native;
      double cost = !dx_needed ? ch->cost[CONV_WGRAD][wg]
                    : wg == dg ? ch->joint[wg] /* one call computes both */
                               : ch->cost[CONV_WGRAD][wg] + ch->cost[CONV_DGRAD][dg];
      if (wg_converts || dg_converts) cost += module_transform_cost(m, value_shape(m, y), other(l));
      if (wg_converts) cost += module_transform_cost(m, value_shape(m, x), other(l));
      if (dg_converts) cost += module_transform_cost(m, value_shape(m, x), l);
      if (wg != PLAN_EXPLICIT || (dx_needed && dg != PLAN_EXPLICIT)) cost *= bias;
      if (cost < best)
        best = cost, plans[CONV_WGRAD] = (ConvPlan)wg, plans[CONV_DGRAD] = (ConvPlan)dg;
    }
  return forward + best;
}

/* The cost of op i in each layout; INFINITY where its kernel does not take it. */
static void op_costs(Module *m, int i, const char *upstream, double cost[2]) {
  Op *op = &m->graph.ops.data[i];
  bool four_d = value_shape(m, op->output).rank == 4;
  cost[LAYOUT_BNRC] = 0;
  cost[LAYOUT_RCNB] =
      four_d && m->options.target->accepts(&m->graph, op, LAYOUT_RCNB) ? 0 : INFINITY;
  if (op->kind != OP_CONV) return;
  ConvPlan plans[3];
  for (int l = 0; l < 2; l++)
    cost[l] = op->conv.in_layout[l] =
        conv_in_layout(m, op, (Layout)l, upstream[op->inputs.data[0]], plans);
}

typedef struct Nodes {
  int ops, *r, *b, source, sink, count;
} Nodes;

/* Labels every op: 0 (B,N,R,C) or 1 (R,C,N,B). */
static char *solve(Module *m, const char *upstream) {
  const Graph *g = &m->graph;
  int n = g->ops.len, nv = g->values.len;
  Nodes id = {.ops = n};
  id.r = arena_alloc(&m->arena, sizeof(int) * (size_t)(nv + 1));
  id.b = arena_alloc(&m->arena, sizeof(int) * (size_t)(nv + 1));
  id.count = n;
  for (int v = 0; v < nv; v++) {
    bool four_d = g->values.data[v].shape.rank == 4;
    id.r[v] = four_d ? id.count++ : -1;
    id.b[v] = four_d ? id.count++ : -1;
  }
  id.source = id.count++, id.sink = id.count++;
  MinCut *cut = mincut_new(id.count);
  for (int i = 0; i < n; i++) {
    double cost[2];
    op_costs(m, i, upstream, cost);
    mincut_edge(cut, id.source, i, to_units(cost[LAYOUT_RCNB]));
    mincut_edge(cut, i, id.sink, to_units(cost[LAYOUT_BNRC]));
    const Op *op = &g->ops.data[i];
    int u = op->output;
    if (id.r[u] < 0) continue;
    mincut_edge(cut, id.r[u], i, MINCUT_INFINITE); /* produced in (R,C,N,B): exists there */
    mincut_edge(cut, i, id.b[u], MINCUT_INFINITE); /* produced in (B,N,R,C): exists there */
    mincut_edge(cut, id.b[u], id.r[u], to_units(round_trip(m, u, LAYOUT_BNRC, upstream[u])));
  }
  for (int i = 0; i < n; i++) {
    const Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++) {
      int u = op->inputs.data[j];
      if (id.r[u] < 0) continue;
      mincut_edge(cut, id.r[u], i, MINCUT_INFINITE); /* a consumer in (R,C,N,B) needs it there */
      mincut_edge(cut, i, id.b[u], MINCUT_INFINITE); /* one in (B,N,R,C) there */
    }
  }
  mincut_solve(cut, id.source, id.sink);
  char *label = arena_alloc(&m->arena, (size_t)n + 1);
  for (int i = 0; i < n; i++) label[i] = !mincut_source_side(cut, i);
  mincut_free(cut);
  return label;
}

/* ------------------------------------------------------------------ applying the labels */

typedef struct Insert {
  int value, before, copy; /* the tensor, the op it goes before, the transformed value */
} Insert;
typedef VEC(Insert) InsertList;

/* The transform of value u into the other layout, placed before its first consumer there. */
static Insert *transform_for(Module *m, InsertList *inserts, int u, int consumer) {
  for (int k = 0; k < inserts->len; k++)
    if (inserts->data[k].value == u) return &inserts->data[k];
  const Value *v = &m->graph.values.data[u];
  Layout to = other(v->layout);
  const char *name = arena_printf(&m->arena, "%s.to_%s", v->name, layout_name(to));
  int copy = graph_add_value(m, name);
  Value *c = &m->graph.values.data[copy];
  v = &m->graph.values.data[u];
  c->shape = v->shape, c->dtype = v->dtype, c->layout = to;
  Insert in = {u, consumer, copy};
  vec_push(&m->arena, *inserts, in);
  return &inserts->data[inserts->len - 1];
}

static Op make_transform(Module *m, const Insert *in) {
  const Value *v = &m->graph.values.data[in->value];
  const Op *producer = &m->graph.ops.data[v->producer];
  Op t = {.kind = OP_TRANSFORM,
          .name = m->graph.values.data[in->copy].name,
          .loc = producer->loc,
          .site = producer->site,
          .output = in->copy};
  fields_default(op_info[OP_TRANSFORM].fields, &t.attr);
  t.attr.to = (int)m->graph.values.data[in->copy].layout;
  vec_push(&m->arena, t.inputs, in->value);
  return t;
}

/* An op works in its output's layout; one with a vector or scalar output in (B,N,R,C). */
static Layout works_in(const Graph *g, const Op *op) { return g->values.data[op->output].layout; }

static void insert_transforms(Module *m) {
  Graph *g = &m->graph;
  InsertList inserts = {0};
  for (int i = 0; i < g->ops.len; i++) {
    Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++) {
      int u = op->inputs.data[j];
      const Value *v = &g->values.data[u];
      if (v->shape.rank != 4 || v->layout == works_in(g, op)) continue;
      op->inputs.data[j] = transform_for(m, &inserts, u, i)->copy;
    }
  }
  if (!inserts.len) return;
  VEC(Op) ops = {0};
  for (int i = 0; i < g->ops.len; i++) {
    for (int k = 0; k < inserts.len; k++)
      if (inserts.data[k].before == i) {
        Op t = make_transform(m, &inserts.data[k]);
        vec_push(&m->arena, ops, t);
      }
    vec_push(&m->arena, ops, g->ops.data[i]);
  }
  g->ops.data = ops.data, g->ops.len = ops.len, g->ops.cap = ops.cap;
  for (int i = 0; i < g->ops.len; i++) g->values.data[g->ops.data[i].output].producer = i;
}

bool pass_layout(Module *m) {
  if (!m->options.target) {
    diag_error((SrcLoc){0}, "internal: no target to lay tensors out for");
    return false;
  }
  char *upstream = graph_params_upstream(m);
  char *label = solve(m, upstream);
  Graph *g = &m->graph;
  for (int i = 0; i < g->ops.len; i++) {
    Op *op = &g->ops.data[i];
    Value *out = &g->values.data[op->output];
    out->layout = out->shape.rank == 4 && label[i] ? LAYOUT_RCNB : LAYOUT_BNRC;
    if (op->kind == OP_CONV)
      conv_in_layout(m, op, out->layout, upstream[op->inputs.data[0]], op->conv.plan);
  }
  insert_transforms(m);
  return true;
}
