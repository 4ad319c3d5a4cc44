/* The C backend: prints the lowered program as one readable C file (docs/runtime.md shows
 * an excerpt): the constants (kernel-parameter structs, the runtime's tables, the network)
 * with every field named as the contract declares it, then the workspace, forward, backward
 * and update functions with constant shapes and offsets, and main. */
#define _GNU_SOURCE /* vasprintf */
#include "emit_c.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Output with a column count, so that long initialisers wrap. */
typedef struct Out {
  FILE *f;
  int col;
} Out;

static void put(Out *o, const char *s) {
  fputs(s, o->f);
  const char *nl = strrchr(s, '\n');
  o->col = nl ? (int)strlen(nl + 1) : o->col + (int)strlen(s);
}

static void putf(Out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(Out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = NULL;
  int n = vasprintf(&text, fmt, ap);
  va_end(ap);
  if (n < 0) swnc_out_of_memory("the generated C text");
  put(o, text);
  free(text);
}

/* Between two items: a comma, then a line break if the line is long, else a space. */
static void separate(Out *o, int indent) {
  put(o, ",");
  if (o->col < 88) return put(o, " ");
  fputc('\n', o->f);
  for (int i = 0; i < indent; i++) fputc(' ', o->f);
  o->col = indent;
}

static const char *const region_macro[REG_COUNT] = {"ACT",  "FIX",      "PARAM",
                                                    "GRAD", "MOMENTUM", "STATE"};

static void print_ptr(Out *o, Ptr p) {
  if (p.null) return put(o, "NULL");
  putf(o, "%s%s(%" PRId64 ")", p.i32 ? "(int32_t *)" : "", region_macro[p.region], p.offset);
}

static void print_c_string(Out *o, const char *s) {
  put(o, "\"");
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      putf(o, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7F)
      putf(o, "\\%03o", ch);
    else
      putf(o, "%c", ch);
  }
  put(o, "\"");
}

/* A float literal that reads back as the same float: 9 significant digits, always with a
 * point or an exponent so that the suffix applies. */
static void print_float(Out *o, double v) {
  char buf[48];
  snprintf(buf, sizeof buf, "%.9g", (double)(float)v);
  putf(o, "%s%sf", buf, strpbrk(buf, ".e") ? "" : ".0");
}

/* ------------------------------------------------------------------ constants */

static void print_datum(Out *o, const AbiField *type, bool element, const Datum *d, int indent);

static void print_scalar(Out *o, AbiCode code, const Datum *d) {
  double number = d->kind == DATUM_FLOAT ? d->f : (double)d->i;
  switch (code) {
  case ABI_F32: return print_float(o, number);
  case ABI_BOOL: return put(o, d->i ? "true" : "false");
  case ABI_U64: return putf(o, "UINT64_C(0x%016" PRIx64 ")", (uint64_t)d->i);
  case ABI_PTR:
    if (d->kind == DATUM_STRING) return print_c_string(o, d->s);
    return put(o, d->kind == DATUM_SYMBOL ? d->s : "NULL");
  case ABI_I32:
  case ABI_I64:
  case ABI_SIZE:
  case ABI_VOID: /* no scalar is void or a struct */
  case ABI_STRUCT:
    putf(o, "%" PRId64, d->i);
    if (d->s) putf(o, " /* %s */", d->s);
  }
}

static void print_struct(Out *o, const AbiStruct *s, const Datum *d, int indent) {
  put(o, "{");
  for (int k = 0; k < s->nfields; k++) {
    static const Datum zero = {0};
    if (k) separate(o, indent + 2);
    putf(o, ".%s = ", s->fields[k].name);
    print_datum(o, &s->fields[k], false, k < d->n ? &d->items[k] : &zero, indent + 2);
  }
  put(o, "}");
}

/* `element`: d is one element of the array `type` describes. */
static void print_datum(Out *o, const AbiField *type, bool element, const Datum *d, int indent) {
  if (type->length > 0 && !element) {
    put(o, "{");
    for (int i = 0; i < d->n; i++) {
      if (i) separate(o, indent + 2);
      print_datum(o, type, true, &d->items[i], indent + 2);
    }
    return put(o, "}");
  }
  if (type->code != ABI_STRUCT) return print_scalar(o, type->code, d);
  if (d->kind == DATUM_ZERO) return put(o, "{0}");
  print_struct(o, abi_struct_named(type->ctype), d, indent);
}

static void print_globals(Out *o, const Lowered *l) {
  for (int i = 0; i < l->globals.len; i++) {
    const Global *g = &l->globals.data[i];
    if (g->comment) putf(o, "/* %s */\n", g->comment);
    const char *ctype = g->type.ctype;
    putf(o, "static const %s%s%s%s = ", ctype, ctype[strlen(ctype) - 1] == '*' ? "" : " ", g->name,
         g->type.length > 0 ? "[]" : "");
    if (g->type.length > 0) { /* a table: one element a line */
      put(o, "{\n");
      for (int k = 0; k < g->value.n; k++) {
        put(o, "  ");
        print_datum(o, &g->type, true, &g->value.items[k], 2);
        put(o, ",\n");
      }
      put(o, "};\n");
    } else {
      print_datum(o, &g->type, false, &g->value, 0);
      put(o, ";\n");
    }
  }
}

/* ------------------------------------------------------------------ calls */

