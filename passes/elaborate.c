/* Pass `elaborate`: from the program as written to one flat graph.
 * - evaluates constants and the train/data settings into typed configs;
 * - instantiates blocks, naming each inner layer `instance/name`, binding arguments;
 * - resolves input names, decodes attributes through the op kind's schema;
 * - orders the graph topologically, reporting cycles, a missing loss, unused layers. */
#include <stdlib.h>
#include <strings.h>

#include "../ir/symtab.h"

#include "passes.h"

/* Generous bounds (ResNet-1001 has about 3,000 layers) that keep hostile input, such as blocks
 * instantiating each other exponentially, from exhausting time or memory. */
/* Each block instance costs its own scope: a cap on instances keeps nested blocks that call
 * each other twice per level (2^depth instances) from taking minutes and gigabytes. */
enum { MAX_OPS = 1 << 16, MAX_DEPTH = 64, MAX_INSTANCES = 1 << 14 };

typedef struct Scope {
  const Block *block;
  const char *prefix; /* "" at top level, "res2a/" inside instance res2a */
  SymTab names;       /* statement name -> statement index */
  int *values;        /* statement index -> value id (-1: failed) */
  SymTab params;      /* parameter name -> index */
  Const *bindings;    /* parameter index -> value */
  bool *bound;        /* parameter index -> has a value yet */
  const CallSite *site;
  const struct Scope *caller;
} Scope;

typedef struct Elab {
  Module *m;
  SymTab consts; /* constant name -> index into const_values */
  VEC(Const) const_values;
  SymTab blocks;  /* block name -> index */
  VEC(int) alias; /* value id -> the value it stands for (block results), or -1 */
  int instances;  /* block instances made so far */
  bool too_big;
  /* While a repetition's arguments are evaluated: its index's name and value (`repeat(N, i)`) */
  const char *index_name;
  Const index_value;
} Elab;

typedef struct Lookup {
  Elab *e;
  const Scope *s;
} Lookup;

static bool lookup_name(void *ctx, const char *name, Const *out) {
  Lookup *l = ctx;
  if (l->e->index_name && !strcmp(name, l->e->index_name)) {
    *out = l->e->index_value;
    return true;
  }
  if (l->s) {
    int p = symtab_get(&l->s->params, name);
    if (p >= 0 && l->s->bound[p]) {
      *out = l->s->bindings[p];
      return true;
    }
    int st = symtab_get(&l->s->names, name);
    if (st >= 0 && l->s->values[st] >= 0) {
      *out = (Const){.kind = V_TENSOR, .tensor = l->s->values[st]};
      return true;
    }
  }
  int c = symtab_get(&l->e->consts, name);
  if (c >= 0) {
    *out = l->e->const_values.data[c];
    return true;
  }
  return false;
}

static bool eval(Elab *e, const Scope *s, const Expr *x, Const *out) {
  Lookup l = {e, s};
  return expr_eval(&e->m->arena, x, lookup_name, &l, out);
}

static int new_value(Elab *e, const char *name) {
  vec_push(&e->m->arena, e->alias, -1);
  return graph_add_value(e->m, name);
}

/* ------------------------------------------------------------------ constants and settings */

static void eval_constant(Elab *e, const Setting *s) {
  int first = symtab_get(&e->consts, s->key);
  if (first >= 0) {
    diag_error(s->loc, "constant '%s' is defined twice", s->key);
    diag_note(e->const_values.data[first].loc, "first defined here");
    return;
  }
  Const v;
  if (!eval(e, NULL, s->value, &v)) return;
  v.loc = s->loc;
  symtab_put(&e->consts, s->key, e->const_values.len);
  vec_push(&e->m->arena, e->const_values, v);
}

