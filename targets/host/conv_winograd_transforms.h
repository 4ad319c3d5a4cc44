/* The Winograd plan's transforms (conv_winograd.c), written once and included once per
 * instruction set with WT_ATTR (the outer functions' attributes), WT(name) (the name with the
 * set's suffix) and WtVec (a vector of floats as wide as its registers). Every value is a
 * WtVec, a register's worth of one block's 16 channels of a pixel or of a filter tap: a tile is
 * transformed in 16 / WT_FLOATS parts. (Whole 16-float values split into 128-bit pieces on
 * AVX2, spilled so: a 6 x 6 tile of them is 72 ymm registers' worth.) F(m x m, r x r) is
 * F(2x2, 3x3), F(4x4, 3x3) or F(2x2, 5x5), alpha = m + r - 1; every function below is inlined
 * with m and r constant, so its branches fold away.
 *
 * The matrices are Lavin and Gray's ("Fast Algorithms for Convolutional Neural Networks",
 * 2016) for F(2x2, 3x3) (points 0, 1, -1 and infinity) and F(4x4, 3x3) (0, 1, -1, 2, -2 and
 * infinity). F(2x2, 5x5) is Toom-Cook, as they derive theirs, at 0, 1, -1, 2, -1/2 and
 * infinity (with -1/2 for -2 its float results err 4x less in the weight gradient, 2.5x less
 * forward): B^T's row for a finite point p holds the coefficients of prod(x - p') over the
 * other finite points, its last row those of the product over all five; G's row for p is
 * p^k / prod(p - p') (k = 0..4); A^T's rows are 1 and p. In the functions below alpha 4 is
 * F(2x2, 3x3); with alpha 6, r 3 is F(4x4, 3x3) and r 5 is F(2x2, 5x5):
 *   forward      Y  = A^T [ (G g G^T) . (B^T d B) ] A
 *   weight grad  dg = G^T [ (A dY A^T) . (B^T d B) ] G   (the forward's adjoint in g)
 * with the element-wise products summed over tiles and channels by the register blocks. The
 * 1-D forms below map n values `in` (stride si) to `out` (stride so); the 2-D transform of
 * an n x n tile applies one to each column as it is loaded, into a half-transformed tile, then
 * to each row of that, storing the results as they come (a whole tile loaded first and the
 * results gathered before storing went through the stack twice more: 5% of cifar10_quick's
 * conv2 forward). */

#define WT_INLINE __attribute__((always_inline)) static inline

#define WT_FLOATS ((int)(sizeof(WtVec) / sizeof(float)))

WT_INLINE WtVec WT(load)(const float *p) {
  WtVec v;
  memcpy(&v, p, sizeof v);
  return v;
}

WT_INLINE void WT(store)(float *p, WtVec v) { memcpy(p, &v, sizeof v); }

/* t > 0 ? v : slope * v, lane by lane, as the ReLU kernel computes it (t = v) and its backward
 * (t the ReLU's output). */
typedef int WT(Ints) __attribute__((vector_size(sizeof(WtVec))));
WT_INLINE WtVec WT(where_positive)(WtVec t, WtVec v, float slope) {
  WT(Ints) up = t > 0;
  return (WtVec)(((WT(Ints))v & up) | ((WT(Ints))(v * slope) & ~up));
}
/* 0 < t < ceiling ? v : slope * v (a carried ReLU6 mask; a ReLU's ceiling is infinity) */
WT_INLINE WtVec WT(where_inside)(WtVec t, WtVec v, float slope, float ceiling) {
  WT(Ints) in = (t > 0) & (t < ceiling);
  return (WtVec)(((WT(Ints))v & in) | ((WT(Ints))(v * slope) & ~in));
}

/* B^T d: alpha -> alpha */
WT_INLINE void WT(bt)(int m, int r, const WtVec *d, int si, WtVec *t, int so) {
  int alpha = m + r - 1;
  WtVec d0 = d[0], d1 = d[si], d2 = d[2 * si], d3 = d[3 * si];
  if (alpha == 4) {
    t[0] = d0 - d2, t[so] = d1 + d2, t[2 * so] = d2 - d1, t[3 * so] = d1 - d3;
    return;
  }
  WtVec d4 = d[4 * si], d5 = d[5 * si];
  if (r == 3) {
    t[0] = 4 * d0 - 5 * d2 + d4;
    t[so] = d3 + d4 - 4 * (d1 + d2);
    t[2 * so] = d4 - d3 + 4 * (d1 - d2);
    t[3 * so] = d4 - d2 + 2 * (d3 - d1);
    t[4 * so] = d4 - d2 + 2 * (d1 - d3);
    t[5 * so] = 4 * d1 - 5 * d3 + d5;
    return;
  }
  t[0] = d0 + d4 - 2 * d2 + 1.5f * (d1 - d3);
  t[so] = d4 - d1 - 2.5f * d2 - 0.5f * d3;
  t[2 * so] = d4 + d1 + 0.5f * d2 - 2.5f * d3;
  t[3 * so] = d4 - d2 + 0.5f * (d3 - d1);
  t[4 * so] = d4 - d2 + 2 * (d1 - d3);
  t[5 * so] = d1 + d5 - 2 * d3 + 1.5f * (d2 - d4);
}

