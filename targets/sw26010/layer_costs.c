/* The sw26010 model's price of every kernel call but a convolution's and a transform's
 * (description.c prices those), for --estimate: each op's kernels as kernels/ runs them, their
 * work counted from shapes (cost/predict.c, held to the emulator's counters by
 * unit_sw26010_predict) and priced by cost/model.c; what runs on the MPE at the MPE's rates
 * (as kernels/mpe.c charges it). `batch` is one core group's share. */
#include "layer_costs.h"

#include "cost/predict.h"
#include "kernels/args.h"

static Shape shape_of(const Graph *g, int v) { return g->values.data[v].shape; }

/* Floats of value v over the batch, in its layout (element-wise kernels run over them all). */
static double floats(const Graph *g, int v, int64_t batch) {
  return (double)batch * (double)layout_floats_per_image(shape_of(g, v), g->values.data[v].layout);
}

/* A product as kernels/fc.c runs it: with the rule's buffering. */
static double gemm_cost(SwGemmArgs g) {
  sw_gemm_buffering(&g, 0);
  return sw_cpe_seconds(sw_gemm_work(&g));
}

/* kernels/fc.c's products: Y = X W^T (+ b), dW = dY^T X, dX (+)= dY W. */
static double fc_cost(const Graph *g, const Op *op, int b, bool backward, bool input_grad) {
  static const float present; /* a bias pointer: the model asks only whether there is one */
  int in = (int)shape_per_image(shape_of(g, op->inputs.data[0])), out = (int)op->attr.outputs;
  if (!backward) {
    SwGemmArgs y = {.m = b,
                    .n = out,
                    .k = in,
                    .count = 1,
                    .tb = 1,
                    .lda = in,
                    .ldb = in,
                    .ldc = out,
                    .bias = op->attr.bias ? &present : NULL,
                    .bias_columns = 1};
    return gemm_cost(y);
  }
  SwGemmArgs dw = {
      .m = out, .n = in, .k = b, .count = 1, .ta = 1, .lda = out, .ldb = in, .ldc = in};
  double t = gemm_cost(dw);
  if (op->attr.bias) t += sw_cpe_seconds(sw_row_sums_work(out, 1, b, 0));
  SwGemmArgs dx = {.m = b, .n = in, .k = out, .count = 1, .lda = out, .ldb = in, .ldc = in};
  if (input_grad) t += gemm_cost(dx);
  return t;
}

static double pool_cost(const Graph *g, const Op *op, int b, bool backward) {
  Shape x = shape_of(g, op->inputs.data[0]), y = shape_of(g, op->output);
  const OpAttrs *at = &op->attr;
  SwPoolArgs a = {.c = (int)x.dim[1],
                  .h = (int)x.dim[2],
                  .w = (int)x.dim[3],
                  .ho = (int)y.dim[2],
                  .wo = (int)y.dim[3],
                  .kh = (int)at->kernel[0],
                  .kw = (int)at->kernel[1],
                  .sh = (int)at->stride[0],
                  .sw = (int)at->stride[1],
                  .ph = (int)at->pad[0],
                  .pw = (int)at->pad[1],
                  .max = at->pool == POOL_MAX,
                  .batch = b,
                  .rcnb = g->values.data[op->output].layout == LAYOUT_RCNB};
  if (a.rcnb || (backward ? sw_pool_backward_block(&a) : sw_pool_forward_block(&a)))
    return sw_cpe_seconds(sw_pool_work(&a, backward));
  double in = (double)b * a.c * a.h * a.w, out = (double)b * a.c * a.ho * a.wo; /* mpe.c */
  return backward ? sw_mpe_time(4 * (2 * out + in), out)
                  : sw_mpe_time(4 * (in + 2 * out), out * a.kh * a.kw);
}

static double batchnorm_cost(const Graph *g, const Op *op, int b, bool backward, bool input_grad) {
  Shape x = shape_of(g, op->inputs.data[0]);
  static float somewhere; /* the kernel's dx, as a flag */
  SwBatchNormArgs a = {.c = (int)x.dim[1],
                       .hw = (int)(shape_per_image(x) / x.dim[1]),
                       .batch = b,
                       .backward = backward,
                       .train = 1,
                       .affine = op->attr.affine,
                       .dx = backward && input_grad ? &somewhere : NULL};
  return sw_cpe_seconds(sw_batchnorm_work(&a));
}

