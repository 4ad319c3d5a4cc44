/* The `packed` source: a swnc-data directory (packed.h). Loading reads the manifest and the
 * needed shards' indexes, not the images: records are read when a batch asks for them. */
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "util.h"

static const char *const color_names[] = {"RGB", "BGR", "gray"};

/* Shard `s`'s records from image `first` on, at most `room`; returns how many it holds. */
static int64_t read_shard(SwnPackedSet *p, int64_t s, int64_t first, int64_t room) {
  char path[4096], err[SWN_ERR_BYTES];
  swn_shard_path(path, sizeof path, p->dir, s);
  SwnShardHeader h;
  SwnRecord *records;
  if (!swn_read_shard_index(path, &h, &records, err)) swn_fatal("%s", err);
  if ((int64_t)h.count > p->info.shard_size || (int)h.storage != p->info.storage ||
      (int64_t)h.first_image != s * p->info.shard_size)
    swn_fatal_at(path,
                 "does not belong to this pack: it holds %llu %s records packed from input image "
                 "%llu, the manifest says at most %lld %s records from image %lld",
                 (unsigned long long)h.count, h.storage == SWN_STORE_JPEG ? "jpeg" : "pixel",
                 (unsigned long long)h.first_image, (long long)p->info.shard_size,
                 p->info.storage == SWN_STORE_JPEG ? "jpeg" : "pixel",
                 (long long)(s * p->info.shard_size));
  int64_t take = (int64_t)h.count < room ? (int64_t)h.count : room;
  for (int64_t i = 0; i < take; i++) {
    records[i].shard = (uint32_t)s;
    p->records[first + i] = records[i];
  }
  free(records);
  return (int64_t)h.count;
}

void swn_load_packed(const SwnNetwork *net, const char *dir, int64_t limit, SwnDataset *d) {
  SwnPackedSet *p = swn_alloc(sizeof *p);
  p->dir = dir;
  char err[SWN_ERR_BYTES];
  if (!swn_read_manifest(dir, &p->info, err)) swn_fatal("%s", err);
  const SwnPackInfo *m = &p->info;
  if (m->channels != net->in_c)
    swn_fatal_at(dir,
                 "holds %s images (%d channel%s), but the network's input has %d channel%s "
                 "(pack with swnc-data --color=%s)",
                 color_names[m->color], m->channels, m->channels == 1 ? "" : "s", net->in_c,
                 net->in_c == 1 ? "" : "s", net->in_c == 1 ? "gray" : "rgb");
  if (m->classes > net->classes)
    swn_fatal_at(dir, "holds %lld classes, but the network's loss has %d", (long long)m->classes,
                 net->classes);
  d->count = limit > 0 && limit < m->images ? limit : m->images;
  d->c = m->channels, d->h = m->height, d->w = m->width;
  p->records = swn_alloc(sizeof *p->records * (size_t)d->count);
  int64_t have = 0, held = 0;
  for (int64_t s = 0; s < m->shards && have < d->count; s++) {
    int64_t n = read_shard(p, s, have, d->count - have);
    held += n;
    have += n < d->count - have ? n : d->count - have;
  }
  if (have < d->count || (d->count == m->images && held != m->images))
    swn_fatal_at(dir, "its shards hold %lld images, its manifest says %lld", (long long)held,
                 (long long)m->images);
  d->labels = swn_alloc(sizeof(int32_t) * (size_t)d->count);
  for (int64_t i = 0; i < d->count; i++) {
    d->labels[i] = p->records[i].label;
    if (d->labels[i] < 0 || d->labels[i] >= m->classes) /* as swnc-data verify refuses it */
      swn_fatal_at(dir, "label %d of image %lld is out of range: its manifest says %lld classes",
                   d->labels[i], (long long)i, (long long)m->classes);
  }
  d->packed = p;
}
