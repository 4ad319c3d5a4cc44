/* Reading and writing tuning files (tuning.h). */
#include "tuning.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const SrcFile *read_whole(Arena *a, const char *path, bool may_be_missing, bool *ok) {
  *ok = true;
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (errno == ENOENT && may_be_missing) return NULL;
    diag_error((SrcLoc){0}, "cannot read tuning file '%s': %s", path, strerror(errno));
    *ok = false;
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *text = xmalloc(cap, "a tuning file");
  size_t n;
  while ((n = fread(text + len, 1, cap - len - 1, f)) > 0)
    if ((len += n) + 1 == cap) text = xrealloc(text, cap *= 2, "a tuning file");
  fclose(f);
  SrcFile *file = arena_alloc(a, sizeof *file);
  file->name = arena_strdup(a, path);
  file->text = arena_strndup(a, text ? text : "", len);
  file->len = len;
  free(text);
  return file;
}

/* Splits off the next space-separated word of *p; NULL at the end of the line. */
static const char *word(Arena *a, const char **p) {
  while (**p == ' ' || **p == '\t') (*p)++;
  const char *start = *p;
  while (**p && **p != ' ' && **p != '\t') (*p)++;
  return *p > start ? arena_strndup(a, start, (size_t)(*p - start)) : NULL;
}

static bool parse_line(Arena *a, const char *line, TuningEntry *e) {
  const char *p = line;
  const char *fields[7];
  for (int i = 0; i < 7; i++)
    if (!(fields[i] = word(a, &p))) return false;
  while (*p == ' ' || *p == '\t') p++;
  char *end;
  double seconds = strtod(fields[5], &end);
  if (*end || !(seconds > 0) || seconds > 1e6 || !*p) return false;
  if (strcmp(fields[0], "conv") && strcmp(fields[0], "transform")) return false;
  *e = (TuningEntry){.kind = fields[0],
                     .target = fields[1],
                     .key = fields[2],
                     .what = fields[3],
                     .plan = fields[4],
                     .seconds = seconds,
                     .date = fields[6],
                     .machine = arena_strdup(a, p)};
  return true;
}

bool tuning_load(Arena *a, const char *path, bool may_be_missing, Tuning *t) {
  *t = (Tuning){.path = path};
  bool ok;
  const SrcFile *file = read_whole(a, path, may_be_missing, &ok);
  if (!file) return ok;
  int number = 0;
  for (const char *line = file->text; *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char *text = arena_strndup(a, line, len);
    number++;
    if (len && text[len - 1] == '\r') text[len - 1] = 0;
    TuningEntry e;
    if (text[0] && text[0] != '#') {
      if (parse_line(a, text, &e)) {
        e.loc = (SrcLoc){file, number, 1};
        vec_push(a, t->entries, e);
      } else {
        diag_warning(
            (SrcLoc){file, number, 1},
            "not a tuning entry (kind target key computation plan seconds date machine); ignored");
      }
    }
    line += len + (nl != NULL);
  }
  return true;
}

const TuningEntry *tuning_find(const Tuning *t, const char *kind, const char *target,
                               const char *key, const char *what, const char *plan,
                               const char *machine) {
  for (int i = t->entries.len - 1; i >= 0; i--) {
    const TuningEntry *e = &t->entries.data[i];
    if (!strcmp(e->kind, kind) && !strcmp(e->target, target) && !strcmp(e->key, key) &&
        !strcmp(e->what, what) && !strcmp(e->plan, plan) && !strcmp(e->machine, machine))
      return e;
  }
  return NULL;
}

void tuning_write(FILE *f, const TuningEntry *e) {
  fprintf(f, "%s %s %s %s %s %.6g %s %s\n", e->kind, e->target, e->key, e->what, e->plan,
          e->seconds, e->date, e->machine);
}

const char *tuning_machine(Arena *a) {
  char model[256] = "unknown-cpu";
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (colon && (!strncmp(line, "model name", 10) || !strncmp(line, "Model", 5))) {
      colon++;
      while (*colon == ' ' || *colon == '\t') colon++;
      colon[strcspn(colon, "\n")] = 0;
      if (*colon) snprintf(model, sizeof model, "%s", colon);
      break;
    }
  }
  if (f) fclose(f);
  return arena_printf(a, "%s x%ld", model, sysconf(_SC_NPROCESSORS_ONLN));
}
