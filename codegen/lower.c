/* Lowering the scheduled, planned IR to kernel calls and constants (see lower.h). Each op's
 * kernel family (the op table's `family` column) maps its buffers and parameters onto the
 * kernel interface of runtime/kernels.h; every call is then checked against the contract. */
#include "lower.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

typedef struct Ctx {
  const Module *m;
  Arena *a;
  Lowered *out;
  StepKind step;          /* whose memory plan the buffers come from */
  bool backward;          /* lowering backward: outputs are read where backward recomputed them */
  const char **objects;   /* per op: the global holding its kernel struct, or NULL */
  const char **epilogues; /* per op: the global holding its epilogue's SwkAct, or NULL */
  bool ok;
} Ctx;

_Static_assert(SwnStep_fixed == SwnStep_image + REG_FIXED &&
                   SwnStep_params == SwnStep_image + REG_PARAMS &&
                   SwnStep_grads == SwnStep_image + REG_GRADS &&
                   SwnStep_momentum == SwnStep_image + REG_MOMENTUM &&
                   SwnStep_state == SwnStep_image + REG_STATE,
               "the regions are SwnStep's pointer fields in Region order");

int arg_step_field(ArgKind k) {
  switch (k) {
  case ARG_SEED: return SwnStep_seed;
  case ARG_ITERATION: return SwnStep_iteration;
  case ARG_FIRST_IMAGE: return SwnStep_first_image;
  case ARG_WORKSPACE: return SwnStep_ws;
  case ARG_DECAY: return SwnStep_weight_decay;
  case ARG_MOMENTUM: return SwnStep_momentum_coef;
  case ARG_FOLD_SCALE: return SwnStep_fold_scale;
  case ARG_FOLD_KEEP: return SwnStep_fold_keep;
  case ARG_BATCH:
  case ARG_STRUCT:
  case ARG_PTR:
  case ARG_INPUTS:
  case ARG_OUTPUTS:
  case ARG_BOOLS:
  case ARG_SIZES:
  case ARG_BOOL:
  case ARG_INT:
  case ARG_INT64:
  case ARG_LR:
  case ARG_FLOAT:
  case ARG_STEP: return -1;
  }
  return -1;
}

/* How an argument crosses the boundary (checked against the callee's parameter). */
static AbiCode arg_code(ArgKind k) {
  switch (k) {
  case ARG_BATCH:
  case ARG_INT: return ABI_I32;
  case ARG_BOOL: return ABI_BOOL;
  case ARG_SEED:
  case ARG_ITERATION:
  case ARG_FIRST_IMAGE: return ABI_U64;
  case ARG_INT64: return ABI_I64;
  case ARG_LR:
  case ARG_DECAY:
  case ARG_MOMENTUM:
  case ARG_FLOAT:
  case ARG_FOLD_SCALE:
  case ARG_FOLD_KEEP: return ABI_F32;
  case ARG_WORKSPACE:
  case ARG_STRUCT:
  case ARG_PTR:
  case ARG_INPUTS:
  case ARG_OUTPUTS:
  case ARG_BOOLS:
  case ARG_SIZES:
  case ARG_STEP: return ABI_PTR;
  }
  return ABI_PTR;
}

/* ------------------------------------------------------------------ pointers */

static Ptr buffer_ptr(const Ctx *c, int buf) {
  if (buf < 0) return (Ptr){.null = true};
  const Buffer *b = &c->m->plan.step[c->step].buffers.data[buf];
  return (Ptr){.region = b->per_image ? REG_IMAGE : REG_FIXED,
               .offset = b->offset,
               .i32 = b->dtype == DT_I32};
}

static const Op *producer(const Module *m, int value) {
  return &m->graph.ops.data[m->graph.values.data[value].producer];
}
/* Where op's output is read: in backward, from its recomputed buffer if it has one. */
static Ptr output(const Ctx *c, const Op *op) {
  const OpBuffers *b = &op->buf[c->step];
  return buffer_ptr(c, c->backward && b->recomputed >= 0 ? b->recomputed : b->out);
}
static Ptr input(const Ctx *c, const Op *op, int i) {
  return output(c, producer(c->m, op->inputs.data[i]));
}
static Ptr dy(const Ctx *c, const Op *op) { return buffer_ptr(c, op->buf[c->step].grad); }
static Ptr saved(const Ctx *c, const Op *op) {
  return buffer_ptr(c, op->nsaved ? op->buf[c->step].saved[0] : -1);
}

/* The layout a transform op converts from: its input's. */
static Layout transform_source(const Module *m, const Op *op) {
  return m->graph.values.data[op->inputs.data[0]].layout;
}

static const Param *role_param(const Op *op, ParamRole role) {
  for (int i = 0; i < op->params.len; i++)
    if (op->params.data[i].role == role) return &op->params.data[i];
  return NULL;
}
static Ptr param(const Op *op, ParamRole role, Region region) {
  const Param *q = role_param(op, role);
  return q ? (Ptr){.region = region, .offset = q->offset} : (Ptr){.null = true};
}
static Ptr state(const Op *op) { return (Ptr){.region = REG_STATE, .offset = op->state_offset}; }
/* Where backward writes parameter gradients: their own pool, or (pass fold-gradients) SGD's
 * momentum. */
static Region gradients(const Ctx *c) {
  return c->m->schedule.gradients_in_momentum ? REG_MOMENTUM : REG_GRADS;
}

/* ------------------------------------------------------------------ building calls */

static Call *begin(Ctx *c, CallList *list, const char *fn, int op) {
  const AbiFunction *decl = abi_function(fn);
  if (!decl) {
    diag_error((SrcLoc){0},
               "internal: '%s' is not declared in the contract (runtime/kernels.h, swnc_rt.h)", fn);
    c->ok = false;
  }
  Call call = {.fn = decl,
               .op = op,
               .label = op >= 0 ? c->m->graph.ops.data[op].name : NULL,
               .object = op >= 0 ? c->objects[op] : NULL};
  vec_push(c->a, *list, call);
  return &list->data[list->len - 1];
}

static void arg(Ctx *c, Call *call, CallArg a) { vec_push(c->a, call->args, a); }
static void arg_kind(Ctx *c, Call *call, ArgKind k) { arg(c, call, (CallArg){.kind = k}); }
static void arg_ptr(Ctx *c, Call *call, Ptr p) {
  arg(c, call, (CallArg){.kind = ARG_PTR, .ptr = p});
}
static void arg_bool(Ctx *c, Call *call, bool b) {
  arg(c, call, (CallArg){.kind = ARG_BOOL, .i = b});
}

/* A backward kernel's parameter gradients (the weight's or scale's, the bias's or shift's) and
 * how it stores them (runtime/kernels.h): the plain gradient, or (pass fold-gradients) added into
 * SGD's momentum, scaled by the learning rate over the ranks times each one's lr_mult. */
static void param_gradient_args(Ctx *c, Call *k, const Op *op, ParamRole weight, ParamRole bias) {
  bool folded = c->m->schedule.gradients_in_momentum;
  ParamRole roles[2] = {weight, bias};
  for (int r = 0; r < 2; r++) arg_ptr(c, k, param(op, roles[r], gradients(c)));
  for (int r = 0; r < 2; r++) {
    const Param *q = role_param(op, roles[r]);
    double lr_mult = q ? q->lr_mult : 1;
    arg(c, k,
        (CallArg){.kind = folded ? ARG_FOLD_SCALE : ARG_FLOAT, .scale = folded ? lr_mult : 1});
  }
  if (folded)
    arg_kind(c, k, ARG_FOLD_KEEP);
  else
    arg(c, k, (CallArg){.kind = ARG_FLOAT, .scale = 0});
}
static void arg_int(Ctx *c, Call *call, int64_t i) {
  arg(c, call, (CallArg){.kind = ARG_INT, .i = i});
}

