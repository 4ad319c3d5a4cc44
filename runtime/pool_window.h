/* A pooling window, written once for every kernel set (host, both layouts; the sw26010 CPEs),
 * so that all have Caffe's semantics from one definition. Includes nothing: CPE code, which has
 * the athread interface alone, includes it too. */
#ifndef SWNC_POOL_WINDOW_H
#define SWNC_POOL_WINDOW_H

/* The window of output (oh, ow) clipped to the input, and the divisor of an average: the
 * window's extent within the padded input (Caffe's and PyTorch's count_include_pad). */
typedef struct SwnWindow {
  int h0, h1, w0, w1;
  float area;
} SwnWindow;

/* Of a struct with the window's geometry in fields h, w, kh, kw, sh, sw, ph, pw (SwkPool,
 * SwPoolArgs). */
#define SWN_POOL_WINDOW(p, oh, ow)                                                                 \
  swn_pool_window(oh, ow, (p)->h, (p)->w, (p)->kh, (p)->kw, (p)->sh, (p)->sw, (p)->ph, (p)->pw)

static inline SwnWindow swn_pool_window(int oh, int ow, int h, int w, int kh, int kw, int sh,
                                        int sw, int ph, int pw) {
  int h0 = oh * sh - ph, w0 = ow * sw - pw;
  int h1 = h0 + kh < h + ph ? h0 + kh : h + ph;
  int w1 = w0 + kw < w + pw ? w0 + kw : w + pw;
  SwnWindow win = {h0 < 0 ? 0 : h0, h1 > h ? h : h1, w0 < 0 ? 0 : w0, w1 > w ? w : w1,
                   (float)((h1 - h0) * (w1 - w0))};
  return win;
}

#endif
