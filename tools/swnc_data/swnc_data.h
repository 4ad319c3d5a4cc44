/* swnc-data: packs images into the sharded dataset directory the `packed` source reads
 * (runtime/packed.h), and inspects and verifies one. */
#ifndef SWNC_DATA_H
#define SWNC_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packed.h"

/* An input image and its label. */
typedef struct Input {
  char *path;
  int32_t label;
} Input;

typedef struct InputSet {
  Input *items;
  int64_t count;
  char **class_names; /* a class-folder tree's names, by label; NULL for a list file */
  int64_t classes;
} InputSet;

/* A class-folder tree (folders in sorted order are labels 0, 1, ...) or a list file of
 * "path label" lines (paths relative to `root`, or to the list's folder when root is NULL).
 * false with a message on stderr. */
bool read_inputs(const char *source, const char *root, InputSet *set);
void free_inputs(InputSet *set);

typedef struct Options {
  int resize_short;            /* shorter side to this, keeping the aspect ratio (0: no) */
  int resize_w, resize_h;      /* exactly this size (0: no) */
  int storage, color, quality; /* SWN_STORE_*, SWN_COLOR_*, JPEG quality when encoding */
  int64_t shard_size;
  int threads;
  bool skip_bad, quiet;
} Options;

/* Decoded pixels, interleaved, rows top to bottom. */
typedef struct Image {
  uint8_t *pixels;
  int h, w, c;
} Image;

/* A JPEG or PNG file's bytes into pixels of `color` (3 channels, or 1 for gray). false with a
 * message in err. */
bool decode_image(const uint8_t *bytes, size_t length, int color, Image *out, char *err);
bool is_jpeg(const uint8_t *bytes, size_t length);
/* Pixels into JPEG at `quality`; *out is malloc'ed. */
bool encode_jpeg(const Image *im, int color, int quality, uint8_t **out, size_t *length, char *err);
/* Bilinear resampling to h x w, sampling at pixel centres (as Caffe's convert_imageset, which
 * calls OpenCV's INTER_LINEAR resize). */
void resize_image(const Image *in, int h, int w, Image *out);

int pack(const char *source, const char *out, const char *root, const Options *o);
int info(const char *dir);
int verify(const char *dir, bool quiet);

/* A whole file into memory; NULL with a message in err. */
uint8_t *read_file(const char *path, size_t *length, char *err);

#endif