static void eval_setting(Elab *e, const Setting *s, SymTab *seen, SymTab *bad_sections) {
  static const char *const sections[] = {"train", "data", NULL};
  const FieldSpec *specs;
  void *dst;
  if (!strcmp(s->section, "train"))
    specs = train_fields, dst = &e->m->train;
  else if (!strcmp(s->section, "data"))
    specs = data_fields, dst = &e->m->data;
  else {
    if (symtab_put(bad_sections, s->section, 0) >= 0) return;
    const char *near = diag_suggest(s->section, sections);
    if (near)
      diag_error(s->loc, "unknown section '%s'; did you mean '%s'?", s->section, near);
    else
      diag_error(s->loc, "unknown section '%s' (sections are 'train' and 'data')", s->section);
    return;
  }
  const char *full = arena_printf(&e->m->arena, "%s.%s", s->section, s->key);
  int index = (int)(s - e->m->settings.data);
  int first = symtab_put(seen, full, index);
  if (first >= 0) {
    diag_error(s->loc, "setting '%s' is given twice", full);
    diag_note(e->m->settings.data[first].loc, "first given here");
    return;
  }
  Const v;
  if (!eval(e, NULL, s->value, &v)) return;
  const char *what = arena_printf(&e->m->arena, "section '%s'", s->section);
  field_set(specs, dst, s->key, s->loc, &v, what, "setting");
}

static void eval_settings(Elab *e) {
  SymTab seen, bad_sections;
  symtab_init(&seen, &e->m->arena);
  symtab_init(&bad_sections, &e->m->arena);
  for (int i = 0; i < e->m->settings.len; i++) {
    const Setting *s = &e->m->settings.data[i];
    if (!s->section) eval_constant(e, s);
  }
  for (int i = 0; i < e->m->settings.len; i++) {
    const Setting *s = &e->m->settings.data[i];
    if (s->section) eval_setting(e, s, &seen, &bad_sections);
  }
}

/* ------------------------------------------------------------------ blocks */

static bool defines(const Block *b, const char *name) {
  for (int i = 0; i < b->body.len; i++)
    if (!strcmp(b->body.data[i].name, name)) return true;
  return false;
}

static void unknown_callee(Elab *e, const Stmt *st);

/* Checks that do not depend on arguments, once per definition rather than per instance. */
static void check_statements(Elab *e, const Block *b) {
  SymTab names;
  symtab_init(&names, &e->m->arena);
  for (int i = 0; i < b->body.len; i++) {
    const Stmt *st = &b->body.data[i];
    int first = symtab_put(&names, st->name, i);
    if (first >= 0) {
      diag_error(st->loc, "'%s' is defined twice", st->name);
      diag_note(b->body.data[first].loc, "first defined here");
    }
    for (int p = 0; p < b->params.len; p++)
      if (!strcmp(b->params.data[p].name, st->name))
        diag_error(st->loc, "'%s' is a parameter of block '%s' and cannot be redefined", st->name,
                   b->name);
    if (op_kind_find(st->callee) < 0 && symtab_get(&e->blocks, st->callee) < 0)
      unknown_callee(e, st);
    if (op_kind_find(st->callee) == OP_TRANSFORM)
      diag_error(st->callee_loc,
                 "'transform' layers are inserted by the compiler (the layout pass); a network "
                 "does not name layouts");
  }
}

static void check_blocks(Elab *e) {
  for (int i = 0; i < e->m->blocks.len; i++) {
    const Block *b = &e->m->blocks.data[i];
    if (op_kind_find(b->name) >= 0) {
      diag_error(b->loc, "block '%s' has the name of a layer kind", b->name);
      continue;
    }
    int first = symtab_put(&e->blocks, b->name, i);
    if (first >= 0) {
      diag_error(b->loc, "block '%s' is defined twice", b->name);
      diag_note(e->m->blocks.data[first].loc, "first defined here");
    }
    for (int p = 0; p < b->params.len; p++)
      for (int q = 0; q < p; q++)
        if (!strcmp(b->params.data[p].name, b->params.data[q].name))
          diag_error(b->params.data[p].loc, "block '%s' has two parameters named '%s'", b->name,
                     b->params.data[p].name);
    if (!defines(b, b->ret))
      diag_error(b->ret_loc, "block '%s' returns '%s', which it does not define", b->name, b->ret);
  }
  for (int i = 0; i < e->m->blocks.len; i++) check_statements(e, &e->m->blocks.data[i]);
  check_statements(e, &e->m->body);
}

/* ------------------------------------------------------------------ statements */

static void elab_scope(Elab *e, Scope *s);

