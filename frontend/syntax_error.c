/* Where a syntax error is reported. Bison sees a missing ')' only at the next token, which is
 * often on the next line: "data = input(shape=[1, 8, 8]" followed by "label = ..." was
 * reported at "label". A user's eye (and clang's) puts it after the last code before that
 * token, so there it goes. */
#include "syntax_error.h"

#include <string.h>

static bool closes(const char *token) {
  return !strcmp(token, "')'") || !strcmp(token, "']'") || !strcmp(token, "'}'");
}

/* The column after the last code character of a line (strings and `#` comments understood),
 * or 0 for a line with no code. */
static int code_end_column(const char *p, const char *eol) {
  int col = 1, end = 0;
  bool in_string = false;
  for (; p < eol; p++) {
    unsigned char c = (unsigned char)*p;
    if ((c & 0xC0) == 0x80) continue; /* a UTF-8 continuation byte is no column */
    if (!in_string && c == '#') break;
    if (c == '"' && !(in_string && p[-1] == '\\')) in_string = !in_string;
    if (c != ' ' && c != '\t' && c != '\r') end = col + 1;
    col++;
  }
  return end;
}

/* Whether `at` is the first code on its line; if so, where the code before it ends. The cursor
 * goes on from the line it last reached (a parse reports its errors in order), so all of a
 * file's syntax errors cost one pass over it, not one each. */
static bool first_on_line(SyntaxCursor *c, SrcLoc at, SrcLoc *before) {
  const SrcFile *f = at.file;
  if (!f || !f->text || at.line < 2) return false;
  if (c->file != f || at.line < c->line) *c = (SyntaxCursor){f, f->text, 1, {0}};
  const char *end = f->text + f->len;
  for (; c->line < at.line && c->next < end; c->line++) {
    const char *eol = memchr(c->next, '\n', (size_t)(end - c->next));
    if (!eol) eol = end;
    int col = code_end_column(c->next, eol);
    if (col) c->code_end = (SrcLoc){f, c->line, col};
    c->next = eol + 1;
  }
  *before = c->code_end;
  return c->line == at.line && c->next < end && before->file &&
         (int)strspn(c->next, " \t\r") + 1 >= at.col;
}

void report_syntax_error(SyntaxCursor *cursor, SrcLoc at, const char *unexpected,
                         const char *const *expected, int nexpected) {
  char list[256] = "";
  for (int i = 0; i < nexpected; i++) {
    strncat(list, i ? " or " : "", sizeof list - strlen(list) - 1);
    strncat(list, expected[i], sizeof list - strlen(list) - 1);
  }
  bool closer = false;
  for (int i = 0; i < nexpected; i++) closer |= closes(expected[i]);
  SrcLoc before;
  if (unexpected && closer && first_on_line(cursor, at, &before)) {
    diag_error(before,
               "syntax error, expecting %s at the end of this line (the next line begins "
               "with %s)",
               list, unexpected);
    return;
  }
  if (!unexpected)
    diag_error(at, "syntax error");
  else if (!nexpected)
    diag_error(at, "syntax error, unexpected %s", unexpected);
  else
    diag_error(at, "syntax error, unexpected %s, expecting %s", unexpected, list);
}

void report_too_deep(SrcLoc at, int levels) {
  diag_error(at, "nesting deeper than %d levels: this input cannot be read", levels);
}
