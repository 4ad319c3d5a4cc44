/* The Winograd plan's transforms (conv_winograd.c), written once and included once per
 * instruction set with WT_ATTR (the outer functions' attributes) and WT(name) (the name with
 * the set's suffix). Every value is a HostV16: one block's 16 channels of a pixel or of a filter
 * tap, so each transform runs on 16 channels at once. m is 2 or 4 and alpha = m + 2; every
 * function below is inlined with m constant, so its branches fold away.
 *
 * The matrices are Lavin and Gray's ("Fast Algorithms for Convolutional Neural Networks",
 * 2016) for F(2x2, 3x3) and F(4x4, 3x3) (points 0, 1, -1 and 0, 1, -1, 2, -2, with infinity):
 *   forward      Y  = A^T [ (G g G^T) . (B^T d B) ] A
 *   weight grad  dg = G^T [ (A dY A^T) . (B^T d B) ] G   (the forward's adjoint in g)
 * with the element-wise products summed over tiles and channels by the register blocks. The
 * 1-D forms below map n values `in` (stride si) to `out` (stride so); the 2-D transform of
 * an n x n tile applies one to its columns, then to the rows of the result. */

#define WT_INLINE __attribute__((always_inline)) static inline

/* B^T d: alpha -> alpha */
WT_INLINE void WT(bt)(int m, const HostV16 *d, int si, HostV16 *r, int so) {
  HostV16 d0 = d[0], d1 = d[si], d2 = d[2 * si], d3 = d[3 * si];
  if (m == 2) {
    r[0] = d0 - d2, r[so] = d1 + d2, r[2 * so] = d2 - d1, r[3 * so] = d1 - d3;
    return;
  }
  HostV16 d4 = d[4 * si], d5 = d[5 * si];
  r[0] = 4 * d0 - 5 * d2 + d4;
  r[so] = d3 + d4 - 4 * (d1 + d2);
  r[2 * so] = d4 - d3 + 4 * (d1 - d2);
  r[3 * so] = d4 - d2 + 2 * (d3 - d1);
  r[4 * so] = d4 - d2 + 2 * (d1 - d3);
  r[5 * so] = 4 * d1 - 5 * d3 + d5;
}

/* A^T p: alpha -> m */
WT_INLINE void WT(at)(int m, const HostV16 *p, int si, HostV16 *o, int so) {
  HostV16 p0 = p[0], p1 = p[si], p2 = p[2 * si], p3 = p[3 * si];
  if (m == 2) {
    o[0] = p0 + p1 + p2, o[so] = p1 - p2 - p3;
    return;
  }
  HostV16 p4 = p[4 * si], p5 = p[5 * si];
  HostV16 sum12 = p1 + p2, diff12 = p1 - p2, sum34 = p3 + p4, diff34 = p3 - p4;
  o[0] = p0 + sum12 + sum34;
  o[so] = diff12 + 2 * diff34;
  o[2 * so] = sum12 + 4 * sum34;
  o[3 * so] = diff12 + 8 * diff34 + p5;
}

/* G g: 3 -> alpha */
WT_INLINE void WT(g)(int m, const HostV16 *g, int si, HostV16 *u, int so) {
  HostV16 g0 = g[0], g1 = g[si], g2 = g[2 * si];
  if (m == 2) {
    u[0] = g0, u[so] = 0.5f * (g0 + g1 + g2), u[2 * so] = 0.5f * (g0 - g1 + g2), u[3 * so] = g2;
    return;
  }
  u[0] = 0.25f * g0;
  u[so] = (-1.0f / 6) * (g0 + g1 + g2);
  u[2 * so] = (-1.0f / 6) * (g0 - g1 + g2);
  u[3 * so] = (1.0f / 24) * g0 + (1.0f / 12) * g1 + (1.0f / 6) * g2;
  u[4 * so] = (1.0f / 24) * g0 - (1.0f / 12) * g1 + (1.0f / 6) * g2;
  u[5 * so] = g2;
}

