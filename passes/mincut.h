/* Minimum s-t cut of a directed graph with integer capacities (Dinic's max-flow). The layout
 * pass minimises its energy (unary costs and pairwise penalties of binary labels) with it. */
#ifndef SWNC_MINCUT_H
#define SWNC_MINCUT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct MinCut MinCut;

#define MINCUT_INFINITE (INT64_MAX / 8)

MinCut *mincut_new(int nodes); /* nodes 0 .. nodes-1 */
void mincut_free(MinCut *g);
void mincut_edge(MinCut *g, int from, int to, int64_t capacity);
/* The cut's value; afterwards mincut_source_side tells each node's side. */
int64_t mincut_solve(MinCut *g, int source, int sink);
bool mincut_source_side(const MinCut *g, int node);

#endif
