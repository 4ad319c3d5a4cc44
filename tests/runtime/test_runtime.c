/* Unit tests of runtime pieces with closed forms: learning-rate policies and warm-up; synthetic
 * data sets made per image; Caffe's crop, mirror and mean against a direct computation. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "rng.h"
#include "train.h"

static bool near(double a, double b) { return fabs(a - b) <= 1e-6 * fmax(1, fabs(b)); }

/* ImageNet-sized synthetic data (192 GB if held) costs nothing until a batch asks; the same
 * index gives the same image and label, others differ, labels are in range. */
static void test_synthetic(void) {
  SwnNetwork net = {.in_c = 3, .in_h = 224, .in_w = 224, .classes = 1000};
  net.data.classes = 1000, net.data.scale = 1.0f;
  SwnDataset d = {.what = "training"};
  swn_load_synthetic(&net, 1281167, 42, true, &d);
  CHECK(d.count == 1281167);
  enum { SIZE = 3 * 224 * 224 };
  static float first[2 * SIZE], again[2 * SIZE];
  int32_t labels[2], labels_again[2];
  int64_t ends[2] = {1281166, 0};
  SwnImageScratch scratch = {0};
  for (int b = 0; b < 2; b++) {
    swn_fill_image(&net, &d, ends[b], true, 7, &scratch, first + b * SIZE, &labels[b]);
    swn_fill_image(&net, &d, ends[b], true, 7, &scratch, again + b * SIZE, &labels_again[b]);
  }
  swn_free_image_scratch(&scratch);
  CHECK(memcmp(first, again, sizeof first) == 0 &&
        memcmp(labels, labels_again, sizeof labels) == 0);
  CHECK(memcmp(first, first + SIZE, sizeof(float) * SIZE) != 0);
  CHECK(labels[0] >= 0 && labels[0] < 1000 && labels[1] >= 0 && labels[1] < 1000);
  /* the pixels are the definition's: a hash per pixel, the label's residue class brightened */
  bool ok = true;
  for (int64_t i = 0; i < SIZE; i++) {
    uint64_t h = swn_hash3(d.stream, (uint64_t)ends[1], (uint64_t)i + 1);
    ok &= first[SIZE + i] == (float)((h & 127) + (i % 1000 == labels[1] ? 128 : 0));
  }
  CHECK(ok);
  swn_free_dataset(&d);
}

/* A 2-channel 5x6 interleaved image whose pixel value encodes (c, y, x), cut to 3x4. */
static uint8_t pixel(int c, int y, int x) { return (uint8_t)(100 * c + 10 * y + x); }

