/* What double buffering buys the sw26010 convolution kernels, by the cost model alone: per layer
 * and pass, the implicit kernel's (conv_implicit_cpe.c) compute (arithmetic and the memory
 * pipeline), register communication, DMA and the part of it overlapped, and its time
 * double-buffered (swnc's rule) against single-buffered (swCaffe's kernels, --conv=swcaffe).
 * Shapes: VGG-16's and ResNet-50's 3x3 layers at 32 and 128 images per core group (batch 128 and
 * 512 on a chip), ResNet-50's at 16 (batch 64). The counts are the ones unit_sw26010_predict
 * holds equal to the emulator's counters. Usage: sw26010_overlap */
#include <stdio.h>

#include "../targets/sw26010/cost/predict.h"
#include "../targets/sw26010/kernels/args.h"

typedef struct Layer {
  const char *name;
  int c, hw, images;
} Layer;

static const Layer layers[] = {
    {"vgg16 conv2_2", 128, 112, 32},    {"vgg16 conv3_2", 256, 56, 32},
    {"vgg16 conv4_2", 512, 28, 32},     {"vgg16 conv5_2", 512, 14, 32},
    {"vgg16 conv3_2", 256, 56, 128},    {"vgg16 conv4_2", 512, 28, 128},
    {"vgg16 conv5_2", 512, 14, 128},    {"resnet50 res2 3x3", 64, 56, 16},
    {"resnet50 res3 3x3", 128, 28, 16}, {"resnet50 res4 3x3", 256, 14, 16},
    {"resnet50 res5 3x3", 512, 7, 16},
};

static double ms(double s) { return s * 1e3; }

static SwTime priced(const Layer *l, SwImplicitPass pass, int single) {
  SwImplicitArgs a = {.pass = pass,
                      .ci = l->c,
                      .h = l->hw,
                      .w = l->hw,
                      .co = l->c,
                      .ho = l->hw,
                      .wo = l->hw,
                      .kh = 3,
                      .kw = 3,
                      .sh = 1,
                      .sw = 1,
                      .ph = 1,
                      .pw = 1,
                      .batch = l->images,
                      .bias = pass == SW_IMPLICIT_FORWARD ? (const float *)l : NULL,
                      .single_buffered = single};
  SwWork w = sw_implicit_work(&a);
  return sw_cpe_time(&w);
}

int main(void) {
  static const char *passes[] = {"forward", "dgrad", "wgrad"};
  printf("%-18s %6s %-7s %9s %8s %8s %10s %9s %9s %6s\n", "layer", "images", "pass", "compute",
         "rlc", "dma", "overlapped", "double", "single", "gain");
  for (size_t i = 0; i < sizeof layers / sizeof *layers; i++)
    for (int p = SW_IMPLICIT_FORWARD; p <= SW_IMPLICIT_WEIGHTS; p++) {
      SwTime d = priced(&layers[i], (SwImplicitPass)p, 0),
             s = priced(&layers[i], (SwImplicitPass)p, 1);
      printf("%-18s %6d %-7s %9.2f %8.2f %8.2f %10.2f %9.2f %9.2f %5.2fx\n", layers[i].name,
             layers[i].images, passes[p], ms(d.compute), ms(d.rlc), ms(d.dma), ms(d.overlapped),
             ms(d.total), ms(s.total), s.total / d.total);
    }
  printf("(ms on one core group; compute, rlc, dma and overlapped as double-buffered; the single-\n"
         " buffered blocks may differ: more LDM for them; gain: single / double)\n");
  return 0;
}
