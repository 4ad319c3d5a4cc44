/* The network simulator against the closed forms of swCaffe (section 5) and S-Caffe, on the schedules the
 * MPI executor runs: recursive halving/doubling with contiguous and round-robin numbering at
 * p = 1024, q = 256 (time and bytes crossing supernodes), the ring, the pipelined chain, every
 * algorithm deadlock-free at awkward sizes, and the training-scaling prediction. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "comm/sim.h"

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

static SwnMachine taihulight(int p, int q) {
  return (SwnMachine){.nodes = p,
                      .per_supernode = q,
                      .alpha = 1e-6,
                      .beta = 1 / 12e9,
                      .oversubscription = 4,
                      .gamma = 1 / 10e9};
}

static SwnSimResult run_upper(const SwnMachine *m, SwnAllreduceAlgorithm a, SwnRankMap map,
                              int chain, SwnUpperLevel upper, double bytes) {
  SwnSimResult r;
  char error[200] = "";
  SwnAllreduceSetting setting = {.algorithm = a, .map = map, .chain = chain, .upper = upper};
  bool ok = swn_simulate(m, &setting, bytes, true, &r, error, sizeof error);
  if (!ok) fprintf(stderr, "simulate p=%d %s: %s\n", m->nodes, swn_allreduce_names[a], error);
  CHECK(ok);
  return r;
}

static SwnSimResult run(const SwnMachine *m, SwnAllreduceAlgorithm a, SwnRankMap map, int chain,
                        double bytes) {
  return run_upper(m, a, map, chain, SWN_UPPER_AUTO, bytes);
}

static void halving_doubling_closed_forms(void) {
  int p = 1024, q = 256;
  double n = 4.0 * p * 4096; /* 16 MiB: every block the same size */
  SwnMachine m = taihulight(p, q);
  double b1 = m.beta, b2 = m.beta * m.oversubscription, logp = 10;
  SwnSimResult contiguous = run(&m, SWN_ALLREDUCE_TOPO, SWN_MAP_CONTIGUOUS, 0, n);
  SwnSimResult round_robin = run(&m, SWN_ALLREDUCE_TOPO, SWN_MAP_ROUND_ROBIN, 0, n);
  double gamma_term = (p - 1.0) / p * n * m.gamma;
  double t_contiguous =
      2 * logp * m.alpha + 2 * (q - 1.0) * b1 * n / p + 2 * (p - q) * b2 * n / p + gamma_term;
  double t_round_robin = 2 * logp * m.alpha + 2 * (p - (double)p / q) * b1 * n / p +
                         2 * ((double)p / q - 1) * b2 * n / p + gamma_term;
  CHECK(close_to(contiguous.seconds, t_contiguous));
  CHECK(close_to(round_robin.seconds, t_round_robin));
  /* bytes crossing supernodes: coefficient (p - q) against (p/q - 1), per rank and direction */
  CHECK(close_to(contiguous.cross_bytes, 2.0 * (p - q) * n));
  CHECK(close_to(round_robin.cross_bytes, 2.0 * ((double)p / q - 1) * n));
  CHECK(close_to(contiguous.bytes, round_robin.bytes));
  CHECK(close_to(contiguous.bytes, 2.0 * (p - 1) * n));
  CHECK_EQ_INT(contiguous.steps, 20);
  /* round robin: only the last log(p/q) = 2 halving and first 2 doubling steps cross */
  for (int k = 0; k < 20; k++)
    CHECK((round_robin.step_cross[k] > 0) == (k == 8 || k == 9 || k == 10 || k == 11));
  CHECK(contiguous.step_cross[0] > 0 && contiguous.step_cross[19] > 0);
  swn_sim_result_free(&contiguous), swn_sim_result_free(&round_robin);
}

static void ring_closed_form(void) {
  int p = 12;
  double n = 4.0 * p * 1000;
  SwnMachine m = taihulight(p, p);
  SwnSimResult r = run(&m, SWN_ALLREDUCE_RING, SWN_MAP_CONTIGUOUS, 0, n);
  double t = 2 * (p - 1) * m.alpha + 2 * (p - 1.0) / p * n * m.beta + (p - 1.0) / p * n * m.gamma;
  CHECK(close_to(r.seconds, t));
  CHECK(close_to(r.bytes, 2.0 * (p - 1) * n)); /* 2(N-1)K/N per rank */
  CHECK(r.cross_bytes == 0);
  swn_sim_result_free(&r);
}

