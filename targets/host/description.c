/* The host target as the compiler sees it (ir/target.h): legality, layouts and a cost model of
 * the kernels in this folder. The model is a roofline per kernel: time = flops / (peak x
 * efficiency) + bytes moved / bandwidth, where each kernel's efficiency follows the shape of
 * its inner loops (GEMM dimensions for explicit, register-block fill for implicit). The
 * constants were read off bench/conv_plans on an AVX-512 machine (docs/targets.md); only their
 * ratios matter to the choices, and `swnc tune` replaces the model by measurements. */
#include <math.h>
#include <unistd.h>

#include "../../ir/target.h"
#include "conv_depthwise.h"
#include "direct_tiling.h"
#include "isa.h"
#include "workspace.h"

/* Per thread; a step's estimate divides by the online CPUs, as kernels use them all. */
static const double PEAK = 100e9;         /* FP32 FLOP/s of an FMA loop */
static const double BANDWIDTH = 10e9;     /* bytes/s, streaming */
static const double STRIDED = 4e9;        /* bytes/s, a layout transform (one side strided) */
static const double GEMM_EFF = 0.55;      /* the host GEMM (gemm.c) on large operands */
static const double IMPLICIT_EFF = 0.45;  /* the implicit micro-kernel, full register blocks */
static const double SCALAR_SLOWDOWN = 16; /* its scalar path for batch and channel remainders */
static const int64_t VECTOR_IMAGES = 16, CHANNEL_BLOCK = 4; /* its register block */
static const double PACKED_GEMM_EFF = 0.8;  /* the implicit weight gradient's GEMMs vs explicit's */
static const double DIRECT_EFF = 0.55;      /* the direct strips' FMA rate, full blocks */
static const double DIRECT_DGRAD_EFF = 0.6; /* the same strips on dY: explicit's input gradient
                                               is slower than its forward, direct's is not */
static const double DIRECT_WGRAD_EFF = 0.6; /* its weight-gradient tiles' */

static const double DEPTHWISE_EFF = 0.3; /* its vector multiply-adds, 2 loads each */

static double fill(double n, double half) { return n / (n + half); } /* 0..1, half at n = half */

/* What differs between the kernels' instruction sets (isa.h), read off `bench/conv_plans 2 8`
 * run with each (SWN_ISA narrows the kernels; docs/targets.md has the figures). With AVX-512 a
 * strip holds 2 blocks x 14 pixels: a 1x1 filter's input channels alone keep it busy and it
 * beats the GEMM, as its 3x3 strips do; with AVX2 it holds 1 block x 6 pixels, a 1x1 filter
 * runs at about the GEMM's rate and the weight gradient's tiles starve on short planes. */
typedef struct HostRates {
  double direct_taps_half;  /* the direct strips' fill(kh kw, h) */
  double wgrad_pixels_half; /* the direct weight gradient's fill(a visit's pixels, h) */
} HostRates;

/* In host_isas' order (isa.h), as the kernels' tables are. */
static const HostRates host_rates[] = {
#ifdef HOST_X86_KERNELS
    {0.05, 24},  /* avx512 */
    {0.25, 100}, /* avx2 */
#endif
    {0.25, 100}, /* c: unmeasured, as AVX2 */
};
_Static_assert(sizeof host_rates / sizeof host_rates[0] == HOST_ISA_COUNT,
               "a row of rates per instruction set");

/* The rates of the instruction set a program on this machine will use (asked once). */
static const HostRates *rates(void) {
  static const HostRates *chosen;
  if (!chosen) chosen = &host_rates[host_isa_index(host_isa_choice())];
  return chosen;
}

static double flops(const ConvShape *s) {
  return 2.0 * s->batch * s->co * s->ho * s->wo * (s->ci / s->groups) * s->kh * s->kw;
}

/* A GEMM's efficiency from its smaller outer dimension and its inner dimension: half at 32 (64
 * channels ran the res2 1x1 layers of ResNet-50 at about half the direct plan's rate). */
static double gemm_eff(double m, double inner) { return GEMM_EFF * fill(m, 32) * fill(inner, 32); }

