/* The LLVM backend: translates the lowered program (codegen/lower.h) into an LLVM module:
 * its constants as private globals, workspace/forward/backward/update functions whose bodies
 * are the same calls the C backend prints, and main. Struct types and function types come
 * from the contract's tables (codegen/contract.h): a C bool is i8 (zero-extended at calls),
 * every pointer is i8*, which has the same ABI; tests/codegen/test_llvm_layout.c checks every
 * struct's offsets against the C compiler's. */
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
  /* in the function being built */
  LLVMValueRef s, batch32, batch64, lr;
  LLVMValueRef region[REG_COUNT]; /* float * bases */
} Gen;

/* ------------------------------------------------------------------ types from the contract */

static LLVMTypeRef code_type(LLVMContextRef c, AbiCode code, const char *ctype) {
  switch (code) {
  case ABI_VOID: return LLVMVoidTypeInContext(c);
  case ABI_I32: return LLVMInt32TypeInContext(c);
  case ABI_I64:
  case ABI_U64:
  case ABI_SIZE: return LLVMInt64TypeInContext(c);
  case ABI_F32: return LLVMFloatTypeInContext(c);
  case ABI_BOOL: return LLVMInt8TypeInContext(c);
  case ABI_PTR: return LLVMPointerType(LLVMInt8TypeInContext(c), 0);
  case ABI_STRUCT: return llvm_runtime_type(c, ctype);
  }
  return NULL;
}

static LLVMTypeRef field_type(LLVMContextRef c, const AbiField *f) {
  LLVMTypeRef t = code_type(c, f->code, f->ctype);
  return f->length > 0 ? LLVMArrayType(t, (unsigned)f->length) : t;
}

LLVMTypeRef llvm_runtime_type(LLVMContextRef c, const char *name) {
  LLVMTypeRef t = LLVMGetTypeByName2(c, name);
  if (t) return t;
  const AbiStruct *s = abi_struct_named(name);
  if (!s) return NULL;
  LLVMTypeRef *fields = xcalloc((size_t)s->nfields, sizeof *fields, "an LLVM struct type");
  for (int i = 0; i < s->nfields; i++) fields[i] = field_type(c, &s->fields[i]);
  t = LLVMStructCreateNamed(c, name);
  LLVMStructSetBody(t, fields, (unsigned)s->nfields, 0);
  free(fields);
  return t;
}

/* ------------------------------------------------------------------ constants */

static LLVMValueRef c_i32(Gen *g, int64_t v) {
  return LLVMConstInt(g->i32, (unsigned long long)v, 1);
}
static LLVMValueRef c_i64(Gen *g, int64_t v) {
  return LLVMConstInt(g->i64, (unsigned long long)v, 1);
}
static LLVMValueRef c_i8(Gen *g, int v) { return LLVMConstInt(g->i8, (unsigned long long)v, 0); }
static LLVMValueRef c_f32(Gen *g, double v) { return LLVMConstReal(g->f32, (float)v); }
static LLVMValueRef c_null(Gen *g) { return LLVMConstPointerNull(g->p8); }

