/* Batch normalisation on the CPEs (args.h), a channel per task, with the host target's
 * arithmetic: double sums in the lanes of runtime/lanes.h (pieces are whole vectors, so the
 * sums are the host's bit for bit), the same float expressions. A channel's
 * data is batch runs of hw floats, c * hw apart; it streams through the LDM in pieces of up to
 * SW_STREAM_CHUNK floats: several whole images' runs in one strided transfer when hw is small,
 * else a part of one run. */
#include <math.h>

#include "args.h"
#include "cpe.h"
#include "lanes.h"

_Static_assert(SW_STREAM_CHUNK % SWK_LANES == 0, "a run cut into pieces sums as a whole");

/* A piece of channel ch's data: `images` runs from image n, floats [i, i + len) of each. */
typedef struct Piece {
  int n, images, i, len;
} Piece;

static bool next_piece(const SwBatchNormArgs *p, Piece *s) {
  if (p->hw <= SW_STREAM_CHUNK) {
    s->n = s->images ? s->n + s->images : 0, s->i = 0, s->len = p->hw;
    int per = SW_STREAM_CHUNK / p->hw;
    s->images = p->batch - s->n < per ? p->batch - s->n : per;
  } else {
    if (!s->images)
      s->n = 0, s->i = 0, s->images = 1;
    else if ((s->i += s->len) >= p->hw)
      s->n++, s->i = 0;
    s->len = p->hw - s->i < SW_STREAM_CHUNK ? p->hw - s->i : SW_STREAM_CHUNK;
  }
  return s->n < p->batch && s->images > 0;
}

static int64_t piece_at(const SwBatchNormArgs *p, int ch, const Piece *s) {
  return ((int64_t)s->n * p->c + ch) * p->hw + s->i;
}

static void get_piece(const SwBatchNormArgs *p, float *ldm, const float *base, int ch,
                      const Piece *s) {
  if (s->images == 1)
    cpe_get(ldm, base + piece_at(p, ch, s), 4 * s->len);
  else
    cpe_get_strided(ldm, base + piece_at(p, ch, s), 4 * s->images * s->len, 4 * s->len,
                    4 * (p->c - 1) * p->hw);
}

static void put_piece(const SwBatchNormArgs *p, float *base, const float *ldm, int ch,
                      const Piece *s) {
  if (s->images == 1)
    cpe_put(base + piece_at(p, ch, s), ldm, 4 * s->len);
  else
    cpe_put_strided(base + piece_at(p, ch, s), ldm, 4 * s->images * s->len, 4 * s->len,
                    4 * (p->c - 1) * p->hw);
}

static float get_one(const float *at) {
  float v;
  cpe_get(&v, at, 4);
  return v;
}

static void put_one(float *at, float v) { cpe_put(at, &v, 4); }

/* mean and 1/std of the batch (saving them and updating the running statistics), the saved
 * ones, or the running ones. */
static void statistics(const SwBatchNormArgs *p, int ch, float *x, float *mean, float *invstd) {
  if (p->recompute) {
    *mean = get_one(p->saved + ch);
    *invstd = get_one(p->saved + p->c + ch);
    return;
  }
  if (!p->train || p->frozen) {
    *mean = get_one(p->running + ch);
    *invstd = 1.0f / sqrtf(get_one(p->running + p->c + ch) + p->eps);
    if (p->train) /* frozen: saved as the batch's, for backward */
      put_one(p->saved + ch, *mean), put_one(p->saved + p->c + ch, *invstd);
    return;
  }
  double count = (double)p->batch * p->hw;
  SwkLanes s = {0}, ss = {0};
  for (Piece q = {0}; next_piece(p, &q);) {
    get_piece(p, x, p->x, ch, &q);
    for (int r = 0; r < q.images; r++) swk_lanes_add(&s, x + r * q.len, q.len);
  }
  double m = swk_lanes_total(&s) / count;
  for (Piece q = {0}; next_piece(p, &q);) {
    get_piece(p, x, p->x, ch, &q);
    for (int r = 0; r < q.images; r++) swk_lanes_add_squares(&ss, x + r * q.len, q.len, m);
  }
  cpe_count_flops((int64_t)(4 * count));
  double squares = swk_lanes_total(&ss), var = squares / count;
  double unbiased = count > 1 ? squares / (count - 1) : var;
  *mean = (float)m;
  *invstd = (float)(1.0 / sqrt(var + p->eps));
  put_one(p->saved + ch, *mean);
  put_one(p->saved + p->c + ch, *invstd);
  float *running = p->running + ch, *running_var = p->running + p->c + ch;
  put_one(running, p->momentum * get_one(running) + (1 - p->momentum) * (float)m);
  put_one(running_var, p->momentum * get_one(running_var) + (1 - p->momentum) * (float)unbiased);
}

