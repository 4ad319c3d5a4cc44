/* The one table of op kinds. Each row: ID, text name, min and max inputs (-1: any number),
 * attribute schema, shape inference, forward FLOPs per batch, and what the backward pass
 * reads of the forward values (BWD_IN: the inputs, BWD_OUT: the output) — the memory plan
 * keeps those alive until then.
 * Adding an op kind means adding a row here and its three functions. */
#ifndef SWNC_OPS_H
#define SWNC_OPS_H

enum { BWD_IN = 1, BWD_OUT = 2 };

#define SWNC_OPS(X)                                                                   \
  X(INPUT, "input", 0, 0, input_fields, infer_input, flops_zero, 0) \
  X(LABEL, "label", 0, 0, label_fields, infer_label, flops_zero, 0) \
  X(CONV, "conv", 1, 1, conv_fields, infer_conv, flops_conv, BWD_IN) \
  X(POOL, "pool", 1, 1, pool_fields, infer_pool, flops_pool, 0) \
  X(FC, "fc", 1, 1, fc_fields, infer_fc, flops_fc, BWD_IN) \
  X(RELU, "relu", 1, 1, relu_fields, infer_same, flops_elementwise, BWD_OUT) \
  X(SIGMOID, "sigmoid", 1, 1, no_fields, infer_same, flops_elementwise, BWD_OUT) \
  X(TANH, "tanh", 1, 1, no_fields, infer_same, flops_elementwise, BWD_OUT) \
  X(BATCHNORM, "batchnorm", 1, 1, batchnorm_fields, infer_batchnorm, flops_batchnorm, BWD_IN) \
  X(LRN, "lrn", 1, 1, lrn_fields, infer_lrn, flops_lrn, BWD_IN | BWD_OUT) \
  X(DROPOUT, "dropout", 1, 1, dropout_fields, infer_same, flops_elementwise, 0) \
  X(CONCAT, "concat", 2, -1, no_fields, infer_concat, flops_zero, 0) \
  X(ADD, "add", 2, -1, no_fields, infer_add, flops_add, 0) \
  X(SOFTMAX_LOSS, "softmax_loss", 2, 2, loss_fields, infer_softmax_loss, flops_softmax, BWD_IN) \
  X(ACCURACY, "accuracy", 2, 2, accuracy_fields, infer_accuracy, flops_zero, 0) \
  X(TRANSFORM, "transform", 1, 1, transform_fields, infer_same, flops_zero, 0)

#endif