static double explicit_cost(const ConvShape *s, ConvComputation c) {
  double cig = (double)s->ci / s->groups, cog = (double)s->co / s->groups,
         taps = (double)(s->kh * s->kw);
  double k = cig * taps, pixels = (double)(s->ho * s->wo);
  double columns = 4.0 * s->batch * s->groups * k * pixels; /* im2col written then read: bytes */
  bool flip = s->sh == 1 && s->sw == 1 && s->h * s->w <= s->ho * s->wo;
  /* images narrower than WIDE_GEMM columns go side by side (workspace.h) */
  double side = pixels >= WIDE_GEMM ? 1 : fmin(ceil(WIDE_GEMM / pixels), (double)s->batch);
  double eff = c == CONV_FORWARD ? gemm_eff(cog, k)
               : c == CONV_WGRAD ? gemm_eff(fmin(cog, k), pixels * side)
               : flip            ? gemm_eff(cig, cog * taps)
                                 : gemm_eff(k, cog);
  return flops(s) / (PEAK * eff) + 2 * columns / BANDWIDTH;
}

/* The fraction of (channel, image) pairs the vector path covers, the rest at scalar speed. */
static double vector_speed(const ConvShape *s, int64_t channels) {
  double bfull = (double)(s->batch / VECTOR_IMAGES * VECTOR_IMAGES) / s->batch;
  double cfull = (double)(channels / CHANNEL_BLOCK * CHANNEL_BLOCK) / channels;
  double vec = bfull * cfull;
  return 1 / (vec + (1 - vec) * SCALAR_SLOWDOWN);
}

static double implicit_cost(const ConvShape *s, ConvComputation c) {
  double taps = (double)(s->kh * s->kw);
  if (c == CONV_WGRAD) {
    /* per tap, a GEMM (co x ci, inner: up to 4096 pixel-images) over rows packed per block */
    double packed = 4.0 * taps * (s->co + s->ci) * s->ho * s->wo * s->batch;
    double m = (double)(s->co < s->ci ? s->co : s->ci);
    return flops(s) / (PEAK * gemm_eff(m, 4096) * PACKED_GEMM_EFF) + 2 * packed / BANDWIDTH;
  }
  bool forward = c == CONV_FORWARD;
  double depth = (double)(forward ? s->ci : s->co);
  double eff = IMPLICIT_EFF * fill(depth, 4) * fill(taps, 0.5) * (forward ? 1 : 0.75);
  return flops(s) / (PEAK * eff * vector_speed(s, forward ? s->co : s->ci));
}

/* The kernels' view of a shape (workspace.h sizes from it). */
static SwkConv kernel_shape(const ConvShape *s) {
  return (SwkConv){CONV_SHAPE_GEOMETRY(s), .dh = (int)s->dh, .dw = (int)s->dw,
                   .groups = (int)s->groups};
}

/* The direct strips' efficiency (`eff` at full blocks): the output's channels fill the blocks
 * of 16, and few taps leave less work per register block (per instruction set: HostRates). */
static double strip_eff(double eff, double co, double taps) {
  return eff * fill(co, 16) * fill(taps, rates()->direct_taps_half);
}

/* The weight gradient's tiles: a strip's terms, and runs of `pixels` to sum over. */
static double tile_eff(double co, double pixels, double taps) {
  return strip_eff(DIRECT_WGRAD_EFF, co, taps) * fill(pixels, rates()->wgrad_pixels_half);
}

/* The direct plan's input gradient: per phase of dX's pixels (one with stride 1), the forward
 * convolution of dY with the phase's taps (workspace.h: host_direct_phase), dY copied with the
 * phase's padding; a phase no tap reaches is zeroed. */
static double direct_input_gradient_cost(const ConvShape *s) {
  SwkConv p = kernel_shape(s);
  double t = 2.0 * 4 * s->co * s->ci * s->kh * s->kw / BANDWIDTH; /* packing */
  HostPhase only; /* one phase, filters outer: packed by group into L2, read, not written */
  if (host_direct_single_phase(&p, &only) &&
      host_direct_filters_outweigh(&only.q, (int)s->batch, false))
    t /= 2;
  for (int rh = 0; rh < p.sh; rh++)
    for (int rw = 0; rw < p.sw; rw++) {
      SwkConv q = host_direct_phase(&p, rh, rw).q;
      double pixels = (double)s->batch * q.ho * q.wo, taps = (double)(q.kh * q.kw);
      if (!taps) {
        t += 4.0 * HOST_BLOCK * host_blocks(q.co) * pixels / BANDWIDTH;
        continue;
      }
      t += 2.0 * pixels * q.co * q.ci * taps / (PEAK * strip_eff(DIRECT_DGRAD_EFF, q.co, taps));
      if (q.pw) t += 2.0 * 4 * s->batch * q.ci * q.h * (q.w + 2 * q.pw) / BANDWIDTH;
    }
  return t;
}