/* S-Caffe's chain: (n + P - 2) chunk times towards the head, and as many back. */
static void chain_closed_form(void) {
  int P = 5;
  double chunk = 4.0 * SWN_CHAIN_CHUNK_FLOATS, chunks = 7, n = chunks * chunk;
  SwnMachine m = taihulight(P, P);
  SwnSimResult r = run(&m, SWN_ALLREDUCE_HIER, SWN_MAP_CONTIGUOUS, P, n);
  double reduce = (chunks + P - 2) * (m.alpha + (m.beta + m.gamma) * chunk);
  double broadcast = (chunks + P - 2) * (m.alpha + m.beta * chunk);
  CHECK(close_to(r.seconds, reduce + broadcast));
  swn_sim_result_free(&r);
}

/* hier's upper level among G = 4 chain heads, one chain of P = 3 per supernode: the chains'
 * reduce and broadcast around either chain-binomial's log2(G) whole-vector times each way or
 * the chain of chains' (n + G - 2) chunk times each way, every upper-level byte across
 * supernodes. The phases follow each other: every head ends each phase at the same time. */
static void upper_level_closed_forms(void) {
  int G = 4, P = 3;
  double chunk = 4.0 * SWN_CHAIN_CHUNK_FLOATS, chunks = 7, n = chunks * chunk;
  SwnMachine m = taihulight(G * P, P);
  double across = m.beta * m.oversubscription;
  double lower = (chunks + P - 2) * (m.alpha + (m.beta + m.gamma) * chunk) +
                 (chunks + P - 2) * (m.alpha + m.beta * chunk);
  double binomial = 2 * (m.alpha + (across + m.gamma) * n) + 2 * (m.alpha + across * n);
  double chains = (chunks + G - 2) * (m.alpha + (across + m.gamma) * chunk) +
                  (chunks + G - 2) * (m.alpha + across * chunk);
  SwnSimResult b = run_upper(&m, SWN_ALLREDUCE_HIER, SWN_MAP_CONTIGUOUS, P, SWN_UPPER_BINOMIAL, n);
  SwnSimResult c = run_upper(&m, SWN_ALLREDUCE_HIER, SWN_MAP_CONTIGUOUS, P, SWN_UPPER_CHAIN, n);
  CHECK(close_to(b.seconds, lower + binomial));
  CHECK(close_to(c.seconds, lower + chains));
  /* bytes across: the tree sends G - 1 vectors each way, the chain of chains too */
  CHECK(close_to(b.cross_bytes, 2 * (G - 1) * n));
  CHECK(close_to(c.cross_bytes, 2 * (G - 1) * n));
  /* auto: binomial below 64 KiB, ring above */
  SwnSimResult small_auto = run(&m, SWN_ALLREDUCE_HIER, SWN_MAP_CONTIGUOUS, P, 4096);
  SwnSimResult small_tree =
      run_upper(&m, SWN_ALLREDUCE_HIER, SWN_MAP_CONTIGUOUS, P, SWN_UPPER_BINOMIAL, 4096);
  SwnSimResult large_ring =
      run_upper(&m, SWN_ALLREDUCE_HIER, SWN_MAP_CONTIGUOUS, P, SWN_UPPER_RING, n);
  SwnSimResult large_auto = run(&m, SWN_ALLREDUCE_HIER, SWN_MAP_CONTIGUOUS, P, n);
  CHECK(small_auto.seconds == small_tree.seconds && large_auto.seconds == large_ring.seconds);
  CHECK(large_ring.seconds != b.seconds && large_ring.seconds != c.seconds);
  swn_sim_result_free(&b), swn_sim_result_free(&c), swn_sim_result_free(&small_auto);
  swn_sim_result_free(&small_tree), swn_sim_result_free(&large_ring);
  swn_sim_result_free(&large_auto);
}

