/* swn_main: the generated program's life. Options, memory, data, initialisation or resume,
 * the training loop (load, forward, backward, update), evaluation, checkpoints, summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "conv.h"
#include "profile.h"
#include "train.h"
#include "util.h"

typedef struct Trainer {
  const SwnNetwork *net;
  SwnOptions o;
  SwnDataset train, test;
  SwnStep step;
  SwnProgress progress;
  SwnProfile *profile;
} Trainer;

void swn_gradients_ready(SwnStep *s, int bucket, int64_t offset, int64_t words) {
  (void)offset, (void)words; /* a distributed program starts the bucket's allreduce here */
  if (bucket != s->buckets_ready) swn_fatal("internal: gradient bucket %d completed out of order", bucket);
  s->buckets_ready++;
}

static float *input_of(const Trainer *t) { return t->step.image + t->net->input_offset * t->step.batch; }
static int32_t *labels_of(const Trainer *t) {
  return (int32_t *)(t->step.image + t->net->label_offset * t->step.batch);
}

static float metric(const Trainer *t, bool loss) {
  float sum = 0;
  for (int i = 0; i < t->net->nmetrics; i++)
    if (t->net->metrics[i].is_loss == loss) {
      sum += t->step.fixed[t->net->metrics[i].offset];
      if (!loss) break; /* the first accuracy */
    }
  return sum;
}

static void allocate(Trainer *t) {
  const SwnNetwork *net = t->net;
  int64_t max_batch = t->o.batch > t->o.test_batch ? t->o.batch : t->o.test_batch;
  SwnStep *s = &t->step;
  s->image = swn_alloc(sizeof(float) * (size_t)(net->image_words * max_batch));
  s->fixed = swn_alloc(sizeof(float) * (size_t)net->fixed_words);
  s->params = swn_alloc(sizeof(float) * (size_t)net->param_words);
  s->grads = swn_alloc(sizeof(float) * (size_t)net->param_words);
  s->momentum = swn_alloc(sizeof(float) * (size_t)net->param_words);
  s->state = swn_alloc(sizeof(float) * (size_t)net->state_words);
  s->ws = swn_alloc(sizeof(float) * net->workspace());
  s->conv = swn_conv_state_new(net, t->o.autotune, stdout);
  s->momentum_coef = net->train.momentum;
  s->weight_decay = net->train.weight_decay;
}

static void release(Trainer *t) {
  SwnStep *s = &t->step;
  free(s->image), free(s->fixed), free(s->params), free(s->grads), free(s->momentum), free(s->state), free(s->ws);
  swn_conv_state_free(s->conv);
  swn_free_dataset(&t->train);
  swn_free_dataset(&t->test);
}

/* The whole test set, in order, in batches of test_batch (the last may be smaller). */
static void evaluate(Trainer *t, float *loss, float *accuracy) {
  const SwnDataset *d = &t->test;
  int64_t *indices = swn_alloc(sizeof(int64_t) * (size_t)t->o.test_batch);
  double loss_sum = 0, acc_sum = 0;
  for (int64_t first = 0; first < d->count; first += t->o.test_batch) {
    int n = (int)(d->count - first < t->o.test_batch ? d->count - first : t->o.test_batch);
    for (int i = 0; i < n; i++) indices[i] = first + i;
    t->step.batch = n;
    swn_fill_batch(t->net, d, indices, n, input_of(t), labels_of(t));
    t->net->forward(&t->step, false);
    loss_sum += (double)metric(t, true) * n;
    acc_sum += (double)metric(t, false) * n;
  }
  free(indices);
  *loss = (float)(loss_sum / (double)d->count);
  *accuracy = (float)(acc_sum / (double)d->count);
}

static void test_and_report(Trainer *t, int64_t epoch, int64_t iteration) {
  float loss, accuracy;
  evaluate(t, &loss, &accuracy);
  swn_progress_test(&t->progress, epoch, iteration, loss, accuracy, t->test.count);
}

static void save(Trainer *t, int64_t iterations) {
  if (t->o.checkpoint)
    swn_save_checkpoint(t->net, t->o.checkpoint, t->step.params, t->step.momentum, t->step.state, iterations,
                        t->o.seed);
}