/* The direct plan (conv_direct.c): strips and, for the weight gradient, tiles, whose runs are
 * a visit's pixels (several small images: host_direct_wgrad_images). Beside the arithmetic: the
 * filters packed per call (conv_direct.c: Packing), the input copied with its horizontal
 * padding or split into its stride phases (by the weight gradient only padded, for few channels:
 * host_direct_wgrad_copies), or by a strided 1x1's weight gradient the pixels it reads
 * (host_direct_subsamples). */
static double direct_cost(const ConvShape *s, ConvComputation c) {
  if (c == CONV_DGRAD) return direct_input_gradient_cost(s);
  SwkConv p = kernel_shape(s);
  bool planar = host_direct_reads_planar(&p);
  double taps = (double)(s->kh * s->kw), pixels = (double)(s->ho * s->wo);
  double packing = 2.0 * 4 * s->co * s->ci * taps / BANDWIDTH;
  double padding = 2.0 * 4 * s->batch * host_direct_padded_image_floats(&p, planar) / BANDWIDTH;
  if (c == CONV_WGRAD) {
    double visit = pixels * host_direct_wgrad_images(&p, planar);
    double subsampling =
        host_direct_subsamples(&p) ? 2.0 * 4 * s->batch * s->ci * pixels / BANDWIDTH : 0;
    return flops(s) / (PEAK * tile_eff(s->co, visit, taps)) +
           (host_direct_wgrad_copies(&p, planar) ? padding : 0) + subsampling;
  }
  /* filters outer, each thread packs a group into a buffer in its L2: read, not written */
  if (host_direct_filters_outweigh(&p, (int)s->batch, planar)) packing /= 2;
  return flops(s) / (PEAK * strip_eff(DIRECT_EFF, s->co, taps)) + packing + padding;
}

/* The Winograd plans (conv_winograd.c), F(m x m, r x r): per pass of up to `chunk` tiles, each
 * tile's inputs transformed to alpha^2 values per input channel, the products (2 alpha^2 ci co
 * flops a tile) on the direct plan's register blocks as 1x1 convolutions (fill(taps 1)), each
 * tile's alpha^2 values per output channel transformed back; the transformed filters (or the
 * weight gradient's sums) are written once and streamed by every pass. The input gradient is
 * the same computation on dY with the channels swapped. Legal: host_winograd_legal. */
static double winograd_cost(const ConvShape *s, int m, ConvComputation c) {
  SwkConv p = kernel_shape(s);
  if (!host_winograd_legal(&p, m)) return INFINITY;
  SwkConv q = c == CONV_DGRAD ? host_direct_transposed(&p) : p;
  HostWinograd g = host_winograd(&q, m);
  double tiles = (double)s->batch * g.tiles_h * g.tiles_w;
  double passes = ceil(tiles / g.chunk), per_pass = tiles < g.chunk ? tiles : g.chunk;
  double products = 2.0 * tiles * g.positions * q.ci * q.co;
  double transformed = 4.0 * 2 * tiles * g.positions * 16 * (g.bi + g.bo); /* written, read */
  double images = 4.0 * s->batch * (q.ci * q.h * q.w + q.co * q.ho * q.wo);
  double filters = 4.0 * (double)host_winograd_filter_floats(&g) * (passes + 1);
  double eff = c == CONV_WGRAD ? tile_eff(q.co, per_pass, 1) : strip_eff(DIRECT_EFF, q.co, 1);
  if (c == CONV_WGRAD) filters *= 2; /* the sums are read and written */
  return products / (PEAK * eff) + (transformed + images + filters) / BANDWIDTH;
}

/* Asked once: sysconf reads /sys on every call, and the layout search prices thousands of
 * candidates. */
