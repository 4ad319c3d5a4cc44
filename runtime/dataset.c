/* Choosing and checking a data set, synthetic data, and one image as the network's input. */
#include "dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

enum { SYNTHETIC_DEFAULT_SIZE = 1024 };

void swn_load_synthetic(const SwnNetwork *net, int64_t count, uint64_t seed, bool train,
                        SwnDataset *d) {
  if (net->data.classes > net->classes) /* labels the loss could not take */
    swn_fatal("synthetic images of %lld classes (data.classes), but the network's loss has %d: "
              "compile with -D data.classes=%d",
              (long long)net->data.classes, net->classes, net->classes);
  d->count = count > 0 ? count : SYNTHETIC_DEFAULT_SIZE;
  d->c = net->in_c, d->h = net->in_h, d->w = net->in_w;
  d->pixels = NULL, d->labels = NULL, d->synthetic = true;
  d->stream = seed ^ (train ? 0x7261696eull : 0x74657374ull);
}

/* Synthetic image n, one that can be learnt: noise, with the pixels of one residue class (mod
 * the number of classes) brightened according to the label. Returns the label. */
static int32_t synthetic_image(const SwnDataset *d, int classes, int64_t n, uint8_t *img) {
  int64_t size = (int64_t)d->c * d->h * d->w;
  int32_t label = (int32_t)(swn_hash3(d->stream, (uint64_t)n, 0) % (uint64_t)classes);
  uint64_t image_key = swn_hash2(d->stream, (uint64_t)n);
  /* i's residue by a counter: a 64-bit division per pixel made the loader thread, which shares
   * the cores with training, cost cifar10_quick several percent of its step */
  for (int64_t i = 0, residue = 0; i < size; i++) {
    uint64_t h = swn_mix64(image_key ^ ((uint64_t)i + 1));
    img[i] = (uint8_t)((h & 127) + (residue == label ? 128 : 0));
    if (++residue == classes) residue = 0;
  }
  return label;
}

/* An image of h x w with c channels fits the input: the same channels, and the input's size
 * (or larger, when data.crop cuts the input out of it). NULL, or what is wrong. */
static const char *misfit(const SwnNetwork *net, int c, int h, int w) {
  static _Thread_local char why[256];
  bool crop = net->data.crop;
  if (c == net->in_c &&
      (crop ? h >= net->in_h && w >= net->in_w : h == net->in_h && w == net->in_w))
    return NULL;
  snprintf(why, sizeof why,
           "the image is %dx%d with %d channel%s, but the network's input is %dx%dx%d (channels x "
           "height x width)%s",
           h, w, c, c == 1 ? "" : "s", net->in_c, net->in_h, net->in_w,
           c != net->in_c ? ""
           : crop         ? ": data.crop needs images at least that large"
                          : ": set data.crop to cut the input out of larger images");
  return why;
}

static void check_against_network(const SwnNetwork *net, const SwnDataset *d, const char *file) {
  if (d->count == 0) swn_fatal_at(file, "holds no images");
  if (!d->packed) {
    const char *why = misfit(net, d->c, d->h, d->w);
    if (why) swn_fatal_at(file, "%s", why);
  }
  for (int64_t n = 0; n < d->count; n++)
    if (d->labels[n] < 0 || d->labels[n] >= net->classes)
      swn_fatal_at(file, "label %d of image %lld is out of range: the network has %d classes",
                   d->labels[n], (long long)n, net->classes);
}

/* data.mean_file: read at the source pixel, so it has the images' size, or the input's. */
static void load_mean_image(const SwnNetwork *net, SwnDataset *d) {
  const char *path = net->data.mean_file;
  char err[SWN_ERR_BYTES];
  SwnMeanImage *m = &d->mean;
  if (!swn_read_mean_image(path, &m->c, &m->h, &m->w, &m->pixels, err)) swn_fatal("%s", err);
  bool input_size = m->h == net->in_h && m->w == net->in_w;
  bool image_size = d->h == m->h && d->w == m->w; /* a packed set's: 0 if they vary */
  if (m->c != net->in_c || !(input_size || image_size))
    swn_fatal_at(path,
                 "the mean image is %dx%dx%d (channels x height x width); it must have the "
                 "input's %d channels and the images' size or the input's (%dx%d)",
                 m->c, m->h, m->w, net->in_c, net->in_h, net->in_w);
}

