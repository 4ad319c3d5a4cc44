/* Shape inference, one function per op kind (named in ops.h). Each checks its inputs,
 * sets the output value's shape and dtype, and creates the op's learnable parameters.
 * Errors name the layer, its inputs' shapes and what is wrong. */
#include "op_impl.h"

static Value *in_value(Module *m, const Op *op, int i) {
  return &m->graph.values.data[op->inputs.data[i]];
}
static Value *out_value(Module *m, const Op *op) { return &m->graph.values.data[op->output]; }

static Shape shape4(int64_t b, int64_t c, int64_t h, int64_t w) { return (Shape){4, {b, c, h, w}}; }
static Shape shape2(int64_t b, int64_t c) { return (Shape){2, {b, c, 1, 1}}; }
static Shape shape1(int64_t n) { return (Shape){1, {n, 1, 1, 1}}; }

static bool require_f32(Module *m, const Op *op, int i) {
  Value *v = in_value(m, op, i);
  if (v->dtype == DT_F32) return true;
  op_error(op, "input '%s' holds labels (%s %s); this layer needs f32 activations", v->name,
           dtype_name(v->dtype), shape_str(v->shape));
  return false;
}

static bool require_image(Module *m, const Op *op, int i) {
  if (!require_f32(m, op, i)) return false;
  Value *v = in_value(m, op, i);
  if (v->shape.rank == 4) return true;
  op_error(op,
           "input '%s' is %s; this layer needs an image tensor (batch x channels x height x width)",
           v->name, shape_str(v->shape));
  return false;
}

static void set_output(Module *m, const Op *op, Shape s, DType dt) {
  Value *o = out_value(m, op);
  o->shape = s;
  o->dtype = dt;
  o->layout = LAYOUT_BNRC;
}

static void add_weight(Module *m, Op *op, Shape s) {
  Param *p = op_add_param(m, op, PARAM_WEIGHT, s);
  p->lr_mult = op->attr.lr_mult;
  p->decay_mult = op->attr.decay_mult;
  p->init = op->attr.weight_init;
  p->init_arg = op->attr.weight_std;
}

static void add_bias(Module *m, Op *op, ParamRole role, int64_t n) {
  Param *p = op_add_param(m, op, role, shape1(n));
  p->lr_mult = op->attr.bias_lr_mult;
  p->decay_mult = op->attr.bias_decay_mult;
  p->init = op->attr.bias_init;
  p->init_arg = op->attr.bias_value;
}

bool infer_input(Module *m, Op *op) {
  const IntList *s = &op->attr.shape;
  if (s->n == 1)
    set_output(m, op, shape2(m->train.batch, s->v[0]), DT_F32);
  else if (s->n == 3)
    set_output(m, op, shape4(m->train.batch, s->v[0], s->v[1], s->v[2]), DT_F32);
  else {
    op_error(op, "'shape' must be [channels] or [channels, height, width], but has %d items", s->n);
    return false;
  }
  return true;
}

bool infer_label(Module *m, Op *op) {
  set_output(m, op, shape1(m->train.batch), DT_I32);
  return true;
}

/* Output size of a sliding window, floor mode; false if the window does not fit. */
static bool window_out(const Op *op, const char *what, Shape in, const int64_t k[2],
                       const int64_t s[2], const int64_t p[2], int64_t out[2]) {
  for (int d = 0; d < 2; d++) {
    int64_t padded = in.dim[2 + d] + 2 * p[d];
    if (padded < k[d]) {
      op_error(op,
               "%s %lldx%lld is larger than the padded input %lldx%lld (input %s, pad %lldx%lld)",
               what, (long long)k[0], (long long)k[1], (long long)(in.dim[2] + 2 * p[0]),
               (long long)(in.dim[3] + 2 * p[1]), shape_str(in), (long long)p[0], (long long)p[1]);
      return false;
    }
    out[d] = (padded - k[d]) / s[d] + 1;
  }
  return true;
}

/* Whether both channel counts of a (transposed) convolution divide into its groups. */
static bool groups_divide(const Op *op, Shape in) {
  const OpAttrs *a = &op->attr;
  if (in.dim[1] % a->groups == 0 && a->outputs % a->groups == 0) return true;
  op_error(op,
           "input channels (%lld) and outputs (%lld) must both be divisible by groups (%lld); "
           "input is %s",
           (long long)in.dim[1], (long long)a->outputs, (long long)a->groups, shape_str(in));
  return false;
}

