/* Softmax with cross-entropy on the CPEs (args.h), an image per task, with the host target's
 * arithmetic (expf, double sums). The loss is the sum of every CPE's images' terms, reduced
 * over the mesh in a fixed order (cpe_mesh_sum); CPE 0 writes it. */
#include <float.h>
#include <math.h>

#include "args.h"
#include "cpe.h"
#include "softmax_loss.h"

static double image_loss(const SwSoftmaxArgs *p, int n, float *s, float *q) {
  int32_t label;
  cpe_get(s, p->scores + (int64_t)n * p->classes, 4 * p->classes);
  cpe_get(&label, p->labels + n, 4);
  float max = s[0];
  for (int k = 1; k < p->classes; k++) max = s[k] > max ? s[k] : max;
  double sum = 0, shifted = 0;
  for (int k = 0; k < p->classes; k++) sum += q[k] = expf(s[k] - max);
  for (int k = 0; k < p->classes; k++) q[k] = (float)(q[k] / sum);
  if (p->label_smoothing != 0)
    for (int k = 0; k < p->classes; k++) shifted += s[k] - max;
  cpe_put(p->prob + (int64_t)n * p->classes, q, 4 * p->classes);
  cpe_count_flops(24LL * p->classes); /* exp: about 20 operations */
  return swn_softmax_image_loss(q[label], log(sum), shifted / p->classes, p->label_smoothing);
}

static void image_gradient(const SwSoftmaxArgs *p, int n, float *q, float *d) {
  int32_t label;
  int64_t at = (int64_t)n * p->classes;
  cpe_get(q, p->prob + at, 4 * p->classes);
  cpe_get(&label, p->labels + n, 4);
  if (p->add) cpe_get(d, p->dscores + at, 4 * p->classes);
  float k = p->loss_weight / (float)p->batch;
  for (int c = 0; c < p->classes; c++) {
    float g = (q[c] - swn_softmax_target(c, label, p->label_smoothing, p->classes)) * k;
    d[c] = p->add ? d[c] + g : g;
  }
  cpe_count_flops(3LL * p->classes);
  cpe_put(p->dscores + at, d, 4 * p->classes);
}

void sw_softmax_loss(void *arg) {
  SwSoftmaxArgs p;
  cpe_get(&p, arg, sizeof p);
  float *a = ldm_malloc(4 * SW_SOFTMAX_CLASSES), *b = ldm_malloc(4 * SW_SOFTMAX_CLASSES);
  double total = 0;
  for (int n = _MYID; n < p.batch; n += 64) {
    if (p.backward)
      image_gradient(&p, n, a, b);
    else
      total += image_loss(&p, n, a, b);
  }
  if (!p.backward) {
    total = cpe_mesh_sum(total);
    float loss = (float)(total / p.batch) * p.loss_weight;
    if (_MYID == 0) cpe_put(p.loss, &loss, 4);
  }
  ldm_free(b, 4 * SW_SOFTMAX_CLASSES);
  ldm_free(a, 4 * SW_SOFTMAX_CLASSES);
}
