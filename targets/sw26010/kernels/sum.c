/* Concatenations along channels and residual sums, both directions, as 2-D parts summed or
 * copied on the CPEs (sum_cpe.c). More inputs than a launch takes run in several launches: a
 * sum carries its partial result as the next launch's first source, keeping the host's order. */
#include "mpe.h"

static SwSumPart copy_part(const float *src, float *dst, int64_t rows, int64_t cols, int64_t src_ld,
                           int64_t dst_ld, bool add) {
  return (SwSumPart){.src = {src},
                     .dst = dst,
                     .sources = 1,
                     .add = add,
                     .rows = rows,
                     .cols = cols,
                     .src_ld = src_ld,
                     .dst_ld = dst_ld};
}

/* Launches when full, and at the end (flush). */
static void flush(SwSumArgs *a) {
  if (a->parts) SW_RUN(sw_sum, a);
  a->parts = 0;
}

static void add_part(SwSumArgs *a, SwSumPart part) {
  a->part[a->parts++] = part;
  if (a->parts == SW_SUM_PARTS) flush(a);
}

static int64_t total(int n, const int64_t *sizes) {
  int64_t t = 0;
  for (int i = 0; i < n; i++) t += sizes[i];
  return t;
}

void swk_concat_forward(int n, const int64_t *sizes, int batch, const float *const *x, float *y) {
  int64_t out = total(n, sizes), at = 0;
  SwSumArgs a = {0};
  for (int i = 0; i < n; at += sizes[i++])
    if (sizes[i]) add_part(&a, copy_part(x[i], y + at, batch, sizes[i], sizes[i], out, false));
  flush(&a);
}

void swk_concat_backward(int n, const int64_t *sizes, int batch, const float *dy, float *const *dx,
                         const bool *dx_add) {
  int64_t out = total(n, sizes), at = 0;
  SwSumArgs a = {0};
  for (int i = 0; i < n; at += sizes[i++])
    if (dx[i] && sizes[i])
      add_part(&a, copy_part(dy + at, dx[i], batch, sizes[i], out, sizes[i], dx_add[i]));
  flush(&a);
}

/* The ReLU epilogue runs as the ReLU kernel on y after the sum (the CPEs' sum tasks do not apply
 * it): the same element-wise pass the compiler would have emitted, so the model's pricing holds. */
void swk_add_forward(int n, int64_t size, int batch, const float *const *x, float *y, bool relu,
                     float relu_slope) {
  int64_t e = size * batch;
  if (e == 0) return;
  if (relu) {
    swk_add_forward(n, size, batch, x, y, false, 0);
    swk_relu_forward(&(SwkAct){.n = size, .slope = relu_slope}, batch, y, y);
    return;
  }
  SwSumArgs a = {.parts = 1};
  a.part[0] = copy_part(x[0], y, 1, e, e, e, false);
  for (int i = 1; i < n;) {
    SwSumPart *q = &a.part[0];
    for (; i < n && q->sources < SW_SUM_SOURCES; i++) q->src[q->sources++] = x[i];
    SW_RUN(sw_sum, &a);
    *q = copy_part(y, y, 1, e, e, e, false); /* the next launch goes on from y */
  }
  if (n == 1) SW_RUN(sw_sum, &a);
}

void swk_add_backward(int n, int64_t size, int batch, const float *dy, float *const *dx,
                      const bool *dx_add) {
  int64_t e = size * batch;
  SwSumArgs a = {0};
  for (int i = 0; i < n; i++) /* dx[i] may be dy itself (the memory plan's): nothing to do */
    if (dx[i] && dx[i] != dy && e) add_part(&a, copy_part(dy, dx[i], 1, e, e, e, dx_add[i]));
  flush(&a);
}