bool infer_conv(Module *m, Op *op) {
  if (!require_image(m, op, 0)) return false;
  const OpAttrs *a = &op->attr;
  Shape in = in_value(m, op, 0)->shape;
  int64_t ci = in.dim[1];
  if (!groups_divide(op, in)) return false;
  /* a dilated kernel's taps span d (k - 1) + 1 rows and columns */
  int64_t hw[2],
      span[2] = {a->dilation[0] * (a->kernel[0] - 1) + 1, a->dilation[1] * (a->kernel[1] - 1) + 1};
  char what[96] = "kernel";
  if (span[0] != a->kernel[0] || span[1] != a->kernel[1])
    snprintf(what, sizeof what, "dilated kernel (%lldx%lld, dilation %lldx%lld) spanning",
             (long long)a->kernel[0], (long long)a->kernel[1], (long long)a->dilation[0],
             (long long)a->dilation[1]);
  if (!window_out(op, what, in, span, a->stride, a->pad, hw)) return false;
  set_output(m, op, shape4(in.dim[0], a->outputs, hw[0], hw[1]), DT_F32);
  add_weight(m, op, shape4(a->outputs, ci / a->groups, a->kernel[0], a->kernel[1]));
  if (a->bias) add_bias(m, op, PARAM_BIAS, a->outputs);
  return true;
}

/* Each input pixel spreads a dilated kernel's span of outputs, stride apart, less the padding:
 * Ho = (H - 1) stride - 2 pad + dilation (k - 1) + 1, the size a conv with the same attributes
 * takes back to H. Weights (inputs, outputs / groups, kh, kw), as PyTorch's and Caffe's. */
bool infer_deconv(Module *m, Op *op) {
  if (!require_image(m, op, 0)) return false;
  const OpAttrs *a = &op->attr;
  Shape in = in_value(m, op, 0)->shape;
  int64_t ci = in.dim[1], hw[2];
  if (!groups_divide(op, in)) return false;
  for (int d = 0; d < 2; d++) {
    int64_t span = a->dilation[d] * (a->kernel[d] - 1) + 1;
    hw[d] = (in.dim[2 + d] - 1) * a->stride[d] - 2 * a->pad[d] + span;
    if (a->pad[d] >= span || hw[d] < 1) {
      op_error(op,
               a->pad[d] >= span
                   ? "pad %lldx%lld must be smaller than the span of kernel %lldx%lld at dilation "
                     "%lldx%lld; input is %s"
                   : "pad %lldx%lld leaves no output of kernel %lldx%lld at dilation %lldx%lld; "
                     "input is %s",
               (long long)a->pad[0], (long long)a->pad[1], (long long)a->kernel[0],
               (long long)a->kernel[1], (long long)a->dilation[0], (long long)a->dilation[1],
               shape_str(in));
      return false;
    }
  }
  set_output(m, op, shape4(in.dim[0], a->outputs, hw[0], hw[1]), DT_F32);
  add_weight(m, op, shape4(ci, a->outputs / a->groups, a->kernel[0], a->kernel[1]));
  if (a->bias) add_bias(m, op, PARAM_BIAS, a->outputs);
  return true;
}

bool infer_pool(Module *m, Op *op) {
  if (!require_image(m, op, 0)) return false;
  OpAttrs *a = &op->attr;
  Shape in = in_value(m, op, 0)->shape;
  if (a->global) {
    a->kernel[0] = in.dim[2], a->kernel[1] = in.dim[3];
    a->stride[0] = a->stride[1] = 1;
    a->pad[0] = a->pad[1] = 0;
  } else if (a->kernel[0] == 0) {
    op_error(op, "needs 'kernel' (or global=true)");
    return false;
  }
  for (int d = 0; d < 2; d++)
    if (a->pad[d] >= a->kernel[d]) {
      op_error(op, "pad %lld must be smaller than the kernel %lld", (long long)a->pad[d],
               (long long)a->kernel[d]);
      return false;
    }
  int64_t hw[2];
  if (!window_out(op, "kernel", in, a->kernel, a->stride, a->pad, hw)) return false;
  if (a->ceil)
    for (int d = 0; d < 2; d++) {
      /* Caffe: round up, but the last window must start inside the image or its left pad. */
      int64_t span = in.dim[2 + d] + 2 * a->pad[d] - a->kernel[d];
      hw[d] = (span + a->stride[d] - 1) / a->stride[d] + 1;
      if (a->pad[d] && (hw[d] - 1) * a->stride[d] >= in.dim[2 + d] + a->pad[d]) hw[d]--;
    }
  set_output(m, op, shape4(in.dim[0], in.dim[1], hw[0], hw[1]), DT_F32);
  return true;
}

