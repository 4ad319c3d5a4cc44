/* Depthwise convolution on the channel-blocked layout (conv_depthwise.h). Each block's 16 lanes
 * are 16 channels' independent convolutions, computed in native vectors (vec16.h): a tap is a
 * vector of 16 filters' weights, multiplied into each pixel's vector.
 *
 * - Forward and a stride-1 input gradient run output row by output row, a row in strips of
 *   STRIP pixels whose accumulators stay in registers while every tap is applied (the input's
 *   kh rows are in L1 and read once from memory): the input gradient is the forward of dY with
 *   the flipped filters and padding k - 1 - p. Pixels whose window crosses the image's edge
 *   (and a row's last few) are summed one at a time, skipping the taps outside; both sum the
 *   taps in the same order.
 * - A strided input gradient gathers each pixel of dX from the taps of its phase that reach
 *   it, in registers, and stores it once.
 * - The weight gradient sums each tap's products over a row of pixels in four chains, per
 *   (block, part of the batch); the parts (HOST_DEPTHWISE_PARTS, whatever the thread count)
 *   are added in order at the end, so results do not depend on the threads.
 * The filters, (C, 1, K, K) as every plan keeps them, are packed per call into (C/16, K, K, 16),
 * zero past the channels, so the unused lanes of the last block compute zeros. */
#include "conv_depthwise.h"

#include <omp.h>
#include <string.h>

#include "conv_direct.h"
#include "stream.h"
#include "vec16.h"

enum { LANES = 16, STRIP = 8, CHAINS = 4 };

static size_t taps_of(const SwkConv *p) { return (size_t)p->kh * (size_t)p->kw; }
static size_t filter_floats(const SwkConv *p) { return host_depthwise_filter_floats(p); }

/* ------------------------------------------------------------------ packing */

/* f[cb][t][lane] = w[cb * 16 + lane][t], or its tap taps - 1 - t (flipped); 0 past the channels. */
static void pack_filters(const SwkConv *p, const float *w, bool flipped, float *f) {
  size_t taps = taps_of(p);
  for (int cb = 0; cb < host_blocks(p->co); cb++)
    for (size_t t = 0; t < taps; t++)
      for (int l = 0; l < LANES; l++) {
        int c = cb * LANES + l;
        size_t tap = flipped ? taps - 1 - t : t;
        f[((size_t)cb * taps + t) * LANES + (size_t)l] = c < p->co ? w[(size_t)c * taps + tap] : 0;
      }
}

static void pack_bias(const SwkConv *p, const float *bias, float *b) {
  for (int c = 0; c < host_blocks(p->co) * LANES; c++) b[c] = c < p->co ? bias[c] : 0;
}

/* ------------------------------------------------------------------ storing */

/* Where a row's results go: out, the row (or a buffer for it); mask (NULL or the same row of a
 * tensor of the output's shape): 0 < mask < ceiling ? v : slope * v (the input gradient's
 * carried ReLU or ReLU6);
 * relu: the value is its own mask (forward's epilogue); add: added to out. */
typedef struct Store {
  float *out;
  const float *mask;
  bool relu, add;
  float slope, ceiling;
} Store;

static inline HostVec where_positive(HostVec test, HostVec v, float slope) {
  HostIVec positive = test > (HostVec){0};
  HostVec scaled = v * slope;
  return (HostVec)(((HostIVec)v & positive) | ((HostIVec)scaled & ~positive));
}

/* The carried mask (a ReLU's ceiling is infinity: only an infinite x, a run already diverged,
 * is told apart from test > 0) */
static inline HostVec where_inside(HostVec test, HostVec v, float slope, float ceiling) {
  HostIVec inside = (test > (HostVec){0}) & (test < ceiling);
  HostVec scaled = v * slope;
  return (HostVec)(((HostIVec)v & inside) | ((HostIVec)scaled & ~inside));
}