/* A^T p: alpha -> m */
WT_INLINE void WT(at)(int m, int r, const WtVec *p, int si, WtVec *o, int so) {
  int alpha = m + r - 1;
  WtVec p0 = p[0], p1 = p[si], p2 = p[2 * si], p3 = p[3 * si];
  if (alpha == 4) {
    o[0] = p0 + p1 + p2, o[so] = p1 - p2 - p3;
    return;
  }
  WtVec p4 = p[4 * si], p5 = p[5 * si];
  if (r == 5) {
    o[0] = p0 + p1 + p2 + p3 + p4;
    o[so] = p1 - p2 + 2 * p3 - 0.5f * p4 + p5;
    return;
  }
  WtVec sum12 = p1 + p2, diff12 = p1 - p2, sum34 = p3 + p4, diff34 = p3 - p4;
  o[0] = p0 + sum12 + sum34;
  o[so] = diff12 + 2 * diff34;
  o[2 * so] = sum12 + 4 * sum34;
  o[3 * so] = diff12 + 8 * diff34 + p5;
}

/* G g: r -> alpha */
WT_INLINE void WT(g)(int m, int r, const WtVec *g, int si, WtVec *u, int so) {
  int alpha = m + r - 1;
  WtVec g0 = g[0], g1 = g[si], g2 = g[2 * si];
  if (alpha == 4) {
    u[0] = g0, u[so] = 0.5f * (g0 + g1 + g2), u[2 * so] = 0.5f * (g0 - g1 + g2), u[3 * so] = g2;
    return;
  }
  if (r == 3) {
    u[0] = 0.25f * g0;
    u[so] = (-1.0f / 6) * (g0 + g1 + g2);
    u[2 * so] = (-1.0f / 6) * (g0 - g1 + g2);
    u[3 * so] = (1.0f / 24) * g0 + (1.0f / 12) * g1 + (1.0f / 6) * g2;
    u[4 * so] = (1.0f / 24) * g0 - (1.0f / 12) * g1 + (1.0f / 6) * g2;
    u[5 * so] = g2;
    return;
  }
  WtVec g3 = g[3 * si], g4 = g[4 * si], even = g0 + g2 + g4, odd = g1 + g3;
  u[0] = g0;
  u[so] = (-1.0f / 3) * (even + odd);
  u[2 * so] = (1.0f / 3) * (even - odd);
  u[3 * so] = (1.0f / 15) * (g0 + 2 * g1 + 4 * g2 + 8 * g3 + 16 * g4);
  u[4 * so] = (-1.0f / 15) * (16 * g0 - 8 * g1 + 4 * g2 - 2 * g3 + g4);
  u[5 * so] = g4;
}

/* A q: m -> alpha (an output-gradient tile) */
WT_INLINE void WT(a)(int m, int r, const WtVec *q, int si, WtVec *a, int so) {
  int alpha = m + r - 1;
  WtVec q0 = q[0], q1 = q[si];
  if (alpha == 4) {
    a[0] = q0, a[so] = q0 + q1, a[2 * so] = q0 - q1, a[3 * so] = -q1;
    return;
  }
  if (r == 5) {
    a[0] = q0, a[so] = q0 + q1, a[2 * so] = q0 - q1;
    a[3 * so] = q0 + 2 * q1, a[4 * so] = q0 - 0.5f * q1, a[5 * so] = q1;
    return;
  }
  WtVec q2 = q[2 * si], q3 = q[3 * si];
  WtVec even = q0 + q2, odd = q1 + q3, even4 = q0 + 4 * q2, odd4 = 2 * q1 + 8 * q3;
  a[0] = q0;
  a[so] = even + odd;
  a[2 * so] = even - odd;
  a[3 * so] = even4 + odd4;
  a[4 * so] = even4 - odd4;
  a[5 * so] = q3;
}

