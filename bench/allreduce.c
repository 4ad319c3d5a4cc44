/* OSU-style allreduce benchmark: every swnc algorithm against MPI_Allreduce in the same run,
 * one table per algorithm. For each size the algorithms run in alternation (3 rounds, the best
 * round's average kept, MPI_Allreduce's too), so machine noise hits them alike. Columns: size,
 * average latency (the slowest rank's), bus bandwidth 2 (p - 1) / p x bytes / time (what each
 * rank's link carries in a bandwidth-optimal allreduce), the same for MPI_Allreduce, the ratio.
 *   mpirun -np P bench/allreduce [--min-size B] [--max-size B] [--group-size N] [--chain N]
 *                                [--segment FLOATS] [--window N] [--write-costs FILE]
 * --write-costs writes the measured times as the cost table a generated program's
 * --comm-costs reads (runtime/comm/cost.h): auto then chooses from this run's measurements. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"

enum { ROUNDS = 3 };
static const SwnAllreduceAlgorithm algorithms[] = {SWN_ALLREDUCE_MPI, SWN_ALLREDUCE_TOPO,
                                                   SWN_ALLREDUCE_RING, SWN_ALLREDUCE_HIER,
                                                   SWN_ALLREDUCE_SHM};
enum { NALG = sizeof algorithms / sizeof *algorithms };

static int iterations_for(int64_t bytes) {
  int64_t n = ((int64_t)1 << 28) / (bytes < 4096 ? 4096 : bytes);
  return (int)(n < 5 ? 5 : n > 1000 ? 1000 : n);
}

/* The slowest rank's average seconds per call. */
static double time_calls(SwnComm *c, SwnAllreduceAlgorithm a, float *buf, int64_t count,
                         int iterations) {
  MPI_Barrier(c->comm);
  double start = MPI_Wtime();
  for (int i = 0; i < iterations; i++) swn_allreduce(c, buf, count, a);
  double t = (MPI_Wtime() - start) / iterations;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  return t;
}

/* One OSU-style table: size, average latency, bus bandwidth, and the same for MPI_Allreduce. */
static void print_block(SwnAllreduceAlgorithm a, int size, int nsizes, const int64_t *sizes,
                        double (*best)[NALG], int column) {
  printf("\n# %s%s\n", swn_allreduce_names[a],
         a == SWN_ALLREDUCE_MPI ? " (MPI_Allreduce itself)" : "");
  printf("# %-10s %16s %12s %16s %12s %10s\n", "Size", "Avg Latency(us)", "BusBW(GB/s)",
         "MPI Latency(us)", "MPI BusBW", "BusBW/MPI");
  for (int i = 0; i < nsizes; i++) {
    double factor = 2.0 * (size - 1) / size * (double)sizes[i] / 1e9, t = best[i][column],
           mpi = best[i][0];
    printf("%-12lld %16.2f %12.3f %16.2f %12.3f %10.2f\n", (long long)sizes[i], t * 1e6, factor / t,
           mpi * 1e6, factor / mpi, mpi / t);
  }
}

static const char *text_option(int argc, char **argv, const char *name) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], name)) return argv[i + 1];
  return NULL;
}

static int64_t option(int argc, char **argv, const char *name, int64_t fallback) {
  const char *text = text_option(argc, argv, name);
  return text ? atoll(text) : fallback;
}

/* The cost table of this run: every size, every algorithm measured. */
static int write_costs(const char *path, const SwnComm *c, int nsizes, const int64_t *sizes,
                       double (*best)[NALG]) {
  SwnCostTable t = {.ranks = c->size, .groups = c->topo.ngroups};
  int first = nsizes > SWN_COST_MAX_SIZES ? nsizes - SWN_COST_MAX_SIZES : 0;
  for (int i = first; i < nsizes; i++) t.bytes[t.nsizes++] = (double)sizes[i];
  for (int a = 0; a < NALG; a++) {
    t.has[algorithms[a]] = algorithms[a] != SWN_ALLREDUCE_SHM || c->shared;
    for (int i = first; i < nsizes; i++) t.seconds[algorithms[a]][i - first] = best[i][a];
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "allreduce: cannot write %s\n", path);
    return 1;
  }
  swn_cost_write(&t, f);
  fclose(f);
  printf("\n# wrote the cost table %s (a program's --comm-costs)\n", path);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int64_t min_bytes = option(argc, argv, "--min-size", 4),
          max_bytes = option(argc, argv, "--max-size", 1 << 28);
  SwnComm c;
  int64_t words = max_bytes / 4 + 1;
  swn_comm_open(&c, MPI_COMM_WORLD, SWN_ALLREDUCE_AUTO, (int)option(argc, argv, "--group-size", 0),
                (int)option(argc, argv, "--chain", 0), words);
  swn_comm_set_segments(&c, option(argc, argv, "--segment", 0),
                        (int)option(argc, argv, "--window", 0));
  /* every algorithm, MPI_Allreduce too, sums the same buffer: the shared pool where there is
   * one (as a training run's gradients), zeros (no overflow, no denormals) */
  float *own = swn_shared_pool(&c) ? NULL : calloc((size_t)words, sizeof(float));
  float *buf = own ? own : swn_shared_pool(&c);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(version, &len);
  version[strcspn(version, ",\n")] = 0;
  enum { MAX_SIZES = 32 };
  int64_t sizes[MAX_SIZES];
  double best[MAX_SIZES][NALG];
  int nsizes = 0, status = 0;
  for (int64_t bytes = min_bytes; bytes <= max_bytes && nsizes < MAX_SIZES; bytes *= 4, nsizes++) {
    int64_t count = bytes / 4 > 0 ? bytes / 4 : 1;
    int iterations = iterations_for(bytes);
    sizes[nsizes] = count * 4;
    for (int a = 0; a < NALG; a++) best[nsizes][a] = 1e30;
    for (int a = 0; a < NALG; a++) time_calls(&c, algorithms[a], buf, count, 1); /* warm-up */
    for (int r = 0; r < ROUNDS; r++)
      for (int a = 0; a < NALG; a++) {
        double t = time_calls(&c, algorithms[a], buf, count, iterations);
        if (t < best[nsizes][a]) best[nsizes][a] = t;
      }
  }
  if (c.rank == 0) {
    printf("# swnc allreduce benchmark: %d ranks in %d group(s), chains of %d, segments of %lld "
           "floats (%d ahead)\n"
           "# baseline: MPI_Allreduce (%s), measured in alternation with each algorithm\n",
           c.size, c.topo.ngroups, c.topo.chain, (long long)c.segment, c.window, version);
    for (int a = 0; a < NALG; a++) print_block(algorithms[a], c.size, nsizes, sizes, best, a);
    const char *costs = text_option(argc, argv, "--write-costs");
    if (costs) status = write_costs(costs, &c, nsizes, sizes, best);
  }
  free(own);
  swn_comm_close(&c);
  MPI_Finalize();
  return status;
}
