/* Local response normalisation across channels on the CPEs (args.h), with the host target's
 * arithmetic in its order (targets/host/lrn.c), so results match exactly:
 *   scale_c = k + alpha / size * sum_{c' in window(c)} x_c'^2,   y_c = x_c * scale_c^-beta
 *   dx_c = dy_c * scale_c^-beta - 2 alpha beta / size * x_c * sum_{c' in window(c)} dy_c' y_c' / scale_c'
 * A task is `pixels` pixels of one image: each array's c rows of them come in one strided get
 * (a block per channel) and leave in one strided put. */
#include "args.h"
#include "cpe.h"
#include "lrn_power.h"

typedef struct Task {
  int64_t at; /* offset of the task's first element: image n, channel 0, its first pixel */
  int n;      /* pixels */
} Task;

static Task task_of(const SwLrnArgs *p, int64_t t) {
  int64_t per_image = (p->hw + p->pixels - 1) / p->pixels, image = t / per_image;
  int first = (int)(t % per_image) * p->pixels;
  Task k = {image * p->c * p->hw + first, p->hw - first < p->pixels ? p->hw - first : p->pixels};
  return k;
}

/* The task's c rows of n pixels of `a`, packed in the LDM (c x n floats). */
static void get_rows(const SwLrnArgs *p, Task k, float *ldm, const float *a) {
  int bytes = 4 * p->c * k.n;
  if (k.n == p->hw)
    cpe_get(ldm, a + k.at, bytes);
  else
    cpe_get_strided(ldm, a + k.at, bytes, 4 * k.n, 4 * (p->hw - k.n));
}

static void put_rows(const SwLrnArgs *p, Task k, float *a, const float *ldm) {
  int bytes = 4 * p->c * k.n;
  if (k.n == p->hw)
    cpe_put(a + k.at, ldm, bytes);
  else
    cpe_put_strided(a + k.at, ldm, bytes, 4 * k.n, 4 * (p->hw - k.n));
}

static void window(const SwLrnArgs *p, int c, int *lo, int *hi) {
  int half = (p->size - 1) / 2;
  *lo = c - half < 0 ? 0 : c - half, *hi = c + half >= p->c ? p->c - 1 : c + half;
}

static void forward_task(const SwLrnArgs *p, Task k, float *x, float *s) {
  float a = p->alpha / (float)p->size;
  get_rows(p, k, x, p->x);
  for (int c = 0; c < p->c; c++) {
    int lo, hi;
    window(p, c, &lo, &hi);
    float *sc = s + c * k.n;
    for (int i = 0; i < k.n; i++) sc[i] = 0;
    for (int j = lo; j <= hi; j++) {
      const float *xj = x + j * k.n;
      for (int i = 0; i < k.n; i++) sc[i] += xj[i] * xj[i];
    }
    for (int i = 0; i < k.n; i++) sc[i] = p->k + a * sc[i];
  }
  put_rows(p, k, p->scale, s);
  for (int e = 0; e < p->c * k.n; e++) x[e] = x[e] * swn_lrn_power(s[e], p->beta); /* y, over x */
  put_rows(p, k, p->y, x);
  cpe_count_flops((int64_t)p->c * k.n * (2 * p->size + 10));
}

/* Buffers: x, scale, dy, r (y in, then dy y / scale), dx (the old one when adding). */
static void backward_task(const SwLrnArgs *p, Task k, float *const b[5]) {
  float *x = b[0], *s = b[1], *dy = b[2], *r = b[3], *dx = b[4];
  float coeff = 2.0f * p->alpha * p->beta / (float)p->size;
  get_rows(p, k, x, p->x), get_rows(p, k, s, p->scale_in), get_rows(p, k, dy, p->dy);
  get_rows(p, k, r, p->y_in);
  if (p->add) get_rows(p, k, dx, p->dx);
  for (int e = 0; e < p->c * k.n; e++) r[e] = dy[e] * r[e] / s[e];
  for (int c = 0; c < p->c; c++) {
    int lo, hi;
    window(p, c, &lo, &hi);
    for (int i = 0; i < k.n; i++) {
      float acc = 0;
      for (int j = lo; j <= hi; j++) acc += r[j * k.n + i];
      int e = c * k.n + i;
      float g = dy[e] * swn_lrn_power(s[e], p->beta) - coeff * x[e] * acc;
      dx[e] = p->add ? dx[e] + g : g;
    }
  }
  put_rows(p, k, p->dx, dx);
  cpe_count_flops((int64_t)p->c * k.n * (2 * p->size + 10));
}

void sw_lrn(void *arg) {
  SwLrnArgs p;
  cpe_get(&p, arg, sizeof p);
  int buffers = p.backward ? 5 : 2, floats = p.c * p.pixels;
  float *b[5];
  for (int i = 0; i < buffers; i++) b[i] = ldm_malloc(4 * floats);
  int64_t tasks = (int64_t)p.batch * ((p.hw + p.pixels - 1) / p.pixels);
  for (int64_t t = _MYID; t < tasks; t += 64) {
    if (p.backward)
      backward_task(&p, task_of(&p, t), b);
    else
      forward_task(&p, task_of(&p, t), b[0], b[1]);
  }
  for (int i = buffers - 1; i >= 0; i--) ldm_free(b[i], 4 * floats);
}