static void test_transform(void) {
  SwnNetwork net = {.in_c = 2, .in_h = 3, .in_w = 4};
  net.data.scale = 0.5f, net.data.crop = true, net.data.mirror = true;
  net.data.nmean = 2, net.data.mean[0] = 1, net.data.mean[1] = 2;
  uint8_t img[5 * 6 * 2];
  for (int y = 0; y < 5; y++)
    for (int x = 0; x < 6; x++)
      for (int c = 0; c < 2; c++) img[(y * 6 + x) * 2 + c] = pixel(c, y, x);
  SwnImageView v = {img, 2, 5, 6, 1, 12, 2};
  SwnWindow w;
  /* evaluation: Caffe's centre, (5 - 3) / 2 and (6 - 4) / 2, never flipped */
  swn_crop_window(&net, &v, false, 99, &w);
  CHECK(w.y == 1 && w.x == 1 && !w.flip);
  /* training: windows and flips vary with the key, stay inside, and repeat for the same key */
  bool seen_flip = false, seen_plain = false, seen_corner[4] = {0};
  for (uint64_t key = 0; key < 200; key++) {
    SwnWindow a, b;
    swn_crop_window(&net, &v, true, key, &a);
    swn_crop_window(&net, &v, true, key, &b);
    CHECK(a.y == b.y && a.x == b.x && a.flip == b.flip);
    CHECK(a.y >= 0 && a.y <= 2 && a.x >= 0 && a.x <= 2);
    seen_flip |= a.flip, seen_plain |= !a.flip;
    if ((a.y == 0 || a.y == 2) && (a.x == 0 || a.x == 2)) seen_corner[a.y + a.x / 2] = true;
  }
  CHECK(seen_flip && seen_plain && seen_corner[0] && seen_corner[1] && seen_corner[2] &&
        seen_corner[3]);
  /* the output against the definition, flipped, with a mean image of the source's size */
  float mean_pixels[5 * 6 * 2], out[2 * 3 * 4];
  for (int i = 0; i < 60; i++) mean_pixels[i] = (float)(i % 7);
  SwnMeanImage mean = {2, 5, 6, mean_pixels};
  SwnWindow win = {.y = 2, .x = 1, .flip = true};
  swn_transform(&net, &v, &mean, &win, out);
  bool ok = true;
  for (int c = 0; c < 2; c++)
    for (int y = 0; y < 3; y++)
      for (int x = 0; x < 4; x++) {
        int sy = 2 + y, sx = 1 + (3 - x);
        float want = ((float)pixel(c, sy, sx) - mean_pixels[(sy * 6 + sx) * 2 + c]) * 0.5f;
        ok &= out[(c * 3 + y) * 4 + x] == want;
      }
  CHECK(ok);
  /* per-channel means, no flip */
  win.flip = false;
  swn_transform(&net, &v, NULL, &win, out);
  CHECK(out[0] == ((float)pixel(0, 2, 1) - 1) * 0.5f);
  CHECK(out[12 + 11] == ((float)pixel(1, 4, 4) - 2) * 0.5f);
  /* planes without a mean or flip (a row at a time): the same definition */
  uint8_t planes[2 * 5 * 6];
  for (int c = 0; c < 2; c++)
    for (int y = 0; y < 5; y++)
      for (int x = 0; x < 6; x++) planes[(c * 5 + y) * 6 + x] = pixel(c, y, x);
  SwnImageView planar = {planes, 2, 5, 6, 30, 6, 1};
  net.data.nmean = 0;
  swn_transform(&net, &planar, NULL, &win, out);
  ok = true;
  for (int c = 0; c < 2; c++)
    for (int y = 0; y < 3; y++)
      for (int x = 0; x < 4; x++) ok &= out[(c * 3 + y) * 4 + x] == pixel(c, 2 + y, 1 + x) * 0.5f;
  CHECK(ok);
  /* the key is a function of (seed, epoch, image) alone */
  CHECK(swn_augment_key(1, 2, 3) == swn_augment_key(1, 2, 3));
  CHECK(swn_augment_key(1, 2, 3) != swn_augment_key(1, 3, 3));
  CHECK(swn_augment_key(1, 2, 3) != swn_augment_key(2, 2, 3));
}

int main(void) {
  test_synthetic();
  test_transform();
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
  /* cosine after a warm-up of 100 over 1100 iterations: half way at 600, 0 at the end */
  t.lr_policy = SWN_LR_COSINE, t.warmup = 100;
  CHECK(near(swn_learning_rate(&t, 0, 1100), 0.001));
  CHECK(near(swn_learning_rate(&t, 99, 1100), 0.1));
  CHECK(near(swn_learning_rate(&t, 100, 1100), 0.1));
  CHECK(near(swn_learning_rate(&t, 350, 1100), 0.1 * (1 + cos(M_PI / 4)) / 2));
  CHECK(near(swn_learning_rate(&t, 600, 1100), 0.05));
  CHECK(near(swn_learning_rate(&t, 1100, 1100), 0));
  t.warmup = 0;
  CHECK(near(swn_learning_rate(&t, 0, 1000), 0.1));
  CHECK(near(swn_learning_rate(&t, 500, 1000), 0.05));
  return check_report();
}
