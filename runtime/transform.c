/* Caffe's data transform (its DataTransformer): a crop of the network's input size (random in
 * training, centred in evaluation), a horizontal flip (random, in training, with `mirror`),
 * then (pixel - mean) * scale. The mean is a value per channel or a mean image indexed at the
 * source pixel, as Caffe indexes its mean_file. Random choices hash (seed, epoch, image), so
 * they do not depend on threads, ranks or where a run resumed. */
#include "transform.h"

#include "rng.h"

void swn_crop_window(const SwnNetwork *net, const SwnImageView *src, bool train, uint64_t key,
                     SwnWindow *win) {
  int spare_y = src->h - net->in_h, spare_x = src->w - net->in_w;
  if (train && net->data.crop) {
    win->y = (int)(swn_hash3(key, 1, 0) % (uint64_t)(spare_y + 1));
    win->x = (int)(swn_hash3(key, 2, 0) % (uint64_t)(spare_x + 1));
  } else {
    win->y = spare_y / 2, win->x = spare_x / 2;
  }
  win->flip = train && net->data.mirror && (swn_hash3(key, 3, 0) & 1);
}

uint64_t swn_augment_key(uint64_t seed, int64_t epoch, int64_t image) {
  return swn_hash3(seed ^ 0x6175676d656e74ull /* "augment" */, (uint64_t)epoch, (uint64_t)image);
}

static float channel_mean(const SwnNetwork *net, int c) {
  const SwnDataConfig *d = &net->data;
  return d->nmean == 0 ? 0 : d->mean[d->nmean == 1 ? 0 : c];
}

void swn_transform(const SwnNetwork *net, const SwnImageView *src, const SwnMeanImage *mean,
                   const SwnWindow *win, float *dst) {
  int oh = net->in_h, ow = net->in_w;
  float scale = net->data.scale;
  /* a mean image of the source's size is read at the source pixel, one of the input's size at
   * the window's (swn_check_mean_image allows only these two) */
  bool mean_at_source = mean && mean->h == src->h && mean->w == src->w;
  for (int c = 0; c < net->in_c; c++) {
    float value = channel_mean(net, c);
    for (int y = 0; y < oh; y++) {
      int sy = win->y + y;
      const uint8_t *row =
          src->pixels + (ptrdiff_t)c * src->channel_step + (ptrdiff_t)sy * src->row_step;
      float *out = dst + ((ptrdiff_t)c * oh + y) * ow;
      if (!mean && !win->flip && src->pixel_step == 1) { /* the common case, in vectors */
        for (int x = 0; x < ow; x++) out[x] = ((float)row[win->x + x] - value) * scale;
        continue;
      }
      for (int x = 0; x < ow; x++) {
        int sx = win->x + (win->flip ? ow - 1 - x : x);
        float m = value;
        if (mean) {
          int my = mean_at_source ? sy : y, mx = mean_at_source ? sx : sx - win->x;
          m = mean->pixels[((ptrdiff_t)my * mean->w + mx) * mean->c + c];
        }
        out[x] = ((float)row[(ptrdiff_t)sx * src->pixel_step] - m) * scale;
      }
    }
  }
}
