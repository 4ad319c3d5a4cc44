/* The auto rule's cost tables (runtime/comm/cost.h) on tables whose alpha and beta are known:
 * interpolation and extrapolation, the choice and its crossover, the threshold at n_1/2, bucket
 * merging, the text form and its errors; and the simulated table swnc-sim chooses from. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm/sim.h"

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

/* mpi: 1 us + 1 ns/B; shm: 10 us + 0.1 ns/B, at 1 KiB .. 1 MiB: they cross at 10000 bytes. */
static SwnCostTable known(void) {
  SwnCostTable t = {.ranks = 4, .groups = 1};
  CHECK_EQ_INT(swn_cost_ladder(&t, 1 << 20), 6); /* 1, 4, 16, 64, 256 KiB, 1 MiB */
  t.has[SWN_ALLREDUCE_MPI] = t.has[SWN_ALLREDUCE_SHM] = true;
  for (int i = 0; i < t.nsizes; i++) {
    t.seconds[SWN_ALLREDUCE_MPI][i] = 1e-6 + 1e-9 * t.bytes[i];
    t.seconds[SWN_ALLREDUCE_SHM][i] = 1e-5 + 1e-10 * t.bytes[i];
  }
  return t;
}

static void ladder(void) {
  SwnCostTable t;
  CHECK_EQ_INT(swn_cost_ladder(&t, 100), 1);
  CHECK(t.bytes[0] == 1024);
  CHECK_EQ_INT(swn_cost_ladder(&t, 1724320), 7);
  CHECK(t.bytes[5] == 1 << 20 && t.bytes[6] == 1724320);
}

static void rule(void) {
  SwnCostTable t = known();
  CHECK(close_to(swn_cost_time(&t, SWN_ALLREDUCE_MPI, 3000), 1e-6 + 3e-6));            /* between */
  CHECK(close_to(swn_cost_time(&t, SWN_ALLREDUCE_SHM, 1 << 24), 1e-5 + 1.6777216e-3)); /* beyond */
  CHECK(swn_cost_time(&t, SWN_ALLREDUCE_MPI, 10) == t.seconds[SWN_ALLREDUCE_MPI][0]);  /* below */
  CHECK(swn_cost_choice(&t, 9000, false) == SWN_ALLREDUCE_MPI);
  CHECK(swn_cost_choice(&t, 11000, false) == SWN_ALLREDUCE_SHM);
  CHECK(swn_cost_choice(&t, 1 << 20, true) == SWN_ALLREDUCE_MPI); /* fp16: messages only */
  /* n_1/2 of shm: alpha / beta = 1e5 bytes, the first power of two above is 128 KiB */
  CHECK(swn_cost_threshold(&t, false) == 131072);
  /* mpi alone: alpha / beta = 1000 bytes: the first size already reaches half its bandwidth */
  CHECK(swn_cost_threshold(&t, true) == 1024);
}

static void merging(void) {
  double bytes[] = {10, 20, 100, 5, 5};
  int job_of[5];
  CHECK_EQ_INT(swn_merge_buckets(bytes, 5, 30, job_of), 3);
  CHECK(job_of[0] == 0 && job_of[1] == 0 && job_of[2] == 1 && job_of[3] == 2 && job_of[4] == 2);
  CHECK_EQ_INT(swn_merge_buckets(bytes, 5, 0, job_of), 5);
  CHECK_EQ_INT(swn_merge_buckets(bytes, 5, 1e9, job_of), 1);
}

static bool read_text(const char *text, SwnCostTable *t, char *error, size_t size) {
  char path[64] = "/tmp/swnc-test-costs-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  bool ok = swn_cost_read(path, t, error, size);
  remove(path);
  return ok;
}