/* The vector at float `at` of the row. */
static inline void store(const Store *st, size_t at, HostVec v) {
  if (st->relu) v = where_positive(v, v, st->slope);
  if (st->mask) v = where_inside(host_vec_load(st->mask + at), v, st->slope, st->ceiling);
  if (st->add) v += host_vec_load(st->out + at);
  host_vec_store(st->out + at, v);
}

/* ------------------------------------------------------------------ forward-like sweeps */

/* One plane's convolution as the row loops see it: input h x w, output ho x wo, the window,
 * stride and padding (negative for an input gradient whose padding exceeds k - 1). */
typedef struct Sweep {
  int h, w, ho, wo, kh, kw, sh, sw, ph, pw;
} Sweep;

static Sweep forward_sweep(const SwkConv *p) {
  return (Sweep){p->h, p->w, p->ho, p->wo, p->kh, p->kw, p->sh, p->sw, p->ph, p->pw};
}

/* A stride-1 input gradient: dY convolved with the flipped filters, padded by k - 1 - p. */
static Sweep input_gradient_sweep(const SwkConv *p) {
  return (Sweep){
      p->ho, p->wo, p->h, p->w, p->kh, p->kw, 1, 1, p->kh - 1 - p->ph, p->kw - 1 - p->pw};
}

/* Output row `oh`'s taps rows [kh0, kh1) inside the input, from input row top + kh0. */
typedef struct RowTaps {
  int top, kh0, kh1;
} RowTaps;

static RowTaps row_taps(const Sweep *s, int oh) {
  int top = oh * s->sh - s->ph;
  int kh1 = s->h - top < s->kh ? s->h - top : s->kh;
  return (RowTaps){top, top < 0 ? -top : 0, kh1};
}

/* Pixel ow (part v of its lanes), its window clipped to the image. */
static void edge_pixel(const Sweep *s, const float *in, const float *f, HostVec bias, RowTaps r,
                       int ow, int v, HostVec *out) {
  HostVec acc = bias;
  int left = ow * s->sw - s->pw; /* the taps [j0, j1) are inside the row */
  int j0 = left < 0 ? -left : 0, j1 = s->w - left < s->kw ? s->w - left : s->kw;
  for (int i = r.kh0; i < r.kh1; i++) {
    const float *taps = f + (size_t)(i * s->kw) * LANES + v * HOST_VEC_FLOATS;
    const float *x = in + ((size_t)(r.top + i) * (size_t)s->w + (size_t)left) * LANES +
                     v * HOST_VEC_FLOATS; /* read from tap j0 on */
    for (int j = j0; j < j1; j++)
      acc += host_vec_load(taps + (size_t)j * LANES) * host_vec_load(x + (ptrdiff_t)j * LANES);
  }
  *out = acc;
}

/* n pixels from ow (n at most STRIP, a constant where inlined) whose windows lie inside the
 * image's columns, accumulated in registers. */
static inline __attribute__((always_inline)) void strip(const Sweep *s, const float *in,
                                                        const float *f, HostVec bias, RowTaps r,
                                                        int ow, int v, const int n,
                                                        HostVec acc[STRIP]) {
#pragma GCC unroll 8
  for (int j = 0; j < n; j++) acc[j] = bias;
  size_t step = (size_t)s->sw * LANES;
  for (int i = r.kh0; i < r.kh1; i++) {
    const float *row = in +
                       ((size_t)(r.top + i) * (size_t)s->w + (size_t)(ow * s->sw - s->pw)) * LANES +
                       v * HOST_VEC_FLOATS;
    const float *taps = f + (size_t)(i * s->kw) * LANES + v * HOST_VEC_FLOATS;
    for (int t = 0; t < s->kw; t++) {
      HostVec weight = host_vec_load(taps + (size_t)t * LANES);
      const float *x = row + (size_t)t * LANES;
#pragma GCC unroll 8
      for (int j = 0; j < n; j++) acc[j] += weight * host_vec_load(x + (size_t)j * step);
    }
  }
}

/* Row oh of the output (st: where it goes): in, one plane of the input; f, its block's
 * filters; bias or NULL. */
