/* Lowering the scheduled, planned IR to kernel calls (see lower.h). One function per op kind
 * and direction maps the op's buffers and parameters onto the kernel interface of
 * runtime/kernels.h. */
#include "lower.h"

#include <limits.h>
#include <stdlib.h>

typedef struct Ctx {
  const Module *m;
  Arena *a;
  Lowered *out;
} Ctx;

/* ------------------------------------------------------------------ pointers */

static Ptr buffer_ptr(const Module *m, int buf) {
  if (buf < 0) return (Ptr){.null = true};
  const Buffer *b = &m->plan.buffers.data[buf];
  return (Ptr){.region = b->per_image ? REG_IMAGE : REG_FIXED, .offset = b->offset, .i32 = b->dtype == DT_I32};
}

static const Op *producer(const Module *m, int value) {
  return &m->graph.ops.data[m->graph.values.data[value].producer];
}
static Ptr input(const Module *m, const Op *op, int i) { return buffer_ptr(m, producer(m, op->inputs.data[i])->out_buf); }
static Ptr output(const Module *m, const Op *op) { return buffer_ptr(m, op->out_buf); }
static Ptr dy(const Module *m, const Op *op) { return buffer_ptr(m, op->grad_buf); }
static Ptr saved(const Module *m, const Op *op, int k) { return buffer_ptr(m, k < op->nsaved ? op->saved_buf[k] : -1); }

/* Whether the op works in (R,C,N,B) (kernels that take either layout have a variant for it). */
static bool in_rcnb(const Module *m, const Op *op) { return m->graph.values.data[op->output].layout == LAYOUT_RCNB; }

static Ptr param(const Op *op, ParamRole role, Region region) {
  for (int i = 0; i < op->params.len; i++)
    if (op->params.data[i].role == role) return (Ptr){.region = region, .offset = op->params.data[i].offset};
  return (Ptr){.null = true};
}
static Ptr state(const Op *op) { return (Ptr){.region = REG_STATE, .offset = op->state_offset}; }

/* ------------------------------------------------------------------ building calls */

static Call *begin(Ctx *c, CallList *list, const char *fn, int op) {
  Call call = {.fn = fn, .op = op};
  vec_push(c->a, *list, call);
  return &list->data[list->len - 1];
}

static void arg(Ctx *c, Call *call, CallArg a) { vec_push(c->a, call->args, a); }
static void arg_kind(Ctx *c, Call *call, ArgKind k) { arg(c, call, (CallArg){.kind = k}); }
static void arg_ptr(Ctx *c, Call *call, Ptr p) { arg(c, call, (CallArg){.kind = ARG_PTR, .ptr = p}); }
static void arg_bool(Ctx *c, Call *call, bool b) { arg(c, call, (CallArg){.kind = ARG_BOOL, .i = b}); }
static void arg_int(Ctx *c, Call *call, int64_t i) { arg(c, call, (CallArg){.kind = ARG_INT, .i = i}); }

/* The call's first arguments: the op's struct (if it has one) and the batch. */
static Call *kernel(Ctx *c, CallList *list, const char *fn, int op) {
  Call *call = begin(c, list, fn, op);
  if (c->out->structs.data[op].type) arg_kind(c, call, ARG_STRUCT);
  arg_kind(c, call, ARG_BATCH);
  return call;
}

/* The gradient destination of input i in backward step b: pointer (or NULL) and add flag. */
static void grad_args(Ctx *c, Call *call, const Op *op, const BackwardStep *b, int i) {
  GradMode mode = b->input_grad.data[i];
  arg_ptr(c, call, mode == GRAD_NONE ? (Ptr){.null = true} : dy(c->m, producer(c->m, op->inputs.data[i])));
  arg_bool(c, call, mode == GRAD_ACCUMULATE);
}

/* ------------------------------------------------------------------ kernel structs */

