/* The LLVM backend: translates the lowered program (codegen/lower.h) into an LLVM module:
 * kernel-parameter structs as constant globals, forward/backward/update/workspace functions
 * whose bodies are the same kernel calls the C backend prints, the runtime's descriptor tables
 * as one constant SwnNetwork, and main. Runtime structs are mirrored field by field (a C bool
 * is i8; every pointer is i8*, which has the same ABI); tests/unit/test_llvm_layout.c checks
 * the mirrored offsets against offsetof. */
#include "emit_llvm.h"

#include <llvm-c/Analysis.h>
#include <stdlib.h>
#include <string.h>

typedef struct Gen {
  const Lowered *l;
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTypeRef i8, i32, i64, f32, p8, pf32, step;
  LLVMValueRef *structs; /* per op: the kernel struct global, or NULL */
  /* in the function being built */
  LLVMValueRef s, batch32, batch64, train, lr;
  LLVMValueRef region[6]; /* float * bases, by Region */
} Gen;

/* ------------------------------------------------------------------ runtime struct types */

/* Field codes: p pointer, i int, l int64/size_t, f float, b bool, [N...] arrays, {Name} struct. */
static LLVMTypeRef type_of(LLVMContextRef c, const char **spec);

static LLVMTypeRef struct_type(LLVMContextRef c, const char *name, const char *spec) {
  LLVMTypeRef t = LLVMGetTypeByName2(c, name);
  if (t) return t;
  LLVMTypeRef fields[64];
  unsigned n = 0;
  for (const char *p = spec; *p;) {
    if (*p == ' ') {
      p++;
      continue;
    }
    fields[n++] = type_of(c, &p);
  }
  t = LLVMStructCreateNamed(c, name);
  LLVMStructSetBody(t, fields, n, 0);
  return t;
}

static const char *const layouts[][2] = {
    {"SwnStep", "p i p p p p p p p l l l f f i p p p"},
    {"SwnParamInfo", "p i [4l] l l f f i f l"},
    {"SwnStateInfo", "p l l f"},
    {"SwnMetric", "p l b"},
    {"SwnTrainConfig", "l l l l f f f i f f l [16l] i l l l l i f"},
    {"SwnDataConfig", "i [16p] [16p] i i f [4f] i l l l"},
    {"SwnNetwork", "p p l l l l l p i p i p i p i i i i l l i {SwnTrainConfig} {SwnDataConfig} p p p p i"},
};

LLVMTypeRef llvm_runtime_type(LLVMContextRef c, const char *name) {
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (!strcmp(layouts[i][0], name)) return struct_type(c, name, layouts[i][1]);
  return NULL;
}

static LLVMTypeRef type_of(LLVMContextRef c, const char **spec) {
  const char *p = *spec;
  LLVMTypeRef t = NULL;
  switch (*p) {
  case 'p': t = LLVMPointerType(LLVMInt8TypeInContext(c), 0), p++; break;
  case 'i': t = LLVMInt32TypeInContext(c), p++; break;
  case 'l': t = LLVMInt64TypeInContext(c), p++; break;
  case 'f': t = LLVMFloatTypeInContext(c), p++; break;
  case 'b': t = LLVMInt8TypeInContext(c), p++; break;
  case '[': {
    unsigned n = (unsigned)strtoul(p + 1, (char **)&p, 10);
    t = LLVMArrayType(type_of(c, &p), n);
    p++; /* ']' */
    break;
  }
  case '{': {
    const char *end = strchr(p, '}');
    char name[32] = {0};
    memcpy(name, p + 1, (size_t)(end - p - 1));
    t = llvm_runtime_type(c, name);
    p = end + 1;
    break;
  }
  }
  *spec = p;
  return t;
}

/* ------------------------------------------------------------------ constants */

static LLVMValueRef c_i32(Gen *g, int64_t v) { return LLVMConstInt(g->i32, (unsigned long long)v, 1); }
static LLVMValueRef c_i64(Gen *g, int64_t v) { return LLVMConstInt(g->i64, (unsigned long long)v, 1); }
static LLVMValueRef c_i8(Gen *g, int v) { return LLVMConstInt(g->i8, (unsigned long long)v, 0); }
static LLVMValueRef c_f32(Gen *g, double v) { return LLVMConstReal(g->f32, (float)v); }
static LLVMValueRef c_null(Gen *g) { return LLVMConstPointerNull(g->p8); }

