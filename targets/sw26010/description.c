/* The sw26010 target as the compiler sees it (ir/target.h): the kernels of kernels/ priced by
 * the chip's cost model (cost/), from the work each kernel does for a shape (cost/predict.c).
 * Both plans and the transforms run on the CPEs: explicit as im2col, GEMM and col2im (GEMM alone
 * for a pointwise filter); implicit as
 * products over runs of pixels that share each filter block, after reordering the filters.
 * A generated program runs one worker per core group, each on its share of the batch, all at
 * once: costs are for one group's share (the default --core-groups), which is also the chip's
 * time. Small shares make the implicit plan's products narrow, and the price shows it. */
#include <math.h>
#include <stdio.h>

#include "../../ir/target.h"
#include "cost/predict.h"
#include "layer_costs.h"
#include "kernels/args.h"

/* The explicit plan as kernels/conv.c runs it, per group and launch of nb images (with a bias;
 * the input gradient written, not added); its GEMMs buffered as tiling word `tiling` says. Each
 * kernel priced on its own: one's DMA does not run under another's arithmetic. */
double sw_explicit_conv_cost(const ConvShape *s, ConvComputation c, int tiling) {
  static const float present; /* a bias pointer: the model asks only whether there is one */
  int groups = (int)s->groups, cig = (int)(s->ci / groups), cog = (int)(s->co / groups),
      b = (int)s->batch;
  int k = cig * (int)(s->kh * s->kw), pixels = (int)(s->ho * s->wo);
  int h = (int)s->h, w = (int)s->w, ho = (int)s->ho, wo = (int)s->wo, kh = (int)s->kh,
      kw = (int)s->kw;
  int sh = (int)s->sh, ph = (int)s->ph;
  bool pointwise = sw_conv_pointwise(kh, kw, sh, (int)s->sw, ph, (int)s->pw);
  int nb = sw_conv_images_per_launch(k, pixels, pointwise);
  int64_t in_image = s->ci * h * w, out_image = s->co * pixels;
  double seconds = 0;
  for (int first = 0, n; first < b; first += n) {
    n = b - first < nb ? b - first : nb;
    SwConvColumns cols = sw_conv_columns(pointwise, n, pixels, in_image);
    SwGemmArgs m;
    if (c == CONV_FORWARD) {
      m = sw_conv_forward_gemm(cog, k, pixels, n, cols.ld, cols.image_stride, out_image);
      m.bias = &present;
    } else if (c == CONV_WGRAD) {
      m = sw_conv_weights_gemm(cog, k, pixels, n, cols.ld, cols.image_stride, out_image,
                               first == 0 ? 0.0f : 1.0f);
    } else {
      m = sw_conv_columns_gemm(cog, k, pixels, n, cols.ld, cols.image_stride, out_image, 0);
    }
    sw_gemm_buffering(&m, tiling);
    seconds += sw_cpe_seconds(sw_gemm_work(&m));
    if (!pointwise)
      seconds += sw_cpe_seconds(
          sw_im2col_work(n, cig, h, w, ho, wo, kh, kw, sh, ph, (int)s->dh, c == CONV_DGRAD, 0));
  }
  double db = c == CONV_WGRAD ? sw_cpe_seconds(sw_row_sums_work((double)s->co, pixels, b, 0)) : 0;
  return groups * seconds + db;
}

static double implicit_cost(const ConvShape *s, ConvComputation c, int tiling) {
  SwImplicitArgs a = {CONV_SHAPE_GEOMETRY(s), .batch = (int)s->batch};
  int64_t filters = s->co * s->ci, taps = s->kh * s->kw;
  double seconds;
  if (c == CONV_WGRAD) {
    a.pass = SW_IMPLICIT_WEIGHTS;
    seconds =
        sw_cpe_seconds(sw_transpose_work(taps, 1, filters, 0)) + /* dW back to (No, Ni, K, K) */
        sw_cpe_seconds(
            sw_row_sums_work((double)s->co, (double)s->batch, (double)(s->ho * s->wo), 0)); /* db */
  } else {
    a.pass = c == CONV_FORWARD ? SW_IMPLICIT_FORWARD : SW_IMPLICIT_DATA;
    seconds = sw_cpe_seconds(sw_transpose_work(filters, 1, taps, 0)); /* W to (K, K, No, Ni) */
  }
  sw_implicit_buffering(&a, tiling);
  return seconds + sw_cpe_seconds(sw_implicit_work(&a));
}

static const char *implicit_illegal(const ConvShape *s) {
  if (s->dh != 1 || s->dw != 1) return "it is dilated, and the implicit kernels are not";
  return s->groups != 1 ? "it has groups, and the implicit kernels have none" : NULL;
}

/* One core group's share of a batch: the largest, which the others wait for. */
static int64_t group_share(int64_t batch) { return (batch + SW_CORE_GROUPS - 1) / SW_CORE_GROUPS; }

