/* The interface between a generated program and the runtime (docs/runtime.md). Generated
 * code describes the network in a SwnNetwork, with constant shapes and offsets, and functions
 * for forward, backward and update; the runtime owns everything else: options, data, memory,
 * initialisation, the training loop, evaluation, logging and checkpoints. */
#ifndef SWNC_RT_H
#define SWNC_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_plans.h"
#include "kernels.h"

/* SWN_TEST_BATCH_MAX: the most images an automatic evaluation batch (train.test_batch 0) has. */
enum { SWN_MAX_FILES = 16, SWN_MAX_STEPS = 16, SWN_MAX_MEAN = 4, SWN_TEST_BATCH_MAX = 1000 };

typedef enum {
  SWN_INIT_XAVIER,
  SWN_INIT_MSRA,
  SWN_INIT_GAUSSIAN,
  SWN_INIT_UNIFORM,
  SWN_INIT_CONSTANT
} SwnInit;
typedef enum {
  SWN_LR_FIXED,
  SWN_LR_STEP,
  SWN_LR_MULTISTEP,
  SWN_LR_INV,
  SWN_LR_POLY,
  SWN_LR_EXP,
  SWN_LR_COSINE
} SwnLrPolicy;
typedef enum { SWN_OPT_SGD, SWN_OPT_EASGD, SWN_OPT_LARS, SWN_OPT_ADAM, SWN_OPT_ADAMW } SwnOptimizer;
typedef enum { SWN_DATA_IDX, SWN_DATA_CIFAR, SWN_DATA_SYNTHETIC, SWN_DATA_PACKED } SwnDataSource;

/* The contract's rows keep their own line breaks. */
/* clang-format off */
/* The descriptor tables and settings generated code hands the runtime, as rows (contract.h). */
#define SwnParamInfo_FIELDS(F, A)                                                                  \
  F(PTR, const char *, name)                                                                       \
  F(I32, int, ndims)                                                                               \
  A(I64, int64_t, dims, 4)                                                                         \
  F(I64, int64_t, offset) F(I64, int64_t, count) /* in the parameter pool, floats */              \
  F(F32, float, lr_mult) F(F32, float, decay_mult)                                                 \
  F(I32, int, init) /* SwnInit */                                                                  \
  F(F32, float, init_arg)                                                                          \
  F(I64, int64_t, fan_in) /* inputs feeding one output: for xavier and msra */

/* Non-learned state (batch-norm running statistics) and its initial value. */
#define SwnStateInfo_FIELDS(F, A)                                                                  \
  F(PTR, const char *, name) F(I64, int64_t, offset) F(I64, int64_t, count) F(F32, float, init)

/* A scalar the forward pass computes: a loss or an accuracy, in the fixed region of the training
 * step (offset) and of evaluation (eval_offset). */
#define SwnMetric_FIELDS(F, A)                                                                     \
  F(PTR, const char *, name) F(I64, int64_t, offset) F(I64, int64_t, eval_offset)                 \
  F(BOOL, bool, is_loss)

/* One step's memory plan: its regions' sizes and where the runtime writes the batch. Per-image
 * words and offsets are multiplied by the step's batch. */
#define SwnPlan_FIELDS(F, A)                                                                       \
  F(I64, int64_t, image_words) F(I64, int64_t, fixed_words)                                        \
  F(I64, int64_t, input_offset) F(I64, int64_t, label_offset)                                      \
  F(I64, int64_t, scores_offset) /* what the first loss reads: batch x classes, (B,N,R,C); kept  \
                                    to the step's end in evaluation, for --infer */

