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

/* The text of `path` as a source file of m (for another reader: the Caffe importer); NULL after
 * reporting why it cannot be read. */
const SrcFile *frontend_read_source(Module *m, const char *path);
/* Applies -D overrides to a module read by any reader. */
void frontend_apply_overrides(Module *m, const Override *overrides, int noverrides);

/* Writes the module's unelaborated form (settings, blocks, the network) as .swn text, with each
 * statement's and setting's note as a comment; `origin` heads the file as a comment. */
void swn_write(FILE *f, const Module *m, const char *origin);

#endif
