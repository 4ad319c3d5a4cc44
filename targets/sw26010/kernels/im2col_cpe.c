/* im2col and col2im on the CPEs with DMA (swCaffe, section 4). Column row (c, i, j) (channel,
 * kernel row, kernel column) holds, for each output pixel (oh, ow), input pixel
 * (oh sh - ph + i dh, ow sw - pw + j dw) (dh, dw: the dilation), or 0 in the padding.
 *   im2col: a task is (image, channel, kernel row, a run of output rows); its CPE gets each
 *     input row it needs, and puts kw contiguous runs of the column matrix (each row's alone
 *     when one row's kw runs do not fit in the buffer).
 *   col2im: a task is (image, channel, input row); its CPE gathers that row's contributions
 *     from every column row and output row that reads it, so no two CPEs write one row. */
#include <string.h>

#include "args.h"
#include "cpe.h"

static int rows_per_task(const SwIm2colArgs *p) {
  int r = SW_IM2COL_OUT_FLOATS / (p->kw * p->wo);
  return r < 1 ? 1 : r > p->ho ? p->ho : r;
}

/* Column row (c, i, j)'s wo floats for one output row from its input row (in), or zeros: a
 * load (or a zero) and a store each on the memory pipeline. */
static void fill(const SwIm2colArgs *p, const float *in, bool inside, int j, float *out) {
  cpe_count_ldm(2LL * p->wo);
  for (int ow = 0; ow < p->wo; ow++) {
    int iw = ow * p->sw - p->pw + j * p->dw;
    out[ow] = inside && iw >= 0 && iw < p->w ? in[iw] : 0.0f;
  }
}

static void im2col_task(const SwIm2colArgs *p, int64_t task, int run, float *in, float *out) {
  int runs = (p->ho + run - 1) / run;
  int oh0 = (int)(task % runs) * run, i = (int)(task / runs % p->kh),
      c = (int)(task / runs / p->kh % p->channels);
  int64_t image = task / runs / p->kh / p->channels;
  int rows = p->ho - oh0 < run ? p->ho - oh0 : run;
  const float *plane = p->x + image * p->in_image + (int64_t)(p->first_channel + c) * p->h * p->w;
  float *col = p->col + image * (int64_t)p->ho * p->wo + (int64_t)oh0 * p->wo;
  /* A wide row's kw runs may not fit the buffer together: then (rows is 1) each is put alone. */
  bool alone = (int64_t)p->kw * p->wo > SW_IM2COL_OUT_FLOATS;
  for (int r = 0; r < rows; r++) {
    int ih = (oh0 + r) * p->sh - p->ph + i * p->dh;
    bool inside = ih >= 0 && ih < p->h;
    if (inside) cpe_get(in, plane + (int64_t)ih * p->w, 4 * p->w);
    for (int j = 0; j < p->kw; j++) {
      int64_t col_row = ((int64_t)c * p->kh + i) * p->kw + j;
      fill(p, in, inside, j, alone ? out : out + ((int64_t)j * rows + r) * p->wo);
      if (alone) cpe_put(col + col_row * p->ld, out, 4 * p->wo);
    }
  }
  for (int j = 0; j < p->kw && !alone; j++) {
    int64_t col_row = ((int64_t)c * p->kh + i) * p->kw + j;
    cpe_put(col + col_row * p->ld, out + (int64_t)j * rows * p->wo, 4 * rows * p->wo);
  }
}

void sw_im2col(void *arg) {
  SwIm2colArgs p;
  cpe_get(&p, arg, sizeof p);
  int run = rows_per_task(&p);
  int64_t tasks = (int64_t)p.images * p.channels * p.kh * ((p.ho + run - 1) / run);
  float *in = ldm_malloc(sizeof(float) * (size_t)p.w);
  float *out = ldm_malloc(sizeof(float) * SW_IM2COL_OUT_FLOATS);
  for (int64_t t = _MYID; t < tasks; t += 64) im2col_task(&p, t, run, in, out);
  ldm_free(out, sizeof(float) * SW_IM2COL_OUT_FLOATS);
  ldm_free(in, sizeof(float) * (size_t)p.w);
}

static void col2im_row(const SwIm2colArgs *p, int64_t task, float *row, float *seg) {
  int ih = (int)(task % p->h), c = (int)(task / p->h % p->channels);
  int64_t image = task / p->h / p->channels, pixels = (int64_t)p->ho * p->wo;
  float *dst = p->x + image * p->in_image + ((int64_t)(p->first_channel + c) * p->h + ih) * p->w;
  if (p->add)
    cpe_get(row, dst, 4 * p->w);
  else
    memset(row, 0, sizeof(float) * (size_t)p->w), cpe_count_ldm(p->w / 4);
  for (int i = 0; i < p->kh; i++) {
    int t = ih + p->ph - i * p->dh;
    if (t < 0 || t % p->sh || t / p->sh >= p->ho) continue;
    int oh = t / p->sh;
    for (int j = 0; j < p->kw; j++) {
      int64_t col_row = ((int64_t)c * p->kh + i) * p->kw + j;
      cpe_get(seg, p->col + col_row * p->ld + image * pixels + (int64_t)oh * p->wo, 4 * p->wo);
      for (int ow = 0; ow < p->wo; ow++) {
        int iw = ow * p->sw - p->pw + j * p->dw;
        if (iw >= 0 && iw < p->w) row[iw] += seg[ow];
      }
      cpe_count_flops(p->wo), cpe_count_ldm(3LL * p->wo); /* two loads and a store each */
    }
  }
  cpe_put(dst, row, 4 * p->w);
}

void sw_col2im(void *arg) {
  SwIm2colArgs p;
  cpe_get(&p, arg, sizeof p);
  int64_t tasks = (int64_t)p.images * p.channels * p.h;
  float *row = ldm_malloc(sizeof(float) * (size_t)p.w),
        *seg = ldm_malloc(sizeof(float) * (size_t)p.wo);
  for (int64_t t = _MYID; t < tasks; t += 64) col2im_row(&p, t, row, seg);
  ldm_free(seg, sizeof(float) * (size_t)p.wo);
  ldm_free(row, sizeof(float) * (size_t)p.w);
}
