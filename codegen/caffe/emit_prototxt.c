/* The graph as written (elaborated, shapes inferred, before any rewriting pass) as a Caffe
 * network prototxt: `swnc export-caffe`. One Caffe layer per op (a batchnorm with affine as a
 * BatchNorm and a Scale), the image and label inputs as one Input layer with two shapes, so
 * that `swnc import-caffe` reads back the same network. */
#include "emit_prototxt.h"

#include <stdlib.h>
#include <string.h>

static void num(FILE *f, int indent, const char *key, double v) {
  fprintf(f, "%*s%s: ", indent, "", key);
  print_number(f, v);
  fputc('\n', f);
}

static const char *value_name(const Module *m, int v) { return m->graph.values.data[v].name; }

static void head(FILE *f, const Module *m, const Op *op, const char *name, const char *type) {
  fprintf(f, "layer {\n  name: \"%s\"\n  type: \"%s\"\n", name, type);
  for (int i = 0; i < op->inputs.len; i++)
    fprintf(f, "  bottom: \"%s\"\n", value_name(m, op->inputs.data[i]));
}

static void top(FILE *f, const Module *m, const Op *op) {
  fprintf(f, "  top: \"%s\"\n", value_name(m, op->output));
}

static void pair(FILE *f, const char *key, const int64_t v[2], int64_t def) {
  if (v[0] == def && v[1] == def) return;
  if (v[0] == v[1])
    fprintf(f, "    %s: %lld\n", key, (long long)v[0]);
  else
    fprintf(f, "    %s_h: %lld\n    %s_w: %lld\n", key, (long long)v[0], key, (long long)v[1]);
}

/* A sliding window: kernel_size (or kernel_h and kernel_w), stride and pad. */
static void window(FILE *f, const OpAttrs *a) {
  if (a->kernel[0] == a->kernel[1])
    fprintf(f, "    kernel_size: %lld\n", (long long)a->kernel[0]);
  else
    fprintf(f, "    kernel_h: %lld\n    kernel_w: %lld\n", (long long)a->kernel[0],
            (long long)a->kernel[1]);
  pair(f, "stride", a->stride, 1);
  pair(f, "pad", a->pad, 0);
}

static void filler(FILE *f, const char *key, int init, double arg) {
  static const char *const names[] = {"xavier", "msra", "gaussian", "uniform", "constant"};
  fprintf(f, "    %s {\n      type: \"%s\"\n", key, names[init]);
  if (init == INIT_GAUSSIAN) num(f, 6, "std", arg);
  if (init == INIT_UNIFORM) num(f, 6, "min", -arg), num(f, 6, "max", arg);
  if (init == INIT_CONSTANT && arg != 0) num(f, 6, "value", arg);
  fputs("    }\n", f);
}

/* param { lr_mult decay_mult } per learned blob, written when any differs from 1. */
static void param_specs(FILE *f, double lr, double decay, bool bias, double bias_lr,
                        double bias_decay) {
  if (lr == 1 && decay == 1 && (!bias || (bias_lr == 1 && bias_decay == 1))) return;
  fputs("  param {\n", f), num(f, 4, "lr_mult", lr), num(f, 4, "decay_mult", decay),
      fputs("  }\n", f);
  if (bias)
    fputs("  param {\n", f), num(f, 4, "lr_mult", bias_lr), num(f, 4, "decay_mult", bias_decay),
        fputs("  }\n", f);
}

static void learned(FILE *f, const Op *op, const char *message) {
  const OpAttrs *a = &op->attr;
  param_specs(f, a->lr_mult, a->decay_mult, a->bias, a->bias_lr_mult, a->bias_decay_mult);
  fprintf(f, "  %s {\n    num_output: %lld\n", message, (long long)a->outputs);
  if (!a->bias) fputs("    bias_term: false\n", f);
}

static void learned_end(FILE *f, const Op *op) {
  const OpAttrs *a = &op->attr;
  filler(f, "weight_filler", a->weight_init, a->weight_std);
  if (a->bias) filler(f, "bias_filler", a->bias_init, a->bias_value);
  fputs("  }\n}\n", f);
}

static void conv(FILE *f, const Module *m, const Op *op) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, "Convolution"), top(f, m, op);
  learned(f, op, "convolution_param");
  window(f, a);
  if (a->groups != 1) fprintf(f, "    group: %lld\n", (long long)a->groups);
  learned_end(f, op);
}

static void fc(FILE *f, const Module *m, const Op *op) {
  head(f, m, op, op->name, "InnerProduct"), top(f, m, op);
  learned(f, op, "inner_product_param");
  learned_end(f, op);
}

