/* Sums and copies of 2-D parts on the CPEs (args.h): concatenations, residual sums and their
 * gradients. A task is up to SW_STREAM_CHUNK floats of one row of one part; the tasks of all
 * parts are dealt round-robin to the 64 CPEs. Sources are added left to right, as the host
 * target's kernels add them, so results match exactly; in 4-wide vectors. */
#include "args.h"
#include "cpe.h"

static int64_t chunks_per_row(const SwSumPart *q) {
  return (q->cols + SW_STREAM_CHUNK - 1) / SW_STREAM_CHUNK;
}

/* acc[i] = first[i] + second[i], in 4-wide vectors over the whole vectors, then the rest. */
static void add_into(float *acc, const float *first, const float *second, int n) {
  int vectors = n / 4 * 4;
  for (int i = 0; i < vectors; i += 4) {
    floatv4 x, y;
    simd_load(x, first + i), simd_load(y, second + i);
    x += y;
    simd_store(x, acc + i);
  }
  for (int i = vectors; i < n; i++) acc[i] = first[i] + second[i];
  cpe_count_vector_flops(vectors);
  cpe_count_flops(n - vectors);
}

static void sum_task(const SwSumPart *q, int64_t row, int64_t col, float *acc, float *in) {
  int n = (int)(q->cols - col < SW_STREAM_CHUNK ? q->cols - col : SW_STREAM_CHUNK);
  int64_t from = row * q->src_ld + col;
  cpe_get(acc, q->src[0] + from, 4 * n);
  for (int s = 1; s < q->sources; s++) {
    cpe_get(in, q->src[s] + from, 4 * n);
    add_into(acc, acc, in, n);
  }
  float *dst = q->dst + row * q->dst_ld + col;
  if (q->add) {
    cpe_get(in, dst, 4 * n);
    add_into(acc, in, acc, n);
  }
  cpe_put(dst, acc, 4 * n);
}

void sw_sum(void *arg) {
  SwSumArgs p;
  cpe_get(&p, arg, sizeof p);
  float *acc = ldm_malloc(4 * SW_STREAM_CHUNK), *in = ldm_malloc(4 * SW_STREAM_CHUNK);
  int64_t before = 0; /* tasks of the parts before this one */
  for (int k = 0; k < p.parts; k++) {
    const SwSumPart *q = &p.part[k];
    int64_t per_row = chunks_per_row(q), tasks = q->rows * per_row;
    int64_t t = _MYID - before % 64;
    if (t < 0) t += 64;
    for (; t < tasks; t += 64) sum_task(q, t / per_row, t % per_row * SW_STREAM_CHUNK, acc, in);
    before += tasks;
  }
  ldm_free(in, 4 * SW_STREAM_CHUNK);
  ldm_free(acc, 4 * SW_STREAM_CHUNK);
}
