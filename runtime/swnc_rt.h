/* The interface between a generated program and the runtime (docs/runtime.md). Generated
 * code describes the network in a SwnNetwork, with constant shapes and offsets, and functions
 * for forward, backward and update; the runtime owns everything else: options, data, memory,
 * initialisation, the training loop, evaluation, logging and checkpoints. */
#ifndef SWNC_RT_H
#define SWNC_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

enum { SWN_MAX_FILES = 16, SWN_MAX_STEPS = 16 };

typedef enum { SWN_INIT_XAVIER, SWN_INIT_MSRA, SWN_INIT_GAUSSIAN, SWN_INIT_UNIFORM, SWN_INIT_CONSTANT } SwnInit;
typedef enum { SWN_LR_FIXED, SWN_LR_STEP, SWN_LR_MULTISTEP, SWN_LR_INV, SWN_LR_POLY } SwnLrPolicy;
typedef enum { SWN_OPT_SGD, SWN_OPT_EASGD } SwnOptimizer;
typedef enum { SWN_DATA_IDX, SWN_DATA_CIFAR, SWN_DATA_SYNTHETIC } SwnDataSource;

typedef struct SwnParamInfo {
  const char *name;
  int ndims;
  int64_t dims[4];
  int64_t offset, count;      /* in the parameter pool, floats */
  float lr_mult, decay_mult;
  int init;                   /* SwnInit */
  float init_arg;
  int64_t fan_in;             /* inputs feeding one output: for xavier and msra */
} SwnParamInfo;

/* Non-learned state (batch-norm running statistics) and its initial value. */
typedef struct SwnStateInfo {
  const char *name;
  int64_t offset, count;
  float init;
} SwnStateInfo;

/* A scalar the forward pass computes: a loss or an accuracy, in the fixed region. */
typedef struct SwnMetric {
  const char *name;
  int64_t offset;
  bool is_loss;
} SwnMetric;

typedef struct SwnTrainConfig {
  int64_t batch, test_batch, epochs, iterations;
  float lr, momentum, weight_decay;
  int lr_policy;              /* SwnLrPolicy */
  float gamma, power;
  int64_t step;
  int64_t steps[SWN_MAX_STEPS];
  int nsteps;
  int64_t warmup, seed, eval_interval, display;
  int optimizer;              /* SwnOptimizer */
  float elastic;              /* easgd's rho */
} SwnTrainConfig;

typedef struct SwnDataConfig {
  int source;                 /* SwnDataSource */
  const char *train[SWN_MAX_FILES], *test[SWN_MAX_FILES];
  int ntrain, ntest;
  float scale;
  float mean[4];
  int nmean;
  int64_t train_size, test_size, classes;
} SwnDataConfig;

/* Per-layer timing (--profile): generated code marks where each layer's calls begin. */
typedef struct SwnProfile SwnProfile;
void swn_profile_mark(SwnProfile *p, int op, int phase); /* op -1 ends the phase */
enum { SWN_PHASE_FORWARD, SWN_PHASE_BACKWARD, SWN_PHASE_UPDATE };

/* Convolution dispatch (runtime/conv.c): generated code calls these for every convolution with
 * a plan word: SWN_CONV_RCNB if its tensors are in (R,C,N,B), SWN_CONV_IMPLICIT(c) for each
 * computation (0 forward, 1 weight gradient, 2 input gradient) the compiler gave the implicit
 * plan, SWN_CONV_IMPLICIT_LEGAL if the implicit plan can run it at all (for --autotune). */
#define SWN_CONV_RCNB 1
#define SWN_CONV_IMPLICIT(c) (2 << (c))
#define SWN_CONV_IMPLICIT_LEGAL 16
typedef struct SwnConvState SwnConvState;
struct SwnStep;
void swn_conv_forward(const SwkConv *p, int batch, struct SwnStep *s, int layer, int plans, const float *x,
                      const float *w, const float *b, float *y);
void swn_conv_backward(const SwkConv *p, int batch, struct SwnStep *s, int layer, int plans, const float *x,
                       const float *w, const float *dy, float *dx, bool dx_add, float *dw, float *db);

/* What forward, backward and update work on. Per-image buffers live in `image` at
 * offset x batch; the rest in fixed-size pools. */
typedef struct SwnStep {
  SwnProfile *profile;        /* NULL unless --profile */
  int batch;
  float *image, *fixed;
  float *params, *grads, *momentum, *state;
  float *ws;
  uint64_t seed;              /* the run's seed: dropout masks hash it with the layer */
  uint64_t iteration;         /* and the iteration */
  uint64_t first_image;       /* and the global index of the image */
  float momentum_coef, weight_decay;
  int buckets_ready;          /* gradient buckets completed in this backward pass */
  SwnConvState *conv;         /* the dispatcher's scratch memory and --autotune timings */
  struct SwnDistributed *dist; /* the ranks' gradient allreduce (runtime/distributed.c) */
  struct SwnWorkers *workers; /* the process's workers, one per core group (runtime/workers.c) */
} SwnStep;

/* Called by backward where a gradient bucket (a span of the gradient pool, docs/ir.md) becomes
 * complete: with several ranks, the bucket's allreduce starts here and runs while backward goes
 * on. Update calls swn_gradients_wait before it touches a bucket's parameters. */
void swn_gradients_ready(SwnStep *s, int bucket, int64_t offset, int64_t words);
void swn_gradients_wait(SwnStep *s, int bucket);

typedef struct SwnNetwork {
  const char *name, *source;
  uint64_t hash;              /* of the parameter table: checkpoints of another net are refused */
  int64_t image_words, fixed_words, param_words, state_words;
  const char *const *layers;  /* op names, for profiles */
  int nlayers;
  const SwnParamInfo *params;
  int nparams;
  const SwnStateInfo *state;
  int nstate;
  const SwnMetric *metrics;
  int nmetrics;
  int in_c, in_h, in_w;       /* the input layer's image shape (h = w = 1 for a vector) */
  int64_t input_offset, label_offset; /* per-image offsets of the input and label buffers */
  int classes;                /* of the first loss layer */
  SwnTrainConfig train;
  SwnDataConfig data;
  size_t (*workspace)(void);  /* floats, for the current thread count */
  void (*forward)(SwnStep *s, bool train);
  void (*backward)(SwnStep *s);
  void (*update)(SwnStep *s, float lr);
  int nbuckets;               /* gradient buckets per backward pass */
} SwnNetwork;

/* The generated program's main: parses the command line and trains or evaluates. */
int swn_main(const SwnNetwork *net, int argc, char **argv);

#endif
