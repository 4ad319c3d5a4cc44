/* Syntax errors of both grammars (.swn and prototxt), reported from bison's custom hook. */
#ifndef SWNC_SYNTAX_ERROR_H
#define SWNC_SYNTAX_ERROR_H

#include "../ir/diag.h"

enum { SYNTAX_EXPECTED_MAX = 4 }; /* more expected tokens than this are not listed */

/* "syntax error, unexpected X, expecting A or B" at `at`, where the unexpected token (NULL:
 * none) is. When that token begins a line and a closing bracket was expected, the bracket is
 * missing at the end of the code before it: the error is placed there instead. */
void report_syntax_error(SrcLoc at, const char *unexpected, const char *const *expected,
                         int nexpected);

/* "nesting deeper than N levels" at `at` (bison's stack is full: its "memory exhausted"). */
void report_too_deep(SrcLoc at, int levels);

#endif
