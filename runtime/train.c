/* swn_main: the generated program's life. Options, memory, data, initialisation or resume,
 * the training loop (load, forward, backward, update), evaluation, checkpoints, summary.
 * Every run is data-parallel over the MPI ranks it was started with (one without mpirun):
 * rank 0 initialises or resumes and broadcasts the weights, speaks, and writes files. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv.h"
#include "distributed.h"
#include "infer.h"
#include "interrupt.h"
#include "iteration_profile.h"
#include "loader.h"
#include "profile.h"
#include "ranks.h"
#include "threads.h"
#include "train.h"
#include "util.h"
#include "workers.h"

typedef struct Trainer {
  const SwnNetwork *net;
  SwnOptions o;
  SwnDataset train, test;
  SwnStep step;
  SwnProgress progress;
  SwnProfile *profile;
  SwnDistributed dist;
  SwnWorkers *workers; /* one per core group: training splits each batch among them */
  int rank, ranks;
  float *center;    /* EASGD's center weights (the model evaluated and saved), or NULL */
  SwnTiming timing; /* --comm-profile */
  int stop_signal;  /* SIGINT or SIGTERM: training stops after this iteration */
} Trainer;

/* The losses' sum, or the first accuracy, after a training step or an evaluation batch. */
static float metric(const Trainer *t, bool loss, bool eval) {
  float sum = 0;
  for (int i = 0; i < t->net->nmetrics; i++)
    if (t->net->metrics[i].is_loss == loss) {
      const SwnMetric *m = &t->net->metrics[i];
      sum += t->step.fixed[eval ? m->eval_offset : m->offset];
      if (!loss) break; /* the first accuracy */
    }
  return sum;
}

static int64_t larger(int64_t a, int64_t b) { return a > b ? a : b; }

/* --eval-only and --infer: no training step, no training set. */
static bool evaluates_only(const SwnOptions *o) { return o->eval_only || o->infer; }

/* Training and evaluation are never live at once: one arena holds either step's plan at its
 * batch (evaluation needs no room for backward, so its batch can be larger in the same space). */
static void allocate(Trainer *t) {
  const SwnNetwork *net = t->net;
  SwnStep *s = &t->step;
  int64_t image = larger(evaluates_only(&t->o) ? 0 : net->plan.image_words * t->o.batch,
                         net->eval_plan.image_words * t->o.test_batch);
  s->image = swn_alloc(sizeof(float) * (size_t)image);
  s->fixed =
      swn_alloc(sizeof(float) * (size_t)larger(net->plan.fixed_words, net->eval_plan.fixed_words));
  s->params = swn_alloc(sizeof(float) * (size_t)net->param_words);
  /* what the allreduce sums lives where the distributed runtime wants it (shared memory on one
   * machine); folded: backward adds the gradients into momentum (passes/fold_gradients.c) */
  float *shared = swn_distributed_gradient_pool(&t->dist);
  bool folded = net->gradients_in_momentum;
  s->momentum = folded && shared
                    ? shared
                    : swn_alloc(sizeof(float) * (size_t)(net->param_words * net->moment_pools));
  s->grads = folded   ? s->momentum
             : shared ? shared
                      : swn_alloc(sizeof(float) * (size_t)net->param_words);
  s->state = swn_alloc(sizeof(float) * (size_t)net->state_words);
  if (net->train.optimizer == SWN_OPT_EASGD)
    t->center = swn_alloc(sizeof(float) * (size_t)net->param_words);
  s->ws = swn_alloc(sizeof(float) * net->workspace());
  s->conv = swn_conv_state_new(net, t->o.autotune, stdout);
  s->dist = &t->dist;
  s->momentum_coef = swn_distributed_update_momentum(&t->dist, net->train.momentum);
  s->weight_decay = net->train.weight_decay;
}

