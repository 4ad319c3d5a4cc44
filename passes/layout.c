/* Pass `layout`: gives every 4-D tensor a layout, fixes each convolution's plans, and inserts
 * `transform` ops where a consumer works in another layout than its producer gives.
 *
 * Each op gets a label, the layout it works in (its 4-D inputs and output): the target says
 * which layouts an op's kernel accepts; a convolution's forward plan follows its label, and its
 * cost in a label is the least over its backward plans, each priced with the conversions of its
 * operands if its plan's layout is not the label (price-conv-plans gave the plan costs). A tensor
 * gets one transform into each layout that some consumer needs and its producer does not give,
 * shared by all consumers there; it costs a conversion forward plus one of the gradient back (if
 * a gradient flows). The labels minimising the sum of op costs and transform costs are found by
 * dynamic programming over the ops in order: a state is what the ops still to come can see of
 * the labels so far, per live tensor (produced, a consumer still to come) its producer's layout
 * and the set of layouts it has been converted into; each state keeps its cheapest history.
 * Chains keep one tensor live and series-parallel blocks a few (ResNet-50 two, GoogLeNet's
 * inception modules five), so the DP is exact and fast on them; where a graph keeps more states
 * than it can afford at an op (STATE_LIMIT, fewer where many tensors are live: the states' keys
 * hold STATE_BYTES at most), the cheapest are kept (a beam: a valid labelling, not proven
 * optimal; --explain says so). Ties go to the labelling with fewer ops out of (B,N,R,C). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/target.h"
#include "passes.h"

static Shape value_shape(const Module *m, int v) { return m->graph.values.data[v].shape; }
/* A conversion of tensor v from layout `from` into `to` and, if a gradient flows, the
 * gradient's back. */
static double conversion(const Module *m, int v, Layout from, Layout to, bool gradient) {
  double t = module_transform_cost(m, value_shape(m, v), from, to);
  return gradient ? t + module_transform_cost(m, value_shape(m, v), to, from) : t;
}

/* Converting value v between layouts a and b at run time (the dispatcher's, one way). */
static double convert(const Module *m, int v, Layout a, Layout b) {
  return a == b ? 0 : module_transform_cost(m, value_shape(m, v), a, b);
}

/* The least cost of a convolution with its tensors in layout l; its plans in `plans`. The
 * forward plan is the cheapest of l's own (the blocked layout has three); each gradient's plan
 * may work in another layout, at the price of converting its operands there (dY, and X for the
 * weight gradient) and dX back. */
static double conv_in_layout(const Module *m, const Op *op, Layout l, bool dx_needed,
                             ConvPlan plans[3]) {
  const ConvChoice *ch = &op->conv;
  double bias = 1 + m->options.target->plan_margin; /* on all but explicit on (B,N,R,C) */
  ConvPlan native = PLAN_EXPLICIT;
  double forward = INFINITY;
  for (int p = 0; p < PLAN_COUNT; p++) {
    double cost = ch->cost[CONV_FORWARD][p] * (p == PLAN_EXPLICIT ? 1 : bias);
    if (conv_plan_layout((ConvPlan)p) == l && cost < forward) native = (ConvPlan)p, forward = cost;
  }
  plans[CONV_FORWARD] = plans[CONV_WGRAD] = plans[CONV_DGRAD] = native;
  if (isinf(forward)) return INFINITY;
  int x = op->inputs.data[0], y = op->output;
  double best = INFINITY;
  for (int wg = 0; wg < PLAN_COUNT; wg++)
    for (int dg = 0; dg < PLAN_COUNT; dg++) {
      if (!dx_needed && dg != wg) continue;
      Layout lw = conv_plan_layout((ConvPlan)wg), ld = conv_plan_layout((ConvPlan)dg);
      double cost = !dx_needed ? ch->cost[CONV_WGRAD][wg]
                    : wg == dg ? ch->joint[wg] /* one call computes both */
                               : ch->cost[CONV_WGRAD][wg] + ch->cost[CONV_DGRAD][dg];
      cost += convert(m, y, l, lw) + convert(m, x, l, lw); /* dY and X for dW */
      if (dx_needed && ld != lw) cost += convert(m, y, l, ld);
      if (dx_needed) cost += convert(m, x, ld, l); /* dX back */
      if (wg != PLAN_EXPLICIT || (dx_needed && dg != PLAN_EXPLICIT)) cost *= bias;
      if (cost < best)
        best = cost, plans[CONV_WGRAD] = (ConvPlan)wg, plans[CONV_DGRAD] = (ConvPlan)dg;
    }
  return forward + best;
}

