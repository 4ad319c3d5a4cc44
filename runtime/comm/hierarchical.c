/* Hierarchical allreduce (S-Caffe; GradientFlow).
 *
 * Each group's ranks are cut into chains of at most `chain` ranks. (1) Every chain reduces to
 * its head in pipelined chunks: the tail sends chunk k while the next rank sums chunk k - 1 and
 * forwards it, so a chain of P ranks takes n + P - 2 chunk times. (2) The chain heads allreduce
 * among themselves (the upper level, SwnUpperLevel): a binomial tree, reduce then broadcast,
 * 2 log2(G) whole-vector times ("chain-binomial", best where latency rules: small vectors, many
 * heads); a ring; or the heads' own pipelined chain, reduced and broadcast back in chunks
 * ("chain of chains": 2 (n + G - 2) chunk times, best for large vectors and few heads). (3)
 * Every chain broadcasts its head's result back down in pipelined chunks.
 *
 * The rooted collectives of the reduce-to-root schedules are the halves of the same design:
 * reduce runs (1) and the upper level's reduce to rank 0; broadcast the upper level's broadcast
 * from rank 0 and (3). */
#include <stdlib.h>

#include "../util.h"
#include "schedule.h"

enum { BINOMIAL_BELOW_FLOATS = 16384 }; /* 64 KiB */

typedef struct Chains {
  int *members; /* ranks, chain after chain */
  int *start;   /* chain c is members[start[c] .. start[c + 1]) */
  int nchains;
  int *heads; /* members[start[c]] for each chain */
} Chains;

static void cut_chains(const SwnTopology *t, Chains *c) {
  c->members = swn_alloc(sizeof(int) * (size_t)t->size);
  c->start = swn_alloc(sizeof(int) * (size_t)(t->size + 1));
  c->heads = swn_alloc(sizeof(int) * (size_t)t->size);
  swn_topology_order(t, SWN_MAP_CONTIGUOUS, c->members);
  c->nchains = 0;
  for (int i = 0, run = 0; i < t->size; i++) {
    bool new_group = i == 0 || t->group[c->members[i]] != t->group[c->members[i - 1]];
    if (new_group || run == t->chain) run = 0;
    if (run++ == 0) c->heads[c->nchains] = c->members[i], c->start[c->nchains++] = i;
  }
  c->start[c->nchains] = t->size;
}

/* Position of `rank` in its chain, the chain, and the chain's length. */
static void locate(const Chains *c, int rank, int *chain, int *pos, int *len) {
  for (int k = 0; k < c->nchains; k++)
    for (int i = c->start[k]; i < c->start[k + 1]; i++)
      if (c->members[i] == rank) {
        *chain = k, *pos = i - c->start[k], *len = c->start[k + 1] - c->start[k];
        return;
      }
}

/* Steps of a pipelined chain: towards the head (reduce) or away from it (broadcast). */
static void chain_steps(const int *m, int pos, int len, int64_t count, int64_t chunk, bool reduce,
                        SwnSchedule *s) {
  int64_t nchunks = (count + chunk - 1) / chunk;
  int upstream = reduce ? pos + 1 : pos - 1, downstream = reduce ? pos - 1 : pos + 1;
  bool receives = upstream >= 0 && upstream < len, sends = downstream >= 0 && downstream < len;
  for (int64_t k = 0; k <= nchunks; k++) { /* step k: receive chunk k, pass on chunk k - 1 */
    SwnCommStep st = swn_step_none();
    if (receives && k < nchunks) {
      st.recv_from = m[upstream], st.recv_offset = k * chunk, st.recv_sum = reduce;
      st.recv_count = (k + 1) * chunk < count ? chunk : count - k * chunk;
    }
    int64_t out = receives ? k - 1 : k; /* a chain's first rank has its chunks already */
    if (sends && out >= 0 && out < nchunks) {
      st.send_to = m[downstream], st.send_offset = out * chunk;
      st.send_count = (out + 1) * chunk < count ? chunk : count - out * chunk;
    }
    swn_schedule_add(s, st);
  }
}

/* Binomial reduce to heads[0] over positions 0..n-1 (i: this head's): at distance d, odd
 * multiples of d send down. */
static void binomial_reduce(const int *heads, int n, int i, int64_t count, SwnSchedule *s) {
  for (int d = 1; d < n; d *= 2) {
    if (i % (2 * d) == d) {
      SwnCommStep st = swn_step_none();
      st.send_to = heads[i - d], st.send_count = count;
      swn_schedule_add(s, st);
    } else if (i % (2 * d) == 0 && i + d < n) {
      SwnCommStep st = swn_step_none();
      st.recv_from = heads[i + d], st.recv_count = count, st.recv_sum = true;
      swn_schedule_add(s, st);
    }
  }
}