#define SwnTrainConfig_FIELDS(F, A)                                                                \
  F(I64, int64_t, batch) F(I64, int64_t, test_batch) F(I64, int64_t, epochs)                       \
  F(I64, int64_t, iterations)                                                                      \
  F(F32, float, lr) F(F32, float, momentum) F(F32, float, weight_decay)                            \
  F(I32, int, lr_policy) /* SwnLrPolicy */                                                         \
  F(F32, float, gamma) F(F32, float, power)                                                        \
  F(I64, int64_t, step)                                                                            \
  A(I64, int64_t, steps, SWN_MAX_STEPS)                                                            \
  F(I32, int, nsteps)                                                                              \
  F(I64, int64_t, warmup) F(I64, int64_t, seed) F(I64, int64_t, eval_interval)                     \
  F(I64, int64_t, test_interval) F(I64, int64_t, display)                                                                         \
  F(I32, int, optimizer) /* SwnOptimizer */                                                        \
  F(F32, float, elastic) /* easgd's rho */                                                        \
  F(F32, float, clip_gradients) /* scale the gradients' global norm down to it (0: never) */      \
  F(I64, int64_t, iter_size)    /* micro-batches whose mean gradient one update takes */

#define SwnDataConfig_FIELDS(F, A)                                                                 \
  F(I32, int, source) /* SwnDataSource */                                                          \
  A(PTR, const char *, train, SWN_MAX_FILES) A(PTR, const char *, test, SWN_MAX_FILES)            \
  F(I32, int, ntrain) F(I32, int, ntest)                                                           \
  F(F32, float, scale)                                                                             \
  A(F32, float, mean, SWN_MAX_MEAN)                                                                \
  F(I32, int, nmean)                                                                               \
  F(PTR, const char *, mean_file) /* a mean image (swnc-data's mean.bin), or NULL */              \
  F(BOOL, bool, crop)   /* crop images larger than the input: randomly in training */             \
  F(BOOL, bool, mirror) /* flip horizontally at random in training */                             \
  F(I64, int64_t, train_size) F(I64, int64_t, test_size) F(I64, int64_t, classes)

SWN_C_STRUCT(SwnParamInfo)
SWN_C_STRUCT(SwnStateInfo)
SWN_C_STRUCT(SwnMetric)
SWN_C_STRUCT(SwnPlan)
SWN_C_STRUCT(SwnTrainConfig)
SWN_C_STRUCT(SwnDataConfig)

/* Per-layer timing (--profile): generated code marks where each layer's calls begin (op -1
 * ends the phase). */
typedef struct SwnProfile SwnProfile;
enum { SWN_PHASE_FORWARD, SWN_PHASE_BACKWARD, SWN_PHASE_UPDATE };

/* Convolution dispatch (runtime/conv.c): generated code calls swn_conv_forward and
 * swn_conv_backward for every convolution with a plan word: the layout of its tensors
 * (SWN_LAYOUT_*), the plan (SWN_PLAN_*) the compiler gave each computation (0 forward, 1
 * weight gradient, 2 input gradient), and for each computation the plans --autotune may time
 * (a mask of 1 << plan: those that can compute it, with conversions the runtime has).
 * A transposed convolution (deconv) calls swn_deconv_forward and swn_deconv_backward with the
 * struct of its convolution, from its output to its input: always the explicit plan. */
enum { SWN_LAYOUT_BNRC, SWN_LAYOUT_RCNB, SWN_LAYOUT_BNRC16 };
enum {
#define SWN_PLAN_ID_(id, ...) SWN_PLAN_##id,
  SWN_CONV_PLANS(SWN_PLAN_ID_)
#undef SWN_PLAN_ID_
      SWN_PLANS
};
/* bits 0-1 the layout, 2-10 a plan per computation (3 bits), 11-28 the masks (6 bits) */
#define SWN_CONV_WORD_LAYOUT(layout) (layout)
#define SWN_CONV_WORD_PLAN(c, plan) ((plan) << (2 + 3 * (c)))
#define SWN_CONV_WORD_LEGAL(c, mask) ((mask) << (11 + 6 * (c)))
#define SWN_CONV_LAYOUT(word) ((word)&3)
#define SWN_CONV_PLAN(word, c) (((word) >> (2 + 3 * (c))) & 7)
#define SWN_CONV_LEGAL(word, c) (((word) >> (11 + 6 * (c))) & 63)
typedef struct SwnConvState SwnConvState;

