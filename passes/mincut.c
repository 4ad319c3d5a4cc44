/* Dinic's algorithm: blocking flows on BFS level graphs, O(V^2 E) at worst and far less on the
 * layer graphs here (a few hundred nodes). */
#include "mincut.h"

#include <stdlib.h>

#include "../ir/arena.h"

typedef struct Edge {
  int to, next;
  int64_t cap; /* residual */
} Edge;

struct MinCut {
  int n, nedges, cap_edges;
  int *head, *level, *iter, *queue;
  Edge *edges;
};

MinCut *mincut_new(int nodes) {
  MinCut *g = xcalloc(1, sizeof *g, "the layout cut");
  g->n = nodes;
  g->head = xcalloc((size_t)nodes, sizeof(int), "the layout cut");
  g->level = xcalloc((size_t)nodes, sizeof(int), "the layout cut");
  g->iter = xcalloc((size_t)nodes, sizeof(int), "the layout cut");
  g->queue = xcalloc((size_t)nodes, sizeof(int), "the layout cut");
  for (int i = 0; i < nodes; i++) g->head[i] = -1;
  return g;
}

void mincut_free(MinCut *g) {
  if (!g) return;
  free(g->head), free(g->level), free(g->iter), free(g->queue), free(g->edges), free(g);
}

static void add_arc(MinCut *g, int from, int to, int64_t cap) {
  if (g->nedges == g->cap_edges) {
    g->cap_edges = g->cap_edges ? 2 * g->cap_edges : 64;
    g->edges = xrealloc(g->edges, sizeof(Edge) * (size_t)g->cap_edges, "the layout cut");
  }
  g->edges[g->nedges] = (Edge){to, g->head[from], cap};
  g->head[from] = g->nedges++;
}

/* Edge 2k is an edge, 2k+1 its reverse. */
void mincut_edge(MinCut *g, int from, int to, int64_t capacity) {
  if (capacity <= 0 || from == to) return;
  if (capacity > MINCUT_INFINITE) capacity = MINCUT_INFINITE;
  add_arc(g, from, to, capacity);
  add_arc(g, to, from, 0);
}

static bool levels(MinCut *g, int s, int t) {
  for (int i = 0; i < g->n; i++) g->level[i] = -1;
  int qh = 0, qt = 0;
  g->level[s] = 0, g->queue[qt++] = s;
  while (qh < qt) {
    int u = g->queue[qh++];
    for (int e = g->head[u]; e >= 0; e = g->edges[e].next)
      if (g->edges[e].cap > 0 && g->level[g->edges[e].to] < 0) {
        g->level[g->edges[e].to] = g->level[u] + 1;
        g->queue[qt++] = g->edges[e].to;
      }
  }
  return g->level[t] >= 0;
}

/* One augmenting path along the level graph from s to t, found by an explicit-stack DFS (the
 * layer graphs can be long chains) with dead ends pruned through iter[]; its bottleneck pushed. */
static int64_t augment(MinCut *g, int s, int t, int *path) {
  int depth = 0, u = s;
  while (true) {
    if (u == t) {
      int64_t pushed = MINCUT_INFINITE;
      for (int i = 0; i < depth; i++)
        if (g->edges[path[i]].cap < pushed) pushed = g->edges[path[i]].cap;
      for (int i = 0; i < depth; i++)
        g->edges[path[i]].cap -= pushed, g->edges[path[i] ^ 1].cap += pushed;
      return pushed;
    }
    int *e = &g->iter[u];
    while (*e >= 0 && (g->edges[*e].cap <= 0 || g->level[g->edges[*e].to] != g->level[u] + 1))
      *e = g->edges[*e].next;
    if (*e >= 0) {
      path[depth++] = *e;
      u = g->edges[*e].to;
      continue;
    }
    if (!depth) return 0;
    g->level[u] = -1; /* a dead end: never again in this phase */
    u = g->edges[path[--depth] ^ 1].to;
    g->iter[u] = g->edges[g->iter[u]].next;
  }
}

int64_t mincut_solve(MinCut *g, int source, int sink) {
  int64_t flow = 0;
  int *path = xcalloc((size_t)g->n + 1, sizeof(int), "the layout cut");
  while (levels(g, source, sink)) {
    for (int i = 0; i < g->n; i++) g->iter[i] = g->head[i];
    int64_t got;
    while ((got = augment(g, source, sink, path)) > 0) flow += got;
  }
  free(path);
  levels(g, source, sink); /* the source side: what the residual graph still reaches */
  return flow;
}

bool mincut_source_side(const MinCut *g, int node) { return g->level[node] >= 0; }