static void train_step(Trainer *t, SwnLoader *loader, int64_t it, int64_t total) {
  t->step.batch = (int)t->o.batch;
  t->step.iteration = (uint64_t)it;
  t->step.first_image = 0;
  swn_loader_next(loader, it, input_of(t), labels_of(t));
  t->step.profile = t->o.profile ? t->profile : NULL;
  swn_conv_timing(t->step.conv, true);
  t->net->forward(&t->step, true);
  t->step.buckets_ready = 0;
  t->net->backward(&t->step);
  if (t->step.buckets_ready != t->net->nbuckets)
    swn_fatal("internal: backward completed %d of %d gradient buckets", t->step.buckets_ready, t->net->nbuckets);
  float lr = swn_learning_rate(&t->net->train, it, total);
  t->net->update(&t->step, lr);
  t->step.profile = NULL; /* evaluation is neither profiled nor autotuned */
  swn_conv_timing(t->step.conv, false);
  float loss = metric(t, true);
  if (!isfinite(loss))
    swn_fatal("training diverged: the loss is %f at iteration %lld (try a smaller learning rate)", loss,
              (long long)it + 1);
  swn_progress_iteration(&t->progress, it, loss);
  if ((it + 1) % t->o.display == 0 || it + 1 == total) swn_progress_line(&t->progress, it, lr);
}

static int train(Trainer *t, int64_t start) {
  const SwnOptions *o = &t->o;
  int64_t per_epoch = swn_iterations_per_epoch(t->train.count, (int)o->batch);
  int64_t total = o->iterations > 0 ? o->iterations : o->epochs * per_epoch;
  bool testing = t->net->train.eval_interval > 0 && t->test.count > 0;
  if (start >= total) {
    printf("nothing to train: at iteration %lld of %lld\n", (long long)start, (long long)total);
    save(t, start); /* e.g. --iterations 0 --checkpoint F writes the initial weights */
    return 0;
  }
  if (!o->quiet)
    printf("training %s: %lld iterations of %lld images (%lld per epoch), %lld training and %lld test images, %d threads\n",
           t->net->name, (long long)(total - start), (long long)o->batch, (long long)per_epoch,
           (long long)t->train.count, (long long)t->test.count, o->threads);
  SwnLoader loader;
  swn_loader_start(&loader, t->net, &t->train, (int)o->batch, o->shuffle, o->seed, start);
  swn_progress_start(&t->progress, o, start, total, per_epoch);
  bool tested_last = false;
  for (int64_t it = start; it < total; it++) {
    train_step(t, &loader, it, total);
    int64_t done = it + 1;
    tested_last = false;
    if (o->checkpoint_every && done % o->checkpoint_every == 0) save(t, done);
    if (done % per_epoch == 0) {
      int64_t epoch = done / per_epoch;
      if (testing && epoch % t->net->train.eval_interval == 0) test_and_report(t, epoch, done), tested_last = true;
      save(t, done);
    }
  }
  swn_loader_stop(&loader);
  if (testing && !tested_last) test_and_report(t, (total + per_epoch - 1) / per_epoch, total);
  save(t, total);
  if (o->save_gradients)
    swn_save_checkpoint(t->net, o->save_gradients, t->step.grads, NULL, t->step.state, total, o->seed);
  swn_progress_finish(&t->progress, total - start, (total - start) * o->batch);
  if (t->profile) swn_profile_report(t->profile, stdout);
  return 0;
}

int swn_main(const SwnNetwork *net, int argc, char **argv) {
  const char *slash = strrchr(argv[0], '/');
  swn_program = slash ? slash + 1 : argv[0];
  Trainer t = {.net = net};
  swn_parse_options(net, argc, argv, &t.o);
  swk_set_threads(t.o.threads);
  allocate(&t);
  t.step.seed = t.o.seed;
  if (t.o.profile) t.profile = swn_profile_new(net);
  int64_t start = 0;
  if (t.o.resume) {
    swn_load_checkpoint(net, t.o.resume, t.step.params, t.step.momentum, t.step.state, &start, &t.o.seed);
    t.step.seed = t.o.seed;
  } else if (t.o.init_weights) {
    uint64_t ignored_seed;
    int64_t ignored_iteration;
    swn_load_checkpoint(net, t.o.init_weights, t.step.params, NULL, t.step.state, &ignored_iteration, &ignored_seed);
  } else {
    swn_init_parameters(net, t.o.seed, t.step.params, t.step.state);
  }
  bool want_test = t.o.eval_only || net->train.eval_interval > 0;
  if (want_test) swn_load_dataset(net, &t.o, false, &t.test);
  int status = 0;
  if (t.o.eval_only) {
    float loss, accuracy;
    evaluate(&t, &loss, &accuracy);
    printf("test: loss %.4f  accuracy %.2f%%  (%lld images)\n", loss, 100 * accuracy, (long long)t.test.count);
  } else {
    swn_load_dataset(net, &t.o, true, &t.train);
    status = train(&t, start);
  }
  release(&t);
  swn_profile_free(t.profile);
  return status;
}