bool infer_fc(Module *m, Op *op) {
  if (!require_f32(m, op, 0)) return false;
  Shape in = in_value(m, op, 0)->shape;
  if (in.rank < 2) {
    op_error(op, "input '%s' is %s; needs a batch of features", in_value(m, op, 0)->name,
             shape_str(in));
    return false;
  }
  int64_t features = shape_per_image(in);
  set_output(m, op, shape2(in.dim[0], op->attr.outputs), DT_F32);
  add_weight(m, op, shape2(op->attr.outputs, features));
  if (op->attr.bias) add_bias(m, op, PARAM_BIAS, op->attr.outputs);
  return true;
}

bool infer_same(Module *m, Op *op) {
  if (!require_f32(m, op, 0)) return false;
  set_output(m, op, in_value(m, op, 0)->shape, DT_F32);
  return true;
}

bool infer_batchnorm(Module *m, Op *op) {
  if (!require_f32(m, op, 0)) return false;
  Shape in = in_value(m, op, 0)->shape;
  if (in.rank != 4 && in.rank != 2) {
    op_error(op, "input '%s' is %s; needs batch x channels [x height x width]",
             in_value(m, op, 0)->name, shape_str(in));
    return false;
  }
  set_output(m, op, in, DT_F32);
  if (op->attr.affine) {
    Param *scale = op_add_param(m, op, PARAM_SCALE, shape1(in.dim[1]));
    scale->lr_mult = op->attr.lr_mult;
    scale->decay_mult = op->attr.decay_mult;
    scale->init = INIT_CONSTANT;
    scale->init_arg = 1;
    Param *shift = op_add_param(m, op, PARAM_SHIFT, shape1(in.dim[1]));
    shift->lr_mult = op->attr.bias_lr_mult;
    shift->decay_mult = op->attr.bias_decay_mult;
    shift->init = INIT_CONSTANT;
    shift->init_arg = 0;
  }
  return true;
}

bool infer_lrn(Module *m, Op *op) {
  if (!require_image(m, op, 0)) return false;
  if (op->attr.local_size % 2 == 0) {
    op_error(op, "'local_size' must be odd, but is %lld", (long long)op->attr.local_size);
    return false;
  }
  set_output(m, op, in_value(m, op, 0)->shape, DT_F32);
  return true;
}

bool infer_concat(Module *m, Op *op) {
  Shape first = in_value(m, op, 0)->shape;
  int64_t channels = 0;
  for (int i = 0; i < op->inputs.len; i++) {
    if (!require_f32(m, op, i)) return false;
    Value *v = in_value(m, op, i);
    Shape s = v->shape;
    bool same = s.rank == first.rank && s.dim[0] == first.dim[0];
    for (int d = 2; d < s.rank; d++) same = same && s.dim[d] == first.dim[d];
    if (!same) {
      op_error(op, "inputs differ in batch or spatial size: '%s' is %s, '%s' is %s",
               in_value(m, op, 0)->name, shape_str(first), v->name, shape_str(s));
      return false;
    }
    channels += s.dim[1];
  }
  Shape out = first;
  out.dim[1] = channels;
  set_output(m, op, out, DT_F32);
  return true;
}