/* Whether convolution op may read its input in (B,N,R,C) while it works on the blocked layout:
 * the input needs no gradient, the target's direct plan reads such a shape as it comes, and
 * that is the plan of its forward and weight gradient there. */
static bool reads_planar(const Module *m, const Op *op, const char *upstream) {
  const Target *t = m->options.target;
  if (op->kind != OP_CONV || !t->conv_reads_planar || upstream[op->inputs.data[0]]) return false;
  ConvShape s = conv_shape(&m->graph, op, 1);
  ConvPlan plans[3];
  conv_in_layout(m, op, LAYOUT_BNRC16, false, plans);
  return t->conv_reads_planar(&s) && plans[CONV_FORWARD] == PLAN_DIRECT &&
         plans[CONV_WGRAD] == PLAN_DIRECT;
}

/* The cost of op i in each layout; INFINITY where its kernel does not take it. */
static void op_costs(Module *m, int i, const char *upstream, double cost[LAYOUT_COUNT]) {
  Op *op = &m->graph.ops.data[i];
  bool four_d = value_shape(m, op->output).rank == 4;
  for (int l = 0; l < LAYOUT_COUNT; l++) {
    bool takes = l == LAYOUT_BNRC || (four_d && m->options.target->accepts(&m->graph, op, l));
    cost[l] = takes ? 0 : INFINITY;
  }
  if (op->kind != OP_CONV) return;
  ConvPlan plans[3];
  for (int l = 0; l < LAYOUT_COUNT; l++)
    cost[l] = op->conv.in_layout[l] =
        conv_in_layout(m, op, (Layout)l, upstream[op->inputs.data[0]], plans);
}

/* ------------------------------------------------------------------ the labelling */

enum { STATE_LIMIT = 1 << 14, STATE_BYTES = 1 << 16 };
static const double PICOSECONDS = 1e12;                      /* costs as integers: ties are exact */
static const int64_t UNIT_LIMIT = INT64_MAX / 4 / (1 << 20); /* per term, so sums cannot wrap */

static int64_t to_units(double seconds) {
  double units = seconds * PICOSECONDS;
  return units < (double)UNIT_LIMIT ? (int64_t)llround(units) : UNIT_LIMIT;
}

/* A live tensor in a state: its producer's layout and the layouts it exists in, as one byte. */
static uint8_t tensor_key(int producer_layout, unsigned exists) {
  return (uint8_t)(producer_layout | exists << 4);
}
static int key_producer(uint8_t key) { return key & 15; }
static unsigned key_exists(uint8_t key) { return key >> 4; }

typedef struct State {
  int64_t cost; /* the least energy of the ops so far with this state */
  int moved;    /* ops of that history out of (B,N,R,C): the tie-break */
  int parent;   /* its state at the previous op */
  int label;    /* the layout it gives this op */
} State;

/* The states after one op; keys[s * live ..] are state s's live tensors' bytes. */
typedef struct Step {
  int live, *values; /* the 4-D tensors live after the op, in production order */
  int count, cap;
  State *states;
  uint8_t *keys;
  int *table, table_size; /* open addressing over keys: state index + 1, 0 empty */
} Step;

