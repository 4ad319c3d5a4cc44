/* Tuning files: measured kernel times that replace a target's cost model (`swnc tune` writes
 * them, `swnc --tune=FILE` reads them). A text file, one measurement per line:
 *
 *   conv host b64:c32x16x16:o32x16x16:k5x5:s1x1:p2x2:g1 forward implicit 0.000412 2026-11-21T10:00:00Z AMD EPYC 9554 x2
 *   transform host b64:c32x16x16 to_rcnb - 0.000105 2026-11-21T10:00:01Z AMD EPYC 9554 x2
 *
 * fields: kind (conv or transform), target, shape key, computation (forward, wgrad, dgrad, or
 * backward: both gradients by one call) or
 * direction (to_rcnb, to_bnrc), plan (explicit, implicit, or - for transforms), the median time
 * in seconds, the UTC date of the measurement, and the machine (the rest of the line). Lines
 * starting with # are comments. docs/ir.md describes how entries are applied. */
#ifndef SWNC_TUNING_H
#define SWNC_TUNING_H

#include "ir.h"

typedef struct TuningEntry {
  const char *kind, *target, *key, *what, *plan;
  double seconds;
  const char *date, *machine;
  SrcLoc loc;
} TuningEntry;

struct Tuning {
  const char *path;
  VEC(TuningEntry) entries;
};

/* Reads `path` into `t`; malformed lines are skipped with a warning. A missing file is an
 * error unless `may_be_missing` (then `t` is empty). Returns false on errors. */
bool tuning_load(Arena *a, const char *path, bool may_be_missing, Tuning *t);
/* The last entry with these fields measured on `machine`, or NULL: an entry from another machine
 * later in the file does not hide this machine's. */
const TuningEntry *tuning_find(const Tuning *t, const char *kind, const char *target,
                               const char *key, const char *what, const char *plan,
                               const char *machine);
/* Writes one entry as a line. */
void tuning_write(FILE *f, const TuningEntry *e);
/* This machine as tuning files name it: the CPU model and the number of online CPUs. */
const char *tuning_machine(Arena *a);

#endif