static LLVMValueRef private_global(Gen *g, LLVMValueRef init, const char *name) {
  LLVMValueRef v = LLVMAddGlobal(g->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(v, init);
  LLVMSetGlobalConstant(v, 1);
  LLVMSetLinkage(v, LLVMPrivateLinkage);
  return v;
}

static LLVMValueRef c_string(Gen *g, const char *s) {
  LLVMValueRef data = LLVMConstStringInContext(g->ctx, s, (unsigned)strlen(s), 0);
  LLVMValueRef v = private_global(g, data, ".str");
  LLVMSetUnnamedAddress(v, LLVMGlobalUnnamedAddr);
  return LLVMConstBitCast(v, g->p8);
}

/* A global or step function the lowered program names. */
static LLVMValueRef c_symbol(Gen *g, const char *name) {
  LLVMValueRef v = LLVMGetNamedGlobal(g->mod, name);
  if (!v) v = LLVMGetNamedFunction(g->mod, name);
  return v ? LLVMConstBitCast(v, g->p8) : c_null(g);
}

static LLVMValueRef const_of(Gen *g, const AbiField *type, bool element, const Datum *d);

static LLVMValueRef const_array(Gen *g, const AbiField *type, int length, const Datum *d) {
  LLVMTypeRef elem = code_type(g->ctx, type->code, type->ctype);
  LLVMValueRef *items = xcalloc((size_t)length, sizeof *items, "an LLVM constant");
  for (int i = 0; i < length; i++)
    items[i] = i < d->n ? const_of(g, type, true, &d->items[i]) : LLVMConstNull(elem);
  LLVMValueRef array = LLVMConstArray(elem, items, (unsigned)length);
  free(items);
  return array;
}

static LLVMValueRef const_struct(Gen *g, const char *name, const Datum *d) {
  const AbiStruct *s = abi_struct_named(name);
  LLVMTypeRef t = llvm_runtime_type(g->ctx, name);
  if (d->kind == DATUM_ZERO) return LLVMConstNull(t);
  static const Datum zero = {0};
  LLVMValueRef *fields = xcalloc((size_t)s->nfields, sizeof *fields, "an LLVM constant");
  for (int k = 0; k < s->nfields; k++)
    fields[k] = const_of(g, &s->fields[k], false, k < d->n ? &d->items[k] : &zero);
  LLVMValueRef v = LLVMConstNamedStruct(t, fields, (unsigned)s->nfields);
  free(fields);
  return v;
}

/* `element`: d is one element of the array `type` describes. */
static LLVMValueRef const_of(Gen *g, const AbiField *type, bool element, const Datum *d) {
  if (type->length > 0 && !element) return const_array(g, type, type->length, d);
  double number = d->kind == DATUM_FLOAT ? d->f : (double)d->i;
  switch (type->code) {
  case ABI_STRUCT: return const_struct(g, type->ctype, d);
  case ABI_I32: return c_i32(g, d->i);
  case ABI_I64:
  case ABI_U64:
  case ABI_SIZE: return c_i64(g, d->i);
  case ABI_F32: return c_f32(g, number);
  case ABI_BOOL: return c_i8(g, d->i != 0);
  case ABI_PTR:
    if (d->kind == DATUM_STRING) return c_string(g, d->s);
    return d->kind == DATUM_SYMBOL ? c_symbol(g, d->s) : c_null(g);
  case ABI_VOID: break;
  }
  return NULL;
}

static void build_globals(Gen *g) {
  for (int i = 0; i < g->l->globals.len; i++) {
    const Global *gl = &g->l->globals.data[i];
    private_global(g, const_of(g, &gl->type, false, &gl->value), gl->name);
  }
}

/* ------------------------------------------------------------------ calls */

static LLVMAttributeRef zeroext(Gen *g) {
  return LLVMCreateEnumAttribute(g->ctx, LLVMGetEnumAttributeKindForName("zeroext", 7), 0);
}

/* Declares a function of the contract as its row declares it. */
static LLVMValueRef declare(Gen *g, const AbiFunction *fn) {
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, fn->name);
  if (f) return f;
  LLVMTypeRef *params = xcalloc((size_t)fn->nparams, sizeof *params, "an LLVM function type");
  for (int i = 0; i < fn->nparams; i++)
    params[i] = code_type(g->ctx, fn->params[i].code, fn->params[i].ctype);
  LLVMTypeRef type =
      LLVMFunctionType(code_type(g->ctx, fn->ret, NULL), params, (unsigned)fn->nparams, 0);
  f = LLVMAddFunction(g->mod, fn->name, type);
  for (int i = 0; i < fn->nparams; i++)
    if (fn->params[i].code == ABI_BOOL) LLVMAddAttributeAtIndex(f, (unsigned)i + 1, zeroext(g));
  free(params);
  return f;
}

static LLVMValueRef pointer(Gen *g, Ptr p) {
  if (p.null) return c_null(g);
  LLVMValueRef offset = c_i64(g, p.offset);
  if (p.region == REG_IMAGE) offset = LLVMBuildMul(g->b, offset, g->batch64, "");
  LLVMValueRef at = LLVMBuildGEP2(g->b, g->f32, g->region[p.region], &offset, 1, "");
  return LLVMBuildBitCast(g->b, at, g->p8, "");
}

/* A local array of `n` elements of `elem` in the frame, filled with `items`. */
static LLVMValueRef local_array(Gen *g, LLVMTypeRef elem, LLVMValueRef *items, unsigned n) {
  LLVMTypeRef t = LLVMArrayType(elem, n);
  LLVMValueRef array = LLVMBuildAlloca(g->b, t, "");
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef idx[2] = {c_i32(g, 0), c_i32(g, (int64_t)i)};
    LLVMBuildStore(g->b, items[i], LLVMBuildInBoundsGEP2(g->b, t, array, idx, 2, ""));
  }
  free(items);
  return LLVMBuildBitCast(g->b, array, g->p8, "");
}

static LLVMValueRef *value_list(int n) {
  return xcalloc((size_t)n, sizeof(LLVMValueRef), "a call's arguments");
}

/* SwnStep's field `field` as type `t` (pointer fields are i8* in the mirrored type). */
static LLVMValueRef load_step(Gen *g, int field, LLVMTypeRef t) {
  LLVMTypeRef declared = LLVMStructGetTypeAtIndex(g->step, (unsigned)field);
  LLVMValueRef at = LLVMBuildStructGEP2(g->b, g->step, g->s, (unsigned)field, "");
  LLVMValueRef v = LLVMBuildLoad2(g->b, declared, at, "");
  return declared == t ? v : LLVMBuildBitCast(g->b, v, t, "");
}

