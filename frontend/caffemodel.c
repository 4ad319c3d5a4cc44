/* Caffe's binary .caffemodel (a serialised NetParameter) read with a protocol-buffer wire
 * reader over the few fields that hold weights: NetParameter.layer (100) or the legacy V1
 * NetParameter.layers (2); in each layer its name (1, or 4 in V1) and blobs (7, or 6 in V1);
 * in each BlobProto its shape (7: BlobShape.dim, 1), or the legacy num/channels/height/width
 * (1-4), and its values as data (5, float) or double_data (8). Everything else is skipped by
 * its wire type. Every length is checked against what is left of its enclosing message. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "caffe.h"

enum { WIRE_VARINT = 0, WIRE_64 = 1, WIRE_LEN = 2, WIRE_32 = 5 };

typedef struct Reader {
  const uint8_t *p, *end;
} Reader;

typedef struct ModelFile {
  const char *path;
  const uint8_t *start;
  Arena *a;
  const char *layer; /* the layer being read, for messages */
  int blob;
  bool failed;
} ModelFile;

static void fail(ModelFile *mf, const Reader *r, const char *fmt, ...) {
  if (mf->failed) return;
  mf->failed = true;
  fprintf(stderr, "%s: error: ", mf->path);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (");
  if (mf->layer) fprintf(stderr, "layer '%s', ", mf->layer);
  if (mf->layer && mf->blob >= 0) fprintf(stderr, "blob %d, ", mf->blob);
  fprintf(stderr, "at byte %lld)\n", (long long)(r->p - mf->start));
}

static bool varint(ModelFile *mf, Reader *r, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) {
      fail(mf, r, "truncated: the file ends inside a number");
      return false;
    }
    uint8_t b = *r->p++;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  fail(mf, r, "malformed: a number longer than 10 bytes");
  return false;
}

/* The next field's number and wire type; false at the end of the message or on an error. */
static bool next_field(ModelFile *mf, Reader *r, int *number, int *wire) {
  if (r->p >= r->end || mf->failed) return false;
  uint64_t key;
  if (!varint(mf, r, &key)) return false;
  *number = (int)(key >> 3), *wire = (int)(key & 7);
  if (*number == 0) {
    fail(mf, r, "malformed: field number 0");
    return false;
  }
  return true;
}

/* A length-delimited field's contents as a reader of their own. */
static bool sub_reader(ModelFile *mf, Reader *r, Reader *out) {
  uint64_t len;
  if (!varint(mf, r, &len)) return false;
  if (len > (uint64_t)(r->end - r->p)) {
    fail(mf, r, "truncated: a field of %llu bytes where %lld are left", (unsigned long long)len,
         (long long)(r->end - r->p));
    return false;
  }
  *out = (Reader){r->p, r->p + len};
  r->p += len;
  return true;
}

static bool skip(ModelFile *mf, Reader *r, int wire) {
  uint64_t v;
  Reader ignored;
  size_t left = (size_t)(r->end - r->p);
  switch (wire) {
  case WIRE_VARINT: return varint(mf, r, &v);
  case WIRE_LEN: return sub_reader(mf, r, &ignored);
  case WIRE_64:
  case WIRE_32:
    if (left < (wire == WIRE_64 ? 8u : 4u)) {
      fail(mf, r, "truncated: the file ends inside a number");
      return false;
    }
    r->p += wire == WIRE_64 ? 8 : 4;
    return true;
  default: fail(mf, r, "malformed: wire type %d", wire); return false;
  }
}

