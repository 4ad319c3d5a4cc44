#include "diag.h"

#include <stdarg.h>
#include <string.h>

static FILE *diag_stream;
static int errors, warnings;

void diag_set_stream(FILE *f) { diag_stream = f; }
void diag_reset(void) { errors = warnings = 0; }
int diag_error_count(void) { return errors; }
int diag_warning_count(void) { return warnings; }

static FILE *out(void) { return diag_stream ? diag_stream : stderr; }

/* Prints the source line of `loc` and a caret under its column. Tabs before the column are
 * echoed as tabs so the caret lines up in any terminal. */
static void show_source_line(SrcLoc loc) {
  if (!loc.file || loc.line < 1) return;
  const char *p = loc.file->text, *end = p + loc.file->len;
  for (int line = 1; line < loc.line && p < end; p++)
    if (*p == '\n') line++;
  const char *eol = p;
  while (eol < end && *eol != '\n' && *eol != '\r') eol++;
  fprintf(out(), "%.*s\n", (int)(eol - p), p);
  int col = 1;
  for (const char *q = p; q < eol && col < loc.col; q++) {
    if (((unsigned char)*q & 0xC0) == 0x80) continue; /* UTF-8 continuation byte */
    fputc(*q == '\t' ? '\t' : ' ', out());
    col++;
  }
  fputs("^\n", out());
}

static void report(const char *kind, SrcLoc loc, const char *fmt, va_list ap) {
  if (loc.file)
    fprintf(out(), "%s:%d:%d: %s: ", loc.file->name, loc.line, loc.col, kind);
  else
    fprintf(out(), "swnc: %s: ", kind);
  vfprintf(out(), fmt, ap);
  fputc('\n', out());
  show_source_line(loc);
}

void diag_error(SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report("error", loc, fmt, ap);
  va_end(ap);
  errors++;
}

void diag_warning(SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report("warning", loc, fmt, ap);
  va_end(ap);
  warnings++;
}

void diag_note(SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report("note", loc, fmt, ap);
  va_end(ap);
}

static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 99;
  int row[64];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (row[j] + 1 < best) best = row[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *diag_suggest(const char *word, const char *const *candidates) {
  const char *best = NULL;
  int best_dist = (int)strlen(word) / 3 + 1; /* at most a third of the word may differ */
  if (best_dist > 3) best_dist = 3;
  for (; *candidates; candidates++) {
    int d = edit_distance(word, *candidates);
    if (d <= best_dist && (!best || d < edit_distance(word, best))) best = *candidates;
  }
  return best;
}