static const char *const *scope_names(Elab *e, const Scope *s) {
  const char **names = arena_alloc(
      &e->m->arena, sizeof *names * (size_t)(s->block->body.len + s->block->params.len + 1));
  int n = 0;
  for (int i = 0; i < s->block->body.len; i++) names[n++] = s->block->body.data[i].name;
  for (int i = 0; i < s->block->params.len; i++) names[n++] = s->block->params.data[i].name;
  return names;
}

static void undefined_name(Elab *e, const Scope *s, const Const *v) {
  const char *near = diag_suggest(v->s, scope_names(e, s));
  if (near)
    diag_error(v->loc, "undefined name '%s'; did you mean '%s'?", v->s, near);
  else
    diag_error(v->loc, "undefined name '%s'", v->s);
}

/* A name of this scope whose statement failed: its error is already reported. */
static bool names_failed_statement(const Scope *s, const Const *v) {
  return v->kind == V_SYM && symtab_get(&s->names, v->s) >= 0;
}

static bool decode_input(Elab *e, const Scope *s, const Arg *arg, Op *op) {
  Const v;
  if (!eval(e, s, arg->value, &v)) return false;
  if (names_failed_statement(s, &v)) return false;
  if (v.kind == V_SYM) {
    undefined_name(e, s, &v);
    return false;
  }
  if (v.kind != V_TENSOR) {
    diag_error(arg->loc, "layer '%s' (%s): an input must name a layer, but this is %s", op->name,
               op_info[op->kind].name, const_kind_name(v.kind));
    return false;
  }
  vec_push(&e->m->arena, op->inputs, v.tensor);
  return true;
}

static bool decode_attribute(Elab *e, const Scope *s, const Arg *arg, Op *op, uint64_t *given) {
  const FieldSpec *specs = op_info[op->kind].fields;
  const FieldSpec *spec = field_find(specs, arg->key);
  if (spec) {
    uint64_t bit = 1ull << (spec - specs);
    if (*given & bit) {
      diag_error(arg->loc, "layer '%s' (%s): attribute '%s' is given twice", op->name,
                 op_info[op->kind].name, arg->key);
      return false;
    }
    *given |= bit;
  }
  Const v = {.loc = arg->loc};
  if (spec && !eval(e, s, arg->value, &v)) return false;
  if (v.kind == V_TENSOR) {
    diag_error(arg->loc, "layer '%s' (%s): attribute '%s' must be a value, but names a layer",
               op->name, op_info[op->kind].name, arg->key);
    return false;
  }
  return field_set(specs, &op->attr, arg->key, arg->loc, &v, op_describe(e->m, op), "attribute");
}

/* Builds the op for statement `st`, whose op and output value already exist. */
static void elab_layer(Elab *e, const Scope *s, const Stmt *st, int op_index) {
  uint64_t given = 0;
  bool ok = true;
  for (int i = 0; i < st->args.len; i++) {
    const Arg *arg = &st->args.data[i];
    Op *op = &e->m->graph.ops.data[op_index];
    ok &= arg->key ? decode_attribute(e, s, arg, op, &given) : decode_input(e, s, arg, op);
  }
  Op *op = &e->m->graph.ops.data[op_index];
  const OpInfo *info = &op_info[op->kind];
  if (!ok) return; /* a missing attribute is likely the misspelt one just reported */
  for (const FieldSpec *f = info->fields; f->key; f++)
    if (f->required && !(given & (1ull << (f - info->fields)))) {
      op_error(op, "missing attribute '%s'", f->key);
      ok = false;
    }
  if (!ok) return;
  int n = op->inputs.len;
  if (n < info->min_inputs || (info->max_inputs >= 0 && n > info->max_inputs)) {
    if (info->min_inputs == info->max_inputs)
      op_error(op, "takes %d input%s, but has %d", info->min_inputs,
               info->min_inputs == 1 ? "" : "s", n);
    else if (info->max_inputs < 0)
      op_error(op, "takes at least %d inputs, but has %d", info->min_inputs, n);
    else
      op_error(op, "takes %d to %d inputs, but has %d", info->min_inputs, info->max_inputs, n);
  }
}

static int param_index(const Block *b, const char *name) {
  for (int i = 0; i < b->params.len; i++)
    if (!strcmp(b->params.data[i].name, name)) return i;
  return -1;
}

