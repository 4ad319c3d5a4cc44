/* The element-wise kernels, the optimizer steps and the allreduce's arithmetic, all on the
 * CPEs (stream_cpe.c). */
#include <math.h>

#include "mpe.h"

void sw_stream_run(SwStreamArgs *a) {
  if (a->n > 0 || a->op == SW_ROW_BIAS_GRAD) SW_RUN(sw_stream, a);
}

/* One stream op over n floats; `act`: which activation (SW_ACTIVATION, SW_ACTIVATION_GRAD). */
static void map(SwStreamOp op, SwnActivation act, int64_t n, const float *a, const float *b,
                float *y, bool add, float s0) {
  SwStreamArgs s = {.op = op, .act = act, .add = add, .n = n, .a = a, .b = b, .y = y, .s0 = s0};
  sw_stream_run(&s);
}

/* The activations (runtime/activations.h), each row's two kernels. */
#define SW_ACTIVATION_KERNELS(unused_a, unused_b, name, reads)                                     \
  void swk_##name##_forward(const SwkAct *p, int batch, const float *x, float *y) {                \
    map(SW_ACTIVATION, SWN_ACT_##name, p->n *batch, x, NULL, y, false, p->slope);                  \
  }                                                                                                \
  void swk_##name##_backward(const SwkAct *p, int batch, const float *v, const float *dy,          \
                             float *dx, bool dx_add) {                                             \
    map(SW_ACTIVATION_GRAD, SWN_ACT_##name, p->n *batch, v, dy, dx, dx_add, p->slope);             \
  }
SWN_ACTIVATIONS(SW_ACTIVATION_KERNELS, , )

/* Dropout: the mask recomputed per element on the CPEs (runtime/rng.h). */
static SwStreamArgs dropout_args(const SwkDropout *p, int batch, uint64_t seed, uint64_t iteration,
                                 uint64_t first_image) {
  return (SwStreamArgs){.n = p->n * batch,
                        .s0 = p->ratio,
                        .per_image = p->n,
                        .seed = seed,
                        .layer = p->layer,
                        .iteration = iteration,
                        .first_image = first_image};
}

void swk_dropout_forward(const SwkDropout *p, int batch, bool train, uint64_t seed,
                         uint64_t iteration, uint64_t first_image, const float *x, float *y) {
  SwStreamArgs s = dropout_args(p, batch, seed, iteration, first_image);
  s.op = SW_DROPOUT, s.train = train, s.a = x, s.y = y;
  sw_stream_run(&s);
}

void swk_dropout_backward(const SwkDropout *p, int batch, uint64_t seed, uint64_t iteration,
                          uint64_t first_image, const float *dy, float *dx, bool dx_add) {
  SwStreamArgs s = dropout_args(p, batch, seed, iteration, first_image);
  s.op = SW_DROPOUT_GRAD, s.add = dx_add, s.a = dy, s.y = dx;
  sw_stream_run(&s);
}

void swk_sum_into(int64_t n, float *y, const float *x) {
  map(SW_SUM_INTO, 0, n, x, NULL, y, false, 0);
}
void swk_scale(int64_t n, float *y, float a) { map(SW_SCALE, 0, n, NULL, NULL, y, false, a); }

void swk_sgd_update(int64_t n, float lr, float decay, float momentum, float *w, const float *g,
                    float *v) {
  SwStreamArgs s = {
      .op = SW_SGD, .n = n, .a = g, .y = w, .z = v, .s0 = lr, .s1 = decay, .s2 = momentum};
  sw_stream_run(&s);
}

void swk_sgd_apply(int64_t n, float lr, float decay, float *w, float *v) {
  SwStreamArgs s = {.op = SW_SGD_APPLY, .n = n, .y = w, .z = v, .s0 = lr, .s1 = decay};
  sw_stream_run(&s);
}

/* The norms on the management core, charged to the estimate as its work (two reads of the
 * tensor); the update streams on the CPEs. */
void swk_lars_update(int64_t n, float lr, float decay, float momentum, float trust, float *w,
                     const float *g, float *v) {
  double ww = 0, gg = 0;
  for (int64_t i = 0; i < n; i++) {
    ww += (double)w[i] * w[i];
    gg += (double)g[i] * g[i];
  }
  sw_mpe_work(8.0 * (double)n, 4.0 * (double)n);
  swk_sgd_update(n, lr * swk_lars_ratio(trust, decay, sqrt(ww), sqrt(gg)), decay, momentum, w, g,
                 v);
}

void swk_easgd_elastic(int64_t n, float eta, float rho, int ranks, const float *w, const float *sum,
                       float *center, float *g) {
  SwStreamArgs s = {.op = SW_EASGD,
                    .n = n,
                    .a = w,
                    .b = sum,
                    .y = g,
                    .z = center,
                    .s0 = eta,
                    .s1 = rho,
                    .s2 = (float)ranks};
  sw_stream_run(&s);
}