static void sweep_row(const Sweep *s, const float *in, const float *f, const float *bias, int oh,
                      const Store *st) {
  RowTaps r = row_taps(s, oh);
  /* the columns whose whole window lies inside: [lo, hi) */
  int lo = s->pw > 0 ? (s->pw + s->sw - 1) / s->sw : 0, span = s->w - s->kw + s->pw;
  int hi = span >= 0 ? span / s->sw + 1 : 0;
  lo = lo < s->wo ? lo : s->wo;
  hi = hi < s->wo ? (hi > lo ? hi : lo) : s->wo;
  for (int v = 0; v < HOST_VEC_PARTS; v++) {
    HostVec b = bias ? host_vec_load(bias + v * HOST_VEC_FLOATS) : (HostVec){0};
    size_t lane = (size_t)v * HOST_VEC_FLOATS;
    int ow = 0;
    HostVec one;
    for (; ow < lo; ow++) {
      edge_pixel(s, in, f, b, r, ow, v, &one);
      store(st, (size_t)ow * LANES + lane, one);
    }
    HostVec acc[STRIP];
    for (; ow + STRIP <= hi; ow += STRIP) {
      strip(s, in, f, b, r, ow, v, STRIP, acc);
      for (int j = 0; j < STRIP; j++) store(st, (size_t)(ow + j) * LANES + lane, acc[j]);
    }
    for (; ow + STRIP / 2 <= hi; ow += STRIP / 2) { /* short rows: 7x7, 14x14 */
      strip(s, in, f, b, r, ow, v, STRIP / 2, acc);
      for (int j = 0; j < STRIP / 2; j++) store(st, (size_t)(ow + j) * LANES + lane, acc[j]);
    }
    for (; ow < s->wo; ow++) {
      edge_pixel(s, in, f, b, r, ow, v, &one);
      store(st, (size_t)ow * LANES + lane, one);
    }
  }
}

static size_t plane_floats(int h, int w) { return (size_t)h * (size_t)w * LANES; }

/* An output too large for the caches is written with streaming stores (stream.h): each row is
 * computed into a buffer of the thread's (ws, a row apart) and copied out whole. A row's
 * results go to *st's out: the row itself, or the buffer. */
typedef struct Rows {
  float *out;   /* the output tensor */
  bool streams; /* through the buffers */
  float *buffers;
  size_t row_floats;
} Rows;

static Rows output_rows(float *out, size_t floats, bool add, int row_pixels, float *buffers) {
  return (Rows){out, !add && host_streams(out, sizeof(float) * floats), buffers,
                (size_t)row_pixels * LANES};
}

static float *row_target(const Rows *r, size_t row) {
  return r->streams ? r->buffers + (size_t)omp_get_thread_num() * r->row_floats
                    : r->out + row * r->row_floats;
}

static void row_done(const Rows *r, size_t row, const float *target) {
  if (r->streams) host_stream_copy(r->out + row * r->row_floats, target, r->row_floats);
}

/* Where forward and the input gradient keep the threads' row buffers in the workspace. */
static float *row_buffers(const SwkConv *p, float *ws) {
  return ws + filter_floats(p) + (size_t)host_blocks(p->co) * LANES;
}

static void forward(const SwkConv *p, int batch, const float *x, const float *w, const float *bias,
                    float *y, float *ws) {
  float *f = ws, *b = bias ? ws + filter_floats(p) : NULL;
  pack_filters(p, w, false, f);
  if (bias) pack_bias(p, bias, b);
  Sweep s = forward_sweep(p);
  int blocks = host_blocks(p->co);
  size_t in_plane = plane_floats(p->h, p->w);
  long rows = (long)batch * blocks * p->ho;
  Rows out = output_rows(y, (size_t)rows * (size_t)p->wo * LANES, false, p->wo, row_buffers(p, ws));
#pragma omp parallel num_threads(swk_threads())
  {
#pragma omp for schedule(guided)
    for (long r = 0; r < rows; r++) {
      long plane = r / p->ho;
      int cb = (int)(plane % blocks);
      Store st = {.out = row_target(&out, (size_t)r), .relu = p->relu, .slope = p->relu_slope};
      sweep_row(&s, x + (size_t)plane * in_plane, f + (size_t)cb * taps_of(p) * LANES,
                b ? b + (size_t)cb * LANES : NULL, (int)(r % p->ho), &st);
      row_done(&out, (size_t)r, st.out);
    }
    if (out.streams) host_stream_fence();
  }
}

