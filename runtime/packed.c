/* Reading packed datasets (packed.h): the manifest, shard headers and indexes, records. Every
 * function checks what it reads against the file it came from and reports, never trusts. */
#include "packed.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static bool fail(char *err, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(char *err, const char *where, const char *fmt, ...) {
  int n = snprintf(err, SWN_ERR_BYTES, "%s: ", where);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + n, (size_t)(SWN_ERR_BYTES - n), fmt, ap);
  va_end(ap);
  return false;
}

uint32_t swn_crc32(const void *data, size_t bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const Bytef *p = data;
  while (bytes > 0) { /* zlib takes a uInt length */
    uInt chunk = bytes > (1u << 30) ? 1u << 30 : (uInt)bytes;
    crc = crc32(crc, p, chunk);
    p += chunk, bytes -= chunk;
  }
  return (uint32_t)crc;
}

void swn_shard_path(char *path, size_t size, const char *dir, int64_t shard) {
  snprintf(path, size, "%s/shard-%05" PRId64 ".swd", dir, shard);
}

void swn_encode_shard_header(const SwnShardHeader *h, uint8_t out[SWN_SHARD_HEADER_BYTES]) {
  memset(out, 0, SWN_SHARD_HEADER_BYTES);
  memcpy(out, SWN_SHARD_MAGIC, 8);
  swn_put_u32(out + 8, h->version), swn_put_u32(out + 12, h->storage);
  swn_put_u64(out + 16, h->count), swn_put_u64(out + 24, h->first_image);
  swn_put_u64(out + 32, h->index_offset), swn_put_u64(out + 40, h->stats_offset);
  swn_put_u32(out + 48, h->index_crc);
  swn_put_u32(out + 56, swn_crc32(out, 56));
}

void swn_encode_record(const SwnRecord *r, uint8_t out[SWN_INDEX_ENTRY_BYTES]) {
  memset(out, 0, SWN_INDEX_ENTRY_BYTES);
  swn_put_u64(out, r->offset), swn_put_u32(out + 8, r->length), swn_put_u32(out + 12, r->crc);
  swn_put_u32(out + 16, (uint32_t)r->label);
  swn_put_u16(out + 20, r->height), swn_put_u16(out + 22, r->width);
  out[24] = r->channels;
}

void swn_decode_record(const uint8_t in[SWN_INDEX_ENTRY_BYTES], SwnRecord *r) {
  r->offset = swn_get_u64(in), r->length = swn_get_u32(in + 8), r->crc = swn_get_u32(in + 12);
  r->label = (int32_t)swn_get_u32(in + 16);
  r->height = (uint16_t)swn_get_u16(in + 20), r->width = (uint16_t)swn_get_u16(in + 22);
  r->channels = in[24];
}

/* ------------------------------------------------------------------ the manifest */

static bool manifest_line(SwnPackInfo *m, const char *key, const char *rest, const char *path,
                          int line, char *err) {
  char word[32];
  int n = 0;
  if (!strcmp(key, "swnc-data"))
    n = sscanf(rest, "%d", &m->version);
  else if (!strcmp(key, "images"))
    n = sscanf(rest, "%" SCNd64, &m->images);
  else if (!strcmp(key, "shards"))
    n = sscanf(rest, "%" SCNd64, &m->shards);
  else if (!strcmp(key, "shard_size"))
    n = sscanf(rest, "%" SCNd64, &m->shard_size);
  else if (!strcmp(key, "skipped"))
    n = sscanf(rest, "%" SCNd64, &m->skipped);
  else if (!strcmp(key, "classes"))
    n = sscanf(rest, "%" SCNd64, &m->classes);
  else if (!strcmp(key, "channels"))
    n = sscanf(rest, "%d", &m->channels);
  else if (!strcmp(key, "mean_image"))
    n = 1, m->has_mean_image = true;
  else if (!strcmp(key, "shape")) {
    n = sscanf(rest, "%d %d", &m->height, &m->width);
    if (n != 2 && sscanf(rest, "%31s", word) == 1 && !strcmp(word, "varied")) n = 2;
    n = n == 2;
  } else if (!strcmp(key, "mean")) {
    n = sscanf(rest, "%lf %lf %lf %lf", &m->mean[0], &m->mean[1], &m->mean[2], &m->mean[3]) > 0;
  } else if (!strcmp(key, "storage") || !strcmp(key, "color")) {
    static const char *const storage[] = {"pixels", "jpeg"}, *const color[] = {"rgb", "bgr",
                                                                               "gray"};
    bool is_storage = !strcmp(key, "storage");
    int *field = is_storage ? &m->storage : &m->color, count = is_storage ? 2 : 3;
    if (sscanf(rest, "%31s", word) == 1)
      for (int i = 0; i < count; i++)
        if (!strcmp(word, (is_storage ? storage : color)[i])) *field = i, n = 1;
  } else {
    return true; /* a later version's key: ignored */
  }
  if (n < 1) return fail(err, path, "line %d: a bad value for '%s': '%s'", line, key, rest);
  return true;
}

