/* Virtual rank numbering over groups (supernodes): swCaffe's (section 5) topology-aware mapping. */
#include <stdlib.h>

#include "../util.h"
#include "schedule.h"

typedef struct Key {
  int first, second, rank;
} Key;

static int by_key(const void *a, const void *b) {
  const Key *x = a, *y = b;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  if (x->second != y->second) return x->second < y->second ? -1 : 1;
  return 0;
}

/* Sorted by (group, index in group) for contiguous, (index in group, group) for round robin. */
void swn_topology_order(const SwnTopology *t, SwnRankMap map, int *out) {
  Key *keys = swn_alloc(sizeof(Key) * (size_t)t->size);
  int *seen = swn_alloc(sizeof(int) * (size_t)t->ngroups);
  for (int r = 0; r < t->size; r++) {
    int g = t->group[r], index = seen[g]++;
    keys[r] = map == SWN_MAP_CONTIGUOUS ? (Key){g, index, r} : (Key){index, g, r};
  }
  qsort(keys, (size_t)t->size, sizeof(Key), by_key);
  for (int v = 0; v < t->size; v++) out[v] = keys[v].rank;
  free(keys), free(seen);
}
