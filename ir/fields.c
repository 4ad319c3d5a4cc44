/* The typed-field decoder shared by layer attributes and the train/data settings. */
#include <math.h>

#include "ir.h"

const FieldSpec *field_find(const FieldSpec *specs, const char *key) {
  for (; specs->key; specs++)
    if (!strcmp(specs->key, key)) return specs;
  return NULL;
}

#define FIELD(T, obj, spec) ((T *)((char *)(obj) + (spec)->offset))
#define CFIELD(T, obj, spec) ((const T *)((const char *)(obj) + (spec)->offset))
typedef const char *CStr; /* so that CFIELD(CStr, ...) adds const to the pointer, not the chars */

void fields_default(const FieldSpec *specs, void *dst) {
  for (const FieldSpec *s = specs; s->key; s++) {
    switch (s->type) {
    case F_INT: *FIELD(int64_t, dst, s) = (int64_t)s->def; break;
    case F_FLOAT: *FIELD(double, dst, s) = s->def; break;
    case F_BOOL: *FIELD(bool, dst, s) = s->def != 0; break;
    case F_ENUM: *FIELD(int, dst, s) = (int)s->def; break;
    case F_STR: *FIELD(const char *, dst, s) = s->def_str; break;
    case F_PAIR: FIELD(int64_t, dst, s)[0] = FIELD(int64_t, dst, s)[1] = (int64_t)s->def; break;
    case F_INTS: FIELD(IntList, dst, s)->n = 0; break;
    case F_FLOATS: FIELD(FloatList, dst, s)->n = 0; break;
    case F_STRS: FIELD(StrList, dst, s)->n = 0; break;
    }
  }
}

static const char *type_expected(FieldType t) {
  switch (t) {
  case F_INT: return "an integer";
  case F_FLOAT: return "a number";
  case F_BOOL: return "true or false";
  case F_ENUM: return "one of";
  case F_STR: return "a string";
  case F_PAIR: return "an integer or a list [height, width]";
  case F_INTS: return "an integer or a list of integers";
  case F_FLOATS: return "a number or a list of numbers";
  case F_STRS: return "a string or a list of strings";
  }
  return "?";
}

static void type_error(const FieldSpec *s, const Const *v, const char *what) {
  if (s->type == F_ENUM) {
    char words[256] = "";
    for (const char *const *w = s->words; *w; w++) {
      if (w != s->words) strncat(words, ", ", sizeof words - strlen(words) - 1);
      strncat(words, *w, sizeof words - strlen(words) - 1);
    }
    diag_error(v->loc, "%s: '%s' must be one of %s", what, s->key, words);
    return;
  }
  diag_error(v->loc, "%s: '%s' must be %s, but got %s", what, s->key, type_expected(s->type),
             const_kind_name(v->kind));
}

static bool check_range(const FieldSpec *s, double x, const Const *v, const char *what) {
  if (x >= s->min && x <= s->max) return true;
  char got[64];
  if (v->kind == V_INT)
    snprintf(got, sizeof got, "%lld", (long long)v->i);
  else
    snprintf(got, sizeof got, "%g", v->f);
  if (x < s->min)
    diag_error(v->loc, "%s: '%s' must be at least %.15g, but is %s", what, s->key, s->min, got);
  else
    diag_error(v->loc, "%s: '%s' must be at most %.15g, but is %s", what, s->key, s->max, got);
  return false;
}

static bool decode_int(const FieldSpec *s, const Const *v, int64_t *out, const char *what) {
  if (v->kind != V_INT) {
    type_error(s, v, what);
    return false;
  }
  if (!check_range(s, (double)v->i, v, what)) return false;
  *out = v->i;
  return true;
}

static bool decode_float(const FieldSpec *s, const Const *v, double *out, const char *what) {
  if (v->kind != V_INT && v->kind != V_FLOAT) {
    type_error(s, v, what);
    return false;
  }
  double x = v->kind == V_INT ? (double)v->i : v->f;
  if (!check_range(s, x, v, what)) return false;
  *out = x;
  return true;
}

/* A scalar or a list of up to `max` items, each decoded by `one`. */
static bool decode_list(const FieldSpec *s, const Const *v, int max, const char *what,
                        bool (*one)(const FieldSpec *, const Const *, void *, int, const char *),
                        void *dst, int *n) {
  if (v->kind != V_LIST) {
    *n = 1;
    return one(s, v, dst, 0, what);
  }
  if (v->items.len > max || v->items.len == 0) {
    diag_error(v->loc, "%s: '%s' takes 1 to %d items, but has %d", what, s->key, max, v->items.len);
    return false;
  }
  *n = v->items.len;
  for (int i = 0; i < v->items.len; i++)
    if (!one(s, &v->items.data[i], dst, i, what)) return false;
  return true;
}

static bool one_int(const FieldSpec *s, const Const *v, void *dst, int i, const char *what) {
  return decode_int(s, v, (int64_t *)dst + i, what);
}
static bool one_float(const FieldSpec *s, const Const *v, void *dst, int i, const char *what) {
  return decode_float(s, v, (double *)dst + i, what);
}
static bool one_str(const FieldSpec *s, const Const *v, void *dst, int i, const char *what) {
  if (v->kind != V_STR) {
    type_error(s, v, what);
    return false;
  }
  ((const char **)dst)[i] = v->s;
  return true;
}

