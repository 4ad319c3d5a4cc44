/* Data-parallel training over MPI: the bucketed gradient allreduce and EASGD's weight sum, or
 * S-Caffe's reduce-to-root schedules (--sync: gradients reduced to rank 0, which updates and
 * broadcasts the weights in stages that forward waits for one by one).
 *
 * Overlap: a communication thread sums the buckets in the order backward completes them
 * (swn_gradients_ready hands it each one), while the compute threads go on with backward; the
 * update waits per bucket (swn_gradients_wait). A thread rather than non-blocking calls polled
 * from backward: each allreduce is a chain of dependent steps, and between two kernel calls
 * backward has no moment to drive them; measured in docs/runtime.md (--no-overlap). */
#include "distributed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "ranks.h"
#include "util.h"
#include "workers.h"

/* ------------------------------------------------------------ the communication thread */

static void sum_job(SwnDistributed *d, int j) {
  double start = swn_now();
  float *data = d->job[j];
  int64_t words = d->job_words[j];
  SwnCollective kind = d->job_kind[j];
  if (kind != SWN_COLLECTIVE_ALLREDUCE)
    swn_rooted(&d->comm, kind, data, words);
  else if (d->sparse)
    swn_sparse_allreduce(&d->chunks, &d->comm, data, data - d->grads, words, d->density);
  else
    swn_allreduce(&d->comm, data, words, SWN_ALLREDUCE_AUTO);
  bool summed = kind == SWN_COLLECTIVE_ALLREDUCE || (kind == SWN_COLLECTIVE_REDUCE && !d->rank);
  if (summed && d->job_scale != 1.0f) swk_scale(words, data, d->job_scale);
  d->busy += swn_now() - start;
}

/* Queues a job of the iteration (the thread takes it, or, not threaded, it waits for wait_job);
 * returns its index. */
static int queue(SwnDistributed *d, SwnCollective kind, float *data, int64_t words) {
  int j = d->njobs++;
  d->job[j] = data, d->job_words[j] = words, d->job_kind[j] = kind;
  d->jobs += kind != SWN_COLLECTIVE_BROADCAST;
  if (!d->threaded) return j;
  pthread_mutex_lock(&d->lock);
  d->queued = j + 1;
  pthread_cond_broadcast(&d->changed);
  pthread_mutex_unlock(&d->lock);
  return j;
}

static void flush(SwnDistributed *d) {
  queue(d, d->rooted ? SWN_COLLECTIVE_REDUCE : SWN_COLLECTIVE_ALLREDUCE, d->grads + d->open_offset,
        d->open_words);
  d->open_words = 0;
}

/* Bucket `bucket` is complete: it joins the job being filled (the next to be queued), which is
 * queued once it holds merge_bytes, or the last bucket (a gap in the pool queues it first: jobs
 * are spans). */
static void gather(SwnDistributed *d, int bucket, int64_t offset, int64_t words) {
  if (d->open_words && offset != d->open_offset + d->open_words) flush(d);
  if (!d->open_words) d->open_offset = offset;
  d->open_words += words;
  d->job_of[bucket] = d->njobs;
  if (4.0 * (double)d->open_words >= d->merge_bytes || bucket == d->nbuckets - 1) flush(d);
}

/* Job j done. Not threaded, the jobs up to j run here in turn (only the main thread waits
 * then: swn_parameters_wait has nothing to wait for). Threaded, any compute thread may wait. */
static void wait_job(SwnDistributed *d, int j) {
  double start = swn_now();
  if (!d->threaded) {
    while (d->done <= j) sum_job(d, d->done++); /* --no-overlap: in turn, when needed */
    d->waited += swn_now() - start;
    return;
  }
  pthread_mutex_lock(&d->lock);
  while (d->done <= j) pthread_cond_wait(&d->changed, &d->lock);
  d->waited += swn_now() - start;
  pthread_mutex_unlock(&d->lock);
}

