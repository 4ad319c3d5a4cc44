/* Adam's and AdamW's step (Kingma and Ba, "Adam: A Method for Stochastic Optimization",
 * Algorithm 1; Loshchilov and Hutter, "Decoupled Weight Decay Regularization", for AdamW),
 * written once for every kernel set. With t = iteration + 1, the optimizer steps so far:
 *   g' = g + decay w                    (adam: L2 in the gradient; adamw: g' = g)
 *   m = beta1 m + (1 - beta1) g'        v = beta2 v + (1 - beta2) g'^2
 *   w = shrink w - (lr / c1) m / (sqrt(v) / sqrt(c2) + epsilon)
 * where c1 = 1 - beta1^t, c2 = 1 - beta2^t corrects the moments' bias towards their zero start
 * and shrink = 1 - lr decay for adamw (1 for adam). PyTorch's torch.optim.Adam and AdamW do the
 * same arithmetic in the same order. Includes only <math.h>, <stdbool.h> and <stdint.h>. */
#ifndef SWNC_ADAM_H
#define SWNC_ADAM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct SwnAdam {
  float beta1, beta2, epsilon;
  float l2;          /* decay added to the gradient (adam), or 0 */
  float shrink;      /* 1 - lr decay (adamw), or 1 */
  float step_size;   /* lr / c1 */
  float inv_sqrt_c2; /* 1 / sqrt(c2) */
} SwnAdam;

/* One step's constants; the bias corrections in double (beta2^t for t in the millions). */
static inline SwnAdam swn_adam(float lr, float decay, float beta1, float beta2, float epsilon,
                               bool decoupled, uint64_t iteration) {
  double t = (double)iteration + 1;
  double c1 = 1 - pow(beta1, t), c2 = 1 - pow(beta2, t);
  return (SwnAdam){.beta1 = beta1,
                   .beta2 = beta2,
                   .epsilon = epsilon,
                   .l2 = decoupled ? 0 : decay,
                   .shrink = decoupled ? 1 - lr * decay : 1,
                   .step_size = (float)(lr / c1),
                   .inv_sqrt_c2 = (float)(1 / sqrt(c2))};
}

/* Element i's step: weights w, gradient g, moments m and v. */
static inline void swn_adam_element(const SwnAdam *a, float *w, float g, float *m, float *v) {
  float gradient = g + a->l2 * *w;
  float first = a->beta1 * *m + (1 - a->beta1) * gradient;
  float second = a->beta2 * *v + (1 - a->beta2) * gradient * gradient;
  *m = first, *v = second;
  *w = a->shrink * *w - a->step_size * first / (sqrtf(second) * a->inv_sqrt_c2 + a->epsilon);
}

#endif