/* Binds st's arguments to the block's parameters; `first` (not NULL) stands for the first
 * positional argument (a repetition's previous result). */
static bool bind_arguments(Elab *e, const Scope *caller, const Stmt *st, Scope *inner,
                           const Const *first) {
  const Block *b = inner->block;
  bool ok = true;
  int positional = 0;
  for (int i = 0; i < st->args.len; i++) {
    const Arg *arg = &st->args.data[i];
    int p = arg->key ? param_index(b, arg->key) : positional++;
    if (arg->key && p < 0) {
      const char **names = arena_alloc(&e->m->arena, sizeof *names * (size_t)(b->params.len + 1));
      for (int k = 0; k < b->params.len; k++) names[k] = b->params.data[k].name;
      const char *near = diag_suggest(arg->key, names);
      if (near)
        diag_error(arg->loc, "block '%s' has no parameter '%s'; did you mean '%s'?", b->name,
                   arg->key, near);
      else
        diag_error(arg->loc, "block '%s' has no parameter '%s'", b->name, arg->key);
      ok = false;
      continue;
    }
    if (p >= b->params.len) {
      diag_error(arg->loc, "block '%s' takes %d argument%s, but is given more", b->name,
                 b->params.len, b->params.len == 1 ? "" : "s");
      diag_note(b->loc, "'%s' is defined here", b->name);
      return false;
    }
    if (inner->bound[p]) {
      diag_error(arg->loc, "block '%s': parameter '%s' is given twice", b->name,
                 b->params.data[p].name);
      ok = false;
      continue;
    }
    Const v;
    if (first && !arg->key && p == 0)
      v = *first;
    else if (!eval(e, caller, arg->value, &v)) {
      ok = false;
      continue;
    }
    if (names_failed_statement(caller, &v)) {
      ok = false;
      continue;
    }
    inner->bindings[p] = v;
    inner->bound[p] = true;
  }
  if (!ok) return false;
  /* Defaults are evaluated in the block's own scope, so they may use earlier parameters. */
  for (int p = 0; p < b->params.len; p++) {
    if (inner->bound[p]) continue;
    const BlockParam *bp = &b->params.data[p];
    if (!bp->deflt) {
      diag_error(st->loc, "instance '%s' of block '%s' is missing argument '%s'", st->name, b->name,
                 bp->name);
      diag_note(bp->loc, "parameter '%s' is declared here", bp->name);
      ok = false;
      continue;
    }
    Const v;
    if (!eval(e, inner, bp->deflt, &v)) {
      ok = false;
      continue;
    }
    inner->bindings[p] = v;
    inner->bound[p] = true;
  }
  return ok;
}

static bool on_call_stack(const Scope *s, const Block *b) {
  for (; s; s = s->caller)
    if (s->block == b) return true;
  return false;
}

static int scope_depth(const Scope *s) {
  int d = 0;
  for (; s; s = s->caller) d++;
  return d;
}

static void init_scope(Elab *e, Scope *s, const Block *b) {
  s->block = b;
  symtab_init(&s->names, &e->m->arena);
  symtab_init(&s->params, &e->m->arena);
  s->values = arena_alloc(&e->m->arena, sizeof(int) * (size_t)(b->body.len + 1));
  s->bindings = arena_alloc(&e->m->arena, sizeof(Const) * (size_t)(b->params.len + 1));
  s->bound = arena_alloc(&e->m->arena, (size_t)b->params.len + 1);
  for (int p = 0; p < b->params.len; p++) symtab_put(&s->params, b->params.data[p].name, p);
}

/* Instantiates block `bi` for statement `st` as `instance` (the statement's name, or a
 * repetition's); the placeholder value becomes an alias of the block's result. */
