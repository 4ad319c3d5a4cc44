/* --emit=c for a target with its own toolchain (Target.emits_source_tree): a directory with the
 * network's C file, a copy of the runtime directory's src/TARGET tree (the sources of the
 * runtime and of the kernel set, under swnc/) and a Makefile: NET = the network's name, then
 * the tree's Makefile.rules (for sw26010, targets/sw26010/sunway.mk). */
#define _GNU_SOURCE /* asprintf */
#include "emit_tree.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../codegen/c/emit_c.h"

static bool make_dir(const char *path) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return true;
    diag_error((SrcLoc){0}, "cannot write into '%s': it is not a directory", path);
    return false;
  }
  diag_error((SrcLoc){0}, "cannot create the directory '%s': %s", path, strerror(errno));
  return false;
}

static FILE *create(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) diag_error((SrcLoc){0}, "cannot write '%s': %s", path, strerror(errno));
  return f;
}

/* Closes a file `create` opened; false (reported) if anything failed, `ok` included. */
static bool finish(FILE *f, const char *path, bool ok) {
  ok &= !ferror(f);
  ok &= fclose(f) == 0;
  if (!ok && !diag_error_count()) diag_error((SrcLoc){0}, "cannot write '%s'", path);
  return ok;
}

/* Appends file `from` to the open file `to`. */
static bool append_file(const char *from, FILE *to) {
  FILE *in = fopen(from, "rb");
  if (!in) {
    diag_error((SrcLoc){0}, "cannot read '%s': %s", from, strerror(errno));
    return false;
  }
  char buffer[1 << 14];
  size_t n;
  bool ok = true;
  while (ok && (n = fread(buffer, 1, sizeof buffer, in)) > 0) ok = fwrite(buffer, 1, n, to) == n;
  ok &= !ferror(in);
  fclose(in);
  if (!ok) diag_error((SrcLoc){0}, "cannot copy '%s'", from);
  return ok;
}

static bool copy_file(const char *from, const char *to) {
  FILE *out = create(to);
  return out && finish(out, to, append_file(from, out));
}

/* Copies directory `from` into `to` (created), recursively; plain files and directories only. */
static bool copy_tree(const char *from, const char *to) {
  DIR *d = opendir(from);
  if (!d) {
    diag_error((SrcLoc){0}, "cannot read the directory '%s': %s", from, strerror(errno));
    return false;
  }
  bool ok = make_dir(to);
  for (struct dirent *e; ok && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *src = path_join(from, e->d_name), *dst = path_join(to, e->d_name);
    struct stat st;
    if (stat(src, &st) != 0)
      ok = false, diag_error((SrcLoc){0}, "cannot read '%s': %s", src, strerror(errno));
    else if (S_ISDIR(st.st_mode))
      ok = copy_tree(src, dst);
    else if (S_ISREG(st.st_mode))
      ok = copy_file(src, dst);
    free(src), free(dst);
  }
  closedir(d);
  return ok;
}

static bool write_network(const Module *m, const char *source, const char *path) {
  FILE *f = create(path);
  return f && finish(f, path, emit_c(m, source, f));
}

static bool write_makefile(const Module *m, const char *source, const char *target,
                           const char *rules, const char *path) {
  FILE *f = create(path);
  if (!f) return false;
  fprintf(f,
          "# %s, written by swnc %s from %s for target %s; the target's rules follow.\nNET = "
          "%s\nSWNC_VERSION = %s\n\n",
          m->name, SWNC_VERSION, source, target, m->name, SWNC_VERSION);
  return finish(f, path, append_file(rules, f));
}

bool emit_source_tree(const Module *m, const char *source, const BuildOptions *o) {
  if (!o->output) {
    diag_error((SrcLoc){0},
               "--emit=c for target '%s' writes a directory of sources and a Makefile: name it "
               "with -o DIR",
               o->target);
    return false;
  }
  const char *runtime = find_runtime(o, o->target);
  if (!runtime) return false;
  char *src = path_join(runtime, "src"), *tree = path_join(src, o->target);
  char *rules = path_join(tree, "Makefile.rules"), *sources = path_join(tree, "swnc");
  char *copy = path_join(o->output, "swnc"), *makefile = path_join(o->output, "Makefile");
  char *network = path_join(o->output, m->name), *network_c = NULL;
  bool ok = asprintf(&network_c, "%s.c", network) >= 0;
  ok = ok && make_dir(o->output) && copy_tree(sources, copy) &&
       write_network(m, source, network_c) && write_makefile(m, source, o->target, rules, makefile);
  free(src), free(tree), free(rules), free(sources), free(copy), free(makefile), free(network),
      free(network_c);
  return ok;
}
