/* Packed datasets (docs/runtime.md, "Packed datasets"): a directory swnc-data writes and the
 * `packed` source reads. It holds
 *   dataset.txt          the manifest, written last: its presence means the pack is complete
 *   shard-NNNNN.swd      the images, shard_size per shard in order (the last may hold fewer)
 *   classes.txt          "label name" per class (a class-folder tree's names)
 *   mean.bin             the mean image, when every image has the same shape
 * A shard is a header, an index of one entry per record, the records, then the packer's pixel
 * sums (for the mean). Shard k was packed from input images k x shard_size onwards; with
 * images skipped as unreadable (swnc-data --skip-bad) it holds fewer than shard_size. Every number is little-endian. Records are either pixels (height x width
 * x channels bytes, interleaved, rows top to bottom) or JPEG files; either decodes to the same
 * interleaved form, which the loader crops, mirrors, centres and scales (transform.c). */
#ifndef SWNC_RT_PACKED_H
#define SWNC_RT_PACKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SWN_SHARD_MAGIC "SWNSHARD"
#define SWN_MEAN_MAGIC "SWNMEAN1"
enum { SWN_PACK_VERSION = 1, SWN_SHARD_HEADER_BYTES = 64, SWN_INDEX_ENTRY_BYTES = 32 };
enum { SWN_STORE_PIXELS, SWN_STORE_JPEG };
enum { SWN_COLOR_RGB, SWN_COLOR_BGR, SWN_COLOR_GRAY };

/* The shard header, as stored: magic[8], then u32 version, u32 storage, u64 count,
 * u64 first_image, u64 index_offset, u64 stats_offset, u32 index_crc, 4 bytes of zero,
 * u32 header_crc (of the 56 bytes before it), 4 bytes of zero. */
typedef struct SwnShardHeader {
  uint32_t version, storage;
  uint64_t count, first_image, index_offset, stats_offset;
  uint32_t index_crc;
} SwnShardHeader;

/* One record's index entry: u64 offset, u32 length, u32 crc (zlib's crc32 of the bytes),
 * i32 label, u16 height, u16 width, u8 channels, 7 bytes of zero. In memory, where it is. */
typedef struct SwnRecord {
  uint64_t offset;
  uint32_t length, crc;
  int32_t label;
  uint16_t height, width;
  uint8_t channels;
  uint32_t shard, number; /* not stored: the shard and the record's place in it */
} SwnRecord;

/* The manifest (dataset.txt: "key value..." lines). */
typedef struct SwnPackInfo {
  int version;
  int64_t images, shards, shard_size, skipped; /* shard_size: input images per shard */
  int storage, color, channels;
  int height, width; /* 0: images of different sizes */
  int64_t classes;
  double mean[4]; /* per channel */
  bool has_mean_image;
} SwnPackInfo;

/* Little-endian fields in a byte buffer. */
static inline void swn_put_u16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}
static inline void swn_put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}
static inline void swn_put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i);
}
static inline uint32_t swn_get_u16(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t swn_get_u32(const uint8_t *p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t swn_get_u64(const uint8_t *p) {
  return swn_get_u32(p) | (uint64_t)swn_get_u32(p + 4) << 32;
}

void swn_encode_shard_header(const SwnShardHeader *h, uint8_t out[SWN_SHARD_HEADER_BYTES]);
void swn_encode_record(const SwnRecord *r, uint8_t out[SWN_INDEX_ENTRY_BYTES]);
void swn_decode_record(const uint8_t in[SWN_INDEX_ENTRY_BYTES], SwnRecord *r);
uint32_t swn_crc32(const void *data, size_t bytes);

/* "DIR/shard-00012.swd" into `path` (size PATH_MAX). */
void swn_shard_path(char *path, size_t size, const char *dir, int64_t shard);

/* Reading. Each returns false with a message in err (naming the file, and the record where one
 * is at fault) instead of exiting, so swnc-data verify can go on and report. */
enum { SWN_ERR_BYTES = 512 };
bool swn_read_manifest(const char *dir, SwnPackInfo *info, char *err);
/* The header and index of `path`, checked against the file's size and the index's checksum;
 * `records` gets a malloc'ed array of h->count entries. */
bool swn_read_shard_index(const char *path, SwnShardHeader *h, SwnRecord **records, char *err);
/* Record `r` of the shard at `path` into buf (r->length bytes), its checksum checked. */
bool swn_read_record(const char *path, int64_t number, const SwnRecord *r, uint8_t *buf, char *err);
/* A record as interleaved pixels (r->height x r->width x r->channels): pixels are copied,
 * JPEG is decoded (jpeg.c). */
bool swn_record_pixels(const SwnPackInfo *info, const SwnRecord *r, const uint8_t *bytes,
                       uint8_t *pixels, char *err);
/* The mean image (mean.bin: magic, u32 channels, height, width, then float32 interleaved). */
bool swn_read_mean_image(const char *path, int *c, int *h, int *w, float **pixels, char *err);

/* JPEG (libjpeg-turbo) into interleaved pixels of `channels` (1 gray, 3 in `color`'s order);
 * the decoded size must be height x width. Corrupt data, even data libjpeg only warns about, is
 * an error. */
bool swn_jpeg_decode(const uint8_t *bytes, size_t length, int color, int channels, int height,
                     int width, uint8_t *pixels, char *err);
/* The size of a JPEG image, without decoding it. */
bool swn_jpeg_size(const uint8_t *bytes, size_t length, int *height, int *width, char *err);

#endif