static bool elab_instance(Elab *e, const Scope *s, const Stmt *st, int bi, int placeholder,
                          const char *instance, const Const *first) {
  const Block *b = &e->m->blocks.data[bi];
  if (on_call_stack(s, b) || scope_depth(s) >= MAX_DEPTH) {
    diag_error(st->callee_loc, "block '%s' instantiates itself (directly or through other blocks)",
               b->name);
    return false;
  }
  if (++e->instances > MAX_INSTANCES) {
    diag_error(st->callee_loc, "the network has more than %d block instances after elaboration",
               MAX_INSTANCES);
    e->too_big = true;
    return false;
  }
  Scope inner = {.caller = s};
  init_scope(e, &inner, b);
  inner.prefix = arena_printf(&e->m->arena, "%s%s/", s->prefix, instance);
  CallSite *site = arena_alloc(&e->m->arena, sizeof *site);
  *site = (CallSite){.block = b->name,
                     .instance = arena_printf(&e->m->arena, "%s%s", s->prefix, instance),
                     .loc = st->loc,
                     .outer = s->site};
  inner.site = site;
  if (!bind_arguments(e, s, st, &inner, first)) return false;
  elab_scope(e, &inner);
  int ret = symtab_get(&inner.names, b->ret);
  if (ret < 0 || inner.values[ret] < 0) return false;
  e->alias.data[placeholder] = inner.values[ret];
  return true;
}

/* The count of `repeat(N)`: an integer from 1 to MAX_INSTANCES, or 0 after an error. */
static int repeat_count(Elab *e, const Scope *s, const Stmt *st) {
  Const n;
  if (!eval(e, s, st->repeat, &n)) return 0;
  if (n.kind != V_INT) {
    diag_error(st->repeat->loc, "repeat takes a count (an integer), not %s",
               const_kind_name(n.kind));
    return 0;
  }
  if (n.i < 1 || n.i > MAX_INSTANCES) {
    diag_error(st->repeat->loc, "repeat takes a count from 1 to %d, not %lld", MAX_INSTANCES,
               (long long)n.i);
    return 0;
  }
  return (int)n.i;
}

/* A block statement: one instance, or with `repeat(N[, i])` N instances `name/0` ..
 * `name/N-1`, each but the first taking the one before it as its first positional argument,
 * the index bound to its number in the arguments; the statement's value is the last's. */
static void elab_call(Elab *e, const Scope *s, const Stmt *st, int bi, int placeholder) {
  if (!st->repeat) {
    elab_instance(e, s, st, bi, placeholder, st->name, NULL);
    return;
  }
  int count = repeat_count(e, s, st);
  bool positional = false;
  for (int i = 0; i < st->args.len; i++) positional |= !st->args.data[i].key;
  if (count > 1 && !positional) {
    diag_error(st->callee_loc,
               "repeat passes each instance's result to the next as its first argument, but "
               "'%s' is given none by position",
               st->callee);
    return;
  }
  const char *saved_name = e->index_name;
  Const saved_value = e->index_value, previous;
  for (int k = 0; k < count && !e->too_big; k++) {
    const char *instance = arena_printf(&e->m->arena, "%s/%d", st->name, k);
    int value = k == count - 1
                    ? placeholder
                    : new_value(e, arena_printf(&e->m->arena, "%s%s", s->prefix, instance));
    e->index_name = st->repeat_index;
    e->index_value = (Const){.kind = V_INT, .i = k};
    bool made = elab_instance(e, s, st, bi, value, instance, k ? &previous : NULL);
    e->index_name = saved_name, e->index_value = saved_value;
    if (!made) return;
    previous = (Const){.kind = V_TENSOR, .tensor = value};
  }
}

/* Other frameworks' names for our layer kinds, for suggestions only. */
static const char *alias_of(const char *name) {
  static const char *const aliases[][2] = {{"convolution", "conv"},
                                           {"conv2d", "conv"},
                                           {"innerproduct", "fc"},
                                           {"inner_product", "fc"},
                                           {"linear", "fc"},
                                           {"dense", "fc"},
                                           {"pooling", "pool"},
                                           {"maxpool", "pool"},
                                           {"avgpool", "pool"},
                                           {"batch_norm", "batchnorm"},
                                           {"bn", "batchnorm"},
                                           {"eltwise", "add"},
                                           {"softmaxwithloss", "softmax_loss"},
                                           {"softmax", "softmax_loss"},
                                           {"data", "input"}};
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcasecmp(name, aliases[i][0])) return aliases[i][1];
  return NULL;
}

