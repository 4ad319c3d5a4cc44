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

static char *path_of(const char *dir, const char *name) {
  char *path;
  if (asprintf(&path, "%s/%s", dir, name) < 0) {
    fprintf(stderr, "swnc: out of memory\n");
    exit(2);
  }
  return path;
}

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
  FILE *out = fopen(to, "wb");
  if (!out) {
    diag_error((SrcLoc){0}, "cannot write '%s': %s", to, strerror(errno));
    return false;
  }
  bool ok = append_file(from, out);
  if (fclose(out) != 0 && ok) {
    diag_error((SrcLoc){0}, "cannot write '%s'", to);
    ok = false;
  }
  return ok;
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
    char *src = path_of(from, e->d_name), *dst = path_of(to, e->d_name);
    struct stat st;
    if (stat(src, &st) != 0) ok = false, diag_error((SrcLoc){0}, "cannot read '%s': %s", src, strerror(errno));
    else if (S_ISDIR(st.st_mode)) ok = copy_tree(src, dst);
    else if (S_ISREG(st.st_mode)) ok = copy_file(src, dst);
    free(src), free(dst);
  }
  closedir(d);
  return ok;
}

static bool write_network(const Module *m, const char *source, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    diag_error((SrcLoc){0}, "cannot write '%s': %s", path, strerror(errno));
    return false;
  }
  bool ok = emit_c(m, source, f);
  ok &= !ferror(f);
  ok &= fclose(f) == 0;
  if (!ok && !diag_error_count()) diag_error((SrcLoc){0}, "cannot write '%s'", path);
  return ok;
}

static bool write_makefile(const Module *m, const char *source, const BuildOptions *o, const char *rules,
                           const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    diag_error((SrcLoc){0}, "cannot write '%s': %s", path, strerror(errno));
    return false;
  }
  fprintf(f, "# %s, written by swnc from %s for target %s; the target's rules follow.\nNET = %s\n\n", m->name,
          source, o->target, m->name);
  bool ok = append_file(rules, f);
  ok &= !ferror(f);
  ok &= fclose(f) == 0;
  if (!ok && !diag_error_count()) diag_error((SrcLoc){0}, "cannot write '%s'", path);
  return ok;
}

bool emit_source_tree(const Module *m, const char *source, const BuildOptions *o) {
  if (!o->output) {
    diag_error((SrcLoc){0}, "--emit=c for target '%s' writes a directory of sources and a Makefile: name it with -o DIR",
               o->target);
    return false;
  }
  const char *runtime = find_runtime(o, o->target);
  if (!runtime) return false;
  char *tree, *rules, *sources, *network_name, *network, *makefile;
  if (asprintf(&tree, "%s/src/%s", runtime, o->target) < 0) return false;
  rules = path_of(tree, "Makefile.rules"), sources = path_of(tree, "swnc");
  if (asprintf(&network_name, "%s.c", m->name) < 0) return false;
  network = path_of(o->output, network_name), makefile = path_of(o->output, "Makefile");
  char *copy = path_of(o->output, "swnc");
  bool ok = make_dir(o->output) && copy_tree(sources, copy) && write_network(m, source, network) &&
            write_makefile(m, source, o, rules, makefile);
  free(tree), free(rules), free(sources), free(network_name), free(network), free(makefile), free(copy);
  return ok;
}
