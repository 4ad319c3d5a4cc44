/* The one table of op kinds. Each row: ID, text name, min and max inputs (-1: any number),
 * attribute schema, shape inference, forward FLOPs per batch, what the backward pass reads of
 * the forward values (BWD_IN: the inputs, BWD_OUT: the output; the memory plan keeps those
 * alive until then), and the columns the back end reads:
 *   role     what the runtime does with it (ROLE_*)
 *   family   which kernels run it (FAMILY_*; an activation's are swk_<name>_forward/_backward
 *            on SwkAct, one per row of runtime/activations.h)
 *   layouts  the layouts the kernel interface takes it in besides (B,N,R,C): ALSO_RCNB,
 *            ALSO_BNRC16 (concat: where every input's channels fill whole blocks; mul: where its
 *            scale is a vector or x's shape)
 *   saved    what it keeps from forward for backward beyond its inputs and output (SAVE_*)
 *   state    non-learned state carried between iterations (STATE_*)
 * Adding an op kind: docs/adding-an-op.md. */
#ifndef SWNC_OPS_H
#define SWNC_OPS_H

enum { BWD_IN = 1, BWD_OUT = 2 };
enum { ALSO_RCNB = 1 << 1, ALSO_BNRC16 = 1 << 2, ALSO_BOTH = ALSO_RCNB | ALSO_BNRC16 };

typedef enum {
  ROLE_LAYER,  /* computes from its inputs */
  ROLE_IMAGES, /* the runtime writes a batch of images into it */
  ROLE_LABELS, /* the runtime writes their labels into it */
  ROLE_LOSS,   /* a scalar backward starts from, reported as a metric */
  ROLE_METRIC, /* a scalar reported, no gradient */
} OpRole;

typedef enum {
  FAMILY_NONE, /* no kernel: the runtime fills it */
  FAMILY_CONV,
  FAMILY_DECONV, /* transposed convolution: a convolution's computations with their roles swapped */
  FAMILY_POOL,
  FAMILY_FC,
  FAMILY_ACTIVATION,
  FAMILY_BATCHNORM,
  FAMILY_LRN,
  FAMILY_DROPOUT,
  FAMILY_JOIN,     /* concat and add: n inputs */
  FAMILY_MUL,      /* x times s: s per channel (broadcast over the pixels) or element by element */
  FAMILY_UPSAMPLE, /* each plane enlarged by integer factors: nearest or bilinear */
  FAMILY_SOFTMAX,  /* softmax over the channels, at each pixel */
  FAMILY_LOSS,
  FAMILY_ACCURACY,
  FAMILY_TRANSFORM,
} OpFamily;

typedef enum {
  SAVE_NONE,
  SAVE_ARGMAX,        /* max pooling: where each maximum was (int32 per output element) */
  SAVE_CHANNEL_STATS, /* batch norm: each channel's batch mean and 1/std */
  SAVE_OUT_SIZED,     /* one float per output element (lrn's scale) */
  SAVE_IN_SIZED,      /* one float per input element (the loss's probabilities) */
} SaveRule;

typedef enum { STATE_NONE, STATE_RUNNING_STATS } StateRule;