static double lrn_cost(const Graph *g, const Op *op, int b, bool backward) {
  Shape x = shape_of(g, op->inputs.data[0]);
  SwLrnArgs a = {.c = (int)x.dim[1],
                 .hw = (int)(x.dim[2] * x.dim[3]),
                 .size = (int)op->attr.local_size,
                 .batch = b,
                 .backward = backward};
  a.pixels = sw_lrn_pixels(a.c, a.hw, backward ? 5 : 2);
  if (a.pixels) return sw_cpe_seconds(sw_lrn_work(&a));
  double n = (double)b * a.c * a.hw; /* on the MPE, as mpe.c charges it */
  return sw_mpe_time(4 * (backward ? 5 : 3) * n, n * (2.0 * a.size + 10));
}

/* The launches of sums of parts (kernels/sum.c): up to SW_SUM_PARTS parts each. */
typedef struct Launches {
  SwSumArgs args;
  double seconds;
} Launches;

static void flush(Launches *l) {
  if (l->args.parts) l->seconds += sw_cpe_seconds(sw_sum_work(&l->args));
  l->args.parts = 0;
}

static void add_part(Launches *l, int sources, int64_t rows, int64_t cols) {
  l->args.part[l->args.parts++] = (SwSumPart){.sources = sources, .rows = rows, .cols = cols};
  if (l->args.parts == SW_SUM_PARTS) flush(l);
}

/* concat: a part per input (batch rows of its size); add: one part with a source per input
 * (SW_SUM_SOURCES a launch, the partial sum going on as the next one's first source), and its
 * backward a part per input. */
/* Whether the memory plan handed an add's output gradient to input i (passes/memplan.c):
 * backward has nothing to copy there. */
static bool handed_gradient(const Graph *g, const Op *op, int i) {
  int own = op->buf[STEP_TRAIN].grad;
  const Op *producer = &g->ops.data[g->values.data[op->inputs.data[i]].producer];
  return op->kind == OP_ADD && own >= 0 && producer->buf[STEP_TRAIN].grad == own;
}

static double join_cost(const Graph *g, const Op *op, int b, bool backward) {
  Launches l = {0};
  int n = op->inputs.len;
  for (int i = 0; i < n; i++) {
    int64_t size = shape_per_image(shape_of(g, op->inputs.data[i]));
    if (op->kind == OP_CONCAT || (backward && !handed_gradient(g, op, i)))
      add_part(&l, 1, op->kind == OP_CONCAT ? b : 1, op->kind == OP_CONCAT ? size : size * b);
  }
  if (op->kind == OP_ADD && !backward) { /* as swk_add_forward: x0 (then y) and the next inputs */
    int64_t e = shape_per_image(shape_of(g, op->output)) * b;
    for (int i = 1; i < n;) {
      int sources = 1;
      for (; i < n && sources < SW_SUM_SOURCES; i++) sources++;
      add_part(&l, sources, 1, e);
      flush(&l);
    }
  }
  flush(&l);
  return l.seconds;
}

/* runtime/conv.c's transposed convolution: its convolution (from y to x) in the explicit plan,
 * the input gradient for forward, the forward and weight gradient for backward; the bias on
 * the MPE (kernels/mpe.c): y read and written, dy read. */
static double deconv_cost(const Graph *g, const Op *op, int64_t batch, bool backward,
                          bool input_grad) {
  Shape x = shape_of(g, op->inputs.data[0]), y = shape_of(g, op->output);
  const OpAttrs *a = &op->attr;
  ConvShape s = {batch,     y.dim[1],     y.dim[2],       y.dim[3],      x.dim[1],     x.dim[2],
                 x.dim[3],  a->kernel[0], a->kernel[1],   a->stride[0],  a->stride[1], a->pad[0],
                 a->pad[1], a->groups,    a->dilation[0], a->dilation[1]};
  double bias = a->bias ? floats(g, op->output, batch) : 0;
  if (!backward)
    return sw_explicit_conv_cost(&s, CONV_DGRAD, 0) + sw_mpe_time(4.0 * 2 * bias, bias);
  return sw_explicit_conv_cost(&s, CONV_WGRAD, 0) + sw_mpe_time(4.0 * bias, bias) +
         (input_grad ? sw_explicit_conv_cost(&s, CONV_FORWARD, 0) : 0);
}

