/* The sw26010 target as the compiler sees it (ir/target.h): the kernels of kernels/ priced by
 * the chip's cost model (cost/), from the work each kernel does for a shape (cost/predict.c).
 * The explicit plan runs on the CPEs (im2col, GEMM, col2im); the implicit plan's kernels are
 * still MPE code (with its weight gradient's GEMMs on the CPEs), and so is the transform. */
#include "../../ir/target.h"
#include "cost/predict.h"

static double cpe(SwWork w) { return sw_cpe_time(&w).total; }

static double explicit_cost(const ConvShape *s, ConvComputation c) {
  int groups = (int)s->groups, cig = (int)(s->ci / groups), cog = (int)(s->co / groups), b = (int)s->batch;
  int k = cig * (int)(s->kh * s->kw), pixels = (int)(s->ho * s->wo);
  SwWork cols = sw_im2col_work(b, cig, (int)s->h, (int)s->w, (int)s->ho, (int)s->wo, (int)s->kh, (int)s->kw, 0);
  SwWork w = {0};
  if (c == CONV_FORWARD || c == CONV_WGRAD) sw_work_add(&w, cols);
  if (c == CONV_FORWARD) sw_work_add(&w, sw_gemm_work(cog, pixels, k, b, 0));
  if (c == CONV_WGRAD) {
    sw_work_add(&w, sw_gemm_work(cog, k, pixels, b, 1));
    sw_work_add(&w, sw_stream_work((double)cog * pixels * b, 1));
  }
  if (c == CONV_DGRAD) {
    sw_work_add(&w, sw_gemm_work(k, pixels, cog, b, 0));
    sw_work_add(&w, sw_im2col_work(b, cig, (int)s->h, (int)s->w, (int)s->ho, (int)s->wo, (int)s->kh, (int)s->kw, 1));
  }
  return groups * cpe(w);
}

static double implicit_cost(const ConvShape *s, ConvComputation c) {
  double flops = 2.0 * s->batch * s->co * s->ho * s->wo * s->ci * s->kh * s->kw;
  double bytes = 4.0 * (s->batch * (s->ci * s->h * s->w + s->co * s->ho * s->wo) + s->co * s->ci * s->kh * s->kw);
  if (c != CONV_WGRAD) return sw_mpe_time(bytes, flops);
  SwWork w = sw_gemm_work((int)s->co, (int)s->ci, (int)(s->ho * s->wo * s->batch), (int)(s->kh * s->kw), 0);
  return sw_mpe_time(2 * bytes, 0) + cpe(w);
}

static const char *sw_conv_illegal(const ConvShape *s, ConvPlan plan) {
  if (plan == PLAN_IMPLICIT && s->groups != 1) return "it has groups, and the implicit kernels have none";
  return NULL;
}

static double sw_conv_cost(const ConvShape *s, ConvPlan plan, ConvComputation c) {
  double (*cost)(const ConvShape *, ConvComputation) = plan == PLAN_IMPLICIT ? implicit_cost : explicit_cost;
  if (c == CONV_BACKWARD) return cost(s, CONV_WGRAD) + cost(s, CONV_DGRAD);
  return cost(s, c);
}

static double sw_transform_cost(int64_t batch, int64_t c, int64_t h, int64_t w, Layout to) {
  (void)to;
  return sw_mpe_time(8.0 * batch * c * h * w, 0);
}

const Target sw26010_target = {
    .name = "sw26010",
    .summary = "Sunway SW26010 (4 core groups of 8x8 CPEs), run here on the CPE-cluster emulator",
    .conv_illegal = sw_conv_illegal,
    .conv_cost = sw_conv_cost,
    .transform_cost = sw_transform_cost,
    .accepts = kernel_interface_accepts,
    .plan_margin = 0.1,
    .emits_source_tree = true, /* sw5cc / mpicc -hybrid on the machine (sunway.mk) */
};