/* clang-format off */
#define SWNC_OPS(X) \
  /* id           name            in    schema            infer               flops              bwd reads        role         family             layouts      saved               state */ \
  X(INPUT,        "input",        0, 0, input_fields,     infer_input,        flops_zero,        0,               ROLE_IMAGES, FAMILY_NONE,       0,           SAVE_NONE,          STATE_NONE) \
  X(LABEL,        "label",        0, 0, label_fields,     infer_label,        flops_zero,        0,               ROLE_LABELS, FAMILY_NONE,       0,           SAVE_NONE,          STATE_NONE) \
  X(CONV,         "conv",         1, 1, conv_fields,      infer_conv,         flops_conv,        BWD_IN,          ROLE_LAYER,  FAMILY_CONV,       ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(DECONV,       "deconv",       1, 1, conv_fields,      infer_deconv,       flops_deconv,      BWD_IN,          ROLE_LAYER,  FAMILY_DECONV,     0,           SAVE_NONE,          STATE_NONE) \
  X(POOL,         "pool",         1, 1, pool_fields,      infer_pool,         flops_pool,        0,               ROLE_LAYER,  FAMILY_POOL,       ALSO_BOTH,   SAVE_ARGMAX,        STATE_NONE) \
  X(FC,           "fc",           1, 1, fc_fields,        infer_fc,           flops_fc,          BWD_IN,          ROLE_LAYER,  FAMILY_FC,         0,           SAVE_NONE,          STATE_NONE) \
  X(RELU,         "relu",         1, 1, relu_fields,      infer_same,         flops_elementwise, BWD_OUT,         ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(SIGMOID,      "sigmoid",      1, 1, no_fields,        infer_same,         flops_elementwise, BWD_OUT,         ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(TANH,         "tanh",         1, 1, no_fields,        infer_same,         flops_elementwise, BWD_OUT,         ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(ELU,          "elu",          1, 1, elu_fields,       infer_same,         flops_elementwise, BWD_OUT,         ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(RELU6,        "relu6",        1, 1, no_fields,        infer_same,         flops_elementwise, BWD_OUT,         ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(SWISH,        "swish",        1, 1, no_fields,        infer_same,         flops_elementwise, BWD_IN,          ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(HARDSWISH,    "hardswish",    1, 1, no_fields,        infer_same,         flops_elementwise, BWD_IN,          ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(GELU,         "gelu",         1, 1, no_fields,        infer_same,         flops_elementwise, BWD_IN,          ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(HARDSIGMOID,  "hardsigmoid",  1, 1, no_fields,        infer_same,         flops_elementwise, BWD_OUT,         ROLE_LAYER,  FAMILY_ACTIVATION, ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(BATCHNORM,    "batchnorm",    1, 1, batchnorm_fields, infer_batchnorm,    flops_batchnorm,   BWD_IN,          ROLE_LAYER,  FAMILY_BATCHNORM,  ALSO_BNRC16, SAVE_CHANNEL_STATS, STATE_RUNNING_STATS) \
  X(LRN,          "lrn",          1, 1, lrn_fields,       infer_lrn,          flops_lrn,         BWD_IN | BWD_OUT, ROLE_LAYER, FAMILY_LRN,        0,           SAVE_OUT_SIZED,     STATE_NONE) \
  X(DROPOUT,      "dropout",      1, 1, dropout_fields,   infer_same,         flops_elementwise, 0,               ROLE_LAYER,  FAMILY_DROPOUT,    0,           SAVE_NONE,          STATE_NONE) \
  X(CONCAT,       "concat",       2, -1, no_fields,       infer_concat,       flops_zero,        0,               ROLE_LAYER,  FAMILY_JOIN,       ALSO_BNRC16, SAVE_NONE,          STATE_NONE) \
  X(ADD,          "add",          2, -1, no_fields,       infer_add,          flops_add,         0,               ROLE_LAYER,  FAMILY_JOIN,       ALSO_BOTH,   SAVE_NONE,          STATE_NONE) \
  X(MUL,          "mul",          2, 2, no_fields,        infer_mul,          flops_elementwise, BWD_IN,          ROLE_LAYER,  FAMILY_MUL,        ALSO_BNRC16, SAVE_NONE,          STATE_NONE) \
  X(UPSAMPLE,     "upsample",     1, 1, upsample_fields,  infer_upsample,     flops_upsample,    0,               ROLE_LAYER,  FAMILY_UPSAMPLE,   0,           SAVE_NONE,          STATE_NONE) \
  X(SOFTMAX,      "softmax",      1, 1, no_fields,        infer_same,         flops_softmax,     BWD_OUT,         ROLE_LAYER,  FAMILY_SOFTMAX,    0,           SAVE_NONE,          STATE_NONE) \
  X(SOFTMAX_LOSS, "softmax_loss", 2, 2, loss_fields,      infer_softmax_loss, flops_softmax,     BWD_IN,          ROLE_LOSS,   FAMILY_LOSS,       0,           SAVE_IN_SIZED,      STATE_NONE) \
  X(ACCURACY,     "accuracy",     2, 2, accuracy_fields,  infer_accuracy,     flops_zero,        0,               ROLE_METRIC, FAMILY_ACCURACY,   0,           SAVE_NONE,          STATE_NONE) \
  X(TRANSFORM,    "transform",    1, 1, transform_fields, infer_same,         flops_zero,        0,               ROLE_LAYER,  FAMILY_TRANSFORM,  0,           SAVE_NONE,          STATE_NONE)
/* clang-format on */

#endif