static void unknown_callee(Elab *e, const Stmt *st) {
  int n = 0;
  const char **names =
      arena_alloc(&e->m->arena, sizeof *names * (size_t)(OP_COUNT + e->m->blocks.len + 1));
  for (int k = 0; k < OP_COUNT; k++) names[n++] = op_info[k].name;
  for (int i = 0; i < e->m->blocks.len; i++) names[n++] = e->m->blocks.data[i].name;
  const char *near = alias_of(st->callee);
  if (!near) near = diag_suggest(st->callee, names);
  if (near)
    diag_error(st->callee_loc, "unknown layer kind or block '%s'; did you mean '%s'?", st->callee,
               near);
  else
    diag_error(st->callee_loc, "unknown layer kind or block '%s'", st->callee);
}

/* Phase 1 creates every statement's value, so inputs may name layers defined further down;
 * phase 2 decodes arguments and instantiates blocks. */
static void elab_scope(Elab *e, Scope *s) {
  const Block *b = s->block;
  int *op_of = arena_alloc(&e->m->arena, sizeof(int) * (size_t)(b->body.len + 1));
  for (int i = 0; i < b->body.len && !e->too_big; i++) {
    const Stmt *st = &b->body.data[i];
    s->values[i] = op_of[i] = -1;
    /* duplicates and shadowed parameters were reported by check_statements */
    if (symtab_put(&s->names, st->name, i) >= 0 || symtab_get(&s->params, st->name) >= 0) continue;
    if (e->m->graph.ops.len >= MAX_OPS) {
      diag_error(st->loc, "the network has more than %d layers after elaboration", MAX_OPS);
      e->too_big = true;
      return;
    }
    const char *name = arena_printf(&e->m->arena, "%s%s", s->prefix, st->name);
    int kind = op_kind_find(st->callee);
    if (kind >= 0 && st->repeat) {
      diag_error(st->callee_loc, "repeat applies a block, and '%s' is a layer kind", st->callee);
      continue;
    }
    if (kind >= 0) {
      Op *op = graph_add_op(e->m, (OpKind)kind, name, st->loc);
      op->site = s->site;
      fields_default(op_info[kind].fields, &op->attr);
      op->output = s->values[i] = new_value(e, name);
      e->m->graph.values.data[op->output].producer = op_of[i] = e->m->graph.ops.len - 1;
    } else if (symtab_get(&e->blocks, st->callee) >= 0) {
      s->values[i] = new_value(e, name);
    }
  }
  for (int i = 0; i < b->body.len && !e->too_big; i++) {
    const Stmt *st = &b->body.data[i];
    if (op_of[i] >= 0)
      elab_layer(e, s, st, op_of[i]);
    else if (s->values[i] >= 0 && symtab_get(&s->names, st->name) == i)
      elab_call(e, s, st, symtab_get(&e->blocks, st->callee), s->values[i]);
  }
}

/* ------------------------------------------------------------------ graph cleanup */

static int resolve(const Elab *e, int v) {
  while (e->alias.data[v] >= 0) v = e->alias.data[v];
  return v;
}

/* Replaces block-result placeholders by what they stand for and drops them. */
static void compact_values(Elab *e) {
  Graph *g = &e->m->graph;
  int *new_id = arena_alloc(&e->m->arena, sizeof(int) * (size_t)(g->values.len + 1));
  int n = 0;
  for (int v = 0; v < g->values.len; v++) {
    new_id[v] = g->values.data[v].producer >= 0 ? n : -1;
    if (new_id[v] >= 0) g->values.data[n++] = g->values.data[v];
  }
  for (int i = 0; i < g->ops.len; i++) {
    Op *op = &g->ops.data[i];
    for (int j = 0; j < op->inputs.len; j++)
      op->inputs.data[j] = new_id[resolve(e, op->inputs.data[j])];
    op->output = new_id[op->output];
  }
  g->values.len = n;
}

static void report_cycle(const Graph *g, const int *stack, int depth, int op) {
  int start = depth - 1;
  while (start > 0 && stack[start] != op) start--;
  char path[512] = "";
  size_t len = 0;
  for (int i = start; i < depth && len < sizeof path - 64; i++)
    len += (size_t)snprintf(path + len, sizeof path - len, "'%s' -> ", g->ops.data[stack[i]].name);
  snprintf(path + len, sizeof path - len, "'%s'", g->ops.data[op].name);
  const Op *o = &g->ops.data[op];
  diag_error(o->loc, "layers form a cycle: %s", path);
}

