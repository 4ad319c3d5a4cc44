/* The C backend. */
#ifndef SWNC_EMIT_C_H
#define SWNC_EMIT_C_H

#include <stdio.h>

#include "../lower.h"

/* Writes the C program for `m` (after all passes) to `f`; `source` is the .swn path. */
bool emit_c(const Module *m, const char *source, FILE *f);

#endif
