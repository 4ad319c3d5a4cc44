/* .npy files (npy.h). Reading checks every field the header has and the data's length against
 * the shape, so that a wrong or damaged file is an error, not garbage in the network. */
#include "npy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char MAGIC[] = "\x93NUMPY";
enum { MAGIC_LEN = 6, HEADER_MAX = 1 << 16 };

/* The value of 'key' in the header dict, as the text after its colon. */
static const char *header_value(const char *path, const char *header, const char *key) {
  const char *k = strstr(header, key);
  const char *colon = k ? strchr(k + strlen(key), ':') : NULL;
  if (!colon) swn_fatal_at(path, "not a .npy array: its header has no %s", key);
  colon++;
  while (*colon == ' ') colon++;
  return colon;
}

/* (d0, d1, ...) into a: its dimensions; () is a scalar. */
static void parse_shape(const char *path, const char *text, SwnNpy *a) {
  if (*text != '(') swn_fatal_at(path, "not a .npy array: its shape is not a tuple");
  const char *p = text + 1;
  a->ndims = 0, a->count = 1;
  while (*p != ')') {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (end == p || errno || d < 0 || d > ((int64_t)1 << 40))
      swn_fatal_at(path, "not a .npy array: bad dimension in its shape");
    if (a->ndims == SWN_NPY_MAX_DIMS)
      swn_fatal_at(path, "has more than %d dimensions", SWN_NPY_MAX_DIMS);
    a->dims[a->ndims++] = d;
    if (d && a->count > ((int64_t)1 << 40) / d) swn_fatal_at(path, "is too large");
    a->count *= d;
    p = end;
    if (!*p) swn_fatal_at(path, "not a .npy array: its shape is not closed");
  }
}

static void check_header(const char *path, const char *header, SwnNpy *a) {
  const char *descr = header_value(path, header, "'descr'");
  if (strncmp(descr, "'<f4'", 5) && strncmp(descr, "'float32'", 9)) {
    int n = (int)strcspn(descr, ",}");
    swn_fatal_at(path, "holds %.*s values; --infer reads float32 ('<f4', numpy's float32)", n,
                 descr);
  }
  if (strncmp(header_value(path, header, "'fortran_order'"), "False", 5))
    swn_fatal_at(path, "is in Fortran order; write it in C order (numpy's default)");
  parse_shape(path, header_value(path, header, "'shape'"), a);
}

SwnNpy swn_npy_read(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) swn_fatal_at(path, "cannot read: %s", strerror(errno));
  unsigned char lead[MAGIC_LEN + 2 + 4];
  if (fread(lead, 1, MAGIC_LEN + 2, f) != MAGIC_LEN + 2 || memcmp(lead, MAGIC, MAGIC_LEN))
    swn_fatal_at(path, "not a .npy file (no \\x93NUMPY at its start)");
  int major = lead[MAGIC_LEN];
  if (major < 1 || major > 3) swn_fatal_at(path, "is .npy version %d; this reads 1 to 3", major);
  size_t width = major == 1 ? 2 : 4;
  if (fread(lead + MAGIC_LEN + 2, 1, width, f) != width) swn_fatal_at(path, "is truncated");
  size_t length = 0;
  for (size_t i = 0; i < width; i++) length |= (size_t)lead[MAGIC_LEN + 2 + i] << (8 * i);
  if (length > HEADER_MAX) swn_fatal_at(path, "has a header of %zu bytes: not a .npy file", length);
  char *header = swn_alloc(length + 1);
  if (fread(header, 1, length, f) != length) swn_fatal_at(path, "is truncated in its header");
  SwnNpy a = {0};
  check_header(path, header, &a);
  free(header);
  a.data = swn_alloc(sizeof(float) * (size_t)(a.count ? a.count : 1));
  if (fread(a.data, sizeof(float), (size_t)a.count, f) != (size_t)a.count)
    swn_fatal_at(path, "is truncated: its shape needs %lld floats", (long long)a.count);
  if (fgetc(f) != EOF) swn_fatal_at(path, "has bytes after its %lld floats", (long long)a.count);
  fclose(f);
  return a;
}

void swn_npy_write(const char *path, const float *data, int ndims, const int64_t *dims) {
  char shape[256] = "";
  int64_t count = 1;
  for (int i = 0; i < ndims; i++) {
    count *= dims[i];
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%lld%s", (long long)dims[i],
             ndims == 1 || i < ndims - 1 ? ", " : "");
  }
  char header[320];
  int n = snprintf(header, sizeof header,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
  int total = (MAGIC_LEN + 4 + n + 1 + 63) / 64 * 64; /* the data starts 64-byte aligned */
  char *tmp = swn_temporary_for(path);
  FILE *f = fopen(tmp, "wb");
  if (!f) swn_fatal_at(path, "cannot write: %s", strerror(errno));
  int header_len = total - MAGIC_LEN - 4;
  unsigned char lead[MAGIC_LEN + 4]; /* the magic, version 1.0, the header's length */
  memcpy(lead, MAGIC, MAGIC_LEN);
  lead[MAGIC_LEN] = 1, lead[MAGIC_LEN + 1] = 0;
  lead[MAGIC_LEN + 2] = (unsigned char)(header_len & 0xff);
  lead[MAGIC_LEN + 3] = (unsigned char)(header_len >> 8);
  bool ok = fwrite(lead, 1, sizeof lead, f) == sizeof lead && fputs(header, f) >= 0;
  for (int i = n; ok && i < header_len - 1; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF &&
       fwrite(data, sizeof(float), (size_t)count, f) == (size_t)count && fflush(f) == 0;
  if (fclose(f) || !ok) swn_fatal_at(path, "cannot write: %s", strerror(errno));
  swn_temporary_replace(tmp, path);
}
