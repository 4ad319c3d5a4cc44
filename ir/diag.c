#include "diag.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

static FILE *diag_stream;
static int errors, warnings;
static int error_limit = DIAG_DEFAULT_ERROR_LIMIT; /* 0: none */
static int errors_printed;                         /* what the limit counts */

/* The same message at the same place (an error inside a block instantiated many times) is
 * reported once; the notes that follow a suppressed message are suppressed with it. */
enum { SEEN_SLOTS = 4096 };
static uint64_t seen[SEEN_SLOTS];
static bool suppressing;

static uint64_t fingerprint(const char *kind, SrcLoc loc, const char *msg) {
  uint64_t h = 1469598103934665603ull;
  const char *parts[] = {kind, loc.file ? loc.file->name : "", msg};
  for (int p = 0; p < 3; p++)
    for (const char *c = parts[p]; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return (h ^ (uint64_t)loc.line * 31 ^ (uint64_t)loc.col) | 1;
}

/* True if this message was reported before; remembers it otherwise. */
static bool already_reported(uint64_t h) {
  for (uint64_t i = h % SEEN_SLOTS, n = 0; n < SEEN_SLOTS; i = (i + 1) % SEEN_SLOTS, n++) {
    if (seen[i] == h) return true;
    if (!seen[i]) {
      seen[i] = h;
      return false;
    }
  }
  return false; /* table full: report */
}

void diag_set_stream(FILE *f) { diag_stream = f; }
void diag_set_error_limit(int limit) { error_limit = limit; }

/* Past the limit nothing more is printed (the input still has errors): one broken line of a
 * large file must not print megabytes. */
static bool past_limit(void) { return error_limit > 0 && errors_printed >= error_limit; }
void diag_reset(void) {
  errors = warnings = errors_printed = 0;
  memset(seen, 0, sizeof seen);
  suppressing = false;
}
int diag_error_count(void) { return errors; }
int diag_warning_count(void) { return warnings; }

static FILE *out(void) { return diag_stream ? diag_stream : stderr; }

enum { EXCERPT_BEFORE = 60, EXCERPT_AFTER = 60 }; /* columns shown either side of the caret */

/* The byte `columns` characters after p (UTF-8 continuation bytes are not characters), at most
 * `end`. */
static const char *advance_columns(const char *p, const char *end, int columns) {
  for (; p < end; p++) {
    if (((unsigned char)*p & 0xC0) == 0x80) continue;
    if (columns-- == 0) break;
  }
  return p;
}

/* Prints the source line of `loc` and a caret under its column: the whole line if it is short,
 * else a window around the caret with "..." where it is cut (so a message about a 32 KB line
 * prints 120 columns, not the line). Tabs before the column are echoed as tabs so the caret
 * lines up in any terminal. */
static void show_source_line(SrcLoc loc) {
  if (!loc.file || loc.line < 1) return;
  const char *p = loc.file->text, *end = p + loc.file->len;
  for (int line = 1; line < loc.line && p < end; p++)
    if (*p == '\n') line++;
  const char *eol = p;
  while (eol < end && *eol != '\n' && *eol != '\r') eol++;
  int skip = loc.col - 1 > EXCERPT_BEFORE ? loc.col - 1 - EXCERPT_BEFORE : 0;
  const char *from = advance_columns(p, eol, skip);
  const char *to = advance_columns(from, eol, loc.col - 1 - skip + EXCERPT_AFTER);
  fprintf(out(), "%s%.*s%s\n", from > p ? "..." : "", (int)(to - from), from,
          to < eol ? "..." : "");
  if (from > p) fputs("   ", out());
  int col = 1 + skip;
  for (const char *q = from; q < eol && col < loc.col; q++) {
    if (((unsigned char)*q & 0xC0) == 0x80) continue; /* UTF-8 continuation byte */
    fputc(*q == '\t' ? '\t' : ' ', out());
    col++;
  }
  fputs("^\n", out());
}

/* Returns false if the message was a repeat and not printed. */
static bool report(const char *kind, SrcLoc loc, const char *fmt, va_list ap) {
  char msg[2048];
  vsnprintf(msg, sizeof msg, fmt, ap);
  bool is_note = !strcmp(kind, "note");
  if (is_note ? suppressing : (suppressing = already_reported(fingerprint(kind, loc, msg))))
    return false;
  if (loc.file)
    fprintf(out(), "%s:%d:%d: %s: %s\n", loc.file->name, loc.line, loc.col, kind, msg);
  else
    fprintf(out(), "swnc: %s: %s\n", kind, msg);
  show_source_line(loc);
  return true;
}

void diag_error(SrcLoc loc, const char *fmt, ...) {
  if (past_limit()) {
    if (errors_printed++ == error_limit)
      fprintf(out(), "swnc: note: stopping after %d errors (--error-limit=N for more, 0 for all)\n",
              error_limit);
    suppressing = true; /* and the notes that follow it */
    errors++;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  if (report("error", loc, fmt, ap)) errors_printed++;
  errors++; /* a suppressed repeat still means the input has errors */
  va_end(ap);
}

void diag_warning(SrcLoc loc, const char *fmt, ...) {
  if (past_limit()) return;
  va_list ap;
  va_start(ap, fmt);
  if (report("warning", loc, fmt, ap)) warnings++;
  va_end(ap);
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
