/* Top-k accuracy on the CPEs (args.h), an image per task with the host target's rule
 * (targets/host/accuracy.c): an image is correct if fewer than `top` classes beat its label's
 * score, a tie going to the lower class index; a score that is not a number beats every other,
 * and an image whose label's score is not a number is wrong. The count is summed over the mesh
 * (cpe_mesh_sum) and CPE 0 writes correct / batch. */
#include <math.h>

#include "args.h"
#include "cpe.h"

static int correct(const SwAccuracyArgs *p, int n, float *s) {
  int32_t label;
  cpe_get(s, p->scores + (int64_t)n * p->classes, 4 * p->classes);
  cpe_get(&label, p->labels + n, 4);
  cpe_count_flops(p->classes);
  if (isnan(s[label])) return 0;
  int better = 0;
  for (int k = 0; k < p->classes; k++)
    better += isnan(s[k]) || s[k] > s[label] || (s[k] == s[label] && k < label);
  return better < p->top;
}

void sw_accuracy(void *arg) {
  SwAccuracyArgs p;
  cpe_get(&p, arg, sizeof p);
  float *s = ldm_malloc(4 * SW_SOFTMAX_CLASSES);
  int mine = 0;
  for (int n = _MYID; n < p.batch; n += 64) mine += correct(&p, n, s);
  double total = cpe_mesh_sum(mine);
  float accuracy = (float)(int)total / (float)p.batch;
  if (_MYID == 0) cpe_put(p.accuracy, &accuracy, 4);
  ldm_free(s, 4 * SW_SOFTMAX_CLASSES);
}
