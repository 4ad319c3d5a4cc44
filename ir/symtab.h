/* A string -> int map in an arena (open addressing); names in scopes and graphs. */
#ifndef SWNC_SYMTAB_H
#define SWNC_SYMTAB_H

#include "arena.h"

typedef struct SymEntry {
  const char *key;
  int value;
} SymEntry;

typedef struct SymTab {
  Arena *arena;
  SymEntry *slots;
  int cap, len;
} SymTab;

void symtab_init(SymTab *t, Arena *a);
/* Inserts key -> value unless present; returns the value already there, or -1. */
int symtab_put(SymTab *t, const char *key, int value);
int symtab_get(const SymTab *t, const char *key); /* -1 if absent */

#endif