static void text_form(void) {
  SwnCostTable t = known(), back;
  char path[64] = "/tmp/swnc-test-costs-XXXXXX", error[256];
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  swn_cost_write(&t, f);
  fclose(f);
  CHECK(swn_cost_read(path, &back, error, sizeof error));
  remove(path);
  CHECK(back.ranks == 4 && back.groups == 1 && back.nsizes == 6 && back.has[SWN_ALLREDUCE_SHM] &&
        !back.has[SWN_ALLREDUCE_TOPO]);
  CHECK(fabs(back.seconds[SWN_ALLREDUCE_MPI][5] / t.seconds[SWN_ALLREDUCE_MPI][5] - 1) < 1e-5);
  static const struct {
    const char *text, *error;
  } bad[] = {
      {"swnc-profile 1\n", ":1: not a line of an allreduce cost table"},
      {"swnc-allreduce-costs 1\nranks 2\ngroups 1\nsizes 8 4\n", ":4: not a line"},
      {"swnc-allreduce-costs 1\nranks 2\ngroups 1\nsizes 4 8\nstar 1 2\n", ":5: not a line"},
      {"swnc-allreduce-costs 1\nranks 2\ngroups 1\nsizes 4 8\nmpi 1\n", ":5: not a line"},
      {"swnc-allreduce-costs 1\nranks 2\ngroups 1\nsizes 4 8\nmpi 1 -2\n", ":5: not a line"},
      {"swnc-allreduce-costs 1\nranks 2\ngroups 1\nsizes 4 8\n", "incomplete allreduce cost table"},
      {"swnc-allreduce-costs 1\ngroups 1\nsizes 4 8\nmpi 1 2\n", "incomplete allreduce cost table"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    bool ok = read_text(bad[i].text, &back, error, sizeof error);
    CHECK(!ok && strstr(error, bad[i].error));
    if (ok || !strstr(error, bad[i].error)) fprintf(stderr, "case %zu: %s\n", i, error);
  }
  CHECK(!swn_cost_read("/nonexistent.costs", &back, error, sizeof error) &&
        strstr(error, "cannot open"));
}

/* swnc-sim's table: each entry is the simulated time, and auto's prediction merges buckets to
 * the table's threshold and sends each job by the algorithm the table picks. */
static void simulated(void) {
  SwnMachine m = {.nodes = 8,
                  .per_supernode = 4,
                  .alpha = 1e-5,
                  .beta = 1e-9,
                  .oversubscription = 4,
                  .gamma = 1e-10};
  SwnAllreduceSetting a = {.algorithm = SWN_ALLREDUCE_AUTO, .map = SWN_MAP_ROUND_ROBIN, .chain = 2};
  SwnCostTable t;
  char error[256];
  CHECK(swn_cost_simulate(&m, &a, 1 << 22, &t, error, sizeof error));
  SwnAllreduceSetting ring = a;
  ring.algorithm = SWN_ALLREDUCE_RING;
  SwnSimResult r;
  CHECK(swn_simulate(&m, &ring, t.bytes[3], false, &r, error, sizeof error));
  CHECK(r.seconds == t.seconds[SWN_ALLREDUCE_RING][3] && !t.has[SWN_ALLREDUCE_MPI]);
  swn_sim_result_free(&r);
  double bytes[] = {4096, 4096, 4096, 1 << 22}, ready[] = {0, 0.001, 0.002, 0.003};
  SwnIterationProfile p = {
      .batch = 1, .backward = 0.01, .nbuckets = 4, .bucket_bytes = bytes, .bucket_ready = ready};
  SwnScaling s;
  const SwnCompression dense = {.density = 1};
  CHECK(swn_predict(&p, &m, &a, &dense, &s, error, sizeof error));
  double threshold = swn_cost_threshold(&t, true);
  CHECK(s.threshold == threshold && threshold > 3 * 4096); /* alpha 10 us: small ones merge */
  int job_of[4];
  CHECK_EQ_INT(s.jobs, swn_merge_buckets(bytes, 4, threshold, job_of));
  CHECK(s.largest == swn_cost_choice(&t, 1 << 22, true));
}

int main(void) {
  ladder();
  rule();
  merging();
  text_form();
  simulated();
  return check_report();
}
