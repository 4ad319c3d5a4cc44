/* The softmax loss and the accuracy on the CPEs (softmax_loss_cpe.c, accuracy_cpe.c); more
 * classes than an LDM row holds (SW_SOFTMAX_CLASSES) run on the MPE (mpe.c). */
#include "mpe.h"

void swk_softmax_loss_forward(const SwkSoftmaxLoss *p, int batch, const float *scores,
                              const int32_t *labels, float *prob, float *loss) {
  if (p->classes > SW_SOFTMAX_CLASSES) {
    sw_mpe_softmax_loss_forward(p, batch, scores, labels, prob, loss);
    return;
  }
  SwSoftmaxArgs a = {.classes = p->classes,
                     .batch = batch,
                     .loss_weight = p->loss_weight,
                     .label_smoothing = p->label_smoothing,
                     .scores = scores,
                     .labels = labels,
                     .prob = prob,
                     .loss = loss};
  SW_RUN(sw_softmax_loss, &a);
}

void swk_softmax_loss_backward(const SwkSoftmaxLoss *p, int batch, const float *prob,
                               const int32_t *labels, float *dscores, bool dscores_add) {
  if (p->classes > SW_SOFTMAX_CLASSES) {
    sw_mpe_softmax_loss_backward(p, batch, prob, labels, dscores, dscores_add);
    return;
  }
  SwSoftmaxArgs a = {.classes = p->classes,
                     .batch = batch,
                     .backward = 1,
                     .add = dscores_add,
                     .loss_weight = p->loss_weight,
                     .label_smoothing = p->label_smoothing,
                     .labels = labels,
                     .prob = (float *)prob,
                     .dscores = dscores};
  SW_RUN(sw_softmax_loss, &a);
}

void swk_accuracy_forward(int classes, int top, int batch, const float *scores,
                          const int32_t *labels, float *accuracy) {
  if (classes > SW_SOFTMAX_CLASSES) {
    sw_mpe_accuracy_forward(classes, top, batch, scores, labels, accuracy);
    return;
  }
  SwAccuracyArgs a = {.classes = classes,
                      .top = top,
                      .batch = batch,
                      .scores = scores,
                      .labels = labels,
                      .accuracy = accuracy};
  SW_RUN(sw_accuracy, &a);
}