static LLVMValueRef private_global(Gen *g, LLVMValueRef init, const char *name) {
  LLVMValueRef v = LLVMAddGlobal(g->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(v, init);
  LLVMSetGlobalConstant(v, 1);
  LLVMSetLinkage(v, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(v, LLVMGlobalUnnamedAddr);
  return v;
}

static LLVMValueRef c_string(Gen *g, const char *s) {
  if (!s) return c_null(g);
  LLVMValueRef data = LLVMConstStringInContext(g->ctx, s, (unsigned)strlen(s), 0);
  return LLVMConstBitCast(private_global(g, data, ".str"), g->p8);
}

static LLVMValueRef c_array(LLVMTypeRef elem, LLVMValueRef *items, unsigned n) { return LLVMConstArray(elem, items, n); }

/* ------------------------------------------------------------------ kernel structs */

static void build_structs(Gen *g) {
  const Lowered *l = g->l;
  g->structs = calloc((size_t)l->structs.len + 1, sizeof *g->structs);
  for (int i = 0; i < l->structs.len; i++) {
    const KernelStruct *ks = &l->structs.data[i];
    if (!ks->type) continue;
    LLVMTypeRef types[32];
    LLVMValueRef values[32];
    unsigned n = (unsigned)ks->fields.len;
    for (unsigned k = 0; k < n; k++) {
      const StructField *f = &ks->fields.data[k];
      switch (f->kind) {
      case FIELD_INT: types[k] = g->i32, values[k] = c_i32(g, (int64_t)f->value); break;
      case FIELD_INT64: types[k] = g->i64, values[k] = c_i64(g, (int64_t)f->value); break;
      case FIELD_UINT64: types[k] = g->i64, values[k] = LLVMConstInt(g->i64, (unsigned long long)f->value, 0); break;
      case FIELD_FLOAT: types[k] = g->f32, values[k] = c_f32(g, f->value); break;
      case FIELD_BOOL: types[k] = g->i8, values[k] = c_i8(g, f->value != 0); break;
      }
    }
    LLVMTypeRef t = LLVMGetTypeByName2(g->ctx, ks->type);
    if (!t) {
      t = LLVMStructCreateNamed(g->ctx, ks->type);
      LLVMStructSetBody(t, types, n, 0);
    }
    char name[64];
    snprintf(name, sizeof name, "L%d", i);
    g->structs[i] = private_global(g, LLVMConstNamedStruct(t, values, n), name);
  }
}

/* ------------------------------------------------------------------ functions */

static LLVMValueRef zeroext_attribute(Gen *g) {
  return (LLVMValueRef)LLVMCreateEnumAttribute(g->ctx, LLVMGetEnumAttributeKindForName("zeroext", 7), 0);
}

static LLVMTypeRef arg_type(Gen *g, ArgKind k) {
  switch (k) {
  case ARG_BATCH:
  case ARG_INT: return g->i32;
  case ARG_TRAIN:
  case ARG_BOOL: return g->i8;
  case ARG_SEED:
  case ARG_ITERATION:
  case ARG_FIRST_IMAGE:
  case ARG_INT64: return g->i64;
  case ARG_LR:
  case ARG_DECAY:
  case ARG_MOMENTUM: return g->f32;
  default: return g->p8;
  }
}

/* Declares a runtime function as the call uses it (the C header's signature). */
static LLVMValueRef declare(Gen *g, const Call *c, LLVMTypeRef ret) {
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, c->fn);
  if (fn) return fn;
  LLVMTypeRef params[16];
  for (int i = 0; i < c->args.len; i++) params[i] = arg_type(g, c->args.data[i].kind);
  fn = LLVMAddFunction(g->mod, c->fn, LLVMFunctionType(ret, params, (unsigned)c->args.len, 0));
  for (int i = 0; i < c->args.len; i++)
    if (params[i] == g->i8) LLVMAddAttributeAtIndex(fn, (unsigned)i + 1, (LLVMAttributeRef)zeroext_attribute(g));
  return fn;
}

static LLVMValueRef pointer(Gen *g, Ptr p) {
  if (p.null) return c_null(g);
  LLVMValueRef offset = c_i64(g, p.offset);
  if (p.region == REG_IMAGE) offset = LLVMBuildMul(g->b, offset, g->batch64, "");
  LLVMValueRef at = LLVMBuildGEP2(g->b, g->f32, g->region[p.region], &offset, 1, "");
  return LLVMBuildBitCast(g->b, at, g->p8, "");
}

/* A local array of `n` elements of `elem` in the entry block's frame, filled with `items`. */
static LLVMValueRef local_array(Gen *g, LLVMTypeRef elem, LLVMValueRef *items, unsigned n) {
  LLVMTypeRef t = LLVMArrayType(elem, n);
  LLVMValueRef array = LLVMBuildAlloca(g->b, t, "");
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef idx[2] = {c_i32(g, 0), c_i32(g, (int64_t)i)};
    LLVMBuildStore(g->b, items[i], LLVMBuildInBoundsGEP2(g->b, t, array, idx, 2, ""));
  }
  return LLVMBuildBitCast(g->b, array, g->p8, "");
}