/* ------------------------------------------------------------------ input gradient */

/* A strided input gradient's column phase of row ih: dX's pixels iw = r0 + sw m (m < count)
 * receive the taps j = j0 + sw t (t < taps), tap t from dY's column m + c0 - t, of the rows
 * i = i0 + sh u from dY's row oh0 - u (no division in the loops: it took most of their time). */
typedef struct Phase {
  int r0, j0, c0, taps, count, i0, oh0;
} Phase;

static Phase column_phase(const SwkConv *p, int ih, int r0) {
  int j0 = (r0 + p->pw) % p->sw; /* r0 + pw - j0 is a multiple of sw, at least 0 */
  int i0 = (ih + p->ph) % p->sh;
  return (Phase){r0,
                 j0,
                 (r0 + p->pw - j0) / p->sw,
                 j0 < p->kw ? (p->kw - j0 + p->sw - 1) / p->sw : 0,
                 (p->w - r0 + p->sw - 1) / p->sw,
                 i0,
                 (ih + p->ph - i0) / p->sh};
}

/* n pixels of a phase from m (n a constant where inlined) gathered in registers from dY's
 * plane: every tap's column checked (checked, a constant), or all inside. */
static inline __attribute__((always_inline)) void phase_strip(const SwkConv *p, const float *dy,
                                                              const float *f, Phase c, int m, int v,
                                                              const int n, const bool checked,
                                                              HostVec acc[STRIP]) {
  for (int k = 0; k < n; k++) acc[k] = (HostVec){0};
  for (int i = c.i0, oh = c.oh0; i < p->kh && oh >= 0; i += p->sh, oh--) {
    if (oh >= p->ho) continue;
    const float *g = dy + (size_t)oh * (size_t)p->wo * LANES + v * HOST_VEC_FLOATS;
    for (int t = 0; t < c.taps; t++) {
      HostVec weight =
          host_vec_load(f + (size_t)(i * p->kw + c.j0 + t * p->sw) * LANES + v * HOST_VEC_FLOATS);
      int first = m + c.c0 - t;
#pragma GCC unroll 8
      for (int k = 0; k < n; k++)
        if (!checked || (first + k >= 0 && first + k < p->wo))
          acc[k] += weight * host_vec_load(g + (size_t)(first + k) * LANES);
    }
  }
}

/* Pixels m to m + n of phase c of a dX row, part v of their lanes. */
static inline void store_phase(const SwkConv *p, const Store *st, Phase c, int m, int v, int n,
                               const HostVec acc[STRIP]) {
  for (int k = 0; k < n; k++)
    store(st, (size_t)(c.r0 + p->sw * (m + k)) * LANES + (size_t)v * HOST_VEC_FLOATS, acc[k]);
}

/* Row ih of dX (one plane) of a strided convolution, phase by phase of its columns: each pixel
 * gathers the taps that reach it (about (k / s)^2) in registers, in strips where all of them
 * are inside dY, and is stored once. */