static SwnSimResult run_rooted(const SwnMachine *m, SwnCollective kind, int chain,
                               SwnUpperLevel upper, double bytes) {
  SwnSimResult r;
  char error[200] = "";
  SwnAllreduceSetting setting = {
      .algorithm = SWN_ALLREDUCE_HIER, .chain = chain, .upper = upper, .collective = kind};
  bool ok = swn_simulate(m, &setting, bytes, false, &r, error, sizeof error);
  if (!ok) fprintf(stderr, "simulate p=%d rooted %d: %s\n", m->nodes, (int)kind, error);
  CHECK(ok);
  return r;
}

/* S-Caffe's rooted collectives, G = 4 chains of P = 3, one per supernode: a reduce pipelines
 * each chain to its head in (n + P - 2) chunk times, then the heads to node 0 in log2(G)
 * whole-vector times (binomial) or (n + G - 2) chunk times (chain of chains); a broadcast runs
 * the same backwards. Every node but the root receives the vector once, and G - 1 of those cross
 * supernodes. A ring among the heads means the chain; auto is binomial below 64 KiB. */
static void rooted_closed_forms(void) {
  int G = 4, P = 3;
  double chunk = 4.0 * SWN_CHAIN_CHUNK_FLOATS, chunks = 7, n = chunks * chunk;
  SwnMachine m = taihulight(G * P, P);
  double across = m.beta * m.oversubscription;
  double chain_reduce = (chunks + P - 2) * (m.alpha + (m.beta + m.gamma) * chunk);
  double chain_broadcast = (chunks + P - 2) * (m.alpha + m.beta * chunk);
  double tree_reduce = 2 * (m.alpha + (across + m.gamma) * n);
  double tree_broadcast = 2 * (m.alpha + across * n);
  double heads_reduce = (chunks + G - 2) * (m.alpha + (across + m.gamma) * chunk);
  double heads_broadcast = (chunks + G - 2) * (m.alpha + across * chunk);
  struct {
    SwnCollective kind;
    SwnUpperLevel upper;
    double seconds;
  } cases[] = {
      {SWN_COLLECTIVE_REDUCE, SWN_UPPER_BINOMIAL, chain_reduce + tree_reduce},
      {SWN_COLLECTIVE_REDUCE, SWN_UPPER_CHAIN, chain_reduce + heads_reduce},
      {SWN_COLLECTIVE_REDUCE, SWN_UPPER_RING, chain_reduce + heads_reduce},
      {SWN_COLLECTIVE_REDUCE, SWN_UPPER_AUTO, chain_reduce + heads_reduce},
      {SWN_COLLECTIVE_BROADCAST, SWN_UPPER_BINOMIAL, tree_broadcast + chain_broadcast},
      {SWN_COLLECTIVE_BROADCAST, SWN_UPPER_CHAIN, heads_broadcast + chain_broadcast},
      {SWN_COLLECTIVE_BROADCAST, SWN_UPPER_AUTO, heads_broadcast + chain_broadcast},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    SwnSimResult r = run_rooted(&m, cases[i].kind, P, cases[i].upper, n);
    CHECK(close_to(r.seconds, cases[i].seconds));
    CHECK(close_to(r.bytes, (G * P - 1) * n));
    CHECK(close_to(r.cross_bytes, (G - 1) * n));
    swn_sim_result_free(&r);
  }
  SwnSimResult small = run_rooted(&m, SWN_COLLECTIVE_REDUCE, P, SWN_UPPER_AUTO, 4096);
  SwnSimResult tree = run_rooted(&m, SWN_COLLECTIVE_REDUCE, P, SWN_UPPER_BINOMIAL, 4096);
  CHECK(small.seconds == tree.seconds);
  swn_sim_result_free(&small), swn_sim_result_free(&tree);
}

