/* Reading source files, running the parser, applying -D overrides. */
#include "frontend.h"

#include <errno.h>
#include <stdlib.h>

#include "parse_ctx.h"
#include "parser.h"
#include "lexer.h"

SrcLoc ctx_loc(const ParseCtx *ctx, int line, int col) {
  return (SrcLoc){.file = ctx->file, .line = line, .col = col};
}

static const SrcFile *new_source(Module *m, const char *name, const char *text, size_t len) {
  SrcFile *f = arena_alloc(&m->arena, sizeof *f);
  f->name = arena_strdup(&m->arena, name);
  f->text = arena_strndup(&m->arena, text, len);
  f->len = len;
  return f;
}

/* Runs the grammar from `start_token` over `file` from byte `offset` (at that column);
 * returns the parsed value for START_VALUE. */
static Expr *run_parser(Module *m, const SrcFile *file, size_t offset, int start_token) {
  ParseCtx ctx = {
      .m = m, .file = file, .start_token = start_token, .first_column = (int)offset + 1};
  yyscan_t scanner;
  swnlex_init_extra(&ctx, &scanner);
  YY_BUFFER_STATE buf = swn_scan_bytes(file->text + offset, (int)(file->len - offset), scanner);
  int errors_before = diag_error_count();
  swnparse(scanner, &ctx);
  swn_delete_buffer(buf, scanner);
  swnlex_destroy(scanner);
  if (start_token == START_FILE && !ctx.seen_network && diag_error_count() == errors_before)
    diag_error((SrcLoc){file, 1, 1}, "no 'network' in this file");
  return ctx.value;
}

static bool same_section(const char *a, const char *b) {
  return a == b || (a && b && !strcmp(a, b));
}

static Setting *find_setting(Module *m, const char *section, const char *key) {
  for (int i = 0; i < m->settings.len; i++) {
    Setting *s = &m->settings.data[i];
    if (same_section(s->section, section) && !strcmp(s->key, key)) return s;
  }
  return NULL;
}

/* Splits "key" or "section.key" following the documented rule: a bare key names a constant
 * if there is one, else a train setting, else a data setting. */
static bool resolve_override_key(Module *m, const char *key, const char **section,
                                 const char **name, Arena *a) {
  const char *dot = strchr(key, '.');
  if (dot) {
    *section = arena_strndup(a, key, (size_t)(dot - key));
    *name = dot + 1;
    return true;
  }
  *name = key;
  if (find_setting(m, NULL, key))
    *section = NULL;
  else if (field_find(train_fields, key))
    *section = "train";
  else if (field_find(data_fields, key))
    *section = "data";
  else
    return false;
  return true;
}

/* What a bare -D key could have meant: the file's constants, then train and data settings. */
static const char *nearest_key(Module *m, const char *key) {
  VEC(const char *) names = {0};
  for (int i = 0; i < m->settings.len; i++)
    if (!m->settings.data[i].section) vec_push(&m->arena, names, m->settings.data[i].key);
  for (const FieldSpec *f = train_fields; f->key; f++) vec_push(&m->arena, names, f->key);
  for (const FieldSpec *f = data_fields; f->key; f++) vec_push(&m->arena, names, f->key);
  vec_push(&m->arena, names, NULL);
  return diag_suggest(key, names.data);
}

static void apply_override(Module *m, const char *text) {
  const char *eq = strchr(text, '=');
  const SrcFile *cmd = new_source(m, "<command line>", text, strlen(text));
  if (!eq || eq == text) {
    diag_error((SrcLoc){cmd, 1, 1}, "-D needs KEY=VALUE");
    return;
  }
  const char *key = arena_strndup(&m->arena, text, (size_t)(eq - text));
  const char *section, *name;
  if (!resolve_override_key(m, key, &section, &name, &m->arena)) {
    const char *near = nearest_key(m, key);
    if (near)
      diag_error((SrcLoc){cmd, 1, 1},
                 "-D %s: no constant or setting named '%s'; did you mean '%s'?", key, key, near);
    else
      diag_error((SrcLoc){cmd, 1, 1}, "-D %s: no constant or setting named '%s'", key, key);
    return;
  }
  Expr *value = run_parser(m, cmd, (size_t)(eq + 1 - text), START_VALUE);
  if (!value) return;
  Setting *existing = find_setting(m, section, name);
  if (existing) {
    existing->value = value;
    return;
  }
  Setting s = {.section = section, .key = name, .loc = (SrcLoc){cmd, 1, 1}, .value = value};
  vec_push(&m->arena, m->settings, s);
}

void frontend_apply_overrides(Module *m, const Override *overrides, int noverrides) {
  for (int i = 0; i < noverrides; i++) apply_override(m, overrides[i].text);
}

Module *frontend_parse_text(const char *name, const char *text, size_t len,
                            const Override *overrides, int noverrides) {
  Module *m = module_new();
  int errors_before = diag_error_count();
  run_parser(m, new_source(m, name, text, len), 0, START_FILE);
  if (diag_error_count() == errors_before) frontend_apply_overrides(m, overrides, noverrides);
  return m;
}

/* The whole file in a fresh buffer (xmalloc'd); NULL after reporting why not. */
static char *read_file(const char *path, size_t *len_out) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_error((SrcLoc){0}, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = xmalloc(cap, "the source text");
  size_t n;
  while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) buf = xrealloc(buf, cap *= 2, "the source text");
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    free(buf);
    diag_error((SrcLoc){0}, "cannot read '%s'", path);
    return NULL;
  }
  *len_out = len;
  return buf;
}

const SrcFile *frontend_read_source(Module *m, const char *path) {
  size_t len;
  char *buf = read_file(path, &len);
  if (!buf) return NULL;
  const SrcFile *file = new_source(m, path, buf, len);
  free(buf);
  return file;
}

Module *frontend_parse_file(const char *path, const Override *overrides, int noverrides) {
  size_t len;
  char *buf = read_file(path, &len);
  if (!buf) return NULL;
  Module *m = frontend_parse_text(path, buf, len, overrides, noverrides);
  free(buf);
  return m;
}