/* swCaffe's plans (--conv=swcaffe), to compare with what it measured: swDNN's implicit
 * convolution where swCaffe calls it, explicit (im2col + GEMM) elsewhere. Its conditions, on a core
 * group's share of the batch (what the kernel sees): forward, batch a multiple of 128, Ni and No at least 64 and multiples of 32;
 * backward, batch at least 64 and a multiple of 32, Ni a multiple of 128, No at least 64 and a
 * multiple of 32; groups 1, no dilation and stride 1 both ways (swDNN, Fang et al.). The implicit plan here
 * is swnc's kernel standing in for swDNN's; both plans single-buffered, as swCaffe's kernels
 * wait for each transfer (swDNN's paper double-buffers; the kernels swCaffe ships do not). */
static ConvPlan sw_swcaffe_plan(const ConvShape *s, ConvComputation c, int *tiling) {
  *tiling = SW_TILING_SINGLE_BUFFERED;
  int64_t b = group_share(s->batch);
  bool common = s->groups == 1 && s->dh == 1 && s->dw == 1 && s->sh == 1 && s->sw == 1 &&
                s->co >= 64 && s->co % 32 == 0;
  bool swdnn = c == CONV_FORWARD ? b % 128 == 0 && b > 0 && s->ci >= 64 && s->ci % 32 == 0
                                 : b >= 64 && b % 32 == 0 && s->ci % 128 == 0 && s->ci > 0;
  return common && swdnn ? PLAN_IMPLICIT : PLAN_EXPLICIT;
}

/* A plan's cost (TargetPlan.cost) on one core group's share of the batch. */
static double group_cost(double (*cost)(const ConvShape *, ConvComputation, int),
                         const ConvShape *whole, ConvComputation c, int tiling) {
  ConvShape s = *whole;
  s.batch = group_share(whole->batch);
  if (c == CONV_BACKWARD) return cost(&s, CONV_WGRAD, tiling) + cost(&s, CONV_DGRAD, tiling);
  return cost(&s, c, tiling);
}
static double explicit_plan_cost(const ConvShape *s, ConvComputation c, int tiling) {
  return group_cost(sw_explicit_conv_cost, s, c, tiling);
}
static double implicit_plan_cost(const ConvShape *s, ConvComputation c, int tiling) {
  return group_cost(implicit_cost, s, c, tiling);
}

static const char *sw_tiling_name(int word, char name[TILING_NAME_MAX]) {
  snprintf(name, TILING_NAME_MAX, "%s",
           word == SW_TILING_SINGLE_BUFFERED   ? "single"
           : word == SW_TILING_DOUBLE_BUFFERED ? "double"
                                               : "?");
  return name;
}

/* (B,N,R,C) is (batch, c, hw) and (R,C,N,B) is (hw, c, batch): swapping the outer and inner
 * axes. The blocked layout has no CPE transform (no kernel takes it here). */
static double sw_transform_cost(int64_t whole, int64_t c, int64_t h, int64_t w, Layout from,
                                Layout to) {
  if (from == LAYOUT_BNRC16 || to == LAYOUT_BNRC16) return INFINITY;
  int64_t batch = group_share(whole);
  if (to == LAYOUT_RCNB) return sw_cpe_seconds(sw_transpose_work(batch, c, h * w, 0));
  return sw_cpe_seconds(sw_transpose_work(h * w, c, batch, 0));
}

/* The kernel interface's layouts but the blocked one: the CPE kernels have none on it. */
static bool sw_accepts(const Graph *g, const Op *op, Layout l) {
  return l != LAYOUT_BNRC16 && kernel_interface_accepts(g, op, l);
}

#define NO_WINOGRAD                                                                                \
  "the sw26010 kernels have no Winograd convolution on the CPEs (the host's runs on the MPE only)"
const Target sw26010_target = {
    .name = "sw26010",
    .summary = "Sunway SW26010 (4 core groups of 8x8 CPEs), run here on the CPE-cluster emulator",
    .plans =
        {
            [PLAN_EXPLICIT] = {.cost = explicit_plan_cost},
            [PLAN_IMPLICIT] = {.illegal = implicit_illegal, .cost = implicit_plan_cost},
            [PLAN_DIRECT] = {.absent = "the sw26010 kernels have no direct convolution on the "
                                       "CPEs (the host's runs on the MPE only)"},
            [PLAN_WINOGRAD2] = {.absent = NO_WINOGRAD},
            [PLAN_WINOGRAD4] = {.absent = NO_WINOGRAD},
            [PLAN_DEPTHWISE] = {.absent = "the sw26010 kernels have no depthwise convolution on "
                                          "the CPEs (the host's runs on the MPE only)"},
        },
    .transform_cost = sw_transform_cost,
    .accepts = sw_accepts,
    .plan_margin = 0.1,
    .emits_source_tree = true, /* sw5cc / mpicc -hybrid on the machine (sunway.mk) */
    .op_cost = sw_op_cost,
    .update_cost = sw_update_cost,
    .batch_parts = SW_CORE_GROUPS,
    .reference_plans = "swcaffe",
    .reference_plan = sw_swcaffe_plan,
    .tiling_name = sw_tiling_name,
};
