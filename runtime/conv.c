/* Convolution dispatch. Each computation of a convolution (forward, weight gradient, input
 * gradient) runs in a plan: explicit GEMM on (B,N,R,C), implicit GEMM on (R,C,N,B), direct or
 * Winograd (F(2x2, 3x3 or 5x5), F(4x4, 3x3)) on (B,N/16,R,C,16). The compiler chose one per
 * computation and the layout of the tensors (docs/ir.md); where a computation's plan works on
 * another layout, its operands are converted into scratch memory owned here (grown to the
 * largest need, then kept) and its result converted back.
 *
 * --autotune (swCaffe's runtime mode): during the first training iterations every computation
 * with more than one plan that can run it runs in each of them, in turn, ROUNDS times each
 * after one untimed warm-up call, with its conversions; the fastest (least time of its rounds)
 * is kept for the rest of the run and reported. Timings are the target's (swn_target_now):
 * wall time, so that two runs may choose differently and then differ by float rounding; on a
 * target that estimates its hardware's time (sw26010 on its emulator) the estimate, the same
 * in every run and every call: there each plan runs once, without a warm-up. */
#include "conv.h"

#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "util.h"

enum { SLOT_X, SLOT_Y, SLOT_DX, SLOT_WS, SLOTS, ROUNDS = 2 };

typedef struct Tuner {
  bool warm;              /* the warm-up call is done */
  int runs[SWN_PLANS];    /* timed calls per plan */
  double best[SWN_PLANS]; /* least seconds per plan */
  int chosen;             /* -1 until decided */
} Tuner;

struct SwnConvState {
  const SwnNetwork *net;
  size_t ws_floats; /* the step's shared workspace */
  float *slot[SLOTS];
  size_t cap[SLOTS];
  bool autotune, timing;
  FILE *report;
  Tuner (*tuners)[3]; /* per layer and computation */
};

static const char *const computation_names[] = {"forward", "wgrad", "dgrad"};

SwnConvState *swn_conv_state_new(const SwnNetwork *net, bool autotune, FILE *report) {
  SwnConvState *c = swn_alloc(sizeof *c);
  c->net = net, c->autotune = autotune, c->report = report;
  c->ws_floats = net->workspace();
  c->tuners = swn_alloc(sizeof *c->tuners * (size_t)(net->nlayers + 1));
  for (int i = 0; i < net->nlayers; i++)
    for (int k = 0; k < 3; k++) c->tuners[i][k].chosen = -1;
  return c;
}

void swn_conv_state_free(SwnConvState *c) {
  if (!c) return;
  for (int i = 0; i < SLOTS; i++) free(c->slot[i]);
  free(c->tuners);
  free(c);
}

void swn_conv_timing(SwnConvState *c, bool on) { c->timing = on; }

static float *scratch(SwnConvState *c, int slot, size_t floats) {
  if (floats > c->cap[slot]) {
    free(c->slot[slot]);
    c->slot[slot] = swn_alloc(sizeof(float) * floats);
    c->cap[slot] = floats;
  }
  return c->slot[slot];
}

/* ------------------------------------------------------------------ running one plan */

/* Each plan's row (runtime/conv_plans.h): its layout, kernels, workspace and ReLU epilogue. A
 * SHARED plan's workspace depends on its shape alone (the step's shared workspace holds it); a
 * BATCHED plan's also on the batch (the dispatcher holds it). */
#define WORKSPACE_SHARED(fn, p, batch) ((void)(batch), fn(p))
#define WORKSPACE_BATCHED(fn, p, batch) fn(p, batch)
#define PLAN_WORKSPACE(id, name, kernels, layout, computations, workspace, ...)                    \
  static size_t workspace_##id(const SwkConv *p, int batch) {                                      \
    return WORKSPACE_##workspace(swk_##kernels##_workspace, p, batch);                             \
  }
SWN_CONV_PLANS(PLAN_WORKSPACE)
#undef PLAN_WORKSPACE

enum { WORKSPACE_IS_SHARED = 0, WORKSPACE_IS_BATCHED = 1 };
typedef struct PlanKernels {
  const char *name;
  int layout;
  bool batched_workspace;
  bool applies_relu;
  size_t (*workspace)(const SwkConv *p, int batch);
  __typeof__(swk_conv_forward) *forward;
  __typeof__(swk_conv_backward) *backward;
} PlanKernels;

