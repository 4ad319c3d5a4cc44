/* Max and average pooling on the CPEs, both layouts (args.h), with the host target's semantics:
 * Caffe's windows (runtime/pool_window.h: an average divides by the window's extent in the
 * padded input; the first maximum in window order wins), and backward adds each output's share
 * in output order, so results match the host's exactly. Backward is a gather: a task owns its input elements. */
#include <string.h>

#include "args.h"
#include "cpe.h"
#include "pool_window.h"

/* The output rows [*o0, *o1) whose windows can cover input rows [i0, i1) (likewise columns). */
static void covering(int i0, int i1, int k, int s, int pad, int out, int *o0, int *o1) {
  int t = i0 + pad - k;
  *o0 = t < 0 ? 0 : t / s + 1;
  *o1 = (i1 - 1 + pad) / s + 1;
  if (*o1 > out) *o1 = out;
}

static int min_int(int a, int b) { return a < b ? a : b; }

/* ------------------------------------------------------------------ (B, N, R, C) */

typedef struct Buffers {
  float *in, *out;
  int32_t *am;
} Buffers;

/* A task's block of one plane: rows [r0, r0 + n) and columns [c0, c0 + m) of its output
 * (forward) or input (backward); p->rows x p->cols blocks tile the plane. */
typedef struct Block {
  int64_t plane;
  int r0, n, c0, m;
} Block;

static Block block_of(const SwPoolArgs *p, int64_t task, int height, int width) {
  int row_bands = (height + p->rows - 1) / p->rows, col_bands = (width + p->cols - 1) / p->cols;
  Block k;
  k.c0 = (int)(task % col_bands) * p->cols;
  task /= col_bands;
  k.r0 = (int)(task % row_bands) * p->rows;
  k.plane = task / row_bands;
  k.n = min_int(p->rows, height - k.r0), k.m = min_int(p->cols, width - k.c0);
  return k;
}

/* rows x span floats of a plane whose rows are `pitch` floats, packed in the LDM: one transfer,
 * contiguous when the span is whole rows. */
static void get_region(void *ldm, const void *mem, int rows, int span, int pitch) {
  if (span == pitch)
    cpe_get(ldm, mem, 4 * rows * span);
  else
    cpe_get_strided(ldm, mem, 4 * rows * span, 4 * span, 4 * (pitch - span));
}

static void put_region(void *mem, const void *ldm, int rows, int span, int pitch) {
  if (span == pitch)
    cpe_put(mem, ldm, 4 * rows * span);
  else
    cpe_put_strided(mem, ldm, 4 * rows * span, 4 * span, 4 * (pitch - span));
}

static void bnrc_forward_task(const SwPoolArgs *p, int64_t task, Buffers b) {
  Block k = block_of(p, task, p->ho, p->wo);
  int r0 = k.r0 * p->sh - p->ph, r1 = min_int(p->h, (k.r0 + k.n - 1) * p->sh - p->ph + p->kh);
  int c0 = k.c0 * p->sw - p->pw, c1 = min_int(p->w, (k.c0 + k.m - 1) * p->sw - p->pw + p->kw);
  if (r0 < 0) r0 = 0;
  if (c0 < 0) c0 = 0;
  int span = c1 - c0; /* of the input region in the LDM */
  if (r1 > r0) get_region(b.in, p->x + (k.plane * p->h + r0) * p->w + c0, r1 - r0, span, p->w);
  for (int oh = k.r0; oh < k.r0 + k.n; oh++)
    for (int ow = k.c0; ow < k.c0 + k.m; ow++) {
      SwnWindow s = SWN_POOL_WINDOW(p, oh, ow);
      int o = (oh - k.r0) * k.m + ow - k.c0, at = s.h0 * p->w + s.w0;
      float acc = p->max ? b.in[(s.h0 - r0) * span + s.w0 - c0] : 0.0f;
      for (int ih = s.h0; ih < s.h1; ih++)
        for (int iw = s.w0; iw < s.w1; iw++) {
          float v = b.in[(ih - r0) * span + iw - c0];
          if (!p->max)
            acc += v;
          else if (v > acc)
            acc = v, at = ih * p->w + iw;
        }
      b.out[o] = p->max ? acc : acc / s.area;
      b.am[o] = at;
    }
  cpe_count_flops((int64_t)k.n * k.m * p->kh * p->kw);
  int64_t first = k.plane * p->ho * p->wo + (int64_t)k.r0 * p->wo + k.c0;
  put_region(p->y + first, b.out, k.n, k.m, p->wo);
  if (p->max) put_region(p->argmax + first, b.am, k.n, k.m, p->wo);
}