static void every_algorithm_completes(void) {
  static const int sizes[] = {2, 3, 5, 6, 7, 12, 33, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (int a = SWN_ALLREDUCE_TOPO; a <= SWN_ALLREDUCE_HIER; a++)
      for (int q = 1; q <= 4; q *= 2)
        for (int u = 0; u < (a == SWN_ALLREDUCE_HIER ? SWN_UPPER_COUNT : 1); u++) {
          SwnMachine m = taihulight(sizes[i], q);
          SwnSimResult r = run_upper(&m, (SwnAllreduceAlgorithm)a, SWN_MAP_ROUND_ROBIN, 3,
                                     (SwnUpperLevel)u, 4.0 * 100003);
          CHECK(r.seconds > 0 && r.bytes > 0);
          swn_sim_result_free(&r);
          for (int k = SWN_COLLECTIVE_REDUCE;
               a == SWN_ALLREDUCE_HIER && k <= SWN_COLLECTIVE_BROADCAST; k++) {
            r = run_rooted(&m, (SwnCollective)k, 3, (SwnUpperLevel)u, 4.0 * 100003);
            CHECK(r.seconds > 0 && close_to(r.bytes, (sizes[i] - 1) * 4.0 * 100003));
            swn_sim_result_free(&r);
          }
        }
}

/* The reduce-to-root schedules on profile p (buckets 4e6 ready at 0.01, 1e6 at 0.08; forward
 * 0.05, backward 0.1, update 0.01), from the rooted collectives' simulated times: forward's share
 * of bucket 1 (the first layers) is (0.1 - 0.01) / 0.1 of it, of bucket 0 the rest. */
static void rooted_prediction(const SwnIterationProfile *p, const SwnMachine *m) {
  SwnAllreduceSetting hier = {.algorithm = SWN_ALLREDUCE_HIER, .chain = 8};
  double reduce[2], broadcast[2], reduce_all, broadcast_all;
  for (int b = 0; b < 2; b++) {
    SwnSimResult r = run_rooted(m, SWN_COLLECTIVE_REDUCE, 8, SWN_UPPER_AUTO, p->bucket_bytes[b]);
    reduce[b] = r.seconds, swn_sim_result_free(&r);
    r = run_rooted(m, SWN_COLLECTIVE_BROADCAST, 8, SWN_UPPER_AUTO, p->bucket_bytes[b]);
    broadcast[b] = r.seconds, swn_sim_result_free(&r);
  }
  SwnSimResult r = run_rooted(m, SWN_COLLECTIVE_REDUCE, 8, SWN_UPPER_AUTO, 5e6);
  reduce_all = r.seconds, swn_sim_result_free(&r);
  r = run_rooted(m, SWN_COLLECTIVE_BROADCAST, 8, SWN_UPPER_AUTO, 5e6);
  broadcast_all = r.seconds, swn_sim_result_free(&r);
  const SwnCompression dense = {.density = 1};
  SwnScaling s;
  char error[200];
  double compute = 0.05 + 0.1 + 0.01;
  hier.sync = SWN_SYNC_SC_B;
  CHECK(swn_predict(p, m, &hier, &dense, &s, error, sizeof error));
  CHECK(close_to(s.iteration, broadcast_all + compute + reduce_all));
  CHECK(close_to(s.communication, broadcast_all + reduce_all) && s.jobs == 1);
  double staged = broadcast[1] + broadcast[0];
  double forward = fmax(broadcast[1] + 0.045, staged) + 0.005, backward_end = forward + 0.1;
  hier.sync = SWN_SYNC_SC_OB;
  CHECK(swn_predict(p, m, &hier, &dense, &s, error, sizeof error));
  CHECK(close_to(s.iteration, fmax(staged, backward_end) + reduce_all + 0.01));
  hier.sync = SWN_SYNC_SC_OBR;
  CHECK(swn_predict(p, m, &hier, &dense, &s, error, sizeof error));
  double port = fmax(staged, forward + 0.01) + reduce[0];
  port = fmax(port, forward + 0.08) + reduce[1];
  CHECK(close_to(s.iteration, fmax(backward_end, port) + 0.01) && s.jobs == 2);
  CHECK(close_to(s.speedup, m->nodes * compute / s.iteration));
}

static void prediction(void) {
  double bytes[] = {4e6, 1e6}, ready[] = {0.01, 0.08};
  SwnIterationProfile p = {.network = "toy",
                           .batch = 32,
                           .forward = 0.05,
                           .backward = 0.1,
                           .update = 0.01,
                           .nbuckets = 2,
                           .bucket_bytes = bytes,
                           .bucket_ready = ready};
  FILE *f = tmpfile();
  swn_profile_write(&p, f);
  rewind(f);
  char path[64] = "/tmp/swnc-test-profile-XXXXXX";
  int fd = mkstemp(path);
  FILE *out = fdopen(fd, "w");
  for (int c; (c = fgetc(f)) != EOF;) fputc(c, out);
  fclose(out), fclose(f);
  SwnIterationProfile q;
  char error[200];
  CHECK(swn_profile_read(path, &q, error, sizeof error));
  CHECK(q.nbuckets == 2 && q.bucket_bytes[1] == 1e6 && q.bucket_ready[0] == 0.01 && q.batch == 32);
  remove(path);
  swn_profile_release(&q);
  CHECK(!swn_profile_read("/nonexistent.profile", &q, error, sizeof error));

  SwnScaling s;
  const SwnCompression dense = {.density = 1};
  const SwnAllreduceSetting topo = {.algorithm = SWN_ALLREDUCE_TOPO, .map = SWN_MAP_ROUND_ROBIN};
  SwnMachine one = taihulight(1, 1), free_network = {.nodes = 64, .per_supernode = 64};
  CHECK(swn_predict(&p, &one, &topo, &dense, &s, error, sizeof error) && s.speedup == 1);
  CHECK(swn_predict(&p, &free_network, &topo, &dense, &s, error, sizeof error));
  CHECK(close_to(s.speedup, 64) && s.exposed == 0);
  /* a slow network: bucket 0 from 0.01 for t0, bucket 1 from max(0.08, 0.01 + t0) for t1 */
  SwnMachine slow = {.nodes = 4, .per_supernode = 4, .alpha = 0, .beta = 1e-7};
  double t0 = 2 * 3.0 / 4 * 4e6 * 1e-7, t1 = 2 * 3.0 / 4 * 1e6 * 1e-7;
  CHECK(swn_predict(&p, &slow, &topo, &dense, &s, error, sizeof error));
  double end = fmax(0.08, 0.01 + t0) + t1;
  CHECK(end > 0.1); /* longer than backward: exposed */
  CHECK(close_to(s.iteration, 0.05 + end + 0.01));
  CHECK(close_to(s.exposed, end - 0.1));
  CHECK(close_to(s.speedup, 4 * 0.16 / s.iteration));
  /* fp16 on the same network: half the bytes (t / 2) after one float's allreduce (one float
   * cannot be halved: it goes whole through each of topo's 4 steps on 4 ranks) */
  const SwnCompression half = {.half = true, .density = 1};
  CHECK(swn_predict(&p, &slow, &topo, &half, &s, error, sizeof error));
  double max_abs = 4 * 4 * 1e-7;
  CHECK(close_to(s.communication, (t0 + t1) / 2 + 2 * max_abs));
  /* 10% of chunks of 500 floats: bucket 0 (4e6 bytes): 2000 chunks, 200 sent; bucket 1: 500,
   * 50 sent; each after its norms (4 bytes a chunk) and two passes at the summing rate */
  const SwnCompression sparse = {.density = 0.1, .chunk = 500};
  slow.gamma = 1e-9;
  CHECK(swn_predict(&p, &slow, &topo, &sparse, &s, error, sizeof error));
  double per_byte = 2 * 3.0 / 4 * 1e-7; /* topo on 4 ranks, alpha 0: moved bytes x beta */
  double sums = 3.0 / 4 * 1e-9;         /* each rank sums 3/4 of the vector */
  double want =
      (2000 * 4 + 200 * 2000 + 500 * 4 + 50 * 2000) * (per_byte + sums) + 2 * (4e6 + 1e6) * 1e-9;
  CHECK(close_to(s.communication, want));
  swn_profile_release(&q);
  rooted_prediction(&p, &slow);
}

int main(void) {
  halving_doubling_closed_forms();
  ring_closed_form();
  chain_closed_form();
  upper_level_closed_forms();
  rooted_closed_forms();
  every_algorithm_completes();
  prediction();
  return check_report();
}
