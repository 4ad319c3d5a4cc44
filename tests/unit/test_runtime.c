/* Unit tests of runtime pieces with closed forms: learning-rate policies and warm-up; synthetic
 * data sets made per batch. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "train.h"

static bool near(double a, double b) { return fabs(a - b) <= 1e-6 * fmax(1, fabs(b)); }

/* ImageNet-sized synthetic data (192 GB if held) costs nothing until a batch asks; the same
 * index gives the same image and label, others differ, labels are in range. */
static void test_synthetic(void) {
  SwnNetwork net = {.in_c = 3, .in_h = 224, .in_w = 224};
  net.data.classes = 1000, net.data.scale = 1.0f;
  SwnDataset d = {.what = "training"};
  swn_load_synthetic(&net, 1281167, 42, true, &d);
  CHECK(d.count == 1281167);
  enum { SIZE = 3 * 224 * 224 };
  static float first[2 * SIZE], again[2 * SIZE];
  int32_t labels[2], labels_again[2];
  int64_t ends[2] = {1281166, 0};
  swn_fill_batch(&net, &d, ends, 2, first, labels);
  swn_fill_batch(&net, &d, ends, 2, again, labels_again);
  CHECK(memcmp(first, again, sizeof first) == 0 &&
        memcmp(labels, labels_again, sizeof labels) == 0);
  CHECK(memcmp(first, first + SIZE, sizeof(float) * SIZE) != 0);
  CHECK(labels[0] >= 0 && labels[0] < 1000 && labels[1] >= 0 && labels[1] < 1000);
  swn_free_dataset(&d);
}

int main(void) {
  test_synthetic();
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
