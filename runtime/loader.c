#include "loader.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

int64_t swn_iterations_per_epoch(int64_t images, int64_t global_batch) {
  int64_t n = images / global_batch; /* an incomplete last batch is dropped */
  return n > 0 ? n : 1;
}

/* Fisher-Yates with counter-based draws: the permutation of epoch e depends on (seed, e) only. */
static void permute(SwnLoader *l, int64_t epoch) {
  int64_t n = l->data->count;
  for (int64_t i = 0; i < n; i++) l->order[i] = i;
  if (l->shuffle)
    for (int64_t i = n - 1; i > 0; i--) {
      int64_t j = (int64_t)(swn_hash3(l->seed, 0x73687566ull + (uint64_t)epoch, (uint64_t)i) %
                            (uint64_t)(i + 1));
      int64_t t = l->order[i];
      l->order[i] = l->order[j];
      l->order[j] = t;
    }
  l->order_epoch = epoch;
}

static void prepare(SwnLoader *l, int64_t iteration, SwnBatchSlot *s) {
  int64_t epoch = iteration / l->iters_per_epoch, pos = iteration % l->iters_per_epoch;
  if (epoch != l->order_epoch) permute(l, epoch);
  int64_t first = (pos * l->ranks + l->rank) * l->batch;
  for (int b = 0; b < l->batch; b++) l->indices[b] = l->order[(first + b) % l->data->count];
  swn_fill_batch(l->net, l->data, l->indices, l->batch, s->images, s->labels);
}

static void *produce(void *arg) {
  SwnLoader *l = arg;
  for (;;) {
    pthread_mutex_lock(&l->lock);
    SwnBatchSlot *s = &l->slot[l->next % 2];
    while (!l->stop && s->iteration >= 0) pthread_cond_wait(&l->changed, &l->lock);
    bool stop = l->stop;
    int64_t it = l->next;
    pthread_mutex_unlock(&l->lock);
    if (stop) return NULL;
    prepare(l, it, s);
    pthread_mutex_lock(&l->lock);
    s->iteration = it;
    l->next++;
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->lock);
  }
}

void swn_loader_start(SwnLoader *l, const SwnNetwork *net, const SwnDataset *data, int batch,
                      int rank, int ranks, bool shuffle, uint64_t seed, int64_t first_iteration) {
  *l = (SwnLoader){.net = net,
                   .data = data,
                   .batch = batch,
                   .rank = rank,
                   .ranks = ranks,
                   .shuffle = shuffle,
                   .seed = seed,
                   .iters_per_epoch = swn_iterations_per_epoch(data->count, (int64_t)batch * ranks),
                   .next = first_iteration,
                   .order_epoch = -1};
  l->order = swn_alloc(sizeof(int64_t) * (size_t)data->count);
  l->indices = swn_alloc(sizeof(int64_t) * (size_t)batch);
  size_t image = (size_t)data->c * data->h * data->w;
  for (int i = 0; i < 2; i++) {
    l->slot[i].images = swn_alloc(sizeof(float) * image * (size_t)batch);
    l->slot[i].labels = swn_alloc(sizeof(int32_t) * (size_t)batch);
    l->slot[i].iteration = -1;
  }
  pthread_mutex_init(&l->lock, NULL);
  pthread_cond_init(&l->changed, NULL);
  if (pthread_create(&l->thread, NULL, produce, l))
    swn_fatal("cannot start the data loader thread");
}

void swn_loader_next(SwnLoader *l, int64_t iteration, float *images, int32_t *labels) {
  SwnBatchSlot *s = &l->slot[iteration % 2];
  pthread_mutex_lock(&l->lock);
  while (s->iteration != iteration) pthread_cond_wait(&l->changed, &l->lock);
  pthread_mutex_unlock(&l->lock);
  size_t image = (size_t)l->data->c * l->data->h * l->data->w;
  memcpy(images, s->images, sizeof(float) * image * (size_t)l->batch);
  memcpy(labels, s->labels, sizeof(int32_t) * (size_t)l->batch);
  pthread_mutex_lock(&l->lock);
  s->iteration = -1;
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->lock);
}

void swn_loader_stop(SwnLoader *l) {
  pthread_mutex_lock(&l->lock);
  l->stop = true;
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->lock);
  pthread_join(l->thread, NULL);
  pthread_mutex_destroy(&l->lock);
  pthread_cond_destroy(&l->changed);
  for (int i = 0; i < 2; i++) free(l->slot[i].images), free(l->slot[i].labels);
  free(l->order);
  free(l->indices);
}