static void bnrc_backward_task(const SwPoolArgs *p, int64_t task, Buffers b) {
  Block k = block_of(p, task, p->h, p->w);
  int o0, o1, q0, q1;
  float *dx = b.in, *dy = b.out;
  covering(k.r0, k.r0 + k.n, p->kh, p->sh, p->ph, p->ho, &o0, &o1);
  covering(k.c0, k.c0 + k.m, p->kw, p->sw, p->pw, p->wo, &q0, &q1);
  float *band = p->dx + (k.plane * p->h + k.r0) * p->w + k.c0;
  if (p->add)
    get_region(dx, band, k.n, k.m, p->w);
  else
    memset(dx, 0, sizeof(float) * (size_t)(k.n * k.m));
  int span = q1 - q0; /* of the output region in the LDM */
  if (o1 > o0 && q1 > q0) {
    int64_t first = k.plane * p->ho * p->wo + (int64_t)o0 * p->wo + q0;
    get_region(dy, p->dy + first, o1 - o0, span, p->wo);
    if (p->max) get_region(b.am, p->argmax + first, o1 - o0, span, p->wo);
  }
  for (int oh = o0; oh < o1; oh++)
    for (int ow = q0; ow < q1; ow++) {
      int o = (oh - o0) * span + ow - q0;
      if (p->max) {
        int ih = b.am[o] / p->w - k.r0, iw = b.am[o] % p->w - k.c0;
        if (ih >= 0 && ih < k.n && iw >= 0 && iw < k.m) dx[ih * k.m + iw] += dy[o];
        continue;
      }
      SwnWindow s = SWN_POOL_WINDOW(p, oh, ow);
      float g = dy[o] / s.area;
      for (int ih = s.h0 > k.r0 ? s.h0 : k.r0; ih < min_int(s.h1, k.r0 + k.n); ih++)
        for (int iw = s.w0 > k.c0 ? s.w0 : k.c0; iw < min_int(s.w1, k.c0 + k.m); iw++)
          dx[(ih - k.r0) * k.m + iw - k.c0] += g;
    }
  if (o1 > o0 && span > 0)
    cpe_count_flops((int64_t)(o1 - o0) * span * (p->max ? 1 : p->kh * p->kw));
  put_region(band, dx, k.n, k.m, p->w);
}

/* ------------------------------------------------------------------ (R, C, N, B) */

static void rcnb_forward_task(const SwPoolArgs *p, int64_t task, Buffers b) {
  int64_t lanes = (int64_t)p->c * p->batch,
          chunks = (lanes + SW_STREAM_CHUNK - 1) / SW_STREAM_CHUNK;
  int64_t pixel = task / chunks, l0 = task % chunks * SW_STREAM_CHUNK;
  int n = (int)(lanes - l0 < SW_STREAM_CHUNK ? lanes - l0 : SW_STREAM_CHUNK);
  SwnWindow s = SWN_POOL_WINDOW(p, (int)(pixel / p->wo), (int)(pixel % p->wo));
  int first = s.h0 * p->w + s.w0;
  for (int j = 0; j < n; j++) b.out[j] = 0, b.am[j] = first;
  for (int ih = s.h0; ih < s.h1; ih++)
    for (int iw = s.w0; iw < s.w1; iw++) {
      int at = ih * p->w + iw;
      cpe_get(b.in, p->x + at * lanes + l0, 4 * n);
      for (int j = 0; j < n; j++) {
        if (!p->max)
          b.out[j] += b.in[j];
        else if (at == first || b.in[j] > b.out[j])
          b.out[j] = b.in[j], b.am[j] = at;
      }
    }
  if (!p->max)
    for (int j = 0; j < n; j++) b.out[j] /= s.area;
  cpe_count_flops((int64_t)n * (s.h1 - s.h0) * (s.w1 - s.w0));
  cpe_put(p->y + pixel * lanes + l0, b.out, 4 * n);
  if (p->max) cpe_put(p->argmax + pixel * lanes + l0, b.am, 4 * n);
}