static void *communicate(void *arg) {
  SwnDistributed *d = arg;
  pthread_mutex_lock(&d->lock);
  for (;;) {
    while (!d->stop && d->done == d->queued) pthread_cond_wait(&d->changed, &d->lock);
    if (d->stop) break;
    int b = d->done;
    /* a sum begun while backward has buckets still to hand over */
    d->began_in_backward += d->job_kind[b] != SWN_COLLECTIVE_BROADCAST && d->handed < d->nbuckets;
    pthread_mutex_unlock(&d->lock);
    sum_job(d, b);
    pthread_mutex_lock(&d->lock);
    d->done++;
    pthread_cond_broadcast(&d->changed);
  }
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

void swn_distributed_micro_batch(SwnDistributed *d, int k) { d->micro_batch = k; }

/* Gradient accumulation (Caffe's iter_size): a completed bucket of a micro-batch before the
 * last is added to the sum and goes no further; the last one's becomes the mean of all. */
static bool accumulated(SwnDistributed *d, int64_t offset, int64_t words) {
  if (d->micro_batches <= 1) return true;
  float *sum = d->gradient_sum + offset, *g = d->grads + offset;
  if (d->micro_batch == 0)
    memcpy(sum, g, sizeof(float) * (size_t)words);
  else if (d->micro_batch < d->micro_batches - 1)
    swk_sum_into(words, sum, g);
  if (d->micro_batch < d->micro_batches - 1) return false;
  swk_sum_into(words, g, sum);
  swk_scale(words, g, 1.0f / (float)d->micro_batches);
  return true;
}

void swn_gradients_ready(SwnStep *s, int bucket, int64_t offset, int64_t words) {
  SwnDistributed *d = s->dist;
  if (bucket != s->buckets_ready)
    swn_fatal("internal: gradient bucket %d completed out of order", bucket);
  s->buckets_ready++;
  /* on worker 0's clock, the one the iteration's phases are timed with (--comm-profile) */
  if (d && bucket < d->nbuckets && swn_workers_first(s)) d->ready_at[bucket] = swn_target_now();
  if (!swn_workers_bucket_ready(s, bucket, offset, words))
    return; /* other core groups still on it */
  if (!d || bucket >= d->nbuckets || !accumulated(d, offset, words)) return;
  d->offset[bucket] = offset, d->words[bucket] = words;
  if (d->size <= 1 || d->easgd) return;
  if (d->threaded) pthread_mutex_lock(&d->lock);
  d->handed = bucket + 1; /* read by the thread */
  if (d->threaded) pthread_mutex_unlock(&d->lock);
  gather(d, bucket, offset, words);
}

void swn_gradients_wait(SwnStep *s, int bucket) {
  SwnDistributed *d = s->dist;
  if (d && d->size > 1 && !d->easgd) wait_job(d, d->job_of[bucket]);
}

void swn_parameters_wait(SwnStep *s, int bucket) {
  SwnDistributed *d = s->dist; /* rank 0 sends weights that only its update changes */
  if (!d || !d->threaded || !d->rank || bucket >= d->nbuckets || d->broadcast_of[bucket] < 0)
    return;
  wait_job(d, d->broadcast_of[bucket]);
}

/* Rooted, once rank 0's model has moved: it goes to every rank, EASGD's center whole, the
 * weights whole (sc-b, before forward: nothing waits per stage) or in the gradient buckets'
 * spans in forward order (the last bucket holds the first layers). The spans are backward's of
 * the last iteration. */
static void broadcast_model(SwnDistributed *d) {
  if (d->easgd) {
    queue(d, SWN_COLLECTIVE_BROADCAST, d->center, d->param_words);
  } else if (d->sync == SWN_SYNC_SC_B) {
    queue(d, SWN_COLLECTIVE_BROADCAST, d->params, d->param_words);
  } else {
    for (int b = d->nbuckets - 1; b >= 0; b--)
      d->broadcast_of[b] =
          queue(d, SWN_COLLECTIVE_BROADCAST, d->params + d->offset[b], d->words[b]);
  }
}

void swn_distributed_begin(SwnDistributed *d, int64_t epoch) {
  if (d->size <= 1) return;
  if (d->sparse) d->density = swn_sparse_density(d->chunks.density, d->chunks.warmup, epoch);
  if (d->threaded) pthread_mutex_lock(&d->lock); /* the thread is idle: all was waited for */
  d->queued = d->done = d->njobs = d->handed = 0;
  d->open_words = 0;
  if (d->threaded) pthread_mutex_unlock(&d->lock);
  for (int b = 0; b < d->nbuckets; b++) d->broadcast_of[b] = -1;
  if (d->rooted && !d->settled) broadcast_model(d);
  int broadcasts = d->njobs;
  if (!d->threaded && broadcasts) wait_job(d, broadcasts - 1); /* sc-b: before forward */
  if (!d->easgd) return;
  memcpy(d->weight_sum, d->params, sizeof(float) * (size_t)d->param_words);
  /* overlaps forward and backward */
  queue(d, d->rooted ? SWN_COLLECTIVE_REDUCE : SWN_COLLECTIVE_ALLREDUCE, d->weight_sum,
        d->param_words);
}

bool swn_distributed_updates(const SwnDistributed *d) {
  return !d->rooted || d->easgd || d->rank == 0;
}

float swn_distributed_fold_keep(const SwnDistributed *d, float momentum) {
  if (d->rooted) return d->rank == 0 ? momentum : 0; /* rank 0's momentum, once */
  return momentum / (float)d->size;                  /* every rank's copy, summed */
}

void swn_distributed_end(SwnDistributed *d) {
  if (d->size <= 1) return;
  if (d->njobs) wait_job(d, d->njobs - 1);
  if (d->rooted) d->settled = false; /* rank 0 has updated */
}

void swn_distributed_settle(SwnDistributed *d) {
  if (!d->rooted || d->settled) return;
  swn_rooted(&d->comm, SWN_COLLECTIVE_BROADCAST, d->easgd ? d->center : d->params, d->param_words);
  d->settled = true;
}

void swn_distributed_elastic(SwnDistributed *d, float lr, float rho) {
  const float *sum = d->params; /* one rank: the sum of the weights is its own */
  int ranks = 1;
  if (d->size > 1) {
    wait_job(d, d->njobs - 1);
    if (!d->rooted || d->rank == 0) sum = d->weight_sum, ranks = d->size;
  }
  /* rooted, ranks other than 0 move their center with their own weights only: it is replaced
   * by rank 0's before it is read again */
  swk_easgd_elastic(d->param_words, lr, rho, ranks, d->params, sum, d->center, d->grads);
}

/* ------------------------------------------------------------ set-up */

/* fp16 sends gradients: not a folded program's momentum, nor EASGD's weights, nor through shm. */
static void check_half(SwnDistributed *d, const SwnNetwork *net, const SwnOptions *o) {
  if (d->easgd)
    swn_fatal("--comm-precision fp16 compresses gradients; EASGD sums the weights, in fp32");
  if (net->gradients_in_momentum)
    swn_fatal("--comm-precision fp16 sends gradients, but this program adds them into the "
              "momentum during backward (the allreduce would round the momentum): compile it "
              "with --no-fold-gradients");
  if (o->allreduce == SWN_ALLREDUCE_SHM)
    swn_fatal("--comm-precision fp16 compresses messages; --allreduce shm sends none");
  swn_comm_set_half(&d->comm, true);
}

/* Sparse exchange sends gradients and keeps their residual: not EASGD's weights, nor a folded
 * program's momentum. One process has nothing to exchange and trains densely. */
static void check_sparse(SwnDistributed *d, const SwnNetwork *net, const SwnOptions *o) {
  if (d->easgd) swn_fatal("--sparse sends gradients; EASGD sums the weights");
  if (net->moment_pools == 2)
    swn_fatal("--sparse corrects its residual with SGD's momentum; adam and adamw keep moments of "
              "their own: train them without --sparse");
  if (net->gradients_in_momentum)
    swn_fatal("--sparse sends gradients, but this program adds them into the momentum during "
              "backward: compile it with --no-fold-gradients");
  if (d->size <= 1) return;
  d->sparse = true;
  swn_sparse_open(&d->chunks, net->param_words, o->sparse_chunk, net->train.momentum,
                  o->sparse_density, o->sparse_warmup);
}

/* Probed sizes stop here (64 MiB): beyond, the last segment's alpha and beta extrapolate. */
enum { PROBE_WORDS_MAX = 16 << 20 };

/* auto: the cost table, read from --comm-costs or timed now on these ranks, picks each bucket's
 * algorithm and the size compiled buckets merge to (cost.h). Before training: the gradient pool
 * is summed in place, so it is zeroed first (zeros sum to zeros, at full speed). */
static void choose_automatically(SwnDistributed *d, const SwnOptions *o) {
  SwnCostTable t;
  if (o->comm_costs) {
    char error[512];
    if (!swn_cost_read(o->comm_costs, &t, error, sizeof error)) swn_fatal("%s", error);
    if (t.ranks != d->size || t.groups != d->comm.topo.ngroups)
      swn_fatal("%s: measured on %d ranks in %d group%s, but this run has %d in %d: write it with "
                "bench/allreduce --write-costs on the same ranks",
                o->comm_costs, t.ranks, t.groups, t.groups == 1 ? "" : "s", d->size,
                d->comm.topo.ngroups);
  } else {
    int64_t words = d->param_words < PROBE_WORDS_MAX ? d->param_words : PROBE_WORDS_MAX;
    float *pool = swn_shared_pool(&d->comm);
    float *buf = pool ? pool : swn_alloc(sizeof(float) * (size_t)words);
    memset(buf, 0, sizeof(float) * (size_t)words);
    swn_comm_probe(&d->comm, buf, words, &t);
    if (!pool) free(buf);
    d->measured = true;
  }
  swn_comm_set_costs(&d->comm, &t);
  bool half = d->comm.half; /* the table's bytes are on the wire: a half is 2 of a float's 4 */
  d->merge_bytes = swn_cost_threshold(&t, half || !d->comm.shared) * (half ? 2 : 1);
}

/* S-Caffe's schedules reduce to rank 0 and broadcast from it, in fp32, every gradient: with hier's
 * chains (auto means hier here) or MPI's own collectives. */
static void check_rooted(const SwnOptions *o) {
  const char *name = swn_sync_names[o->sync];
  if (o->comm_fp16)
    swn_fatal("--sync %s reduces to rank 0 in fp32; --comm-precision fp16 compresses the "
              "allreduce of --sync allreduce",
              name);
  if (o->sparse_density < 1)
    swn_fatal("--sync %s reduces every gradient to rank 0; --sparse chooses chunks for the "
              "allreduce of --sync allreduce",
              name);
  if (o->comm_costs)
    swn_fatal("--comm-costs chooses allreduce algorithms; --sync %s reduces to rank 0 and "
              "broadcasts from it",
              name);
  SwnAllreduceAlgorithm a = (SwnAllreduceAlgorithm)o->allreduce;
  if (a != SWN_ALLREDUCE_AUTO && a != SWN_ALLREDUCE_HIER && a != SWN_ALLREDUCE_MPI)
    swn_fatal("--sync %s reduces to rank 0 and broadcasts from it with hier's chains (--allreduce "
              "auto or hier) or MPI_Reduce and MPI_Bcast (--allreduce mpi), not --allreduce %s",
              name, swn_allreduce_names[a]);
}

float swn_distributed_update_momentum(const SwnDistributed *d, float momentum) {
  return d->sparse ? 0 : momentum;
}

void swn_distributed_open(SwnDistributed *d, const SwnNetwork *net, const SwnOptions *o) {
  *d = (SwnDistributed){.rank = swn_mpi_rank(),
                        .size = swn_mpi_size(),
                        .param_words = net->param_words,
                        .nbuckets = net->nbuckets,
                        .easgd = net->train.optimizer == SWN_OPT_EASGD};
  size_t n = (size_t)net->nbuckets + 1, jobs = 2 * n; /* broadcasts, then sums */
  d->offset = swn_alloc(sizeof(int64_t) * n), d->words = swn_alloc(sizeof(int64_t) * n);
  d->ready_at = swn_alloc(sizeof(double) * n);
  d->job = swn_alloc(sizeof(float *) * jobs), d->job_words = swn_alloc(sizeof(int64_t) * jobs);
  d->job_kind = swn_alloc(sizeof(SwnCollective) * jobs);
  d->job_of = swn_alloc(sizeof(int) * n), d->broadcast_of = swn_alloc(sizeof(int) * n);
  for (size_t b = 0; b < n; b++) d->broadcast_of[b] = -1;
  d->micro_batches = (int)net->train.iter_size;
  if (d->micro_batches > 1) d->gradient_sum = swn_alloc(sizeof(float) * (size_t)net->param_words);
  d->sync = (SwnSync)o->sync;
  if (d->sync != SWN_SYNC_ALLREDUCE) check_rooted(o);
  d->rooted = d->sync != SWN_SYNC_ALLREDUCE && d->size > 1;
  d->settled = true; /* every rank starts from rank 0's weights */
  /* gradients: their mean over all images (a folded network's backward scaled them already) */
  d->job_scale = d->easgd || net->gradients_in_momentum ? 1.0f : 1.0f / (float)d->size;
  swn_comm_open(&d->comm, MPI_COMM_WORLD, (SwnAllreduceAlgorithm)o->allreduce, o->group_size,
                o->chain, d->size > 1 ? net->param_words : 0);
  swn_comm_set_hier_upper(&d->comm, (SwnUpperLevel)o->hier_upper);
  if (o->allreduce == SWN_ALLREDUCE_SHM && d->size > 1 && !d->comm.shared)
    swn_fatal("--allreduce shm needs every rank on one machine (%d of these %d share this one)",
              swn_mpi_node_size(), d->size);
  if (o->comm_fp16) check_half(d, net, o);
  if (o->sparse_density < 1) check_sparse(d, net, o);
  if (o->scale_lr && d->easgd)
    swn_fatal("--scale-lr scales synchronous SGD's learning rate to the global batch of all "
              "ranks; EASGD's ranks each take their own steps");
  d->lr_scale = o->scale_lr ? (float)d->size : 1;
  if (o->allreduce == SWN_ALLREDUCE_AUTO && d->size > 1 && !d->rooted) choose_automatically(d, o);
  /* sc-b and sc-ob reduce after backward: one job, queued with the last bucket */
  if (d->rooted && d->sync != SWN_SYNC_SC_OBR) d->merge_bytes = INFINITY;
  if (d->easgd && d->size > 1) {
    d->weight_sum = swn_shared_pool(&d->comm);
    if (!d->weight_sum)
      d->weight_sum = d->own_weight_sum = swn_alloc(sizeof(float) * (size_t)d->param_words);
  }
  d->comm.yield = o->overlap; /* the thread shares the cores with backward */
  d->threaded = d->size > 1 && o->overlap && d->sync != SWN_SYNC_SC_B &&
                swn_mpi_thread_level() >= MPI_THREAD_SERIALIZED;
  if (!d->threaded) return;
  pthread_mutex_init(&d->lock, NULL);
  pthread_cond_init(&d->changed, NULL);
  if (pthread_create(&d->thread, NULL, communicate, d))
    swn_fatal("cannot start the communication thread");
}

float *swn_distributed_gradient_pool(const SwnDistributed *d) {
  return d->easgd ? NULL : swn_shared_pool(&d->comm);
}

void swn_distributed_attach(SwnDistributed *d, float *params, float *grads, float *center) {
  d->params = params, d->grads = grads, d->center = center;
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
  if (d->sparse) swn_sparse_close(&d->chunks);
  free(d->offset), free(d->words), free(d->ready_at), free(d->job), free(d->job_words);
  free(d->job_kind), free(d->job_of), free(d->broadcast_of);
  free(d->own_weight_sum), free(d->gradient_sum);
}

/* "1.5 MiB", "16 KiB", "100 B" */
static void print_size(double bytes, FILE *f) {
  if (bytes >= 1 << 20)
    fprintf(f, "%.3g MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    fprintf(f, "%.3g KiB", bytes / (1 << 10));
  else
    fprintf(f, "%.0f B", bytes);
}

/* " (measured at start-up: mpi below 16 KiB, shm from 16 KiB; buckets merged to 1 MiB or
 * more)": each algorithm auto runs, from the bucket size where it starts, up to the gradient. */
static void describe_auto(const SwnDistributed *d, const SwnOptions *o, FILE *f) {
  const SwnComm *c = &d->comm;
  if (!c->costs) return;
  if (d->measured)
    fprintf(f, " (measured at start-up: ");
  else
    fprintf(f, " (from %s: ", o->comm_costs);
  SwnAllreduceAlgorithm last = swn_allreduce_choice(c, 1);
  fprintf(f, "%s", swn_allreduce_names[last]);
  bool first = true;
  for (int64_t words = 2; words <= d->param_words; words *= 2) { /* the largest bucket */
    SwnAllreduceAlgorithm a = swn_allreduce_choice(c, words);
    if (a == last) continue;
    if (first) fprintf(f, " below "), print_size(4.0 * (double)words, f);
    fprintf(f, ", %s from ", swn_allreduce_names[a]);
    print_size(4.0 * (double)words, f);
    last = a, first = false;
  }
  fprintf(f, "; buckets merged to ");
  print_size(d->merge_bytes, f);
  fprintf(f, " or more)");
}

static void describe_allreduce(const SwnDistributed *d, const SwnOptions *o, FILE *f) {
  const SwnComm *c = &d->comm;
  fprintf(f, "allreduce %s", swn_allreduce_names[c->algorithm]);
  if (c->algorithm == SWN_ALLREDUCE_AUTO) describe_auto(d, o, f);
  if (c->algorithm == SWN_ALLREDUCE_HIER)
    fprintf(f, ", chains of %d, heads: %s", c->topo.chain, swn_upper_names[c->topo.upper]);
  if (d->easgd)
    fprintf(f, ", synchronous EASGD: the weights summed once per iteration, %s",
            d->threaded ? "overlapped with forward and backward" : "after backward");
  else
    fprintf(f, ", %d gradient bucket%s, %s", d->nbuckets, d->nbuckets == 1 ? "" : "s",
            d->threaded ? "overlapped with backward" : "after backward");
}

/* "sc-obr: 3 gradient buckets reduced to rank 0 while backward runs, rank 0 updates, the weights
 * broadcast in 3 stages overlapping forward (hier's chains of 8, heads: auto)" */
static void describe_rooted(const SwnDistributed *d, FILE *f) {
  const SwnComm *c = &d->comm;
  fprintf(f, "%s: ", swn_sync_names[d->sync]);
  if (d->easgd)
    fprintf(f, "synchronous EASGD: the weights reduced to rank 0, which moves the center, %s",
            d->threaded ? "and the center broadcast, overlapped with forward and backward"
                        : "after backward, and the center broadcast before forward");
  else if (d->threaded && d->sync == SWN_SYNC_SC_OBR)
    fprintf(f, "%d gradient bucket%s reduced to rank 0 while backward runs", d->nbuckets,
            d->nbuckets == 1 ? "" : "s");
  else
    fprintf(f, "the gradients reduced to rank 0 after backward");
  if (!d->easgd && d->threaded)
    fprintf(f, ", rank 0 updates, the weights broadcast in %d stage%s overlapping forward",
            d->nbuckets, d->nbuckets == 1 ? "" : "s");
  else if (!d->easgd)
    fprintf(f, ", rank 0 updates, the weights broadcast before forward");
  if (c->algorithm == SWN_ALLREDUCE_MPI)
    fprintf(f, " (MPI_Reduce, MPI_Bcast)");
  else
    fprintf(f, " (hier's chains of %d, heads: %s)", c->topo.chain, swn_upper_names[c->topo.upper]);
}

void swn_distributed_describe(const SwnDistributed *d, const SwnOptions *o, FILE *f) {
  if (d->size <= 1 || d->rank != 0) return;
  const SwnComm *c = &d->comm;
  fprintf(f, "distributed: %d ranks in %d group%s (", d->size, c->topo.ngroups,
          c->topo.ngroups == 1 ? "" : "s");
  for (int g = 0; g < c->topo.ngroups; g++) {
    int n = 0;
    for (int r = 0; r < d->size; r++) n += c->group[r] == g;
    fprintf(f, "%s%d", g ? "+" : "", n);
  }
  fprintf(f, " ranks), ");
  if (d->rooted)
    describe_rooted(d, f);
  else
    describe_allreduce(d, o, f);
  if (d->lr_scale != 1)
    fprintf(f, "; learning rate x %g (--scale-lr: linear scaling by ranks)", d->lr_scale);
  if (d->sparse) {
    fprintf(f, "; sparse: the top %g%% of chunks of %lld gradients", 100 * d->chunks.density,
            (long long)d->chunks.chunk);
    if (d->chunks.warmup > 0)
      fprintf(f, " (warm-up: %.3g%% in epoch 1%s)",
              100 * swn_sparse_density(d->chunks.density, d->chunks.warmup, 0),
              d->chunks.warmup > 1 ? ", falling" : "");
    fprintf(f, ", momentum correction %g", d->chunks.momentum);
  }
  fprintf(f, "\n");
}

void swn_distributed_report(const SwnDistributed *d, int64_t iterations, double seconds, FILE *f) {
  if (d->size <= 1 || d->rank != 0 || iterations <= 0) return;
  double per = 1e3 / (double)iterations;
  fprintf(f, "%s: %.1f ms per iteration (%.1f%% of it), %s waited %.1f ms of it (",
          d->rooted ? "reduce and broadcast" : "allreduce", d->busy * per,
          100 * d->busy / (seconds > 0 ? seconds : 1), d->rooted ? "compute" : "update",
          d->waited * per);
  if (d->threaded && d->easgd)
    fprintf(f, "the rest overlapped forward and backward");
  else if (d->threaded)
    fprintf(f,
            "the rest overlapped %s; %.1f of %.1f sums per iteration began "
            "while backward ran",
            d->rooted ? "forward and backward" : "backward",
            (double)d->began_in_backward / (double)iterations,
            (double)d->jobs / (double)iterations);
  else
    fprintf(f, "not overlapped");
  fprintf(f, "); %.2f MB sent per iteration by rank 0 (%s",
          (double)d->comm.bytes_sent / 1e6 / (double)iterations, d->comm.half ? "fp16" : "fp32");
  if (d->sparse && d->chunks.chunks_seen)
    fprintf(f, ", %.1f%% of the chunks",
            100 * (double)d->chunks.chunks_sent / (double)d->chunks.chunks_seen);
  fprintf(f, ")\n");
}
