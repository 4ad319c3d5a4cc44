/* Element-wise kernels on the CPEs: the data is cut into chunks of SW_STREAM_CHUNK floats
 * (4 KB DMA transfers), dealt round-robin to the 64 CPEs; each CPE gets its chunk's operands, computes,
 * and puts the results back. The sums, scalings, optimizer steps and ReLU run in 4-wide
 * vectors, the other activations and dropout (exp, tanh, a hash) in scalar code. Also the
 * per-row sums of the bias gradients. */
#include <math.h>
#include <stdbool.h>

#include "args.h"
#include "cpe.h"
#include "rng.h"

typedef struct Chunk {
  float *a, *b, *y, *z;
  int n;
} Chunk;

static bool reads_y(const SwStreamArgs *p) {
  return (p->add && p->op != SW_DROPOUT) || p->op == SW_SUM_INTO || p->op == SW_SCALE ||
         p->op == SW_SGD || p->op == SW_SGD_APPLY || p->op == SW_EASGD;
}
static bool has_b(SwStreamOp op) { return op == SW_ACTIVATION_GRAD || op == SW_EASGD; }
static bool has_a(SwStreamOp op) { return op != SW_SCALE && op != SW_SGD_APPLY; }
static bool has_z(SwStreamOp op) { return sw_stream_puts(op) == 2; }

/* The activation's forward and gradient (runtime/activations.h's rows). */
static float activation(const SwStreamArgs *p, float x) {
  switch ((SwnActivation)p->act) {
#define FORWARD(unused_a, unused_b, name, reads)                                                   \
  case SWN_ACT_##name: return swn_##name(x, p->s0);
    SWN_ACTIVATIONS(FORWARD, , )
#undef FORWARD
  case SWN_ACTIVATION_COUNT: break;
  }
  return 0;
}
static float gradient(const SwStreamArgs *p, float v, float dy) {
  switch ((SwnActivation)p->act) {
#define GRADIENT(unused_a, unused_b, name, reads)                                                  \
  case SWN_ACT_##name: return swn_##name##_grad(v, dy, p->s0);
    SWN_ACTIVATIONS(GRADIENT, , )
#undef GRADIENT
  case SWN_ACTIVATION_COUNT: break;
  }
  return 0;
}

/* Dropout's mask for element `at` of the whole array (images of per_image elements). */
static bool kept(const SwStreamArgs *p, int64_t at) {
  return swn_dropout_keep(p->seed, p->layer, p->s0, p->iteration,
                          p->first_image + (uint64_t)(at / p->per_image), at % p->per_image);
}

/* The sums, scalings, optimizer steps and ReLU in 4-wide vectors over the chunk's whole
 * vectors, with the scalar code's expressions (the same results; ReLU's by selects on the
 * sign: a leaky slope's product where the input is below 0, or the output at or below 0 for
 * the gradient); the count of elements done. The other stream ops run in compute(). */
static int vector_arithmetic(const SwStreamArgs *p, Chunk *c) {
  if (!sw_stream_vectorised(p->op, p->act)) return 0;
  int n = c->n / 4 * 4;
  floatv4 s0 = {p->s0, p->s0, p->s0, p->s0}, s1 = {p->s1, p->s1, p->s1, p->s1},
          s2 = {p->s2, p->s2, p->s2, p->s2};
  for (int i = 0; i < n; i += 4) {
    floatv4 a = {0}, b = {0}, y = {0}, z = {0};
    if (reads_y(p)) simd_load(y, c->y + i);
    if (has_a(p->op)) simd_load(a, c->a + i);
    if (has_b(p->op)) simd_load(b, c->b + i);
    if (has_z(p->op)) simd_load(z, c->z + i);
    switch (p->op) {
    case SW_ACTIVATION: y = simd_vsellt(a, s0 * a, a); break; /* ReLU */
    case SW_ACTIVATION_GRAD: { /* ReLU's; a: the output, b: its gradient */
      floatv4 g = simd_vselle(a, s0 * b, b);
      y = p->add ? y + g : g;
      break;
    }
    case SW_SUM_INTO: y += a; break;
    case SW_SCALE: y *= s0; break;
    case SW_SGD: z = s2 * z + s0 * (a + s1 * y), y -= z; break;
    case SW_SGD_APPLY: z += s0 * s1 * y, y -= z; break;
    case SW_EASGD: {
      floatv4 center = z;
      y += s1 * (a - center);
      z = center + s0 * s1 * (b - s2 * center);
      break;
    }
    case SW_DROPOUT: /* not vectorised */
    case SW_DROPOUT_GRAD:
    case SW_ROW_BIAS_GRAD: break;
    }
    simd_store(y, c->y + i);
    if (has_z(p->op)) simd_store(z, c->z + i);
  }
  cpe_count_vector_flops(4LL * n);
  return n;
}

