/* Virtual rank numbering over groups (supernodes): BRIEF section 3's topology-aware mapping. */
#include "schedule.h"

void swn_topology_order(const SwnTopology *t, SwnRankMap map, int *out) {
  int v = 0;
  if (map == SWN_MAP_CONTIGUOUS) {
    for (int g = 0; g < t->ngroups; g++)
      for (int r = 0; r < t->size; r++)
        if (t->group[r] == g) out[v++] = r;
    return;
  }
  /* round robin: pass k takes the k-th member of every group that has one */
  for (int k = 0; v < t->size; k++)
    for (int g = 0; g < t->ngroups; g++) {
      int seen = 0;
      for (int r = 0; r < t->size; r++)
        if (t->group[r] == g && seen++ == k) {
          out[v++] = r;
          break;
        }
    }
}
