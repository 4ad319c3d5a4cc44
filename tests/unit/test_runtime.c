/* Unit tests of runtime pieces with closed forms: learning-rate policies and warm-up. */
#include <math.h>

#include "check.h"
#include "train.h"

static bool near(double a, double b) { return fabs(a - b) <= 1e-6 * fmax(1, fabs(b)); }

int main(void) {
  SwnTrainConfig t = {.lr = 0.1f, .gamma = 0.5f, .power = 0.75f};
  t.lr_policy = SWN_LR_FIXED;
  CHECK(near(swn_learning_rate(&t, 1234, 5000), 0.1));
  t.lr_policy = SWN_LR_STEP, t.step = 100;
  CHECK(near(swn_learning_rate(&t, 99, 5000), 0.1));
  CHECK(near(swn_learning_rate(&t, 100, 5000), 0.05));
  CHECK(near(swn_learning_rate(&t, 250, 5000), 0.025));
  t.lr_policy = SWN_LR_MULTISTEP, t.nsteps = 2, t.steps[0] = 10, t.steps[1] = 30;
  CHECK(near(swn_learning_rate(&t, 9, 5000), 0.1));
  CHECK(near(swn_learning_rate(&t, 10, 5000), 0.05));
  CHECK(near(swn_learning_rate(&t, 31, 5000), 0.025));
  t.lr_policy = SWN_LR_INV, t.gamma = 0.0001f;
  CHECK(near(swn_learning_rate(&t, 1000, 5000), 0.1 * pow(1 + 0.0001f * 1000, -0.75f)));
  t.lr_policy = SWN_LR_POLY, t.power = 2;
  CHECK(near(swn_learning_rate(&t, 2500, 5000), 0.1 * 0.25));
  CHECK(near(swn_learning_rate(&t, 5000, 5000), 0));
  /* linear warm-up to the policy's rate over the first iterations */
  t.lr_policy = SWN_LR_FIXED, t.warmup = 4;
  CHECK(near(swn_learning_rate(&t, 0, 5000), 0.025));
  CHECK(near(swn_learning_rate(&t, 2, 5000), 0.075));
  CHECK(near(swn_learning_rate(&t, 4, 5000), 0.1));
  return check_report();
}