static double cpus(void) {
  static double n;
  if (!n) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 ? (double)online : 1;
  }
  return n;
}

/* Each plan's column of costs (TargetPlan.cost): the model prices each plan's rule; its
 * tilings are only ever measured (swnc tune). CONV_BACKWARD: both gradients by one call;
 * explicit's gathers dY once for both GEMMs, the others' cost what their two computations do. */
static double explicit_plan_cost(const ConvShape *s, ConvComputation c, int tiling) {
  (void)tiling;
  if (c != CONV_BACKWARD) return explicit_cost(s, c) / cpus();
  double gather = 2.0 * 4 * s->batch * s->co * s->ho * s->wo / BANDWIDTH;
  return (explicit_cost(s, CONV_WGRAD) + explicit_cost(s, CONV_DGRAD) - gather) / cpus();
}

/* The depthwise plan (conv_depthwise.c): a pass over its input and output (forward: x read, y
 * written; input gradient: dY read, dX written; weight gradient: x and dY read), padded to
 * whole blocks, and a multiply-add per tap and pixel on 16 lanes at a time; a strided input
 * gradient also reads and writes each row of dX in L1 once per tap reaching it. */
static double depthwise_cost(const ConvShape *s, ConvComputation c) {
  double lanes = (double)host_blocks((int)s->co) * HOST_BLOCK;
  double bytes = 4.0 * s->batch * lanes * (s->h * s->w + s->ho * s->wo);
  double flops_padded = 2.0 * s->batch * lanes * s->ho * s->wo * s->kh * s->kw;
  double eff = DEPTHWISE_EFF;
  if (c == CONV_DGRAD && (s->sh > 1 || s->sw > 1)) eff /= 2;
  return bytes / BANDWIDTH + flops_padded / (PEAK * eff);
}

static double winograd2_cost(const ConvShape *s, ConvComputation c) {
  return winograd_cost(s, 2, c);
}
static double winograd4_cost(const ConvShape *s, ConvComputation c) {
  return winograd_cost(s, 4, c);
}
/* A plan whose two gradients by one call cost what they cost apart. */
#define PLAN_COST(plan, cost)                                                                      \
  static double plan##_plan_cost(const ConvShape *s, ConvComputation c, int tiling) {              \
    (void)tiling;                                                                                  \
    return (c == CONV_BACKWARD ? cost(s, CONV_WGRAD) + cost(s, CONV_DGRAD) : cost(s, c)) / cpus(); \
  }
PLAN_COST(implicit, implicit_cost)
PLAN_COST(direct, direct_cost)
PLAN_COST(winograd2, winograd2_cost)
PLAN_COST(winograd4, winograd4_cost)
PLAN_COST(depthwise, depthwise_cost)
#undef PLAN_COST

/* The kernels but explicit's and depthwise's have no groups; only explicit's dilate. */
static bool dilated(const ConvShape *s) { return s->dh != 1 || s->dw != 1; }

static const char *implicit_illegal(const ConvShape *s) {
  if (dilated(s)) return "it is dilated, and the host's implicit kernels are not";
  return s->groups != 1 ? "it has groups, and the host's implicit kernels have none" : NULL;
}
static const char *direct_illegal(const ConvShape *s) {
  if (dilated(s)) return "it is dilated, and the host's direct kernels are not";
  return s->groups != 1 ? "it has groups, and the host's direct kernels have none" : NULL;
}
static const char *winograd_illegal(const ConvShape *s) {
  if (dilated(s)) return "it is dilated, and Winograd's transforms assume adjacent taps";
  return s->groups != 1 ? "it has groups, and the host's Winograd kernels have none" : NULL;
}

static const char *depthwise_illegal(const ConvShape *s) {
  SwkConv p = kernel_shape(s);
  if (dilated(s)) return "it is dilated, and the host's depthwise kernels are not";
  return host_depthwise_legal(&p) ? NULL
                                  : "it is not depthwise (as many groups as input and output "
                                    "channels)";
}

/* Every element read and written, one side strided (the pairs of layouts with a transform:
 * transform_word). */
static double host_transform_cost(int64_t batch, int64_t c, int64_t h, int64_t w, Layout from,
                                  Layout to) {
  (void)from, (void)to;
  return 2.0 * 4 * batch * c * h * w / STRIDED / cpus();
}

