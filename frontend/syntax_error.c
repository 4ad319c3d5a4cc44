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

/* Whether `at` is the first code on its line; if so, where the code before it ends. */
static bool first_on_line(SrcLoc at, SrcLoc *before) {
  const SrcFile *f = at.file;
  if (!f || !f->text || at.line < 2) return false;
  const char *p = f->text, *end = f->text + f->len;
  *before = (SrcLoc){0};
  for (int line = 1; line <= at.line && p < end; line++) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    if (line == at.line) return before->file && (int)strspn(p, " \t\r") + 1 >= at.col;
    int col = code_end_column(p, eol);
    if (col) *before = (SrcLoc){f, line, col};
    p = eol + 1;
  }
  return false;
}

void report_syntax_error(SrcLoc at, const char *unexpected, const char *const *expected,
                         int nexpected) {
  char list[256] = "";
  for (int i = 0; i < nexpected; i++) {
    strncat(list, i ? " or " : "", sizeof list - strlen(list) - 1);
    strncat(list, expected[i], sizeof list - strlen(list) - 1);
  }
  bool closer = false;
  for (int i = 0; i < nexpected; i++) closer |= closes(expected[i]);
  SrcLoc before;
  if (unexpected && closer && first_on_line(at, &before)) {
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
