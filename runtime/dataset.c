/* Choosing and checking a data set, synthetic data, and batch conversion. */
#include "dataset.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

enum { SYNTHETIC_DEFAULT_SIZE = 1024 };

void swn_load_synthetic(const SwnNetwork *net, int64_t count, uint64_t seed, bool train,
                        SwnDataset *d) {
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
  for (int64_t i = 0; i < size; i++) {
    uint64_t h = swn_hash3(d->stream, (uint64_t)n, (uint64_t)i + 1);
    img[i] = (uint8_t)((h & 127) + (i % classes == label ? 128 : 0));
  }
  return label;
}

static void check_against_network(const SwnNetwork *net, const SwnDataset *d, const char *file) {
  if (d->c != net->in_c || d->h != net->in_h || d->w != net->in_w)
    swn_fatal_at(file,
                 "images are %dx%d with %d channel%s, but the network's input is %dx%dx%d "
                 "(channels x height x width)",
                 d->h, d->w, d->c, d->c == 1 ? "" : "s", net->in_c, net->in_h, net->in_w);
  for (int64_t n = 0; n < d->count; n++)
    if (d->labels[n] < 0 || d->labels[n] >= net->classes)
      swn_fatal_at(file, "label %d of image %lld is out of range: the network has %d classes",
                   d->labels[n], (long long)n, net->classes);
  if (d->count == 0) swn_fatal_at(file, "holds no images");
}

void swn_load_dataset(const SwnNetwork *net, const SwnOptions *o, bool train, SwnDataset *d) {
  memset(d, 0, sizeof *d);
  d->what = train ? "training" : "test";
  const char *const *files = train ? o->train : o->test;
  int nfiles = train ? o->ntrain : o->ntest;
  int64_t limit = train ? o->train_size : o->test_size;
  switch (net->data.source) {
  case SWN_DATA_SYNTHETIC:
    if (nfiles > 0)
      swn_fatal("--%s names files, but network '%s' was compiled for synthetic data (compile with "
                "-D data.source=idx or cifar to read files)",
                train ? "train" : "test", net->name);
    swn_load_synthetic(net, limit, o->seed, train, d);
    return;
  case SWN_DATA_IDX:
    if (nfiles != 2)
      swn_fatal(
          "the %s data of an idx source are two files, images and labels (--%s IMAGES,LABELS)",
          d->what, train ? "train" : "test");
    swn_load_idx(files[0], files[1], limit, d);
    break;
  case SWN_DATA_CIFAR:
    if (nfiles < 1)
      swn_fatal("no %s data files (--%s FILE[,FILE])", d->what, train ? "train" : "test");
    swn_load_cifar(files, nfiles, limit, d);
    break;
  }
  check_against_network(net, d, files[nfiles - 1]);
}

void swn_free_dataset(SwnDataset *d) {
  free(d->pixels);
  free(d->labels);
  memset(d, 0, sizeof *d);
}

void swn_fill_batch(const SwnNetwork *net, const SwnDataset *d, const int64_t *indices, int n,
                    float *images, int32_t *labels) {
  int64_t plane = (int64_t)d->h * d->w, size = plane * d->c;
  float scale = net->data.scale;
  uint8_t *made = d->synthetic ? swn_alloc((size_t)size) : NULL;
  for (int b = 0; b < n; b++) {
    const uint8_t *src = made ? made : d->pixels + indices[b] * size;
    labels[b] =
        made ? synthetic_image(d, net->data.classes, indices[b], made) : d->labels[indices[b]];
    float *dst = images + (int64_t)b * size;
    for (int c = 0; c < d->c; c++) {
      float mean = net->data.nmean == 0 ? 0 : net->data.mean[net->data.nmean == 1 ? 0 : c];
      for (int64_t i = 0; i < plane; i++)
        dst[c * plane + i] = ((float)src[c * plane + i] - mean) * scale;
    }
  }
  free(made);
}
