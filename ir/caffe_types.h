/* Caffe's layer types and the op kinds they are: one table, read by the importer
 * (frontend/caffe_import.c: prototxt to .swn) and the exporter (codegen/caffe/emit_prototxt.c:
 * .swn to prototxt). Each side expands the rows with a handler of its own per row
 * (import_<import>, export_<export>), so a row a side cannot handle fails to compile. Another
 * interchange format (ONNX) adds its columns to these rows.
 *
 * Columns:
 *   type     Caffe's layer type
 *   op       the op kind it is (OP_<op>); NONE: no op of its own (the data layers, which set the
 *            data block; Scale, which gives the batch norm before it its affine parameters)
 *   import   how a layer of this type is read: import_<import>
 *   export   how an op of this kind is written: export_<export>; none: only read (the op is
 *            written by another row, or as part of another layer)
 *   message  its parameter message in LayerParameter
 *   key      simple layers' one number: Caffe's field, swnc's attribute (NULL: swnc has only
 *            Caffe's default, and refuses another value), and Caffe's default
 *
 * Op kinds with no row have no Caffe layer: hardswish, hardsigmoid and gelu (Caffe has no such
 * types), transform (swnc's own), label (written with the input). ReLU6 is Caffe's Clip with min 0 and max 6. */
#ifndef SWNC_CAFFE_TYPES_H
#define SWNC_CAFFE_TYPES_H

#include "ir.h"

/* clang-format off */
#define SWNC_CAFFE_TYPES(X) \
  /* type            op            import     export     message                caffe key         swnc key  default */ \
  X("Data",            NONE,         data,      none,      "data_param",          NULL,             NULL,     0) \
  X("ImageData",       NONE,         data,      none,      "image_data_param",    NULL,             NULL,     0) \
  X("Input",           INPUT,        input,     none,      "input_param",         NULL,             NULL,     0) \
  X("Convolution",     CONV,         conv,      conv,      "convolution_param",   NULL,             NULL,     0) \
  X("Deconvolution",   DECONV,       conv,      conv,      "convolution_param",   NULL,             NULL,     0) \
  X("InnerProduct",    FC,           fc,        fc,        "inner_product_param", NULL,             NULL,     0) \
  X("Pooling",         POOL,         pool,      pool,      "pooling_param",       NULL,             NULL,     0) \
  X("ReLU",            RELU,         simple,    simple,    "relu_param",          "negative_slope", "slope",  0) \
  X("Sigmoid",         SIGMOID,      simple,    simple,    "sigmoid_param",       NULL,             NULL,     0) \
  X("TanH",            TANH,         simple,    simple,    "tanh_param",          NULL,             NULL,     0) \
  X("ELU",             ELU,          simple,    simple,    "elu_param",           "alpha",          "alpha",  1) \
  X("Swish",           SWISH,        simple,    simple,    "swish_param",         "beta",           NULL,     1) \
  X("Clip",            RELU6,        clip,      clip,      "clip_param",          NULL,             NULL,     0) \
  X("Dropout",         DROPOUT,      simple,    simple,    "dropout_param",       "dropout_ratio",  "ratio",  0.5) \
  X("LRN",             LRN,          lrn,       lrn,       "lrn_param",           NULL,             NULL,     0) \
  X("Concat",          CONCAT,       concat,    simple,    "concat_param",        NULL,             NULL,     0) \
  X("Eltwise",         ADD,          eltwise,   simple,    "eltwise_param",       NULL,             NULL,     0) \
  X("BatchNorm",       BATCHNORM,    batchnorm, batchnorm, "batch_norm_param",    NULL,             NULL,     0) \
  X("Scale",           NONE,         scale,     none,      "scale_param",         NULL,             NULL,     0) \
  X("SoftmaxWithLoss", SOFTMAX_LOSS, loss,      loss,      "loss_param",          NULL,             NULL,     0) \
  X("Softmax",         SOFTMAX_LOSS, softmax,   none,      "softmax_param",       NULL,             NULL,     0) \
  X("Accuracy",        ACCURACY,     accuracy,  accuracy,  "accuracy_param",      NULL,             NULL,     0)
/* clang-format on */

/* One row as data: what handlers read. */
typedef struct CaffeType {
  const char *type;
  int op; /* OpKind, or -1 */
  const char *message, *caffe_key, *swnc_key;
  double def;
} CaffeType;

enum { OP_NONE = -1 };

#define SWNC_CAFFE_TYPE_ROW(type, op, import, export, message, caffe_key, swnc_key, def)           \
  {type, OP_##op, message, caffe_key, swnc_key, def},

#endif
