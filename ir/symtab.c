#include "symtab.h"

#include <stdint.h>

static uint32_t hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

void symtab_init(SymTab *t, Arena *a) { *t = (SymTab){.arena = a}; }

static SymEntry *find_slot(SymEntry *slots, int cap, const char *key) {
  uint32_t i = hash(key) & (uint32_t)(cap - 1);
  while (slots[i].key && strcmp(slots[i].key, key)) i = (i + 1) & (uint32_t)(cap - 1);
  return &slots[i];
}

static void rehash(SymTab *t) {
  int cap = t->cap ? t->cap * 2 : 16;
  SymEntry *slots = arena_alloc(t->arena, sizeof *slots * (size_t)cap);
  for (int i = 0; i < t->cap; i++)
    if (t->slots[i].key) *find_slot(slots, cap, t->slots[i].key) = t->slots[i];
  t->slots = slots;
  t->cap = cap;
}

int symtab_put(SymTab *t, const char *key, int value) {
  if ((t->len + 1) * 2 > t->cap) rehash(t);
  SymEntry *e = find_slot(t->slots, t->cap, key);
  if (e->key) return e->value;
  e->key = key;
  e->value = value;
  t->len++;
  return -1;
}

int symtab_get(const SymTab *t, const char *key) {
  if (!t->cap) return -1;
  SymEntry *e = find_slot(t->slots, t->cap, key);
  return e->key ? e->value : -1;
}