/* Field `field` of the SwnStep as type `t` (pointer fields are i8* in the mirrored type). */
static LLVMValueRef load_step(Gen *g, unsigned field, LLVMTypeRef t) {
  LLVMTypeRef declared = LLVMStructGetTypeAtIndex(g->step, field);
  LLVMValueRef v = LLVMBuildLoad2(g->b, declared, LLVMBuildStructGEP2(g->b, g->step, g->s, field, ""), "");
  return declared == t ? v : LLVMBuildBitCast(g->b, v, t, "");
}

static LLVMValueRef arg_value(Gen *g, const Call *c, const CallArg *a) {
  LLVMValueRef items[64];
  switch (a->kind) {
  case ARG_BATCH: return g->batch32;
  case ARG_TRAIN: return g->train;
  case ARG_SEED: return load_step(g, 9, g->i64);
  case ARG_ITERATION: return load_step(g, 10, g->i64);
  case ARG_FIRST_IMAGE: return load_step(g, 11, g->i64);
  case ARG_WORKSPACE: return LLVMBuildBitCast(g->b, load_step(g, 8, g->pf32), g->p8, "");
  case ARG_STRUCT: return LLVMConstBitCast(g->structs[c->op], g->p8);
  case ARG_PTR: return pointer(g, a->ptr);
  case ARG_BOOL: return c_i8(g, (int)a->i);
  case ARG_INT: return c_i32(g, a->i);
  case ARG_INT64: return c_i64(g, a->i);
  case ARG_LR: return LLVMBuildFMul(g->b, g->lr, c_f32(g, a->scale), "");
  case ARG_DECAY: return LLVMBuildFMul(g->b, load_step(g, 13, g->f32), c_f32(g, a->scale), "");
  case ARG_MOMENTUM: return load_step(g, 12, g->f32);
  case ARG_STEP: return LLVMBuildBitCast(g->b, g->s, g->p8, "");
  case ARG_INPUTS:
  case ARG_OUTPUTS:
    for (int i = 0; i < a->ptrs.len; i++) items[i] = pointer(g, a->ptrs.data[i]);
    return local_array(g, g->p8, items, (unsigned)a->ptrs.len);
  case ARG_BOOLS:
    for (int i = 0; i < a->bools.len; i++) items[i] = c_i8(g, a->bools.data[i]);
    return local_array(g, g->i8, items, (unsigned)a->bools.len);
  case ARG_SIZES:
    for (int i = 0; i < a->sizes.len; i++) items[i] = c_i64(g, a->sizes.data[i]);
    return LLVMConstBitCast(private_global(g, c_array(g->i64, items, (unsigned)a->sizes.len), "sizes"), g->p8);
  }
  return NULL;
}

static LLVMValueRef emit_call(Gen *g, const Call *c, LLVMTypeRef ret) {
  LLVMValueRef fn = declare(g, c, ret), args[16];
  for (int i = 0; i < c->args.len; i++) args[i] = arg_value(g, c, &c->args.data[i]);
  LLVMValueRef call = LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)c->args.len, "");
  for (int i = 0; i < c->args.len; i++)
    if (arg_type(g, c->args.data[i].kind) == g->i8)
      LLVMAddCallSiteAttribute(call, (unsigned)i + 1, (LLVMAttributeRef)zeroext_attribute(g));
  return call;
}