static void release(Trainer *t) {
  SwnStep *s = &t->step;
  float *shared = swn_distributed_gradient_pool(&t->dist); /* freed with the window */
  if (s->grads != s->momentum && s->grads != shared) free(s->grads);
  if (s->momentum != shared) free(s->momentum);
  free(s->image), free(s->fixed), free(s->params), free(s->state), free(s->ws);
  swn_conv_state_free(s->conv);
  swn_workers_close(t->workers);
  swn_distributed_close(&t->dist);
  free(t->center);
  swn_free_dataset(&t->train);
  swn_free_dataset(&t->test);
}

/* Batch-norm running statistics differ between workers and ranks (each normalises its own
 * images): they evaluate and save their mean. */
static void average_state(Trainer *t) {
  if (t->workers) swn_workers_average_state(t->workers);
  if (t->ranks <= 1 || !t->net->state_words) return;
  double *sum = swn_alloc(sizeof(double) * (size_t)t->net->state_words);
  for (int64_t i = 0; i < t->net->state_words; i++) sum[i] = t->step.state[i];
  swn_sum_doubles(sum, (int)t->net->state_words);
  for (int64_t i = 0; i < t->net->state_words; i++) t->step.state[i] = (float)(sum[i] / t->ranks);
  free(sum);
}

/* The whole test set, in order, in batches of test_batch (the last may be smaller); rank r
 * evaluates batches r, r + ranks, ... */
static void evaluate(Trainer *t, float *loss, float *accuracy) {
  const SwnDataset *d = &t->test;
  average_state(t);
  swn_distributed_settle(&t->dist); /* rooted: rank 0's model on every rank */
  float *local = t->step.params;
  if (t->center) t->step.params = t->center; /* EASGD: the center is the model */
  SwnBatchPlan plan = {.batch = (int)t->o.test_batch, .rank = t->rank, .ranks = t->ranks};
  SwnLoader loader;
  swn_loader_start(&loader, t->net, d, &plan, t->o.loader_threads);
  double sums[2] = {0, 0}; /* loss, accuracy, times images */
  int64_t batches = swn_evaluation_batches(d->count, plan.batch, t->rank, t->ranks);
  for (int64_t k = 0; k < batches; k++) {
    int64_t first;
    int n = swn_evaluation_batch(d->count, plan.batch, t->rank, t->ranks, k, &first);
    t->step.batch = n;
    swn_loader_next(&loader, k, swn_batch_input(&t->net->eval_plan, &t->step, n),
                    swn_batch_labels(&t->net->eval_plan, &t->step, n));
    t->net->evaluate(&t->step);
    sums[0] += (double)metric(t, true, true) * n;
    sums[1] += (double)metric(t, false, true) * n;
  }
  swn_loader_stop(&loader);
  t->step.params = local;
  swn_sum_doubles(sums, 2);
  *loss = (float)(sums[0] / (double)d->count);
  *accuracy = (float)(sums[1] / (double)d->count);
}

static void test_and_report(Trainer *t, int64_t iteration) {
  float loss, accuracy;
  evaluate(t, &loss, &accuracy);
  swn_progress_test(&t->progress, iteration, loss, accuracy, t->test.count);
}

/* Collective: every rank calls it, rank 0 writes. */
static void save(Trainer *t, int64_t iterations) {
  if (!t->o.checkpoint) return;
  average_state(t);
  if (t->rank == 0)
    swn_save_checkpoint(t->net, t->o.checkpoint, t->center ? t->center : t->step.params,
                        t->step.momentum, t->step.state, iterations, t->o.seed);
}

/* Images an iteration trains on: every rank's micro-batches. */
static int64_t iteration_images(const Trainer *t) {
  return t->o.batch * t->ranks * t->net->train.iter_size;
}

/* Clipping by the global norm (train.clip_gradients): once every bucket is summed over the
 * ranks, every rank scales the same mean gradient by the same factor, limit / (norm + 1e-6)
 * where that is below 1, as PyTorch's clip_grad_norm_. */
static void clip_gradients(Trainer *t) {
  float limit = t->net->train.clip_gradients;
  if (!(limit > 0)) return;
  for (int b = 0; b < t->net->nbuckets; b++) swn_gradients_wait(&t->step, b);
  double norm = sqrt(swk_sum_squares(t->net->param_words, t->step.grads));
  double factor = limit / (norm + 1e-6);
  if (factor < 1) swk_scale(t->net->param_words, t->step.grads, (float)factor);
}