void swn_load_dataset(const SwnNetwork *net, const SwnOptions *o, bool train, SwnDataset *d) {
  memset(d, 0, sizeof *d);
  d->what = train ? "training" : "test";
  const char *const *files = train ? o->train : o->test;
  int nfiles = train ? o->ntrain : o->ntest;
  int64_t limit = train ? o->train_size : o->test_size;
  const char *option = train ? "--train" : "--test";
  switch (net->data.source) {
  case SWN_DATA_SYNTHETIC:
    if (nfiles > 0)
      swn_fatal("%s names files, but network '%s' was compiled for synthetic data (compile with "
                "-D data.source=idx, cifar or packed to read files)",
                option, net->name);
    swn_load_synthetic(net, limit, o->seed, train, d);
    return;
  case SWN_DATA_PACKED:
    if (nfiles == 0) { /* the ImageNet-sized examples run without a data set */
      printf("%s: no %s directory: %s on synthetic images\n", swn_program, option,
             train ? "training" : "testing");
      swn_load_synthetic(net, limit, o->seed, train, d);
      return;
    }
    if (nfiles != 1)
      swn_fatal("the %s data of a packed source is one directory (%s DIR)", d->what, option);
    swn_load_packed(net, files[0], limit, d);
    break;
  case SWN_DATA_IDX:
    if (nfiles != 2)
      swn_fatal("the %s data of an idx source are two files, images and labels (%s IMAGES,LABELS)",
                d->what, option);
    swn_load_idx(files[0], files[1], limit, d);
    break;
  case SWN_DATA_CIFAR:
    if (nfiles < 1) swn_fatal("no %s data files (%s FILE[,FILE])", d->what, option);
    swn_load_cifar(files, nfiles, limit, d);
    break;
  }
  check_against_network(net, d, files[nfiles - 1]);
  if (net->data.mean_file) load_mean_image(net, d);
}

void swn_free_dataset(SwnDataset *d) {
  if (d->packed) {
    free(d->packed->records);
    free(d->packed);
  }
  free(d->pixels);
  free(d->labels);
  free(d->mean.pixels);
  memset(d, 0, sizeof *d);
}

void swn_free_image_scratch(SwnImageScratch *s) {
  free(s->bytes);
  free(s->pixels);
  memset(s, 0, sizeof *s);
}

static uint8_t *grow(uint8_t **buf, size_t *size, size_t want) {
  if (*size < want) {
    free(*buf);
    *buf = swn_alloc(want);
    *size = want;
  }
  return *buf;
}

/* Record `index` of a packed set, read, checked and decoded into the scratch pixels. */
static SwnImageView packed_image(const SwnNetwork *net, const SwnPackedSet *p, int64_t index,
                                 SwnImageScratch *s) {
  const SwnRecord *r = &p->records[index];
  int64_t number = r->number;
  char path[4096], err[SWN_ERR_BYTES];
  swn_shard_path(path, sizeof path, p->dir, r->shard);
  uint8_t *bytes = grow(&s->bytes, &s->bytes_size, r->length ? r->length : 1);
  size_t size = (size_t)r->height * r->width * r->channels;
  uint8_t *pixels = grow(&s->pixels, &s->pixels_size, size);
  if (!swn_read_record(path, number, r, bytes, err) ||
      !swn_record_pixels(&p->info, r, bytes, pixels, err))
    swn_fatal("%s (image %lld of %s)", err, (long long)index, p->dir);
  const char *why = misfit(net, r->channels, r->height, r->width);
  if (why) swn_fatal_at(path, "record %lld: %s", (long long)number, why);
  return (SwnImageView){.pixels = pixels,
                        .c = r->channels,
                        .h = r->height,
                        .w = r->width,
                        .channel_step = 1,
                        .row_step = (ptrdiff_t)r->width * r->channels,
                        .pixel_step = r->channels};
}

void swn_fill_image(const SwnNetwork *net, const SwnDataset *d, int64_t index, bool train,
                    uint64_t augment_key, SwnImageScratch *scratch, float *image, int32_t *label) {
  SwnImageView view;
  if (d->packed) {
    view = packed_image(net, d->packed, index, scratch);
  } else {
    size_t plane = (size_t)d->h * d->w, size = plane * (size_t)d->c;
    const uint8_t *src = d->pixels + (size_t)index * size;
    if (d->synthetic) {
      uint8_t *made = grow(&scratch->pixels, &scratch->pixels_size, size);
      *label = synthetic_image(d, net->data.classes, index, made);
      src = made;
    }
    view = (SwnImageView){.pixels = src,
                          .c = d->c,
                          .h = d->h,
                          .w = d->w,
                          .channel_step = (ptrdiff_t)plane,
                          .row_step = d->w,
                          .pixel_step = 1};
  }
  if (d->labels) *label = d->labels[index];
  SwnWindow win;
  swn_crop_window(net, &view, train, augment_key, &win);
  swn_transform(net, &view, d->mean.pixels ? &d->mean : NULL, &win, image);
}