static void rcnb_backward_task(const SwPoolArgs *p, int64_t task, Buffers b, float *dx) {
  int64_t lanes = (int64_t)p->c * p->batch,
          chunks = (lanes + SW_STREAM_CHUNK - 1) / SW_STREAM_CHUNK;
  int64_t pixel = task / chunks, l0 = task % chunks * SW_STREAM_CHUNK;
  int n = (int)(lanes - l0 < SW_STREAM_CHUNK ? lanes - l0 : SW_STREAM_CHUNK);
  int ih = (int)(pixel / p->w), iw = (int)(pixel % p->w), oh0, oh1, ow0, ow1;
  if (p->add)
    cpe_get(dx, p->dx + pixel * lanes + l0, 4 * n);
  else
    memset(dx, 0, sizeof(float) * (size_t)n);
  covering(ih, ih + 1, p->kh, p->sh, p->ph, p->ho, &oh0, &oh1);
  covering(iw, iw + 1, p->kw, p->sw, p->pw, p->wo, &ow0, &ow1);
  for (int oh = oh0; oh < oh1; oh++)
    for (int ow = ow0; ow < ow1; ow++) {
      SwnWindow s = SWN_POOL_WINDOW(p, oh, ow);
      if (ih < s.h0 || ih >= s.h1 || iw < s.w0 || iw >= s.w1) continue;
      int64_t o = ((int64_t)oh * p->wo + ow) * lanes + l0;
      cpe_get(b.out, p->dy + o, 4 * n);
      if (p->max) cpe_get(b.am, p->argmax + o, 4 * n);
      for (int j = 0; j < n; j++) {
        if (!p->max)
          dx[j] += b.out[j] / s.area;
        else if (b.am[j] == pixel)
          dx[j] += b.out[j];
      }
      cpe_count_flops(n);
    }
  cpe_put(p->dx + pixel * lanes + l0, dx, 4 * n);
}

/* ------------------------------------------------------------------ launches */

static int64_t task_count(const SwPoolArgs *p, int backward) {
  if (p->rcnb) {
    int64_t lanes = (int64_t)p->c * p->batch,
            pixels = backward ? (int64_t)p->h * p->w : (int64_t)p->ho * p->wo;
    return pixels * ((lanes + SW_STREAM_CHUNK - 1) / SW_STREAM_CHUNK);
  }
  int rows = backward ? p->h : p->ho, cols = backward ? p->w : p->wo;
  return (int64_t)p->batch * p->c * ((rows + p->rows - 1) / p->rows) *
         ((cols + p->cols - 1) / p->cols);
}

static void pool(void *arg, int backward) {
  SwPoolArgs p;
  cpe_get(&p, arg, sizeof p);
  Buffers b = {ldm_malloc(4 * SW_POOL_IN_FLOATS), ldm_malloc(4 * SW_POOL_OUT_FLOATS),
               ldm_malloc(4 * SW_POOL_OUT_FLOATS)};
  for (int64_t t = _MYID; t < task_count(&p, backward); t += 64) {
    if (p.rcnb && backward)
      rcnb_backward_task(&p, t, b, b.in + SW_STREAM_CHUNK);
    else if (p.rcnb)
      rcnb_forward_task(&p, t, b);
    else if (backward)
      bnrc_backward_task(&p, t, b);
    else
      bnrc_forward_task(&p, t, b);
  }
  ldm_free(b.am, 4 * SW_POOL_OUT_FLOATS);
  ldm_free(b.out, 4 * SW_POOL_OUT_FLOATS);
  ldm_free(b.in, 4 * SW_POOL_IN_FLOATS);
}

void sw_pool_forward(void *arg) { pool(arg, 0); }
void sw_pool_backward(void *arg) { pool(arg, 1); }