/* A q: m -> alpha (an output-gradient tile) */
WT_INLINE void WT(a)(int m, const HostV16 *q, int si, HostV16 *a, int so) {
  HostV16 q0 = q[0], q1 = q[si];
  if (m == 2) {
    a[0] = q0, a[so] = q0 + q1, a[2 * so] = q0 - q1, a[3 * so] = -q1;
    return;
  }
  HostV16 q2 = q[2 * si], q3 = q[3 * si];
  HostV16 even = q0 + q2, odd = q1 + q3, even4 = q0 + 4 * q2, odd4 = 2 * q1 + 8 * q3;
  a[0] = q0;
  a[so] = even + odd;
  a[2 * so] = even - odd;
  a[3 * so] = even4 + odd4;
  a[4 * so] = even4 - odd4;
  a[5 * so] = q3;
}

/* G^T s: alpha -> 3 */
WT_INLINE void WT(gt)(int m, const HostV16 *s, int si, HostV16 *g, int so) {
  HostV16 s0 = s[0], s1 = s[si], s2 = s[2 * si], s3 = s[3 * si];
  if (m == 2) {
    g[0] = s0 + 0.5f * (s1 + s2), g[so] = 0.5f * (s1 - s2), g[2 * so] = 0.5f * (s1 + s2) + s3;
    return;
  }
  HostV16 s4 = s[4 * si], s5 = s[5 * si];
  HostV16 sum12 = s1 + s2, sum34 = s3 + s4;
  g[0] = 0.25f * s0 - (1.0f / 6) * sum12 + (1.0f / 24) * sum34;
  g[so] = (1.0f / 6) * (s2 - s1) + (1.0f / 12) * (s3 - s4);
  g[2 * so] = (1.0f / 6) * (sum34 - sum12) + s5;
}

/* out (n_out x n_out) = the 2-D transform of in (n_in x n_in) by the 1-D `fn`. */
#define WT_2D(fn, m, n_in, n_out, in, out)                                                         \
  do {                                                                                             \
    HostV16 half_[6 * 6];                                                                          \
    for (int c_ = 0; c_ < (n_in); c_++) WT(fn)(m, (in) + c_, (n_in), half_ + c_, (n_in));          \
    for (int r_ = 0; r_ < (n_out); r_++)                                                           \
      WT(fn)(m, half_ + r_ * (n_in), 1, (out) + r_ * (n_out), 1);                                  \
  } while (0)

/* V = B^T d B of the alpha x alpha pixels of one block from (r0, c0), 0 outside the h x w
 * image (x: pixel (0, 0) of the block, rows `row` floats apart), to v + position * v_pos. */
WT_INLINE void WT(input_body)(int m, const float *x, ptrdiff_t row, int h, int w, int r0, int c0,
                              float *v, ptrdiff_t v_pos) {
  int alpha = m + 2;
  HostV16 d[6 * 6], t[6 * 6];
  bool inside = r0 >= 0 && c0 >= 0 && r0 + alpha <= h && c0 + alpha <= w;
  for (int i = 0; i < alpha; i++)
    for (int j = 0; j < alpha; j++) {
      int r = r0 + i, c = c0 + j;
      if (inside || (r >= 0 && r < h && c >= 0 && c < w))
        d[i * alpha + j] = host_v16_load(x + r * row + c * 16);
      else
        d[i * alpha + j] = (HostV16){0};
    }
  WT_2D(bt, m, alpha, alpha, d, t);
  for (int k = 0; k < alpha * alpha; k++) host_v16_store(v + k * v_pos, t[k]);
}

static WT_ATTR void WT(input_tile)(int m, const float *x, ptrdiff_t row, int h, int w, int r0,
                                   int c0, float *v, ptrdiff_t v_pos) {
  if (m == 4)
    WT(input_body)(4, x, row, h, w, r0, c0, v, v_pos);
  else
    WT(input_body)(2, x, row, h, w, r0, c0, v, v_pos);
}

/* Y = A^T P A (+ bias) of one block's products (p + position * p_pos), its first rows x cols
 * pixels written (or added) to y, rows `row` floats apart. */
