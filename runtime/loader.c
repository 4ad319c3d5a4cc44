#include "loader.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

typedef struct SwnLoaderThread {
  SwnLoader *loader;
  pthread_t thread;
  SwnImageScratch scratch;
} SwnLoaderThread;

int64_t swn_iterations_per_epoch(int64_t images, int64_t global_batch) {
  int64_t n = images / global_batch; /* an incomplete last batch is dropped */
  return n > 0 ? n : 1;
}

int64_t swn_evaluation_batches(int64_t images, int batch, int rank, int ranks) {
  int64_t batches = (images + batch - 1) / batch;
  return batches > rank ? (batches - rank + ranks - 1) / ranks : 0;
}

int swn_evaluation_batch(int64_t images, int batch, int rank, int ranks, int64_t k,
                         int64_t *first) {
  *first = (k * ranks + rank) * batch;
  return (int)(images - *first < batch ? images - *first : batch);
}

/* Fisher-Yates with counter-based draws: the permutation of epoch e depends on (seed, e) only. */
static void permute(SwnLoader *l, int64_t epoch) {
  int64_t n = l->data->count;
  for (int64_t i = 0; i < n; i++) l->order[i] = i;
  if (l->plan.shuffle)
    for (int64_t i = n - 1; i > 0; i--) {
      int64_t j = (int64_t)(swn_hash3(l->plan.seed, 0x73687566ull + (uint64_t)epoch, (uint64_t)i) %
                            (uint64_t)(i + 1));
      int64_t t = l->order[i];
      l->order[i] = l->order[j];
      l->order[j] = t;
    }
  l->order_epoch = epoch;
}

static int64_t epoch_of(const SwnLoader *l, int64_t iteration) {
  return l->plan.train ? iteration / l->iters_per_epoch : 0;
}

/* Which images iteration `it` holds (under the lock: the permutation is shared). */
static void compose(SwnLoader *l, SwnBatchSlot *s, int64_t it) {
  const SwnBatchPlan *p = &l->plan;
  int64_t count = l->data->count;
  if (p->train) {
    int64_t epoch = epoch_of(l, it), pos = it % l->iters_per_epoch;
    if (epoch != l->order_epoch) permute(l, epoch);
    int64_t first = (pos * p->ranks + p->rank) * p->batch;
    s->n = p->batch;
    for (int b = 0; b < s->n; b++) s->indices[b] = l->order[(first + b) % count];
  } else {
    int64_t first;
    s->n = swn_evaluation_batch(count, p->batch, p->rank, p->ranks, it, &first);
    for (int b = 0; b < s->n; b++) s->indices[b] = first + b;
  }
  s->iteration = it, s->done = 0;
}

static bool claimable(const SwnLoader *l) {
  return l->claim_it < l->consumed + SWN_LOADER_DEPTH && l->claim_it < l->end;
}

/* Each thread takes a few images of the batch being handed out at a time (several threads
 * share a batch: a small batch keeps them all busy), prepares them unlocked, and the last to
 * finish a batch announces it. */
static void *work(void *arg) {
  SwnLoaderThread *t = arg;
  SwnLoader *l = t->loader;
  size_t image = (size_t)l->net->in_c * l->net->in_h * l->net->in_w;
  pthread_mutex_lock(&l->lock);
  for (;;) {
    while (!l->stop && !claimable(l)) pthread_cond_wait(&l->changed, &l->lock);
    if (l->stop) break;
    int64_t it = l->claim_it;
    SwnBatchSlot *s = &l->slot[it % SWN_LOADER_DEPTH];
    if (l->claim_image == 0) compose(l, s, it);
    int chunk = s->n / (4 * l->nthreads);
    int first = l->claim_image, n = chunk < 1 ? 1 : chunk;
    if (n > s->n - first) n = s->n - first;
    l->claim_image += n;
    if (l->claim_image == s->n) l->claim_it++, l->claim_image = 0;
    pthread_mutex_unlock(&l->lock);
    for (int b = first; b < first + n; b++) {
      uint64_t key = swn_augment_key(l->plan.seed, epoch_of(l, it), s->indices[b]);
      swn_fill_image(l->net, l->data, s->indices[b], l->plan.train, key, &t->scratch,
                     s->images + (size_t)b * image, &s->labels[b]);
    }
    pthread_mutex_lock(&l->lock);
    s->done += n;
    if (s->done == s->n) pthread_cond_broadcast(&l->changed);
  }
  pthread_mutex_unlock(&l->lock);
  return NULL;
}

