/* The network as a Caffe prototxt (swnc export-caffe). */
#ifndef SWNC_EMIT_PROTOTXT_H
#define SWNC_EMIT_PROTOTXT_H

#include "../../ir/ir.h"

/* Writes m's graph (elaborated and shape-inferred, before the rewriting passes) to f; `source`
 * names the .swn it came from. False after reporting an op Caffe has no layer for. */
bool emit_prototxt(const Module *m, const char *source, FILE *f);

#endif
