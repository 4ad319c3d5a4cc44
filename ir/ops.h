/* The one table of op kinds. Each row: ID, text name, min and max inputs (-1: any number),
 * attribute schema, shape inference, forward FLOPs per batch.
 * Adding an op kind means adding a row here and its three functions. */
#ifndef SWNC_OPS_H
#define SWNC_OPS_H

#define SWNC_OPS(X)                                                                   \
  X(INPUT, "input", 0, 0, input_fields, infer_input, flops_zero)                     \
  X(LABEL, "label", 0, 0, label_fields, infer_label, flops_zero)                     \
  X(CONV, "conv", 1, 1, conv_fields, infer_conv, flops_conv)                         \
  X(POOL, "pool", 1, 1, pool_fields, infer_pool, flops_pool)                         \
  X(FC, "fc", 1, 1, fc_fields, infer_fc, flops_fc)                                   \
  X(RELU, "relu", 1, 1, relu_fields, infer_same, flops_elementwise)                  \
  X(SIGMOID, "sigmoid", 1, 1, no_fields, infer_same, flops_elementwise)              \
  X(TANH, "tanh", 1, 1, no_fields, infer_same, flops_elementwise)                    \
  X(BATCHNORM, "batchnorm", 1, 1, batchnorm_fields, infer_batchnorm, flops_batchnorm) \
  X(LRN, "lrn", 1, 1, lrn_fields, infer_lrn, flops_lrn)                              \
  X(DROPOUT, "dropout", 1, 1, dropout_fields, infer_same, flops_elementwise)         \
  X(CONCAT, "concat", 2, -1, no_fields, infer_concat, flops_zero)                    \
  X(ADD, "add", 2, -1, no_fields, infer_add, flops_add)                              \
  X(SOFTMAX_LOSS, "softmax_loss", 2, 2, loss_fields, infer_softmax_loss, flops_softmax) \
  X(ACCURACY, "accuracy", 2, 2, accuracy_fields, infer_accuracy, flops_zero)

#endif