/* Micro-batch k of iteration `it`: forward and backward on every worker, each on its share of
 * the batch; this thread is worker 0 (its times are the phases'). Returns its mean loss. */
static double train_micro_batch(Trainer *t, int k, int64_t it, double *forward, double *backward,
                                double started) {
  swn_distributed_micro_batch(&t->dist, k);
  /* images numbered across ranks and micro-batches: dropout masks as in one process */
  uint64_t first = ((uint64_t)k * (uint64_t)t->ranks + (uint64_t)t->rank) * (uint64_t)t->o.batch;
  swn_workers_start(t->workers, (uint64_t)it, first);
  t->net->forward(&t->step);
  double forward_end = swn_target_now();
  t->step.buckets_ready = 0;
  t->net->backward(&t->step);
  swn_workers_finish(t->workers);
  double backward_end = swn_target_now();
  if (t->step.buckets_ready != t->net->nbuckets)
    swn_fatal("internal: backward completed %d of %d gradient buckets", t->step.buckets_ready,
              t->net->nbuckets);
  *forward += forward_end - started, *backward += backward_end - forward_end;
  return metric(t, true, false);
}

static void train_step(Trainer *t, SwnLoader *loader, int64_t it, int64_t total) {
  int micro_batches = (int)t->net->train.iter_size;
  t->step.profile = t->o.profile ? t->profile : NULL;
  swn_conv_timing(t->step.conv, true);
  SwnTrainConfig schedule = t->net->train;
  if (t->o.lr > 0) schedule.lr = t->o.lr; /* --lr */
  float lr = swn_learning_rate(&schedule, it, total) * t->dist.lr_scale;
  /* a folded network's backward leaves momentum x v + lr x g, over the ranks: their sum is
   * Caffe's v before its decay term */
  t->step.fold_scale = lr / (float)t->ranks;
  t->step.fold_keep = swn_distributed_fold_keep(&t->dist, t->net->train.momentum);
  double phase[4], forward = 0, backward = 0, loss_sum = 0;
  for (int k = 0; k < micro_batches; k++) {
    swn_loader_next(loader, it * micro_batches + k, swn_workers_input(t->workers),
                    swn_workers_labels(t->workers));
    double started = swn_target_now();
    if (k == 0) {
      phase[0] = started;
      /* before any worker can complete a bucket */
      swn_distributed_begin(&t->dist, it / t->progress.iters_per_epoch);
    }
    loss_sum += train_micro_batch(t, k, it, &forward, &backward, started);
  }
  double update_start = swn_target_now();
  if (swn_distributed_updates(&t->dist)) clip_gradients(t);
  if (t->center) swn_distributed_elastic(&t->dist, lr, t->net->train.elastic);
  if (swn_distributed_updates(&t->dist)) t->net->update(&t->step, lr);
  swn_distributed_end(&t->dist);
  phase[1] = phase[0] + forward, phase[2] = phase[1] + backward;
  phase[3] = phase[2] + swn_target_now() - update_start;
  if (t->o.comm_profile && (it > 0 || total == 1)) swn_timing_record(&t->timing, &t->dist, phase);
  t->step.profile = NULL; /* evaluation is neither profiled nor autotuned */
  swn_conv_timing(t->step.conv, false);
  /* one collective: the mean loss, and whether a rank was asked to stop (all stop together) */
  double sums[2] = {loss_sum / micro_batches, swn_interrupt_signal() != 0};
  swn_sum_doubles(sums, 2);
  float loss = (float)(sums[0] / t->ranks);
  if (sums[1] > 0) t->stop_signal = swn_interrupt_signal() ? swn_interrupt_signal() : SIGTERM;
  if (!isfinite(loss))
    swn_fatal("training diverged: the loss is %f at iteration %lld (try a smaller learning rate)",
              loss, (long long)it + 1);
  swn_progress_iteration(&t->progress, it, loss);
  if ((it + 1) % t->o.display == 0 || it + 1 == total) swn_progress_line(&t->progress, it, lr);
}

