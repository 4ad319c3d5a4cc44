/* Top-k accuracy. An image counts as correct if fewer than `top` classes beat its label's
 * score, a tie going to the lower class index. A score that is not a number beats every other,
 * and an image whose label's score is not a number is wrong: a diverged network scores 0. */
#include <math.h>

#include "kernels.h"

void swk_accuracy_forward(int classes, int top, int batch, const float *scores,
                          const int32_t *labels, float *accuracy) {
  int correct = 0;
#pragma omp parallel for schedule(static) reduction(+ : correct)
  for (int n = 0; n < batch; n++) {
    const float *s = scores + (size_t)n * classes;
    int label = labels[n], better = 0;
    if (isnan(s[label])) continue;
    for (int k = 0; k < classes; k++)
      better += isnan(s[k]) || s[k] > s[label] || (s[k] == s[label] && k < label);
    correct += better < top;
  }
  *accuracy = (float)correct / (float)batch;
}
