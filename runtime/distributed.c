/* Data-parallel training over MPI: start-up, agreement, and the bucketed gradient allreduce.
 *
 * Overlap: a communication thread sums the buckets in the order backward completes them
 * (swn_gradients_ready hands it each one), while the compute threads go on with backward; the
 * update waits per bucket (swn_gradients_wait). A thread rather than non-blocking calls polled
 * from backward: each allreduce is a chain of dependent steps, and between two kernel calls
 * backward has no moment to drive them; measured in docs/runtime.md (--no-overlap). */
#include "distributed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int world_rank, world_size = 1, node_size = 1, thread_level;

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

int swn_mpi_rank(void) { return world_rank; }
int swn_mpi_size(void) { return world_size; }
int swn_mpi_node_size(void) { return node_size; }

/* ------------------------------------------------------------ the communication thread */

static void sum_job(SwnDistributed *d, int j) {
  double start = swn_now();
  swn_allreduce(&d->comm, d->job[j], d->job_words[j], SWN_ALLREDUCE_AUTO);
  if (d->job_scale != 1.0f) swk_scale(d->job_words[j], d->job[j], d->job_scale);
  d->busy += swn_now() - start;
}

/* Job j is ready: the thread takes it, or (not threaded) it waits for swn_distributed_wait. */
static void queue(SwnDistributed *d, int j, float *data, int64_t words) {
  d->job[j] = data, d->job_words[j] = words;
  if (!d->threaded) return;
  pthread_mutex_lock(&d->lock);
  d->queued = j + 1;
  pthread_cond_broadcast(&d->changed);
  pthread_mutex_unlock(&d->lock);
}

static void wait_job(SwnDistributed *d, int j) {
  double start = swn_now();
  if (!d->threaded) {
    sum_job(d, j); /* --no-overlap: in turn, when needed */
  } else {
    pthread_mutex_lock(&d->lock);
    while (d->done <= j) pthread_cond_wait(&d->changed, &d->lock);
    pthread_mutex_unlock(&d->lock);
  }
  d->waited += swn_now() - start;
}

static void *communicate(void *arg) {
  SwnDistributed *d = arg;
  pthread_mutex_lock(&d->lock);
  for (;;) {
    while (!d->stop && d->done == d->queued) pthread_cond_wait(&d->changed, &d->lock);
    if (d->stop) break;
    int b = d->done;
    pthread_mutex_unlock(&d->lock);
    sum_job(d, b);
    pthread_mutex_lock(&d->lock);
    d->done++;
    pthread_cond_broadcast(&d->changed);
  }
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

void swn_gradients_ready(SwnStep *s, int bucket, int64_t offset, int64_t words) {
  SwnDistributed *d = s->dist;
  if (bucket != s->buckets_ready) swn_fatal("internal: gradient bucket %d completed out of order", bucket);
  s->buckets_ready++;
  if (!d || bucket >= d->nbuckets) return;
  d->offset[bucket] = offset, d->words[bucket] = words, d->ready_at[bucket] = swn_now();
  if (d->size > 1 && !d->easgd) queue(d, bucket, d->grads + offset, words);
}

void swn_gradients_wait(SwnStep *s, int bucket) {
  SwnDistributed *d = s->dist;
  if (d && d->size > 1 && !d->easgd) wait_job(d, bucket);
}

void swn_distributed_begin(SwnDistributed *d) {
  if (d->size <= 1) return;
  if (d->threaded) { /* every job of the last iteration was waited for: the thread is idle */
    pthread_mutex_lock(&d->lock);
    d->queued = d->done = 0;
    pthread_mutex_unlock(&d->lock);
  }
  if (!d->easgd) return;
  memcpy(d->weight_sum, d->params, sizeof(float) * (size_t)d->param_words);
  queue(d, 0, d->weight_sum, d->param_words); /* overlaps forward and backward */
}

void swn_distributed_elastic(SwnDistributed *d, float *center, float lr, float rho) {
  const float *sum = d->params; /* one rank: the sum of the weights is its own */
  if (d->size > 1) {
    wait_job(d, 0);
    sum = d->weight_sum;
  }
  swk_easgd_elastic(d->param_words, lr, rho, d->size, d->params, sum, center, d->grads);
}

/* ------------------------------------------------------------ set-up */

void swn_distributed_open(SwnDistributed *d, const SwnNetwork *net, const SwnOptions *o, float *params, float *grads) {
  *d = (SwnDistributed){.rank = world_rank, .size = world_size, .params = params, .grads = grads,
                        .param_words = net->param_words, .nbuckets = net->nbuckets,
                        .easgd = net->train.optimizer == SWN_OPT_EASGD};
  size_t n = (size_t)net->nbuckets + 1;
  d->offset = swn_alloc(sizeof(int64_t) * n), d->words = swn_alloc(sizeof(int64_t) * n);
  d->ready_at = swn_alloc(sizeof(double) * n);
  d->job = swn_alloc(sizeof(float *) * n), d->job_words = swn_alloc(sizeof(int64_t) * n);
  d->job_scale = d->easgd ? 1.0f : 1.0f / (float)d->size; /* gradients: their mean over all images */
  if (d->easgd && d->size > 1) d->weight_sum = swn_alloc(sizeof(float) * (size_t)net->param_words);
  swn_comm_open(&d->comm, MPI_COMM_WORLD, (SwnAllreduceAlgorithm)o->allreduce, o->group_size, o->chain);
  d->overlap = o->overlap;
  d->comm.yield = o->overlap; /* the thread shares the cores with backward */
  d->threaded = d->size > 1 && o->overlap && thread_level >= MPI_THREAD_SERIALIZED;
  if (!d->threaded) return;
  pthread_mutex_init(&d->lock, NULL);
  pthread_cond_init(&d->changed, NULL);
  if (pthread_create(&d->thread, NULL, communicate, d)) swn_fatal("cannot start the communication thread");
}

void swn_distributed_close(SwnDistributed *d) {
  if (d->threaded) {
    pthread_mutex_lock(&d->lock);
    d->stop = true;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->changed);
  }
  swn_comm_close(&d->comm);
  free(d->offset), free(d->words), free(d->ready_at), free(d->job), free(d->job_words), free(d->weight_sum);
}

