/* The allreduce library on real MPI ranks (run under mpirun with several process counts):
 * every algorithm, group size and chain length sums exactly (small-integer floats sum without
 * rounding in any order), in place, touching nothing outside the span, in a private buffer and
 * in the comm's shared pool (which the shared-memory algorithm sums in place); the rooted
 * collectives reduce to rank 0 and broadcast from it exactly. */
#include <math.h>
#include <stdlib.h>

#include <string.h>

#include "check.h"
#include "comm/comm.h"
#include "comm/half.h"
#include "comm/sparse.h"

static float value(int rank, int64_t i) { return (float)((rank + 1) * (int)(i % 7 + 1)); }

enum { PAD = 3, MAX_COUNT = 300001 };

static void check_sum(SwnComm *c, SwnAllreduceAlgorithm a, int64_t count, float *pool) {
  int64_t pad = PAD;
  float *buf = pool ? pool : malloc(sizeof(float) * (size_t)(count + 2 * pad));
  for (int64_t i = 0; i < count + 2 * pad; i++) buf[i] = value(c->rank, i);
  swn_allreduce(c, buf + pad, count, a);
  float ranks_sum = (float)(c->size * (c->size + 1) / 2);
  int wrong = 0;
  for (int64_t i = 0; i < count + 2 * pad; i++) {
    bool inside = i >= pad && i < pad + count;
    float want = inside ? ranks_sum * (float)(i % 7 + 1) : value(c->rank, i);
    if (buf[i] != want && wrong++ < 3)
      fprintf(stderr, "rank %d: %s count %lld groups %d chain %d%s: element %lld is %g, not %g\n",
              c->rank, swn_allreduce_names[a], (long long)count, c->topo.ngroups, c->topo.chain,
              pool ? " in the pool" : "", (long long)(i - pad), buf[i], want);
  }
  CHECK(wrong == 0);
  if (!pool) free(buf);
}

/* A rooted collective (S-Caffe's reduce to rank 0, broadcast from it) of `count` floats: the
 * reduce leaves the exact sum on rank 0, the broadcast rank 0's values everywhere; nothing
 * outside the span moves. */
static void check_rooted(SwnComm *c, SwnCollective kind, int64_t count) {
  int64_t pad = PAD;
  float *buf = malloc(sizeof(float) * (size_t)(count + 2 * pad));
  for (int64_t i = 0; i < count + 2 * pad; i++) buf[i] = value(c->rank, i);
  swn_rooted(c, kind, buf + pad, count);
  float ranks_sum = (float)(c->size * (c->size + 1) / 2);
  bool reduce = kind == SWN_COLLECTIVE_REDUCE;
  int wrong = 0;
  for (int64_t i = 0; i < count + 2 * pad; i++) {
    bool inside = i >= pad && i < pad + count;
    if (reduce && inside && c->rank != 0) continue; /* partial sums */
    float want = !inside  ? value(c->rank, i)
                 : reduce ? ranks_sum * (float)(i % 7 + 1)
                          : value(0, i);
    if (buf[i] != want && wrong++ < 3)
      fprintf(stderr,
              "rank %d: %s of %lld floats, %s, groups %d chain %d upper %s: element %lld is %g, "
              "not %g\n",
              c->rank, reduce ? "reduce" : "broadcast", (long long)count,
              swn_allreduce_names[c->algorithm], c->topo.ngroups, c->topo.chain,
              swn_upper_names[c->topo.upper], (long long)(i - pad), buf[i], want);
  }
  CHECK(wrong == 0);
  free(buf);
}

/* The conversions against the compiler's own half type (IEEE binary16, round to nearest even):
 * every half converts to the float it denotes and back to itself, and floats all over the range
 * (normal, subnormal, halfway cases, overflow to infinity) round as a cast rounds. */
static void check_half_conversions(void) {
  int wrong = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    _Float16 x;
    memcpy(&x, &(uint16_t){(uint16_t)h}, 2);
    float f = swn_float_of_half((uint16_t)h);
    bool nan = f != f;
    if ((!nan && (f != (float)x || swn_half_of(f) != h)) || (nan && (float)x == (float)x)) wrong++;
  }
  uint64_t state = 1;
  for (int i = 0; i < 2000000; i++) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    uint32_t bits = (uint32_t)(state >> 32);
    if (i % 2) bits = (bits & 0x80000000u) | (0x33000000u + bits % 0x14800000u); /* 2^-25..2^17 */
    float f;
    memcpy(&f, &bits, 4);
    if (f != f) continue;
    _Float16 want = (_Float16)f;
    uint16_t w;
    memcpy(&w, &want, 2);
    if (swn_half_of(f) != w && wrong++ < 3)
      fprintf(stderr, "half of %a is 0x%04x, not 0x%04x\n", (double)f, swn_half_of(f), w);
  }
  CHECK(wrong == 0);
}