bool swn_read_manifest(const char *dir, SwnPackInfo *m, char *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/dataset.txt", dir);
  struct stat st;
  if (stat(dir, &st) || !S_ISDIR(st.st_mode))
    return fail(err, dir, "is not a directory (a packed dataset is one: see swnc-data)");
  FILE *f = fopen(path, "r");
  if (!f)
    return fail(err, path, "cannot open: %s (an incomplete pack? run swnc-data pack again)",
                strerror(errno));
  *m = (SwnPackInfo){.version = -1, .storage = -1, .color = -1};
  char text[512];
  bool ok = true;
  for (int line = 1; ok && fgets(text, sizeof text, f); line++) {
    char key[32];
    int used = 0;
    if (sscanf(text, "%31s %n", key, &used) < 1) continue;
    text[strcspn(text, "\n")] = 0;
    ok = manifest_line(m, key, text + used, path, line, err);
  }
  fclose(f);
  if (!ok) return false;
  if (m->version != SWN_PACK_VERSION)
    return fail(err, path, "is not a swnc-data manifest of version %d", SWN_PACK_VERSION);
  if (m->images < 1 || m->shards < 1 || m->shard_size < 1 || m->storage < 0 || m->color < 0 ||
      (m->channels != 1 && m->channels != 3) || m->classes < 1 ||
      m->shards * m->shard_size < m->images)
    return fail(err, path,
                "is inconsistent (images, shards, shard_size, storage, color, "
                "channels or classes missing or out of range)");
  return true;
}

/* ------------------------------------------------------------------ shards */

