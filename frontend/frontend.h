/* The front end: .swn text to an unelaborated module. */
#ifndef SWNC_FRONTEND_H
#define SWNC_FRONTEND_H

#include "../ir/ir.h"

/* A command-line override `-D key=value`. */
typedef struct Override {
  const char *text; /* "key=value", as given */
} Override;

/* Parses `path` and applies the overrides. Returns NULL if the file cannot be read (after
 * reporting why); otherwise a module, which has errors if diag_error_count() grew. */
Module *frontend_parse_file(const char *path, const Override *overrides, int noverrides);
Module *frontend_parse_text(const char *name, const char *text, size_t len,
                            const Override *overrides, int noverrides);

#endif
