/* State shared by the lexer and the parser while one file (or one -D value) is read. */
#ifndef SWNC_PARSE_CTX_H
#define SWNC_PARSE_CTX_H

#include "../ir/ir.h"
#include "syntax_error.h"

typedef struct ParseCtx {
  Module *m;
  const SrcFile *file;
  int start_token;     /* the first token the lexer returns: which grammar to parse */
  int first_column;    /* column of the first character (a -D value starts after KEY=) */
  Block *block;        /* the block whose statements are being read */
  const char *section; /* the settings section being read */
  bool seen_network;
  Expr *value;         /* the result when parsing a -D value */
  SyntaxCursor syntax; /* where its syntax errors were looked for */
} ParseCtx;

SrcLoc ctx_loc(const ParseCtx *ctx, int line, int col);

#endif