double sw_op_cost(const Graph *g, const Op *op, int64_t batch, bool backward, bool input_grad) {
  int b = (int)batch;
  switch (op_info[op->kind].family) {
  case FAMILY_FC: return fc_cost(g, op, b, backward, input_grad);
  case FAMILY_POOL: return pool_cost(g, op, b, backward);
  case FAMILY_ACTIVATION: /* ReLU in vectors, the others (exp, tanh) in scalar code */
    return sw_cpe_seconds(
        sw_stream_work(floats(g, op->output, batch), backward ? 3 : 2, 1, op->kind == OP_RELU));
  case FAMILY_DROPOUT: return sw_cpe_seconds(sw_stream_work(floats(g, op->output, batch), 2, 1, 0));
  case FAMILY_BATCHNORM: return batchnorm_cost(g, op, b, backward, input_grad);
  case FAMILY_LRN: return lrn_cost(g, op, b, backward);
  case FAMILY_JOIN: return join_cost(g, op, b, backward);
  case FAMILY_UPSAMPLE: { /* on the MPE (kernels/mpe.c) */
    double out = floats(g, op->output, batch), in = floats(g, op->inputs.data[0], batch);
    double flops = (op->attr.upsample == UPSAMPLE_BILINEAR ? 7 : 1) * out;
    return backward && !input_grad ? 0 : sw_mpe_time(4.0 * (in + out), flops);
  }
  case FAMILY_SOFTMAX: { /* on the MPE (kernels/mpe.c) */
    double n = floats(g, op->output, batch);
    if (backward) return input_grad ? sw_mpe_time(4.0 * 3 * n, 4 * n) : 0;
    return sw_mpe_time(4.0 * 2 * n, SW_SOFTMAX_FLOPS * n);
  }
  case FAMILY_MUL: /* on the MPE (kernels/mpe.c): x and s read, y written; backward reads dy too
                      and writes both gradients */
    return sw_mpe_time(4.0 * floats(g, op->output, batch) * (backward ? 4 : 2),
                       floats(g, op->output, batch) * (backward ? 2 : 1));
  case FAMILY_LOSS: {
    int classes = (int)shape_per_image(shape_of(g, op->inputs.data[0]));
    if (classes <= SW_SOFTMAX_CLASSES)
      return sw_cpe_seconds(sw_softmax_work(classes, b, backward, 0));
    return sw_mpe_time(4.0 * 2 * classes * b, (backward ? 2.0 : 20.0) * classes * b);
  }
  case FAMILY_ACCURACY: {
    int classes = (int)shape_per_image(shape_of(g, op->inputs.data[0]));
    if (backward) return 0;
    if (classes <= SW_SOFTMAX_CLASSES) return sw_cpe_seconds(sw_accuracy_work(classes, b));
    return sw_mpe_time(4.0 * classes * b, (double)classes * b);
  }
  case FAMILY_DECONV: return deconv_cost(g, op, batch, backward, input_grad);
  case FAMILY_NONE: return 0; /* the data's ops, written by the runtime */
  case FAMILY_CONV:           /* priced elsewhere: Target.plans, transform_cost */
  case FAMILY_TRANSFORM: return 0;
  }
  return 0;
}

/* The optimizer's step: SGD's on the CPEs (gradient, weights and momentum in, weights and
 * momentum out), Adam's on the MPE (kernels/mpe.c); with several core groups, each group's
 * scaling of its gradients and the sums of the others' into group 0's first
 * (kernels/elementwise.c, runtime/workers.c); clipping, the gradients' squares summed on the
 * MPE and their scaling on the CPEs (runtime/train.c). */
double sw_update_cost(int64_t params, int workers, const TrainConfig *train) {
  double n = (double)params;
  double t = train->optimizer == OPT_ADAM || train->optimizer == OPT_ADAMW
                 ? sw_mpe_time(4.0 * 7 * n, SW_ADAM_FLOPS * n)
                 : sw_cpe_seconds(sw_stream_work(n, 5, 2, 1));
  if (workers > 1)
    t += sw_cpe_seconds(sw_stream_work(n, 2, 1, 1)) +
         (workers - 1) * sw_cpe_seconds(sw_stream_work(n, 3, 1, 1));
  if (train->clip_gradients > 0)
    t += sw_mpe_time(4.0 * n, 2.0 * n) + sw_cpe_seconds(sw_stream_work(n, 1, 1, 1));
  return t;
}