/* Binomial broadcast from heads[0]: the reduce's tree, backwards. */
static void binomial_broadcast(const int *heads, int n, int i, int64_t count, SwnSchedule *s) {
  int top = 1;
  while (top < n) top *= 2;
  for (int d = top / 2; d >= 1; d /= 2) {
    SwnCommStep st = swn_step_none();
    if (i % (2 * d) == d)
      st.recv_from = heads[i - d], st.recv_count = count;
    else if (i % (2 * d) == 0 && i + d < n)
      st.send_to = heads[i + d], st.send_count = count;
    swn_schedule_add(s, st);
  }
}

SwnUpperLevel swn_upper_choice(const SwnTopology *t, int64_t count) {
  if (t->upper != SWN_UPPER_AUTO) return t->upper;
  return count < BINOMIAL_BELOW_FLOATS ? SWN_UPPER_BINOMIAL : SWN_UPPER_RING;
}

SwnUpperLevel swn_upper_rooted_choice(const SwnTopology *t, int64_t count) {
  if (t->upper == SWN_UPPER_BINOMIAL || t->upper == SWN_UPPER_CHAIN) return t->upper;
  if (t->upper == SWN_UPPER_RING) return SWN_UPPER_CHAIN;
  return count < BINOMIAL_BELOW_FLOATS ? SWN_UPPER_BINOMIAL : SWN_UPPER_CHAIN;
}

/* Step (2) for the head of chain `i` of `c`. */
static void upper_level(const SwnTopology *t, const Chains *c, int i, int64_t count, int64_t chunk,
                        SwnSchedule *s) {
  SwnUpperLevel upper = swn_upper_choice(t, count);
  if (upper == SWN_UPPER_BINOMIAL) {
    binomial_reduce(c->heads, c->nchains, i, count, s);
    binomial_broadcast(c->heads, c->nchains, i, count, s);
  } else if (upper == SWN_UPPER_CHAIN) {
    chain_steps(c->heads, i, c->nchains, count, chunk, true, s);
    chain_steps(c->heads, i, c->nchains, count, chunk, false, s);
  } else {
    swn_schedule_ring(c->heads, c->nchains, c->heads[i], 0, count, s);
  }
}

/* Step (2) of a rooted collective for the head of chain `i`: towards heads[0] (reduce) or
 * from it (broadcast). */
static void upper_rooted(const SwnTopology *t, const Chains *c, int i, int64_t count, int64_t chunk,
                         bool reduce, SwnSchedule *s) {
  if (swn_upper_rooted_choice(t, count) == SWN_UPPER_CHAIN)
    chain_steps(c->heads, i, c->nchains, count, chunk, reduce, s);
  else if (reduce)
    binomial_reduce(c->heads, c->nchains, i, count, s);
  else
    binomial_broadcast(c->heads, c->nchains, i, count, s);
}

/* The chains of `rank`, with its place: everything a generator below needs. */
typedef struct Place {
  Chains c;
  const int *m; /* the members of its chain */
  int chain, pos, len;
  int64_t chunk;
} Place;

static void place(const SwnTopology *t, int rank, int64_t count, Place *p) {
  cut_chains(t, &p->c);
  p->chain = 0, p->pos = 0, p->len = 1;
  locate(&p->c, rank, &p->chain, &p->pos, &p->len);
  p->m = p->c.members + p->c.start[p->chain];
  p->chunk = t->chunk > 0 ? t->chunk : count;
}

static void unplace(Place *p) { free(p->c.members), free(p->c.start), free(p->c.heads); }

void swn_schedule_hierarchical(const SwnTopology *t, int rank, int64_t count, SwnSchedule *s) {
  Place p;
  place(t, rank, count, &p);
  chain_steps(p.m, p.pos, p.len, count, p.chunk, true, s);
  if (p.pos == 0) upper_level(t, &p.c, p.chain, count, p.chunk, s);
  chain_steps(p.m, p.pos, p.len, count, p.chunk, false, s);
  unplace(&p);
}

void swn_schedule_rooted(SwnCollective kind, const SwnTopology *t, int rank, int64_t count,
                         SwnSchedule *s) {
  s->rank = rank;
  s->nsteps = 0;
  if (t->size <= 1 || count <= 0) return;
  Place p;
  place(t, rank, count, &p);
  if (p.c.heads[0] != 0) swn_fatal("internal: rank 0 does not head the first chain");
  bool reduce = kind == SWN_COLLECTIVE_REDUCE;
  if (reduce) chain_steps(p.m, p.pos, p.len, count, p.chunk, true, s);
  if (p.pos == 0) upper_rooted(t, &p.c, p.chain, count, p.chunk, reduce, s);
  if (!reduce) chain_steps(p.m, p.pos, p.len, count, p.chunk, false, s);
  unplace(&p);
}