/* What forward, backward and update work on. Per-image buffers live in `image` at
 * offset x batch; the rest in fixed-size pools. */
#define SwnStep_FIELDS(F, A)                                                                       \
  F(PTR, SwnProfile *, profile) /* NULL unless --profile */                                        \
  F(I32, int, batch)                                                                               \
  F(PTR, float *, image) F(PTR, float *, fixed) /* the regions, in codegen/lower.h's order */      \
  F(PTR, float *, params) F(PTR, float *, grads) F(PTR, float *, momentum) F(PTR, float *, state)  \
  F(PTR, float *, ws)                                                                              \
  F(U64, uint64_t, seed)        /* the run's seed: dropout masks hash it with the layer */         \
  F(U64, uint64_t, iteration)   /* and the iteration */                                            \
  F(U64, uint64_t, first_image) /* and the global index of the image */                            \
  F(F32, float, momentum_coef) F(F32, float, weight_decay)                                         \
  /* a network whose gradients go into momentum: the learning rate over the ranks, and momentum \
     over the ranks (grad_scale and grad_keep of the kernels, before lr_mult) */                  \
  F(F32, float, fold_scale) F(F32, float, fold_keep)                                               \
  F(I32, int, buckets_ready)      /* gradient buckets completed in this backward pass */           \
  F(PTR, SwnConvState *, conv)    /* the dispatcher's scratch memory and --autotune timings */     \
  F(PTR, struct SwnDistributed *, dist) /* the ranks' gradient allreduce (runtime/distributed.c) */ \
  F(PTR, struct SwnWorkers *, workers)  /* the process's workers, one per core group */
SWN_C_STRUCT(SwnStep)

typedef size_t SwnWorkspaceFn(void);         /* floats, for the current thread count */
typedef void SwnStepFn(SwnStep *s); /* forward (training mode), evaluate, backward */
typedef void SwnUpdateFn(SwnStep *s, float lr);

#define SwnNetwork_FIELDS(F, A)                                                                    \
  F(PTR, const char *, name) F(PTR, const char *, source)                                          \
  F(U64, uint64_t, hash) /* of the parameter table: checkpoints of another net are refused */     \
  F(STRUCT, SwnPlan, plan) F(STRUCT, SwnPlan, eval_plan) /* training, evaluation */              \
  F(I64, int64_t, param_words) F(I64, int64_t, state_words)                                        \
  F(I32, int, moment_pools) /* the optimizer's: 1 (momentum), 2 (Adam's first, then second) */    \
  F(PTR, const char *const *, layers) /* op names, for profiles */                                 \
  F(I32, int, nlayers)                                                                             \
  F(PTR, const SwnParamInfo *, params) F(I32, int, nparams)                                        \
  F(PTR, const SwnStateInfo *, state) F(I32, int, nstate)                                          \
  F(PTR, const SwnMetric *, metrics) F(I32, int, nmetrics)                                         \
  F(I32, int, in_c) F(I32, int, in_h) F(I32, int, in_w) /* the input's image shape (h = w = 1 for a vector) */ \
  F(I32, int, classes) /* of the first loss layer */                                               \
  F(STRUCT, SwnTrainConfig, train)                                                                 \
  F(STRUCT, SwnDataConfig, data)                                                                   \
  F(PTR, SwnWorkspaceFn *, workspace) F(PTR, SwnStepFn *, forward)                                 \
  F(PTR, SwnStepFn *, evaluate) /* forward in inference mode, on the evaluation plan */           \
  F(PTR, SwnStepFn *, backward) F(PTR, SwnUpdateFn *, update)                                      \
  F(I32, int, nbuckets) /* gradient buckets per backward pass */                                  \
  F(BOOL, bool, gradients_in_momentum) /* pass fold-gradients: `grads` is `momentum` */