static void pool(FILE *f, const Module *m, const Op *op) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, "Pooling"), top(f, m, op);
  fprintf(f, "  pooling_param {\n    pool: %s\n", a->pool == POOL_MAX ? "MAX" : "AVE");
  if (a->global) {
    fputs("    global_pooling: true\n", f);
    pair(f, "stride", a->stride, 1);
    pair(f, "pad", a->pad, 0);
  } else {
    window(f, a);
  }
  if (!a->ceil) fputs("    round_mode: FLOOR\n", f);
  fputs("  }\n}\n", f);
}

static void batchnorm(FILE *f, const Module *m, const Op *op) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, "BatchNorm"), top(f, m, op);
  fputs("  batch_norm_param {\n", f);
  num(f, 4, "moving_average_fraction", a->momentum);
  num(f, 4, "eps", a->eps);
  fputs("  }\n}\n", f);
  if (!a->affine) return;
  fprintf(f, "layer {\n  name: \"%s_scale\"\n  type: \"Scale\"\n  bottom: \"%s\"\n", op->name,
          value_name(m, op->output));
  top(f, m, op);
  param_specs(f, a->lr_mult, a->decay_mult, true, a->bias_lr_mult, a->bias_decay_mult);
  fputs("  scale_param {\n    bias_term: true\n  }\n}\n", f);
}

static void simple(FILE *f, const Module *m, const Op *op, const char *type, const char *message,
                   const char *key, double v, double def) {
  head(f, m, op, op->name, type), top(f, m, op);
  if (message && v != def) fprintf(f, "  %s {\n", message), num(f, 4, key, v), fputs("  }\n", f);
  fputs("}\n", f);
}

static void lrn(FILE *f, const Module *m, const Op *op) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, "LRN"), top(f, m, op);
  fprintf(f, "  lrn_param {\n    local_size: %lld\n", (long long)a->local_size);
  num(f, 4, "alpha", a->alpha), num(f, 4, "beta", a->beta), num(f, 4, "k", a->k);
  fputs("  }\n}\n", f);
}

/* The image input and the labels as one Input layer of two tops. */
static void inputs(FILE *f, const Module *m) {
  const Op *images = NULL, *labels = NULL;
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    if (op->kind == OP_INPUT) images = op;
    if (op->kind == OP_LABEL) labels = op;
  }
  if (!images) return;
  fprintf(f, "layer {\n  name: \"%s\"\n  type: \"Input\"\n  top: \"%s\"\n", images->name,
          value_name(m, images->output));
  if (labels) fprintf(f, "  top: \"%s\"\n", value_name(m, labels->output));
  fputs("  input_param {\n    shape {", f);
  Shape s = m->graph.values.data[images->output].shape;
  for (int d = 0; d < s.rank; d++) fprintf(f, " dim: %lld", (long long)s.dim[d]);
  fputs(" }\n", f);
  if (labels) fprintf(f, "    shape { dim: %lld }\n", (long long)s.dim[0]);
  fputs("  }\n}\n", f);
}

bool emit_prototxt(const Module *m, const char *source, FILE *f) {
  fprintf(f, "# %s from %s by swnc export-caffe\nname: \"%s\"\n", m->name, source, m->name);
  inputs(f, m);
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    const OpAttrs *a = &op->attr;
    switch (op->kind) {
    case OP_INPUT:
    case OP_LABEL: break;
    case OP_CONV: conv(f, m, op); break;
    case OP_FC: fc(f, m, op); break;
    case OP_POOL: pool(f, m, op); break;
    case OP_RELU: simple(f, m, op, "ReLU", "relu_param", "negative_slope", a->slope, 0); break;
    case OP_ELU: simple(f, m, op, "ELU", "elu_param", "alpha", a->slope, 1); break;
    case OP_SIGMOID: simple(f, m, op, "Sigmoid", NULL, NULL, 0, 0); break;
    case OP_TANH: simple(f, m, op, "TanH", NULL, NULL, 0, 0); break;
    case OP_DROPOUT:
      simple(f, m, op, "Dropout", "dropout_param", "dropout_ratio", a->ratio, 0.5);
      break;
    case OP_BATCHNORM: batchnorm(f, m, op); break;
    case OP_LRN: lrn(f, m, op); break;
    case OP_CONCAT: simple(f, m, op, "Concat", NULL, NULL, 0, 0); break;
    case OP_ADD: simple(f, m, op, "Eltwise", NULL, NULL, 0, 0); break;
    case OP_SOFTMAX_LOSS:
      head(f, m, op, op->name, "SoftmaxWithLoss"), top(f, m, op);
      if (a->loss_weight != 1) num(f, 2, "loss_weight", a->loss_weight);
      fputs("}\n", f);
      break;
    case OP_ACCURACY:
      head(f, m, op, op->name, "Accuracy"), top(f, m, op);
      fprintf(f, "  accuracy_param {\n    top_k: %lld\n  }\n}\n", (long long)a->top);
      break;
    default:
      diag_error(op->loc, "layer '%s' (%s) has no Caffe equivalent", op->name,
                 op_info[op->kind].name);
      return false;
    }
  }
  return true;
}
