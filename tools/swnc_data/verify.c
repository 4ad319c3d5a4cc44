/* swnc-data info and verify: what a pack holds, and whether every byte of it is intact. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "swnc_data.h"

static const char *const storage_names[] = {"pixels", "jpeg"};
static const char *const color_names[] = {"rgb", "bgr", "gray"};

int info(const char *dir) {
  SwnPackInfo m;
  char err[SWN_ERR_BYTES];
  if (!swn_read_manifest(dir, &m, err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  uint64_t bytes = 0;
  for (int64_t k = 0; k < m.shards; k++) {
    char path[4096];
    struct stat st;
    swn_shard_path(path, sizeof path, dir, k);
    if (!stat(path, &st)) bytes += (uint64_t)st.st_size;
  }
  printf("%s: %" PRId64 " images of %" PRId64 " classes in %" PRId64 " shards of up to %" PRId64
         " (%.1f MB)\n",
         dir, m.images, m.classes, m.shards, m.shard_size, (double)bytes / 1e6);
  printf("  stored as %s, %s (%d channel%s), ", storage_names[m.storage], color_names[m.color],
         m.channels, m.channels == 1 ? "" : "s");
  if (m.height)
    printf("every image %dx%d\n", m.height, m.width);
  else
    printf("images of different sizes\n");
  printf("  mean per channel:");
  for (int c = 0; c < m.channels; c++) printf(" %.3f", m.mean[c]);
  printf("%s\n", m.has_mean_image ? "; mean image in mean.bin" : "");
  if (m.skipped) printf("  %" PRId64 " unreadable input images were skipped\n", m.skipped);
  return 0;
}

/* Every record of shard k: read, checksum, decode. Returns the problems found. */
static int64_t verify_shard(const char *dir, const SwnPackInfo *m, int64_t k, int64_t *images) {
  char path[4096], err[SWN_ERR_BYTES];
  swn_shard_path(path, sizeof path, dir, k);
  SwnShardHeader h;
  SwnRecord *r;
  if (!swn_read_shard_index(path, &h, &r, err)) {
    printf("%s\n", err);
    return 1;
  }
  int64_t problems = 0;
  if ((int64_t)h.count > m->shard_size || h.first_image != (uint64_t)(k * m->shard_size) ||
      (int)h.storage != m->storage) {
    printf("%s: does not belong to this pack (count, first image or storage differs)\n", path);
    problems++;
  }
  size_t largest = 1, pixels = 1;
  for (uint64_t i = 0; i < h.count; i++) {
    size_t n = (size_t)r[i].height * r[i].width * r[i].channels;
    if (r[i].length > largest) largest = r[i].length;
    if (n > pixels) pixels = n;
  }
  uint8_t *bytes = malloc(largest), *decoded = malloc(pixels);
  for (uint64_t i = 0; i < h.count; i++) {
    if (!swn_read_record(path, (int64_t)i, &r[i], bytes, err) ||
        !swn_record_pixels(m, &r[i], bytes, decoded, err)) {
      printf("%s: record %" PRIu64 ": %s\n", path, i, err);
      problems++;
    } else if (r[i].label < 0 || r[i].label >= m->classes || r[i].channels != m->channels) {
      printf("%s: record %" PRIu64 ": label %d or %u channels out of range\n", path, i, r[i].label,
             r[i].channels);
      problems++;
    }
  }
  *images += (int64_t)h.count;
  free(bytes), free(decoded), free(r);
  return problems;
}

int verify(const char *dir, bool quiet) {
  SwnPackInfo m;
  char err[SWN_ERR_BYTES];
  if (!swn_read_manifest(dir, &m, err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  int64_t problems = 0, images = 0;
  for (int64_t k = 0; k < m.shards; k++) problems += verify_shard(dir, &m, k, &images);
  if (images != m.images) {
    printf("%s: the shards hold %" PRId64 " images, the manifest says %" PRId64 "\n", dir, images,
           m.images);
    problems++;
  }
  if (m.has_mean_image) {
    char path[4096];
    int c, h, w;
    float *mean;
    snprintf(path, sizeof path, "%s/mean.bin", dir);
    if (!swn_read_mean_image(path, &c, &h, &w, &mean, err)) printf("%s\n", err), problems++;
    free(mean);
  }
  if (problems) {
    fprintf(stderr, "%s: error: %" PRId64 " problem%s (listed above)\n", dir, problems,
            problems == 1 ? "" : "s");
    return 1;
  }
  if (!quiet)
    printf("%s: ok: %" PRId64 " images in %" PRId64 " shards, every record read, checked and "
           "decoded\n",
           dir, images, m.shards);
  return 0;
}