static void forward(const SwBatchNormArgs *p, int ch, float *x) {
  float mean, invstd;
  statistics(p, ch, x, &mean, &invstd);
  float a = p->affine ? get_one(p->scale + ch) * invstd : invstd,
        b = p->affine ? get_one(p->shift + ch) : 0;
  for (Piece q = {0}; next_piece(p, &q);) {
    get_piece(p, x, p->x, ch, &q);
    for (int k = 0; k < q.images * q.len; k++) x[k] = (x[k] - mean) * a + b;
    cpe_count_flops(3LL * q.images * q.len);
    put_piece(p, p->y, x, ch, &q);
  }
}

static void backward(const SwBatchNormArgs *p, int ch, float *x, float *dy, float *dx) {
  float mean = get_one(p->saved + ch), invstd = get_one(p->saved + p->c + ch);
  double count = (double)p->batch * p->hw;
  SwkLanes dys = {0}, dyxs = {0};
  for (Piece q = {0}; next_piece(p, &q);) {
    get_piece(p, x, p->x, ch, &q);
    get_piece(p, dy, p->dy, ch, &q);
    for (int r = 0; r < q.images; r++)
      swk_lanes_add_products(&dys, &dyxs, dy + r * q.len, x + r * q.len, q.len, mean, invstd);
  }
  double sum_dy = swk_lanes_total(&dys), sum_dy_xhat = swk_lanes_total(&dyxs);
  cpe_count_flops((int64_t)(5 * count));
  if (p->affine) {
    put_one(p->dscale + ch, (float)sum_dy_xhat);
    put_one(p->dshift + ch, (float)sum_dy);
  }
  if (!p->dx) return;
  float gamma = p->affine ? get_one(p->scale + ch) : 1.0f;
  float k = gamma * invstd, mdy = p->frozen ? 0 : (float)(sum_dy / count),
        mdyx = p->frozen ? 0 : (float)(sum_dy_xhat / count); /* frozen: constants */
  for (Piece q = {0}; next_piece(p, &q);) {
    get_piece(p, x, p->x, ch, &q);
    get_piece(p, dy, p->dy, ch, &q);
    if (p->add) get_piece(p, dx, p->dx, ch, &q);
    for (int e = 0; e < q.images * q.len; e++) {
      float xhat = (x[e] - mean) * invstd, g = k * (dy[e] - mdy - xhat * mdyx);
      dx[e] = p->add ? dx[e] + g : g;
    }
    cpe_count_flops(7LL * q.images * q.len);
    put_piece(p, p->dx, dx, ch, &q);
  }
}

void sw_batchnorm(void *arg) {
  SwBatchNormArgs p;
  cpe_get(&p, arg, sizeof p);
  float *x = ldm_malloc(4 * SW_STREAM_CHUNK), *dy = ldm_malloc(4 * SW_STREAM_CHUNK);
  float *dx = ldm_malloc(4 * SW_STREAM_CHUNK);
  for (int ch = _MYID; ch < p.c; ch += 64) {
    if (p.backward)
      backward(&p, ch, x, dy, dx);
    else
      forward(&p, ch, x);
  }
  ldm_free(dx, 4 * SW_STREAM_CHUNK);
  ldm_free(dy, 4 * SW_STREAM_CHUNK);
  ldm_free(x, 4 * SW_STREAM_CHUNK);
}
