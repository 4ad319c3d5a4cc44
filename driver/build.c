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

/* A runtime directory holds include/swnc_rt.h, lib/libswnc_rt.a and lib/libswnc_TARGET.a. */
static bool holds_runtime(const char *dir, const char *target) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/include/swnc_rt.h", dir);
  if (!is_file(path)) return false;
  snprintf(path, sizeof path, "%s/lib/libswnc_rt.a", dir);
  if (!is_file(path)) return false;
  snprintf(path, sizeof path, "%s/lib/libswnc_%s.a", dir, target);
  return is_file(path);
}

const char *find_runtime(const BuildOptions *o, const char *target) {
  static char found[PATH_MAX];
  char exe[PATH_MAX], tried[4][PATH_MAX];
  int n = 0;
  if (o->runtime_dir) snprintf(tried[n++], PATH_MAX, "%s", o->runtime_dir);
  else if (getenv("SWNC_RUNTIME_DIR")) snprintf(tried[n++], PATH_MAX, "%s", getenv("SWNC_RUNTIME_DIR"));
  else {
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
      exe[len] = 0;
      char *slash = strrchr(exe, '/');
      if (slash) *slash = 0;
      snprintf(tried[n++], PATH_MAX, "%.3800s/../lib/swnc", exe);     /* installed */
      snprintf(tried[n++], PATH_MAX, "%.3800s/../swnc-runtime", exe); /* build tree */
    }
  }
  for (int i = 0; i < n; i++)
    if (holds_runtime(tried[i], target)) return realpath(tried[i], found) ? found : tried[i];
  char list[4 * PATH_MAX + 16] = "";
  for (int i = 0; i < n; i++) strcat(strcat(list, i ? ", " : ""), tried[i]);
  diag_error((SrcLoc){0}, "cannot find the swnc runtime for target '%s' (looked in: %s); build it, or name it with "
                          "--runtime-dir or SWNC_RUNTIME_DIR", target, list);
  return NULL;
}

/* Splits `text` at spaces into argv (words point into a copy the caller frees). */
static int split_words(char *text, char **argv, int max) {
  int n = 0;
  for (char *save = NULL, *w = strtok_r(text, " \t", &save); w && n < max; w = strtok_r(NULL, " \t", &save))
    argv[n++] = w;
  return n;
}

static char *read_flags(const char *dir, const char *target) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/lib/swnc_%s.flags", dir, target);
  FILE *f = fopen(path, "r");
  char *flags = calloc(1, 4096);
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
  diag_error((SrcLoc){0}, "the C compiler '%s' failed (%s %d)", argv[0], WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  return false;
}

bool build_executable(const Module *m, const char *source, const BuildOptions *o) {
  const char *dir = find_runtime(o, o->target);
  if (!dir) return false;
  char c_path[] = "/tmp/swnc-XXXXXX.c";
  int fd = mkstemps(c_path, 2);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    diag_error((SrcLoc){0}, "cannot create a temporary file: %s", strerror(errno));
    return false;
  }
  bool ok = emit_c(m, source, f);
  ok &= fclose(f) == 0;
  if (ok) {
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    const char *cflags = getenv("CFLAGS") ? getenv("CFLAGS") : "-O2";
    char *cc_words = strdup(cc), *flag_words = strdup(cflags), *link_words = read_flags(dir, o->target);
    char include[PATH_MAX + 2], target_lib[PATH_MAX], rt_lib[PATH_MAX];
    snprintf(include, sizeof include, "-I%s/include", dir);
    snprintf(target_lib, sizeof target_lib, "%s/lib/libswnc_%s.a", dir, o->target);
    snprintf(rt_lib, sizeof rt_lib, "%s/lib/libswnc_rt.a", dir);
    char *argv[128];
    int n = split_words(cc_words, argv, 8);
    n += split_words(flag_words, argv + n, 40);
    char *fixed[] = {"-std=gnu11", include, c_path, "-o", (char *)o->output, target_lib, rt_lib};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) argv[n++] = fixed[i];
    n += split_words(link_words, argv + n, 60);
    argv[n] = NULL;
    ok = run(argv, o->verbose);
    free(cc_words), free(flag_words), free(link_words);
  }
  if (ok) unlink(c_path);
  else fprintf(stderr, "swnc: note: the generated C is kept in %s\n", c_path);
  return ok;
}
