/* IDX files (MNIST, Fashion-MNIST): a big-endian header (0, 0, type 0x08 = unsigned byte,
 * number of dimensions, then each dimension as u32), then the data. gzip or raw: zlib reads
 * both. Everything read is checked: magic, type, rank, counts, truncation, trailing bytes. With
 * a limit (--train-size, --test-size) only the images and labels kept are read: inflating all
 * of Fashion-MNIST's 47 MB took a second of every short run, most of its start-up, and each
 * rank of a distributed run paid it; truncation or trailing bytes past them go unseen. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dataset.h"
#include "util.h"

typedef struct IdxFile {
  const char *path;
  gzFile f;
  int rank;
  uint32_t dims[4];
} IdxFile;

static void read_exactly(IdxFile *x, void *buf, size_t n, const char *what) {
  size_t done = 0;
  while (done < n) {
    unsigned chunk = n - done > (1u << 30) ? 1u << 30 : (unsigned)(n - done);
    int got = gzread(x->f, (char *)buf + done, chunk);
    if (got < 0) {
      int code;
      const char *msg = gzerror(x->f, &code);
      swn_fatal_at(x->path, "cannot read %s: %s", what, msg);
    }
    if (got == 0)
      swn_fatal_at(x->path, "ends after %zu of the %zu bytes of %s (truncated?)", done, n, what);
    done += (size_t)got;
  }
}

static void open_idx(IdxFile *x, const char *path, int want_rank, const char *kind) {
  x->path = path;
  x->f = gzopen(path, "rb");
  if (!x->f) swn_fatal_at(path, "cannot open: %s", errno ? strerror(errno) : "out of memory");
  unsigned char head[4];
  read_exactly(x, head, 4, "the header");
  if (head[0] || head[1])
    swn_fatal_at(path, "is not an IDX file (magic %02x%02x%02x%02x)", head[0], head[1], head[2],
                 head[3]);
  if (head[2] != 0x08)
    swn_fatal_at(path, "holds IDX type 0x%02x; only unsigned bytes (0x08) are supported", head[2]);
  x->rank = head[3];
  if (x->rank != want_rank)
    swn_fatal_at(path, "has %d dimensions, but an IDX %s file has %d", x->rank, kind, want_rank);
  for (int i = 0; i < x->rank; i++) {
    unsigned char d[4];
    read_exactly(x, d, 4, "the header");
    x->dims[i] = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
    if (x->dims[i] == 0 || x->dims[i] > (1u << 28))
      swn_fatal_at(path, "has an implausible dimension %u", x->dims[i]);
  }
}

static void expect_end(IdxFile *x) {
  char extra;
  if (gzread(x->f, &extra, 1) > 0)
    swn_fatal_at(x->path, "has bytes after the data its header announces");
  gzclose(x->f);
}

void swn_load_idx(const char *images, const char *labels, int64_t limit, SwnDataset *d) {
  IdxFile im, lb;
  open_idx(&im, images, 3, "images");
  open_idx(&lb, labels, 1, "labels");
  if (im.dims[0] != lb.dims[0])
    swn_fatal_at(labels, "holds %u labels, but '%s' holds %u images", lb.dims[0], images,
                 im.dims[0]);
  int64_t total = im.dims[0], size = (int64_t)im.dims[1] * im.dims[2];
  d->count = limit > 0 && limit < total ? limit : total;
  d->c = 1, d->h = (int)im.dims[1], d->w = (int)im.dims[2];
  int64_t kept = d->count;
  d->pixels = swn_alloc((size_t)(kept * size));
  d->labels = swn_alloc(sizeof(int32_t) * (size_t)kept);
  read_exactly(&im, d->pixels, (size_t)(kept * size), "the images");
  uint8_t *raw = swn_alloc((size_t)kept);
  read_exactly(&lb, raw, (size_t)kept, "the labels");
  for (int64_t i = 0; i < kept; i++) d->labels[i] = raw[i];
  free(raw);
  if (kept == total) {
    expect_end(&im);
    expect_end(&lb);
  } else {
    gzclose(im.f);
    gzclose(lb.f);
  }
}