static void compute(const SwStreamArgs *p, Chunk *c, int64_t first) {
  float *a = c->a, *b = c->b, *y = c->y, *z = c->z;
  float keep_scale = 1.0f / (1.0f - p->s0); /* dropout's */
  int done = vector_arithmetic(p, c);
  for (int i = done; i < c->n; i++) {
    switch (p->op) {
    case SW_ACTIVATION: y[i] = activation(p, a[i]); break;
    case SW_ACTIVATION_GRAD: { /* a: what backward reads, b: dy */
      float g = gradient(p, a[i], b[i]);
      y[i] = p->add ? y[i] + g : g;
      break;
    }
    case SW_SUM_INTO: y[i] += a[i]; break;
    case SW_SCALE: y[i] *= p->s0; break;
    case SW_SGD: /* y: w, a: g, z: v; s0 lr, s1 decay, s2 momentum */
      z[i] = p->s2 * z[i] + p->s0 * (a[i] + p->s1 * y[i]);
      y[i] -= z[i];
      break;
    case SW_SGD_APPLY: /* y: w, z: v; s0 lr, s1 decay */
      z[i] += p->s0 * p->s1 * y[i];
      y[i] -= z[i];
      break;
    case SW_DROPOUT: y[i] = !p->train ? a[i] : kept(p, first + i) ? a[i] * keep_scale : 0.0f; break;
    case SW_DROPOUT_GRAD: {
      float g = kept(p, first + i) ? a[i] * keep_scale : 0.0f;
      y[i] = p->add ? y[i] + g : g;
      break;
    }
    case SW_EASGD: { /* a: w, b: sum, y: g, z: center; s0 eta, s1 rho, s2 ranks */
      float center = z[i];
      y[i] += p->s1 * (a[i] - center);
      z[i] = center + p->s0 * p->s1 * (b[i] - p->s2 * center);
      break;
    }
    case SW_ROW_BIAS_GRAD: break; /* row_sums() */
    }
  }
  cpe_count_flops(4LL * (c->n - done));
}

static void elementwise(const SwStreamArgs *p) {
  float *buf = ldm_malloc(4 * sizeof(float) * SW_STREAM_CHUNK);
  Chunk c = {buf, buf + SW_STREAM_CHUNK, buf + 2 * SW_STREAM_CHUNK, buf + 3 * SW_STREAM_CHUNK, 0};
  for (int64_t first = (int64_t)_MYID * SW_STREAM_CHUNK; first < p->n;
       first += 64 * SW_STREAM_CHUNK) {
    c.n = (int)(p->n - first < SW_STREAM_CHUNK ? p->n - first : SW_STREAM_CHUNK);
    int bytes = 4 * c.n;
    if (has_a(p->op)) cpe_get(c.a, p->a + first, bytes);
    if (has_b(p->op)) cpe_get(c.b, p->b + first, bytes);
    if (reads_y(p)) cpe_get(c.y, p->y + first, bytes);
    if (has_z(p->op)) cpe_get(c.z, p->z + first, bytes);
    compute(p, &c, first);
    cpe_put(p->y + first, c.y, bytes);
    if (has_z(p->op)) cpe_put(p->z + first, c.z, bytes);
  }
  ldm_free(buf, 4 * sizeof(float) * SW_STREAM_CHUNK);
}

/* CPE k sums rows k, k + 64, ... over all images, a row at a time (up to SW_STREAM_CHUNK
 * floats per transfer). */
static void row_sums(const SwStreamArgs *p) {
  float *buf = ldm_malloc(sizeof(float) * SW_STREAM_CHUNK);
  for (int64_t r = _MYID; r < p->rows; r += 64) {
    float sum = 0, old = 0;
    for (int64_t i = 0; i < p->images; i++)
      for (int64_t c0 = 0; c0 < p->cols; c0 += SW_STREAM_CHUNK) {
        int n = (int)(p->cols - c0 < SW_STREAM_CHUNK ? p->cols - c0 : SW_STREAM_CHUNK);
        cpe_get(buf, p->a + i * p->image_stride + r * p->cols + c0, 4 * n);
        for (int k = 0; k < n; k++) sum += buf[k];
      }
    cpe_count_flops(p->images * p->cols);
    if (p->add) cpe_get(&old, p->y + r, 4);
    sum += old;
    cpe_put(p->y + r, &sum, 4);
  }
  ldm_free(buf, sizeof(float) * SW_STREAM_CHUNK);
}

void sw_stream(void *arg) {
  SwStreamArgs p;
  cpe_get(&p, arg, sizeof p);
  if (p.op == SW_ROW_BIAS_GRAD)
    row_sums(&p);
  else
    elementwise(&p);
}