/* G^T s: alpha -> r */
WT_INLINE void WT(gt)(int m, int r, const WtVec *s, int si, WtVec *g, int so) {
  int alpha = m + r - 1;
  WtVec s0 = s[0], s1 = s[si], s2 = s[2 * si], s3 = s[3 * si];
  if (alpha == 4) {
    g[0] = s0 + 0.5f * (s1 + s2), g[so] = 0.5f * (s1 - s2), g[2 * so] = 0.5f * (s1 + s2) + s3;
    return;
  }
  WtVec s4 = s[4 * si], s5 = s[5 * si];
  if (r == 3) {
    WtVec sum12 = s1 + s2, sum34 = s3 + s4;
    g[0] = 0.25f * s0 - (1.0f / 6) * sum12 + (1.0f / 24) * sum34;
    g[so] = (1.0f / 6) * (s2 - s1) + (1.0f / 12) * (s3 - s4);
    g[2 * so] = (1.0f / 6) * (sum34 - sum12) + s5;
    return;
  }
  WtVec plus = (1.0f / 3) * (s2 - s1), minus = (-1.0f / 3) * (s1 + s2);
  g[0] = s0 + plus + (1.0f / 15) * s3 - (16.0f / 15) * s4;
  g[so] = minus + (2.0f / 15) * s3 + (8.0f / 15) * s4;
  g[2 * so] = plus + (4.0f / 15) * (s3 - s4);
  g[3 * so] = minus + (8.0f / 15) * s3 + (2.0f / 15) * s4;
  g[4 * so] = plus + (16.0f / 15) * s3 - (1.0f / 15) * s4 + s5;
}

/* body(m, r, ...) for the kernel's (m, r), constant: F(4x4, 3x3), F(2x2, 5x5) or F(2x2, 3x3). */
#define WT_CASES(body, m, r, ...)                                                                  \
  do {                                                                                             \
    if ((m) == 4)                                                                                  \
      WT(body)(4, 3, __VA_ARGS__);                                                                 \
    else if ((r) == 5)                                                                             \
      WT(body)(2, 5, __VA_ARGS__);                                                                 \
    else                                                                                           \
      WT(body)(2, 3, __VA_ARGS__);                                                                 \
  } while (0)

/* V = B^T d B of the alpha x alpha pixels of one block from (r0, c0), 0 outside the h x w
 * image (x: pixel (0, 0) of the block, rows `row` floats apart), to v + position * v_pos. */
WT_INLINE void WT(input_body)(int m, int r, const float *x, ptrdiff_t row, int h, int w, int r0,
                              int c0, float *v, ptrdiff_t v_pos) {
  int alpha = m + r - 1;
  WtVec half[6 * 6];
  bool inside = r0 >= 0 && c0 >= 0 && r0 + alpha <= h && c0 + alpha <= w;
  for (int j = 0; j < alpha; j++) {
    WtVec column[6];
    for (int i = 0; i < alpha; i++) {
      int y = r0 + i, c = c0 + j;
      bool in = inside || (y >= 0 && y < h && c >= 0 && c < w);
      column[i] = in ? WT(load)(x + y * row + c * 16) : (WtVec){0};
    }
    WT(bt)(m, r, column, 1, half + j, alpha);
  }
  for (int i = 0; i < alpha; i++) {
    WtVec out[6];
    WT(bt)(m, r, half + i * alpha, 1, out, 1);
    for (int j = 0; j < alpha; j++) WT(store)(v + (i * alpha + j) * v_pos, out[j]);
  }
}

static WT_ATTR void WT(input_tile)(int m, int r, const float *x, ptrdiff_t row, int h, int w,
                                   int r0, int c0, float *v, ptrdiff_t v_pos) {
  for (int part = 0; part < 16; part += WT_FLOATS)
    WT_CASES(input_body, m, r, x + part, row, h, w, r0, c0, v + part, v_pos);
}

/* Y = A^T P A (+ bias) of one block's products (p + position * p_pos), its first rows x cols
 * pixels written (or added) to y, rows `row` floats apart; then the ReLU (relu: y > 0 ? y :
 * slope * y), or masked by a ReLU's output at the same offsets from `mask` where it is not NULL
 * (0 < mask < ceiling ? y : slope * y). */
WT_INLINE void WT(output_body)(int m, int r, const float *p, ptrdiff_t p_pos, const float *bias,
                               float *y, ptrdiff_t row, int rows, int cols, bool accumulate,
                               bool relu, const float *mask, float slope, float ceiling) {
  int alpha = m + r - 1;
  WtVec half[4 * 6];
  for (int j = 0; j < alpha; j++) {
    WtVec column[6];
    for (int i = 0; i < alpha; i++) column[i] = WT(load)(p + (i * alpha + j) * p_pos);
    WT(at)(m, r, column, 1, half + j, alpha);
  }
  WtVec b = bias ? WT(load)(bias) : (WtVec){0};
  for (int i = 0; i < rows; i++) {
    WtVec o[4] = {0}; /* m of them written; GCC cannot tell */
    WT(at)(m, r, half + i * alpha, 1, o, 1);
    for (int j = 0; j < cols; j++) {
      float *at = y + i * row + j * 16;
      WtVec v = (accumulate ? WT(load)(at) : b) + o[j];
      if (relu) v = WT(where_positive)(v, v, slope);
      if (mask) v = WT(where_inside)(WT(load)(mask + i * row + j * 16), v, slope, ceiling);
      WT(store)(at, v);
    }
  }
}

