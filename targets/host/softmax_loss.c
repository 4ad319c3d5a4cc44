/* Softmax with cross-entropy (label smoothing: softmax_loss.h), averaged over the batch and
 * scaled by loss_weight. */
#include <float.h>
#include <math.h>

#include "kernels.h"
#include "softmax_loss.h"

void swk_softmax_loss_forward(const SwkSoftmaxLoss *p, int batch, const float *scores,
                              const int32_t *labels, float *prob, float *loss) {
  double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (int n = 0; n < batch; n++) {
    const float *s = scores + (size_t)n * p->classes;
    float *q = prob + (size_t)n * p->classes;
    float max = s[0];
    for (int k = 1; k < p->classes; k++) max = s[k] > max ? s[k] : max;
    double sum = 0, shifted = 0;
    for (int k = 0; k < p->classes; k++) sum += q[k] = expf(s[k] - max);
    for (int k = 0; k < p->classes; k++) q[k] = (float)(q[k] / sum);
    if (p->label_smoothing != 0)
      for (int k = 0; k < p->classes; k++) shifted += s[k] - max;
    total +=
        swn_softmax_image_loss(q[labels[n]], log(sum), shifted / p->classes, p->label_smoothing);
  }
  *loss = (float)(total / batch) * p->loss_weight;
}

void swk_softmax_loss_backward(const SwkSoftmaxLoss *p, int batch, const float *prob,
                               const int32_t *labels, float *dscores, bool dscores_add) {
  float k = p->loss_weight / (float)batch;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++)
    for (int c = 0; c < p->classes; c++) {
      size_t at = (size_t)n * p->classes + c;
      float g = (prob[at] - swn_softmax_target(c, labels[n], p->label_smoothing, p->classes)) * k;
      dscores[at] = dscores_add ? dscores[at] + g : g;
    }
}
