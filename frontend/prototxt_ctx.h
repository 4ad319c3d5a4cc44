/* State shared by the prototxt lexer and parser. */
#ifndef SWNC_PROTOTXT_CTX_H
#define SWNC_PROTOTXT_CTX_H

#include "prototxt.h"
#include "syntax_error.h"

typedef struct PbCtx {
  Module *m;
  const SrcFile *file;
  PbMessage *root;
  SyntaxCursor syntax; /* where its syntax errors were looked for */
} PbCtx;

#endif
