/* IEEE half precision for communication (docs/runtime.md, "Compressed gradients"): conversions
 * with round to nearest even in portable integer code (no F16C or NEON needed; one element at a
 * time: gcc at -O2 does not vectorise the branches), and MPI's sum of halves. */
#include "half.h"

#include <string.h>

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Round to nearest even: normal results add half an ulp of the 13 dropped bits (minus one unless
 * the kept bit is odd) and rebias the exponent; results below 2^-14 (subnormal halves) come out
 * of a float addition that aligns them to the 2^-24 grid, which rounds to nearest even itself;
 * from 65520 on, the result is infinity, and NaN stays NaN. */
uint16_t swn_half_of(float f) {
  uint32_t x = bits_of(f), sign = x & 0x80000000u;
  x ^= sign;
  uint32_t h;
  if (x >= 0x47800000u) /* >= 2^16: infinity (or NaN) */
    h = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  else if (x < 0x38800000u) /* < 2^-14 */
    h = bits_of(float_of(x) + 0.5f) - bits_of(0.5f);
  else
    h = (x + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u)) >> 13;
  return (uint16_t)(h | (sign >> 16));
}

float swn_float_of_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, x = (uint32_t)(h & 0x7fffu) << 13;
  uint32_t exponent = x & 0x0f800000u;
  x += (uint32_t)(127 - 15) << 23;
  if (exponent == 0x0f800000u) /* infinity or NaN */
    x += (uint32_t)(128 - 16) << 23;
  else if (exponent == 0) /* zero or subnormal: renormalise through a float subtraction */
    x = bits_of(float_of(x + (1u << 23)) - float_of(113u << 23));
  return float_of(x | sign);
}

void swn_halves_of(int64_t n, const float *from, uint16_t *to) {
  for (int64_t i = 0; i < n; i++) to[i] = swn_half_of(from[i]);
}

void swn_floats_of(int64_t n, const uint16_t *from, float *to) {
  for (int64_t i = 0; i < n; i++) to[i] = swn_float_of_half(from[i]);
}

void swn_add_halves(int64_t n, const uint16_t *from, float *into) {
  for (int64_t i = 0; i < n; i++) into[i] += swn_float_of_half(from[i]);
}

void swn_round_to_half(int64_t n, float *x, float times) {
  for (int64_t i = 0; i < n; i++) x[i] = swn_float_of_half(swn_half_of(x[i])) * times;
}

/* MPI_Allreduce's operation on halves: each partial sum is added in float and rounded again. */
static void sum_halves(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const uint16_t *a = in;
  uint16_t *b = inout;
  for (int i = 0; i < *len; i++)
    b[i] = swn_half_of(swn_float_of_half(a[i]) + swn_float_of_half(b[i]));
}

MPI_Op swn_half_sum_op(void) {
  MPI_Op op;
  MPI_Op_create(sum_halves, 1, &op);
  return op;
}