SWN_C_STRUCT(SwnNetwork)

/* Every struct of the contract (kernels.h's and these), in the order the compiler lists them. */
#define SWN_STRUCTS(S) SWK_STRUCTS(S) S(SwnParamInfo) S(SwnStateInfo) S(SwnMetric) S(SwnPlan) \
  S(SwnTrainConfig) S(SwnDataConfig) S(SwnStep) S(SwnNetwork)

/* The runtime's functions generated code calls, as rows (contract.h).
 * swn_gradients_ready is called by backward where a gradient bucket (a span of the gradient
 * pool, docs/ir.md) becomes complete: with several ranks, the bucket's allreduce starts there and
 * runs while backward goes on; update calls swn_gradients_wait before it touches a bucket's
 * parameters. swn_parameters_wait is called by the training forward before the first layer that
 * reads a bucket's span of the weights: under a reduce-to-root schedule (--sync sc-ob, sc-obr)
 * the weights arrive from rank 0 in those spans while forward runs. swn_main is the generated
 * program's main: it parses the command line and trains or evaluates. */
#define SWN_CALLS(FN, P)                                                                           \
  FN(VOID, swn_profile_mark, (P(PTR, SwnProfile *, p), P(I32, int, op), P(I32, int, phase)))       \
  FN(VOID, swn_conv_forward, (P(PTR, const SwkConv *, p), P(I32, int, batch),                      \
                              P(PTR, SwnStep *, s), P(I32, int, layer), P(I32, int, plans),        \
                              P(PTR, const float *, x), P(PTR, const float *, w),                  \
                              P(PTR, const float *, b), P(PTR, float *, y)))                       \
  FN(VOID, swn_conv_backward, (P(PTR, const SwkConv *, p), P(I32, int, batch),                     \
                               P(PTR, SwnStep *, s), P(I32, int, layer), P(I32, int, plans),       \
                               P(PTR, const float *, x), P(PTR, const float *, w),                 \
                               P(PTR, const float *, dy), P(PTR, float *, dx),                     \
                               P(BOOL, bool, dx_add), P(PTR, float *, dw), P(PTR, float *, db),    \
                               P(F32, float, grad_scale), P(F32, float, bias_grad_scale),          \
                               P(F32, float, grad_keep)))                                          \
  FN(VOID, swn_deconv_forward, (P(PTR, const SwkConv *, p), P(I32, int, batch),                    \
                                P(PTR, SwnStep *, s), P(PTR, const float *, x),                    \
                                P(PTR, const float *, w), P(PTR, const float *, b),                \
                                P(PTR, float *, y)))                                               \
  FN(VOID, swn_deconv_backward, (P(PTR, const SwkConv *, p), P(I32, int, batch),                   \
                                 P(PTR, SwnStep *, s), P(PTR, const float *, x),                   \
                                 P(PTR, const float *, w), P(PTR, const float *, dy),              \
                                 P(PTR, float *, dx), P(BOOL, bool, dx_add), P(PTR, float *, dw),  \
                                 P(PTR, float *, db), P(F32, float, grad_scale),                   \
                                 P(F32, float, bias_grad_scale), P(F32, float, grad_keep)))        \
  FN(VOID, swn_gradients_ready, (P(PTR, SwnStep *, s), P(I32, int, bucket),                        \
                                 P(I64, int64_t, offset), P(I64, int64_t, words)))                 \
  FN(VOID, swn_gradients_wait, (P(PTR, SwnStep *, s), P(I32, int, bucket)))                        \
  FN(VOID, swn_parameters_wait, (P(PTR, SwnStep *, s), P(I32, int, bucket)))                       \
  FN(I32, swn_main, (P(PTR, const SwnNetwork *, net), P(I32, int, argc), P(PTR, char **, argv)))
/* clang-format on */
SWN_CALLS(SWN_C_FUNCTION, SWN_C_PARAM)

#endif