static bool read_at(int fd, void *buf, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = pread(fd, (char *)buf + done, n - done, (off_t)(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += (size_t)got;
  }
  return true;
}

static bool check_header(const uint8_t *b, uint64_t file_size, SwnShardHeader *h, const char *path,
                         char *err) {
  if (memcmp(b, SWN_SHARD_MAGIC, 8)) return fail(err, path, "is not a swnc-data shard (bad magic)");
  if (swn_get_u32(b + 56) != swn_crc32(b, 56))
    return fail(err, path, "has a corrupt header (checksum mismatch)");
  *h = (SwnShardHeader){.version = swn_get_u32(b + 8),
                        .storage = swn_get_u32(b + 12),
                        .count = swn_get_u64(b + 16),
                        .first_image = swn_get_u64(b + 24),
                        .index_offset = swn_get_u64(b + 32),
                        .stats_offset = swn_get_u64(b + 40),
                        .index_crc = swn_get_u32(b + 48)};
  if (h->version != SWN_PACK_VERSION)
    return fail(err, path, "is a shard of version %u; this program reads version %d", h->version,
                SWN_PACK_VERSION);
  if (h->count > (file_size / SWN_INDEX_ENTRY_BYTES) ||
      h->index_offset + h->count * SWN_INDEX_ENTRY_BYTES > file_size)
    return fail(err, path,
                "is truncated: its index of %" PRIu64 " records does not fit in its "
                "%" PRIu64 " bytes",
                h->count, file_size);
  return true;
}

bool swn_read_shard_index(const char *path, SwnShardHeader *h, SwnRecord **records, char *err) {
  *records = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(err, path, "cannot open: %s", strerror(errno));
  struct stat st;
  uint8_t head[SWN_SHARD_HEADER_BYTES];
  bool ok = !fstat(fd, &st) && read_at(fd, head, sizeof head, 0);
  if (!ok) fail(err, path, "is truncated: shorter than a shard header");
  ok = ok && check_header(head, (uint64_t)st.st_size, h, path, err);
  size_t bytes = ok ? (size_t)h->count * SWN_INDEX_ENTRY_BYTES : 0;
  uint8_t *index = ok ? malloc(bytes) : NULL;
  if (ok && (!index || !read_at(fd, index, bytes, h->index_offset)))
    ok = fail(err, path, "cannot read its index of %" PRIu64 " records", h->count);
  if (ok && swn_crc32(index, bytes) != h->index_crc)
    ok = fail(err, path, "has a corrupt index (checksum mismatch)");
  SwnRecord *r = ok ? malloc(sizeof *r * h->count) : NULL;
  if (ok && !r) ok = fail(err, path, "out of memory for its index");
  for (uint64_t i = 0; ok && i < h->count; i++) {
    swn_decode_record(index + i * SWN_INDEX_ENTRY_BYTES, &r[i]);
    r[i].number = (uint32_t)i;
    if (r[i].offset + r[i].length > (uint64_t)st.st_size)
      ok = fail(err, path,
                "is truncated: record %" PRIu64 " (image %" PRIu64 ") ends at byte "
                "%" PRIu64 ", past the file's end (%lld bytes)",
                i, h->first_image + i, r[i].offset + r[i].length, (long long)st.st_size);
    else if (r[i].channels != 1 && r[i].channels != 3)
      ok = fail(err, path, "record %" PRIu64 " has %u channels", i, r[i].channels);
  }
  free(index);
  close(fd);
  if (!ok) free(r), r = NULL;
  *records = r;
  return ok;
}

bool swn_read_record(const char *path, int64_t number, const SwnRecord *r, uint8_t *buf,
                     char *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(err, path, "cannot open: %s", strerror(errno));
  bool ok = read_at(fd, buf, r->length, r->offset);
  close(fd);
  if (!ok)
    return fail(err, path, "record %" PRId64 ": cannot read its %u bytes", number, r->length);
  if (swn_crc32(buf, r->length) != r->crc)
    return fail(err, path, "record %" PRId64 " is corrupt (checksum mismatch)", number);
  return true;
}

bool swn_record_pixels(const SwnPackInfo *info, const SwnRecord *r, const uint8_t *bytes,
                       uint8_t *pixels, char *err) {
  size_t size = (size_t)r->height * r->width * r->channels;
  if (info->storage == SWN_STORE_JPEG)
    return swn_jpeg_decode(bytes, r->length, info->color, r->channels, r->height, r->width, pixels,
                           err);
  if (r->length != size)
    return fail(err, "record", "holds %u bytes, not %ux%ux%u pixels", r->length, r->height,
                r->width, r->channels);
  memcpy(pixels, bytes, size);
  return true;
}

bool swn_read_mean_image(const char *path, int *c, int *h, int *w, float **pixels, char *err) {
  *pixels = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, path, "cannot open: %s", strerror(errno));
  uint8_t head[20];
  bool ok = fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, SWN_MEAN_MAGIC, 8);
  uint32_t cc = ok ? swn_get_u32(head + 8) : 0, hh = ok ? swn_get_u32(head + 12) : 0,
           ww = ok ? swn_get_u32(head + 16) : 0;
  ok = ok && (cc == 1 || cc == 3) && hh > 0 && ww > 0 && hh <= 65535 && ww <= 65535;
  if (!ok) {
    fclose(f);
    return fail(err, path, "is not a mean image written by swnc-data (bad header)");
  }
  size_t n = (size_t)cc * hh * ww;
  uint8_t *raw = malloc(4 * n);
  float *v = malloc(sizeof(float) * n);
  ok = raw && v && fread(raw, 4, n, f) == n && fgetc(f) == EOF;
  fclose(f);
  for (size_t i = 0; ok && i < n; i++) {
    uint32_t bits = swn_get_u32(raw + 4 * i);
    memcpy(&v[i], &bits, 4);
  }
  free(raw);
  if (!ok) {
    free(v);
    return fail(err, path, "is truncated or has trailing bytes (%ux%ux%u floats expected)", hh, ww,
                cc);
  }
  *c = (int)cc, *h = (int)hh, *w = (int)ww, *pixels = v;
  return true;
}
