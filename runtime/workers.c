/* The workers of one process, one per core group (workers.h). Workers 1.. are threads that
 * wait for a round, run forward and backward on their step, and report; worker 0 is the
 * caller's. The combination order is fixed (worker 0's gradients += worker 1's, then 2's, ...)
 * whichever thread completes a bucket last, so runs are reproducible. */
#include "workers.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "profile.h"
#include "util.h"

typedef struct Worker {
  SwnStep *step; /* worker 0: the trainer's; the others: own */
  SwnStep own;
  int first, images; /* its share of the batch: images first .. first + images - 1 */
  pthread_t thread;
  struct SwnWorkers *all;
} Worker;

struct SwnWorkers {
  const SwnNetwork *net;
  int count;
  int64_t batch;
  Worker *worker;
  float *input; /* the loaded batch, before it is shared out (several workers) */
  int32_t *labels;
  int *bucket_workers; /* per bucket: the workers that completed it this round */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int64_t round; /* rounds started */
  int finished;  /* workers 1.. done with this round */
  bool stop;
};

static int64_t input_words(const SwnNetwork *net) {
  return (int64_t)net->in_c * net->in_h * net->in_w;
}

float *swn_batch_input(const SwnPlan *plan, const SwnStep *s, int64_t batch) {
  return s->image + plan->input_offset * batch;
}

int32_t *swn_batch_labels(const SwnPlan *plan, const SwnStep *s, int64_t batch) {
  return (int32_t *)(s->image + plan->label_offset * batch);
}

static void run_round(Worker *k) {
  const SwnNetwork *net = k->all->net;
  swn_conv_timing(k->step->conv, true);
  net->forward(k->step);
  k->step->buckets_ready = 0;
  net->backward(k->step);
  if (k->step->buckets_ready != net->nbuckets)
    swn_fatal("internal: backward completed %d of %d gradient buckets", k->step->buckets_ready,
              net->nbuckets);
}

static void *work(void *arg) {
  Worker *k = arg;
  SwnWorkers *w = k->all;
  int64_t done = 0;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->stop && w->round == done) pthread_cond_wait(&w->changed, &w->lock);
    if (w->stop) break;
    done = w->round;
    pthread_mutex_unlock(&w->lock);
    run_round(k);
    pthread_mutex_lock(&w->lock);
    w->finished++;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

static void share_out(SwnWorkers *w) {
  for (int i = 0; i < w->count; i++) {
    Worker *k = &w->worker[i];
    k->images = (int)(w->batch / w->count + (i < w->batch % w->count));
    k->first = i ? w->worker[i - 1].first + w->worker[i - 1].images : 0;
  }
}

static void open_worker(SwnWorkers *w, Worker *k, const SwnStep *main, int64_t images,
                        bool autotune) {
  const SwnNetwork *net = w->net;
  SwnStep *s = &k->own;
  *s = *main; /* the shared weights, optimiser settings and seed; no profile, no allreduce */
  s->profile = NULL;
  s->image = swn_alloc(sizeof(float) * (size_t)(net->plan.image_words * images));
  s->fixed = swn_alloc(sizeof(float) * (size_t)net->plan.fixed_words);
  s->grads = swn_alloc(sizeof(float) * (size_t)net->param_words);
  s->state = swn_alloc(sizeof(float) * (size_t)net->state_words);
  memcpy(s->state, main->state, sizeof(float) * (size_t)net->state_words);
  s->ws = swn_alloc(sizeof(float) * net->workspace());
  s->conv = swn_conv_state_new(net, autotune, NULL); /* worker 0 reports the choices */
  k->step = s;
  k->all = w;
  if (pthread_create(&k->thread, NULL, work, k))
    swn_fatal("cannot start the worker of core group %d", (int)(k - w->worker));
}

SwnWorkers *swn_workers_open(const SwnNetwork *net, SwnStep *main, int count, int64_t batch,
                             bool autotune) {
  SwnWorkers *w = swn_alloc(sizeof *w);
  w->net = net, w->batch = batch;
  w->count = count < batch ? count : (int)batch; /* no idle workers */
  w->worker = swn_alloc(sizeof(Worker) * (size_t)w->count);
  w->worker[0] = (Worker){.step = main, .all = w};
  main->workers = w;
  share_out(w);
  if (w->count == 1) return w;
  w->input = swn_alloc(sizeof(float) * (size_t)(input_words(net) * batch));
  w->labels = swn_alloc(sizeof(int32_t) * (size_t)batch);
  w->bucket_workers = swn_alloc(sizeof(int) * (size_t)(net->nbuckets + 1));
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  for (int i = 1; i < w->count; i++)
    open_worker(w, &w->worker[i], main, w->worker[1].images, autotune);
  return w;
}