/* The call's first arguments: the op's struct (if it has one) and the batch. */
static Call *kernel(Ctx *c, CallList *list, const char *fn, int op) {
  Call *call = begin(c, list, fn, op);
  if (call->object) arg_kind(c, call, ARG_STRUCT);
  arg_kind(c, call, ARG_BATCH);
  return call;
}

/* The gradient destination of input i in backward step b: pointer (or NULL) and add flag. */
static void grad_args(Ctx *c, Call *call, const Op *op, const BackwardStep *b, int i) {
  GradMode mode = b->input_grad.data[i];
  arg_ptr(c, call,
          mode == GRAD_NONE ? (Ptr){.null = true} : dy(c, producer(c->m, op->inputs.data[i])));
  arg_bool(c, call, mode == GRAD_ACCUMULATE);
}

/* Every argument has the type its parameter declares, in number and order. */
static void check_call(Ctx *c, const Call *call) {
  if (!call->fn) return;
  bool fits = call->args.len == call->fn->nparams;
  for (int i = 0; fits && i < call->args.len; i++)
    fits = arg_code(call->args.data[i].kind) == call->fn->params[i].code;
  if (!fits) {
    diag_error((SrcLoc){0}, "internal: the call of '%s' for '%s' does not match its declaration",
               call->fn->name, call->label ? call->label : "the network");
    c->ok = false;
  }
}

/* ------------------------------------------------------------------ constants */

static Datum d_int(int64_t i) { return (Datum){.kind = DATUM_INT, .i = i}; }
static Datum d_float(double f) { return (Datum){.kind = DATUM_FLOAT, .f = f}; }
static Datum d_string(const char *s) { return (Datum){.kind = DATUM_STRING, .s = s}; }
static Datum d_symbol(const char *s) { return (Datum){.kind = DATUM_SYMBOL, .s = s}; }
static Datum d_list(Arena *a, int n) {
  return (Datum){
      .kind = DATUM_LIST, .items = arena_alloc(a, sizeof(Datum) * (size_t)(n + 1)), .n = n};
}
static Datum d_struct(Arena *a, AbiStructId id) { return d_list(a, abi_structs[id].nfields); }
/* An enum setting: its number, shown with the word the schema gives it. */
static Datum d_enum(const FieldSpec *specs, const char *key, int value) {
  Datum d = d_int(value);
  d.s = field_find(specs, key)->words[value];
  return d;
}