void swn_loader_start(SwnLoader *l, const SwnNetwork *net, const SwnDataset *data,
                      const SwnBatchPlan *plan, int threads) {
  int64_t count = data->count;
  *l = (SwnLoader){
      .net = net,
      .data = data,
      .plan = *plan,
      .iters_per_epoch = swn_iterations_per_epoch(count, (int64_t)plan->batch * plan->ranks),
      .end = plan->train ? INT64_MAX
                         : swn_evaluation_batches(count, plan->batch, plan->rank, plan->ranks),
      .order_epoch = -1,
      .claim_it = plan->first,
      .consumed = plan->first,
      .nthreads = threads < 1                        ? 1
                  : threads > SWN_LOADER_MAX_THREADS ? SWN_LOADER_MAX_THREADS
                                                     : threads};
  if (plan->train) l->order = swn_alloc(sizeof(int64_t) * (size_t)count);
  size_t image = (size_t)net->in_c * net->in_h * net->in_w, batch = (size_t)plan->batch;
  for (int i = 0; i < SWN_LOADER_DEPTH; i++) {
    l->slot[i].images = swn_alloc(sizeof(float) * image * batch);
    l->slot[i].labels = swn_alloc(sizeof(int32_t) * batch);
    l->slot[i].indices = swn_alloc(sizeof(int64_t) * batch);
    l->slot[i].iteration = -1;
  }
  pthread_mutex_init(&l->lock, NULL);
  pthread_cond_init(&l->changed, NULL);
  l->threads = swn_alloc(sizeof *l->threads * (size_t)l->nthreads);
  for (int i = 0; i < l->nthreads; i++) {
    l->threads[i].loader = l;
    if (pthread_create(&l->threads[i].thread, NULL, work, &l->threads[i]))
      swn_fatal("cannot start data loader thread %d of %d", i + 1, l->nthreads);
  }
}

void swn_loader_next(SwnLoader *l, int64_t iteration, float *images, int32_t *labels) {
  if (iteration != l->consumed || iteration >= l->end)
    swn_fatal("internal: the loader was asked for batch %lld, not %lld", (long long)iteration,
              (long long)l->consumed);
  SwnBatchSlot *s = &l->slot[iteration % SWN_LOADER_DEPTH];
  pthread_mutex_lock(&l->lock);
  while (s->iteration != iteration || s->done != s->n) pthread_cond_wait(&l->changed, &l->lock);
  pthread_mutex_unlock(&l->lock);
  size_t image = (size_t)l->net->in_c * l->net->in_h * l->net->in_w;
  memcpy(images, s->images, sizeof(float) * image * (size_t)s->n);
  memcpy(labels, s->labels, sizeof(int32_t) * (size_t)s->n);
  pthread_mutex_lock(&l->lock);
  s->iteration = -1;
  l->consumed++;
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->lock);
}

void swn_loader_stop(SwnLoader *l) {
  pthread_mutex_lock(&l->lock);
  l->stop = true;
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->lock);
  for (int i = 0; i < l->nthreads; i++) {
    pthread_join(l->threads[i].thread, NULL);
    swn_free_image_scratch(&l->threads[i].scratch);
  }
  free(l->threads);
  pthread_mutex_destroy(&l->lock);
  pthread_cond_destroy(&l->changed);
  for (int i = 0; i < SWN_LOADER_DEPTH; i++)
    free(l->slot[i].images), free(l->slot[i].labels), free(l->slot[i].indices);
  free(l->order);
}
