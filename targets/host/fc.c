/* Fully connected: Y (B x out) = X (B x in) W^T + b, W stored out x in. Each product is split
 * over threads by the columns or rows of what it writes, never by images: with the small
 * batches of the large networks a split by images would have every thread stream all of W.
 * No reduction across threads, so results do not depend on the thread count. */
#include <omp.h>
#include <string.h>

#include "gemm.h"
#include "kernels.h"
#include "workspace.h"

size_t swk_fc_workspace(const SwkFc *p) {
  (void)p;
  return host_fc_workspace(swk_threads());
}

/* Thread t of nt's share [from, to) of n, in whole vectors of 16 but the last. */
static void split(int n, int t, int nt, int *from, int *to) {
  int units = (n + 15) / 16;
  *from = (int)((int64_t)units * t / nt) * 16;
  *to = (int)((int64_t)units * (t + 1) / nt) * 16;
  if (*to > n) *to = n;
  if (*from > n) *from = n;
}

static float *pack_area(float *ws) {
  return ws + (size_t)HOST_GEMM_PACK_FLOATS * omp_get_thread_num();
}

void swk_fc_forward(const SwkFc *p, int batch, const float *x, const float *w, const float *b,
                    float *y, float *ws) {
#pragma omp parallel num_threads(swk_threads())
  {
    int from, to; /* output columns */
    split(p->out, omp_get_thread_num(), omp_get_num_threads(), &from, &to);
    if (to > from) {
      if (p->bias)
        for (int n = 0; n < batch; n++)
          memcpy(y + (size_t)n * p->out + from, b + from, sizeof(float) * (size_t)(to - from));
      host_sgemm(false, true, batch, to - from, p->in, x, p->in, w + (size_t)from * p->in, p->in,
                 p->bias ? 1.0f : 0.0f, y + from, p->out, pack_area(ws));
    }
  }
}

void swk_fc_backward(const SwkFc *p, int batch, const float *x, const float *w, const float *dy,
                     float *dx, bool dx_add, float *dw, float *db, float grad_scale,
                     float bias_grad_scale, float grad_keep, float *ws) {
#pragma omp parallel num_threads(swk_threads())
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads(), from, to;
    split(p->out, t, nt, &from, &to); /* dW rows and db entries */
    if (to > from) {
      host_gemm_scaled(to - from, p->in, batch, grad_scale, host_stored(dy + from, p->out, true),
                       host_stored(x, p->in, false), grad_keep, dw + (size_t)from * p->in, p->in,
                       pack_area(ws));
      if (db)
        for (int o = from; o < to; o++) {
          float s = 0;
          for (int n = 0; n < batch; n++) s += dy[(size_t)n * p->out + o];
          db[o] = swk_gradient_store(db[o], s, bias_grad_scale, grad_keep);
        }
    }
    split(p->in, t, nt, &from, &to); /* dX columns */
    if (dx && to > from)
      host_sgemm(false, false, batch, to - from, p->out, dy, p->out, w + from, p->in,
                 dx_add ? 1.0f : 0.0f, dx + from, p->in, pack_area(ws));
  }
}