static const char *parallelism(const Trainer *t) {
  static char text[64];
  int groups = swn_workers_count(t->workers);
  if (swk_core_groups() > 1)
    snprintf(text, sizeof text, "%d core group%s", groups, groups == 1 ? "" : "s");
  else
    snprintf(text, sizeof text, "%d thread%s", t->o.threads, t->o.threads == 1 ? "" : "s");
  return text;
}

/* --iterations, or --epochs of whole batches; bounded so that counts of images cannot overflow. */
static int64_t total_iterations(const Trainer *t, int64_t per_epoch) {
  const SwnOptions *o = &t->o;
  int64_t total = o->iterations, images;
  if (!total && __builtin_mul_overflow(o->epochs, per_epoch, &total)) total = INT64_MAX;
  if (total > SWN_COUNT_MAX || __builtin_mul_overflow(total, iteration_images(t), &images) ||
      images > SWN_COUNT_MAX) {
    if (o->iterations)
      swn_fatal("--iterations %lld of %lld images are more images than a run can count (%lld)",
                (long long)total, (long long)iteration_images(t), (long long)SWN_COUNT_MAX);
    swn_fatal("--epochs %lld of %lld iterations of %lld images are more images than a run can "
              "count (%lld)",
              (long long)o->epochs, (long long)per_epoch, (long long)iteration_images(t),
              (long long)SWN_COUNT_MAX);
  }
  return total;
}

static void announce(const Trainer *t, int64_t iterations, int64_t per_epoch) {
  if (!t->o.quiet)
    printf("training %s: %lld iteration%s of %lld images (%lld per epoch), %lld training and %lld "
           "test images, %s%s\n",
           t->net->name, (long long)iterations, iterations == 1 ? "" : "s",
           (long long)iteration_images(t), (long long)per_epoch, (long long)t->train.count,
           (long long)t->test.count, parallelism(t), t->ranks > 1 ? " per rank" : "");
  swn_distributed_describe(&t->dist, &t->o, stdout);
}

/* Iterations start..total, with their tests and checkpoints; a signal stops them early (every
 * rank at the same iteration). Returns the iterations done in all. */
static int64_t train_loop(Trainer *t, int64_t start, int64_t total, int64_t per_epoch) {
  const SwnOptions *o = &t->o;
  const SwnTrainConfig *cfg = &t->net->train;
  bool testing = (cfg->eval_interval > 0 || cfg->test_interval > 0) && t->test.count > 0;
  SwnBatchPlan plan = {.train = true,
                       .batch = (int)o->batch,
                       .rank = t->rank,
                       .ranks = t->ranks,
                       .shuffle = o->shuffle,
                       .seed = o->seed,
                       .first = start * cfg->iter_size};
  SwnLoader loader;
  swn_loader_start(&loader, t->net, &t->train, &plan, o->loader_threads);
  int64_t done = start;
  bool tested_last = false;
  while (done < total && !t->stop_signal) {
    train_step(t, &loader, done, total);
    done++;
    tested_last = false;
    if (o->checkpoint_every && done % o->checkpoint_every == 0) save(t, done);
    bool epoch_end = done % per_epoch == 0;
    int64_t epoch = (done + per_epoch - 1) / per_epoch;
    if (testing && ((epoch_end && cfg->eval_interval > 0 && epoch % cfg->eval_interval == 0) ||
                    (cfg->test_interval > 0 && done % cfg->test_interval == 0)))
      test_and_report(t, done), tested_last = true;
    if (epoch_end) save(t, done);
  }
  swn_loader_stop(&loader);
  if (testing && !tested_last && !t->stop_signal) test_and_report(t, total);
  return done;
}

static void report_interrupt(const Trainer *t, int64_t done, int64_t total) {
  printf("%sinterrupted by %s after iteration %lld of %lld%s%s\n",
         t->progress.tty ? "\r\033[K" : "", t->stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
         (long long)done, (long long)total, t->o.checkpoint ? ": saving " : "",
         t->o.checkpoint ? t->o.checkpoint : "");
  fflush(stdout);
}

