/* Small runtime helpers: errors, allocation, time. */
#ifndef SWNC_RT_UTIL_H
#define SWNC_RT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* The program's name in messages ("lenet"). */
extern const char *swn_program;

/* Prints "PROGRAM: error: message" (or "WHERE: error: message" with a file) and exits 1. */
_Noreturn void swn_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void swn_vfatal_at(const char *where, const char *fmt, va_list ap);
_Noreturn void swn_fatal_at(const char *where, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* With several ranks, messages name the rank, and a fatal error calls `stop_all` (which must
 * not return) to stop every rank instead of leaving the others waiting for this one. */
void swn_set_error_rank(int rank, int ranks, void (*stop_all)(void));

/* The file being written to replace another (a checkpoint's FILE.tmpPID): a fatal error or a
 * second interrupting signal removes it, so no failed save leaves it behind. One at a time. */
void swn_temporary_begin(const char *path);
/* The temporary for writing `path`: PATH.tmpPID (allocated), begun as above; swn_temporary_replace
 * renames it over `path` once written (a fatal error if it cannot), ends it and frees the name. */
char *swn_temporary_for(const char *path);
void swn_temporary_replace(char *tmp, const char *path);
void swn_temporary_end(void);    /* written and renamed: nothing to remove */
void swn_temporary_remove(void); /* async-signal-safe */

/* Checks that everything printed reached standard output (a full disk, /dev/full): a fatal
 * error if not. */
void swn_check_stdout(void);

/* Zeroed, 64-byte aligned memory. The runtime's one out-of-memory policy: a failed allocation
 * is a fatal error naming what was being allocated and its size, and stops every rank. */
void *swn_alloc_for(size_t bytes, const char *what);
#define swn_alloc(bytes) swn_alloc_for((bytes), __func__)
double swn_now(void);                     /* seconds, monotonic */
const char *swn_duration(double seconds); /* "1h02m", "3m05s", "12s" (static buffer) */

#endif
