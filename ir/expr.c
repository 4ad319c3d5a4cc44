/* Evaluation of attribute and setting expressions: numbers, words, strings, lists and
 * integer/float arithmetic, with overflow and division-by-zero reported, not undefined. */
#include <math.h>

#include "ir.h"

const char *const_kind_name(ConstKind k) {
  static const char *const names[] = {"an integer", "a number", "a boolean", "a string",
                                      "a word",     "a tensor", "a list"};
  return names[k];
}

static bool is_number(const Const *c) { return c->kind == V_INT || c->kind == V_FLOAT; }
static double as_double(const Const *c) { return c->kind == V_INT ? (double)c->i : c->f; }

static bool int_arith(char op, int64_t a, int64_t b, int64_t *r, SrcLoc loc) {
  bool overflow = false;
  switch (op) {
  case '+': overflow = __builtin_add_overflow(a, b, r); break;
  case '-': overflow = __builtin_sub_overflow(a, b, r); break;
  case '*': overflow = __builtin_mul_overflow(a, b, r); break;
  case '/':
    if (b == 0) {
      diag_error(loc, "division by zero");
      return false;
    }
    if (a == INT64_MIN && b == -1)
      overflow = true;
    else
      *r = a / b;
    break;
  }
  if (overflow) diag_error(loc, "integer overflow in '%c'", op);
  return !overflow;
}

static bool float_arith(char op, double a, double b, double *r, SrcLoc loc) {
  switch (op) {
  case '+': *r = a + b; break;
  case '-': *r = a - b; break;
  case '*': *r = a * b; break;
  case '/':
    if (b == 0) {
      diag_error(loc, "division by zero");
      return false;
    }
    *r = a / b;
    break;
  }
  if (!isfinite(*r)) {
    diag_error(loc, "the result of '%c' is not a finite number", op);
    return false;
  }
  return true;
}

static bool eval_binary(Arena *a, const Expr *e, NameLookup lookup, void *ctx, Const *out) {
  Const l, r;
  if (!expr_eval(a, e->lhs, lookup, ctx, &l) || !expr_eval(a, e->rhs, lookup, ctx, &r))
    return false;
  if (e->op == '+' && l.kind == V_STR && r.kind == V_STR) { /* string concatenation */
    size_t ll = strlen(l.s), rl = strlen(r.s);
    char *s = arena_alloc(a, ll + rl + 1);
    memcpy(s, l.s, ll);
    memcpy(s + ll, r.s, rl);
    *out = (Const){.kind = V_STR, .loc = e->loc, .s = s};
    return true;
  }
  if (!is_number(&l) || !is_number(&r)) {
    const Const *bad = is_number(&l) ? &r : &l;
    diag_error(e->loc, "operator '%c' needs numbers, but got %s", e->op,
               const_kind_name(bad->kind));
    return false;
  }
  *out = (Const){.loc = e->loc};
  /* Integers stay integers, except a division that is not exact: 1/255 is a real number,
   * never a silent 0. */
  bool inexact_division =
      e->op == '/' && l.kind == V_INT && r.kind == V_INT && r.i != 0 && r.i != -1 && l.i % r.i != 0;
  if (l.kind == V_INT && r.kind == V_INT && !inexact_division) {
    out->kind = V_INT;
    return int_arith(e->op, l.i, r.i, &out->i, e->loc);
  }
  out->kind = V_FLOAT;
  return float_arith(e->op, as_double(&l), as_double(&r), &out->f, e->loc);
}

bool expr_eval(Arena *a, const Expr *e, NameLookup lookup, void *ctx, Const *out) {
  *out = (Const){.loc = e->loc};
  switch (e->kind) {
  case EX_INT:
    out->kind = V_INT;
    out->i = e->i;
    return true;
  case EX_FLOAT:
    out->kind = V_FLOAT;
    out->f = e->f;
    return true;
  case EX_BOOL:
    out->kind = V_BOOL;
    out->i = e->i;
    return true;
  case EX_STR:
    out->kind = V_STR;
    out->s = e->s;
    return true;
  case EX_NAME:
    if (lookup && lookup(ctx, e->s, out)) {
      out->loc = e->loc;
      return true;
    }
    out->kind = V_SYM;
    out->s = e->s;
    return true;
  case EX_LIST:
    out->kind = V_LIST;
    for (int i = 0; i < e->items.len; i++) {
      Const item;
      if (!expr_eval(a, e->items.data[i], lookup, ctx, &item)) return false;
      vec_push(a, out->items, item);
    }
    return true;
  case EX_NEG: {
    Const v;
    if (!expr_eval(a, e->lhs, lookup, ctx, &v)) return false;
    if (!is_number(&v)) {
      diag_error(e->loc, "unary '-' needs a number, but got %s", const_kind_name(v.kind));
      return false;
    }
    *out = v;
    out->loc = e->loc;
    if (v.kind == V_FLOAT)
      out->f = -v.f;
    else if (v.i == INT64_MIN) {
      diag_error(e->loc, "integer overflow in '-'");
      return false;
    } else
      out->i = -v.i;
    return true;
  }
  case EX_BINARY: return eval_binary(a, e, lookup, ctx, out);
  }
  return false;
}