static void add_global(Ctx *c, const char *name, AbiStructId type, int length, Datum value,
                       const char *comment) {
  Global g = {name, {ABI_STRUCT, abi_structs[type].name, name, length}, value, comment};
  vec_push(c->a, c->out->globals, g);
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* ------------------------------------------------------------------ kernel structs */

/* The tiling word of computation c's plan (0: the kernel's rule, or the layer was not costed). */
static int64_t conv_tiling(const Op *op, ConvComputation c) {
  return op->conv.costed ? op->conv.tiling[c][op->conv.plan[c]] : 0;
}

/* Whether the op's kernels apply its ReLU epilogue, so that it needs no call of its own: a
 * convolution's (SwkConv.relu: as the direct and Winograd plans store y, else the dispatcher
 * right after), a batch norm's (SwkBatchNorm.relu; a ReLU6 too, with relu_ceiling) and a
 * residual sum's (swk_add_forward's relu) as they store y, where it saves a pass over the output
 * (runtime/kernels.h). */
static bool kernel_applies_epilogue(const Op *op) {
  int family = op_info[op->kind].family;
  if (!op->epilogue.on) return false;
  if (op->epilogue.kind == OP_RELU6) return family == FAMILY_BATCHNORM; /* relu_ceiling */
  return op->epilogue.kind == OP_RELU &&
         (family == FAMILY_CONV || family == FAMILY_BATCHNORM || op->kind == OP_ADD);
}

/* The slope those kernels are passed with it (0 where they do not apply it). */
static double kernel_relu_slope(const Op *op) {
  return kernel_applies_epilogue(op) ? op->epilogue.slope : 0;
}

static Datum conv_struct(Ctx *c, int i, Shape x, Shape y, const OpAttrs *a) {
  const Op *op = &c->m->graph.ops.data[i];
  Datum s = d_struct(c->a, ABI_SwkConv);
  enum { FIELDS = SwkConv_dx_relu_ceiling + 1 }; /* all of them; the float ones are set after */
  int64_t v[FIELDS] = {[SwkConv_ci] = x.dim[1],
                       [SwkConv_h] = x.dim[2],
                       [SwkConv_w] = x.dim[3],
                       [SwkConv_co] = y.dim[1],
                       [SwkConv_ho] = y.dim[2],
                       [SwkConv_wo] = y.dim[3],
                       [SwkConv_kh] = a->kernel[0],
                       [SwkConv_kw] = a->kernel[1],
                       [SwkConv_sh] = a->stride[0],
                       [SwkConv_sw] = a->stride[1],
                       [SwkConv_ph] = a->pad[0],
                       [SwkConv_pw] = a->pad[1],
                       [SwkConv_dh] = a->dilation[0],
                       [SwkConv_dw] = a->dilation[1],
                       [SwkConv_groups] = a->groups,
                       [SwkConv_bias] = a->bias,
                       [SwkConv_filters_kkoi] = 0, /* the pool keeps (No,Ni,K,K) */
                       [SwkConv_no_input_gradient] = !schedule_needs_input_gradient(c->m, i),
                       [SwkConv_forward_tiling] = conv_tiling(op, CONV_FORWARD),
                       [SwkConv_dgrad_tiling] = conv_tiling(op, CONV_DGRAD),
                       [SwkConv_wgrad_tiling] = conv_tiling(op, CONV_WGRAD),
                       [SwkConv_x_planar] = op->conv.x_planar,
                       [SwkConv_relu] = kernel_applies_epilogue(op),
                       [SwkConv_dx_relu] = op->dx_carries.on};
  for (int i = 0; i < s.n; i++) s.items[i] = d_int(v[i]);
  s.items[SwkConv_relu_slope] = d_float(kernel_relu_slope(op));
  s.items[SwkConv_dx_relu_slope] = d_float(op->dx_carries.on ? op->dx_carries.slope : 0);
  s.items[SwkConv_dx_relu_ceiling] =
      d_float(op->dx_carries.on && op->dx_carries.kind == OP_RELU6 ? 6 : 0);
  return s;
}

/* A transposed convolution's struct: the convolution from its output y to its input x
 * (runtime/conv.c runs it the other way), which always computes its input gradient (the
 * deconv's forward), has no bias of its own (the deconv's is on y's side) and no epilogue. */
static Datum deconv_struct(Ctx *c, int i, Shape x, Shape y, const OpAttrs *a) {
  Datum s = conv_struct(c, i, y, x, a);
  s.items[SwkConv_no_input_gradient] = d_int(0);
  s.items[SwkConv_bias] = d_int(0);
  return s;
}

static Datum pool_struct(Ctx *c, Shape x, Shape y, const OpAttrs *a) {
  Datum s = d_struct(c->a, ABI_SwkPool);
  int64_t v[] = {[SwkPool_c] = x.dim[1],      [SwkPool_h] = x.dim[2],
                 [SwkPool_w] = x.dim[3],      [SwkPool_ho] = y.dim[2],
                 [SwkPool_wo] = y.dim[3],     [SwkPool_kh] = a->kernel[0],
                 [SwkPool_kw] = a->kernel[1], [SwkPool_sh] = a->stride[0],
                 [SwkPool_sw] = a->stride[1], [SwkPool_ph] = a->pad[0],
                 [SwkPool_pw] = a->pad[1],    [SwkPool_max] = a->pool == POOL_MAX};
  for (int i = 0; i < s.n; i++) s.items[i] = d_int(v[i]);
  return s;
}

/* Floats per image of value v in its layout: element-wise kernels run over them all. */
static int64_t value_floats(const Graph *g, int v) {
  return layout_floats_per_image(g->values.data[v].shape, g->values.data[v].layout);
}

static Datum act_struct(Ctx *c, int y, double slope) {
  Datum s = d_struct(c->a, ABI_SwkAct);
  s.items[SwkAct_n] = d_int(value_floats(&c->m->graph, y)), s.items[SwkAct_slope] = d_float(slope);
  return s;
}

/* The op's kernel-parameter struct, or a ZERO datum if its kernels take none. */
static Datum make_struct(Ctx *c, const Op *op, AbiStructId *type) {
  const Graph *g = &c->m->graph;
  Shape x = op->inputs.len ? g->values.data[op->inputs.data[0]].shape : (Shape){0};
  Shape y = g->values.data[op->output].shape;
  const OpAttrs *a = &op->attr;
  Datum s = {0};
  switch (op_info[op->kind].family) {
  case FAMILY_CONV: *type = ABI_SwkConv; return conv_struct(c, (int)(op - g->ops.data), x, y, a);
  case FAMILY_DECONV:
    *type = ABI_SwkConv;
    return deconv_struct(c, (int)(op - g->ops.data), x, y, a);
  case FAMILY_POOL: *type = ABI_SwkPool; return pool_struct(c, x, y, a);
  case FAMILY_FC:
    s = d_struct(c->a, *type = ABI_SwkFc);
    s.items[SwkFc_in] = d_int(shape_per_image(x)), s.items[SwkFc_out] = d_int(a->outputs);
    s.items[SwkFc_bias] = d_int(a->bias);
    return s;
  case FAMILY_ACTIVATION: *type = ABI_SwkAct; return act_struct(c, op->output, a->slope);
  case FAMILY_BATCHNORM:
    s = d_struct(c->a, *type = ABI_SwkBatchNorm);
    s.items[SwkBatchNorm_c] = d_int(x.dim[1]),
    s.items[SwkBatchNorm_hw] = d_int(shape_per_image(x) / x.dim[1]);
    s.items[SwkBatchNorm_eps] = d_float(a->eps),
    s.items[SwkBatchNorm_momentum] = d_float(a->momentum);
    s.items[SwkBatchNorm_affine] = d_int(a->affine);
    s.items[SwkBatchNorm_frozen] = d_int(a->frozen);
    s.items[SwkBatchNorm_relu] = d_int(kernel_applies_epilogue(op));
    s.items[SwkBatchNorm_relu_slope] = d_float(kernel_relu_slope(op));
    s.items[SwkBatchNorm_relu_ceiling] =
        d_float(kernel_applies_epilogue(op) && op->epilogue.kind == OP_RELU6 ? 6 : 0);
    return s;
  case FAMILY_LRN:
    s = d_struct(c->a, *type = ABI_SwkLrn);
    s.items[SwkLrn_c] = d_int(x.dim[1]), s.items[SwkLrn_hw] = d_int(x.dim[2] * x.dim[3]);
    s.items[SwkLrn_size] = d_int(a->local_size), s.items[SwkLrn_alpha] = d_float(a->alpha);
    s.items[SwkLrn_beta] = d_float(a->beta), s.items[SwkLrn_k] = d_float(a->k);
    return s;
  case FAMILY_UPSAMPLE:
    s = d_struct(c->a, *type = ABI_SwkUpsample);
    s.items[SwkUpsample_c] = d_int(x.dim[1]), s.items[SwkUpsample_h] = d_int(x.dim[2]);
    s.items[SwkUpsample_w] = d_int(x.dim[3]), s.items[SwkUpsample_sh] = d_int(a->scale[0]);
    s.items[SwkUpsample_sw] = d_int(a->scale[1]);
    s.items[SwkUpsample_bilinear] = d_int(a->upsample == UPSAMPLE_BILINEAR);
    return s;
  case FAMILY_SOFTMAX:
    s = d_struct(c->a, *type = ABI_SwkSoftmax);
    s.items[SwkSoftmax_c] = d_int(x.dim[1]);
    s.items[SwkSoftmax_inner] = d_int(shape_per_image(x) / x.dim[1]);
    return s;
  case FAMILY_DROPOUT:
    s = d_struct(c->a, *type = ABI_SwkDropout);
    s.items[SwkDropout_n] = d_int(shape_per_image(y)),
    s.items[SwkDropout_ratio] = d_float(a->ratio);
    /* a 53-bit salt: the masks stay those of programs built before the salt was 64 bits wide */
    s.items[SwkDropout_layer] =
        d_int((int64_t)(fnv(14695981039346656037ull, op->name, strlen(op->name)) >> 11));
    return s;
  case FAMILY_LOSS:
    s = d_struct(c->a, *type = ABI_SwkSoftmaxLoss);
    s.items[SwkSoftmaxLoss_classes] = d_int(x.dim[1]),
    s.items[SwkSoftmaxLoss_loss_weight] = d_float(a->loss_weight);
    s.items[SwkSoftmaxLoss_label_smoothing] = d_float(a->label_smoothing);
    return s;
  case FAMILY_NONE: /* the runtime fills it */
  case FAMILY_JOIN: /* sizes as arguments */
  case FAMILY_MUL:
  case FAMILY_ACCURACY:
  case FAMILY_TRANSFORM: return s;
  }
  return s;
}

static void lower_structs(Ctx *c) {
  const Graph *g = &c->m->graph;
  c->objects = arena_alloc(c->a, sizeof(const char *) * (size_t)(g->ops.len + 1));
  c->epilogues = arena_alloc(c->a, sizeof(const char *) * (size_t)(g->ops.len + 1));
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    const Epilogue *e = op->epilogue.on ? &op->epilogue : backward_epilogue(op);
    if (e) { /* an op has at most one: a pool that carries one has none of its own */
      c->epilogues[i] = arena_printf(c->a, "L%d_epilogue", i);
      add_global(c, c->epilogues[i], ABI_SwkAct, 0, act_struct(c, op->output, e->slope),
                 arena_printf(c->a, "%s's %s", op->name, op_info[e->kind].name));
    }
    AbiStructId type;
    Datum s = make_struct(c, &g->ops.data[i], &type);
    if (s.kind == DATUM_ZERO) continue;
    c->objects[i] = arena_printf(c->a, "L%d", i);
    add_global(c, c->objects[i], type, 0, s, g->ops.data[i].name);
  }
}

/* ------------------------------------------------------------------ calls shared by both directions */

/* The first two arguments of concat and add, both directions: the input count, then the
 * per-image size of each input (concat) or of all of them (add). */
