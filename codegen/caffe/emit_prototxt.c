/* The graph as written (elaborated, shapes inferred, before any rewriting pass) as a Caffe
 * network prototxt: `swnc export-caffe`. One Caffe layer per op (a batchnorm with affine as a
 * BatchNorm and a Scale), the image and label inputs as one Input layer with two shapes, so
 * that `swnc import-caffe` reads back the same network. */
#include "emit_prototxt.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "caffe_types.h"

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

static void export_conv(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, row->type), top(f, m, op);
  learned(f, op, row->message);
  window(f, a);
  for (int d = 0; d < 2 && (a->dilation[0] != 1 || a->dilation[1] != 1); d++)
    if (d == 0 || a->dilation[1] != a->dilation[0]) /* one value: both dimensions */
      fprintf(f, "    dilation: %lld\n", (long long)a->dilation[d]);
  if (a->groups != 1) fprintf(f, "    group: %lld\n", (long long)a->groups);
  learned_end(f, op);
}

static void export_fc(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  head(f, m, op, op->name, row->type), top(f, m, op);
  learned(f, op, row->message);
  learned_end(f, op);
}

static void export_pool(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, row->type), top(f, m, op);
  fprintf(f, "  %s {\n    pool: %s\n", row->message, a->pool == POOL_MAX ? "MAX" : "AVE");
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

static void export_batchnorm(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, row->type), top(f, m, op);
  fprintf(f, "  %s {\n", row->message);
  if (a->frozen) fputs("    use_global_stats: true\n", f);
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

/* One input, at most one number (the row's key), written where it is not Caffe's default. */
static void export_simple(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  head(f, m, op, op->name, row->type), top(f, m, op);
  const FieldSpec *spec =
      row->swnc_key ? field_find(op_info[op->kind].fields, row->swnc_key) : NULL;
  double v = spec ? field_float(spec, &op->attr) : row->def;
  if (v != row->def)
    fprintf(f, "  %s {\n", row->message), num(f, 4, row->caffe_key, v), fputs("  }\n", f);
  fputs("}\n", f);
}

/* ReLU6 as Clip (min 0, max 6). */
static void export_clip(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  head(f, m, op, op->name, row->type), top(f, m, op);
  fprintf(f, "  %s {\n    min: 0\n    max: 6\n  }\n}\n", row->message);
}

static void export_loss(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  head(f, m, op, op->name, row->type), top(f, m, op);
  if (op->attr.loss_weight != 1) num(f, 2, "loss_weight", op->attr.loss_weight);
  fputs("}\n", f);
}

static void export_accuracy(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  head(f, m, op, op->name, row->type), top(f, m, op);
  fprintf(f, "  %s {\n    top_k: %lld\n  }\n}\n", row->message, (long long)op->attr.top);
}

static void export_lrn(FILE *f, const Module *m, const Op *op, const CaffeType *row) {
  const OpAttrs *a = &op->attr;
  head(f, m, op, op->name, row->type), top(f, m, op);
  fprintf(f, "  %s {\n    local_size: %lld\n", row->message, (long long)a->local_size);
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

/* Each op kind's row of ir/caffe_types.h that writes it, and its handler (NULL: none). */
typedef void (*Export)(FILE *f, const Module *m, const Op *op, const CaffeType *row);
#define export_none NULL
#define EXPORTER(type, op, import, export, ...) export_##export,
static const Export exporters[] = {SWNC_CAFFE_TYPES(EXPORTER)};
#undef EXPORTER
#undef export_none
static const CaffeType caffe_types[] = {SWNC_CAFFE_TYPES(SWNC_CAFFE_TYPE_ROW)};

static const CaffeType *row_of(OpKind kind) {
  for (size_t i = 0; i < sizeof caffe_types / sizeof caffe_types[0]; i++)
    if (caffe_types[i].op == (int)kind && exporters[i]) return &caffe_types[i];
  return NULL;
}

bool emit_prototxt(const Module *m, const char *source, FILE *f) {
  fprintf(f, "# %s from %s by swnc export-caffe\nname: \"%s\"\n", m->name, source, m->name);
  inputs(f, m);
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    if (op->kind == OP_INPUT || op->kind == OP_LABEL) continue; /* inputs() */
    const CaffeType *row = row_of(op->kind);
    if (!row) {
      diag_error(op->loc, "layer '%s' (%s) has no Caffe equivalent", op->name,
                 op_info[op->kind].name);
      return false;
    }
    exporters[row - caffe_types](f, m, op, row);
  }
  return true;
}
