/* Module and graph construction, the op table, and per-op error reporting. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "op_impl.h"

const OpInfo op_info[OP_COUNT] = {
#define X(id, name, min_in, max_in, fields, infer, flops, bwd, role, family, layouts, saved,       \
          state)                                                                                   \
  {name, min_in, max_in, fields, infer, flops, bwd, role, family, layouts, saved, state},
    SWNC_OPS(X)
#undef X
};

int op_kind_find(const char *name) {
  for (int k = 0; k < OP_COUNT; k++)
    if (!strcmp(op_info[k].name, name)) return k;
  return -1;
}

Module *module_new(void) {
  Module *m = xcalloc(1, sizeof *m, "a module");
  m->options.fusion_threshold = 4 << 20;
  fields_default(train_fields, &m->train);
  fields_default(data_fields, &m->data);
  return m;
}

void module_free(Module *m) {
  if (!m) return;
  arena_free(&m->arena);
  free(m);
}

int graph_add_value(Module *m, const char *name) {
  Value v = {.name = name, .producer = -1};
  vec_push(&m->arena, m->graph.values, v);
  return m->graph.values.len - 1;
}

Op *graph_add_op(Module *m, OpKind kind, const char *name, SrcLoc loc) {
  Op op = {.kind = kind, .name = name, .loc = loc, .output = -1}; /* buffers: the memory plan's */
  vec_push(&m->arena, m->graph.ops, op);
  return &m->graph.ops.data[m->graph.ops.len - 1];
}

#define PLAN_NAME(id, name, ...) name,
#define PLAN_KERNELS(id, name, kernels, ...) "swk_" #kernels,
#define PLAN_LAYOUT(id, name, kernels, layout, ...) LAYOUT_##layout,
const char *conv_plan_name(ConvPlan p) {
  static const char *const names[] = {SWN_CONV_PLANS(PLAN_NAME)};
  return names[p];
}
const char *conv_plan_kernels(ConvPlan p) {
  static const char *const prefixes[] = {SWN_CONV_PLANS(PLAN_KERNELS)};
  return prefixes[p];
}
bool conv_plan_computes(ConvPlan p, ConvComputation c) {
#define PLAN_COMPUTES(id, name, kernels, layout, computations, ...) computations,
  static const unsigned computes[] = {SWN_CONV_PLANS(PLAN_COMPUTES)};
#undef PLAN_COMPUTES
  _Static_assert(SWN_COMPUTES_FORWARD == 1 << CONV_FORWARD &&
                     SWN_COMPUTES_WGRAD == 1 << CONV_WGRAD && SWN_COMPUTES_DGRAD == 1 << CONV_DGRAD,
                 "SWN_COMPUTES_* are bits by ConvComputation");
  unsigned need = c == CONV_BACKWARD ? SWN_COMPUTES_WGRAD | SWN_COMPUTES_DGRAD : 1u << c;
  return (computes[p] & need) == need;
}
bool conv_plan_batched_workspace(ConvPlan p) {
#define PLAN_BATCHED(id, name, kernels, layout, computations, workspace, ...)                      \
  PLAN_WORKSPACE_##workspace,
  enum { PLAN_WORKSPACE_SHARED, PLAN_WORKSPACE_BATCHED };
  static const bool batched[] = {SWN_CONV_PLANS(PLAN_BATCHED)};
#undef PLAN_BATCHED
  return batched[p];
}
Layout conv_plan_layout(ConvPlan p) {
  static const Layout layouts[] = {SWN_CONV_PLANS(PLAN_LAYOUT)};
  return layouts[p];
}
const char *conv_plan_list(void) {
  static char list[PLAN_COUNT * 16];
  if (!list[0])
    for (int p = 0; p < PLAN_COUNT; p++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", p ? ", " : "",
               conv_plan_name((ConvPlan)p));
  return list;
}
const char *conv_computation_name(ConvComputation c) {
  static const char *const names[] = {"forward", "wgrad", "dgrad", "backward"};
  return names[c];
}
bool conv_uses_plan(const Op *op, ConvPlan plan) {
  for (int k = 0; k < CONV_COMPUTATIONS; k++)
    if (op->conv.plan[k] == plan) return true;
  return false;
}

const char *param_role_name(ParamRole r) {
  static const char *const names[] = {"weight", "bias", "scale", "shift"};
  return names[r];
}

Param *op_add_param(Module *m, Op *op, ParamRole role, Shape shape) {
  Param p = {.name = arena_printf(&m->arena, "%s.%s", op->name, param_role_name(role)),
             .role = role,
             .shape = shape};
  vec_push(&m->arena, op->params, p);
  return &op->params.data[op->params.len - 1];
}

int64_t op_param_count(const Op *op) {
  int64_t n = 0;
  for (int i = 0; i < op->params.len; i++) n += shape_elems(op->params.data[i].shape);
  return n;
}

const char *layout_name(Layout l) {
  static const char *const names[] = {"bnrc", "rcnb", "bnrc16"};
  return names[l];
}
const char *dtype_name(DType d) { return d == DT_F32 ? "f32" : "i32"; }

int64_t shape_elems(Shape s) {
  int64_t n = 1;
  for (int i = 0; i < s.rank; i++)
    if (__builtin_mul_overflow(n, s.dim[i], &n)) return INT64_MAX;
  return n;
}

int64_t shape_per_image(Shape s) {
  int64_t n = 1;
  for (int i = 1; i < s.rank; i++)
    if (__builtin_mul_overflow(n, s.dim[i], &n)) return INT64_MAX;
  return n;
}

const char *transform_word(Layout from, Layout to) {
  if (from == LAYOUT_BNRC && to == LAYOUT_RCNB) return "to_rcnb";
  if (from == LAYOUT_RCNB && to == LAYOUT_BNRC) return "to_bnrc";
  if (from == LAYOUT_BNRC && to == LAYOUT_BNRC16) return "to_bnrc16";
  if (from == LAYOUT_BNRC16 && to == LAYOUT_BNRC) return "bnrc16_to_bnrc";
  return NULL;
}

int64_t layout_floats_per_image(Shape s, Layout l) {
  if (l != LAYOUT_BNRC16 || s.rank != 4) return shape_per_image(s);
  Shape padded = s;
  padded.dim[1] = (s.dim[1] + LAYOUT_BLOCK - 1) / LAYOUT_BLOCK * LAYOUT_BLOCK;
  return shape_per_image(padded);
}

const char *shape_str(Shape s) {
  static char bufs[8][96];
  static int next;
  char *b = bufs[next++ % 8];
  if (s.rank == 0) return strcpy(b, "scalar");
  int n = 0;
  for (int i = 0; i < s.rank; i++)
    n += snprintf(b + n, sizeof bufs[0] - (size_t)n, "%s%lld", i ? "x" : "", (long long)s.dim[i]);
  return b;
}

const char *op_describe(Module *m, const Op *op) {
  return arena_printf(&m->arena, "layer '%s' (%s)", op->name, op_info[op->kind].name);
}

static void notes_for_sites(const Op *op) {
  for (const CallSite *s = op->site; s; s = s->outer)
    diag_note(s->loc, "in instance '%s' of block '%s'", s->instance, s->block);
}

void op_error(const Op *op, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(op->loc, "layer '%s' (%s): %s", op->name, op_info[op->kind].name, msg);
  notes_for_sites(op);
}

void op_warning(const Op *op, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_warning(op->loc, "layer '%s' (%s): %s", op->name, op_info[op->kind].name, msg);
  notes_for_sites(op);
}
