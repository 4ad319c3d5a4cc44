/* One worker per core group (swk_core_groups, --core-groups): each runs forward and backward
 * on its share of the batch, with its own activations, gradients, batch-norm statistics and
 * scratch, on the weights they all share. As backward completes a gradient bucket on every
 * worker, their gradients are combined into worker 0's, weighted by their shares (so they are
 * the mean over the whole batch, as with one worker), and only then handed to the allreduce.
 * Worker 0 is the trainer's own step on the main thread; it alone updates and evaluates.
 * swCaffe's Algorithm 1 (swCaffe, section 5); docs/runtime.md, "Core groups". */
#ifndef SWNC_RT_WORKERS_H
#define SWNC_RT_WORKERS_H

#include "swnc_rt.h"

typedef struct SwnWorkers SwnWorkers;

/* `main` is worker 0 (allocated by the trainer for the whole batch); the others get their
 * memory here, for shares of `batch` split `count` ways, and copies of main's state. */
SwnWorkers *swn_workers_open(const SwnNetwork *net, SwnStep *main, int count, int64_t batch,
                             bool autotune);
void swn_workers_close(SwnWorkers *w);
int swn_workers_count(const SwnWorkers *w);

/* Where the loader puts the iteration's whole batch (worker 0's own input with one worker). */
float *swn_workers_input(SwnWorkers *w);
int32_t *swn_workers_labels(SwnWorkers *w);

/* Gives every worker its share of the loaded batch and starts workers 1.. on forward and
 * backward; worker 0's step gets its share and the caller runs it. */
void swn_workers_start(SwnWorkers *w, uint64_t iteration, uint64_t first_image);
/* Waits for workers 1.. to finish backward; worker 0's metrics become the batch's. */
void swn_workers_finish(SwnWorkers *w);

/* Whether `s` is worker 0's step (the main thread's; also with no workers at all). */
bool swn_workers_first(const SwnStep *s);

/* Called by swn_gradients_ready on each worker: true once the bucket is complete on all of
 * them and combined into worker 0's gradients (on the thread that completed it last). */
bool swn_workers_bucket_ready(SwnStep *s, int bucket, int64_t offset, int64_t words);

/* Where step s keeps its input images and labels while it holds `batch` images (the per-image
 * layout of swnc_rt.h). */
float *swn_batch_input(const SwnPlan *plan, const SwnStep *s, int64_t batch);
int32_t *swn_batch_labels(const SwnPlan *plan, const SwnStep *s, int64_t batch);

/* Worker 0's batch-norm statistics become the workers' mean, and every worker's. */
void swn_workers_average_state(SwnWorkers *w);

#endif
