/* The element-wise activations' arithmetic, written once: every kernel set expands these rows
 * into its kernels (targets/host/activations.c, the sw26010 CPEs' stream_cpe.c), and the
 * contract (runtime/kernels.h) declares swk_<name>_forward and swk_<name>_backward for each.
 * The op of the same name is a row of the op table (ir/ops.h, family FAMILY_ACTIVATION).
 *
 * Columns: the name, and what backward reads beside dy: OUT, the output y, or IN, the input x
 * (the op table's bwd column says the same: the memory plan keeps that value alive).
 * Each row has two functions of one element:
 *   swn_<name>(x, s)            the forward
 *   swn_<name>_grad(v, dy, s)   the input's gradient from dy and v, the value backward reads
 * where s is the op's one parameter (SwkAct.slope: relu's leaky slope, elu's alpha; unused by
 * the others). The rows take two pass-through arguments for the expanding macro.
 *
 * This header includes only <math.h>: CPE code (which has the athread interface alone) and
 * generated programs include it too. */
#ifndef SWNC_ACTIVATIONS_H
#define SWNC_ACTIVATIONS_H

#include <math.h>

/* clang-format off */
#define SWN_ACTIVATIONS(A, a, b) \
  A(a, b, relu,      OUT) \
  A(a, b, sigmoid,   OUT) \
  A(a, b, tanh,      OUT) \
  A(a, b, elu,       OUT) \
  A(a, b, relu6,     OUT) \
  A(a, b, swish,     IN) \
  A(a, b, hardswish, IN) \
  A(a, b, gelu,      IN) \
  A(a, b, hardsigmoid, OUT)
/* clang-format on */

/* A row's reads column as a number: SWN_READS_##reads */
enum { SWN_READS_OUT = 0, SWN_READS_IN = 1 };

typedef enum {
#define SWN_ACT_ID_(a, b, name, reads) SWN_ACT_##name,
  SWN_ACTIVATIONS(SWN_ACT_ID_, , )
#undef SWN_ACT_ID_
      SWN_ACTIVATION_COUNT
} SwnActivation;

/* e^x in float arithmetic alone, so that a loop of it vectorises (libm's expf is a call per
 * element: swish over EfficientNet-B0's largest activation took 56 ms of a 16-image step) and
 * every kernel set computes the same bits. Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2
 * (ln2 in two parts, so r is exact), e^r = 1 + r + r^2 p(r) with p of degree 5, and 2^n put
 * in the exponent's bits. Relative error below 2.5e-7 (2 ulp); below -87.34 it stays at
 * e^-87.34 (about FLT_MIN: no subnormals), from 88.38 it is infinity (a little early: 2^128 is
 * not a float), NaN for NaN. */
static inline float swn_exp(float x) {
  x = x < -87.33654f ? -87.33654f : x;
  x = x > 88.376262f ? 88.72284f : x;
  float n = floorf(x * 1.44269504088896341f + 0.5f);
  n = n == n ? n : 0; /* NaN: the polynomial keeps it; the conversion below must not see it */
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float er = p * r * r + r + 1.0f;
  union {
    int i;
    float f;
  } two_n = {.i = ((int)n + 127) << 23};
  return er * two_n.f;
}

/* ReLU, leaky with slope s. */
static inline float swn_relu(float x, float s) { return x > 0 ? x : s * x; }
static inline float swn_relu_grad(float y, float dy, float s) { return y > 0 ? dy : s * dy; }

/* Logistic sigmoid: y = 1 / (1 + e^-x); dy/dx = y (1 - y). */
static inline float swn_sigmoid(float x, float s) {
  (void)s;
  return 1.0f / (1.0f + swn_exp(-x));
}
static inline float swn_sigmoid_grad(float y, float dy, float s) {
  (void)s;
  return dy * y * (1.0f - y);
}

/* tanh; dy/dx = 1 - y^2. */
static inline float swn_tanh(float x, float s) {
  (void)s;
  return tanhf(x);
}
static inline float swn_tanh_grad(float y, float dy, float s) {
  (void)s;
  return dy * (1.0f - y * y);
}