static void join_args(Ctx *c, Call *k, const Op *op) {
  const Graph *g = &c->m->graph;
  arg_int(c, k, op->inputs.len);
  if (op->kind == OP_CONCAT) {
    CallArg sizes = {.kind = ARG_SIZES};
    for (int j = 0; j < op->inputs.len; j++)
      vec_push(c->a, sizes.sizes, value_floats(g, op->inputs.data[j]));
    arg(c, k, sizes);
  } else {
    arg(c, k, (CallArg){.kind = ARG_INT64, .i = value_floats(g, op->output)});
  }
}

/* mul's first arguments, both directions: channels, pixels per channel of x and of s (1: s
 * per channel), batch. */
static void mul_args(Ctx *c, Call *k, const Op *op) {
  const Graph *g = &c->m->graph;
  Shape x = g->values.data[op->inputs.data[0]].shape;
  int64_t channels = x.rank >= 2 ? x.dim[1] : 1, hw = shape_per_image(x) / channels;
  int64_t s_hw = shape_per_image(g->values.data[op->inputs.data[1]].shape) / channels;
  arg_int(c, k, channels);
  arg(c, k, (CallArg){.kind = ARG_INT64, .i = hw});
  arg(c, k, (CallArg){.kind = ARG_INT64, .i = s_hw});
  arg_kind(c, k, ARG_BATCH);
}

/* A convolution goes through the runtime's dispatcher (runtime/conv.c), which runs each
 * computation in its plan, converting operands where a plan's layout is not the tensors', and
 * under --autotune times the other plan too. Its first arguments: struct, batch, step, the
 * layer, and the plan word (SWN_CONV_* in swnc_rt.h). */
static Call *conv_call(Ctx *c, CallList *list, const char *fn, int i) {
  const Op *op = &c->m->graph.ops.data[i];
  const ConvChoice *ch = &op->conv;
  Layout layout = c->m->graph.values.data[op->output].layout;
  int word = SWN_CONV_WORD_LAYOUT((int)layout);
  for (int k = 0; k < CONV_COMPUTATIONS; k++) {
    int legal = 0; /* the plans that can run it, with a conversion the runtime has */
    for (int p = 0; p < PLAN_COUNT && ch->costed; p++)
      legal |= ((ch->able[k] >> p & 1) && (conv_plan_layout((ConvPlan)p) == layout ||
                                           (transform_word(layout, conv_plan_layout((ConvPlan)p)) &&
                                            transform_word(conv_plan_layout((ConvPlan)p), layout))))
               << p;
    word |= SWN_CONV_WORD_PLAN(k, (int)ch->plan[k]) | SWN_CONV_WORD_LEGAL(k, legal);
  }
  Call *k = kernel(c, list, fn, i);
  arg_kind(c, k, ARG_STEP), arg_int(c, k, i), arg_int(c, k, word);
  return k;
}

/* swk_to_rcnb, swk_to_bnrc, swk_to_bnrc16 or swk_bnrc16_to_bnrc (c, h, w, batch, from, to,
 * add) of the op's tensor shape. */
static Call *transform_call(Ctx *c, CallList *list, const Op *op, Layout from, Layout to) {
  Shape s = c->m->graph.values.data[op->output].shape;
  Call *k = begin(c, list, arena_printf(c->a, "swk_%s", transform_word(from, to)),
                  (int)(op - c->m->graph.ops.data));
  arg_int(c, k, s.dim[1]), arg_int(c, k, s.dim[2]), arg_int(c, k, s.dim[3]),
      arg_kind(c, k, ARG_BATCH);
  return k;
}

/* swk_<name>_<direction>, or swk_<name>_<layout>_<direction> for another layout's variant. */
static const char *kernel_name(Ctx *c, const Op *op, const char *direction) {
  Layout l = c->m->graph.values.data[op->output].layout;
  return arena_printf(c->a, "swk_%s%s%s_%s", op_info[op->kind].name, l == LAYOUT_BNRC ? "" : "_",
                      l == LAYOUT_BNRC ? "" : layout_name(l), direction);
}

/* ------------------------------------------------------------------ forward */

/* The kernels' training-mode flag: set in the training step's forward, clear in evaluation. */
static void arg_train(Ctx *c, Call *call) { arg_bool(c, call, c->step == STEP_TRAIN); }