/* if (s->profile) swn_profile_mark(s->profile, op, phase); */
static void profile_mark(Gen *g, int op, int phase) {
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, "swn_profile_mark");
  if (!fn) {
    LLVMTypeRef params[3] = {g->p8, g->i32, g->i32};
    fn = LLVMAddFunction(g->mod, "swn_profile_mark", LLVMFunctionType(LLVMVoidTypeInContext(g->ctx), params, 3, 0));
  }
  LLVMValueRef profile = load_step(g, 0, g->p8);
  LLVMValueRef here = LLVMGetBasicBlockParent(LLVMGetInsertBlock(g->b));
  LLVMBasicBlockRef mark = LLVMAppendBasicBlockInContext(g->ctx, here, "profile");
  LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(g->ctx, here, "");
  LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, profile, ""), after, mark);
  LLVMPositionBuilderAtEnd(g->b, mark);
  LLVMValueRef args[3] = {profile, c_i32(g, op), c_i32(g, phase)};
  LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, args, 3, "");
  LLVMBuildBr(g->b, after);
  LLVMPositionBuilderAtEnd(g->b, after);
}

static void emit_calls(Gen *g, const CallList *calls, int phase) {
  int last_op = -1;
  for (int i = 0; i < calls->len; i++) {
    if (calls->data[i].op != last_op) profile_mark(g, calls->data[i].op, phase);
    last_op = calls->data[i].op;
    emit_call(g, &calls->data[i], LLVMVoidTypeInContext(g->ctx));
  }
  profile_mark(g, -1, phase);
}

/* A step function: void name(SwnStep *s[, extra]), with the region bases loaded once. */
static LLVMValueRef begin_step_function(Gen *g, const char *name, LLVMTypeRef extra) {
  LLVMTypeRef params[2] = {g->p8, extra};
  LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(LLVMVoidTypeInContext(g->ctx), params, extra ? 2 : 1, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));
  g->s = LLVMBuildBitCast(g->b, LLVMGetParam(fn, 0), LLVMPointerType(g->step, 0), "s");
  g->batch32 = load_step(g, 1, g->i32);
  g->batch64 = LLVMBuildSExt(g->b, g->batch32, g->i64, "B");
  for (int r = 0; r < 6; r++) g->region[r] = load_step(g, 2 + (unsigned)r, g->pf32);
  return fn;
}

