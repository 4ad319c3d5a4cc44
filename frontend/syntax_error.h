/* Syntax errors of both grammars (.swn and prototxt), reported from bison's custom hook. */
#ifndef SWNC_SYNTAX_ERROR_H
#define SWNC_SYNTAX_ERROR_H

#include "../ir/diag.h"

enum { SYNTAX_EXPECTED_MAX = 4 }; /* more expected tokens than this are not listed */

/* How far a parse's error reports have read its file (zero before the first). */
typedef struct SyntaxCursor {
  const SrcFile *file;
  const char *next; /* the start of line `line` */
  int line;
  SrcLoc code_end; /* just after the last code before that line */
} SyntaxCursor;

/* "syntax error, unexpected X, expecting A or B" at `at`, where the unexpected token (NULL:
 * none) is. When that token begins a line and a closing bracket was expected, the bracket is
 * missing at the end of the code before it: the error is placed there instead. */
void report_syntax_error(SyntaxCursor *cursor, SrcLoc at, const char *unexpected,
                         const char *const *expected, int nexpected);

/* "nesting deeper than N levels" at `at` (bison's stack is full: its "memory exhausted"). */
void report_too_deep(SrcLoc at, int levels);

#endif