/* Op i's own forward calls, appended to f (the training step's forward, or evaluation). */
static void lower_forward_op(Ctx *c, CallList *f, int i) {
  const Module *m = c->m;
  const Op *op = &m->graph.ops.data[i];
  Call *k;
  switch (op_info[op->kind].family) {
  case FAMILY_NONE: return; /* the runtime writes them */
  case FAMILY_CONV:
    k = conv_call(c, f, "swn_conv_forward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_BIAS, REG_PARAMS)), arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_DECONV:
    k = kernel(c, f, "swn_deconv_forward", i);
    arg_kind(c, k, ARG_STEP);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_BIAS, REG_PARAMS)), arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_TRANSFORM:
    k = transform_call(c, f, op, transform_source(c->m, op), (Layout)op->attr.to);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op)), arg_bool(c, k, false);
    return;
  case FAMILY_POOL:
    k = kernel(c, f, kernel_name(c, op, "forward"), i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op)), arg_ptr(c, k, saved(c, op));
    return;
  case FAMILY_FC:
    k = kernel(c, f, "swk_fc_forward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_BIAS, REG_PARAMS)), arg_ptr(c, k, output(c, op));
    arg_kind(c, k, ARG_WORKSPACE);
    return;
  case FAMILY_ACTIVATION: /* one kernel for both layouts: element-wise */
    k = kernel(c, f, arena_printf(c->a, "swk_%s_forward", op_info[op->kind].name), i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_BATCHNORM:
    k = kernel(c, f, kernel_name(c, op, "forward"), i);
    arg_train(c, k), arg_ptr(c, k, input(c, op, 0)),
        arg_ptr(c, k, param(op, PARAM_SCALE, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_SHIFT, REG_PARAMS)), arg_ptr(c, k, output(c, op)),
        arg_ptr(c, k, saved(c, op));
    arg_ptr(c, k, state(op));
    return;
  case FAMILY_LRN:
    k = kernel(c, f, "swk_lrn_forward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op)), arg_ptr(c, k, saved(c, op));
    return;
  case FAMILY_UPSAMPLE:
    k = kernel(c, f, "swk_upsample_forward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_SOFTMAX:
    k = kernel(c, f, "swk_softmax_forward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_DROPOUT:
    k = kernel(c, f, "swk_dropout_forward", i);
    arg_train(c, k), arg_kind(c, k, ARG_SEED), arg_kind(c, k, ARG_ITERATION);
    arg_kind(c, k, ARG_FIRST_IMAGE), arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_JOIN: {
    k = begin(c, f, arena_printf(c->a, "swk_%s_forward", op_info[op->kind].name), i);
    join_args(c, k, op);
    arg_kind(c, k, ARG_BATCH);
    CallArg ptrs = {.kind = ARG_INPUTS};
    for (int j = 0; j < op->inputs.len; j++) vec_push(c->a, ptrs.ptrs, input(c, op, j));
    arg(c, k, ptrs);
    arg_ptr(c, k, output(c, op));
    if (op->kind == OP_ADD) {
      arg_bool(c, k, kernel_applies_epilogue(op));
      arg(c, k, (CallArg){.kind = ARG_FLOAT, .scale = kernel_relu_slope(op)});
    }
    return;
  }
  case FAMILY_MUL:
    k = begin(c, f, kernel_name(c, op, "forward"), i);
    mul_args(c, k, op), arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, input(c, op, 1));
    arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_LOSS:
    k = kernel(c, f, "swk_softmax_loss_forward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, input(c, op, 1)), arg_ptr(c, k, saved(c, op));
    arg_ptr(c, k, output(c, op));
    return;
  case FAMILY_ACCURACY:
    k = begin(c, f, "swk_accuracy_forward", i);
    arg_int(c, k, m->graph.values.data[op->inputs.data[0]].shape.dim[1]),
        arg_int(c, k, op->attr.top);
    arg_kind(c, k, ARG_BATCH), arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, input(c, op, 1));
    arg_ptr(c, k, output(c, op));
    return;
  }
}

/* swk_<activation>_<direction>(epilogue struct, batch, ...) for op i's epilogue e. */
static Call *epilogue_call(Ctx *c, CallList *list, int i, const Epilogue *e,
                           const char *direction) {
  Call *k = begin(c, list, arena_printf(c->a, "swk_%s_%s", op_info[e->kind].name, direction), i);
  k->object = c->epilogues[i];
  arg_kind(c, k, ARG_STRUCT), arg_kind(c, k, ARG_BATCH);
  return k;
}

/* Op i's epilogue on its output in place, after whatever wrote the output (unless the op's
 * kernels apply it). */
static void lower_epilogue_forward(Ctx *c, CallList *f, int i) {
  const Op *op = &c->m->graph.ops.data[i];
  if (!op->epilogue.on || kernel_applies_epilogue(op)) return;
  Call *k = epilogue_call(c, f, i, &op->epilogue, "forward");
  arg_ptr(c, k, output(c, op)), arg_ptr(c, k, output(c, op));
}

/* Op i's forward, then its epilogue. */
static void lower_forward(Ctx *c, CallList *f, int i) {
  lower_forward_op(c, f, i);
  lower_epilogue_forward(c, f, i);
}

/* Before a backward step: op i's output computed again (pass recompute), then its epilogue,
 * into the buffer backward reads it from: batch norm from its input and saved statistics, the
 * other kinds by their forward kernel (reading recomputed inputs where there are). */
static void lower_recompute(Ctx *c, int i) {
  const Op *op = &c->m->graph.ops.data[i];
  CallList *f = &c->out->backward;
  if (op_info[op->kind].family == FAMILY_BATCHNORM) {
    Call *k = kernel(c, f, kernel_name(c, op, "recompute"), i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_SCALE, REG_PARAMS));
    arg_ptr(c, k, param(op, PARAM_SHIFT, REG_PARAMS)), arg_ptr(c, k, saved(c, op));
    arg_ptr(c, k, output(c, op));
  } else {
    lower_forward_op(c, f, i);
  }
  lower_epilogue_forward(c, f, i);
}

/* Before op i's backward: its epilogue's backward (or the one a max pool carries) turns the
 * gradient of its output into the gradient of the values before the activation, in place. */
static void lower_epilogue_backward(Ctx *c, int i) {
  const Op *op = &c->m->graph.ops.data[i];
  const Epilogue *e = backward_epilogue(op);
  if (!e) return;
  Call *k = epilogue_call(c, &c->out->backward, i, e, "backward");
  arg_ptr(c, k, output(c, op)), arg_ptr(c, k, dy(c, op)), arg_ptr(c, k, dy(c, op));
  arg_bool(c, k, false);
}

/* ------------------------------------------------------------------ backward */

static void lower_backward(Ctx *c, const BackwardStep *b) {
  const Module *m = c->m;
  int i = b->op;
  const Op *op = &m->graph.ops.data[i];
  CallList *f = &c->out->backward;
  Call *k;
  switch (op_info[op->kind].family) {
  case FAMILY_CONV:
    k = conv_call(c, f, "swn_conv_backward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS)),
        arg_ptr(c, k, dy(c, op));
    grad_args(c, k, op, b, 0);
    param_gradient_args(c, k, op, PARAM_WEIGHT, PARAM_BIAS);
    return;
  case FAMILY_DECONV:
    k = kernel(c, f, "swn_deconv_backward", i);
    arg_kind(c, k, ARG_STEP);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS)),
        arg_ptr(c, k, dy(c, op));
    grad_args(c, k, op, b, 0);
    param_gradient_args(c, k, op, PARAM_WEIGHT, PARAM_BIAS);
    return;
  case FAMILY_FC:
    k = kernel(c, f, "swk_fc_backward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_WEIGHT, REG_PARAMS)),
        arg_ptr(c, k, dy(c, op));
    grad_args(c, k, op, b, 0);
    param_gradient_args(c, k, op, PARAM_WEIGHT, PARAM_BIAS);
    arg_kind(c, k, ARG_WORKSPACE);
    return;
  case FAMILY_TRANSFORM: /* the gradient goes back the other way */
    k = transform_call(c, f, op, (Layout)op->attr.to, transform_source(c->m, op));
    arg_ptr(c, k, dy(c, op)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_POOL:
    k = kernel(c, f, kernel_name(c, op, "backward"), i);
    arg_ptr(c, k, dy(c, op)), arg_ptr(c, k, saved(c, op)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_ACTIVATION:
    k = kernel(c, f, arena_printf(c->a, "swk_%s_backward", op_info[op->kind].name), i);
    arg_ptr(c, k, op_info[op->kind].bwd_reads & BWD_IN ? input(c, op, 0) : output(c, op));
    arg_ptr(c, k, dy(c, op)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_BATCHNORM:
    k = kernel(c, f, kernel_name(c, op, "backward"), i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, param(op, PARAM_SCALE, REG_PARAMS)),
        arg_ptr(c, k, dy(c, op));
    arg_ptr(c, k, saved(c, op)), grad_args(c, k, op, b, 0);
    param_gradient_args(c, k, op, PARAM_SCALE, PARAM_SHIFT);
    return;
  case FAMILY_LRN:
    k = kernel(c, f, "swk_lrn_backward", i);
    arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, output(c, op)), arg_ptr(c, k, saved(c, op));
    arg_ptr(c, k, dy(c, op)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_UPSAMPLE:
    k = kernel(c, f, "swk_upsample_backward", i);
    arg_ptr(c, k, dy(c, op)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_SOFTMAX:
    k = kernel(c, f, "swk_softmax_backward", i);
    arg_ptr(c, k, output(c, op)), arg_ptr(c, k, dy(c, op)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_DROPOUT:
    k = kernel(c, f, "swk_dropout_backward", i);
    arg_kind(c, k, ARG_SEED), arg_kind(c, k, ARG_ITERATION), arg_kind(c, k, ARG_FIRST_IMAGE);
    arg_ptr(c, k, dy(c, op)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_JOIN: {
    k = begin(c, f, arena_printf(c->a, "swk_%s_backward", op_info[op->kind].name), i);
    join_args(c, k, op);
    arg_kind(c, k, ARG_BATCH), arg_ptr(c, k, dy(c, op));
    CallArg ptrs = {.kind = ARG_OUTPUTS}, adds = {.kind = ARG_BOOLS};
    for (int j = 0; j < op->inputs.len; j++) {
      GradMode mode = b->input_grad.data[j];
      vec_push(c->a, ptrs.ptrs,
               mode == GRAD_NONE ? (Ptr){.null = true} : dy(c, producer(m, op->inputs.data[j])));
      vec_push(c->a, adds.bools, mode == GRAD_ACCUMULATE);
    }
    arg(c, k, ptrs), arg(c, k, adds);
    return;
  }
  case FAMILY_MUL:
    k = begin(c, f, kernel_name(c, op, "backward"), i);
    mul_args(c, k, op), arg_ptr(c, k, input(c, op, 0)), arg_ptr(c, k, input(c, op, 1));
    arg_ptr(c, k, dy(c, op)), grad_args(c, k, op, b, 0), grad_args(c, k, op, b, 1);
    return;
  case FAMILY_LOSS:
    k = kernel(c, f, "swk_softmax_loss_backward", i);
    arg_ptr(c, k, saved(c, op)), arg_ptr(c, k, input(c, op, 1)), grad_args(c, k, op, b, 0);
    return;
  case FAMILY_NONE:
  case FAMILY_ACCURACY: return; /* no backward step */
  }
}

/* ------------------------------------------------------------------ update, workspace */

/* Adam's step of parameter q (op i's): its first moment in the momentum pool at q's offset,
 * its second one pool further. */
static void lower_adam_update(Ctx *c, int i, const Param *q) {
  const TrainConfig *t = &c->m->train;
  Call *k = begin(c, &c->out->update, "swk_adam_update", i);
  arg(c, k, (CallArg){.kind = ARG_INT64, .i = shape_elems(q->shape)});
  arg(c, k, (CallArg){.kind = ARG_LR, .scale = q->lr_mult});
  arg(c, k, (CallArg){.kind = ARG_DECAY, .scale = q->decay_mult});
  arg(c, k, (CallArg){.kind = ARG_FLOAT, .scale = t->beta1});
  arg(c, k, (CallArg){.kind = ARG_FLOAT, .scale = t->beta2});
  arg(c, k, (CallArg){.kind = ARG_FLOAT, .scale = t->epsilon});
  arg_bool(c, k, t->optimizer == OPT_ADAMW);
  arg_kind(c, k, ARG_ITERATION);
  arg_ptr(c, k, (Ptr){.region = REG_PARAMS, .offset = q->offset});
  arg_ptr(c, k, (Ptr){.region = REG_GRADS, .offset = q->offset});
  arg_ptr(c, k, (Ptr){.region = REG_MOMENTUM, .offset = q->offset});
  arg_ptr(c, k, (Ptr){.region = REG_MOMENTUM, .offset = c->m->plan.param_words + q->offset});
}

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
    if (optimizer_moment_pools(c->m->train.optimizer) == 2) {
      lower_adam_update(c, i, q);
      continue;
    }
    bool folded = c->m->schedule.gradients_in_momentum, lars = c->m->train.optimizer == OPT_LARS;
    Call *k = begin(c, &c->out->update,
                    folded ? "swk_sgd_apply"
                    : lars ? "swk_lars_update"
                           : "swk_sgd_update",
                    i);
    arg(c, k, (CallArg){.kind = ARG_INT64, .i = shape_elems(q->shape)});
    arg(c, k, (CallArg){.kind = ARG_LR, .scale = q->lr_mult});
    arg(c, k, (CallArg){.kind = ARG_DECAY, .scale = q->decay_mult});
    if (!folded) arg_kind(c, k, ARG_MOMENTUM);
    if (lars) arg(c, k, (CallArg){.kind = ARG_FLOAT, .scale = c->m->train.trust});
    arg_ptr(c, k, (Ptr){.region = REG_PARAMS, .offset = q->offset});
    if (!folded) arg_ptr(c, k, (Ptr){.region = REG_GRADS, .offset = q->offset});
    arg_ptr(c, k, (Ptr){.region = REG_MOMENTUM, .offset = q->offset});
  }
}

/* The step's shared workspace: the largest any fully connected layer, or any convolution in
 * a plan it was compiled with, asks for (the dispatcher holds its own for other plans). */
static void lower_workspace(Ctx *c, int i) {
  const Op *op = &c->m->graph.ops.data[i];
  OpFamily family = op_info[op->kind].family;
  if (family == FAMILY_FC)
    arg_kind(c, begin(c, &c->out->workspace, "swk_fc_workspace", i), ARG_STRUCT);
  if (family == FAMILY_DECONV) /* its convolution's, in the explicit plan */
    arg_kind(c, begin(c, &c->out->workspace, "swk_conv_workspace", i), ARG_STRUCT);
  if (family != FAMILY_CONV) return;
  for (int plan = 0; plan < PLAN_COUNT; plan++) /* the dispatcher holds batched ones itself */
    if (!conv_plan_batched_workspace((ConvPlan)plan) &&
        (conv_uses_plan(op, (ConvPlan)plan) || (plan == PLAN_EXPLICIT && !op->conv.costed)))
      arg_kind(c,
               begin(c, &c->out->workspace,
                     arena_printf(c->a, "%s_workspace", conv_plan_kernels((ConvPlan)plan)), i),
               ARG_STRUCT);
}

/* Before op i's training forward: swn_parameters_wait for each gradient bucket holding one of
 * its parameters that no earlier op waited for. A reduce-to-root schedule broadcasts the weights
 * in those spans while forward runs (docs/runtime.md, "Reduce to root"); otherwise the call
 * returns at once. */
static void lower_parameter_waits(Ctx *c, int i, bool *waited) {
  const Op *op = &c->m->graph.ops.data[i];
  const Fusion *f = &c->m->fusion;
  for (int p = 0; p < op->params.len; p++) {
    int64_t at = op->params.data[p].offset;
    for (int b = 0; b < f->buckets.len; b++) {
      const Bucket *bk = &f->buckets.data[b];
      if (waited[b] || at < bk->offset || at >= bk->offset + bk->words) continue;
      waited[b] = true;
      Call *w = begin(c, &c->out->forward, "swn_parameters_wait", i);
      arg_kind(c, w, ARG_STEP), arg_int(c, w, b);
    }
  }
}

/* Where backward completes a gradient bucket: the runtime may start its allreduce there. */
static void lower_bucket_marks(Ctx *c, int step) {
  const Fusion *f = &c->m->fusion;
  for (int b = 0; b < f->buckets.len; b++)
    if (f->buckets.data[b].ready_step == step) {
      const Bucket *bk = &f->buckets.data[b];
      Call *k =
          begin(c, &c->out->backward, "swn_gradients_ready", c->m->schedule.backward.data[step].op);
      arg_kind(c, k, ARG_STEP), arg_int(c, k, b);
      arg(c, k, (CallArg){.kind = ARG_INT64, .i = bk->offset});
      arg(c, k, (CallArg){.kind = ARG_INT64, .i = bk->words});
    }
}

/* ------------------------------------------------------------------ the runtime's tables */

/* Inputs feeding one output of a weight (for xavier and msra initialisation). */
static int64_t param_fan_in(const Param *p) {
  if (p->role != PARAM_WEIGHT) return 1;
  return shape_per_image(p->shape); /* conv: ci/g * kh * kw; fc: inputs */
}

uint64_t network_hash(const Module *m) {
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

/* The op of each role the runtime feeds or reads: one image input, one label input, the first
 * loss. */
typedef struct Io {
  int images, labels, loss;
} Io;

static bool find_io(const Module *m, Io *io) {
  *io = (Io){-1, -1, -1};
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    OpRole role = op_info[op->kind].role;
    int *slot = role == ROLE_IMAGES   ? &io->images
                : role == ROLE_LABELS ? &io->labels
                : role == ROLE_LOSS   ? &io->loss
                                      : NULL;
    if (!slot) continue;
    if (*slot >= 0 && role != ROLE_LOSS) {
      op_error(op, "the runtime feeds one %s layer, and '%s' is one already",
               op_info[op->kind].name, m->graph.ops.data[*slot].name);
      return false;
    }
    if (*slot < 0) *slot = i;
  }
  if (io->images < 0 || io->labels < 0) {
    diag_error(m->loc, "network '%s' needs an input and a label layer to be trained", m->name);
    return false;
  }
  return true;
}

/* A table: an array of `n` rows and the zero row that ends it. */
static Datum table(Ctx *c, int n) {
  Datum t = d_list(c->a, n + 1);
  t.items[n] = (Datum){0};
  return t;
}

typedef VEC(Datum) Rows;

/* The table of rows collected one by one, with its ending zero row. */
static Datum table_of(Ctx *c, Rows *rows) {
  vec_push(c->a, *rows, (Datum){0});
  return (Datum){.kind = DATUM_LIST, .items = rows->data, .n = rows->len};
}

static int lower_param_table(Ctx *c) {
  const Graph *g = &c->m->graph;
  int n = 0;
  for (int i = 0; i < g->ops.len; i++) n += g->ops.data[i].params.len;
  Datum t = table(c, n);
  const FieldSpec *init = field_find(op_info[OP_CONV].fields, "weight_init");
  for (int i = 0, row = 0; i < g->ops.len; i++)
    for (int k = 0; k < g->ops.data[i].params.len; k++, row++) {
      const Param *p = &g->ops.data[i].params.data[k];
      Datum r = d_struct(c->a, ABI_SwnParamInfo), dims = d_list(c->a, p->shape.rank);
      for (int d = 0; d < p->shape.rank; d++) dims.items[d] = d_int(p->shape.dim[d]);
      r.items[SwnParamInfo_name] = d_string(p->name),
      r.items[SwnParamInfo_ndims] = d_int(p->shape.rank);
      r.items[SwnParamInfo_dims] = dims, r.items[SwnParamInfo_offset] = d_int(p->offset);
      r.items[SwnParamInfo_count] = d_int(shape_elems(p->shape));
      r.items[SwnParamInfo_lr_mult] = d_float(p->lr_mult),
      r.items[SwnParamInfo_decay_mult] = d_float(p->decay_mult);
      r.items[SwnParamInfo_init] = d_int(p->init),
      r.items[SwnParamInfo_init].s = init->words[p->init];
      r.items[SwnParamInfo_init_arg] = d_float(p->init_arg),
      r.items[SwnParamInfo_fan_in] = d_int(param_fan_in(p));
      t.items[row] = r;
    }
  add_global(c, "params", ABI_SwnParamInfo, t.n, t, NULL);
  return n;
}

static int lower_state_table(Ctx *c) {
  const Graph *g = &c->m->graph;
  Rows rows = {0};
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    StatePart parts[2];
    int64_t offset = op->state_offset;
    for (int k = 0, n = op_state(g, op, parts); k < n; offset += parts[k].words, k++) {
      Datum r = d_struct(c->a, ABI_SwnStateInfo);
      r.items[SwnStateInfo_name] = d_string(arena_printf(c->a, "%s.%s", op->name, parts[k].what));
      r.items[SwnStateInfo_offset] = d_int(offset);
      r.items[SwnStateInfo_count] = d_int(parts[k].words);
      r.items[SwnStateInfo_init] = d_float(parts[k].init);
      vec_push(c->a, rows, r);
    }
  }
  int n = rows.len;
  Datum t = table_of(c, &rows);
  add_global(c, "state", ABI_SwnStateInfo, t.n, t, NULL);
  return n;
}

static const Buffer *buffer_of(const Module *m, StepKind step, int buf) {
  return &m->plan.step[step].buffers.data[buf];
}

static int lower_metric_table(Ctx *c) {
  const Module *m = c->m;
  Rows rows = {0};
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    OpRole role = op_info[op->kind].role;
    if (role != ROLE_LOSS && role != ROLE_METRIC) continue;
    Datum r = d_struct(c->a, ABI_SwnMetric);
    r.items[SwnMetric_name] = d_string(op->name);
    r.items[SwnMetric_offset] = d_int(buffer_of(m, STEP_TRAIN, op->buf[STEP_TRAIN].out)->offset);
    r.items[SwnMetric_eval_offset] = d_int(buffer_of(m, STEP_EVAL, op->buf[STEP_EVAL].out)->offset);
    r.items[SwnMetric_is_loss] = d_int(role == ROLE_LOSS);
    vec_push(c->a, rows, r);
  }
  int n = rows.len;
  Datum t = table_of(c, &rows);
  add_global(c, "metrics", ABI_SwnMetric, t.n, t, NULL);
  return n;
}

static void lower_layer_names(Ctx *c) {
  const Graph *g = &c->m->graph;
  Datum t = d_list(c->a, g->ops.len);
  for (int i = 0; i < g->ops.len; i++) t.items[i] = d_string(g->ops.data[i].name);
  Global layers = {"layers", {ABI_PTR, "char *", "layers", g->ops.len}, t, NULL};
  vec_push(c->a, c->out->globals, layers);
}

static Datum train_config(Ctx *c) {
  const TrainConfig *t = &c->m->train;
  Datum d = d_struct(c->a, ABI_SwnTrainConfig), steps = d_list(c->a, t->steps.n);
  for (int i = 0; i < t->steps.n; i++) steps.items[i] = d_int(t->steps.v[i]);
  Datum *f = d.items;
  f[SwnTrainConfig_batch] = d_int(t->batch), f[SwnTrainConfig_test_batch] = d_int(t->test_batch);
  f[SwnTrainConfig_epochs] = d_int(t->epochs), f[SwnTrainConfig_iterations] = d_int(t->iterations);
  f[SwnTrainConfig_lr] = d_float(t->lr), f[SwnTrainConfig_momentum] = d_float(t->momentum);
  f[SwnTrainConfig_weight_decay] = d_float(t->weight_decay);
  f[SwnTrainConfig_lr_policy] = d_enum(train_fields, "lr_policy", t->lr_policy);
  f[SwnTrainConfig_gamma] = d_float(t->gamma), f[SwnTrainConfig_power] = d_float(t->power);
  f[SwnTrainConfig_step] = d_int(t->step), f[SwnTrainConfig_steps] = steps;
  f[SwnTrainConfig_nsteps] = d_int(t->steps.n), f[SwnTrainConfig_warmup] = d_int(t->warmup);
  f[SwnTrainConfig_seed] = d_int(t->seed),
  f[SwnTrainConfig_eval_interval] = d_int(t->eval_interval);
  f[SwnTrainConfig_test_interval] = d_int(t->test_interval);
  f[SwnTrainConfig_display] = d_int(t->display);
  f[SwnTrainConfig_optimizer] = d_enum(train_fields, "optimizer", t->optimizer);
  f[SwnTrainConfig_elastic] = d_float(t->elastic);
  f[SwnTrainConfig_clip_gradients] = d_float(t->clip_gradients);
  f[SwnTrainConfig_iter_size] = d_int(t->iter_size);
  return d;
}

static Datum string_list(Ctx *c, const StrList *l) {
  Datum d = d_list(c->a, l->n);
  for (int i = 0; i < l->n; i++) d.items[i] = d_string(l->v[i]);
  return d;
}

static Datum data_config(Ctx *c) {
  const DataConfig *s = &c->m->data;
  Datum d = d_struct(c->a, ABI_SwnDataConfig), mean = d_list(c->a, s->mean.n);
  for (int i = 0; i < s->mean.n; i++) mean.items[i] = d_float(s->mean.v[i]);
  Datum *f = d.items;
  f[SwnDataConfig_source] = d_enum(data_fields, "source", s->source);
  f[SwnDataConfig_train] = string_list(c, &s->train),
  f[SwnDataConfig_test] = string_list(c, &s->test);
  f[SwnDataConfig_ntrain] = d_int(s->train.n), f[SwnDataConfig_ntest] = d_int(s->test.n);
  f[SwnDataConfig_scale] = d_float(s->scale), f[SwnDataConfig_mean] = mean,
  f[SwnDataConfig_nmean] = d_int(s->mean.n);
  if (s->mean_file) f[SwnDataConfig_mean_file] = d_string(s->mean_file);
  f[SwnDataConfig_crop] = d_int(s->crop != 0), f[SwnDataConfig_mirror] = d_int(s->mirror);
  f[SwnDataConfig_train_size] = d_int(s->train_size),
  f[SwnDataConfig_test_size] = d_int(s->test_size);
  f[SwnDataConfig_classes] = d_int(s->classes);
  return d;
}

/* One step's regions and where the runtime writes the images and labels in it. */
static Datum step_plan(Ctx *c, const Io *io, StepKind step) {
  const Module *m = c->m;
  const StepPlan *p = &m->plan.step[step];
  const Op *ops = m->graph.ops.data;
  Datum d = d_struct(c->a, ABI_SwnPlan), *f = d.items;
  f[SwnPlan_image_words] = d_int(p->image_words), f[SwnPlan_fixed_words] = d_int(p->fixed_words);
  f[SwnPlan_input_offset] = d_int(buffer_of(m, step, ops[io->images].buf[step].out)->offset);
  f[SwnPlan_label_offset] = d_int(buffer_of(m, step, ops[io->labels].buf[step].out)->offset);
  const Op *scores = &ops[m->graph.values.data[ops[io->loss].inputs.data[0]].producer];
  f[SwnPlan_scores_offset] = d_int(buffer_of(m, step, scores->buf[step].out)->offset);
  return d;
}

/* The descriptor tables and the SwnNetwork that names them. */
static void lower_network(Ctx *c, const Io *io) {
  const Module *m = c->m;
  const Graph *g = &m->graph;
  lower_layer_names(c);
  int nparams = lower_param_table(c), nstate = lower_state_table(c),
      nmetrics = lower_metric_table(c);
  Shape in = g->values.data[g->ops.data[io->images].output].shape;
  const Op *loss = &g->ops.data[io->loss];
  Datum d = d_struct(c->a, ABI_SwnNetwork), *f = d.items;
  f[SwnNetwork_name] = d_string(m->name), f[SwnNetwork_source] = d_string(c->out->source);
  f[SwnNetwork_hash] = d_int((int64_t)network_hash(m));
  f[SwnNetwork_plan] = step_plan(c, io, STEP_TRAIN),
  f[SwnNetwork_eval_plan] = step_plan(c, io, STEP_EVAL);
  f[SwnNetwork_gradients_in_momentum] = d_int(m->schedule.gradients_in_momentum);
  f[SwnNetwork_param_words] = d_int(m->plan.param_words),
  f[SwnNetwork_state_words] = d_int(m->plan.state_words);
  f[SwnNetwork_moment_pools] = d_int(optimizer_moment_pools(m->train.optimizer));
  f[SwnNetwork_layers] = d_symbol("layers"), f[SwnNetwork_nlayers] = d_int(g->ops.len);
  f[SwnNetwork_params] = d_symbol("params"), f[SwnNetwork_nparams] = d_int(nparams);
  f[SwnNetwork_state] = d_symbol("state"), f[SwnNetwork_nstate] = d_int(nstate);
  f[SwnNetwork_metrics] = d_symbol("metrics"), f[SwnNetwork_nmetrics] = d_int(nmetrics);
  f[SwnNetwork_in_c] = d_int(in.dim[1]);
  f[SwnNetwork_in_h] = d_int(in.rank == 4 ? in.dim[2] : 1),
  f[SwnNetwork_in_w] = d_int(in.rank == 4 ? in.dim[3] : 1);
  f[SwnNetwork_classes] = d_int(g->values.data[loss->inputs.data[0]].shape.dim[1]);
  f[SwnNetwork_train] = train_config(c), f[SwnNetwork_data] = data_config(c);
  f[SwnNetwork_workspace] = d_symbol(LOWERED_WORKSPACE),
  f[SwnNetwork_forward] = d_symbol(LOWERED_FORWARD);
  f[SwnNetwork_evaluate] = d_symbol(LOWERED_EVALUATE);
  f[SwnNetwork_backward] = d_symbol(LOWERED_BACKWARD),
  f[SwnNetwork_update] = d_symbol(LOWERED_UPDATE);
  f[SwnNetwork_nbuckets] = d_int(m->fusion.buckets.len);
  add_global(c, LOWERED_NETWORK, ABI_SwnNetwork, 0, d, NULL);
}

/* ------------------------------------------------------------------ the module */

static void check_calls(Ctx *c, const CallList *list) {
  for (int i = 0; i < list->len; i++) check_call(c, &list->data[i]);
}

bool lower_module(const Module *m, const char *source, Arena *a, Lowered *out) {
  *out = (Lowered){.name = m->name, .source = source};
  if (!module_has(m, STAGE_ALL)) {
    diag_error(m->loc, "internal: lowering '%s' before every pass has run", m->name);
    return false;
  }
  Io io;
  if (!find_io(m, &io)) return false;
  Ctx c = {m, a, out, STEP_EVAL, false, NULL, NULL, true};
  lower_structs(&c);
  for (int i = 0; i < m->schedule.forward.len; i++)
    lower_forward(&c, &out->evaluate, m->schedule.forward.data[i]);
  c.step = STEP_TRAIN;
  bool *waited = arena_alloc(a, sizeof(bool) * (size_t)(m->fusion.buckets.len + 1));
  for (int i = 0; i < m->schedule.forward.len; i++) {
    lower_parameter_waits(&c, m->schedule.forward.data[i], waited);
    lower_forward(&c, &out->forward, m->schedule.forward.data[i]);
  }
  c.backward = true;
  for (int i = 0; i < m->schedule.backward.len; i++) {
    const BackwardStep *b = &m->schedule.backward.data[i];
    for (int k = 0; k < b->recompute.len; k++) lower_recompute(&c, b->recompute.data[k]);
    lower_epilogue_backward(&c, b->op);
    lower_backward(&c, b);
    lower_bucket_marks(&c, i);
  }
  c.backward = false;
  int index = 0;
  for (int i = 0; i < m->schedule.update_ops.len; i++)
    lower_update(&c, m->schedule.update_ops.data[i], &index);
  for (int i = 0; i < m->graph.ops.len; i++) lower_workspace(&c, i);
  lower_network(&c, &io);
  check_calls(&c, &out->forward), check_calls(&c, &out->evaluate);
  check_calls(&c, &out->backward), check_calls(&c, &out->update);
  check_calls(&c, &out->workspace);
  return c.ok;
}