typedef struct Problem {
  Module *m;
  const char *upstream;
  int *last_use;       /* per value: the last op reading it; -1 if not a 4-D tensor anyone reads */
  int64_t *unary;      /* per op and layout */
  int64_t *round_trip; /* per 4-D value read by some op, from and to layout: conversion() */
  bool *planar;        /* per op: reads_planar() */
  int *position;       /* per value: its index in the previous step's live list */
  int max_states;      /* the most any step kept */
  bool beam;           /* some step had more states than it could keep */
} Problem;

static bool is_tensor(const Graph *g, int v) { return g->values.data[v].shape.rank == 4; }

static int64_t *round_trip_at(const Problem *p, int v, Layout from, Layout to) {
  return &p->round_trip[((size_t)v * LAYOUT_COUNT + from) * LAYOUT_COUNT + to];
}

static void problem_init(Problem *p, Module *m, const char *upstream) {
  const Graph *g = &m->graph;
  int n = g->ops.len, nv = g->values.len;
  *p = (Problem){.m = m, .upstream = upstream};
  p->last_use = arena_alloc(&m->arena, sizeof(int) * (size_t)(nv + 1));
  p->position = arena_alloc(&m->arena, sizeof(int) * (size_t)(nv + 1));
  p->unary = arena_alloc(&m->arena, sizeof(int64_t) * (size_t)(n + 1) * LAYOUT_COUNT);
  p->planar = arena_alloc(&m->arena, sizeof(bool) * (size_t)(n + 1));
  for (int v = 0; v < nv; v++) p->last_use[v] = -1;
  for (int i = 0; i < n; i++) {
    const Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++)
      if (is_tensor(g, op->inputs.data[j])) p->last_use[op->inputs.data[j]] = i;
    double cost[LAYOUT_COUNT];
    op_costs(m, i, upstream, cost);
    p->planar[i] = reads_planar(m, op, upstream);
    for (int l = 0; l < LAYOUT_COUNT; l++)
      p->unary[i * LAYOUT_COUNT + l] = isinf(cost[l]) ? -1 : to_units(cost[l]);
  }
  /* priced once here: every state that converts a tensor would ask the target (and the
   * tuning file) again */
  p->round_trip =
      arena_alloc(&m->arena, sizeof(int64_t) * (size_t)(nv + 1) * LAYOUT_COUNT * LAYOUT_COUNT);
  for (int v = 0; v < nv; v++)
    for (int from = 0; from < LAYOUT_COUNT && p->last_use[v] >= 0; from++)
      for (int to = 0; to < LAYOUT_COUNT; to++)
        *round_trip_at(p, v, (Layout)from, (Layout)to) =
            to_units(conversion(m, v, (Layout)from, (Layout)to, upstream[v]));
}

static uint64_t hash_key(const uint8_t *key, int len) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < len; i++) h = (h ^ key[i]) * 1099511628211ull;
  return h;
}

static void step_reserve(Step *s, int states) {
  if (states > s->cap) {
    s->cap = states;
    s->states = xrealloc(s->states, sizeof(State) * (size_t)s->cap, "the layout search");
    s->keys = xrealloc(s->keys, (size_t)s->cap * (size_t)(s->live + 1), "the layout search");
  }
  int size = 16;
  while (size < 2 * states) size *= 2;
  free(s->table);
  s->table = xcalloc((size_t)size, sizeof(int), "the layout search");
  s->table_size = size;
}

static bool cheaper(const State *a, const State *b) {
  return a->cost < b->cost || (a->cost == b->cost && a->moved < b->moved);
}

/* Adds the state with this key, or keeps the cheaper of it and the one already there. */
static void step_offer(Step *s, const uint8_t *key, State st) {
  uint64_t h = hash_key(key, s->live);
  for (int slot = (int)(h & (uint64_t)(s->table_size - 1));;
       slot = (slot + 1) & (s->table_size - 1)) {
    int at = s->table[slot] - 1;
    if (at < 0) {
      memcpy(s->keys + (size_t)s->count * (size_t)s->live, key, (size_t)s->live);
      s->states[s->count] = st;
      s->table[slot] = ++s->count;
      return;
    }
    if (!memcmp(s->keys + (size_t)at * (size_t)s->live, key, (size_t)s->live)) {
      if (cheaper(&st, &s->states[at])) s->states[at] = st;
      return;
    }
  }
}

