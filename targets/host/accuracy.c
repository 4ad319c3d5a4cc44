/* Top-k accuracy. An image counts as correct if fewer than `top` classes beat its label's
 * score, a tie going to the lower class index. */
#include "kernels.h"

void swk_accuracy_forward(int classes, int top, int batch, const float *scores, const int32_t *labels,
                          float *accuracy) {
  int correct = 0;
#pragma omp parallel for schedule(static) reduction(+ : correct)
  for (int n = 0; n < batch; n++) {
    const float *s = scores + (size_t)n * classes;
    int label = labels[n], better = 0;
    for (int k = 0; k < classes; k++) better += s[k] > s[label] || (s[k] == s[label] && k < label);
    correct += better < top;
  }
  *accuracy = (float)correct / (float)batch;
}
