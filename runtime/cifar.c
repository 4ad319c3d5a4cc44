/* CIFAR-10 binary batches: records of one label byte (0..9) and 3 x 32 x 32 pixel bytes
 * (red, green, blue planes). A file must hold whole records. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dataset.h"
#include "util.h"

enum { CIFAR_PIXELS = 3 * 32 * 32, CIFAR_RECORD = 1 + CIFAR_PIXELS };

static int64_t records_in(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) swn_fatal_at(path, "cannot open: %s", strerror(errno));
  if (fseek(f, 0, SEEK_END)) swn_fatal_at(path, "cannot determine its size");
  long size = ftell(f);
  fclose(f);
  if (size <= 0 || size % CIFAR_RECORD)
    swn_fatal_at(path, "is %ld bytes, not a whole number of %d-byte CIFAR-10 records", size,
                 CIFAR_RECORD);
  return size / CIFAR_RECORD;
}

void swn_load_cifar(const char *const *files, int nfiles, int64_t limit, SwnDataset *d) {
  int64_t total = 0;
  for (int i = 0; i < nfiles; i++) total += records_in(files[i]);
  d->count = limit > 0 && limit < total ? limit : total;
  d->c = 3, d->h = 32, d->w = 32;
  d->pixels = swn_alloc((size_t)(d->count * CIFAR_PIXELS));
  d->labels = swn_alloc(sizeof(int32_t) * (size_t)d->count);
  int64_t n = 0;
  unsigned char record[CIFAR_RECORD];
  for (int i = 0; i < nfiles && n < d->count; i++) {
    FILE *f = fopen(files[i], "rb");
    if (!f) swn_fatal_at(files[i], "cannot open: %s", strerror(errno));
    for (int64_t r = 0; n < d->count && fread(record, CIFAR_RECORD, 1, f) == 1; r++, n++) {
      if (record[0] > 9)
        swn_fatal_at(files[i], "record %lld has label %d; CIFAR-10 labels are 0 to 9", (long long)r,
                     record[0]);
      d->labels[n] = record[0];
      memcpy(d->pixels + n * CIFAR_PIXELS, record + 1, CIFAR_PIXELS);
    }
    fclose(f);
  }
  if (n != d->count) swn_fatal_at(files[nfiles - 1], "could not be read completely");
}