static void field(Ctx *c, KernelStruct *s, const char *name, FieldKind kind, double value) {
  StructField f = {name, kind, value};
  vec_push(c->a, s->fields, f);
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static KernelStruct make_struct(Ctx *c, const Op *op) {
  const Graph *g = &c->m->graph;
  Shape x = op->inputs.len ? g->values.data[op->inputs.data[0]].shape : (Shape){0};
  Shape y = g->values.data[op->output].shape;
  const OpAttrs *a = &op->attr;
  KernelStruct s = {0};
  switch (op->kind) {
  case OP_CONV:
  case OP_POOL: {
    bool conv = op->kind == OP_CONV;
    s.type = conv ? "SwkConv" : "SwkPool";
    const char *names[] = {"ci", "h", "w", "co", "ho", "wo", "kh", "kw", "sh", "sw", "ph", "pw"};
    double values[] = {x.dim[1], x.dim[2], x.dim[3], y.dim[1], y.dim[2], y.dim[3], a->kernel[0], a->kernel[1],
                       a->stride[0], a->stride[1], a->pad[0], a->pad[1]};
    for (int i = 0; i < 12; i++) {
      if (!conv && i == 0) field(c, &s, "c", FIELD_INT, values[0]);
      if (!conv && (i == 0 || i == 3)) continue;
      field(c, &s, names[i], FIELD_INT, values[i]);
    }
    if (conv) {
      field(c, &s, "groups", FIELD_INT, (double)a->groups), field(c, &s, "bias", FIELD_BOOL, a->bias);
      field(c, &s, "filters_kkoi", FIELD_BOOL, 0); /* the pool keeps (No,Ni,K,K) for every plan */
    }
    else field(c, &s, "max", FIELD_BOOL, a->pool == POOL_MAX);
    break;
  }
  case OP_FC:
    s.type = "SwkFc";
    field(c, &s, "in", FIELD_INT, (double)shape_per_image(x));
    field(c, &s, "out", FIELD_INT, (double)a->outputs);
    field(c, &s, "bias", FIELD_BOOL, a->bias);
    break;
  case OP_RELU:
  case OP_SIGMOID:
  case OP_TANH:
    s.type = "SwkAct";
    field(c, &s, "n", FIELD_INT64, (double)shape_per_image(y));
    field(c, &s, "slope", FIELD_FLOAT, op->kind == OP_RELU ? a->slope : 0);
    break;
  case OP_BATCHNORM:
    s.type = "SwkBatchNorm";
    field(c, &s, "c", FIELD_INT, (double)x.dim[1]);
    field(c, &s, "hw", FIELD_INT, (double)(shape_per_image(x) / x.dim[1]));
    field(c, &s, "eps", FIELD_FLOAT, a->eps);
    field(c, &s, "momentum", FIELD_FLOAT, a->momentum);
    field(c, &s, "affine", FIELD_BOOL, a->affine);
    break;
  case OP_LRN:
    s.type = "SwkLrn";
    field(c, &s, "c", FIELD_INT, (double)x.dim[1]);
    field(c, &s, "hw", FIELD_INT, (double)(x.dim[2] * x.dim[3]));
    field(c, &s, "size", FIELD_INT, (double)a->local_size);
    field(c, &s, "alpha", FIELD_FLOAT, a->alpha);
    field(c, &s, "beta", FIELD_FLOAT, a->beta);
    field(c, &s, "k", FIELD_FLOAT, a->k);
    break;
  case OP_DROPOUT:
    s.type = "SwkDropout";
    field(c, &s, "n", FIELD_INT64, (double)shape_per_image(y));
    field(c, &s, "ratio", FIELD_FLOAT, a->ratio);
    /* a 53-bit salt, so that it survives the double in StructField exactly */
    field(c, &s, "layer", FIELD_UINT64, (double)(fnv(14695981039346656037ull, op->name, strlen(op->name)) >> 11));
    break;
  case OP_SOFTMAX_LOSS:
    s.type = "SwkSoftmaxLoss";
    field(c, &s, "classes", FIELD_INT, (double)x.dim[1]);
    field(c, &s, "loss_weight", FIELD_FLOAT, a->loss_weight);
    break;
  default: break;
  }
  return s;
}

/* The first two arguments of concat and add, both directions: the input count, then the
 * per-image size of each input (concat) or of all of them (add). */
static void join_args(Ctx *c, Call *k, const Op *op) {
  const Graph *g = &c->m->graph;
  arg_int(c, k, op->inputs.len);
  if (op->kind == OP_CONCAT) {
    CallArg sizes = {.kind = ARG_SIZES};
    for (int j = 0; j < op->inputs.len; j++) vec_push(c->a, sizes.sizes, shape_per_image(g->values.data[op->inputs.data[j]].shape));
    arg(c, k, sizes);
  } else {
    arg(c, k, (CallArg){.kind = ARG_INT64, .i = shape_per_image(g->values.data[op->output].shape)});
  }
}

/* A convolution goes through the runtime's dispatcher (runtime/conv.c), which runs each
 * computation in its plan, converting operands where a plan's layout is not the tensors', and
 * under --autotune times the other plan too. Its first arguments: struct, batch, step, the
 * layer, and the plan word (SWN_CONV_* in swnc_rt.h). */
enum { WORD_RCNB = 1, WORD_IMPLICIT_LEGAL = 16 }; /* SWN_CONV_RCNB, SWN_CONV_IMPLICIT_LEGAL */
static int word_implicit(int computation) { return 2 << computation; } /* SWN_CONV_IMPLICIT(c) */

static Call *conv_call(Ctx *c, CallList *list, const char *fn, int i) {
  const Op *op = &c->m->graph.ops.data[i];
  const ConvChoice *ch = &op->conv;
  int word = in_rcnb(c->m, op) ? WORD_RCNB : 0;
  for (int k = 0; k < CONV_COMPUTATIONS; k++)
    if (ch->plan[k] == PLAN_IMPLICIT) word |= word_implicit(k);
  if (ch->costed && !ch->illegal[PLAN_IMPLICIT]) word |= WORD_IMPLICIT_LEGAL;
  Call *k = kernel(c, list, fn, i);
  arg_kind(c, k, ARG_STEP), arg_int(c, k, i), arg_int(c, k, word);
  return k;
}

/* swk_to_rcnb or swk_to_bnrc (c, h, w, batch, from, to, add) of the op's tensor shape. */
static Call *transform_call(Ctx *c, CallList *list, const Op *op, Layout to) {
  Shape s = c->m->graph.values.data[op->output].shape;
  Call *k = begin(c, list, to == LAYOUT_RCNB ? "swk_to_rcnb" : "swk_to_bnrc", (int)(op - c->m->graph.ops.data));
  arg_int(c, k, s.dim[1]), arg_int(c, k, s.dim[2]), arg_int(c, k, s.dim[3]), arg_kind(c, k, ARG_BATCH);
  return k;
}

/* ------------------------------------------------------------------ forward */

static void lower_forward(Ctx *c, int i) {
  const Module *m = c->m;
  const Op *op = &m->graph.ops.data[i];
  CallList *f = &c->out->forward;
  Call *k;
  switch (op->kind) {
  case OP_INPUT:
  case OP_LABEL: return; /* the runtime writes them */
  case OP_CONV:
    k = conv_call(c, f, "swn_conv_forward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_BIAS, REG_PARAMS)), arg_ptr(c, k, output(m, op));
    return;
  case OP_TRANSFORM:
    k = transform_call(c, f, op, op->attr.to);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, output(m, op)), arg_bool(c, k, false);
    return;
  case OP_POOL:
    k = kernel(c, f, in_rcnb(m, op) ? "swk_pool_rcnb_forward" : "swk_pool_forward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, output(m, op)), arg_ptr(c, k, saved(m, op, 0));
    return;
  case OP_FC:
    k = kernel(c, f, "swk_fc_forward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_BIAS, REG_PARAMS)), arg_ptr(c, k, output(m, op));
    return;
  case OP_RELU:
  case OP_SIGMOID:
  case OP_TANH:
    k = kernel(c, f, op->kind == OP_RELU ? "swk_relu_forward" : op->kind == OP_SIGMOID ? "swk_sigmoid_forward" : "swk_tanh_forward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, output(m, op));
    return;
  case OP_BATCHNORM:
    k = kernel(c, f, "swk_batchnorm_forward", i);
    arg_kind(c, k, ARG_TRAIN), arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, param(op, PARAM_SCALE, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_SHIFT, REG_PARAMS)), arg_ptr(c, k, output(m, op)), arg_ptr(c, k, saved(m, op, 0));
    arg_ptr(c, k, state(op));
    return;
  case OP_LRN:
    k = kernel(c, f, "swk_lrn_forward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, output(m, op)), arg_ptr(c, k, saved(m, op, 0));
    return;
  case OP_DROPOUT:
    k = kernel(c, f, "swk_dropout_forward", i);
    arg_kind(c, k, ARG_TRAIN), arg_kind(c, k, ARG_SEED), arg_kind(c, k, ARG_ITERATION);
    arg_kind(c, k, ARG_FIRST_IMAGE), arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, output(m, op));
    return;
  case OP_CONCAT:
  case OP_ADD: {
    bool concat = op->kind == OP_CONCAT;
    k = begin(c, f, concat ? "swk_concat_forward" : "swk_add_forward", i);
    join_args(c, k, op);
    arg_kind(c, k, ARG_BATCH);
    CallArg ptrs = {.kind = ARG_INPUTS};
    for (int j = 0; j < op->inputs.len; j++) vec_push(c->a, ptrs.ptrs, input(m, op, j));
    arg(c, k, ptrs);
    arg_ptr(c, k, output(m, op));
    return;
  }
  case OP_SOFTMAX_LOSS:
    k = kernel(c, f, "swk_softmax_loss_forward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, input(m, op, 1)), arg_ptr(c, k, saved(m, op, 0));
    arg_ptr(c, k, output(m, op));
    return;
  case OP_ACCURACY:
    k = begin(c, f, "swk_accuracy_forward", i);
    arg_int(c, k, m->graph.values.data[op->inputs.data[0]].shape.dim[1]), arg_int(c, k, op->attr.top);
    arg_kind(c, k, ARG_BATCH), arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, input(m, op, 1));
    arg_ptr(c, k, output(m, op));
    return;
  case OP_COUNT: return;
  }
}

/* ------------------------------------------------------------------ backward */

static void lower_backward(Ctx *c, const BackwardStep *b) {
  const Module *m = c->m;
  int i = b->op;
  const Op *op = &m->graph.ops.data[i];
  CallList *f = &c->out->backward;
  Call *k;
  switch (op->kind) {
  case OP_CONV:
    k = conv_call(c, f, "swn_conv_backward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS)), arg_ptr(c, k, dy(m, op));
    grad_args(c, k, op, b, 0);
    arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_GRADS)), arg_ptr(c, k, param(op, PARAM_BIAS, REG_GRADS));
    return;
  case OP_FC:
    k = kernel(c, f, "swk_fc_backward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS)), arg_ptr(c, k, dy(m, op));
    grad_args(c, k, op, b, 0);
    arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_GRADS)), arg_ptr(c, k, param(op, PARAM_BIAS, REG_GRADS));
    arg_kind(c, k, ARG_WORKSPACE);
    return;
  case OP_TRANSFORM: /* the gradient goes back the other way */
    k = transform_call(c, f, op, op->attr.to == LAYOUT_RCNB ? LAYOUT_BNRC : LAYOUT_RCNB);
    arg_ptr(c, k, dy(m, op)), grad_args(c, k, op, b, 0);
    return;
  case OP_POOL:
    k = kernel(c, f, in_rcnb(m, op) ? "swk_pool_rcnb_backward" : "swk_pool_backward", i);
    arg_ptr(c, k, dy(m, op)), arg_ptr(c, k, saved(m, op, 0)), grad_args(c, k, op, b, 0);
    return;
  case OP_RELU:
  case OP_SIGMOID:
  case OP_TANH:
    k = kernel(c, f, op->kind == OP_RELU ? "swk_relu_backward" : op->kind == OP_SIGMOID ? "swk_sigmoid_backward" : "swk_tanh_backward", i);
    arg_ptr(c, k, output(m, op)), arg_ptr(c, k, dy(m, op)), grad_args(c, k, op, b, 0);
    return;
  case OP_BATCHNORM:
    k = kernel(c, f, "swk_batchnorm_backward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, param(op, PARAM_SCALE, REG_PARAMS)), arg_ptr(c, k, dy(m, op));
    arg_ptr(c, k, saved(m, op, 0)), grad_args(c, k, op, b, 0);
    arg_ptr(c, k, param(op, PARAM_SCALE, REG_GRADS)), arg_ptr(c, k, param(op, PARAM_SHIFT, REG_GRADS));
    return;
  case OP_LRN:
    k = kernel(c, f, "swk_lrn_backward", i);
    arg_ptr(c, k, input(m, op, 0)), arg_ptr(c, k, output(m, op)), arg_ptr(c, k, saved(m, op, 0));
    arg_ptr(c, k, dy(m, op)), grad_args(c, k, op, b, 0);
    return;
  case OP_DROPOUT:
    k = kernel(c, f, "swk_dropout_backward", i);
    arg_kind(c, k, ARG_SEED), arg_kind(c, k, ARG_ITERATION), arg_kind(c, k, ARG_FIRST_IMAGE);
    arg_ptr(c, k, dy(m, op)), grad_args(c, k, op, b, 0);
    return;
  case OP_CONCAT:
  case OP_ADD: {
    bool concat = op->kind == OP_CONCAT;
    k = begin(c, f, concat ? "swk_concat_backward" : "swk_add_backward", i);
    join_args(c, k, op);
    arg_kind(c, k, ARG_BATCH), arg_ptr(c, k, dy(m, op));
    CallArg ptrs = {.kind = ARG_OUTPUTS}, adds = {.kind = ARG_BOOLS};
    for (int j = 0; j < op->inputs.len; j++) {
      GradMode mode = b->input_grad.data[j];
      vec_push(c->a, ptrs.ptrs, mode == GRAD_NONE ? (Ptr){.null = true} : dy(m, producer(m, op->inputs.data[j])));
      vec_push(c->a, adds.bools, mode == GRAD_ACCUMULATE);
    }
    arg(c, k, ptrs), arg(c, k, adds);
    return;
  }
  case OP_SOFTMAX_LOSS:
    k = kernel(c, f, "swk_softmax_loss_backward", i);
    arg_ptr(c, k, saved(m, op, 0)), arg_ptr(c, k, input(m, op, 1)), grad_args(c, k, op, b, 0);
    return;
  default: return; /* input, label and accuracy have no backward step */
  }
}

/* ------------------------------------------------------------------ update, workspace */

/* Updates op i's parameters; *index counts parameters in pool order. The update of a bucket's
 * parameters first waits for that bucket's gradients (a distributed program's allreduce). */
static void lower_update(Ctx *c, int i, int *index) {
  const Op *op = &c->m->graph.ops.data[i];
  const Fusion *f = &c->m->fusion;
  for (int p = 0; p < op->params.len; p++, (*index)++) {
    const Param *q = &op->params.data[p];
    for (int b = 0; b < f->buckets.len; b++)
      if (f->buckets.data[b].first_param == *index) {
        Call *w = begin(c, &c->out->update, "swn_gradients_wait", i);
        arg_kind(c, w, ARG_STEP), arg_int(c, w, b);
      }
    Call *k = begin(c, &c->out->update, "swk_sgd_update", i);
    arg(c, k, (CallArg){.kind = ARG_INT64, .i = shape_elems(q->shape)});
    arg(c, k, (CallArg){.kind = ARG_LR, .scale = q->lr_mult});
    arg(c, k, (CallArg){.kind = ARG_DECAY, .scale = q->decay_mult});
    arg_kind(c, k, ARG_MOMENTUM);
    arg_ptr(c, k, (Ptr){.region = REG_PARAMS, .offset = q->offset});
    arg_ptr(c, k, (Ptr){.region = REG_GRADS, .offset = q->offset});
    arg_ptr(c, k, (Ptr){.region = REG_MOMENTUM, .offset = q->offset});
  }
}

static void lower_workspace(Ctx *c, int i) {
  const Op *op = &c->m->graph.ops.data[i];
  if (op->kind != OP_CONV && op->kind != OP_FC) return;
  Call *k = begin(c, &c->out->workspace, op->kind == OP_CONV ? "swk_conv_workspace" : "swk_fc_workspace", i);
  arg_kind(c, k, ARG_STRUCT);
}

/* ------------------------------------------------------------------ the module */

/* Inputs feeding one output of a weight (for xavier and msra initialisation). */
static int64_t param_fan_in(const Param *p) {
  if (p->role != PARAM_WEIGHT) return 1;
  return shape_per_image(p->shape); /* conv: ci/g * kh * kw; fc: inputs */
}

static uint64_t network_hash(const Module *m) {
  uint64_t h = 14695981039346656037ull;
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    for (int k = 0; k < op->params.len; k++) {
      const Param *p = &op->params.data[k];
      h = fnv(h, p->name, strlen(p->name) + 1);
      h = fnv(h, &p->shape.rank, sizeof p->shape.rank);
      h = fnv(h, p->shape.dim, sizeof(int64_t) * (size_t)p->shape.rank);
      h = fnv(h, &p->offset, sizeof p->offset);
    }
  }
  return fnv(h, &m->plan.state_words, sizeof m->plan.state_words);
}

/* The runtime feeds one image input and one label input. */
static bool find_io(const Module *m, Lowered *out) {
  out->input_op = out->label_op = out->loss_op = -1;
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    int *slot = op->kind == OP_INPUT ? &out->input_op : op->kind == OP_LABEL ? &out->label_op
              : op->kind == OP_SOFTMAX_LOSS ? &out->loss_op : NULL;
    if (!slot) continue;
    if (*slot >= 0 && op->kind != OP_SOFTMAX_LOSS) {
      op_error(op, "the runtime feeds one %s layer, and '%s' is one already", op_info[op->kind].name,
               m->graph.ops.data[*slot].name);
      return false;
    }
    if (*slot < 0) *slot = i;
  }
  if (out->input_op < 0 || out->label_op < 0) {
    diag_error(m->loc, "network '%s' needs an input and a label layer to be trained", m->name);
    return false;
  }
  return true;
}

