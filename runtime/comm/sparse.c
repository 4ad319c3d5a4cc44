/* Coarse-grained sparse gradient exchange (GradientFlow's sparse communication, with Deep
 * Gradient Compression's momentum correction and warm-up; docs/runtime.md, "Sparse gradients").
 *
 * Per bucket: u = momentum u + g (momentum correction: the velocity, not the raw gradient, is
 * what accumulates), r += u; the L1 norm of r per chunk is summed over the ranks (one small
 * allreduce, bitwise equal everywhere), so every rank picks the same top chunks; those are packed
 * into one dense array and allreduced with the usual algorithms, and r restarts at 0 there. The
 * update then applies no momentum of its own: what it moves a weight by in total is what momentum
 * SGD on the dense sum would have, delayed until its chunk is sent (the sum over the ranks of
 * their velocities is the velocity of the summed gradients). Unlike DGC, u is not cleared where a
 * chunk was sent (its "momentum factor masking"): that would drop the momentum of chunks sent
 * every few iterations, which at 10% density slowed LeNet by two points of accuracy. */
#include "sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

void swn_sparse_open(SwnSparse *s, int64_t words, int64_t chunk, float momentum, float density,
                     int64_t warmup) {
  int64_t chunks = (words + chunk - 1) / chunk;
  *s = (SwnSparse){
      .words = words, .chunk = chunk, .momentum = momentum, .density = density, .warmup = warmup};
  s->residual = swn_alloc(sizeof(float) * (size_t)words);
  memset(s->residual, 0, sizeof(float) * (size_t)words);
  if (momentum != 0) {
    s->velocity = swn_alloc(sizeof(float) * (size_t)words);
    memset(s->velocity, 0, sizeof(float) * (size_t)words);
  }
  s->norms = swn_alloc(sizeof(float) * (size_t)chunks);
  s->scratch = swn_alloc(sizeof(float) * (size_t)chunks);
  s->chosen = swn_alloc(sizeof(int64_t) * (size_t)chunks);
  s->packed = swn_alloc(sizeof(float) * (size_t)words);
}

void swn_sparse_close(SwnSparse *s) {
  free(s->residual), free(s->velocity), free(s->norms), free(s->scratch), free(s->chosen);
  free(s->packed);
  *s = (SwnSparse){0};
}

float swn_sparse_density(float density, int64_t warmup, int64_t epoch) {
  if (epoch >= warmup) return density;
  return powf(density, (float)(epoch + 1) / (float)(warmup + 1));
}

/* r += (u = momentum u + g), and each chunk's L1 norm of r. */
static void accumulate(SwnSparse *s, const float *g, int64_t offset, int64_t n) {
  float *r = s->residual + offset, *u = s->velocity ? s->velocity + offset : NULL;
  for (int64_t k = 0, at = 0; at < n; k++, at += s->chunk) {
    int64_t end = at + s->chunk < n ? at + s->chunk : n;
    float norm = 0;
    for (int64_t i = at; i < end; i++) {
      r[i] += u ? (u[i] = s->momentum * u[i] + g[i]) : g[i];
      norm += fabsf(r[i]);
    }
    s->norms[k] = isnan(norm) ? INFINITY : norm; /* a NaN is sent (and stops training) */
  }
}

static void swap(float *a, float *b) {
  float t = *a;
  *a = *b, *b = t;
}

static float median3(float a, float b, float c) {
  return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

/* The value at rank k (0: the largest) of a[0..n), which it reorders: quickselect with a
 * three-way partition, linear also when many norms are equal (chunks of zeros). */
static float kth_largest(float *a, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n;
  for (;;) {
    float pivot = median3(a[lo], a[lo + (hi - lo) / 2], a[hi - 1]);
    int64_t gt = lo, i = lo, lt = hi; /* [lo, gt) > pivot, [gt, i) == pivot, [lt, hi) < pivot */
    while (i < lt) {
      if (a[i] > pivot)
        swap(&a[i++], &a[gt++]);
      else if (a[i] < pivot)
        swap(&a[i], &a[--lt]);
      else
        i++;
    }
    if (k < gt)
      hi = gt;
    else if (k >= lt)
      lo = lt;
    else
      return pivot;
  }
}

/* The `keep` chunks of largest norm, ties to the lower index, in increasing order. */
static int64_t choose(SwnSparse *s, int64_t chunks, int64_t keep) {
  int64_t n = 0;
  if (keep >= chunks) {
    for (int64_t k = 0; k < chunks; k++) s->chosen[n++] = k;
    return n;
  }
  memcpy(s->scratch, s->norms, sizeof(float) * (size_t)chunks);
  float least = kth_largest(s->scratch, chunks, keep - 1);
  int64_t above = 0;
  for (int64_t k = 0; k < chunks; k++) above += s->norms[k] > least;
  int64_t ties = keep - above;
  for (int64_t k = 0; k < chunks; k++)
    if (s->norms[k] > least || (s->norms[k] == least && ties-- > 0)) s->chosen[n++] = k;
  return n;
}

/* Where the j-th chosen chunk lies in a bucket of n gradients: its start, and its length. */
static int64_t chosen_span(const SwnSparse *s, int64_t j, int64_t n, int64_t *len) {
  int64_t at = s->chosen[j] * s->chunk;
  *len = at + s->chunk < n ? s->chunk : n - at;
  return at;
}

void swn_sparse_allreduce(SwnSparse *s, SwnComm *c, float *grad, int64_t offset, int64_t n,
                          float density) {
  int64_t chunks = (n + s->chunk - 1) / s->chunk;
  int64_t keep = (int64_t)ceil((double)density * (double)chunks);
  keep = keep < 1 ? 1 : keep > chunks ? chunks : keep;
  accumulate(s, grad, offset, n);
  if (keep < chunks) swn_allreduce(c, s->norms, chunks, SWN_ALLREDUCE_AUTO);
  int64_t nchosen = choose(s, chunks, keep), packed = 0;
  float *r = s->residual + offset;
  for (int64_t j = 0, len; j < nchosen; j++) {
    int64_t at = chosen_span(s, j, n, &len);
    memcpy(s->packed + packed, r + at, sizeof(float) * (size_t)len);
    memset(r + at, 0, sizeof(float) * (size_t)len);
    packed += len;
  }
  swn_allreduce(c, s->packed, packed, SWN_ALLREDUCE_AUTO);
  memset(grad, 0, sizeof(float) * (size_t)n);
  for (int64_t j = 0, from = 0, len; j < nchosen; j++) {
    int64_t at = chosen_span(s, j, n, &len);
    memcpy(grad + at, s->packed + from, sizeof(float) * (size_t)len);
    from += len;
  }
  s->chunks_sent += nchosen, s->chunks_seen += chunks;
}