/* ELU (Clevert et al.): y = x for x > 0, alpha (e^x - 1) otherwise (e^x - 1, not expm1, which
 * the CPEs lack, so that all kernel sets agree). With alpha >= 0, y > 0 exactly where x > 0,
 * and below dy/dx = alpha e^x = y + alpha. */
static inline float swn_elu(float x, float alpha) {
  return x > 0 ? x : alpha * (swn_exp(x) - 1.0f);
}
static inline float swn_elu_grad(float y, float dy, float alpha) {
  return y > 0 ? dy : dy * (y + alpha);
}

/* ReLU6 (MobileNet): min(max(x, 0), 6); the gradient passes where 0 < y < 6. */
static inline float swn_relu6(float x, float s) {
  (void)s;
  return x > 0 ? (x < 6 ? x : 6.0f) : 0.0f;
}
static inline float swn_relu6_grad(float y, float dy, float s) {
  (void)s;
  return y > 0 && y < 6 ? dy : 0.0f;
}

/* Swish with beta 1, also called SiLU (Ramachandran et al.; Elfwing et al.): y = x sigmoid(x);
 * dy/dx = sigmoid(x) (1 + x (1 - sigmoid(x))). Backward reads x. */
static inline float swn_swish(float x, float s) {
  (void)s;
  return x / (1.0f + swn_exp(-x));
}
static inline float swn_swish_grad(float x, float dy, float s) {
  (void)s;
  float sig = 1.0f / (1.0f + swn_exp(-x));
  return dy * sig * (1.0f + x * (1.0f - sig));
}

/* Hard swish (MobileNetV3, Howard et al.): y = x relu6(x + 3) / 6; dy/dx = 0 below -3, 1 above
 * 3, x / 3 + 1/2 between (at -3 and 3 too, as PyTorch). Backward reads x. */
static inline float swn_hardswish(float x, float s) {
  (void)s;
  float r = x + 3;
  return x * (r < 0 ? 0.0f : r > 6 ? 6.0f : r) / 6;
}
static inline float swn_hardswish_grad(float x, float dy, float s) {
  (void)s;
  return x < -3 ? 0.0f : x <= 3 ? dy * (x / 3 + 0.5f) : dy;
}

/* erf by Abramowitz and Stegun's 7.1.26 (|error| below 1.5e-7, a float's rounding near 1):
 * the CPEs' libm has expf but no erff. */
static inline float swn_erf(float x) {
  float a = fabsf(x), t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t +
                0.254829592f) *
               t;
  float y = 1.0f - poly * swn_exp(-a * a);
  return x < 0 ? -y : y;
}

/* GELU (Hendrycks and Gimpel), the erf form (not tanh's approximation): y = x Phi(x), Phi the
 * standard normal distribution; dy/dx = Phi(x) + x phi(x). Backward reads x. */
static inline float swn_gelu(float x, float s) {
  (void)s;
  return 0.5f * x * (1.0f + swn_erf(x * 0.70710678118654752f));
}
static inline float swn_gelu_grad(float x, float dy, float s) {
  (void)s;
  float cdf = 0.5f * (1.0f + swn_erf(x * 0.70710678118654752f));
  float pdf = 0.39894228040143268f * swn_exp(-0.5f * x * x);
  return dy * (cdf + x * pdf);
}

/* Hard sigmoid (MobileNetV3): y = relu6(x + 3) / 6; dy/dx = 1/6 where -3 < x < 3, which is
 * where 0 < y < 1 (as PyTorch: 0 at -3 and 3), so backward reads y. */
static inline float swn_hardsigmoid(float x, float s) {
  (void)s;
  float r = x + 3;
  return (r < 0 ? 0.0f : r > 6 ? 6.0f : r) / 6;
}
static inline float swn_hardsigmoid_grad(float y, float dy, float s) {
  (void)s;
  return y > 0 && y < 1 ? dy / 6 : 0.0f;
}

#endif
