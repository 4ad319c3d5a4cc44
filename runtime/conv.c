/* Convolution dispatch. Each computation of a convolution (forward, weight gradient, input
 * gradient) runs in a plan: explicit GEMM on (B,N,R,C) or implicit GEMM on (R,C,N,B). The
 * compiler chose one per computation and the layout of the tensors (docs/ir.md); where a
 * computation's plan works on the other layout, its operands are converted into scratch memory
 * owned here (grown to the largest need, then kept) and its result converted back.
 *
 * --autotune (swCaffe's runtime mode): during the first training iterations every computation
 * whose implicit plan is legal runs in both plans, alternately, ROUNDS times each after one
 * untimed warm-up call, with its conversions; the faster (least time of its rounds) is kept for
 * the rest of the run and reported. Timings are wall time, so two runs may choose differently
 * and then differ by float rounding. */
#include "conv.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { SLOT_X, SLOT_Y, SLOT_DX, SLOT_WS, SLOTS, ROUNDS = 2 };

typedef struct Tuner {
  bool warm;      /* the warm-up call is done */
  int runs[2];    /* timed calls per plan */
  double best[2]; /* least seconds per plan */
  int chosen;     /* -1 until decided */
} Tuner;

struct SwnConvState {
  const SwnNetwork *net;
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

/* Which layout a tensor of (c, h, w) images is in: true for (R,C,N,B). */
static void convert(bool to_rcnb, int c, int h, int w, int batch, const float *from, float *to,
                    bool add) {
  if (to_rcnb)
    swk_to_rcnb(c, h, w, batch, from, to, add);
  else
    swk_to_bnrc(c, h, w, batch, from, to, add);
}

static void run_forward(SwnConvState *c, const SwkConv *p, int batch, float *ws, int plan,
                        bool rcnb, const float *x, const float *w, const float *b, float *y) {
  bool native = (plan == 1) == rcnb;
  const float *xp = x;
  float *yp = y;
  if (!native) {
    float *xt = scratch(c, SLOT_X, (size_t)batch * p->ci * p->h * p->w);
    convert(plan == 1, p->ci, p->h, p->w, batch, x, xt, false);
    xp = xt, yp = scratch(c, SLOT_Y, (size_t)batch * p->co * p->ho * p->wo);
  }
  if (plan == 1)
    swk_conv_implicit_forward(p, batch, xp, w, b, yp,
                              scratch(c, SLOT_WS, swk_conv_implicit_workspace(p, batch)));
  else
    swk_conv_forward(p, batch, xp, w, b, yp, ws);
  if (!native) convert(rcnb, p->co, p->ho, p->wo, batch, yp, y, false);
}

/* How parameter gradients are stored: the kernels' grad_scale, bias_grad_scale, grad_keep. */
typedef struct GradStore {
  float scale, bias_scale, keep;
} GradStore;

/* The weight gradient (if dw) and the input gradient (if dx) in one plan. */
static void run_backward(SwnConvState *c, const SwkConv *p, int batch, float *ws, int plan,
                         bool rcnb, const float *x, const float *w, const float *dy, float *dx,
                         bool dx_add, float *dw, float *db, GradStore g) {
  bool native = (plan == 1) == rcnb;
  const float *xp = x, *dyp = dy;
  float *dxp = dx;
  if (!native) {
    float *dyt = scratch(c, SLOT_Y, (size_t)batch * p->co * p->ho * p->wo);
    convert(plan == 1, p->co, p->ho, p->wo, batch, dy, dyt, false);
    dyp = dyt;
    if (dw) {
      float *xt = scratch(c, SLOT_X, (size_t)batch * p->ci * p->h * p->w);
      convert(plan == 1, p->ci, p->h, p->w, batch, x, xt, false);
      xp = xt;
    }
    if (dx) dxp = scratch(c, SLOT_DX, (size_t)batch * p->ci * p->h * p->w);
  }
  bool add = native && dx_add;
  if (plan == 1)
    swk_conv_implicit_backward(p, batch, xp, w, dyp, dxp, add, dw, db, g.scale, g.bias_scale,
                               g.keep, scratch(c, SLOT_WS, swk_conv_implicit_workspace(p, batch)));
  else
    swk_conv_backward(p, batch, xp, w, dyp, dxp, add, dw, db, g.scale, g.bias_scale, g.keep, ws);
  if (!native && dx) convert(rcnb, p->ci, p->h, p->w, batch, dxp, dx, dx_add);
}

/* ------------------------------------------------------------------ autotuning */

typedef struct Trial {
  int plan;
  bool timed;
} Trial;

static Trial begin_trial(SwnConvState *c, int layer, int computation, int plans) {
  Trial t = {(plans & SWN_CONV_IMPLICIT(computation)) ? 1 : 0, false};
  if (!c->autotune || !(plans & SWN_CONV_IMPLICIT_LEGAL) || layer >= c->net->nlayers) return t;
  Tuner *u = &c->tuners[layer][computation];
  if (u->chosen >= 0) return (Trial){u->chosen, false};
  if (!c->timing) return t;
  if (!u->warm) {
    u->warm = true;
    return t;
  }
  if (u->runs[1 - t.plan] < u->runs[t.plan]) t.plan = 1 - t.plan;
  t.timed = true;
  return t;
}

static void end_trial(SwnConvState *c, int layer, int computation, Trial t, double seconds) {
  if (!t.timed) return;
  Tuner *u = &c->tuners[layer][computation];
  if (!u->runs[t.plan] || seconds < u->best[t.plan]) u->best[t.plan] = seconds;
  u->runs[t.plan]++;
  if (u->runs[0] < ROUNDS || u->runs[1] < ROUNDS) return;
  u->chosen = u->best[1] < u->best[0] ? 1 : 0;
  if (c->report)
    fprintf(c->report, "autotune: %-24s %-7s  explicit %9.3f ms  implicit %9.3f ms  -> %s\n",
            c->net->layers[layer], computation_names[computation], 1e3 * u->best[0],
            1e3 * u->best[1], u->chosen ? "implicit" : "explicit");
}

/* ------------------------------------------------------------------ the calls */

void swn_conv_forward(const SwkConv *p, int batch, SwnStep *s, int layer, int plans, const float *x,
                      const float *w, const float *b, float *y) {
  SwnConvState *c = s->conv;
  Trial t = begin_trial(c, layer, 0, plans);
  double start = swn_now();
  run_forward(c, p, batch, s->ws, t.plan, plans & SWN_CONV_RCNB, x, w, b, y);
  end_trial(c, layer, 0, t, swn_now() - start);
}

void swn_conv_backward(const SwkConv *p, int batch, SwnStep *s, int layer, int plans,
                       const float *x, const float *w, const float *dy, float *dx, bool dx_add,
                       float *dw, float *db, float grad_scale, float bias_grad_scale,
                       float grad_keep) {
  SwnConvState *c = s->conv;
  GradStore g = {grad_scale, bias_grad_scale, grad_keep};
  bool rcnb = plans & SWN_CONV_RCNB;
  Trial wg = begin_trial(c, layer, 1, plans), dg = dx ? begin_trial(c, layer, 2, plans) : wg;
  if (!dx || (wg.plan == dg.plan && !wg.timed && !dg.timed)) { /* one call does both */
    double start = swn_now();
    run_backward(c, p, batch, s->ws, wg.plan, rcnb, x, w, dy, dx, dx_add, dw, db, g);
    end_trial(c, layer, 1, wg, swn_now() - start);
    return;
  }
  double start = swn_now();
  run_backward(c, p, batch, s->ws, wg.plan, rcnb, x, w, dy, NULL, false, dw, db, g);
  end_trial(c, layer, 1, wg, swn_now() - start);
  start = swn_now();
  run_backward(c, p, batch, s->ws, dg.plan, rcnb, x, w, dy, dx, dx_add, NULL, NULL, g);
  end_trial(c, layer, 2, dg, swn_now() - start);
}
