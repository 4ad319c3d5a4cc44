#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *swn_program = "swnc-program";
static int error_rank = -1, error_ranks;
static void (*error_exit)(void);

void swn_set_error_rank(int rank, int ranks, void (*stop_all)(void)) {
  error_rank = rank, error_ranks = ranks, error_exit = stop_all;
}

static void vreport(const char *where, const char *kind, const char *fmt, va_list ap) {
  /* one fatal error speaks: another thread's (a loader thread on the same bad record) waits
   * for the exit the first one makes */
  static atomic_flag reporting = ATOMIC_FLAG_INIT;
  if (!strcmp(kind, "error") && atomic_flag_test_and_set(&reporting))
    for (;;) pause();
  fflush(stdout);
  if (error_rank >= 0)
    fprintf(stderr, "%s (rank %d of %d): ", swn_program, error_rank, error_ranks);
  fprintf(stderr, "%s: %s: ", where ? where : swn_program, kind);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  fflush(stderr);
}

static char temporary[4096];
static volatile sig_atomic_t temporary_held;

void swn_temporary_begin(const char *path) {
  snprintf(temporary, sizeof temporary, "%s", path);
  temporary_held = strlen(path) < sizeof temporary;
}

void swn_temporary_end(void) { temporary_held = 0; }

char *swn_temporary_for(const char *path) {
  size_t size = strlen(path) + 32;
  char *tmp = swn_alloc(size);
  snprintf(tmp, size, "%s.tmp%ld", path, (long)getpid());
  swn_temporary_begin(tmp);
  return tmp;
}

void swn_temporary_replace(char *tmp, const char *path) {
  if (rename(tmp, path)) swn_fatal_at(path, "cannot replace: %s", strerror(errno));
  swn_temporary_end();
  free(tmp);
}

void swn_temporary_remove(void) {
  if (temporary_held) unlink(temporary);
  temporary_held = 0;
}

void swn_check_stdout(void) {
  if (fflush(stdout) || ferror(stdout)) {
    int why = errno;
    clearerr(stdout);
    swn_fatal("cannot write standard output: %s", strerror(why ? why : EIO));
  }
}

static _Noreturn void stop(void) {
  swn_temporary_remove();
  if (error_exit) error_exit(); /* takes every rank down with this one */
  exit(1);
}

void swn_fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(NULL, "error", fmt, ap);
  va_end(ap);
  stop();
}

void swn_vfatal_at(const char *where, const char *fmt, va_list ap) {
  vreport(where, "error", fmt, ap);
  stop();
}

void swn_fatal_at(const char *where, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(where, "error", fmt, ap);
  va_end(ap);
  stop();
}

void *swn_alloc_for(size_t bytes, const char *what) {
  size_t rounded = (bytes + 63) & ~(size_t)63;
  void *p = rounded >= bytes ? aligned_alloc(64, rounded ? rounded : 64) : NULL;
  if (!p) swn_fatal("out of memory allocating %zu bytes (%s)", bytes, what);
  memset(p, 0, rounded);
  return p;
}

double swn_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

const char *swn_duration(double s) {
  static char buf[32];
  long t = s < 0 ? 0 : (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else if (t >= 60)
    snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else
    snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}