bool infer_add(Module *m, Op *op) {
  Shape first = in_value(m, op, 0)->shape;
  for (int i = 0; i < op->inputs.len; i++) {
    if (!require_f32(m, op, i)) return false;
    Value *v = in_value(m, op, i);
    bool same = v->shape.rank == first.rank;
    for (int d = 0; same && d < first.rank; d++) same = v->shape.dim[d] == first.dim[d];
    if (!same) {
      op_error(op, "inputs differ in shape: '%s' is %s, '%s' is %s", in_value(m, op, 0)->name,
               shape_str(first), v->name, shape_str(v->shape));
      return false;
    }
  }
  set_output(m, op, first, DT_F32);
  return true;
}

/* Each plane scale[0] x scale[1] times larger. */
bool infer_upsample(Module *m, Op *op) {
  if (!require_image(m, op, 0)) return false;
  Shape in = in_value(m, op, 0)->shape;
  const int64_t *s = op->attr.scale;
  if (in.dim[2] * s[0] > (1 << 20) || in.dim[3] * s[1] > (1 << 20)) {
    op_error(op, "scale [%lld, %lld] makes input '%s' (%s) larger than 2^20 pixels a side",
             (long long)s[0], (long long)s[1], in_value(m, op, 0)->name, shape_str(in));
    return false;
  }
  set_output(m, op, shape4(in.dim[0], in.dim[1], in.dim[2] * s[0], in.dim[3] * s[1]), DT_F32);
  return true;
}

/* x times s: s of x's shape, or one value per image and channel (batch x channels, or
 * batch x channels x 1 x 1: squeeze-and-excitation's scale) broadcast over x's pixels. */
bool infer_mul(Module *m, Op *op) {
  if (!require_f32(m, op, 0) || !require_f32(m, op, 1)) return false;
  Shape x = in_value(m, op, 0)->shape, s = in_value(m, op, 1)->shape;
  bool same = s.rank == x.rank,
       per_channel = s.dim[0] == x.dim[0] && x.rank >= 2 && s.rank >= 2 && s.dim[1] == x.dim[1];
  for (int d = 0; same && d < x.rank; d++) same = s.dim[d] == x.dim[d];
  for (int d = 2; per_channel && d < s.rank; d++) per_channel = s.dim[d] == 1;
  if (!same && !per_channel) {
    op_error(op,
             "'%s' is %s: it needs the shape of '%s' (%s) or one value per image and channel "
             "(%lld x %lld)",
             in_value(m, op, 1)->name, shape_str(s), in_value(m, op, 0)->name, shape_str(x),
             (long long)x.dim[0], (long long)(x.rank >= 2 ? x.dim[1] : 1));
    return false;
  }
  set_output(m, op, x, DT_F32);
  return true;
}

/* Scores (batch x classes) and labels (batch) as a loss or accuracy takes them. */
static bool check_scores_labels(Module *m, const Op *op) {
  if (!require_f32(m, op, 0)) return false;
  Value *scores = in_value(m, op, 0), *labels = in_value(m, op, 1);
  if (scores->shape.rank < 2 || shape_per_image(scores->shape) != scores->shape.dim[1]) {
    op_error(op, "scores '%s' are %s; need batch x classes", scores->name,
             shape_str(scores->shape));
    return false;
  }
  if (labels->dtype != DT_I32) {
    op_error(op, "second input '%s' (%s) must be a label tensor", labels->name,
             shape_str(labels->shape));
    return false;
  }
  if (labels->shape.dim[0] != scores->shape.dim[0]) {
    op_error(op, "scores '%s' (%s) and labels '%s' (%s) differ in batch size", scores->name,
             shape_str(scores->shape), labels->name, shape_str(labels->shape));
    return false;
  }
  return true;
}

bool infer_softmax_loss(Module *m, Op *op) {
  if (!check_scores_labels(m, op)) return false;
  set_output(m, op, (Shape){0, {1, 1, 1, 1}}, DT_F32);
  return true;
}

bool infer_accuracy(Module *m, Op *op) {
  if (!check_scores_labels(m, op)) return false;
  int64_t classes = in_value(m, op, 0)->shape.dim[1];
  if (op->attr.top > classes) {
    op_error(op, "'top' (%lld) exceeds the number of classes (%lld)", (long long)op->attr.top,
             (long long)classes);
    return false;
  }
  set_output(m, op, (Shape){0, {1, 1, 1, 1}}, DT_F32);
  return true;
}