/* Sparse exchange, against a mirror of its definition kept here: the chunks sent are the same
 * on every rank, `keep` of them, none of smaller norm over the ranks than one held back; their
 * sum over the ranks is what comes back and their residual restarts at 0 (the velocity goes on); every
 * other gradient stays in the residual, exactly (binary fractions sum without rounding). */
enum { SPARSE_WORDS = 10007, SPARSE_CHUNK = 100, SPARSE_STEPS = 6 };

static float sparse_gradient(int rank, int step, int64_t i) {
  return (float)(((i / SPARSE_CHUNK) * 13 + step * 7 + rank * 3 + i % 3) % 11) - 4.0f;
}

static void check_sparse_span(SwnComm *c, SwnSparse *s, float *u, float *r, int step,
                              int64_t offset, int64_t n, float density) {
  float *g = malloc(sizeof(float) * (size_t)n), *want = malloc(sizeof(float) * (size_t)n);
  int64_t chunks = (n + SPARSE_CHUNK - 1) / SPARSE_CHUNK;
  double *norms = calloc((size_t)chunks, sizeof(double));
  for (int64_t i = 0; i < n; i++) {
    g[i] = sparse_gradient(c->rank, step, offset + i);
    u[offset + i] = s->momentum * u[offset + i] + g[i];
    r[offset + i] += u[offset + i];
    norms[i / SPARSE_CHUNK] += fabsf(r[offset + i]);
    want[i] = r[offset + i];
  }
  MPI_Allreduce(MPI_IN_PLACE, norms, (int)chunks, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, want, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  swn_sparse_allreduce(s, c, g, offset, n, density);
  int64_t keep = (int64_t)ceil(density * (double)chunks), sent = 0;
  keep = keep < 1 ? 1 : keep;
  int wrong = 0;
  double least_sent = INFINITY, most_kept = 0;
  for (int64_t k = 0; k < chunks; k++) {
    bool chosen = false;
    for (int64_t j = 0; j < keep; j++) chosen |= s->chosen[j] == k;
    sent += chosen;
    if (chosen && norms[k] < least_sent) least_sent = norms[k];
    if (!chosen && norms[k] > most_kept) most_kept = norms[k];
    for (int64_t i = k * SPARSE_CHUNK; i < n && i < (k + 1) * SPARSE_CHUNK; i++) {
      float *ur = s->velocity ? s->velocity : NULL;
      bool ok = chosen ? g[i] == want[i] && s->residual[offset + i] == 0 &&
                             (!ur || ur[offset + i] == u[offset + i])
                       : g[i] == 0 && s->residual[offset + i] == r[offset + i] &&
                             (!ur || ur[offset + i] == u[offset + i]);
      if (!ok && wrong++ < 3)
        fprintf(stderr, "rank %d: sparse step %d, element %lld (chunk %lld, %s): %g, residual %g\n",
                c->rank, step, (long long)(offset + i), (long long)k, chosen ? "sent" : "kept",
                g[i], s->residual[offset + i]);
      if (chosen) r[offset + i] = 0;
    }
  }
  CHECK(wrong == 0);
  CHECK(sent == keep);
  CHECK(least_sent >= most_kept);
  int64_t first = s->chosen[0], lowest = first, highest = first; /* the same chunks everywhere */
  MPI_Allreduce(&first, &lowest, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&first, &highest, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lowest == highest);
  free(g), free(want), free(norms);
}

static void check_sparse(float momentum, float density) {
  SwnComm c;
  swn_comm_open(&c, MPI_COMM_WORLD, SWN_ALLREDUCE_AUTO, 0, 0, 0);
  SwnSparse s;
  swn_sparse_open(&s, SPARSE_WORDS, SPARSE_CHUNK, momentum, density, 0);
  float *u = calloc(SPARSE_WORDS, sizeof(float)), *r = calloc(SPARSE_WORDS, sizeof(float));
  for (int step = 0; step < SPARSE_STEPS; step++) { /* two buckets */
    check_sparse_span(&c, &s, u, r, step, 0, 6000, density);
    check_sparse_span(&c, &s, u, r, step, 6000, SPARSE_WORDS - 6000, density);
  }
  free(u), free(r);
  swn_sparse_close(&s);
  swn_comm_close(&c);
}

/* The start-up probe: every rank holds the same table (the slowest rank's times), every
 * candidate measured at every size, and auto's choices from it still sum exactly. */
static void check_probe(void) {
  SwnComm c;
  swn_comm_open(&c, MPI_COMM_WORLD, SWN_ALLREDUCE_AUTO, 0, 0, MAX_COUNT + 2 * PAD);
  float *buf = calloc(MAX_COUNT, sizeof(float));
  SwnCostTable t, lowest;
  swn_comm_probe(&c, buf, MAX_COUNT, &t);
  free(buf);
  CHECK(t.ranks == c.size && t.nsizes > 1 && t.bytes[t.nsizes - 1] == 4.0 * MAX_COUNT);
  for (int a = SWN_ALLREDUCE_TOPO; a < SWN_ALLREDUCE_COUNT; a++)
    for (int i = 0; i < t.nsizes; i++)
      CHECK(t.has[a] == (a != SWN_ALLREDUCE_SHM || c.shared != NULL) &&
            (!t.has[a] || (t.seconds[a][i] > 0 && t.seconds[a][i] < 1)));
  MPI_Allreduce(t.seconds, lowest.seconds, (int)(sizeof t.seconds / sizeof(double)), MPI_DOUBLE,
                MPI_MIN, MPI_COMM_WORLD);
  CHECK(!memcmp(t.seconds, lowest.seconds, sizeof t.seconds));
  swn_comm_set_costs(&c, &t);
  static const int64_t counts[] = {1, 1000, 65537, MAX_COUNT};
  for (size_t n = 0; n < sizeof counts / sizeof *counts; n++) {
    check_sum(&c, SWN_ALLREDUCE_AUTO, counts[n], NULL);
    if (swn_shared_pool(&c)) check_sum(&c, SWN_ALLREDUCE_AUTO, counts[n], swn_shared_pool(&c));
  }
  swn_comm_close(&c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rank0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank0);
  if (rank0 == 0) check_half_conversions();
  if (size > 1) check_probe();
  check_sparse(0, 0.1f);
  check_sparse(0.5f, 0.25f);
  check_sparse(0.5f, 1);
  if (rank0 == 0) CHECK(swn_sparse_density(0.001f, 4, 0) > 0.25f * 0.999f);
  if (rank0 == 0)
    CHECK(fabsf(swn_sparse_density(0.001f, 4, 3) - 0.003981f) < 1e-6f); /* 0.001^(4/5) */
  if (rank0 == 0) CHECK(swn_sparse_density(0.001f, 4, 4) == 0.001f);
  static const int64_t counts[] = {1, 2, 3, 7, 100, 4099, 131077, 300001};
  static const int groups[] = {0, 1, 2, 3};
  static const int chains[] = {1, 2, 8};
  for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
    for (size_t k = 0; k < sizeof chains / sizeof *chains; k++) {
      SwnComm c;
      swn_comm_open(&c, MPI_COMM_WORLD, SWN_ALLREDUCE_AUTO, groups[g], chains[k],
                    MAX_COUNT + 2 * PAD);
      c.topo.chunk = 1000; /* many pipelined chunks in the chains */
      if (k == 1)
        swn_comm_set_segments(&c, 999, 2); /* many segments per step, summed as they land */
      for (int a = SWN_ALLREDUCE_AUTO; a < SWN_ALLREDUCE_COUNT; a++)
        for (int u = 0; u < (a == SWN_ALLREDUCE_HIER ? SWN_UPPER_COUNT : 1); u++) {
          swn_comm_set_hier_upper(&c, (SwnUpperLevel)u);
          for (size_t n = 0; n < sizeof counts / sizeof *counts; n++) {
            check_sum(&c, (SwnAllreduceAlgorithm)a, counts[n], NULL);
            if (swn_shared_pool(&c))
              check_sum(&c, (SwnAllreduceAlgorithm)a, counts[n], swn_shared_pool(&c));
          }
        }
      /* rooted: hier's design under every upper level, and MPI_Reduce / MPI_Bcast */
      for (int u = 0; u <= SWN_UPPER_COUNT; u++) {
        c.algorithm = u < SWN_UPPER_COUNT ? SWN_ALLREDUCE_HIER : SWN_ALLREDUCE_MPI;
        swn_comm_set_hier_upper(&c, (SwnUpperLevel)(u % SWN_UPPER_COUNT));
        for (size_t n = 0; n < sizeof counts / sizeof *counts; n++) {
          check_rooted(&c, SWN_COLLECTIVE_REDUCE, counts[n]);
          check_rooted(&c, SWN_COLLECTIVE_BROADCAST, counts[n]);
          check_sum(&c, SWN_ALLREDUCE_HIER, counts[n], NULL); /* schedules cached by kind */
        }
      }
      swn_comm_close(&c);
    }
  int failed = checks_failed;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  if (rank == 0) {
    printf("%d ranks: ", size);
    checks_failed = failed;
    status = check_report();
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