static int train(Trainer *t, int64_t start) {
  const SwnOptions *o = &t->o;
  int64_t per_epoch = swn_iterations_per_epoch(t->train.count, iteration_images(t));
  int64_t total = total_iterations(t, per_epoch);
  if (start >= total) {
    printf("nothing to train: at iteration %lld of %lld\n", (long long)start, (long long)total);
    save(t, start); /* e.g. --iterations 0 --epochs 0 --checkpoint F writes the initial weights */
    return 0;
  }
  announce(t, total - start, per_epoch);
  swn_progress_start(&t->progress, o, iteration_images(t), start, total, per_epoch);
  swn_interrupt_catch();
  int64_t end = train_loop(t, start, total, per_epoch);
  if (t->stop_signal) report_interrupt(t, end, total);
  save(t, end);
  if (o->save_gradients && t->rank == 0)
    swn_save_checkpoint(t->net, o->save_gradients, t->step.grads, NULL, t->step.state, end,
                        o->seed);
  swn_progress_finish(&t->progress, end - start, (end - start) * iteration_images(t));
  swn_distributed_report(&t->dist, end - start, swn_now() - t->progress.start, stdout);
  if (o->comm_profile && t->rank == 0)
    swn_timing_write(&t->timing, o->comm_profile, t->net->name,
                     (int)(iteration_images(t) / t->ranks));
  if (t->profile)
    swn_profile_report(t->profile, (int)(iteration_images(t) / t->ranks),
                       swn_workers_count(t->workers), stdout);
  if (t->profile && o->profile_json && t->rank == 0)
    swn_profile_write_json(t->profile, o->profile_json, (int)(iteration_images(t) / t->ranks));
  int caught = swn_interrupt_signal(); /* during the last save: honoured after it */
  swn_interrupt_release();
  if (!t->stop_signal && caught) t->stop_signal = caught, report_interrupt(t, end, total);
  return t->stop_signal ? 128 + t->stop_signal : 0;
}

/* EASGD moves the center by lr x elastic x (sum of the ranks' weights - ranks x center): a
 * factor lr x elastic x ranks of 1 or more overshoots. */
static void check_elastic(const Trainer *t) {
  const SwnTrainConfig *c = &t->net->train;
  double factor = (double)c->lr * c->elastic * t->ranks;
  if (c->optimizer == SWN_OPT_EASGD && factor >= 1)
    swn_fatal("easgd with lr %g, elastic %g and %d ranks moves the center by %g of the distance "
              "per iteration; "
              "it must be below 1 (lower train.elastic)",
              c->lr, c->elastic, t->ranks, factor);
}

/* Rank 0's weights (initialised, resumed or loaded) on every rank; returns the first iteration. */
static int64_t initial_weights(Trainer *t) {
  const SwnNetwork *net = t->net;
  int64_t run[2] = {0, (int64_t)t->o.seed}; /* first iteration, seed */
  if (t->rank == 0 && t->o.resume) {
    uint64_t seed;
    swn_load_checkpoint(net, t->o.resume, t->step.params, t->step.momentum, t->step.state, &run[0],
                        &seed);
    run[1] = (int64_t)seed;
  } else if (t->rank == 0 && t->o.init_weights) { /* fresh, then what the checkpoint has */
    swn_init_parameters(net, t->o.seed, t->step.params, t->step.state);
    swn_load_weights(net, t->o.init_weights, t->step.params, t->step.state, t->o.strict,
                     t->o.quiet || t->o.infer);
  } else if (t->rank == 0) {
    swn_init_parameters(net, t->o.seed, t->step.params, t->step.state);
  }
  swn_broadcast_int64(run, 2);
  swn_broadcast_floats(t->step.params, net->param_words);
  swn_broadcast_floats(t->step.momentum, net->param_words * net->moment_pools);
  swn_broadcast_floats(t->step.state, net->state_words);
  t->o.seed = (uint64_t)run[1];
  t->step.seed = t->o.seed;
  if (t->center) /* every rank starts at the center */
    memcpy(t->center, t->step.params, sizeof(float) * (size_t)net->param_words);
  return run[0];
}