/* The tables the runtime reads: parameters, state, metrics, and where input and labels go. */
static void describe(Ctx *c) {
  const Module *m = c->m;
  const Graph *g = &m->graph;
  Lowered *l = c->out;
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    for (int k = 0; k < op->params.len; k++) {
      const Param *p = &op->params.data[k];
      ParamEntry e = {p->name, p->shape.rank, {0}, p->offset, shape_elems(p->shape), param_fan_in(p),
                      p->lr_mult, p->decay_mult, p->init_arg, p->init};
      for (int d = 0; d < p->shape.rank; d++) e.dims[d] = p->shape.dim[d];
      vec_push(c->a, l->params, e);
    }
    if (op->state_words) {
      int64_t half = op->state_words / 2;
      StateEntry mean = {arena_printf(c->a, "%s.running_mean", op->name), op->state_offset, half, 0.0};
      StateEntry var = {arena_printf(c->a, "%s.running_var", op->name), op->state_offset + half, half, 1.0};
      vec_push(c->a, l->state, mean);
      vec_push(c->a, l->state, var);
    }
    if (op->kind == OP_SOFTMAX_LOSS || op->kind == OP_ACCURACY) {
      MetricEntry e = {op->name, m->plan.buffers.data[op->out_buf].offset, op->kind == OP_SOFTMAX_LOSS};
      vec_push(c->a, l->metrics, e);
    }
  }
  Shape in = g->values.data[g->ops.data[l->input_op].output].shape;
  l->in_c = in.dim[1];
  l->in_h = in.rank == 4 ? in.dim[2] : 1;
  l->in_w = in.rank == 4 ? in.dim[3] : 1;
  l->input_offset = m->plan.buffers.data[g->ops.data[l->input_op].out_buf].offset;
  l->label_offset = m->plan.buffers.data[g->ops.data[l->label_op].out_buf].offset;
  l->classes = g->values.data[g->ops.data[l->loss_op].inputs.data[0]].shape.dim[1];
}

