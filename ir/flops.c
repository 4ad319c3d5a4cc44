/* Forward FLOPs of one batch per op kind (a multiply-add counts as 2). These feed --stats
 * and, later, cost models; they count arithmetic, not memory traffic. */
#include "op_impl.h"

static Shape in_shape(const Graph *g, const Op *op, int i) {
  return g->values.data[op->inputs.data[i]].shape;
}
static double out_elems(const Graph *g, const Op *op) {
  return (double)shape_elems(g->values.data[op->output].shape);
}

double flops_zero(const Graph *g, const Op *op) {
  (void)g, (void)op;
  return 0;
}
double flops_elementwise(const Graph *g, const Op *op) { return out_elems(g, op); }
/* bilinear: four taps weighted and added per output */
double flops_upsample(const Graph *g, const Op *op) {
  return out_elems(g, op) * (op->attr.upsample == UPSAMPLE_BILINEAR ? 7 : 1);
}

double flops_conv(const Graph *g, const Op *op) {
  const OpAttrs *a = &op->attr;
  double per_out = 2.0 * (double)(in_shape(g, op, 0).dim[1] / a->groups) * (double)a->kernel[0] *
                   (double)a->kernel[1];
  return out_elems(g, op) * (per_out + (a->bias ? 1 : 0));
}

/* the convolution it transposes: a multiply-add per input element, filter tap and output
 * channel of its group */
double flops_deconv(const Graph *g, const Op *op) {
  const OpAttrs *a = &op->attr;
  double per_in =
      2.0 * (double)(a->outputs / a->groups) * (double)a->kernel[0] * (double)a->kernel[1];
  return (double)shape_elems(in_shape(g, op, 0)) * per_in + (a->bias ? out_elems(g, op) : 0);
}

double flops_fc(const Graph *g, const Op *op) {
  return out_elems(g, op) *
         (2.0 * (double)shape_per_image(in_shape(g, op, 0)) + (op->attr.bias ? 1 : 0));
}

double flops_pool(const Graph *g, const Op *op) {
  return out_elems(g, op) * (double)op->attr.kernel[0] * (double)op->attr.kernel[1];
}

/* mean, variance, normalise, scale and shift */
double flops_batchnorm(const Graph *g, const Op *op) { return 7.0 * out_elems(g, op); }

/* a window sum of squares per element, then a power and a divide */
double flops_lrn(const Graph *g, const Op *op) {
  return out_elems(g, op) * (2.0 * (double)op->attr.local_size + 3);
}

double flops_add(const Graph *g, const Op *op) { return out_elems(g, op) * (op->inputs.len - 1); }

/* max, exp, sum, log per score */
double flops_softmax(const Graph *g, const Op *op) {
  return 4.0 * (double)shape_elems(in_shape(g, op, 0));
}

/* An epilogue's activation works on the op's output, as it did on its own. */
double op_flops(const Graph *g, const Op *op) {
  double epilogue = op->epilogue.on ? op_info[op->epilogue.kind].flops(g, op) : 0;
  return op_info[op->kind].flops(g, op) + epilogue;
}
