#define _GNU_SOURCE /* asprintf */
#include "build.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../codegen/c/emit_c.h"

extern char **environ;

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *path_join(const char *dir, const char *suffix) {
  char *path;
  if (asprintf(&path, "%s/%s", dir, suffix) < 0) swnc_out_of_memory("a path");
  return path;
}

static bool has_file(const char *dir, const char *suffix) {
  char *path = path_join(dir, suffix);
  bool ok = is_file(path);
  free(path);
  return ok;
}

/* A runtime directory holds include/swnc_rt.h, lib/libswnc_rt.a and lib/libswnc_TARGET.a. */
static bool holds_runtime(const char *dir, const char *target) {
  char lib[64];
  snprintf(lib, sizeof lib, "lib/libswnc_%.32s.a", target);
  return has_file(dir, "include/swnc_rt.h") && has_file(dir, "lib/libswnc_rt.a") &&
         has_file(dir, lib);
}

/* The candidates of the documented search order; NULL-terminated, malloc'd strings. */
static void candidates(const BuildOptions *o, char *out[3]) {
  int n = 0;
  if (o->runtime_dir)
    out[n++] = strdup(o->runtime_dir);
  else if (getenv("SWNC_RUNTIME_DIR"))
    out[n++] = strdup(getenv("SWNC_RUNTIME_DIR"));
  else {
    char *exe = realpath("/proc/self/exe", NULL);
    char *slash = exe ? strrchr(exe, '/') : NULL;
    if (slash) {
      *slash = 0;
      out[n++] = path_join(exe, "../lib/swnc");     /* installed */
      out[n++] = path_join(exe, "../swnc-runtime"); /* build tree */
    }
    free(exe);
  }
  out[n] = NULL;
}

const char *find_runtime(const BuildOptions *o, const char *target) {
  static char found[PATH_MAX];
  char *tried[3];
  candidates(o, tried);
  const char *result = NULL;
  for (int i = 0; tried[i] && !result; i++)
    if (holds_runtime(tried[i], target) && realpath(tried[i], found)) result = found;
  if (!result) {
    char list[1024] = "";
    for (int i = 0; tried[i]; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", tried[i]);
    diag_error((SrcLoc){0},
               "cannot find the swnc runtime for target '%s' (looked in: %s); build it, or name it "
               "with --runtime-dir or SWNC_RUNTIME_DIR",
               target, list);
  }
  for (int i = 0; tried[i]; i++) free(tried[i]);
  return result;
}

/* Splits `text` at spaces into argv (words point into a copy the caller frees). */
static int split_words(char *text, char **argv, int max) {
  int n = 0;
  for (char *save = NULL, *w = strtok_r(text, " \t", &save); w && n < max;
       w = strtok_r(NULL, " \t", &save))
    argv[n++] = w;
  return n;
}

static char *read_flags(const char *dir, const char *target) {
  char name[64];
  snprintf(name, sizeof name, "lib/swnc_%.32s.flags", target);
  char *path = path_join(dir, name);
  FILE *f = fopen(path, "r");
  free(path);
  char *flags = xcalloc(1, 4096, "the kernel set's flags");
  if (f) {
    if (!fgets(flags, 4096, f)) flags[0] = 0;
    fclose(f);
  }
  flags[strcspn(flags, "\r\n")] = 0;
  return flags;
}

static bool run(char **argv, bool verbose) {
  if (verbose) {
    for (int i = 0; argv[i]; i++) fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
    fputc('\n', stderr);
  }
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (err) {
    diag_error((SrcLoc){0}, "cannot run the C compiler '%s': %s (set CC)", argv[0], strerror(err));
    return false;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return false;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  diag_error((SrcLoc){0}, "the C compiler '%s' failed (%s %d)", argv[0],
             WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  return false;
}

/* Writes the program's C source, or its LLVM object, to a new temporary file. */
static bool write_program(const Module *m, const char *source, const BuildOptions *o, char *path) {
  int fd = mkstemps(path, 2);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    diag_error((SrcLoc){0}, "cannot create a temporary file: %s", strerror(errno));
    return false;
  }
  bool ok = o->llvm ? true : emit_c(m, source, f);
  ok &= fclose(f) == 0;
  if (ok && o->llvm) ok = llvm_write(m, source, &o->llvm_options, LLVM_OBJECT, path);
  return ok;
}

bool build_executable(const Module *m, const char *source, const BuildOptions *o) {
  const char *dir = find_runtime(o, o->target);
  if (!dir) return false;
  char c_path[] = "/tmp/swnc-XXXXXX.c", o_path[] = "/tmp/swnc-XXXXXX.o";
  char *program = o->llvm ? o_path : c_path;
  bool ok = write_program(m, source, o, program);
  if (ok) {
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    const char *cflags = getenv("CFLAGS") ? getenv("CFLAGS") : "-O2";
    char *cc_words = strdup(cc), *flag_words = strdup(cflags),
         *link_words = read_flags(dir, o->target);
    char lib[64];
    snprintf(lib, sizeof lib, "lib/libswnc_%.32s.a", o->target);
    char *include_dir = path_join(dir, "include"), *target_lib = path_join(dir, lib);
    char *rt_lib = path_join(dir, "lib/libswnc_rt.a");
    char *include;
    if (asprintf(&include, "-I%s", include_dir) < 0) include = NULL;
    char *argv[128];
    int n = split_words(cc_words, argv, 8);
    n += split_words(flag_words, argv + n, 40);
    /* the runtime calls the kernels: it goes first */
    char *fixed[] = {"-std=gnu11", include, program, "-o", (char *)o->output, rt_lib, target_lib};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) argv[n++] = fixed[i];
    n += split_words(link_words, argv + n, 60);
    argv[n] = NULL;
    ok = include && run(argv, o->verbose);
    free(cc_words), free(flag_words), free(link_words);
    free(include_dir), free(include), free(target_lib), free(rt_lib);
  }
  if (ok || o->llvm)
    unlink(program);
  else
    fprintf(stderr, "swnc: note: the generated C is kept in %s\n", program);
  return ok;
}

bool run_in_jit(const Module *m, const char *source, const BuildOptions *o, int argc, char **argv,
                int *status) {
  const char *dir = find_runtime(o, o->target);
  if (!dir) return false;
  char lib[64];
  snprintf(lib, sizeof lib, "lib/libswnc_%.32s.so", o->target);
  char *so = path_join(dir, lib);
  bool ok = llvm_run(m, source, &o->llvm_options, so, argc, argv, status);
  free(so);
  return ok;
}
