/* Declarations of the functions and schemas the op table (ops.h) names. Private to ir/. */
#ifndef SWNC_OP_IMPL_H
#define SWNC_OP_IMPL_H

#include "ir.h"

#define X(id, name, min_in, max_in, fields, infer, flops, bwd, ...)                                \
  extern const FieldSpec fields[];                                                                 \
  bool infer(Module *m, Op *op);                                                                   \
  double flops(const Graph *g, const Op *op);
SWNC_OPS(X)
#undef X

#endif