static void build_functions(Gen *g, LLVMValueRef fns[4]) {
  /* forward(SwnStep *, bool train): the flag is tested, not trusted to be 0 or 1 */
  fns[1] = begin_step_function(g, "forward", g->i8);
  g->train = LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntNE, LLVMGetParam(fns[1], 1), c_i8(g, 0), ""), g->i8, "train");
  emit_calls(g, &g->l->forward, 0);
  LLVMBuildRetVoid(g->b);
  fns[2] = begin_step_function(g, "backward", NULL);
  emit_calls(g, &g->l->backward, 1);
  LLVMBuildRetVoid(g->b);
  fns[3] = begin_step_function(g, "update", g->f32);
  g->lr = LLVMGetParam(fns[3], 1);
  emit_calls(g, &g->l->update, 2);
  LLVMBuildRetVoid(g->b);
  /* size_t workspace(void): the largest any kernel asks for */
  fns[0] = LLVMAddFunction(g->mod, "workspace", LLVMFunctionType(g->i64, NULL, 0, 0));
  LLVMSetLinkage(fns[0], LLVMInternalLinkage);
  LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, fns[0], "entry"));
  LLVMValueRef need = c_i64(g, 0);
  for (int i = 0; i < g->l->workspace.len; i++) {
    LLVMValueRef w = emit_call(g, &g->l->workspace.data[i], g->i64);
    need = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntUGT, w, need, ""), w, need, "");
  }
  LLVMBuildRet(g->b, need);
  for (int i = 0; i < 4; i++) LLVMAddAttributeAtIndex(fns[i], LLVMAttributeFunctionIndex,
                                                      LLVMCreateEnumAttribute(g->ctx, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
  if (LLVMCountParams(fns[1]) == 2) LLVMAddAttributeAtIndex(fns[1], 2, (LLVMAttributeRef)zeroext_attribute(g));
}

/* ------------------------------------------------------------------ descriptor tables */

static LLVMValueRef table(Gen *g, const char *type, LLVMValueRef *rows, unsigned n, const char *name) {
  LLVMTypeRef t = llvm_runtime_type(g->ctx, type);
  rows[n] = LLVMConstNull(t); /* the zero row that ends each table, as in C */
  return LLVMConstBitCast(private_global(g, c_array(t, rows, n + 1), name), g->p8);
}

static LLVMValueRef build_tables(Gen *g, LLVMValueRef *layers, LLVMValueRef *params, LLVMValueRef *state) {
  const Lowered *l = g->l;
  const Graph *gr = &l->m->graph;
  int n = gr->ops.len > l->params.len ? gr->ops.len : l->params.len;
  if (l->state.len > n) n = l->state.len;
  LLVMValueRef *rows = calloc((size_t)n + 2, sizeof *rows);
  for (int i = 0; i < gr->ops.len; i++) rows[i] = c_string(g, gr->ops.data[i].name);
  *layers = LLVMConstBitCast(private_global(g, c_array(g->p8, rows, (unsigned)gr->ops.len), "layers"), g->p8);
  for (int i = 0; i < l->params.len; i++) {
    const ParamEntry *p = &l->params.data[i];
    LLVMValueRef dims[4];
    for (int d = 0; d < 4; d++) dims[d] = c_i64(g, d < p->rank ? p->dims[d] : 0);
    LLVMValueRef f[] = {c_string(g, p->name), c_i32(g, p->rank), c_array(g->i64, dims, 4), c_i64(g, p->offset),
                        c_i64(g, p->count), c_f32(g, p->lr_mult), c_f32(g, p->decay_mult), c_i32(g, p->init),
                        c_f32(g, p->init_arg), c_i64(g, p->fan_in)};
    rows[i] = LLVMConstNamedStruct(llvm_runtime_type(g->ctx, "SwnParamInfo"), f, 10);
  }
  *params = table(g, "SwnParamInfo", rows, (unsigned)l->params.len, "params");
  for (int i = 0; i < l->state.len; i++) {
    const StateEntry *s = &l->state.data[i];
    LLVMValueRef f[] = {c_string(g, s->name), c_i64(g, s->offset), c_i64(g, s->count), c_f32(g, s->init)};
    rows[i] = LLVMConstNamedStruct(llvm_runtime_type(g->ctx, "SwnStateInfo"), f, 4);
  }
  *state = table(g, "SwnStateInfo", rows, (unsigned)l->state.len, "state");
  for (int i = 0; i < l->metrics.len; i++) {
    const MetricEntry *e = &l->metrics.data[i];
    LLVMValueRef f[] = {c_string(g, e->name), c_i64(g, e->offset), c_i8(g, e->is_loss)};
    rows[i] = LLVMConstNamedStruct(llvm_runtime_type(g->ctx, "SwnMetric"), f, 3);
  }
  LLVMValueRef metrics = table(g, "SwnMetric", rows, (unsigned)l->metrics.len, "metrics");
  free(rows);
  return metrics;
}

static LLVMValueRef train_config(Gen *g) {
  const TrainConfig *t = &g->l->m->train;
  LLVMValueRef steps[16];
  for (int i = 0; i < 16; i++) steps[i] = c_i64(g, i < t->steps.n ? t->steps.v[i] : 0);
  LLVMValueRef f[] = {c_i64(g, t->batch), c_i64(g, t->test_batch), c_i64(g, t->epochs), c_i64(g, t->iterations),
                      c_f32(g, t->lr), c_f32(g, t->momentum), c_f32(g, t->weight_decay), c_i32(g, t->lr_policy),
                      c_f32(g, t->gamma), c_f32(g, t->power), c_i64(g, t->step), c_array(g->i64, steps, 16),
                      c_i32(g, t->steps.n), c_i64(g, t->warmup), c_i64(g, t->seed), c_i64(g, t->eval_interval),
                      c_i64(g, t->display), c_i32(g, t->optimizer), c_f32(g, t->elastic)};
  return LLVMConstNamedStruct(llvm_runtime_type(g->ctx, "SwnTrainConfig"), f, 19);
}

static LLVMValueRef file_list(Gen *g, const StrList *files) {
  LLVMValueRef items[16];
  for (int i = 0; i < 16; i++) items[i] = i < files->n ? c_string(g, files->v[i]) : c_null(g);
  return c_array(g->p8, items, 16);
}

static LLVMValueRef data_config(Gen *g) {
  const DataConfig *d = &g->l->m->data;
  LLVMValueRef mean[4];
  for (int i = 0; i < 4; i++) mean[i] = c_f32(g, i < d->mean.n ? d->mean.v[i] : 0);
  LLVMValueRef f[] = {c_i32(g, d->source), file_list(g, &g->l->train_files), file_list(g, &g->l->test_files),
                      c_i32(g, g->l->train_files.n), c_i32(g, g->l->test_files.n), c_f32(g, d->scale),
                      c_array(g->f32, mean, 4), c_i32(g, d->mean.n), c_i64(g, d->train_size), c_i64(g, d->test_size),
                      c_i64(g, d->classes)};
  return LLVMConstNamedStruct(llvm_runtime_type(g->ctx, "SwnDataConfig"), f, 11);
}

static void build_network(Gen *g, const char *source, LLVMValueRef fns[4]) {
  const Lowered *l = g->l;
  const Module *m = l->m;
  LLVMValueRef layers, params, state, metrics = build_tables(g, &layers, &params, &state);
  LLVMValueRef f[] = {c_string(g, m->name), c_string(g, source), LLVMConstInt(g->i64, l->hash, 0),
                      c_i64(g, m->plan.image_words), c_i64(g, m->plan.fixed_words), c_i64(g, m->plan.param_words),
                      c_i64(g, m->plan.state_words), layers, c_i32(g, m->graph.ops.len), params,
                      c_i32(g, l->params.len), state, c_i32(g, l->state.len), metrics, c_i32(g, l->metrics.len),
                      c_i32(g, l->in_c), c_i32(g, l->in_h), c_i32(g, l->in_w), c_i64(g, l->input_offset),
                      c_i64(g, l->label_offset), c_i32(g, l->classes), train_config(g), data_config(g),
                      LLVMConstBitCast(fns[0], g->p8), LLVMConstBitCast(fns[1], g->p8),
                      LLVMConstBitCast(fns[2], g->p8), LLVMConstBitCast(fns[3], g->p8), c_i32(g, l->nbuckets)};
  LLVMValueRef network = private_global(g, LLVMConstNamedStruct(llvm_runtime_type(g->ctx, "SwnNetwork"), f, 28), "network");
  /* int main(int argc, char **argv) { return swn_main(&network, argc, argv); } */
  LLVMTypeRef main_params[2] = {g->i32, g->p8}, swn_params[3] = {g->p8, g->i32, g->p8};
  LLVMValueRef swn_main = LLVMAddFunction(g->mod, "swn_main", LLVMFunctionType(g->i32, swn_params, 3, 0));
  LLVMValueRef main_fn = LLVMAddFunction(g->mod, "main", LLVMFunctionType(g->i32, main_params, 2, 0));
  LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, main_fn, "entry"));
  LLVMValueRef args[3] = {LLVMConstBitCast(network, g->p8), LLVMGetParam(main_fn, 0), LLVMGetParam(main_fn, 1)};
  LLVMBuildRet(g->b, LLVMBuildCall2(g->b, LLVMGlobalGetValueType(swn_main), swn_main, args, 3, ""));
}