static LLVMValueRef arg_value(Gen *g, const Call *c, const CallArg *a) {
  int field = arg_step_field(a->kind);
  LLVMValueRef *items;
  switch (a->kind) {
  case ARG_BATCH: return g->batch32;
  case ARG_SEED:
  case ARG_ITERATION:
  case ARG_FIRST_IMAGE: return load_step(g, field, g->i64);
  case ARG_WORKSPACE: return LLVMBuildBitCast(g->b, load_step(g, field, g->pf32), g->p8, "");
  case ARG_STRUCT: return c_symbol(g, c->object);
  case ARG_PTR: return pointer(g, a->ptr);
  case ARG_BOOL: return c_i8(g, (int)a->i);
  case ARG_INT: return c_i32(g, a->i);
  case ARG_INT64: return c_i64(g, a->i);
  case ARG_LR: return LLVMBuildFMul(g->b, g->lr, c_f32(g, a->scale), "");
  case ARG_DECAY:
  case ARG_FOLD_SCALE:
    return LLVMBuildFMul(g->b, load_step(g, field, g->f32), c_f32(g, a->scale), "");
  case ARG_MOMENTUM:
  case ARG_FOLD_KEEP: return load_step(g, field, g->f32);
  case ARG_FLOAT: return c_f32(g, a->scale);
  case ARG_STEP: return LLVMBuildBitCast(g->b, g->s, g->p8, "");
  case ARG_INPUTS:
  case ARG_OUTPUTS:
    items = value_list(a->ptrs.len);
    for (int i = 0; i < a->ptrs.len; i++) items[i] = pointer(g, a->ptrs.data[i]);
    return local_array(g, g->p8, items, (unsigned)a->ptrs.len);
  case ARG_BOOLS:
    items = value_list(a->bools.len);
    for (int i = 0; i < a->bools.len; i++) items[i] = c_i8(g, a->bools.data[i]);
    return local_array(g, g->i8, items, (unsigned)a->bools.len);
  case ARG_SIZES: {
    items = value_list(a->sizes.len);
    for (int i = 0; i < a->sizes.len; i++) items[i] = c_i64(g, a->sizes.data[i]);
    LLVMValueRef sizes = LLVMConstArray(g->i64, items, (unsigned)a->sizes.len);
    free(items);
    return LLVMConstBitCast(private_global(g, sizes, "sizes"), g->p8);
  }
  }
  return NULL;
}

static LLVMValueRef emit_call(Gen *g, const Call *c) {
  LLVMValueRef fn = declare(g, c->fn), *args = value_list(c->args.len);
  for (int i = 0; i < c->args.len; i++) args[i] = arg_value(g, c, &c->args.data[i]);
  LLVMValueRef call =
      LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)c->args.len, "");
  for (int i = 0; i < c->args.len; i++)
    if (c->fn->params[i].code == ABI_BOOL)
      LLVMAddCallSiteAttribute(call, (unsigned)i + 1, zeroext(g));
  free(args);
  return call;
}

/* if (s->profile) swn_profile_mark(s->profile, op, phase); */
static void profile_mark(Gen *g, int op, int phase) {
  LLVMValueRef fn = declare(g, abi_function("swn_profile_mark"));
  LLVMValueRef profile = load_step(g, SwnStep_profile, g->p8);
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
    emit_call(g, &calls->data[i]);
  }
  profile_mark(g, -1, phase);
}

/* ------------------------------------------------------------------ functions */

