/* The unelaborated module back as .swn text (docs/language.md): what `swnc import-caffe`
 * writes. Parsing the output gives the same module again. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

static void write_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if (*s == '\n')
      fputs("\\n", f);
    else if (*s == '\t')
      fputs("\\t", f);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static void write_expr(FILE *f, const Expr *e) {
  switch (e->kind) {
  case EX_INT: fprintf(f, "%lld", (long long)e->i); break;
  case EX_FLOAT: print_number(f, e->f); break;
  case EX_BOOL: fputs(e->i ? "true" : "false", f); break;
  case EX_STR: write_string(f, e->s); break;
  case EX_NAME: fputs(e->s, f); break;
  case EX_NEG: fputs("-(", f), write_expr(f, e->lhs), fputc(')', f); break;
  case EX_BINARY:
    fputc('(', f), write_expr(f, e->lhs), fprintf(f, " %c ", e->op), write_expr(f, e->rhs);
    fputc(')', f);
    break;
  case EX_LIST:
    fputc('[', f);
    for (int i = 0; i < e->items.len; i++) {
      if (i) fputs(", ", f);
      write_expr(f, e->items.data[i]);
    }
    fputc(']', f);
    break;
  }
}

static void write_note(FILE *f, const char *note) {
  if (note) fprintf(f, "  # %s", note);
  fputc('\n', f);
}

static bool same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* One section's settings, in the order they were given. */
static void write_section(FILE *f, const Module *m, const char *section) {
  bool any = false;
  for (int i = 0; i < m->settings.len; i++) {
    const Setting *s = &m->settings.data[i];
    if (!same(s->section, section)) continue;
    if (!any) fprintf(f, "%s {\n", section);
    any = true;
    fprintf(f, "  %s = ", s->key);
    write_expr(f, s->value);
    write_note(f, s->note);
  }
  if (any) fputs("}\n\n", f);
}

static void write_statements(FILE *f, const Block *b) {
  int width = 0;
  for (int i = 0; i < b->body.len; i++) {
    int n = (int)strlen(b->body.data[i].name);
    if (n > width && n <= 24) width = n;
  }
  for (int i = 0; i < b->body.len; i++) {
    const Stmt *s = &b->body.data[i];
    fprintf(f, "  %-*s = ", width, s->name);
    if (s->repeat) {
      fputs("repeat(", f);
      write_expr(f, s->repeat);
      if (s->repeat_index) fprintf(f, ", %s", s->repeat_index);
      fputs(") ", f);
    }
    fprintf(f, "%s(", s->callee);
    for (int k = 0; k < s->args.len; k++) {
      const Arg *a = &s->args.data[k];
      if (k) fputs(", ", f);
      if (a->key) fprintf(f, "%s=", a->key);
      write_expr(f, a->value);
    }
    fputc(')', f);
    write_note(f, s->note);
  }
}

void swn_write(FILE *f, const Module *m, const char *origin) {
  if (origin) fprintf(f, "# %s\n\n", origin);
  for (int i = 0; i < m->settings.len; i++) {
    const Setting *s = &m->settings.data[i];
    if (s->section) continue;
    fprintf(f, "let %s = ", s->key);
    write_expr(f, s->value);
    write_note(f, s->note);
  }
  write_section(f, m, "train");
  write_section(f, m, "data");
  for (int i = 0; i < m->blocks.len; i++) {
    const Block *b = &m->blocks.data[i];
    fprintf(f, "block %s(", b->name);
    for (int k = 0; k < b->params.len; k++) {
      fprintf(f, "%s%s", k ? ", " : "", b->params.data[k].name);
      if (b->params.data[k].deflt) fputc('=', f), write_expr(f, b->params.data[k].deflt);
    }
    fputs(") {\n", f);
    write_statements(f, b);
    fprintf(f, "  return %s\n}\n\n", b->ret);
  }
  fprintf(f, "network %s {\n", m->name);
  write_statements(f, &m->body);
  fputs("}\n", f);
}
