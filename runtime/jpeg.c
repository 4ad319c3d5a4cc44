/* JPEG decoding for packed datasets, through libjpeg-turbo's TurboJPEG interface. A handle per
 * call: its set-up is microseconds against a decode's milliseconds, and loader threads share
 * nothing. */
#include <stdio.h>
#include <string.h>
#include <turbojpeg.h>

#include "packed.h"

static int pixel_format(int color, int channels) {
  if (channels == 1) return TJPF_GRAY;
  return color == SWN_COLOR_BGR ? TJPF_BGR : TJPF_RGB;
}

/* The header's size, on a handle the caller owns. */
static bool read_header(tjhandle tj, const uint8_t *bytes, size_t length, int *height, int *width,
                        char *err) {
  int subsampling, colorspace;
  bool ok = tj && tjDecompressHeader3(tj, bytes, (unsigned long)length, width, height, &subsampling,
                                      &colorspace) == 0;
  if (!ok) snprintf(err, SWN_ERR_BYTES, "corrupt JPEG header: %s", tj ? tjGetErrorStr2(tj) : "");
  return ok;
}

bool swn_jpeg_size(const uint8_t *bytes, size_t length, int *height, int *width, char *err) {
  tjhandle tj = tjInitDecompress();
  bool ok = read_header(tj, bytes, length, height, width, err);
  if (tj) tjDestroy(tj);
  return ok;
}

/* One handle for the header and the pixels: the header is parsed once per decode. */
bool swn_jpeg_decode(const uint8_t *bytes, size_t length, int color, int channels, int height,
                     int width, uint8_t *pixels, char *err) {
  tjhandle tj = tjInitDecompress();
  int h, w;
  bool ok = read_header(tj, bytes, length, &h, &w, err);
  if (ok && (h != height || w != width)) {
    snprintf(err, SWN_ERR_BYTES, "the JPEG image is %dx%d, its index says %dx%d", h, w, height,
             width);
    ok = false;
  }
  /* TJFLAG_STOPONWARNING: a truncated or damaged stream is an error, not grey rows */
  if (ok && tjDecompress2(tj, bytes, (unsigned long)length, pixels, width, 0, height,
                          pixel_format(color, channels), TJFLAG_STOPONWARNING) != 0) {
    snprintf(err, SWN_ERR_BYTES, "corrupt JPEG data: %s", tjGetErrorStr2(tj));
    ok = false;
  }
  if (tj) tjDestroy(tj);
  return ok;
}