#define PLAN_ROW(id, name, kernels, layout, computations, workspace, relu, ...)                    \
  [SWN_PLAN_##id] = {name,           SWN_LAYOUT_##layout,     WORKSPACE_IS_##workspace, relu,      \
                     workspace_##id, swk_##kernels##_forward, swk_##kernels##_backward},
static const PlanKernels plans[SWN_PLANS] = {SWN_CONV_PLANS(PLAN_ROW)};
#undef PLAN_ROW

static int plan_layout(int plan) { return plans[plan].layout; }

/* Floats of a batch of (c, h, w) images in a layout (the blocked one rounds channels up). */
static size_t layout_floats(int layout, int c, int h, int w, int batch) {
  size_t channels = layout == SWN_LAYOUT_BNRC16 ? (size_t)(c + 15) / 16 * 16 : (size_t)c;
  return (size_t)batch * channels * (size_t)h * (size_t)w;
}

/* x, a batch of (c, h, w) images in layout `from`, into layout `to` (written or added to y). */
static void convert(int from, int to, int c, int h, int w, int batch, const float *x, float *y,
                    bool add) {
  if (from == SWN_LAYOUT_BNRC && to == SWN_LAYOUT_RCNB)
    swk_to_rcnb(c, h, w, batch, x, y, add);
  else if (from == SWN_LAYOUT_RCNB && to == SWN_LAYOUT_BNRC)
    swk_to_bnrc(c, h, w, batch, x, y, add);
  else if (from == SWN_LAYOUT_BNRC && to == SWN_LAYOUT_BNRC16)
    swk_to_bnrc16(c, h, w, batch, x, y, add);
  else if (from == SWN_LAYOUT_BNRC16 && to == SWN_LAYOUT_BNRC)
    swk_bnrc16_to_bnrc(c, h, w, batch, x, y, add);
  else
    swn_fatal("internal: no conversion of a convolution's operand from layout %d to %d", from, to);
}

/* The plan's workspace: the step's shared one, which holds what the plans the compiler chose
 * ask for (all but implicit's), or the dispatcher's own (implicit, and a plan --autotune tries
 * that needs more). */
static float *plan_workspace(SwnConvState *c, const SwkConv *p, int batch, int plan, float *ws) {
  size_t need = plans[plan].workspace(p, batch);
  return need <= c->ws_floats && !plans[plan].batched_workspace ? ws : scratch(c, SLOT_WS, need);
}

/* x as `plan` reads it, its struct in q: x converted from its layout (the op's, or (B,N,R,C)
 * where the direct plan reads a first layer's input as it is: SwkConv.x_planar) into the plan's
 * own, except that the direct plan reads planar x itself. */
static const float *x_for_plan(SwnConvState *c, const SwkConv *p, SwkConv *q, int batch, int plan,
                               int layout, const float *x) {
  *q = *p;
  if (p->x_planar && plan == SWN_PLAN_DIRECT) return x;
  q->x_planar = false;
  int from = p->x_planar ? SWN_LAYOUT_BNRC : layout, own = plan_layout(plan);
  if (from == own) return x;
  float *xt = scratch(c, SLOT_X, layout_floats(own, p->ci, p->h, p->w, batch));
  convert(from, own, p->ci, p->h, p->w, batch, x, xt, false);
  return xt;
}

static void run_forward(SwnConvState *c, const SwkConv *p, int batch, float *ws, int plan,
                        int layout, const float *x, const float *w, const float *b, float *y) {
  int own = plan_layout(plan);
  SwkConv q;
  const float *xp = x_for_plan(c, p, &q, batch, plan, layout, x);
  q.relu = p->relu && plans[plan].applies_relu;
  float *yp =
      own == layout ? y : scratch(c, SLOT_Y, layout_floats(own, p->co, p->ho, p->wo, batch));
  plans[plan].forward(&q, batch, xp, w, b, yp, plan_workspace(c, &q, batch, plan, ws));
  if (own != layout) convert(own, layout, p->co, p->ho, p->wo, batch, yp, y, false);
  if (p->relu && !q.relu) {
    SwkAct act = {.n = (int64_t)layout_floats(layout, p->co, p->ho, p->wo, 1),
                  .slope = p->relu_slope};
    swk_relu_forward(&act, batch, y, y);
  }
}

/* How parameter gradients are stored: the kernels' grad_scale, bias_grad_scale, grad_keep. */
typedef struct GradStore {
  float scale, bias_scale, keep;
} GradStore;

/* The weight gradient (if dw) and the input gradient (if dx; never with x_planar) in one plan. */
static void run_backward(SwnConvState *c, const SwkConv *p, int batch, float *ws, int plan,
                         int layout, const float *x, const float *w, const float *dy, float *dx,
                         bool dx_add, float *dw, float *db, GradStore g) {
  int own = plan_layout(plan);
  bool native = own == layout;
  SwkConv q = *p;
  const float *xp = dw ? x_for_plan(c, p, &q, batch, plan, layout, x) : x, *dyp = dy;
  q.relu = false; /* the epilogue's backward ran before this call */
  q.dx_relu = dx && p->dx_relu && native && plans[plan].applies_relu;
  float *dxp = dx;
  if (!native) {
    float *dyt = scratch(c, SLOT_Y, layout_floats(own, p->co, p->ho, p->wo, batch));
    convert(layout, own, p->co, p->ho, p->wo, batch, dy, dyt, false);
    dyp = dyt;
    if (dx) dxp = scratch(c, SLOT_DX, layout_floats(own, p->ci, p->h, p->w, batch));
  }
  bool add = native && dx_add;
  plans[plan].backward(&q, batch, xp, w, dyp, dxp, add, dw, db, g.scale, g.bias_scale, g.keep,
                       plan_workspace(c, &q, batch, plan, ws));
  if (!native && dx) convert(own, layout, p->ci, p->h, p->w, batch, dxp, dx, dx_add);
  if (dx && p->dx_relu && !q.dx_relu) { /* x is the output of the ReLU whose backward this is */
    SwkAct act = {.n = (int64_t)layout_floats(layout, p->ci, p->h, p->w, 1),
                  .slope = p->dx_relu_slope};
    if (p->dx_relu_ceiling > 0) /* a ReLU6, the only ceiling the compiler sets */
      swk_relu6_backward(&act, batch, x, dx, dx, false);
    else
      swk_relu_backward(&act, batch, x, dx, dx, false);
  }
}

/* ------------------------------------------------------------------ autotuning */

typedef struct Trial {
  int plan;
  bool timed;
} Trial;

static Trial begin_trial(SwnConvState *c, int layer, int computation, int word) {
  Trial t = {SWN_CONV_PLAN(word, computation), false};
  int legal = SWN_CONV_LEGAL(word, computation);
  if (!c->autotune || (legal & (legal - 1)) == 0 || layer >= c->net->nlayers) return t;
  Tuner *u = &c->tuners[layer][computation];
  if (u->chosen >= 0) return (Trial){u->chosen, false};
  if (!c->timing) return t;
  if (!u->warm) {
    u->warm = true;
    if (!swn_target_estimates()) return t;
  }
  for (int plan = 0; plan < SWN_PLANS; plan++) /* the legal plan timed least so far */
    if ((legal >> plan & 1) && u->runs[plan] < u->runs[t.plan]) t.plan = plan;
  t.timed = true;
  return t;
}

static void end_trial(SwnConvState *c, int layer, int computation, int word, Trial t,
                      double seconds) {
  if (!t.timed) return;
  Tuner *u = &c->tuners[layer][computation];
  if (!u->runs[t.plan] || seconds < u->best[t.plan]) u->best[t.plan] = seconds;
  u->runs[t.plan]++;
  int legal = SWN_CONV_LEGAL(word, computation), chosen = -1;
  int rounds = swn_target_estimates() ? 1 : ROUNDS;
  for (int plan = 0; plan < SWN_PLANS; plan++) {
    if (!(legal >> plan & 1)) continue;
    if (u->runs[plan] < rounds) return;
    if (chosen < 0 || u->best[plan] < u->best[chosen]) chosen = plan;
  }
  u->chosen = chosen;
  if (!c->report) return;
  fprintf(c->report, "autotune: %-24s %-7s", c->net->layers[layer], computation_names[computation]);
  for (int plan = 0; plan < SWN_PLANS; plan++)
    if (legal >> plan & 1)
      fprintf(c->report, "  %s %9.3f ms", plans[plan].name, 1e3 * u->best[plan]);
  fprintf(c->report, "  -> %s%s\n", plans[chosen].name,
          swn_target_estimates() ? " (estimated on the target)" : "");
}

/* ------------------------------------------------------------------ the calls */

void swn_conv_forward(const SwkConv *p, int batch, SwnStep *s, int layer, int word, const float *x,
                      const float *w, const float *b, float *y) {
  SwnConvState *c = s->conv;
  Trial t = begin_trial(c, layer, 0, word);
  double start = swn_target_now();
  run_forward(c, p, batch, s->ws, t.plan, SWN_CONV_LAYOUT(word), x, w, b, y);
  end_trial(c, layer, 0, word, t, swn_target_now() - start);
}

void swn_conv_backward(const SwkConv *p, int batch, SwnStep *s, int layer, int word, const float *x,
                       const float *w, const float *dy, float *dx, bool dx_add, float *dw,
                       float *db, float grad_scale, float bias_grad_scale, float grad_keep) {
  SwnConvState *c = s->conv;
  GradStore g = {grad_scale, bias_grad_scale, grad_keep};
  int layout = SWN_CONV_LAYOUT(word);
  Trial wg = begin_trial(c, layer, 1, word), dg = dx ? begin_trial(c, layer, 2, word) : wg;
  if (!dx || (wg.plan == dg.plan && !wg.timed && !dg.timed)) { /* one call does both */
    double start = swn_target_now();
    run_backward(c, p, batch, s->ws, wg.plan, layout, x, w, dy, dx, dx_add, dw, db, g);
    end_trial(c, layer, 1, word, wg, swn_target_now() - start);
    return;
  }
  double start = swn_target_now();
  run_backward(c, p, batch, s->ws, wg.plan, layout, x, w, dy, NULL, false, dw, db, g);
  end_trial(c, layer, 1, word, wg, swn_target_now() - start);
  start = swn_target_now();
  run_backward(c, p, batch, s->ws, dg.plan, layout, x, w, dy, dx, dx_add, NULL, NULL, g);
  end_trial(c, layer, 2, word, dg, swn_target_now() - start);
}

/* ------------------------------------------------------------------ transposed convolution */

/* A transposed convolution is the convolution p from its output to its input (p's x is its
 * y, p's y its x) run the other way: its forward is p's input gradient, its input gradient
 * p's forward, its weight gradient p's with x and dy trading places (Dumoulin and Visin, "A
 * guide to convolution arithmetic", section 4). All three in the explicit plan on (B,N,R,C),
 * which every kernel set has and which takes groups and dilation; the bias, on the side where
 * p has none, by a kernel of its own. */
void swn_deconv_forward(const SwkConv *p, int batch, SwnStep *s, const float *x, const float *w,
                        const float *b, float *y) {
  float *ws = plan_workspace(s->conv, p, batch, SWN_PLAN_EXPLICIT, s->ws);
  swk_conv_backward(p, batch, NULL, w, x, y, false, NULL, NULL, 1, 1, 0, ws);
  if (b) swk_channel_bias_forward(p->ci, (int64_t)p->h * p->w, batch, b, y);
}

void swn_deconv_backward(const SwkConv *p, int batch, SwnStep *s, const float *x, const float *w,
                         const float *dy, float *dx, bool dx_add, float *dw, float *db,
                         float grad_scale, float bias_grad_scale, float grad_keep) {
  SwnConvState *c = s->conv;
  float *ws = plan_workspace(c, p, batch, SWN_PLAN_EXPLICIT, s->ws);
  if (db)
    swk_channel_bias_backward(p->ci, (int64_t)p->h * p->w, batch, dy, db, bias_grad_scale,
                              grad_keep);
  swk_conv_backward(p, batch, dy, w, x, NULL, false, dw, NULL, grad_scale, bias_grad_scale,
                    grad_keep, ws);
  if (!dx) return;
  size_t image = (size_t)p->co * (size_t)p->ho * (size_t)p->wo;
  float *out = dx_add ? scratch(c, SLOT_DX, image * (size_t)batch) : dx;
  swk_conv_forward(p, batch, dy, w, NULL, out, ws);
  if (dx_add) {
    const float *const sum[2] = {dx, out};
    swk_add_forward(2, (int64_t)image, batch, sum, dx, false, 0);
  }
}