static bool decode_enum(const FieldSpec *s, const Const *v, int *out, const char *what) {
  if (v->kind == V_SYM || v->kind == V_STR)
    for (int i = 0; s->words[i]; i++)
      if (!strcmp(s->words[i], v->s)) {
        *out = i;
        return true;
      }
  type_error(s, v, what);
  if (v->kind == V_SYM || v->kind == V_STR) {
    const char *near = diag_suggest(v->s, s->words);
    if (near) diag_note(v->loc, "did you mean '%s'?", near);
  }
  return false;
}

bool field_set(const FieldSpec *specs, void *dst, const char *key, SrcLoc key_loc, const Const *v,
               const char *what, const char *noun) {
  const FieldSpec *s = field_find(specs, key);
  if (!s) {
    const char *keys[64];
    int n = 0;
    for (const FieldSpec *p = specs; p->key && n < 63; p++) keys[n++] = p->key;
    keys[n] = NULL;
    const char *near = diag_suggest(key, keys);
    if (near)
      diag_error(key_loc, "%s has no %s '%s'; did you mean '%s'?", what, noun, key, near);
    else
      diag_error(key_loc, "%s has no %s '%s'", what, noun, key);
    return false;
  }
  switch (s->type) {
  case F_INT: return decode_int(s, v, FIELD(int64_t, dst, s), what);
  case F_FLOAT: return decode_float(s, v, FIELD(double, dst, s), what);
  case F_BOOL:
    if (v->kind != V_BOOL) {
      type_error(s, v, what);
      return false;
    }
    *FIELD(bool, dst, s) = v->i != 0;
    return true;
  case F_ENUM: return decode_enum(s, v, FIELD(int, dst, s), what);
  case F_STR: return one_str(s, v, FIELD(const char *, dst, s), 0, what);
  case F_PAIR: {
    int64_t *pair = FIELD(int64_t, dst, s);
    int n;
    if (!decode_list(s, v, 2, what, one_int, pair, &n)) return false;
    if (n == 1) pair[1] = pair[0];
    return true;
  }
  case F_INTS: {
    IntList *l = FIELD(IntList, dst, s);
    return decode_list(s, v, LIST_MAX, what, one_int, l->v, &l->n);
  }
  case F_FLOATS: {
    FloatList *l = FIELD(FloatList, dst, s);
    return decode_list(s, v, LIST_MAX, what, one_float, l->v, &l->n);
  }
  case F_STRS: {
    StrList *l = FIELD(StrList, dst, s);
    return decode_list(s, v, LIST_MAX, what, one_str, l->v, &l->n);
  }
  }
  return false;
}

double field_float(const FieldSpec *s, const void *obj) { return *CFIELD(double, obj, s); }

bool field_is_default(const FieldSpec *s, const void *obj) {
  switch (s->type) {
  case F_INT: return *CFIELD(int64_t, obj, s) == (int64_t)s->def;
  case F_FLOAT: return *CFIELD(double, obj, s) == s->def;
  case F_BOOL: return *CFIELD(bool, obj, s) == (s->def != 0);
  case F_ENUM: return *CFIELD(int, obj, s) == (int)s->def;
  case F_STR: {
    const char *v = *CFIELD(CStr, obj, s);
    return v == s->def_str || (v && s->def_str && !strcmp(v, s->def_str));
  }
  case F_PAIR:
    return CFIELD(int64_t, obj, s)[0] == (int64_t)s->def &&
           CFIELD(int64_t, obj, s)[1] == (int64_t)s->def;
  case F_INTS: return CFIELD(IntList, obj, s)->n == 0;
  case F_FLOATS: return CFIELD(FloatList, obj, s)->n == 0;
  case F_STRS: return CFIELD(StrList, obj, s)->n == 0;
  }
  return true;
}

void field_print(FILE *f, const FieldSpec *s, const void *obj) {
  fprintf(f, "%s=", s->key);
  switch (s->type) {
  case F_INT: fprintf(f, "%lld", (long long)*CFIELD(int64_t, obj, s)); break;
  case F_FLOAT: fprintf(f, "%g", *CFIELD(double, obj, s)); break;
  case F_BOOL: fputs(*CFIELD(bool, obj, s) ? "true" : "false", f); break;
  case F_ENUM: fputs(s->words[*CFIELD(int, obj, s)], f); break;
  case F_STR: fprintf(f, "\"%s\"", *CFIELD(CStr, obj, s) ? *CFIELD(CStr, obj, s) : ""); break;
  case F_PAIR: {
    const int64_t *p = CFIELD(int64_t, obj, s);
    if (p[0] == p[1])
      fprintf(f, "%lld", (long long)p[0]);
    else
      fprintf(f, "[%lld, %lld]", (long long)p[0], (long long)p[1]);
    break;
  }
  case F_INTS: {
    const IntList *l = CFIELD(IntList, obj, s);
    fputc('[', f);
    for (int i = 0; i < l->n; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)l->v[i]);
    fputc(']', f);
    break;
  }
  case F_FLOATS: {
    const FloatList *l = CFIELD(FloatList, obj, s);
    fputc('[', f);
    for (int i = 0; i < l->n; i++) fprintf(f, "%s%g", i ? ", " : "", l->v[i]);
    fputc(']', f);
    break;
  }
  case F_STRS: {
    const StrList *l = CFIELD(StrList, obj, s);
    fputc('[', f);
    for (int i = 0; i < l->n; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", l->v[i]);
    fputc(']', f);
    break;
  }
  }
}
