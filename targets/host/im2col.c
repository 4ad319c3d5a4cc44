#include "im2col.h"

#include <assert.h>
#include <string.h>

/* Output columns [lo, hi) read input columns inside [0, w) for kernel column `kj`. */
static void valid_range(const SwkConv *p, int kj, int *lo, int *hi) {
  kj *= p->dw;
  int first = p->pw - kj; /* smallest ow with ow*sw - pw + kj >= 0, times sw */
  *lo = first <= 0 ? 0 : (first + p->sw - 1) / p->sw;
  int last = p->w - 1 + p->pw - kj; /* largest ow*sw allowed */
  *hi = last < 0 ? 0 : last / p->sw + 1;
  if (*hi > p->wo) *hi = p->wo;
  if (*lo > *hi) *lo = *hi;
}

HostColumns host_pad(const SwkConv *p, int channels, const float *x, size_t image_floats,
                     int images, float *buffer) {
  HostColumns v = {.conv = p, .x = x, .height = p->h, .width = p->w, .image_floats = image_floats};
  if (!host_padded(p)) return v;
  v.height = host_padded_height(p), v.width = host_padded_width(p);
  v.x = buffer, v.image_floats = (size_t)channels * v.height * v.width;
  size_t plane = (size_t)v.height * v.width;
  memset(buffer, 0, sizeof(float) * host_pad_floats(p, channels, images));
  for (int n = 0; n < images; n++)
    for (int c = 0; c < channels; c++)
      for (int ih = 0; ih < p->h; ih++)
        memcpy(buffer + n * v.image_floats + c * plane + (size_t)(ih + p->ph) * v.width + p->pw,
               x + n * image_floats + ((size_t)c * p->h + ih) * p->w, sizeof(float) * (size_t)p->w);
  return v;
}

typedef float v8 __attribute__((vector_size(32)));

/* dst[i] = src[i * stride] for i < n: with stride 1, in pieces of 16, 8 and 4 floats that the
 * compiler turns into single vector moves (runs are an output row long: often 7 to 32); with
 * stride 2 (ResNet's and GoogLeNet's first layers), eight at a time from two vectors' even
 * elements, while the vectors' last element, src[2i + 15], is still one the run reads later. */
static void copy_run(const float *src, int n, int stride, float *dst) {
  int i = 0;
  if (stride == 1) {
    for (; i + 16 <= n; i += 16) memcpy(dst + i, src + i, 16 * sizeof(float));
    if (i + 8 <= n) memcpy(dst + i, src + i, 8 * sizeof(float)), i += 8;
    if (i + 4 <= n) memcpy(dst + i, src + i, 4 * sizeof(float)), i += 4;
  } else if (stride == 2) {
    for (; i + 8 < n; i += 8) {
      v8 lo, hi;
      memcpy(&lo, src + 2 * i, sizeof lo), memcpy(&hi, src + 2 * i + 8, sizeof hi);
      v8 even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
      memcpy(dst + i, &even, sizeof even);
    }
  }
  for (; i < n; i++) dst[i] = src[(size_t)i * stride];
}

/* The GEMM asks for at most HOST_GEMM_KC columns at once (a packed panel of A is KC wide, one of
 * B NR <= KC), so at most that many runs. */
enum { MAX_RUNS = HOST_GEMM_KC };

void host_columns_block(const void *columns, int r0, int rows, int c0, int cols, float *dst,
                        size_t pitch) {
  const HostColumns *v = columns;
  const SwkConv *p = v->conv;
  /* the columns as runs inside one output row: where each starts in the images, its length
   * and where it goes in dst */
  size_t from[MAX_RUNS];
  int length[MAX_RUNS], at[MAX_RUNS], runs = 0, pixels = p->ho * p->wo;
  /* where an output row's inputs end where the next one's start (stride 1, input rows as wide
   * as output rows: kw 1 and no side padding, as in a 1x1), a run goes on to the image's end
   * (7x7 images: one run of 48 columns instead of eight) */
  bool rows_join = p->sh == 1 && p->sw == 1 && v->width == p->wo;
  int image = c0 / pixels, oh = c0 % pixels / p->wo, ow = c0 % p->wo;
  assert(cols <= MAX_RUNS);
  for (int j = 0; j < cols; runs++) {
    int left = rows_join ? pixels - oh * p->wo - ow : p->wo - ow;
    int n = left < cols - j ? left : cols - j;
    from[runs] = image * v->image_floats + (size_t)oh * p->sh * v->width + (size_t)ow * p->sw;
    length[runs] = n, at[runs] = j;
    j += n, ow = 0;
    if (rows_join || ++oh == p->ho) oh = 0, image++;
  }
  size_t plane = (size_t)v->height * v->width;
  r0 += v->row0;
  int taps = p->kh * p->kw, c = r0 / taps, ki = r0 % taps / p->kw, kj = r0 % p->kw;
  for (int r = 0; r < rows; r++, dst += pitch) {
    const float *tap = v->x + c * plane + (size_t)ki * p->dh * v->width + (size_t)kj * p->dw;
    for (int s = 0; s < runs; s++) copy_run(tap + from[s], length[s], p->sw, dst + at[s]);
    /* the line after this row's 16 floats, which the next panel's call copies: a panel's rows
     * are each on lines of their own (channels of an image, a plane apart), too many streams
     * for the hardware's prefetchers, and the GEMM packs panel after panel (10% of ResNet's
     * 14 x 14 1x1 forward went in the misses, 7% with this) */
    __builtin_prefetch(tap + from[runs - 1] + (size_t)length[runs - 1] * p->sw + 16, 0, 2);
    if (++kj == p->kw && (kj = 0, ++ki == p->kh)) ki = 0, c++;
  }
}

void host_col2im(const SwkConv *p, int ci, const float *col, size_t ld, float *x) {
  for (int c = 0; c < ci; c++)
    for (int ki = 0; ki < p->kh; ki++)
      for (int kj = 0; kj < p->kw; kj++) {
        int lo, hi;
        valid_range(p, kj, &lo, &hi);
        for (int oh = 0; oh < p->ho; oh++) {
          int ih = oh * p->sh - p->ph + ki * p->dh;
          if (ih < 0 || ih >= p->h) continue;
          const float *in = col + oh * p->wo;
          float *row = x + ((size_t)c * p->h + ih) * p->w;
          int shift = kj * p->dw - p->pw;
          for (int ow = lo; ow < hi; ow++) row[ow * p->sw + shift] += in[ow];
        }
        col += ld;
      }
}
