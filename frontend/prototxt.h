/* Protocol-buffer text format (Caffe's .prototxt files) as a generic tree: a message is a list
 * of fields in file order, each a scalar or a nested message, with its source location. The
 * Caffe importer (caffe_import.c) gives the fields their meaning. */
#ifndef SWNC_PROTOTXT_H
#define SWNC_PROTOTXT_H

#include "../ir/ir.h"

typedef enum { PB_NUMBER, PB_STRING, PB_WORD, PB_MESSAGE } PbKind;

typedef struct PbMessage PbMessage;

typedef struct PbField {
  const char *name;
  SrcLoc loc; /* of the field's name */
  PbKind kind;
  bool integral; /* PB_NUMBER written without a fraction or exponent */
  int64_t i;     /* PB_NUMBER, when integral */
  double f;      /* PB_NUMBER */
  const char *s; /* PB_STRING (escapes resolved), PB_WORD (an enum value, true, false, inf) */
  PbMessage *msg;
  bool used; /* set by whoever reads the field: unread fields are reported */
} PbField;

struct PbMessage {
  SrcLoc loc; /* of the opening brace, or the file's start */
  VEC(PbField) fields;
};

/* Parses a whole file held in `file` (already in m's arena) into a message; NULL after
 * reporting a syntax error. */
PbMessage *prototxt_parse(Module *m, const SrcFile *file);

#endif