void swn_distributed_describe(const SwnDistributed *d, FILE *f) {
  if (d->size <= 1 || d->rank != 0) return;
  const SwnComm *c = &d->comm;
  fprintf(f, "distributed: %d ranks in %d group%s (", d->size, c->topo.ngroups, c->topo.ngroups == 1 ? "" : "s");
  for (int g = 0; g < c->topo.ngroups; g++) {
    int n = 0;
    for (int r = 0; r < d->size; r++) n += c->group[r] == g;
    fprintf(f, "%s%d", g ? "+" : "", n);
  }
  fprintf(f, " ranks), allreduce %s", swn_allreduce_names[c->algorithm]);
  if (c->algorithm == SWN_ALLREDUCE_AUTO) {
    SwnAllreduceAlgorithm mid = swn_allreduce_choice(c, 1 << 14), big = swn_allreduce_choice(c, 1 << 20);
    fprintf(f, " (%s below 64 KiB, %s", swn_allreduce_names[swn_allreduce_choice(c, 1)], swn_allreduce_names[mid]);
    if (big != mid) fprintf(f, " to 4 MiB, %s", swn_allreduce_names[big]);
    fprintf(f, " above)");
  }
  if (c->algorithm == SWN_ALLREDUCE_HIER)
    fprintf(f, ", chains of %d", c->topo.chain);
  if (d->easgd)
    fprintf(f, ", synchronous EASGD: the weights summed once per iteration, %s\n",
            d->threaded ? "overlapped with forward and backward" : "after backward");
  else
    fprintf(f, ", %d gradient bucket%s, %s\n", d->nbuckets, d->nbuckets == 1 ? "" : "s",
            d->threaded ? "overlapped with backward" : "after backward");
}

void swn_distributed_report(const SwnDistributed *d, int64_t iterations, double seconds, FILE *f) {
  if (d->size <= 1 || d->rank != 0 || iterations <= 0) return;
  double per = 1e3 / (double)iterations;
  fprintf(f, "allreduce: %.1f ms per iteration (%.1f%% of it), update waited %.1f ms of it (%s)\n", d->busy * per,
          100 * d->busy / (seconds > 0 ? seconds : 1), d->waited * per,
          d->threaded ? "the rest overlapped backward" : "not overlapped");
}

/* ------------------------------------------------------------ agreement and collectives */

typedef struct Field {
  const char *what;
  int64_t value;
} Field;

void swn_distributed_check_same(const SwnNetwork *net, const SwnOptions *o, const int64_t *extra, int nextra) {
  if (world_size <= 1) return;
  Field mine[] = {
      {"network (parameter table hash)", (int64_t)net->hash}, {"parameter count", net->param_words},
      {"gradient buckets", net->nbuckets}, {"--batch", o->batch}, {"--test-batch", o->test_batch},
      {"--epochs", o->epochs}, {"--iterations", o->iterations}, {"--seed", (int64_t)o->seed},
      {"--no-shuffle", !o->shuffle}, {"--train-size", o->train_size}, {"--test-size", o->test_size},
      {"--allreduce", o->allreduce}, {"--group-size", o->group_size}, {"--chain", o->chain},
      {"--no-overlap", !o->overlap}, {"--resume", o->resume != NULL}, {"--init-weights", o->init_weights != NULL},
      {"--eval-only", o->eval_only}, {"training images", nextra > 0 ? extra[0] : 0},
      {"test images", nextra > 1 ? extra[1] : 0}};
  enum { N = sizeof mine / sizeof *mine };
  int64_t values[N], *all = world_rank == 0 ? swn_alloc(sizeof values * (size_t)world_size) : NULL;
  for (int i = 0; i < N; i++) values[i] = mine[i].value;
  MPI_Gather(values, N, MPI_INT64_T, all, N, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (world_rank == 0)
    for (int r = 1; r < world_size; r++)
      for (int i = 0; i < N; i++)
        if (all[r * N + i] != values[i])
          swn_fatal("rank %d runs with another %s than rank 0 (%lld, not %lld): start every rank with the same "
                    "program, options and data", r, mine[i].what, (long long)all[r * N + i], (long long)values[i]);
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