static LLVMValueRef add_function(Gen *g, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                                 unsigned n) {
  LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(ret, params, n, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(
      fn, LLVMAttributeFunctionIndex,
      LLVMCreateEnumAttribute(g->ctx, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
  return fn;
}

enum { FN_WORKSPACE, FN_FORWARD, FN_EVALUATE, FN_BACKWARD, FN_UPDATE, STEP_FUNCTIONS };

/* The step functions' declarations, before the constants that name them. */
static void declare_step_functions(Gen *g, LLVMValueRef fns[STEP_FUNCTIONS]) {
  LLVMTypeRef step_then_lr[2] = {g->p8, g->f32}, void_type = LLVMVoidTypeInContext(g->ctx);
  fns[FN_WORKSPACE] = add_function(g, LOWERED_WORKSPACE, g->i64, NULL, 0);
  fns[FN_FORWARD] = add_function(g, LOWERED_FORWARD, void_type, step_then_lr, 1);
  fns[FN_EVALUATE] = add_function(g, LOWERED_EVALUATE, void_type, step_then_lr, 1);
  fns[FN_BACKWARD] = add_function(g, LOWERED_BACKWARD, void_type, step_then_lr, 1);
  fns[FN_UPDATE] = add_function(g, LOWERED_UPDATE, void_type, step_then_lr, 2);
}

/* Opens a step function's body: void name(SwnStep *s, ...), with the region bases loaded once. */
static void begin_step(Gen *g, LLVMValueRef fn) {
  LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));
  g->s = LLVMBuildBitCast(g->b, LLVMGetParam(fn, 0), LLVMPointerType(g->step, 0), "s");
  g->batch32 = load_step(g, SwnStep_batch, g->i32);
  g->batch64 = LLVMBuildSExt(g->b, g->batch32, g->i64, "B");
  for (int r = 0; r < REG_COUNT; r++)
    g->region[r] = load_step(g, region_step_field((Region)r), g->pf32);
}

/* void name(SwnStep *s): the calls of one list. */
static void build_step(Gen *g, LLVMValueRef fn, const CallList *calls, int phase) {
  begin_step(g, fn);
  emit_calls(g, calls, phase);
  LLVMBuildRetVoid(g->b);
}

static void build_functions(Gen *g, LLVMValueRef fns[STEP_FUNCTIONS]) {
  build_step(g, fns[FN_FORWARD], &g->l->forward, SWN_PHASE_FORWARD);
  build_step(g, fns[FN_EVALUATE], &g->l->evaluate, SWN_PHASE_FORWARD);
  build_step(g, fns[FN_BACKWARD], &g->l->backward, SWN_PHASE_BACKWARD);
  begin_step(g, fns[FN_UPDATE]);
  g->lr = LLVMGetParam(fns[FN_UPDATE], 1);
  emit_calls(g, &g->l->update, SWN_PHASE_UPDATE);
  LLVMBuildRetVoid(g->b);
  /* size_t workspace(void): the largest any kernel asks for */
  LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, fns[FN_WORKSPACE], "entry"));
  LLVMValueRef need = c_i64(g, 0);
  for (int i = 0; i < g->l->workspace.len; i++) {
    LLVMValueRef w = emit_call(g, &g->l->workspace.data[i]);
    need = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntUGT, w, need, ""), w, need, "");
  }
  LLVMBuildRet(g->b, need);
}

/* int main(int argc, char **argv) { return swn_main(&network, argc, argv); } */
static void build_main(Gen *g) {
  LLVMValueRef swn_main = declare(g, abi_function("swn_main"));
  LLVMTypeRef params[2] = {g->i32, g->p8};
  LLVMValueRef main_fn = LLVMAddFunction(g->mod, "main", LLVMFunctionType(g->i32, params, 2, 0));
  LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, main_fn, "entry"));
  LLVMValueRef args[3] = {c_symbol(g, LOWERED_NETWORK), LLVMGetParam(main_fn, 0),
                          LLVMGetParam(main_fn, 1)};
  LLVMBuildRet(g->b, LLVMBuildCall2(g->b, LLVMGlobalGetValueType(swn_main), swn_main, args, 3, ""));
}

LLVMModuleRef llvm_build_module(const Module *m, const char *source, LLVMContextRef ctx) {
  Arena a = {0};
  Lowered l;
  if (!lower_module(m, source, &a, &l)) {
    arena_free(&a);
    return NULL;
  }
  Gen g = {.l = &l,
           .ctx = ctx,
           .mod = LLVMModuleCreateWithNameInContext(l.name, ctx),
           .b = LLVMCreateBuilderInContext(ctx)};
  g.i8 = LLVMInt8TypeInContext(ctx), g.i32 = LLVMInt32TypeInContext(ctx),
  g.i64 = LLVMInt64TypeInContext(ctx);
  g.f32 = LLVMFloatTypeInContext(ctx), g.p8 = LLVMPointerType(g.i8, 0),
  g.pf32 = LLVMPointerType(g.f32, 0);
  g.step = llvm_runtime_type(ctx, "SwnStep");
  LLVMSetSourceFileName(g.mod, source, strlen(source));
  LLVMValueRef fns[STEP_FUNCTIONS];
  declare_step_functions(&g, fns);
  build_globals(&g);
  build_functions(&g, fns);
  build_main(&g);
  LLVMDisposeBuilder(g.b);
  char *message = NULL;
  if (LLVMVerifyModule(g.mod, LLVMReturnStatusAction, &message)) {
    diag_error((SrcLoc){0}, "internal: LLVM rejected the module for '%s': %s", l.name, message);
    LLVMDisposeMessage(message);
    LLVMDisposeModule(g.mod);
    arena_free(&a);
    return NULL;
  }
  LLVMDisposeMessage(message);
  arena_free(&a);
  return g.mod;
}
