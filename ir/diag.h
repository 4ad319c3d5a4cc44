/* Diagnostics: `file:line:col: error: message`, then the source line and a caret. */
#ifndef SWNC_DIAG_H
#define SWNC_DIAG_H

#include <stdbool.h>
#include <stdio.h>

typedef struct SrcFile {
  const char *name;
  const char *text; /* whole file, NUL-terminated */
  size_t len;
} SrcFile;

typedef struct SrcLoc {
  const SrcFile *file; /* NULL: no location (command line, internal) */
  int line, col;       /* 1-based; col counts characters, not bytes */
} SrcLoc;

void diag_set_stream(FILE *f); /* default stderr */
/* Errors printed before the rest are only counted (0: every one); default 20. */
enum { DIAG_DEFAULT_ERROR_LIMIT = 20 };
void diag_set_error_limit(int limit);
void diag_reset(void);
int diag_error_count(void);
int diag_warning_count(void);

void diag_error(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warning(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_note(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The candidate closest to `word` if it is a plausible misspelling, else NULL.
 * `candidates` is NULL-terminated. */
const char *diag_suggest(const char *word, const char *const *candidates);

#endif