/* The tensors live after op i: those of `prev` still to be read, then op i's output if read. */
static void step_live(const Problem *p, const Step *prev, int i, Step *next) {
  const Graph *g = &p->m->graph;
  next->values = arena_alloc(&p->m->arena, sizeof(int) * (size_t)(prev->live + 1));
  next->live = 0;
  for (int k = 0; k < prev->live; k++)
    if (p->last_use[prev->values[k]] > i) next->values[next->live++] = prev->values[k];
  int out = g->ops.data[i].output;
  if (p->last_use[out] > i) next->values[next->live++] = out;
}

/* Extends state `from` of `prev` by layout l for op i into `next`. */
static void extend(Problem *p, const Step *prev, int from, int i, int l, Step *next) {
  const Graph *g = &p->m->graph;
  const Op *op = &g->ops.data[i];
  const State *st = &prev->states[from];
  State to = {.cost = st->cost + p->unary[i * LAYOUT_COUNT + l],
              .moved = st->moved + (l != LAYOUT_BNRC),
              .parent = from,
              .label = l};
  uint8_t key[prev->live + 1];
  memcpy(key, prev->keys + (size_t)from * (size_t)prev->live, (size_t)prev->live);
  for (int j = 0; j < op->inputs.len; j++) {
    int u = op->inputs.data[j];
    if (!is_tensor(g, u)) continue;
    uint8_t *k = &key[p->position[u]];
    if (key_exists(*k) & 1u << l) continue; /* also a repeated input */
    if (j == 0 && p->planar[i] && l == LAYOUT_BNRC16 && key_producer(*k) == LAYOUT_BNRC) continue;
    to.cost += *round_trip_at(p, u, (Layout)key_producer(*k), (Layout)l);
    *k = tensor_key(key_producer(*k), key_exists(*k) | 1u << l);
  }
  uint8_t next_key[next->live + 1];
  int n = 0;
  for (int k = 0; k < prev->live; k++)
    if (p->last_use[prev->values[k]] > i) next_key[n++] = key[k];
  if (n < next->live) next_key[n++] = tensor_key(l, 1u << l);
  step_offer(next, next_key, to);
}

typedef struct Ranked {
  State state;
  int index;
} Ranked;

static int by_cost(const void *a, const void *b) {
  const State *x = &((const Ranked *)a)->state, *y = &((const Ranked *)b)->state;
  return cheaper(x, y) ? -1 : cheaper(y, x) ? 1 : 0;
}

/* How many states a step with `live` live tensors keeps at most. */
static int state_limit(int live) {
  int by_bytes = STATE_BYTES / (live + 1);
  return by_bytes < 16 ? 16 : by_bytes < STATE_LIMIT ? by_bytes : STATE_LIMIT;
}

/* Keeps the cheapest states the step can afford, with their keys. */
static void step_prune(Problem *p, Step *s) {
  if (s->count > p->max_states) p->max_states = s->count;
  int limit = state_limit(s->live);
  if (s->count <= limit) return;
  p->beam = true;
  Ranked *ranked = xcalloc((size_t)s->count, sizeof *ranked, "the layout search");
  for (int k = 0; k < s->count; k++) ranked[k] = (Ranked){s->states[k], k};
  qsort(ranked, (size_t)s->count, sizeof *ranked, by_cost);
  size_t live = (size_t)s->live;
  uint8_t *keys = xcalloc(limit, live + 1, "the layout search");
  for (int k = 0; k < limit; k++) {
    memcpy(keys + (size_t)k * live, s->keys + (size_t)ranked[k].index * live, live);
    s->states[k] = ranked[k].state;
  }
  memcpy(s->keys, keys, limit * live);
  s->count = limit;
  free(ranked), free(keys);
}

