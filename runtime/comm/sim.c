/* The network simulator (sim.h): replays every rank's schedule on the modelled machine. */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

typedef struct Message {
  int src, dst, ordinal, step;
  int64_t count;
} Message;

static int by_pair(const void *a, const void *b) {
  const Message *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

typedef struct Sim {
  const SwnMachine *m;
  int p;
  SwnSchedule *s;
  int **
      partner_step; /* per rank and step: the matching step of the send's receiver / the receive's sender */
  int **sender_step;
  double **start; /* per rank: start of each step, and the end as start[nsteps] */
} Sim;

static void *grab(size_t bytes) { return swn_alloc_for(bytes, "the network simulator"); }

/* Lists sends or receives with their per-pair ordinal, sorted so the k-th of each pair align. */
static Message *messages(const Sim *sim, bool sends, int64_t *n) {
  int64_t total = 0;
  for (int r = 0; r < sim->p; r++)
    for (int k = 0; k < sim->s[r].nsteps; k++) {
      const SwnCommStep *st = &sim->s[r].steps[k];
      total += (sends ? st->send_to : st->recv_from) >= 0;
    }
  Message *list = grab(sizeof(Message) * (size_t)total);
  int *ordinal = grab(sizeof(int) * (size_t)sim->p * (size_t)sim->p);
  int64_t i = 0;
  for (int r = 0; r < sim->p; r++)
    for (int k = 0; k < sim->s[r].nsteps; k++) {
      const SwnCommStep *st = &sim->s[r].steps[k];
      int peer = sends ? st->send_to : st->recv_from;
      if (peer < 0) continue;
      int src = sends ? r : peer, dst = sends ? peer : r;
      list[i++] = (Message){src, dst, ordinal[(size_t)src * (size_t)sim->p + (size_t)dst]++, k,
                            sends ? st->send_count : st->recv_count};
    }
  free(ordinal);
  qsort(list, (size_t)total, sizeof(Message), by_pair);
  *n = total;
  return list;
}

static bool match(Sim *sim, char *error, size_t size) {
  int64_t ns, nr;
  Message *send = messages(sim, true, &ns), *recv = messages(sim, false, &nr);
  bool ok = ns == nr;
  for (int64_t i = 0; ok && i < ns; i++) {
    ok = !by_pair(&send[i], &recv[i]) && send[i].count == recv[i].count;
    if (!ok)
      snprintf(error, size, "rank %d's message %d to rank %d (%lld floats) has no matching receive",
               send[i].src, send[i].ordinal, send[i].dst, (long long)send[i].count);
    sim->partner_step[send[i].src][send[i].step] = recv[i].step;
    sim->sender_step[recv[i].dst][recv[i].step] = send[i].step;
  }
  if (ns != nr) snprintf(error, size, "%lld sends but %lld receives", (long long)ns, (long long)nr);
  free(send), free(recv);
  return ok;
}

static double beta(const SwnMachine *m, int a, int b) {
  bool across = a / m->per_supernode != b / m->per_supernode;
  return m->beta * (across ? m->oversubscription : 1.0);
}

/* Ends rank r's step k if its partners have reached their matching steps. */
static bool try_step(Sim *sim, int r, int k, const int *at) {
  const SwnCommStep *st = &sim->s[r].steps[k];
  const SwnMachine *m = sim->m;
  double begin = sim->start[r][k], end = begin;
  if (st->send_to >= 0) {
    int j = sim->partner_step[r][k];
    if (at[st->send_to] < j) return false;
    double both = fmax(begin, sim->start[st->send_to][j]);
    end = fmax(end, both + m->alpha + beta(m, r, st->send_to) * 4.0 * (double)st->send_count);
  }
  if (st->recv_from >= 0) {
    int i = sim->sender_step[r][k];
    if (at[st->recv_from] < i) return false;
    double bytes = 4.0 * (double)st->recv_count;
    double both = fmax(begin, sim->start[st->recv_from][i]);
    end = fmax(end, both + m->alpha + beta(m, st->recv_from, r) * bytes +
                        (st->recv_sum ? m->gamma * bytes : 0));
  }
  sim->start[r][k + 1] = end;
  return true;
}

static void count_traffic(const Sim *sim, bool per_step, SwnSimResult *res) {
  for (int r = 0; r < sim->p; r++)
    if (sim->s[r].nsteps > res->steps) res->steps = sim->s[r].nsteps;
  if (per_step) {
    res->step_bytes = grab(sizeof(double) * (size_t)(res->steps + 1));
    res->step_cross = grab(sizeof(double) * (size_t)(res->steps + 1));
  }
  for (int r = 0; r < sim->p; r++)
    for (int k = 0; k < sim->s[r].nsteps; k++) {
      const SwnCommStep *st = &sim->s[r].steps[k];
      if (st->send_to < 0) continue;
      double bytes = 4.0 * (double)st->send_count;
      bool across = r / sim->m->per_supernode != st->send_to / sim->m->per_supernode;
      res->bytes += bytes;
      res->cross_bytes += across ? bytes : 0;
      if (per_step) res->step_bytes[k] += bytes, res->step_cross[k] += across ? bytes : 0;
    }
}

/* The runtime pipelines chains in chunks of SWN_CHAIN_CHUNK_FLOATS; the simulator holds every
 * step of every rank, so for a message of more than SIM_MAX_CHUNKS such chunks it simulates
 * SIM_MAX_CHUNKS larger ones: memory stays bounded (a 16 GiB bucket would otherwise need tens
 * of GB), and the chain's fill time it changes, P - 2 chunks of n + P - 2 for a chain of P, is
 * below 0.6% of the total at that size (a chain of 8). */
enum { SIM_MAX_CHUNKS = 1024 };
static int64_t simulated_chunk(int64_t count) {
  int64_t fitting = (count + SIM_MAX_CHUNKS - 1) / SIM_MAX_CHUNKS;
  return fitting > SWN_CHAIN_CHUNK_FLOATS ? fitting : SWN_CHAIN_CHUNK_FLOATS;
}

bool swn_simulate(const SwnMachine *m, const SwnAllreduceSetting *a, double bytes, bool per_step,
                  SwnSimResult *res, char *error, size_t error_size) {
  *res = (SwnSimResult){0};
  int p = m->nodes;
  int *group = grab(sizeof(int) * (size_t)p);
  for (int r = 0; r < p; r++) group[r] = r / m->per_supernode;
  int64_t count = (int64_t)(bytes / 4);
  SwnTopology t = {.size = p,
                   .group = group,
                   .ngroups = (p + m->per_supernode - 1) / m->per_supernode,
                   .map = a->map,
                   .chain = a->chain > 0 ? a->chain : 8,
                   .chunk = simulated_chunk(count),
                   .upper = a->upper};
  Sim sim = {.m = m,
             .p = p,
             .s = grab(sizeof(SwnSchedule) * (size_t)p),
             .partner_step = grab(sizeof(int *) * (size_t)p),
             .sender_step = grab(sizeof(int *) * (size_t)p),
             .start = grab(sizeof(double *) * (size_t)p)};
  for (int r = 0; r < p; r++) {
    if (a->collective == SWN_COLLECTIVE_ALLREDUCE)
      swn_schedule_build(a->algorithm, &t, r, count, &sim.s[r]);
    else
      swn_schedule_rooted(a->collective, &t, r, count, &sim.s[r]);
    sim.partner_step[r] = grab(sizeof(int) * (size_t)(sim.s[r].nsteps + 1));
    sim.sender_step[r] = grab(sizeof(int) * (size_t)(sim.s[r].nsteps + 1));
    sim.start[r] = grab(sizeof(double) * (size_t)(sim.s[r].nsteps + 1));
  }
  bool ok = match(&sim, error, error_size);
  int *at = grab(sizeof(int) * (size_t)p); /* the step each rank is in */
  for (bool moved = ok; moved;) {
    moved = false;
    for (int r = 0; r < p; r++)
      while (at[r] < sim.s[r].nsteps && try_step(&sim, r, at[r], at)) at[r]++, moved = true;
  }
  for (int r = 0; ok && r < p; r++) {
    if (at[r] < sim.s[r].nsteps) {
      snprintf(error, error_size, "deadlock: rank %d waits in step %d of %d", r, at[r],
               sim.s[r].nsteps);
      ok = false;
    }
    res->seconds = fmax(res->seconds, sim.start[r][sim.s[r].nsteps]);
  }
  if (ok) count_traffic(&sim, per_step, res);
  for (int r = 0; r < p; r++) {
    swn_schedule_free(&sim.s[r]);
    free(sim.partner_step[r]), free(sim.sender_step[r]), free(sim.start[r]);
  }
  free(sim.s), free(sim.partner_step), free(sim.sender_step), free(sim.start), free(at),
      free(group);
  return ok;
}

void swn_sim_result_free(SwnSimResult *r) {
  free(r->step_bytes), free(r->step_cross);
  *r = (SwnSimResult){0};
}