WT_INLINE void WT(output_body)(int m, const float *p, ptrdiff_t p_pos, const float *bias, float *y,
                               ptrdiff_t row, int rows, int cols, bool accumulate) {
  int alpha = m + 2;
  HostV16 s[6 * 6], o[4 * 4];
  for (int k = 0; k < alpha * alpha; k++) s[k] = host_v16_load(p + k * p_pos);
  WT_2D(at, m, alpha, m, s, o);
  HostV16 b = bias ? host_v16_load(bias) : (HostV16){0};
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      float *at = y + i * row + j * 16;
      host_v16_store(at, (accumulate ? host_v16_load(at) : b) + o[i * m + j]);
    }
}

static WT_ATTR void WT(output_tile)(int m, const float *p, ptrdiff_t p_pos, const float *bias,
                                    float *y, ptrdiff_t row, int rows, int cols, bool accumulate) {
  if (m == 4)
    WT(output_body)(4, p, p_pos, bias, y, row, rows, cols, accumulate);
  else
    WT(output_body)(2, p, p_pos, bias, y, row, rows, cols, accumulate);
}

/* A dY A^T of the m x m output-gradient pixels of one block from (r0, c0), 0 outside the
 * ho x wo image, to out + position * pos. */
WT_INLINE void WT(gradient_body)(int m, const float *dy, ptrdiff_t row, int ho, int wo, int r0,
                                 int c0, float *out, ptrdiff_t pos) {
  int alpha = m + 2;
  HostV16 q[4 * 4], t[6 * 6];
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++)
      q[i * m + j] = r0 + i < ho && c0 + j < wo ? host_v16_load(dy + (r0 + i) * row + (c0 + j) * 16)
                                                : (HostV16){0};
  WT_2D(a, m, m, alpha, q, t);
  for (int k = 0; k < alpha * alpha; k++) host_v16_store(out + k * pos, t[k]);
}

static WT_ATTR void WT(gradient_tile)(int m, const float *dy, ptrdiff_t row, int ho, int wo, int r0,
                                      int c0, float *out, ptrdiff_t pos) {
  if (m == 4)
    WT(gradient_body)(4, dy, row, ho, wo, r0, c0, out, pos);
  else
    WT(gradient_body)(2, dy, row, ho, wo, r0, c0, out, pos);
}

/* U = G g G^T of 16 filters' 3 x 3 taps (g: [tap][16]), to u + position * u_pos. */
WT_INLINE void WT(filter_body)(int m, const float *g, float *u, ptrdiff_t u_pos) {
  int alpha = m + 2;
  HostV16 taps[3 * 3], t[6 * 6];
  for (int k = 0; k < 9; k++) taps[k] = host_v16_load(g + 16 * k);
  WT_2D(g, m, 3, alpha, taps, t);
  for (int k = 0; k < alpha * alpha; k++) host_v16_store(u + k * u_pos, t[k]);
}

static WT_ATTR void WT(filter_tile)(int m, const float *g, float *u, ptrdiff_t u_pos) {
  if (m == 4)
    WT(filter_body)(4, g, u, u_pos);
  else
    WT(filter_body)(2, g, u, u_pos);
}

/* dg = G^T S G of 16 filters' sums (s + position * s_pos) to their 3 x 3 taps (dg: [tap][16]). */
WT_INLINE void WT(weights_body)(int m, const float *s, ptrdiff_t s_pos, float *dg) {
  int alpha = m + 2;
  HostV16 sums[6 * 6], t[3 * 3];
  for (int k = 0; k < alpha * alpha; k++) sums[k] = host_v16_load(s + k * s_pos);
  WT_2D(gt, m, alpha, 3, sums, t);
  for (int k = 0; k < 9; k++) host_v16_store(dg + 16 * k, t[k]);
}

static WT_ATTR void WT(weights_tile)(int m, const float *s, ptrdiff_t s_pos, float *dg) {
  if (m == 4)
    WT(weights_body)(4, s, s_pos, dg);
  else
    WT(weights_body)(2, s, s_pos, dg);
}

#undef WT_2D
#undef WT_INLINE