LLVMModuleRef llvm_build_module(const Module *m, const char *source, LLVMContextRef ctx) {
  Arena a = {0};
  Lowered l;
  if (!lower_module(m, source, &a, &l)) {
    arena_free(&a);
    return NULL;
  }
  Gen g = {.l = &l, .ctx = ctx, .mod = LLVMModuleCreateWithNameInContext(m->name, ctx),
           .b = LLVMCreateBuilderInContext(ctx)};
  g.i8 = LLVMInt8TypeInContext(ctx), g.i32 = LLVMInt32TypeInContext(ctx), g.i64 = LLVMInt64TypeInContext(ctx);
  g.f32 = LLVMFloatTypeInContext(ctx), g.p8 = LLVMPointerType(g.i8, 0), g.pf32 = LLVMPointerType(g.f32, 0);
  g.step = llvm_runtime_type(ctx, "SwnStep");
  LLVMSetSourceFileName(g.mod, source, strlen(source));
  build_structs(&g);
  LLVMValueRef fns[4];
  build_functions(&g, fns);
  build_network(&g, source, fns);
  LLVMDisposeBuilder(g.b);
  free(g.structs);
  arena_free(&a);
  char *message = NULL;
  if (LLVMVerifyModule(g.mod, LLVMReturnStatusAction, &message)) {
    diag_error((SrcLoc){0}, "internal: LLVM rejected the module for '%s': %s", m->name, message);
    LLVMDisposeMessage(message);
    LLVMDisposeModule(g.mod);
    return NULL;
  }
  LLVMDisposeMessage(message);
  return g.mod;
}