static float read_f32(const uint8_t *p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static double read_f64(const uint8_t *p) {
  uint64_t u = 0;
  for (int i = 7; i >= 0; i--) u = u << 8 | p[i];
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* Values of a repeated float (4 bytes) or double (8) field, packed or one at a time, appended
 * to the blob (grown in the arena). */
static bool read_values(ModelFile *mf, Reader *r, int wire, int size, CaffeBlob *b, int64_t *cap) {
  Reader v = *r;
  if (wire == WIRE_LEN) {
    if (!sub_reader(mf, r, &v)) return false;
    if ((v.end - v.p) % size) {
      fail(mf, r, "malformed: packed values of %lld bytes, not a multiple of %d",
           (long long)(v.end - v.p), size);
      return false;
    }
  } else if (wire == (size == 4 ? WIRE_32 : WIRE_64)) {
    if (r->end - r->p < size) {
      fail(mf, r, "truncated: the file ends inside a number");
      return false;
    }
    v.end = v.p + size;
    r->p += size;
  } else {
    fail(mf, r, "malformed: blob values with wire type %d", wire);
    return false;
  }
  int64_t n = (v.end - v.p) / size;
  if (b->count + n > *cap) {
    int64_t grown = (b->count + n) * 2;
    float *data = arena_alloc(mf->a, (size_t)grown * sizeof(float));
    if (b->count) memcpy(data, b->data, (size_t)b->count * sizeof(float));
    b->data = data, *cap = grown;
  }
  for (int64_t i = 0; i < n; i++, v.p += size)
    b->data[b->count++] = size == 4 ? read_f32(v.p) : (float)read_f64(v.p);
  return true;
}

static bool read_shape(ModelFile *mf, Reader *r, CaffeBlob *b) {
  int number, wire;
  while (next_field(mf, r, &number, &wire)) {
    if (number != 1) {
      if (!skip(mf, r, wire)) return false;
      continue;
    }
    Reader dims = *r;
    bool packed = wire == WIRE_LEN;
    if (packed && !sub_reader(mf, r, &dims)) return false;
    do {
      uint64_t d;
      if (!varint(mf, packed ? &dims : r, &d)) return false;
      if (b->rank == 4) {
        fail(mf, r, "a blob of more than 4 dimensions");
        return false;
      }
      b->dim[b->rank++] = (int64_t)d;
    } while (packed && dims.p < dims.end);
  }
  return !mf->failed;
}

static bool read_blob(ModelFile *mf, Reader *r, CaffeBlob *b) {
  int64_t cap = 0, legacy[4] = {0, 0, 0, 0};
  bool has_legacy = false;
  int number, wire;
  *b = (CaffeBlob){0};
  while (next_field(mf, r, &number, &wire)) {
    Reader sub;
    uint64_t v;
    if (number == 7 && wire == WIRE_LEN) {
      if (!sub_reader(mf, r, &sub) || !read_shape(mf, &sub, b)) return false;
    } else if (number == 5 || number == 8) {
      if (!read_values(mf, r, wire, number == 5 ? 4 : 8, b, &cap)) return false;
    } else if (number >= 1 && number <= 4 && wire == WIRE_VARINT) {
      if (!varint(mf, r, &v)) return false;
      legacy[number - 1] = (int64_t)v, has_legacy = true;
    } else if (!skip(mf, r, wire)) {
      return false;
    }
  }
  if (mf->failed) return false;
  if (!b->rank && has_legacy) { /* num, channels, height, width: leading 1s are Caffe's padding */
    int first = 0;
    while (first < 3 && legacy[first] == 1) first++;
    for (int i = first; i < 4; i++) b->dim[b->rank++] = legacy[i];
  }
  int64_t expect = 1;
  for (int i = 0; i < b->rank; i++)
    if (b->dim[i] < 0 || __builtin_mul_overflow(expect, b->dim[i], &expect)) {
      fail(mf, r, "malformed: the blob's dimensions (%s) do not give a count of values",
           b->dim[i] < 0 ? "one negative" : "their product past 2^63");
      return false;
    }
  if (expect != b->count) {
    fail(mf, r, "the blob's shape says %lld values, its data has %lld", (long long)expect,
         (long long)b->count);
    return false;
  }
  return true;
}

static bool read_layer(ModelFile *mf, Reader *r, bool v1, CaffeModel *out) {
  CaffeModelLayer layer = {.name = ""};
  int name_field = v1 ? 4 : 1, blobs_field = v1 ? 6 : 7;
  int number, wire;
  mf->layer = NULL, mf->blob = -1;
  /* the name may follow the blobs: find it first, for messages */
  Reader scan = *r;
  while (next_field(mf, &scan, &number, &wire)) {
    Reader sub;
    if (number == name_field && wire == WIRE_LEN) {
      if (!sub_reader(mf, &scan, &sub)) return false;
      layer.name = arena_strndup(mf->a, (const char *)sub.p, (size_t)(sub.end - sub.p));
    } else if (!skip(mf, &scan, wire)) {
      return false;
    }
  }
  mf->layer = layer.name;
  while (next_field(mf, r, &number, &wire)) {
    Reader sub;
    if (number == blobs_field && wire == WIRE_LEN) {
      CaffeBlob b;
      mf->blob = layer.blobs.len;
      if (!sub_reader(mf, r, &sub) || !read_blob(mf, &sub, &b)) return false;
      vec_push(mf->a, layer.blobs, b);
    } else if (!skip(mf, r, wire)) {
      return false;
    }
  }
  if (layer.blobs.len) vec_push(mf->a, out->layers, layer);
  mf->layer = NULL;
  return !mf->failed;
}

bool caffemodel_read(Arena *a, const char *path, CaffeModel *out) {
  *out = (CaffeModel){0};
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: error: cannot open: %s\n", path, strerror(errno));
    return false;
  }
  size_t cap = 1 << 20, len = 0, n;
  uint8_t *buf = xmalloc(cap, "the caffemodel");
  while ((n = fread(buf + len, 1, cap - len, f)) > 0)
    if ((len += n) == cap) buf = xrealloc(buf, cap *= 2, "the caffemodel");
  bool read_error = ferror(f);
  fclose(f);
  ModelFile mf = {.path = path, .start = buf, .a = a, .blob = -1};
  Reader r = {buf, buf + len};
  if (read_error) fail(&mf, &r, "cannot read the file");
  int number, wire;
  while (!mf.failed && next_field(&mf, &r, &number, &wire)) {
    Reader sub;
    if ((number == 100 || number == 2) && wire == WIRE_LEN) {
      if (sub_reader(&mf, &r, &sub)) read_layer(&mf, &sub, number == 2, out);
    } else {
      skip(&mf, &r, wire);
    }
  }
  if (!mf.failed && !out->layers.len) fail(&mf, &r, "no layer with weights in this file");
  free(buf);
  return !mf.failed;
}
