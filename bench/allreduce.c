/* OSU-style allreduce benchmark: every swnc algorithm against MPI_Allreduce in the same run.
 * For each size, the algorithms run in alternation (3 rounds, best round's average kept, for
 * MPI_Allreduce the same way), so machine noise hits them alike. Columns: the average latency
 * (the slowest rank's), the bus bandwidth 2 (p - 1) / p x bytes / time (what each rank's link
 * carries in a bandwidth-optimal allreduce), and the ratio of bus bandwidths to MPI_Allreduce's.
 *   mpirun -np P bench/allreduce [--min-size B] [--max-size B] [--group-size N] [--chain N]
 *                                [--segment FLOATS] [--window N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"

enum { ROUNDS = 3 };
static const SwnAllreduceAlgorithm algorithms[] = {SWN_ALLREDUCE_MPI, SWN_ALLREDUCE_TOPO, SWN_ALLREDUCE_RING,
                                                   SWN_ALLREDUCE_HIER};
enum { NALG = sizeof algorithms / sizeof *algorithms };

static int iterations_for(int64_t bytes) {
  int64_t n = ((int64_t)1 << 28) / (bytes < 4096 ? 4096 : bytes);
  return (int)(n < 5 ? 5 : n > 1000 ? 1000 : n);
}

/* The slowest rank's average seconds per call. */
static double time_calls(SwnComm *c, SwnAllreduceAlgorithm a, float *buf, int64_t count, int iterations) {
  MPI_Barrier(c->comm);
  double start = MPI_Wtime();
  for (int i = 0; i < iterations; i++) swn_allreduce(c, buf, count, a);
  double t = (MPI_Wtime() - start) / iterations;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  return t;
}

static int64_t option(int argc, char **argv, const char *name, int64_t fallback) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], name)) return atoll(argv[i + 1]);
  return fallback;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int64_t min_bytes = option(argc, argv, "--min-size", 4), max_bytes = option(argc, argv, "--max-size", 1 << 28);
  SwnComm c;
  swn_comm_open(&c, MPI_COMM_WORLD, SWN_ALLREDUCE_AUTO, (int)option(argc, argv, "--group-size", 0),
                (int)option(argc, argv, "--chain", 0));
  swn_comm_set_segments(&c, option(argc, argv, "--segment", 0), (int)option(argc, argv, "--window", 0));
  float *buf = calloc((size_t)(max_bytes / 4 + 1), sizeof(float)); /* zeros: no overflow, no denormals */
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(version, &len);
  version[strcspn(version, ",\n")] = 0;
  if (c.rank == 0) {
    printf("# swnc allreduce benchmark: %d ranks in %d group(s), chains of %d, segments of %lld floats (%d ahead); "
           "baseline MPI_Allreduce (%s)\n", c.size, c.topo.ngroups, c.topo.chain, (long long)c.segment, c.window, version);
    printf("# %-10s", "Size");
    for (int a = 0; a < NALG; a++) printf(" %9s(us)", swn_allreduce_names[algorithms[a]]);
    for (int a = 0; a < NALG; a++) printf(" %6s(GB/s)", swn_allreduce_names[algorithms[a]]);
    for (int a = 1; a < NALG; a++) printf(" %6s/mpi", swn_allreduce_names[algorithms[a]]);
    printf("\n");
  }
  for (int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    int64_t count = bytes / 4 > 0 ? bytes / 4 : 1;
    int iterations = iterations_for(bytes);
    double best[NALG];
    for (int a = 0; a < NALG; a++) best[a] = 1e30;
    for (int a = 0; a < NALG; a++) time_calls(&c, algorithms[a], buf, count, 1); /* warm-up */
    for (int r = 0; r < ROUNDS; r++)
      for (int a = 0; a < NALG; a++) {
        double t = time_calls(&c, algorithms[a], buf, count, iterations);
        if (t < best[a]) best[a] = t;
      }
    if (c.rank != 0) continue;
    double factor = 2.0 * (c.size - 1) / c.size * (double)count * 4;
    printf("%-12lld", (long long)count * 4);
    for (int a = 0; a < NALG; a++) printf(" %13.2f", best[a] * 1e6);
    for (int a = 0; a < NALG; a++) printf(" %12.3f", factor / best[a] / 1e9);
    for (int a = 1; a < NALG; a++) printf(" %10.2f", best[0] / best[a]);
    printf("\n");
    fflush(stdout);
  }
  free(buf);
  swn_comm_close(&c);
  MPI_Finalize();
  return 0;
}
