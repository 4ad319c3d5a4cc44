/* Input images: JPEG through libjpeg-turbo's TurboJPEG, PNG through libpng's simplified
 * interface (any bit depth, palette or alpha, converted to 8-bit RGB, BGR or gray). */
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "swnc_data.h"

uint8_t *read_file(const char *path, size_t *length, char *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, SWN_ERR_BYTES, "cannot open: %s", strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  bool failed = ferror(f) || !buf;
  fclose(f);
  if (failed) {
    snprintf(err, SWN_ERR_BYTES, "cannot read: %s", buf ? strerror(errno) : "out of memory");
    free(buf);
    return NULL;
  }
  *length = n;
  return buf;
}

bool is_jpeg(const uint8_t *b, size_t n) {
  return n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}
static bool is_png(const uint8_t *b, size_t n) { return n >= 8 && !png_sig_cmp(b, 0, 8); }

static int channels_of(int color) { return color == SWN_COLOR_GRAY ? 1 : 3; }

static bool decode_png(const uint8_t *bytes, size_t length, int color, Image *out, char *err) {
  png_image png;
  memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes, length)) {
    snprintf(err, SWN_ERR_BYTES, "corrupt PNG: %s", png.message);
    return false;
  }
  png.format = color == SWN_COLOR_GRAY  ? PNG_FORMAT_GRAY
               : color == SWN_COLOR_BGR ? PNG_FORMAT_BGR
                                        : PNG_FORMAT_RGB;
  out->h = (int)png.height, out->w = (int)png.width, out->c = channels_of(color);
  out->pixels = malloc(PNG_IMAGE_SIZE(png));
  if (!out->pixels || !png_image_finish_read(&png, NULL, out->pixels, 0, NULL)) {
    snprintf(err, SWN_ERR_BYTES, "corrupt PNG: %s", out->pixels ? png.message : "out of memory");
    png_image_free(&png);
    free(out->pixels), out->pixels = NULL;
    return false;
  }
  return true;
}

bool decode_image(const uint8_t *bytes, size_t length, int color, Image *out, char *err) {
  memset(out, 0, sizeof *out);
  if (is_png(bytes, length)) return decode_png(bytes, length, color, out, err);
  if (!is_jpeg(bytes, length)) {
    snprintf(err, SWN_ERR_BYTES, "neither JPEG nor PNG (by its first bytes)");
    return false;
  }
  int h, w;
  if (!swn_jpeg_size(bytes, length, &h, &w, err)) return false;
  if (h > 65535 || w > 65535) {
    snprintf(err, SWN_ERR_BYTES, "is %dx%d: larger than 65535 pixels a side", h, w);
    return false;
  }
  out->h = h, out->w = w, out->c = channels_of(color);
  out->pixels = malloc((size_t)h * w * out->c);
  if (!out->pixels || !swn_jpeg_decode(bytes, length, color, out->c, h, w, out->pixels, err)) {
    free(out->pixels), out->pixels = NULL;
    return false;
  }
  return true;
}

bool encode_jpeg(const Image *im, int color, int quality, uint8_t **out, size_t *length,
                 char *err) {
  tjhandle tj = tjInitCompress();
  unsigned char *jpeg = NULL;
  unsigned long size = 0;
  int format = im->c == 1 ? TJPF_GRAY : color == SWN_COLOR_BGR ? TJPF_BGR : TJPF_RGB;
  bool ok = tj && tjCompress2(tj, im->pixels, im->w, 0, im->h, format, &jpeg, &size,
                              im->c == 1 ? TJSAMP_GRAY : TJSAMP_420, quality, 0) == 0;
  if (!ok) snprintf(err, SWN_ERR_BYTES, "cannot encode JPEG: %s", tj ? tjGetErrorStr2(tj) : "");
  if (ok) {
    *out = malloc(size);
    ok = *out != NULL;
    if (ok) memcpy(*out, jpeg, size), *length = size;
  }
  tjFree(jpeg);
  if (tj) tjDestroy(tj);
  return ok;
}

void resize_image(const Image *in, int h, int w, Image *out) {
  out->h = h, out->w = w, out->c = in->c;
  out->pixels = malloc((size_t)h * w * in->c);
  if (!out->pixels) {
    fprintf(stderr, "swnc-data: error: out of memory\n");
    exit(1);
  }
  float sy = (float)in->h / h, sx = (float)in->w / w;
  for (int y = 0; y < h; y++) {
    float fy = (y + 0.5f) * sy - 0.5f;
    int y0 = fy < 0 ? 0 : (int)fy, y1 = y0 + 1 < in->h ? y0 + 1 : in->h - 1;
    float dy = fy < 0 ? 0 : fy - y0;
    for (int x = 0; x < w; x++) {
      float fx = (x + 0.5f) * sx - 0.5f;
      int x0 = fx < 0 ? 0 : (int)fx, x1 = x0 + 1 < in->w ? x0 + 1 : in->w - 1;
      float dx = fx < 0 ? 0 : fx - x0;
      for (int c = 0; c < in->c; c++) {
        const uint8_t *p = in->pixels;
        float top = p[((size_t)y0 * in->w + x0) * in->c + c] * (1 - dx) +
                    p[((size_t)y0 * in->w + x1) * in->c + c] * dx;
        float bottom = p[((size_t)y1 * in->w + x0) * in->c + c] * (1 - dx) +
                       p[((size_t)y1 * in->w + x1) * in->c + c] * dx;
        out->pixels[((size_t)y * w + x) * in->c + c] =
            (uint8_t)(top * (1 - dy) + bottom * dy + 0.5f);
      }
    }
  }
}