static void gather_strided_row(const SwkConv *p, const float *dy, const float *f, int ih,
                               const Store *st) {
  for (int r0 = 0; r0 < p->sw && r0 < p->w; r0++) {
    Phase c = column_phase(p, ih, r0);
    /* the pixels whose every tap is inside dY: [lo, hi) */
    int lo = c.taps - 1 - c.c0 > 0 ? c.taps - 1 - c.c0 : 0;
    int hi = p->wo - c.c0 < c.count ? p->wo - c.c0 : c.count;
    if (hi < lo) hi = lo;
    for (int v = 0; v < HOST_VEC_PARTS; v++) {
      HostVec acc[STRIP];
      int m = 0;
      for (; m < lo && m < c.count; m++) {
        phase_strip(p, dy, f, c, m, v, 1, true, acc);
        store_phase(p, st, c, m, v, 1, acc);
      }
      for (; m + STRIP <= hi; m += STRIP) {
        phase_strip(p, dy, f, c, m, v, STRIP, false, acc);
        store_phase(p, st, c, m, v, STRIP, acc);
      }
      for (; m + STRIP / 2 <= hi; m += STRIP / 2) {
        phase_strip(p, dy, f, c, m, v, STRIP / 2, false, acc);
        store_phase(p, st, c, m, v, STRIP / 2, acc);
      }
      for (; m < c.count; m++) {
        phase_strip(p, dy, f, c, m, v, 1, true, acc);
        store_phase(p, st, c, m, v, 1, acc);
      }
    }
  }
}

static void input_gradient(const SwkConv *p, int batch, const float *w, const float *dy, float *dx,
                           bool add, const float *mask, float *ws) {
  bool stride_one = p->sh == 1 && p->sw == 1;
  float *f = ws;
  pack_filters(p, w, stride_one, f);
  Sweep s = input_gradient_sweep(p);
  int blocks = host_blocks(p->co);
  size_t out_plane = plane_floats(p->ho, p->wo);
  long rows = (long)batch * blocks * p->h;
  Rows out = output_rows(dx, (size_t)rows * (size_t)p->w * LANES, add, p->w, row_buffers(p, ws));
#pragma omp parallel num_threads(swk_threads())
  {
#pragma omp for schedule(guided)
    for (long r = 0; r < rows; r++) {
      long plane = r / p->h;
      int cb = (int)(plane % blocks), ih = (int)(r % p->h);
      const float *filters = f + (size_t)cb * taps_of(p) * LANES,
                  *g = dy + (size_t)plane * out_plane;
      Store st = {.out = row_target(&out, (size_t)r),
                  .mask = mask ? mask + (size_t)r * out.row_floats : NULL,
                  .slope = p->dx_relu_slope,
                  .ceiling = swk_mask_ceiling(p),
                  .add = add};
      if (stride_one)
        sweep_row(&s, g, filters, NULL, ih, &st);
      else
        gather_strided_row(p, g, filters, ih, &st);
      row_done(&out, (size_t)r, st.out);
    }
    if (out.streams) host_stream_fence();
  }
}

/* ------------------------------------------------------------------ weight gradient */

/* The columns ow of dY whose tap j reaches a column of x: [*first, *end). */
static void reaching_columns(const SwkConv *p, int j, int *first, int *end) {
  *first = j < p->pw ? (p->pw - j + p->sw - 1) / p->sw : 0;
  int last = p->w - 1 + p->pw - j;
  *end = last < 0 ? 0 : last / p->sw + 1;
  if (*end > p->wo) *end = p->wo;
}