void swn_workers_close(SwnWorkers *w) {
  if (!w) return;
  if (w->count > 1) {
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    for (int i = 1; i < w->count; i++) {
      SwnStep *s = &w->worker[i].own;
      pthread_join(w->worker[i].thread, NULL);
      free(s->image), free(s->fixed), free(s->grads), free(s->state), free(s->ws);
      swn_conv_state_free(s->conv);
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->changed);
  }
  free(w->input), free(w->labels), free(w->bucket_workers), free(w->worker), free(w);
}

int swn_workers_count(const SwnWorkers *w) { return w->count; }

float *swn_workers_input(SwnWorkers *w) {
  return w->count > 1 ? w->input : swn_batch_input(&w->net->plan, w->worker[0].step, w->batch);
}

int32_t *swn_workers_labels(SwnWorkers *w) {
  return w->count > 1 ? w->labels : swn_batch_labels(&w->net->plan, w->worker[0].step, w->batch);
}

void swn_workers_start(SwnWorkers *w, uint64_t iteration, uint64_t first_image) {
  int64_t words = input_words(w->net);
  for (int i = 0; i < w->count; i++) {
    Worker *k = &w->worker[i];
    SwnStep *s = k->step;
    s->iteration = iteration;
    s->first_image = first_image + (uint64_t)k->first; /* dropout masks as with one worker */
    s->batch = k->images;
    if (w->count == 1) return; /* the loader wrote worker 0's input */
    memcpy(swn_batch_input(&w->net->plan, s, s->batch), w->input + k->first * words,
           sizeof(float) * (size_t)(words * s->batch));
    memcpy(swn_batch_labels(&w->net->plan, s, s->batch), w->labels + k->first,
           sizeof(int32_t) * (size_t)s->batch);
  }
  memset(w->bucket_workers, 0, sizeof(int) * (size_t)(w->net->nbuckets + 1));
  pthread_mutex_lock(&w->lock);
  w->finished = 0;
  w->round++;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
}

/* Worker 0's losses and accuracies become the share-weighted mean of all workers'. */
static void combine_metrics(SwnWorkers *w) {
  const SwnNetwork *net = w->net;
  for (int m = 0; m < net->nmetrics; m++) {
    int64_t at = net->metrics[m].offset;
    double sum = 0;
    for (int i = 0; i < w->count; i++)
      sum += (double)w->worker[i].step->fixed[at] * w->worker[i].images;
    w->worker[0].step->fixed[at] = (float)(sum / (double)w->batch);
  }
}

void swn_workers_finish(SwnWorkers *w) {
  if (w->count == 1) return;
  pthread_mutex_lock(&w->lock);
  while (w->finished < w->count - 1) pthread_cond_wait(&w->changed, &w->lock);
  pthread_mutex_unlock(&w->lock);
  combine_metrics(w);
}

bool swn_workers_first(const SwnStep *s) { return !s->workers || s == s->workers->worker[0].step; }

bool swn_workers_bucket_ready(SwnStep *s, int bucket, int64_t offset, int64_t words) {
  SwnWorkers *w = s->workers;
  if (!w || w->count == 1) return true;
  /* Each worker's gradients are the mean over its images: weighted by its share, summed. */
  swk_scale(words, s->grads + offset, (float)s->batch / (float)w->batch);
  pthread_mutex_lock(&w->lock);
  bool last = ++w->bucket_workers[bucket] == w->count;
  pthread_mutex_unlock(&w->lock);
  if (!last) return false;
  /* the worker that finishes last sums: which one depends on thread timing here, so its
   * estimated work is charged to none (--profile and --comm-profile stay the same each run) */
  swn_target_exclude_begin();
  float *total = w->worker[0].step->grads + offset;
  for (int i = 1; i < w->count; i++) swk_sum_into(words, total, w->worker[i].step->grads + offset);
  swn_target_exclude_end();
  return true;
}

void swn_workers_average_state(SwnWorkers *w) {
  int64_t n = w->net->state_words;
  if (w->count == 1 || !n) return;
  float *mean = w->worker[0].step->state;
  for (int64_t j = 0; j < n; j++) {
    double sum = 0;
    for (int i = 0; i < w->count; i++) sum += w->worker[i].step->state[j];
    mean[j] = (float)(sum / w->count);
  }
  for (int i = 1; i < w->count; i++)
    memcpy(w->worker[i].step->state, mean, sizeof(float) * (size_t)n);
}