/* Depth-first post-order from each op in source order: every op comes after its inputs'
 * producers, and otherwise the written order is kept. Iterative, so deep chains cannot
 * exhaust the C stack. Returns false on a cycle. */
static bool topological_order(Module *m) {
  Graph *g = &m->graph;
  int n = g->ops.len;
  char *state = arena_alloc(&m->arena, (size_t)n + 1); /* 0 new, 1 on stack, 2 done */
  int *stack = arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1));
  int *next_input = arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1));
  int *order = arena_alloc(&m->arena, sizeof(int) * (size_t)(n + 1));
  int emitted = 0;
  for (int root = 0; root < n; root++) {
    if (state[root]) continue;
    int depth = 0;
    stack[depth++] = root;
    state[root] = 1;
    next_input[root] = 0;
    while (depth) {
      int op = stack[depth - 1];
      const Op *o = &g->ops.data[op];
      if (next_input[op] < o->inputs.len) {
        int dep = g->values.data[o->inputs.data[next_input[op]++]].producer;
        if (state[dep] == 1) {
          report_cycle(g, stack, depth, dep);
          return false;
        }
        if (state[dep] == 0) {
          state[dep] = 1;
          next_input[dep] = 0;
          stack[depth++] = dep;
        }
        continue;
      }
      state[op] = 2;
      order[emitted++] = op;
      depth--;
    }
  }
  Op *sorted = arena_alloc(&m->arena, sizeof(Op) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    sorted[i] = g->ops.data[order[i]];
    g->values.data[sorted[i].output].producer = i;
  }
  g->ops.data = sorted;
  g->ops.cap = n + 1;
  return true;
}

static bool is_sink(OpKind k) {
  return op_info[k].role == ROLE_LOSS || op_info[k].role == ROLE_METRIC;
}

static void check_graph(Module *m) {
  const Graph *g = &m->graph;
  bool has_loss = false;
  char *used = arena_alloc(&m->arena, (size_t)g->values.len + 1);
  for (int i = 0; i < g->ops.len; i++) {
    has_loss |= op_info[g->ops.data[i].kind].role == ROLE_LOSS;
    for (int j = 0; j < g->ops.data[i].inputs.len; j++) used[g->ops.data[i].inputs.data[j]] = 1;
  }
  if (!has_loss)
    diag_error(m->loc, "network '%s' has no loss layer; training needs one (softmax_loss)",
               m->name);
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    if (!used[op->output] && !is_sink(op->kind))
      op_warning(op, "its output is not used by any layer");
  }
}

/* A relative data path names a file beside the .swn file; made absolute here, so that the
 * program runs from any directory. */
static const char *resolve_path(Arena *a, const char *source, const char *path) {
  if (!path[0] || path[0] == '/') return path;
  const char *slash = strrchr(source, '/');
  char *dir = slash ? arena_strndup(a, source, (size_t)(slash - source)) : ".";
  char *real = realpath(dir, NULL);
  const char *full = arena_printf(a, "%s/%s", real ? real : dir, path);
  free(real);
  return full;
}

static void resolve_data_paths(Module *m) {
  const char *source = m->loc.file ? m->loc.file->name : ".";
  StrList *lists[] = {&m->data.train, &m->data.test};
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < lists[l]->n; i++)
      lists[l]->v[i] = resolve_path(&m->arena, source, lists[l]->v[i]);
  if (m->data.mean_file) m->data.mean_file = resolve_path(&m->arena, source, m->data.mean_file);
}

bool pass_elaborate(Module *m) {
  Elab e = {.m = m};
  symtab_init(&e.consts, &m->arena);
  symtab_init(&e.blocks, &m->arena);
  int errors = diag_error_count();
  eval_settings(&e);
  resolve_data_paths(m);
  check_blocks(&e);
  Scope top = {.prefix = ""};
  init_scope(&e, &top, &m->body);
  elab_scope(&e, &top);
  if (diag_error_count() != errors) return false;
  compact_values(&e);
  if (!topological_order(m)) return false;
  check_graph(m);
  return diag_error_count() == errors;
}