static void print_arg(Out *o, const Call *c, const CallArg *a) {
  int field = arg_step_field(a->kind);
  if (field >= 0) putf(o, "s->%s", abi_structs[ABI_SwnStep].fields[field].name);
  switch (a->kind) {
  case ARG_BATCH: return put(o, "B");
  case ARG_STRUCT: return putf(o, "&%s", c->object);
  case ARG_PTR: return print_ptr(o, a->ptr);
  case ARG_BOOL: return put(o, a->i ? "true" : "false");
  case ARG_INT: return putf(o, "%" PRId64, a->i);
  case ARG_INT64: return putf(o, "INT64_C(%" PRId64 ")", a->i);
  case ARG_LR: return put(o, "lr * "), print_float(o, a->scale);
  case ARG_DECAY:
  case ARG_FOLD_SCALE: return put(o, " * "), print_float(o, a->scale);
  case ARG_FLOAT: return print_float(o, a->scale);
  case ARG_STEP: return put(o, "s");
  case ARG_SIZES:
    put(o, "(const int64_t[]){");
    for (int i = 0; i < a->sizes.len; i++) {
      if (i) separate(o, 6);
      putf(o, "%" PRId64, a->sizes.data[i]);
    }
    return put(o, "}");
  case ARG_INPUTS:
  case ARG_OUTPUTS:
    put(o, a->kind == ARG_INPUTS ? "(const float *const[]){" : "(float *const[]){");
    for (int i = 0; i < a->ptrs.len; i++) {
      if (i) separate(o, 6);
      print_ptr(o, a->ptrs.data[i]);
    }
    return put(o, "}");
  case ARG_BOOLS:
    put(o, "(const bool[]){");
    for (int i = 0; i < a->bools.len; i++) {
      if (i) separate(o, 6);
      put(o, a->bools.data[i] ? "true" : "false");
    }
    return put(o, "}");
  case ARG_SEED: /* a SwnStep field, printed above */
  case ARG_ITERATION:
  case ARG_FIRST_IMAGE:
  case ARG_WORKSPACE:
  case ARG_MOMENTUM:
  case ARG_FOLD_KEEP: return;
  }
}

static void print_call(Out *o, const Call *c) {
  putf(o, "  %s(", c->fn->name);
  for (int k = 0; k < c->args.len; k++) {
    if (k) separate(o, 4);
    print_arg(o, c, &c->args.data[k]);
  }
  put(o, ");\n");
}

static void print_calls(Out *o, const CallList *calls, const char *phase) {
  int last_op = -1;
  for (int i = 0; i < calls->len; i++) {
    const Call *c = &calls->data[i];
    if (c->op != last_op)
      putf(o, "  /* %s */\n  if (s->profile) swn_profile_mark(s->profile, %d, %s);\n", c->label,
           c->op, phase);
    last_op = c->op;
    print_call(o, c);
  }
  putf(o, "  if (s->profile) swn_profile_mark(s->profile, -1, %s);\n", phase);
}

static void print_functions(Out *o, const Lowered *l) {
  put(o, "\nstatic size_t " LOWERED_WORKSPACE "(void) {\n  size_t need = 0, w;\n");
  for (int i = 0; i < l->workspace.len; i++)
    putf(o, "  if ((w = %s(&%s)) > need) need = w;\n", l->workspace.data[i].fn->name,
         l->workspace.data[i].object);
  put(o, "  return need;\n}\n\nstatic void " LOWERED_FORWARD "(SwnStep *s) {\n"
         "  const int B = s->batch;\n");
  print_calls(o, &l->forward, "SWN_PHASE_FORWARD");
  put(o, "}\n\nstatic void " LOWERED_EVALUATE "(SwnStep *s) {\n  const int B = s->batch;\n");
  print_calls(o, &l->evaluate, "SWN_PHASE_FORWARD");
  put(o, "}\n\nstatic void " LOWERED_BACKWARD "(SwnStep *s) {\n  const int B = s->batch;\n");
  print_calls(o, &l->backward, "SWN_PHASE_BACKWARD");
  put(o, "}\n\nstatic void " LOWERED_UPDATE "(SwnStep *s, float lr) {\n");
  print_calls(o, &l->update, "SWN_PHASE_UPDATE");
  put(o, "}\n");
}

bool emit_c(const Module *m, const char *source, FILE *f) {
  Arena a = {0};
  Lowered l;
  bool ok = lower_module(m, source, &a, &l);
  if (ok) {
    Out o = {f, 0};
    put(&o, "/* Generated by swnc from ");
    put(&o, source);
    putf(&o, ": network %s. Do not edit: change the .swn file. */\n", l.name);
    put(&o, "#include <stdint.h>\n\n#include \"swnc_rt.h\"\n\n"
            "/* per-image buffers sit at offset x batch; the other regions have fixed offsets */\n"
            "#define ACT(o) (s->image + (size_t)(o) * (size_t)B)\n#define FIX(o) (s->fixed + (o))\n"
            "#define PARAM(o) (s->params + (o))\n#define GRAD(o) (s->grads + (o))\n"
            "#define MOMENTUM(o) (s->momentum + (o))\n#define STATE(o) (s->state + (o))\n\n"
            "static SwnWorkspaceFn " LOWERED_WORKSPACE ";\nstatic SwnStepFn " LOWERED_FORWARD
            ", " LOWERED_EVALUATE ", " LOWERED_BACKWARD ";\nstatic SwnUpdateFn " LOWERED_UPDATE
            ";\n\n");
    print_globals(&o, &l);
    print_functions(&o, &l);
    put(&o, "\nint main(int argc, char **argv) { return swn_main(&" LOWERED_NETWORK
            ", argc, argv); }\n");
  }
  arena_free(&a);
  return ok;
}