static WT_ATTR void WT(output_tile)(int m, int r, const float *p, ptrdiff_t p_pos,
                                    const float *bias, float *y, ptrdiff_t row, int rows, int cols,
                                    bool accumulate, bool relu, const float *mask, float slope,
                                    float ceiling) {
  for (int part = 0; part < 16; part += WT_FLOATS)
    WT_CASES(output_body, m, r, p + part, p_pos, bias ? bias + part : NULL, y + part, row, rows,
             cols, accumulate, relu, mask ? mask + part : NULL, slope, ceiling);
}

/* A dY A^T of the m x m output-gradient pixels of one block from (r0, c0), 0 outside the
 * ho x wo image, to out + position * pos. */
WT_INLINE void WT(gradient_body)(int m, int r, const float *dy, ptrdiff_t row, int ho, int wo,
                                 int r0, int c0, float *out, ptrdiff_t pos) {
  int alpha = m + r - 1;
  WtVec half[6 * 4];
  for (int j = 0; j < m; j++) {
    WtVec column[4];
    for (int i = 0; i < m; i++)
      column[i] =
          r0 + i < ho && c0 + j < wo ? WT(load)(dy + (r0 + i) * row + (c0 + j) * 16) : (WtVec){0};
    WT(a)(m, r, column, 1, half + j, m);
  }
  for (int i = 0; i < alpha; i++) {
    WtVec t[6];
    WT(a)(m, r, half + i * m, 1, t, 1);
    for (int j = 0; j < alpha; j++) WT(store)(out + (i * alpha + j) * pos, t[j]);
  }
}

static WT_ATTR void WT(gradient_tile)(int m, int r, const float *dy, ptrdiff_t row, int ho, int wo,
                                      int r0, int c0, float *out, ptrdiff_t pos) {
  for (int part = 0; part < 16; part += WT_FLOATS)
    WT_CASES(gradient_body, m, r, dy + part, row, ho, wo, r0, c0, out + part, pos);
}

/* U = G g G^T of 16 filters' r x r taps (g: [tap][16]), to u + position * u_pos. */
WT_INLINE void WT(filter_body)(int m, int r, const float *g, float *u, ptrdiff_t u_pos) {
  int alpha = m + r - 1;
  WtVec half[6 * 5];
  for (int j = 0; j < r; j++) {
    WtVec column[5];
    for (int i = 0; i < r; i++) column[i] = WT(load)(g + 16 * (i * r + j));
    WT(g)(m, r, column, 1, half + j, r);
  }
  for (int i = 0; i < alpha; i++) {
    WtVec t[6];
    WT(g)(m, r, half + i * r, 1, t, 1);
    for (int j = 0; j < alpha; j++) WT(store)(u + (i * alpha + j) * u_pos, t[j]);
  }
}

static WT_ATTR void WT(filter_tile)(int m, int r, const float *g, float *u, ptrdiff_t u_pos) {
  for (int part = 0; part < 16; part += WT_FLOATS)
    WT_CASES(filter_body, m, r, g + part, u + part, u_pos);
}

/* dg = G^T S G of 16 filters' sums (s + position * s_pos) to their r x r taps (dg: [tap][16]). */
WT_INLINE void WT(weights_body)(int m, int r, const float *s, ptrdiff_t s_pos, float *dg) {
  int alpha = m + r - 1;
  WtVec half[5 * 6];
  for (int j = 0; j < alpha; j++) {
    WtVec column[6];
    for (int i = 0; i < alpha; i++) column[i] = WT(load)(s + (i * alpha + j) * s_pos);
    WT(gt)(m, r, column, 1, half + j, alpha);
  }
  for (int i = 0; i < r; i++) {
    WtVec t[5] = {0}; /* r of them written; GCC cannot tell */
    WT(gt)(m, r, half + i * alpha, 1, t, 1);
    for (int j = 0; j < r; j++) WT(store)(dg + 16 * (i * r + j), t[j]);
  }
}

static WT_ATTR void WT(weights_tile)(int m, int r, const float *s, ptrdiff_t s_pos, float *dg) {
  for (int part = 0; part < 16; part += WT_FLOATS)
    WT_CASES(weights_body, m, r, s + part, s_pos, dg + part);
}

#undef WT_CASES
#undef WT_INLINE
#undef WT_FLOATS