/* The direct plan's forward and input gradient have tilings (direct_tiling.h); the model
 * prices their rule. */
static int direct_tilings(const ConvShape *s, ConvComputation c, int words[TILINGS_MAX]) {
  if (c != CONV_FORWARD && c != CONV_DGRAD) return 0;
  _Static_assert((int)HOST_TILINGS_MAX <= (int)TILINGS_MAX, "ir/target.h holds the host's tilings");
  SwkConv p = kernel_shape(s);
  SwkConv q = c == CONV_DGRAD ? host_direct_transposed(&p) : p;
  return host_direct_tiling_candidates(&q, (int)s->batch, words);
}

static const char *host_tiling_name(int word, char name[TILING_NAME_MAX]) {
  _Static_assert((int)HOST_TILING_NAME_MAX <= (int)TILING_NAME_MAX,
                 "ir/target.h holds the host's names");
  return host_direct_tiling_name(word, name);
}

/* With the thread count a program takes by default: the cores (docs/runtime.md). */
static bool host_conv_reads_planar(const ConvShape *s) {
  SwkConv p = kernel_shape(s);
  return host_direct_reads_planar(&p);
}

/* Each plan's workspace (TargetPlan.workspace) with the threads a program takes by default. */
static SwkConv workspace_shape(const ConvShape *s, bool input_gradient) {
  SwkConv p = kernel_shape(s);
  p.no_input_gradient = !input_gradient;
  return p;
}
#define PLAN_WORKSPACE(plan, floats)                                                               \
  static double plan##_workspace(const ConvShape *s, bool input_gradient) {                        \
    SwkConv p = workspace_shape(s, input_gradient);                                                \
    return (double)(floats);                                                                       \
  }
PLAN_WORKSPACE(explicit, host_conv_workspace(&p, (int)cpus()))
PLAN_WORKSPACE(implicit, host_conv_implicit_workspace(&p, (int)s->batch, (int)cpus()))
PLAN_WORKSPACE(direct, host_conv_direct_workspace_for(&p, (int)cpus()))
PLAN_WORKSPACE(winograd2, host_conv_winograd_workspace_for(&p, 2, (int)cpus()))
PLAN_WORKSPACE(winograd4, host_conv_winograd_workspace_for(&p, 4, (int)cpus()))
PLAN_WORKSPACE(depthwise, host_conv_depthwise_workspace_for(&p, (int)cpus()))
#undef PLAN_WORKSPACE
static double fc_workspace(void) { return (double)host_fc_workspace((int)cpus()); }

const Target host_target = {
    .name = "host",
    .summary = "x86-64 or ARM Linux: its own GEMM (AVX-512, AVX2+FMA or plain C) and OpenMP",
    .kernel_isa = host_isa_choice,
    /* Open MPI's start-up and shared memory, OpenMP's threads, the libraries: what a program's
     * peak holds beyond its plan and data sets measured 20 MiB for cifar10_quick at batch 1
     * (2 threads, an 8-image test set) and 21 MiB for lenet beside its data */
    .process_mib = 20,
    .fc_workspace = fc_workspace,
    .folds_gradients = true,
    .plans =
        {
            [PLAN_EXPLICIT] = {.cost = explicit_plan_cost, .workspace = explicit_workspace},
            [PLAN_IMPLICIT] = {implicit_illegal, implicit_plan_cost, implicit_workspace},
            [PLAN_DIRECT] = {direct_illegal, direct_plan_cost, direct_workspace, direct_tilings},
            [PLAN_WINOGRAD2] = {winograd_illegal, winograd2_plan_cost, winograd2_workspace},
            [PLAN_WINOGRAD4] = {winograd_illegal, winograd4_plan_cost, winograd4_workspace},
            [PLAN_DEPTHWISE] = {depthwise_illegal, depthwise_plan_cost, depthwise_workspace},
        },
    .tiling_name = host_tiling_name,
    .transform_cost = host_transform_cost,
    .accepts = kernel_interface_accepts,
    .conv_reads_planar = host_conv_reads_planar,
    .plan_margin = 0.1, /* bench/plans_end_to_end.sh: choices that won by less than this per
                           kernel lost up to 9% end to end on resnet50 */
};