/* A relative data path names a file beside the .swn file; made absolute so the program runs
 * from any directory. */
static const char *resolve_path(Arena *a, const char *source, const char *path) {
  if (!path[0] || path[0] == '/') return path;
  const char *slash = strrchr(source, '/');
  char *dir = slash ? arena_strndup(a, source, (size_t)(slash - source)) : ".";
  char *real = realpath(dir, NULL);
  const char *full = arena_printf(a, "%s/%s", real ? real : dir, path);
  free(real);
  return full;
}

static void resolve_files(Arena *a, const char *source, const StrList *in, StrList *out) {
  *out = *in;
  for (int i = 0; i < in->n; i++) out->v[i] = resolve_path(a, source, in->v[i]);
}

bool lower_module(const Module *m, const char *source, Arena *a, Lowered *out) {
  *out = (Lowered){.m = m};
  resolve_files(a, source, &m->data.train, &out->train_files);
  resolve_files(a, source, &m->data.test, &out->test_files);
  if (!find_io(m, out)) return false;
  Ctx c = {m, a, out};
  for (int i = 0; i < m->graph.ops.len; i++) {
    KernelStruct s = make_struct(&c, &m->graph.ops.data[i]);
    vec_push(a, out->structs, s);
  }
  for (int i = 0; i < m->schedule.forward.len; i++) lower_forward(&c, m->schedule.forward.data[i]);
  for (int i = 0; i < m->schedule.backward.len; i++) {
    lower_backward(&c, &m->schedule.backward.data[i]);
    for (int b = 0; b < m->fusion.buckets.len; b++) /* buckets this step completes */
      if (m->fusion.buckets.data[b].ready_step == i) {
        const Bucket *bk = &m->fusion.buckets.data[b];
        Call *k = begin(&c, &out->backward, "swn_gradients_ready", m->schedule.backward.data[i].op);
        arg_kind(&c, k, ARG_STEP), arg_int(&c, k, b);
        arg(&c, k, (CallArg){.kind = ARG_INT64, .i = bk->offset});
        arg(&c, k, (CallArg){.kind = ARG_INT64, .i = bk->words});
      }
  }
  out->nbuckets = m->fusion.buckets.len;
  int index = 0;
  for (int i = 0; i < m->schedule.update_ops.len; i++) lower_update(&c, m->schedule.update_ops.data[i], &index);
  for (int i = 0; i < m->graph.ops.len; i++) lower_workspace(&c, i);
  out->hash = network_hash(m);
  describe(&c);
  /* what the runtime's fixed-size tables can hold */
  if (m->data.mean.n > 4 || (m->data.mean.n > 1 && m->data.mean.n != out->in_c)) {
    diag_error(m->loc, "data.mean has %d values, but the input has %lld channels (give one value or one per channel)",
               m->data.mean.n, (long long)out->in_c);
    return false;
  }
  return true;
}
