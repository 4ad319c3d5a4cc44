/* The process among the ranks: MPI start-up, rank and size, stopping every rank on an error,
 * start-up agreement between ranks, and the small collectives the training loop uses. */
#include "ranks.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "comm/schedule.h"

#include "util.h"

static int world_rank, world_size = 1, node_size = 1, thread_level;

int swn_mpi_thread_level(void) { return thread_level; }

static _Noreturn void abort_all(void) {
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static void finish(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void swn_mpi_start(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &thread_level) != MPI_SUCCESS)
      swn_fatal("cannot initialise MPI");
    atexit(finish);
  } else {
    MPI_Query_thread(&thread_level);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  if (world_size > 1) swn_set_error_rank(world_rank, world_size, abort_all);
}

/* Started by mpirun (Open MPI, or a PMI/PMIx launcher), even as one rank: then standard output
 * is the launcher's pseudo-terminal whatever mpirun's own output is. */
bool swn_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int swn_mpi_rank(void) { return world_rank; }
int swn_mpi_size(void) { return world_size; }
int swn_mpi_node_size(void) { return node_size; }

typedef struct Field {
  const char *what;
  int64_t value;
  const char *const *names; /* the value's name for an enumeration or a flag, or NULL */
} Field;

static const char *const given[] = {"not given", "given"};
#define FLAG(what, set)                                                                            \
  { what, (set) != 0, given }

/* "sc-obr", "given", or the number. */
static const char *value_text(const Field *f, int64_t value, char text[32]) {
  if (f->names) return f->names[value];
  snprintf(text, 32, "%lld", (long long)value);
  return text;
}

void swn_ranks_check_same(const SwnNetwork *net, const SwnOptions *o, const int64_t *extra,
                          int nextra) {
  if (world_size <= 1) return;
  Field mine[] = {{"network (parameter table hash)", (int64_t)net->hash, NULL},
                  {"parameter count", net->param_words, NULL},
                  {"gradient buckets", net->nbuckets, NULL},
                  {"--batch", o->batch, NULL},
                  {"--test-batch", o->test_batch, NULL},
                  {"--epochs", o->epochs, NULL},
                  {"--iterations", o->iterations, NULL},
                  {"--seed", (int64_t)o->seed, NULL},
                  FLAG("--no-shuffle", !o->shuffle),
                  {"--train-size", o->train_size, NULL},
                  {"--test-size", o->test_size, NULL},
                  {"--allreduce", o->allreduce, swn_allreduce_names},
                  {"--group-size", o->group_size, NULL},
                  {"--chain", o->chain, NULL},
                  {"--hier-upper", o->hier_upper, swn_upper_names},
                  FLAG("--comm-costs", o->comm_costs),
                  FLAG("--no-overlap", !o->overlap),
                  {"--sync", o->sync, swn_sync_names},
                  {"--comm-precision", o->comm_fp16, (const char *const[]){"fp32", "fp16"}},
                  FLAG("--scale-lr", o->scale_lr),
                  {"--sparse (in millionths)", (int64_t)lround(o->sparse_density * 1e6), NULL},
                  {"--sparse-chunk", o->sparse_chunk, NULL},
                  {"--sparse-warmup", o->sparse_warmup, NULL},
                  FLAG("--resume", o->resume),
                  FLAG("--init-weights", o->init_weights),
                  FLAG("--strict", o->strict),
                  {"--lr (in millionths)", (int64_t)lround((double)o->lr * 1e6), NULL},
                  FLAG("--eval-only", o->eval_only),
                  /* rank 0 saves: a file given to another rank alone would never be written */
                  FLAG("--checkpoint", o->checkpoint),
                  {"--checkpoint-every", o->checkpoint_every, NULL},
                  FLAG("--save-gradients", o->save_gradients),
                  FLAG("--comm-profile", o->comm_profile),
                  {"training images", nextra > 0 ? extra[0] : 0, NULL},
                  {"test images", nextra > 1 ? extra[1] : 0, NULL}};
  enum { N = sizeof mine / sizeof *mine };
  int64_t values[N], *all = world_rank == 0 ? swn_alloc(sizeof values * (size_t)world_size) : NULL;
  for (int i = 0; i < N; i++) values[i] = mine[i].value;
  MPI_Gather(values, N, MPI_INT64_T, all, N, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (world_rank == 0)
    for (int r = 1; r < world_size; r++)
      for (int i = 0; i < N; i++)
        if (all[r * N + i] != values[i]) {
          char theirs[32], ours[32];
          swn_fatal("rank %d runs with another %s than rank 0 (%s, not %s): start every rank "
                    "with the same program, options and data",
                    r, mine[i].what, value_text(&mine[i], all[r * N + i], theirs),
                    value_text(&mine[i], values[i], ours));
        }
  free(all);
  MPI_Barrier(MPI_COMM_WORLD); /* rank 0 may have stopped everyone */
}

void swn_broadcast_floats(float *v, int64_t n) {
  for (int64_t at = 0; at < n && world_size > 1; at += 1 << 30)
    MPI_Bcast(v + at, (int)(n - at < (1 << 30) ? n - at : 1 << 30), MPI_FLOAT, 0, MPI_COMM_WORLD);
}

void swn_broadcast_int64(int64_t *v, int n) {
  if (world_size > 1) MPI_Bcast(v, n, MPI_INT64_T, 0, MPI_COMM_WORLD);
}

void swn_sum_doubles(double *v, int n) {
  if (world_size > 1) MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