static void step_free(Step *s) { free(s->states), free(s->keys), free(s->table); }

/* Labels every op with its layout; NULL (and an error) if some op can take none. */
static char *solve(Module *m, const char *upstream) {
  const Graph *g = &m->graph;
  int n = g->ops.len;
  Problem p;
  problem_init(&p, m, upstream);
  Step *steps = xcalloc((size_t)n + 1, sizeof(Step), "the layout search");
  step_reserve(&steps[0], 1);
  static const uint8_t no_tensors[1];
  step_offer(&steps[0], no_tensors, (State){.parent = -1}); /* nothing is live yet */
  for (int i = 0; i < n; i++) {
    Step *prev = &steps[i], *next = &steps[i + 1];
    step_live(&p, prev, i, next);
    for (int k = 0; k < prev->live; k++) p.position[prev->values[k]] = k;
    step_reserve(next, prev->count * LAYOUT_COUNT);
    for (int s = 0; s < prev->count; s++)
      for (int l = 0; l < LAYOUT_COUNT; l++)
        if (p.unary[i * LAYOUT_COUNT + l] >= 0) extend(&p, prev, s, i, l, next);
    if (!next->count) {
      const Op *op = &g->ops.data[i];
      diag_error(op->loc, "internal: no layout takes layer '%s'", op->name);
      for (int k = 0; k <= i + 1; k++) step_free(&steps[k]);
      free(steps);
      return NULL;
    }
    step_prune(&p, next);
    free(prev->table), free(prev->keys); /* backtracking needs the states alone */
    prev->table = NULL, prev->keys = NULL;
  }
  char *label = arena_alloc(&m->arena, (size_t)n + 1);
  int at = 0; /* nothing is live after the last op: one state */
  for (int i = n - 1; i >= 0; i--) {
    label[i] = (char)steps[i + 1].states[at].label;
    at = steps[i + 1].states[at].parent;
  }
  m->layout_search = (LayoutSearch){.most_states = p.max_states, .beam = p.beam};
  for (int k = 0; k <= n; k++) step_free(&steps[k]);
  free(steps);
  return label;
}
/* ------------------------------------------------------------------ applying the labels */

typedef struct Insert {
  int value, before, copy; /* the tensor, the op it goes before, the transformed value */
} Insert;
typedef VEC(Insert) InsertList;

/* The transform of value u into layout `to`, placed before its first consumer there. */
static Insert *transform_for(Module *m, InsertList *inserts, int u, Layout to, int consumer) {
  for (int k = 0; k < inserts->len; k++)
    if (inserts->data[k].value == u && m->graph.values.data[inserts->data[k].copy].layout == to)
      return &inserts->data[k];
  const Value *v = &m->graph.values.data[u];
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
      if (j == 0 && op->kind == OP_CONV && op->conv.x_planar) continue;
      op->inputs.data[j] = transform_for(m, &inserts, u, works_in(g, op), i)->copy;
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
  if (!label) return false;
  Graph *g = &m->graph;
  for (int i = 0; i < g->ops.len; i++) {
    Op *op = &g->ops.data[i];
    Value *out = &g->values.data[op->output];
    out->layout = out->shape.rank == 4 ? (Layout)label[i] : LAYOUT_BNRC;
    if (op->kind != OP_CONV) continue;
    int x = op->inputs.data[0];
    conv_in_layout(m, op, out->layout, upstream[x], op->conv.plan);
    /* producers come first: x's layout is set */
    op->conv.x_planar = out->layout == LAYOUT_BNRC16 && g->values.data[x].layout == LAYOUT_BNRC &&
                        reads_planar(m, op, upstream);
  }
  insert_transforms(m);
  return true;
}