/* One plane's products added to sums[t][lane] for each tap t, and dY's sum to sums[taps][lane]. */
static void weight_sums(const SwkConv *p, const float *x, const float *dy, float *sums) {
  size_t taps = taps_of(p);
  for (int oh = 0; oh < p->ho; oh++) {
    const float *g = dy + (size_t)oh * (size_t)p->wo * LANES;
    for (int v = 0; v < HOST_VEC_PARTS; v++) {
      size_t lane = (size_t)v * HOST_VEC_FLOATS;
      HostVec sum = host_vec_load(sums + taps * LANES + lane);
      for (int ow = 0; ow < p->wo; ow++) sum += host_vec_load(g + (size_t)ow * LANES + lane);
      host_vec_store(sums + taps * LANES + lane, sum);
    }
    for (int i = 0; i < p->kh; i++) {
      int ih = oh * p->sh - p->ph + i;
      if (ih < 0 || ih >= p->h) continue;
      const float *row = x + (size_t)ih * (size_t)p->w * LANES;
      for (int j = 0; j < p->kw; j++) {
        int first, end;
        reaching_columns(p, j, &first, &end);
        if (first >= end) continue;
        const float *in = row + (size_t)(first * p->sw + j - p->pw) * LANES; /* at ow = first */
        size_t step = (size_t)p->sw * LANES;
        const float *grad = g + (size_t)first * LANES;
        float *t = sums + (size_t)(i * p->kw + j) * LANES;
        for (int v = 0; v < HOST_VEC_PARTS; v++) {
          size_t lane = (size_t)v * HOST_VEC_FLOATS;
          HostVec chain[CHAINS] = {{0}};
          int n = end - first, k = 0;
          for (; k + CHAINS <= n; k += CHAINS)
            for (int c = 0; c < CHAINS; c++)
              chain[c] += host_vec_load(grad + (size_t)(k + c) * LANES + lane) *
                          host_vec_load(in + (size_t)(k + c) * step + lane);
          for (; k < n; k++)
            chain[0] += host_vec_load(grad + (size_t)k * LANES + lane) *
                        host_vec_load(in + (size_t)k * step + lane);
          host_vec_store(t + lane,
                         host_vec_load(t + lane) + ((chain[0] + chain[1]) + (chain[2] + chain[3])));
        }
      }
    }
  }
}

static void weight_gradient(const SwkConv *p, int batch, const float *x, const float *dy, float *dw,
                            float *db, float scale, float bias_scale, float keep, float *ws) {
  int blocks = host_blocks(p->co),
      parts = batch < HOST_DEPTHWISE_PARTS ? batch : HOST_DEPTHWISE_PARTS;
  size_t taps = taps_of(p), unit = (taps + 1) * LANES;
  size_t in_plane = plane_floats(p->h, p->w), out_plane = plane_floats(p->ho, p->wo);
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
  for (long u = 0; u < (long)parts * blocks; u++) {
    int part = (int)(u / blocks), cb = (int)(u % blocks);
    float *sums = ws + (size_t)u * unit;
    memset(sums, 0, sizeof(float) * unit);
    for (int b = (int)((long)batch * part / parts); b < (int)((long)batch * (part + 1) / parts);
         b++) {
      size_t plane = (size_t)b * (size_t)blocks + (size_t)cb;
      weight_sums(p, x + plane * in_plane, dy + plane * out_plane, sums);
    }
  }
  for (int c = 0; c < p->co; c++) {
    const float *first = ws + (size_t)(c / LANES) * unit + (size_t)(c % LANES);
    size_t part_step = (size_t)blocks * unit;
    for (size_t t = 0; t <= taps; t++) {
      float g = 0;
      for (int part = 0; part < parts; part++) g += first[(size_t)part * part_step + t * LANES];
      if (t < taps)
        dw[(size_t)c * taps + t] = swk_gradient_store(dw[(size_t)c * taps + t], g, scale, keep);
      else if (db)
        db[c] = swk_gradient_store(db[c], g, bias_scale, keep);
    }
  }
}

/* ------------------------------------------------------------------ the kernel interface */

size_t swk_conv_depthwise_workspace(const SwkConv *p) {
  return host_conv_depthwise_workspace_for(p, swk_threads());
}

void swk_conv_depthwise_forward(const SwkConv *p, int batch, const float *x, const float *w,
                                const float *b, float *y, float *ws) {
  forward(p, batch, x, w, p->bias ? b : NULL, y, ws);
}

void swk_conv_depthwise_backward(const SwkConv *p, int batch, const float *x, const float *w,
                                 const float *dy, float *dx, bool dx_add, float *dw, float *db,
                                 float grad_scale, float bias_grad_scale, float grad_keep,
                                 float *ws) {
  if (dw)
    weight_gradient(p, batch, x, dy, dw, p->bias ? db : NULL, grad_scale, bias_grad_scale,
                    grad_keep, ws);
  if (dx) input_gradient(p, batch, w, dy, dx, dx_add, p->dx_relu ? x : NULL, ws);
}