/* Every iteration needs a whole batch on each rank: an epoch shorter than one is refused. */
static void check_batch_fits(const Trainer *t) {
  int64_t global = iteration_images(t), micro_batches = t->net->train.iter_size;
  if (evaluates_only(&t->o) || t->train.count >= global) return;
  if (t->ranks == 1 && micro_batches == 1)
    swn_fatal("--batch %lld is more images than the %lld of the training set",
              (long long)t->o.batch, (long long)t->train.count);
  char ranks[64] = "", micro[64] = "";
  if (t->ranks > 1) snprintf(ranks, sizeof ranks, " on each of %d ranks", t->ranks);
  if (micro_batches > 1)
    snprintf(micro, sizeof micro, " in each of %lld micro-batches (iter_size)",
             (long long)micro_batches);
  swn_fatal("--batch %lld%s%s is %lld images an iteration, more than the %lld of the training set",
            (long long)t->o.batch, ranks, micro, (long long)global, (long long)t->train.count);
}

int swn_main(const SwnNetwork *net, int argc, char **argv) {
  const char *slash = strrchr(argv[0], '/');
  swn_program = slash ? slash + 1 : argv[0];
  swn_mpi_start(&argc, &argv);
  Trainer t = {.net = net, .rank = swn_mpi_rank(), .ranks = swn_mpi_size()};
  if (t.rank > 0 && !freopen("/dev/null", "w", stdout)) swn_fatal("cannot silence rank %d", t.rank);
  swn_parse_options(net, argc, argv, &t.o);
  if (t.rank > 0) t.o.log_path = NULL, t.o.quiet = true; /* rank 0 speaks for all */
  if (!t.o.threads) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN) / swn_mpi_node_size();
    t.o.threads = cores > 1 ? (int)cores : 1;
  }
  swn_threads_start(t.o.threads);
  /* decoding JPEG needs every core to keep up; in-memory images need one thread */
  if (!t.o.loader_threads)
    t.o.loader_threads = net->data.source == SWN_DATA_PACKED ? t.o.threads : 1;
  if (t.o.infer && t.ranks > 1)
    swn_fatal("--infer runs in one process, not %d ranks (start it without mpirun)", t.ranks);
  bool want_test =
      !t.o.infer && (t.o.eval_only || net->train.eval_interval > 0 || net->train.test_interval > 0);
  if (want_test) swn_load_dataset(net, &t.o, false, &t.test);
  if (!evaluates_only(&t.o)) swn_load_dataset(net, &t.o, true, &t.train);
  /* a test set smaller than a test batch needs no room for more (--stats predicts the same) */
  if (t.test.count > 0 && t.test.count < t.o.test_batch) t.o.test_batch = t.test.count;
  int64_t counts[2] = {t.train.count, t.test.count};
  swn_ranks_check_same(net, &t.o, counts, 2); /* before any collective that depends on them */
  check_batch_fits(&t);
  swn_distributed_open(&t.dist, net, &t.o);
  allocate(&t);
  swn_distributed_attach(&t.dist, t.step.params, t.step.grads, t.center);
  check_elastic(&t);
  if (t.o.profile) t.profile = swn_profile_new(net);
  int64_t start = initial_weights(&t);
  if (!evaluates_only(&t.o))
    t.workers = swn_workers_open(net, &t.step, t.o.core_groups, t.o.batch, t.o.autotune);
  int status = 0;
  if (t.o.infer) {
    swn_infer(net, &t.step, t.o.test_batch, t.o.infer, t.o.output);
  } else if (t.o.eval_only) {
    float loss, accuracy;
    evaluate(&t, &loss, &accuracy);
    printf("test: loss %.4f  accuracy %.2f%%  (%lld image%s)\n", loss, 100 * accuracy,
           (long long)t.test.count, t.test.count == 1 ? "" : "s");
  } else {
    status = train(&t, start);
  }
  release(&t);
  swn_profile_free(t.profile);
  swn_profile_release(&t.timing.sum);
  swn_check_stdout(); /* a run whose report was lost (a full disk) did not succeed */
  return status;
}
