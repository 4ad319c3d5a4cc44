/* The softmax loss's per-image arithmetic, written once for every kernel set (the host's
 * targets/host/softmax_loss.c and the sw26010 CPEs' softmax_loss_cpe.c): cross-entropy against
 * the label, smoothed by eps (Szegedy et al., "Rethinking the Inception Architecture"): the
 * target is 1 - eps + eps / K for the label and eps / K for the other K - 1 classes, so
 *   loss = (1 - eps) (-log p_label) + eps mean_c(-log p_c),   dloss/ds_c = p_c - target_c,
 * with -log p_c = log(sum) - (s_c - max) from the softmax's own sums. eps 0 is plain
 * cross-entropy, with the same bits as before smoothing existed. Includes only <float.h> and
 * <math.h> (CPE code includes it). */
#ifndef SWNC_SOFTMAX_LOSS_H
#define SWNC_SOFTMAX_LOSS_H

#include <float.h>
#include <math.h>

/* target_c of class c for an image of `label` */
static inline float swn_softmax_target(int c, int label, float eps, int classes) {
  return (c == label ? 1.0f - eps : 0.0f) + eps / (float)classes;
}

/* An image's loss from its label's probability, log(sum) of the shifted exponentials and the
 * mean of its shifted scores s_c - max (read only where eps > 0). */
static inline double swn_softmax_image_loss(float p_label, double log_sum, double mean_shifted,
                                            float eps) {
  double label_term = -log(p_label > FLT_MIN ? p_label : FLT_MIN);
  return eps == 0 ? label_term : (1 - eps) * label_term + eps * (log_sum - mean_shifted);
}

#endif
