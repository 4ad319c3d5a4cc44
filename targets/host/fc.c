/* Fully connected: Y (B x out) = X (B x in) W^T + b, W stored out x in. Threads split the
 * batch rows (forward, dX) or the output rows of dW, so no reduction across threads. */
#include <cblas.h>
#include <omp.h>
#include <string.h>

#include "kernels.h"

size_t swk_fc_workspace(const SwkFc *p) {
  (void)p;
  return 0;
}

/* Rows [from, to) of `n` for thread t of nt. */
static void split(int n, int t, int nt, int *from, int *to) {
  *from = (int)((int64_t)n * t / nt);
  *to = (int)((int64_t)n * (t + 1) / nt);
}

void swk_fc_forward(const SwkFc *p, int batch, const float *x, const float *w, const float *b,
                    float *y) {
#pragma omp parallel
  {
    int from, to;
    split(batch, omp_get_thread_num(), omp_get_num_threads(), &from, &to);
    if (to > from) {
      if (p->bias)
        for (int n = from; n < to; n++)
          memcpy(y + (size_t)n * p->out, b, sizeof(float) * (size_t)p->out);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, to - from, p->out, p->in, 1.0f,
                  x + (size_t)from * p->in, p->in, w, p->in, p->bias ? 1.0f : 0.0f,
                  y + (size_t)from * p->out, p->out);
    }
  }
}

void swk_fc_backward(const SwkFc *p, int batch, const float *x, const float *w, const float *dy,
                     float *dx, bool dx_add, float *dw, float *db, float *ws) {
  (void)ws;
#pragma omp parallel
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads(), from, to;
    split(p->out, t, nt, &from, &to); /* dW rows and db entries of this thread */
    if (to > from) {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, to - from, p->in, batch, 1.0f, dy + from,
                  p->out, x, p->in, 0.0f, dw + (size_t)from * p->in, p->in);
      if (db)
        for (int o = from; o < to; o++) {
          float s = 0;
          for (int n = 0; n < batch; n++) s += dy[(size_t)n * p->out + o];
          db[o] = s;
        }
    }
    if (dx) {
      split(batch, t, nt, &from, &to);
      if (to > from)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, to - from, p->in, p->out, 1.0f,
                    dy + (size_t)from * p->out, p->out, w, p->in, dx_add ? 1.0f : 0.0f,
                    dx + (size_t)from * p->in, p->in);
    }
  }
}
